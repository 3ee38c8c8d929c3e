/* dim_query.c - questions about canonical dims (dim.h): whether one is
 * provably non-negative, which symbols it uses, whether it is a constant,
 * equality (a pointer comparison within one context, structural across
 * contexts), and its value under bindings. */
#include "dim_internal.h"

#include <stdlib.h>

bool dim_nonneg(const tc_dim *a)
{
    /* b*(x/b) <= x: a term -k*(x/b) with b dividing k is bounded below by
     * -(k/b)*x, which is what `D + 1 - 2*((D + 1)/2) >= 0` needs. */
    int64_t c = a->c;
    int64_t *coef = NULL;
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *t = &a->terms[i];
        int64_t b;
        if (t->coef < 0 && t->n == 1 && !t->atoms[0]->name && dim_is_const(t->atoms[0]->den, &b) &&
            b > 0 && t->coef % b == 0) {
            const tc_dim *num = t->atoms[0]->num;
            int64_t k = t->coef / b;
            /* merge k*num into the other terms: find each of num's monomials */
            if (!coef) {
                coef = malloc(sizeof *coef * (size_t)a->nterms);
                if (!coef)
                    return false;
                for (int j = 0; j < a->nterms; j++)
                    coef[j] = a->terms[j].coef;
            }
            coef[i] = 0;
            c = wadd(c, wmul(k, num->c));
            for (int m = 0; m < num->nterms; m++) {
                int found = -1;
                for (int j = 0; j < a->nterms && found < 0; j++)
                    if (dim_mono_cmp(&a->terms[j], &num->terms[m]) == 0)
                        found = j;
                if (found < 0) {
                    free(coef);
                    return false;
                }
                coef[found] = wadd(coef[found], wmul(k, num->terms[m].coef));
            }
        }
    }
    bool ok = c >= 0;
    for (int i = 0; i < a->nterms && ok; i++) {
        int64_t k = coef ? coef[i] : a->terms[i].coef;
        if (k < 0)
            ok = false;
        for (int j = 0; j < a->terms[i].n && ok && k > 0; j++)
            if (!a->terms[i].atoms[j]->name && !dim_nonneg(a->terms[i].atoms[j]->num))
                ok = false;
    }
    free(coef);
    return ok;
}

bool dim_uses(const tc_dim *a, const char *name)
{
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < a->terms[i].n; j++) {
            const dim_atom *at = a->terms[i].atoms[j];
            if (at->name ? strcmp(at->name, name) == 0
                         : dim_uses(at->num, name) || dim_uses(at->den, name))
                return true;
        }
    return false;
}

bool dim_has_division_of(const tc_dim *a, const char *name)
{
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < a->terms[i].n; j++) {
            const dim_atom *at = a->terms[i].atoms[j];
            if (!at->name && (dim_uses(at->num, name) || dim_has_division_of(at->num, name)))
                return true;
        }
    return false;
}

bool dim_is_const(const tc_dim *a, int64_t *v)
{
    if (!a || a->nterms != 0)
        return false;
    if (v)
        *v = a->c;
    return true;
}

static bool atom_eq(const dim_atom *a, const dim_atom *b)
{
    if (a == b)
        return true;
    if (a->name || b->name)
        return a->name && b->name && strcmp(a->name, b->name) == 0;
    return dim_eq(a->num, b->num) && dim_eq(a->den, b->den);
}

bool dim_eq(const tc_dim *a, const tc_dim *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->c != b->c || a->nterms != b->nterms)
        return false;
    /* Different pointers: dims of different contexts (one context interns
     * every form once).  Compare structurally. */
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *s = &a->terms[i], *t = &b->terms[i];
        if (s->coef != t->coef || s->n != t->n)
            return false;
        for (int j = 0; j < s->n; j++)
            if (!atom_eq(s->atoms[j], t->atoms[j]))
                return false;
    }
    return true;
}

static bool atom_eval(const dim_atom *at, const tc_dimbind *b, int nb, int64_t *out,
                      const char **unbound)
{
    if (at->name) {
        for (int i = 0; i < nb; i++)
            if (b[i].name && strcmp(b[i].name, at->name) == 0) {
                *out = b[i].value;
                return true;
            }
        if (unbound)
            *unbound = at->name;
        return false;
    }
    int64_t n, d;
    if (!dim_eval(at->num, b, nb, &n, unbound) || !dim_eval(at->den, b, nb, &d, unbound))
        return false;
    *out = floordiv_i64(n, d);
    return true;
}

bool dim_eval(const tc_dim *a, const tc_dimbind *b, int nb, int64_t *out, const char **unbound)
{
    int64_t v = a->c;
    for (int i = 0; i < a->nterms; i++) {
        int64_t t = a->terms[i].coef;
        for (int j = 0; j < a->terms[i].n; j++) {
            int64_t x;
            if (!atom_eval(a->terms[i].atoms[j], b, nb, &x, unbound))
                return false;
            t = wmul(t, x);
        }
        v = wadd(v, t);
    }
    *out = v;
    return true;
}

static void add_name(const char *s, const char **names, int *n, int max)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], s) == 0)
            return;
    if (*n < max)
        names[(*n)++] = s;
}

void dim_symbols(const tc_dim *a, const char **names, int *n, int max)
{
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < a->terms[i].n; j++) {
            const dim_atom *at = a->terms[i].atoms[j];
            if (at->name) {
                add_name(at->name, names, n, max);
            } else {
                dim_symbols(at->num, names, n, max);
                dim_symbols(at->den, names, n, max);
            }
        }
}

