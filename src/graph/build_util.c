/* build_util.c - small helpers of the graph builder: a string map for
 * scopes and the function table, the spelling of types in messages, and
 * "did you mean" suggestions.
 *
 * The map is an hset (src/base/hset.h) of key/value entries, so lookups in
 * a generated function with thousands of names stay O(1).  Everything
 * lives in the compilation's arena.
 */
#include "build_internal.h"

#include <string.h>

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* One key and its value. */
typedef struct {
    const char *key;
    void *val;
} smap_entry;

static bool key_is(const void *elem, const void *key)
{
    return strcmp(((const smap_entry *)elem)->key, key) == 0;
}

void *smap_get(const smap *m, const char *key)
{
    smap_entry *e = hset_find(&m->set, str_hash(key), key_is, key);
    return e ? e->val : NULL;
}

int smap_keys(const smap *m, const char **out, int n)
{
    for (int i = 0; i < m->set.cap; i++)
        if (m->set.elem[i])
            out[n++] = ((const smap_entry *)m->set.elem[i])->key;
    return n;
}

void smap_put(tc_arena *a, smap *m, const char *key, void *val)
{
    uint32_t h = str_hash(key);
    smap_entry *e = hset_find(&m->set, h, key_is, key);
    if (!e) {
        e = ARENA_NEW(a, smap_entry);
        e->key = key;
        hset_add(&m->set, a, h, e);
    }
    e->val = val;
}

const char *dimstr(builder *b, const tc_dim *d) { return dim_str(b->a, d); }

const char *shape_str(builder *b, int rank, const tc_dim *const *shape)
{
    tc_buf s;
    buf_init(&s, b->a);
    buf_putc(&s, '[');
    for (int i = 0; i < rank; i++) {
        if (i)
            buf_puts(&s, ", ");
        dim_print(&s, shape[i]);
    }
    buf_putc(&s, ']');
    return buf_str(&s);
}

const char *type_str(builder *b, const gnode *n)
{
    /* A literal is shown with the dtype it would take on its own. */
    const char *dt = dtype_name(dtype_concrete(n));
    if (n->rank == 0)
        return dt;
    return arena_printf(b->a, "%s%s", dt, shape_str(b, n->rank, n->shape));
}

const char *ast_type_str(builder *b, const ast_type *t)
{
    tc_buf s;
    buf_init(&s, b->a);
    buf_puts(&s, t->dtype_var ? t->dtype_var : dtype_name(t->dtype));
    if (t->is_tensor) {
        buf_putc(&s, '[');
        if (t->star)
            buf_putc(&s, '*');
        for (int i = 0; !t->star && i < t->ndims; i++) {
            if (i)
                buf_puts(&s, ", ");
            if (t->dims[i].name)
                buf_puts(&s, t->dims[i].name);
            else
                buf_printf(&s, "%lld", (long long)t->dims[i].value);
        }
        buf_putc(&s, ']');
    }
    return buf_str(&s);
}

const char *plural(builder *b, int n, const char *one, const char *many)
{
    return arena_printf(b->a, "%d %s", n, n == 1 ? one : many);
}

/* Levenshtein distance, capped: names are short, so a two-row table on the
 * arena is plenty. */
static int edit_distance(builder *b, const char *x, const char *y)
{
    size_t nx = strlen(x), ny = strlen(y);
    if (nx > 64 || ny > 64)
        return 99;
    int *prev = ARENA_ARRAY(b->a, int, ny + 1), *cur = ARENA_ARRAY(b->a, int, ny + 1);
    for (size_t j = 0; j <= ny; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= nx; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= ny; j++) {
            int sub = prev[j - 1] + (x[i - 1] != y[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    return prev[ny];
}

const char *suggest(builder *b, const char *name, const char *const *names, int n)
{
    /* One edit for short names (so 'x' does not suggest 'y' out of nowhere
     * unless nothing closer exists), two for longer ones. */
    size_t len = strlen(name);
    int limit = len <= 1 ? 0 : len <= 4 ? 1 : 2;
    const char *best = NULL;
    int bestd = limit + 1;
    for (int i = 0; i < n; i++) {
        if (!names[i] || strcmp(names[i], name) == 0)
            continue;
        int dd = edit_distance(b, name, names[i]);
        if (dd < bestd) {
            bestd = dd;
            best = names[i];
        }
    }
    return best ? arena_printf(b->a, "; did you mean '%s'?", best) : "";
}

const char *habit_hint(const char *name, const char *const *names, int n)
{
    if (strcmp(name, "True") == 0 || strcmp(name, "False") == 0)
        return strcmp(name, "True") == 0 ? "booleans are lower case here: true"
                                         : "booleans are lower case here: false";
    if (strcmp(name, "None") == 0)
        return "there is no None: every argument has a value (leave a parameter out for its default)";
    if (strcmp(name, "dim") == 0)
        for (int i = 0; i < n; i++)
            if (names[i] && strcmp(names[i], "axis") == 0)
                return "tensorc calls it axis (PyTorch's dim, NumPy's axis): axis=-1";
    return NULL;
}
