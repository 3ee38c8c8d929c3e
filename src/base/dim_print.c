/* dim_print.c - canonical dims as text (dim.h): sums with spaces, products
 * without, constant last; a floor division parenthesized as dim.c's header
 * describes, so "/" always reads as floor division. */
#include "dim_internal.h"

/* A numerator that reads unambiguously before "/": a non-negative constant,
 * or a product of symbols with coefficient 1. */
static bool simple_num(const tc_dim *d)
{
    if (d->nterms == 0)
        return d->c >= 0;
    if (d->nterms != 1 || d->c != 0 || d->terms[0].coef != 1)
        return false;
    for (int j = 0; j < d->terms[0].n; j++)
        if (!d->terms[0].atoms[j]->name)
            return false;
    return true;
}

/* A denominator that reads unambiguously after "/": a positive constant or
 * a single symbol. */
static bool simple_den(const tc_dim *d)
{
    if (d->nterms == 0)
        return d->c > 0;
    return d->nterms == 1 && d->c == 0 && d->terms[0].coef == 1 && d->terms[0].n == 1 &&
           d->terms[0].atoms[0]->name;
}

typedef const char *(*sym_namer)(const char *sym, void *arg);
static void print_dim(tc_buf *b, const tc_dim *a, sym_namer nm, void *arg);

static void print_atom(tc_buf *b, const dim_atom *at, bool in_product, sym_namer nm, void *arg)
{
    if (at->name) {
        buf_puts(b, nm ? nm(at->name, arg) : at->name);
        return;
    }
    if (in_product)
        buf_putc(b, '(');
    bool pn = !simple_num(at->num), pd = !simple_den(at->den);
    buf_puts(b, pn ? "(" : "");
    print_dim(b, at->num, nm, arg);
    buf_puts(b, pn ? ")/" : "/");
    buf_puts(b, pd ? "(" : "");
    print_dim(b, at->den, nm, arg);
    buf_puts(b, pd ? ")" : "");
    if (in_product)
        buf_putc(b, ')');
}

/* |k| without overflow for INT64_MIN. */
static unsigned long long mag(int64_t k) { return k < 0 ? 0 - (unsigned long long)k : (unsigned long long)k; }

void dim_print(tc_buf *b, const tc_dim *a)
{
    print_dim(b, a, NULL, NULL);
}

void dim_print_ex(tc_buf *b, const tc_dim *a, sym_namer nm, void *arg)
{
    print_dim(b, a, nm, arg);
}

static void print_dim(tc_buf *b, const tc_dim *a, sym_namer nm, void *arg)
{
    if (!a) {
        buf_puts(b, "?");
        return;
    }
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *t = &a->terms[i];
        if (i == 0)
            buf_puts(b, t->coef < 0 ? "-" : "");
        else
            buf_puts(b, t->coef < 0 ? " - " : " + ");
        bool product = t->n > 1 || mag(t->coef) != 1;
        if (mag(t->coef) != 1)
            buf_printf(b, "%llu*", mag(t->coef));
        for (int j = 0; j < t->n; j++) {
            if (j)
                buf_putc(b, '*');
            print_atom(b, t->atoms[j], product, nm, arg);
        }
    }
    if (a->nterms == 0)
        buf_printf(b, "%lld", (long long)a->c);
    else if (a->c != 0)
        buf_printf(b, "%s%llu", a->c < 0 ? " - " : " + ", mag(a->c));
}

const char *dim_str(tc_arena *ar, const tc_dim *a)
{
    tc_buf b;
    buf_init(&b, ar);
    dim_print(&b, a);
    return buf_str(&b);
}
