/* emit.c - lowered nodes to C expressions and statements.
 *
 * cg_value(n, idx) returns the name of a variable (or a literal) holding
 * node n's value at index idx, emitting whatever statements it takes:
 * loads from buffers (load.c), the op's expression over its operands' values, or a
 * reduction's result.  Each (node, index) pair is computed once per scope
 * (index expressions are canonical, so equal indices are equal pointers),
 * and each statement goes as far out as it can: a value that does not vary
 * inside the loop is computed before it, once per row or once per kernel.
 * Every statement carries the .tc line it came from.
 */
#include "codegen/cg.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ops.def's CUDA column: [0] the float spelling, [1] the double one */
static const char *const cuda_col[OP_COUNT][2] = {
#define CU(f32, f64) #f32, #f64
#define OP(id, spelling, kind, arity, rule, ref, cuda) [OP_##id] = {cuda},
#include "ops.def"
#undef OP
#undef CU
};

/* ops.def's names, for the wrappers' */
static const char *const op_names[OP_COUNT] = {
#define OP(id, spelling, kind, arity, rule, ref, cuda) [OP_##id] = #id,
#include "ops.def"
#undef OP
};

/* Library calls of many instructions each (tanhf is some 30): inlined at
 * every use they are most of a long chain's NVRTC time. */
bool cg_is_libcall(int op)
{
    switch (op) {
    case OP_exp: case OP_exp2: case OP_log: case OP_log2: case OP_log1p:
    case OP_sin: case OP_cos: case OP_tanh: case OP_erf: case OP_sigmoid:
    case OP_gelu: case OP_gelu_tanh: case OP_silu: case OP_softplus:
    case OP_pow: case OP_atan2:
        return true;
    default:
        return false;
    }
}

/* The wrappers' bodies are ops.def's CUDA column over parameters a (and b). */
void cg_libcall_wrappers(tc_buf *b, const bool *libcalls)
{
    buf_puts(b, "\n/* compact kernels (past the unrolled budget): library math and block\n"
                " * reductions are called, not inlined at every use */\n"
                "template <class T, class Op> __device__ __noinline__ T tc_block_reduce_ni(T v, Op op, T *sm) {\n"
                "    return tc_block_reduce(v, op, sm);\n"
                "}\n");
    for (int op = 0; op < OP_COUNT; op++)
        for (int f64 = 0; f64 < 2; f64++) {
            if (!libcalls[op * 2 + f64])
                continue;
            const char *ty = f64 ? "double" : "float";
            bool binary = op == OP_pow || op == OP_atan2;
            buf_printf(b, "static __device__ __noinline__ %s tc_ni_%s_%s(%s a%s%s%s) { return %s; }\n",
                       ty, op_names[op], f64 ? "d" : "f", ty, binary ? ", " : "", binary ? ty : "",
                       binary ? " b" : "", cuda_col[op][f64]);
        }
}

const char *cg_type(tc_dtype t)
{
    switch (t) {
    case TC_F64: return "double";
    case TC_I32: return "int";
    case TC_I64: return "long long";
    case TC_BOOL: return "bool";
    default: return "float";
    }
}

const char *cg_store_type(tc_dtype t)
{
    switch (t) {
    case TC_F16:
    case TC_BF16: return "unsigned short";
    case TC_BOOL: return "unsigned char";
    default: return cg_type(t);
    }
}

/* ---- index expressions -------------------------------------------------- */

static const char *sym_name(const char *sym, void *arg)
{
    cg *g = arg;
    if (sym[0] == '$')
        return arena_printf(g->a, "i%s", sym + 1);
    for (int i = 0; i < g->nsyms; i++)
        if (strcmp(g->syms[i], sym) == 0)
            goto named;
    if (g->nsyms < 64)
        g->syms[g->nsyms++] = sym;
named:
    return strcmp(sym, "*") == 0 ? "sz_n" : arena_printf(g->a, "sz_%s", sym);
}

const char *cg_index(cg *g, const tc_dim *e)
{
    tc_buf b;
    buf_init(&b, g->a);
    dim_print_ex(&b, e, sym_name, g);
    return buf_str(&b);
}

/* Whether e is printed as a sum of names and a non-negative constant
 * ("i0 + i1", "sz_D", "4"): no product, division or minus sign. */
bool cg_dim_plain_sum(cg *g, const tc_dim *e)
{
    const char *syms[TC_MAX_RANK * 2 + 8];
    int n = 0, max = (int)(sizeof syms / sizeof syms[0]);
    dim_symbols(e, syms, &n, max);
    if (n >= max)
        return false;
    const tc_dim *rest = e;
    for (int i = 0; i < n; i++)
        rest = dim_sub(g->c, rest, dim_sym(g->c, syms[i]));
    int64_t v;
    return dim_is_const(rest, &v) && v >= 0;
}

/* Whether e is printed as one name or a non-negative number. */
bool cg_dim_atom(cg *g, const tc_dim *e)
{
    int64_t v;
    if (dim_is_const(e, &v))
        return v >= 0;
    const char *sym[2];
    int n = 0;
    dim_symbols(e, sym, &n, 2);
    return n == 1 && dim_eq(e, dim_sym(g->c, sym[0]));
}

/* Whether e divides an expression of index variables (a flat index split
 * back into dims): its expanded terms can exceed the largest size. */
static bool divides_index(cg *g, const tc_dim *e)
{
    for (int v = 0; v <= TC_MAX_RANK; v++)
        if (dim_has_division_of(e, g->l->varnames[v]))
            return true;
    return false;
}

const char *cg_flat(cg *g, const lnode *n, const tc_dim *const *idx)
{
    const tc_dim *flat = lir_flat(g->l, n, idx);
    if (!g->wide && divides_index(g, flat))
        g->wide = true;
    return cg_index(g, flat);
}

bool cg_uses_vars(const cg *g, const tc_dim *const *idx, int n, unsigned vars)
{
    for (int k = 0; k < n; k++)
        for (int v = 0; v <= TC_MAX_RANK; v++)
            if ((vars & (1u << v)) && dim_uses(idx[k], g->l->varnames[v]))
                return true;
    return false;
}

/* ---- statements ------------------------------------------------------------- */

static cg_block *target_block(cg *g, cg_target t)
{
    switch (t) {
    case T_KERNEL: return &g->kpre;
    case T_ROW: return &g->rpre;
    default: return &g->body;
    }
}

/* A source's name in line comments: the file without its folders, a
 * prelude file as "<prelude>/name.tc". */
static const char *src_label(const char *name)
{
    static const char prelude[] = "<prelude>";
    size_t n = strlen(name);
    if (n >= sizeof prelude - 1 && memcmp(name, prelude, sizeof prelude - 1) == 0)
        return name;
    const char *base = name;
    for (const char *p = name; *p; p++)
        if (*p == '/')
            base = p + 1;
    return base;
}

/* One statement at b's indentation, with its .tc line (comments line up
 * at column 60 of the block). */
void cg_line_v(cg *g, cg_block *b, const lnode *n, const char *fmt, va_list ap)
{
    tc_buf l;
    buf_init(&l, g->a);
    buf_vprintf(&l, fmt, ap);
    if (g->comments && n && n->loc.src && n->loc.line > 0) {
        const char *file = src_label(n->loc.src->name);
        size_t col = (size_t)b->ind + l.len;
        buf_printf(&l, "%*s// %s:%d", col < 60 ? (int)(60 - col) : 1, "", file, n->loc.line);
    }
    cg_block_add(b, g->a, b->ind, buf_str(&l));
}

void cg_line(cg *g, cg_target t, const lnode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_line_v(g, target_block(g, t), n, fmt, ap);
    va_end(ap);
}

const char *cg_temp(cg *g, const char *prefix)
{
    return arena_printf(g->a, "%s%d", prefix, g->ntemp++);
}

void cg_forget(cg *g, cg_target t)
{
    int j = 0;
    for (int i = 0; i < g->ncache; i++)
        if (g->cache[i].t < t)
            g->cache[j++] = g->cache[i];
    g->ncache = j;
    j = 0;
    for (int i = 0; i < g->nrcp; i++)
        if (g->rcp[i].t < t)
            g->rcp[j++] = g->rcp[i];
    g->nrcp = j;
}

static const cg_entry *lookup(cg *g, const lnode *n, const tc_dim *const *idx)
{
    for (int i = g->ncache - 1; i >= 0; i--) {
        const cg_entry *e = &g->cache[i];
        if (e->n != n)
            continue;
        bool eq = true;
        for (int k = 0; k < n->rank && eq; k++)
            eq = e->idx[k] == idx[k];
        if (eq)
            return e;
    }
    return NULL;
}

static void remember(cg *g, const lnode *n, const tc_dim *const *idx, cg_target t, cg_expr val)
{
    if (g->ncache == g->capcache) {
        int cap = g->capcache ? 2 * g->capcache : 64;
        cg_entry *v = ARENA_ARRAY(g->a, cg_entry, cap);
        if (g->ncache)
            memcpy(v, g->cache, sizeof *v * (size_t)g->ncache);
        g->cache = v;
        g->capcache = cap;
    }
    const tc_dim **copy = ARENA_ARRAY(g->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
    for (int k = 0; k < n->rank; k++)
        copy[k] = idx[k];
    g->cache[g->ncache++] = (cg_entry){n, copy, g->scope, t, val.s, val.atom};
}

/* ---- values ----------------------------------------------------------------- */

/* v converted from one dtype's register type to another's; a conversion
 * is a call or a cast, parenthesized as an operand. */
/* Whether two dtypes have the same register type (cg_type). */
static bool same_reg(tc_dtype a, tc_dtype b)
{
    /* cg_type's default: float */
    if (a != TC_F64 && a != TC_I32 && a != TC_I64 && a != TC_BOOL)
        a = TC_F32;
    if (b != TC_F64 && b != TC_I32 && b != TC_I64 && b != TC_BOOL)
        b = TC_F32;
    return a == b;
}

static cg_expr convert(cg *g, cg_expr v, tc_dtype from, tc_dtype to)
{
    if (same_reg(from, to)) {
        if ((to == TC_F16 || to == TC_BF16) && from != to)
            return (cg_expr){arena_printf(g->a, "tc_round_%s(%s)", dtype_name(to), v.s), false};
        return v;
    }
    if (to == TC_BOOL)
        return (cg_expr){arena_printf(g->a, "(%s != 0)", v.s), false};
    if (dtype_is_float(from) && (to == TC_I32 || to == TC_I64)) /* saturating: unit.c */
        return (cg_expr){arena_printf(g->a, "tc_f2%s(%s)", dtype_name(to), v.s), false};
    const char *r = arena_printf(g->a, "(%s)%s", cg_type(to), v.s);
    if (to == TC_F16 || to == TC_BF16)
        r = arena_printf(g->a, "tc_round_%s(%s)", dtype_name(to), r);
    return (cg_expr){r, false};
}

const char *cg_convert(cg *g, const char *v, tc_dtype from, tc_dtype to)
{
    return convert(g, (cg_expr){v, true}, from, to).s;
}

/* Whether %.*g of v (finite) prints digits alone, no '.' or exponent: an
 * integer below 10^digits in magnitude.  (%.9g and %.17g tell every float
 * and double apart, so no other value prints as an integer.) */
static bool prints_integral(double v, int digits)
{
    double lim = 1;
    for (int i = 0; i < digits; i++)
        lim *= 10;
    return v < lim && v > -lim && v == (double)(long long)v;
}

/* Whether %.*g prints v (finite) in exponent form ("1e-05"): its decimal
 * exponent, once rounded to `digits` significant digits, below -4 or at
 * least digits. */
static bool exp_form(double v, int digits)
{
    if (v == 0)
        return false;
    double a = fabs(v);
    int x = (int)floor(log10(a));
    if (nearbyint(a * pow(10, digits - 1 - x)) >= pow(10, digits)) /* rounds up to 10^(x+1) */
        x++;
    return x < -4 || x >= digits;
}

/* A literal of n's dtype.  Numbers stand as operands as they are, but for
 * a positive one in exponent form (9.99999975e-06f), and so do true/false
 * and the f32 NaN and inf spellings; the f64 ones are parenthesized.  (The
 * rule the generated code always followed: it stays byte-identical.) */
static cg_expr literal(cg *g, const lnode *n)
{
    tc_dtype t = n->dtype;
    if (dtype_is_float(t)) {
        double v = n->a.cnst.f;
        if (v != v)
            return t == TC_F64 ? (cg_expr){"__longlong_as_double(0x7ff8000000000000LL)", false}
                               : (cg_expr){"__int_as_float(0x7fc00000)", true};
        if (v == 1.0 / 0.0)
            return t == TC_F64 ? (cg_expr){"__longlong_as_double(0x7ff0000000000000LL)", false}
                               : (cg_expr){"__int_as_float(0x7f800000)", true};
        if (v == -1.0 / 0.0)
            return t == TC_F64 ? (cg_expr){"__longlong_as_double(0xfff0000000000000LL)", false}
                               : (cg_expr){"__int_as_float(0xff800000)", true};
        if (t == TC_F64) { /* a double literal, never an int: tc_max(double, int) does not deduce */
            return (cg_expr){arena_printf(g->a, "%.17g%s", v, prints_integral(v, 17) ? ".0" : ""),
                             v < 0 || !exp_form(v, 17)};
        }
        double f = (double)(float)v;
        return (cg_expr){arena_printf(g->a, "%.9g%sf", f, prints_integral(f, 9) ? ".0" : ""),
                         f < 0 || !exp_form(f, 9)};
    }
    if (t == TC_BOOL)
        return (cg_expr){n->a.cnst.i ? "true" : "false", true};
    if (t == TC_I64)
        return (cg_expr){arena_printf(g->a, "%lldLL", (long long)n->a.cnst.i), true};
    return (cg_expr){arena_printf(g->a, "%lld", (long long)n->a.cnst.i), true};
}

/* A constant as a literal of another dtype, so no conversion is emitted. */
static cg_expr literal_as(cg *g, const lnode *n, tc_dtype to)
{
    if (n->dtype == to || same_reg(n->dtype, to))
        return literal(g, n);
    lnode c = *n;
    c.dtype = to;
    if (dtype_is_float(to) && !dtype_is_float(n->dtype))
        c.a.cnst.f = (double)n->a.cnst.i;
    else if (!dtype_is_float(to) && dtype_is_float(n->dtype))
        c.a.cnst.i = to == TC_BOOL ? n->a.cnst.f != 0 : (int64_t)n->a.cnst.f;
    else if (to == TC_BOOL)
        c.a.cnst.i = n->a.cnst.i != 0;
    if (dtype_is_float(to) && dtype_round(to == TC_F64 ? TC_F64 : TC_F32, c.a.cnst.f) != c.a.cnst.f)
        return convert(g, literal(g, n), n->dtype, to);
    return literal(g, &c);
}

/* e as an operand of a binary operator: parenthesized unless an atom */
static const char *operand(cg *g, cg_expr e)
{
    return e.atom ? e.s : arena_printf(g->a, "(%s)", e.s);
}

/* A CUDA column of ops.def with the operands a, b, c substituted. */
static const char *from_column(cg *g, const char *col, const cg_expr *ops)
{
    tc_buf b;
    buf_init(&b, g->a);
    for (const char *p = col; *p;) {
        if (isalpha((unsigned char)*p) || *p == '_') {
            const char *s = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            size_t n = (size_t)(p - s);
            if (n == 1 && (*s == 'a' || *s == 'b' || *s == 'c')) {
                cg_expr o = ops[*s - 'a'];
                buf_printf(&b, o.atom ? "%s" : "(%s)", o.s);
            } else {
                buf_printf(&b, "%.*s", (int)n, s);
            }
        } else if (isdigit((unsigned char)*p)) {
            const char *s = p; /* a number: 1.0f is not the operand f */
            while (isalnum((unsigned char)*p) || *p == '.')
                p++;
            buf_printf(&b, "%.*s", (int)(p - s), s);
        } else {
            buf_putc(&b, *p++);
        }
    }
    return buf_str(&b);
}

/* The C expression of pointwise op over operand values already converted
 * to the node's operand type. */
static const char *op_expr(cg *g, const lnode *n, const cg_expr *o)
{
    tc_dtype t = n->opdt;
    if (n->op == OP_cast || n->op == OP_copy)
        return convert(g, o[0], n->opdt, n->dtype).s;
    if (dtype_is_float(t)) {
        /* x ** 2: one product, the correctly rounded square (CUDA's powf
         * is 96 SASS instructions and within 2 ulp; special values agree) */
        if (lir_pow_square(n))
            return arena_printf(g->a, o[0].atom ? "%s * %s" : "(%s) * (%s)", o[0].s, o[0].s);
        if (g->ks && g->ks->compact && g->libcalls && cg_is_libcall(n->op)) {
            bool f64 = t == TC_F64;
            g->libcalls[n->op * 2 + f64] = true;
            if (n->nin == 1)
                return arena_printf(g->a, "tc_ni_%s_%s(%s)", op_names[n->op], f64 ? "d" : "f", o[0].s);
            return arena_printf(g->a, "tc_ni_%s_%s(%s, %s)", op_names[n->op], f64 ? "d" : "f", o[0].s,
                                o[1].s);
        }
        return from_column(g, cuda_col[n->op][t == TC_F64], o);
    }
    /* integers and bool */
    const char *a = o[0].s;
    switch (n->op) {
    case OP_abs: return arena_printf(g->a, "(%s < 0 ? -%s : %s)", a, a, a);
    case OP_relu: return arena_printf(g->a, "(%s > 0 ? %s : 0)", a, a);
    case OP_sign: return arena_printf(g->a, "((%s > 0) - (%s < 0))", a, a);
    case OP_floor:
    case OP_ceil:
    case OP_round: return a;
    case OP_pow: return arena_printf(g->a, "tc_ipow(%s, %s)", a, o[1].s);
    case OP_mod: /* bool % bool: as int (tc_mod has no bool overload; fmod(bool, bool) is ambiguous) */
        if (t == TC_BOOL)
            return arena_printf(g->a, "tc_mod((int)%s, (int)%s)", a, o[1].s);
        return from_column(g, cuda_col[n->op][0], o);
    case OP_isnan:
    case OP_isinf: return "false";
    default: return from_column(g, cuda_col[n->op][0], o);
    }
}

const char *cg_buf_name(cg *g, int buf)
{
    if (g->positional)
        return arena_printf(g->a, "p%d", g->bufpos[buf]);
    return g->bufs->plan->bufs[buf].name;
}

void cg_use_buf(cg *g, int buf)
{
    if (g->positional && !g->used_buf[buf]) {
        g->bufpos[buf] = g->nbufseq;
        g->bufseq[g->nbufseq++] = buf;
    }
    g->used_buf[buf] = true;
}

cg_target cg_target_of(cg *g, const lnode *n, const tc_dim *const *idx)
{
    if (n->rank > 0 && cg_uses_vars(g, idx, n->rank, g->elemvars))
        return T_ELEM;
    if (g->redep[n->id] || (n->rank > 0 && cg_uses_vars(g, idx, n->rank, g->rowvars)))
        return T_ROW;
    return T_KERNEL;
}

static const char *concat_value(cg *g, const lnode *n, const tc_dim *const *idx, cg_target t)
{
    int64_t at, lo, hi;
    if (dim_is_const(idx[n->a.cat.axis], &at)) /* a constant index (a scan's plane store): one piece */
        for (int i = 0; i < n->nin; i++)
            if (dim_is_const(n->a.cat.offsets[i], &lo) && dim_is_const(n->a.cat.offsets[i + 1], &hi) &&
                lo <= at && at < hi) {
                const tc_dim *ci[TC_MAX_RANK];
                lir_compose(g->l, &n->in[i], idx, n->rank, ci);
                return cg_convert(g, cg_value(g, n->in[i].src, ci), n->in[i].src->dtype, n->dtype);
            }
    const char *res = cg_temp(g, "t");
    int *ind = &target_block(g, t)->ind;
    cg_line(g, t, n, "%s %s;", cg_type(n->dtype), res);
    const char *ax = cg_index(g, idx[n->a.cat.axis]);
    for (int i = 0; i < n->nin; i++) {
        if (i == 0)
            cg_line(g, t, NULL, "if (%s < %s) {", ax, cg_index(g, n->a.cat.offsets[1]));
        else if (i < n->nin - 1)
            cg_line(g, t, NULL, "} else if (%s < %s) {", ax, cg_index(g, n->a.cat.offsets[i + 1]));
        else
            cg_line(g, t, NULL, "} else {");
        *ind += 4;
        g->scope++;
        const lref *r = &n->in[i];
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, r, idx, n->rank, ci);
        const char *v = cg_value(g, r->src, ci);
        cg_line(g, t, NULL, "%s = %s;", res, cg_convert(g, v, r->src->dtype, n->dtype));
        /* values made inside the branch are not visible after it */
        int j = 0;
        for (int e = 0; e < g->ncache; e++)
            if (!(g->cache[e].scope >= g->scope && g->cache[e].t == t))
                g->cache[j++] = g->cache[e];
        g->ncache = j;
        g->scope--;
        *ind -= 4;
    }
    cg_line(g, t, NULL, "}");
    return res;
}

/* n's value at idx: a literal, a parameter, or a variable (made here if
 * this scope has none yet). */
static cg_expr value(cg *g, const lnode *n, const tc_dim *const *idx)
{
    switch (n->kind) {
    case LK_CONST:
        return literal(g, n);
    case LK_SCALAR:
        g->used_param[n->a.param] = true;
        return (cg_expr){arena_printf(g->a, "s_%s", g->l->g->params[n->a.param].name), true};
    case LK_DIMVAL:
        return (cg_expr){arena_printf(g->a, "((long long)(%s))", cg_index(g, n->a.dim)), false};
    default:
        break;
    }
    const cg_entry *hit = lookup(g, n, idx);
    if (hit)
        return (cg_expr){hit->name, hit->atom};
    cg_target t = cg_target_of(g, n, idx);
    cg_expr v = {NULL, true};
    bool own = g->f->kernel_of[n->id] == g->k->id;
    bool keep = g->pr.nkeep && n->kind == LK_POINTWISE && t == T_ELEM && g->scope == 0;
    if (keep && (v.s = cg_kept(g, n, idx))) { /* kept by the last reduction pass (keep.c) */
        v.atom = g->v.n <= 1;
        remember(g, n, idx, t, v);
        return v;
    }
    if (n->kind == LK_INPUT || (g->f->stored[n->id] && !own)) {
        v = cg_load(g, n, idx, t);
    } else if (n->kind == LK_REDUCE) {
        if (!own || !g->acc[n->id] || g->phase_of[n->id] >= g->phase)
            diag_error(g->d, TC_ERR_INTERNAL, n->loc,
                       "codegen: reduction %%%d read before its pass", n->id);
        v.s = g->acc[n->id];
    } else if (n->kind == LK_SCAN) {
        /* scan.c updated its carry at this element before anything reads it */
        if (!own || !g->acc[n->id] || (g->elemvars && !lir_is_identity(g->l, idx, n->rank)))
            diag_error(g->d, TC_ERR_INTERNAL, n->loc,
                       "codegen: scan %%%d read outside the element its walk is at", n->id);
        v.s = g->acc[n->id];
    } else if (n->kind == LK_MATMUL) {
        /* a matmul's fused epilogue (matmul.c): the product's element being
         * stored, rounded to its dtype, is the lambda's parameter (so is
         * the other product's, for two products in one kernel) */
        if (!own || !lir_is_identity(g->l, idx, n->rank))
            diag_error(g->d, TC_ERR_INTERNAL, n->loc,
                       "codegen: matmul %%%d read outside the element its epilogue is at", n->id);
        /* mm_v2: the pair rule's other product; an attention kernel's score
         * reads its first product (q @ k.T) as mm_v (attn.c) */
        v.s = n == g->k->ext || g->k->attn ? "mm_v" : "mm_v2";
    } else if (n->kind == LK_CONCAT) {
        v.s = concat_value(g, n, idx, t);
    } else if (n->kind == LK_GATHER) {
        v.s = cg_gather(g, n, idx, t);
    } else if (n->kind == LK_POINTWISE && n->op == OP_iota) {
        return (cg_expr){arena_printf(g->a, "((long long)(%s))", cg_index(g, idx[n->a.axis])), false};
    } else if (n->kind == LK_POINTWISE && ((v.s = cg_expform(g, n, idx)) || (v.s = cg_logform(g, n, idx)))) {
        const char *e = v.s;
        v.s = cg_temp(g, "t");
        cg_line(g, t, n, "const float %s = %s;", v.s, e);
    } else if (n->kind == LK_POINTWISE) {
        cg_expr ops[3] = {{"", true}, {"", true}, {"", true}};
        for (int i = 0; i < n->nin; i++) {
            const lref *r = &n->in[i];
            const tc_dim *ci[TC_MAX_RANK];
            lir_compose(g->l, r, idx, n->rank, ci);
            /* where's condition stays what it is; everything else converts */
            tc_dtype to = (n->op == OP_where && i == 0) ? TC_BOOL : n->opdt;
            if (r->src->kind == LK_CONST) {
                ops[i] = literal_as(g, r->src, to);
                continue;
            }
            ops[i] = convert(g, value(g, r->src, ci), r->src->dtype, to);
        }
        const char *e = op_expr(g, n, ops);
        /* An f32 element divided by a value fixed per row (softmax's sum):
         * one reciprocal per row, then a multiply per element.  Within 1.5
         * ulp of the division (the same for 0, inf and NaN divisors; a
         * divisor under 2^-126 in magnitude gives inf), and it spares the
         * division's slow-path call: softmax 16384 x 4096 on an H200, 54
         * registers to 46, 194 us to 166. */
        if (n->op == OP_div && n->opdt == TC_F32 && t == T_ELEM &&
            n->in[1].src->kind != LK_CONST) {
            const tc_dim *ci[TC_MAX_RANK];
            lir_compose(g->l, &n->in[1], idx, n->rank, ci);
            cg_target dt = cg_target_of(g, n->in[1].src, ci);
            if (dt != T_ELEM) {
                const char *rn = NULL;
                for (int i = 0; i < g->nrcp && !rn; i++)
                    if (strcmp(g->rcp[i].of, ops[1].s) == 0 && g->rcp[i].t == dt)
                        rn = g->rcp[i].name;
                if (!rn) {
                    rn = cg_temp(g, "rcp");
                    cg_line(g, dt, n, "const float %s = 1.0f / %s;", rn, operand(g, ops[1]));
                    if (g->nrcp < 16)
                        g->rcp[g->nrcp++] = (struct cg_rcp){ops[1].s, rn, dt};
                }
                e = arena_printf(g->a, "%s * %s", operand(g, ops[0]), rn);
            }
        }
        if ((n->op == OP_copy || n->op == OP_cast) && e == ops[0].s) {
            /* a copy, or a cast that changes nothing in registers */
            if (keep)
                cg_keep_put(g, n, idx, ops[0].s);
            remember(g, n, idx, t, ops[0]);
            return ops[0];
        }
        v.s = cg_temp(g, "t");
        if (n->dtype == TC_BOOL)
            cg_line(g, t, n, "const bool %s = (%s) != 0;", v.s, e);
        else if ((n->dtype == TC_F16 || n->dtype == TC_BF16) && n->op != OP_cast && n->op != OP_copy)
            /* every f16/bf16 value is one of its dtype (docs/semantics.md):
             * f32 opmath, rounded per op as the interpreter and eager
             * PyTorch do, so a fused chain gives what an unfused one does */
            cg_line(g, t, n, "const float %s = tc_round_%s(%s);", v.s, dtype_name(n->dtype), e);
        else
            cg_line(g, t, n, "const %s %s = %s;", cg_type(n->dtype), v.s, e);
    } else {
        diag_error(g->d, TC_ERR_INTERNAL, n->loc, "codegen: cannot compute %%%d here", n->id);
    }
    if (keep)
        cg_keep_put(g, n, idx, v.s);
    remember(g, n, idx, t, v);
    return v;
}

void cg_known(cg *g, const lnode *n, const tc_dim *const *idx, const char *name)
{
    remember(g, n, idx, T_ELEM, (cg_expr){name, true});
}

const char *cg_value(cg *g, const lnode *n, const tc_dim *const *idx)
{
    return value(g, n, idx).s;
}
