/* dtype.c - element types: names, sizes, promotion and rounding.
 *
 * Promotion (dtype_promote) follows PyTorch's result_type, with tensorc's weak
 * operands playing the part of PyTorch's Python scalars and 0-d tensors:
 *
 *   - Categories are ordered bool < integer < floating.
 *   - Two operands of the same strength (both strong, or both weak) take the
 *     higher category; within a category the wider type wins, and f16 with
 *     bf16 (neither holds the other) gives f32.
 *   - A weak operand never widens a strong one inside its category: f16 * 2.0
 *     is f16, i32 + N is i32.  When the weak operand is of a higher category
 *     it decides the category and brings its own dtype, as a PyTorch 0-d
 *     tensor does (i32 tensor * lr:f16 is f16), except that a weak f64 gives
 *     the default float f32: float literals may be held as f64 for precision,
 *     and `i * 0.5` must be f32 as in PyTorch.
 *
 * Rounding (dtype_round) is what a store into the dtype does to an exact
 * f64 value, as the reference interpreter needs it.  Floating types round to
 * nearest, ties to even, directly from the double: going through float first
 * would round twice and can differ from a single rounding for f16/bf16.  The
 * rounding is written with frexp/ldexp/nearbyint so it can be checked by eye:
 * scale the value so that its last kept bit is the units digit, round to an
 * integer (nearbyint in the default mode is ties-to-even), scale back.
 * Subnormals fall out of clamping the exponent at the type's minimum.
 *
 * Integer stores truncate toward zero and wrap modulo 2^bits like a
 * two's-complement store, which is what integer arithmetic overflow does on
 * the device.  Values with no integer meaning are defined here rather than
 * left undefined as in C: NaN stores as 0 and +-inf saturate to the type's
 * max/min, as PTX's cvt.rzi does (for i64 the max is the largest double
 * below 2^63, since 2^63-1 has no double; dtype_f2i, which returns an
 * int64, gives 2^63-1 itself).  Bool stores (v != 0), so NaN is true.
 */
#include "dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    int bytes;
} dtypes[TC_DT_COUNT] = {
    [TC_DT_NONE] = {"?", 0},
#define X(id, nm, by) [TC_##id] = {nm, by},
    TC_DTYPES(X)
#undef X
};

const char *dtype_name(tc_dtype t)
{
    return (t > TC_DT_NONE && t < TC_DT_COUNT) ? dtypes[t].name : "?";
}

int dtype_size(tc_dtype t)
{
    return (t > TC_DT_NONE && t < TC_DT_COUNT) ? dtypes[t].bytes : 0;
}

tc_dtype dtype_parse(const char *s)
{
    if (!s)
        return TC_DT_NONE;
    for (int t = TC_DT_NONE + 1; t < TC_DT_COUNT; t++)
        if (strcmp(s, dtypes[t].name) == 0)
            return (tc_dtype)t;
    return TC_DT_NONE;
}

bool dtype_is_float(tc_dtype t)
{
    return t == TC_F16 || t == TC_BF16 || t == TC_F32 || t == TC_F64;
}

bool dtype_is_int(tc_dtype t) { return t == TC_I32 || t == TC_I64; }

/* 0 bool, 1 integer, 2 floating. */
static int category(tc_dtype t)
{
    return dtype_is_float(t) ? 2 : dtype_is_int(t) ? 1 : 0;
}

/* Promotion of two operands of equal strength. */
static tc_dtype promote_same(tc_dtype a, tc_dtype b)
{
    if (a == b)
        return a;
    int ca = category(a), cb = category(b);
    if (ca != cb)
        return ca > cb ? a : b;
    if ((a == TC_F16 && b == TC_BF16) || (a == TC_BF16 && b == TC_F16))
        return TC_F32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
}

tc_dtype dtype_promote(tc_dtype a, bool wa, tc_dtype b, bool wb)
{
    if (a == TC_DT_NONE || b == TC_DT_NONE)
        return TC_DT_NONE;
    if (wa == wb)
        return promote_same(a, b);
    /* Exactly one is weak: make b the weak one. */
    if (wa) {
        tc_dtype t = a;
        a = b;
        b = t;
    }
    if (category(b) <= category(a))
        return a;
    return b == TC_F64 ? TC_F32 : b;
}

/* Round v to a binary floating format with p significant bits (the implicit
 * one included), normal exponents emin..emax (value = 1.f * 2^e), to nearest
 * with ties to even.  Results above the largest finite value become inf. */
static double round_float(double v, int p, int emin, int emax)
{
    if (isnan(v) || isinf(v) || v == 0)
        return v;
    int e;
    frexp(v, &e);                 /* v = m * 2^e with 0.5 <= |m| < 1 */
    int lead = e - 1;             /* exponent of v's leading bit */
    if (lead < emin)
        lead = emin;              /* subnormal: fixed quantum 2^(emin-p+1) */
    int q = lead - (p - 1);       /* exponent of the last kept bit */
    double r = ldexp(nearbyint(ldexp(v, -q)), q);
    double maxfin = ldexp(2.0 - ldexp(1.0, 1 - p), emax);
    if (fabs(r) > maxfin)
        return copysign(INFINITY, v);
    return r;
}

/* Truncate toward zero and wrap into [-2^(bits-1), 2^(bits-1)).  Every step
 * is exact in double: fmod is exact, and the final subtraction is of two
 * numbers within a factor of two of each other. */
static double wrap_int(double v, int bits)
{
    double half = ldexp(1.0, bits - 1), full = ldexp(1.0, bits);
    if (isnan(v))
        return 0;
    if (isinf(v)) /* for i64, 2^63-1 is not a double: the largest double below 2^63 */
        return v > 0 ? (bits < 53 ? half - 1 : nextafter(half, 0)) : -half;
    double t = trunc(v) + 0.0; /* integers have no -0 */
    if (t >= -half && t < half)
        return t;
    double r = fmod(t, full);     /* (-full, full), sign of t */
    if (r < 0)
        r += full;                /* [0, full) */
    return r >= half ? r - full : r;
}

double dtype_round(tc_dtype t, double v)
{
    switch (t) {
    case TC_F64:
        return v;
    case TC_F32:
        /* The hardware conversion is exact rounding, but converting a double
         * outside float's range is undefined in ISO C: round those by hand. */
        if (fabs(v) > FLT_MAX && !isinf(v))
            return round_float(v, 24, -126, 127);
        return (double)(float)v;
    case TC_F16:
        return round_float(v, 11, -14, 15);
    case TC_BF16:
        return round_float(v, 8, -126, 127);
    case TC_I32:
        return wrap_int(v, 32);
    case TC_I64:
        return wrap_int(v, 64);
    case TC_BOOL:
        return v != 0 ? 1.0 : 0.0;
    default:
        return v;
    }
}

double dtype_cast(tc_dtype from, tc_dtype to, double v)
{
    if (dtype_is_float(from) && dtype_is_int(to)) {
        double half = ldexp(1.0, to == TC_I32 ? 31 : 63);
        if (isnan(v))
            return 0;
        if (v >= half)
            return to == TC_I32 ? half - 1 : nextafter(half, 0);
        if (v <= -half)
            return -half;
        return trunc(v) + 0.0; /* integers have no -0 */
    }
    return dtype_round(to, v);
}

int64_t dtype_f2i(tc_dtype t, double v)
{
    if (t == TC_BOOL)
        return v != 0;
    if (isnan(v))
        return 0;
    if (t == TC_I32) {
        if (v >= 2147483647.0)
            return INT32_MAX;
        if (v <= -2147483648.0)
            return INT32_MIN;
        return (int64_t)v;
    }
    if (v >= 9223372036854775808.0) /* 2^63: every double from here saturates */
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v; /* C truncates toward zero, defined inside the range */
}

int64_t dtype_wrap(tc_dtype t, int64_t v)
{
    if (t == TC_I32)
        return (int32_t)(uint32_t)(uint64_t)v;
    if (t == TC_BOOL)
        return v != 0;
    return v;
}

double dtype_i2f(tc_dtype t, int64_t v)
{
    if (t == TC_F64)
        return (double)v; /* one rounding, to nearest even */
    /* f32, and f16/bf16 rounded from the f32 the kernels compute in */
    return dtype_round(t, (double)(float)v);
}

void dtype_encode_int(tc_dtype t, int64_t v, void *p)
{
    switch (t) {
    case TC_I32: { int32_t x = (int32_t)dtype_wrap(t, v); memcpy(p, &x, 4); return; }
    case TC_I64: memcpy(p, &v, 8); return;
    case TC_BOOL: *(unsigned char *)p = v != 0; return;
    default: dtype_encode(t, dtype_i2f(t, v), p); return;
    }
}

int64_t dtype_decode_int(tc_dtype t, const void *p)
{
    switch (t) {
    case TC_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case TC_I64: { int64_t x; memcpy(&x, p, 8); return x; }
    case TC_BOOL: return *(const unsigned char *)p != 0;
    default: return dtype_f2i(TC_I64, dtype_decode(t, p));
    }
}

uint16_t dtype_f16_bits(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return sign | 0x7e00;
    double r = fabs(dtype_round(TC_F16, v));
    if (isinf(r))
        return sign | 0x7c00;
    if (r == 0)
        return sign;
    if (r < ldexp(1.0, -14))                     /* subnormal: r = mant * 2^-24 */
        return sign | (uint16_t)ldexp(r, 24);
    int e;
    double m = frexp(r, &e);                     /* r = m * 2^e, 0.5 <= m < 1 */
    uint16_t exp = (uint16_t)(e - 1 + 15);
    uint16_t mant = (uint16_t)(ldexp(m, 11) - 1024);
    return sign | (uint16_t)(exp << 10) | mant;
}

double dtype_f16_value(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(mant, -24);                    /* zero or subnormal */
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp(mant + 1024, exp - 25);        /* 1.mant * 2^(exp-15) */
    return sign ? -v : v;
}

int64_t dtype_to_int(tc_dtype t, double v)
{
    double r = dtype_round(t, v);
    if (r >= 9223372036854775807.0)
        return INT64_MAX;
    if (r < -9223372036854775807.0)
        return INT64_MIN;
    return (int64_t)r;
}

void dtype_encode(tc_dtype t, double v, void *p)
{
    switch (t) {
    case TC_F32: { float x = (float)dtype_round(t, v); memcpy(p, &x, 4); return; }
    case TC_F64: memcpy(p, &v, 8); return;
    case TC_F16: { uint16_t h = dtype_f16_bits(v); memcpy(p, &h, 2); return; }
    case TC_BF16: { /* the top half of the f32 of a bf16 value */
        float x = (float)dtype_round(t, v);
        uint32_t u;
        memcpy(&u, &x, 4);
        uint16_t h = (uint16_t)(u >> 16);
        memcpy(p, &h, 2);
        return;
    }
    case TC_I32: { int32_t x = (int32_t)dtype_to_int(t, v); memcpy(p, &x, 4); return; }
    case TC_I64: { int64_t x = dtype_to_int(t, v); memcpy(p, &x, 8); return; }
    case TC_BOOL: *(unsigned char *)p = v != 0; return;
    default: return;
    }
}

double dtype_decode(tc_dtype t, const void *p)
{
    switch (t) {
    case TC_F32: { float x; memcpy(&x, p, 4); return x; }
    case TC_F64: { double x; memcpy(&x, p, 8); return x; }
    case TC_F16: { uint16_t h; memcpy(&h, p, 2); return dtype_f16_value(h); }
    case TC_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        uint32_t u = (uint32_t)h << 16;
        float x;
        memcpy(&x, &u, 4);
        return x;
    }
    case TC_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case TC_I64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case TC_BOOL: return *(const unsigned char *)p != 0;
    default: return 0;
    }
}
