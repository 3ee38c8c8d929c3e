/* hints.c - advice for syntax errors that are Python or PyTorch habits
 * (hints.h).  Only the tokens around the error and the source text before
 * them are read; each hint names the tensorc spelling, so the fix is one
 * edit away. */
#include "hints.h"

#include <ctype.h>
#include <string.h>

static bool is(const char *text, int len, const char *word)
{
    return text && (size_t)len == strlen(word) && memcmp(text, word, (size_t)len) == 0;
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* PyTorch's dtype methods and the tensorc dtype they cast to. */
static const struct { const char *method, *dtype; } casts[] = {
    {"float", "f32"}, {"double", "f64"}, {"half", "f16"}, {"bfloat16", "bf16"},
    {"int", "i32"},   {"long", "i64"},   {"bool", "bool"},
};

/* Module prefixes: torch.exp, F.softmax, np.sum, torch.nn.functional.gelu. */
static const char *const modules[] = {"torch", "F", "nn", "functional", "np", "numpy", "math", "jnp", "jax"};

/* prev is a name called as a method: RECV.NAME(  -- the hint for it. */
static const char *method_hint(tc_arena *a, const tc_source *src, hint_tok m)
{
    const char *begin = src->text, *q = m.text;
    while (q > begin && (q[-1] == ' ' || q[-1] == '\t'))
        q--;
    if (q == begin || q[-1] != '.')
        return NULL;
    q--; /* the '.' */
    const char *re = q;
    while (re > begin && (re[-1] == ' ' || re[-1] == '\t'))
        re--;
    const char *rs = re;
    while (rs > begin && ident_char(rs[-1]))
        rs--;
    int rlen = (int)(re - rs);
    const char *recv = rlen > 0 && rlen <= 40 ? arena_strndup(a, rs, (size_t)rlen) : "EXPR";
    const char *name = arena_strndup(a, m.text, (size_t)m.len);
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        if (strcmp(recv, modules[i]) == 0)
            return arena_printf(a, "tensorc has no modules: functions are called by name alone, "
                                   "as %s(...) (the prelude's functions are always there)", name);
    for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++)
        if (strcmp(name, casts[i].method) == 0)
            return arena_printf(a, "a cast is a call of the dtype: %s(%s)", casts[i].dtype, recv);
    if (strcmp(name, "to") == 0 || strcmp(name, "type") == 0)
        return arena_printf(a, "a cast is a call of the dtype: f32(%s), bf16(%s), ...", recv, recv);
    if (strcmp(name, "pow") == 0)
        return arena_printf(a, "a power is %s ** y", recv);
    if (strcmp(name, "t") == 0)
        return arena_printf(a, "write %s.T (the last two dims swapped)", recv);
    if (strcmp(name, "view") == 0)
        return arena_printf(a, "write reshape(%s, ...)", recv);
    if (strcmp(name, "contiguous") == 0 || strcmp(name, "clone") == 0 || strcmp(name, "detach") == 0 ||
        strcmp(name, "cuda") == 0 || strcmp(name, "cpu") == 0)
        return arena_printf(a, "drop .%s(): tensorc's tensors are values, with no device, layout or "
                               "autograd to manage", name);
    if (strcmp(name, "size") == 0 || strcmp(name, "dim") == 0)
        return "a size is a name from the signature (x: f32[N, D] gives N and D)";
    return arena_printf(a, "tensorc has no methods: call %s as a function with the tensor first, "
                           "%s(%s, ...)", name, name, recv);
}

const char *front_hint(tc_arena *a, const tc_source *src, hint_tok prev, hint_tok cur)
{
    if (cur.lparen && prev.name && prev.text)
        return method_hint(a, src, prev);
    if (cur.name) {
        if (is(cur.text, cur.len, "and") || is(cur.text, cur.len, "or"))
            return "write && for 'and' and || for 'or'";
        if (is(cur.text, cur.len, "if"))
            return "a choice is where(cond, a, b), not 'a if cond else b'";
        if (is(cur.text, cur.len, "def"))
            return "a function starts with 'fn': fn f(x: f32[N]) -> f32[N] { ... }";
        if (is(cur.text, cur.len, "import") || is(cur.text, cur.len, "from"))
            return "there are no imports: the prelude's functions are always there";
        if (is(cur.text, cur.len, "in"))
            return "there are no loops: operations apply to whole tensors";
        if (prev.name && is(prev.text, prev.len, "not"))
            return "write !x for 'not x'";
        if (is(cur.text, cur.len, "for") || is(cur.text, cur.len, "while"))
            return "there are no loops: operations apply to whole tensors";
    }
    return NULL;
}
