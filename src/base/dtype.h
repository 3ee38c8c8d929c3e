/* dtype.h - element types and the promotion rules of the language.
 *
 * Promotion follows PyTorch: categories bool < integer < floating; within a
 * category the wider type wins, and f16 with bf16 gives f32.  A "weak" operand
 * (a literal, a scalar parameter, a symbolic dim used as a number) only
 * decides the category: `x * 2` keeps x's dtype, `i * 0.5` gives f32.
 */
#ifndef TC_DTYPE_H
#define TC_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#define TC_DTYPES(X)            \
    /* id     name    bytes */  \
    X(BOOL,  "bool",  1)        \
    X(I32,   "i32",   4)        \
    X(I64,   "i64",   8)        \
    X(F16,   "f16",   2)        \
    X(BF16,  "bf16",  2)        \
    X(F32,   "f32",   4)        \
    X(F64,   "f64",   8)

typedef enum tc_dtype {
    TC_DT_NONE = 0,
#define X(id, name, bytes) TC_##id,
    TC_DTYPES(X)
#undef X
    TC_DT_COUNT
} tc_dtype;

const char *dtype_name(tc_dtype t);          /* "f32"; "?" for NONE */
int dtype_size(tc_dtype t);                  /* bytes per element */
tc_dtype dtype_parse(const char *s);         /* TC_DT_NONE if not a dtype name */
bool dtype_is_float(tc_dtype t);
bool dtype_is_int(tc_dtype t);               /* i32, i64 (not bool) */
/* Result of combining two operands; wa/wb mark weak (literal-like) operands. */
tc_dtype dtype_promote(tc_dtype a, bool wa, tc_dtype b, bool wb);

/* Rounding of an f64 value to what a dtype can hold, round-to-nearest-even,
 * as the reference interpreter stores it.  Integers truncate toward zero and
 * wrap like a two's-complement store; bool is (v != 0). */
double dtype_round(tc_dtype t, double v);

/* A cast of v, a value of dtype from, to dtype to (docs/semantics.md,
 * "Edges"): a float to an integer truncates toward zero and saturates to the
 * target's range, NaN giving 0 (PTX cvt.rzi's clamping, which the kernels
 * use); every other conversion is dtype_round (integers wrap, floats round
 * to nearest even, bool is v != 0).  A double cannot hold the i64 maximum:
 * where the result is an integer, use dtype_f2i, which is exact. */
double dtype_cast(tc_dtype from, tc_dtype to, double v);

/* Conversions with integers carried exactly (as the interpreter carries
 * them), each what the kernels' conversion does:
 *   dtype_f2i   a float v cast to integer or bool t: toward zero, saturating
 *               (i64(1e30) is INT64_MAX), NaN 0; bool is v != 0 (NaN true)
 *   dtype_wrap  an integer v stored as integer or bool t: i32 wraps modulo
 *               2^32, bool is v != 0, i64 unchanged
 *   dtype_i2f   an integer v converted to float t, rounded once to nearest
 *               even as (float)v / (double)v round (f16/bf16 through f32,
 *               as the kernels compute them) */
int64_t dtype_f2i(tc_dtype t, double v);
int64_t dtype_wrap(tc_dtype t, int64_t v);
double dtype_i2f(tc_dtype t, int64_t v);
/* v stored as integer dtype t (dtype_round: wrapped), as an int64_t,
 * converted without undefined behaviour for any double. */
int64_t dtype_to_int(tc_dtype t, double v);
/* An integer or bool element as device buffers and .npy files hold it (host
 * byte order), and back. */
void dtype_encode_int(tc_dtype t, int64_t v, void *p);
int64_t dtype_decode_int(tc_dtype t, const void *p);

/* IEEE binary16: the bits of v rounded to f16, and the value of bits. */
uint16_t dtype_f16_bits(double v);
double dtype_f16_value(uint16_t h);
/* One element as device buffers hold it (host byte order; f16 and bf16 as
 * their 16 bits, bool as one byte): v rounded to t and stored at p, and the
 * value stored at p.  Shared by `tensorc run` and the benchmarks. */
void dtype_encode(tc_dtype t, double v, void *p);
double dtype_decode(tc_dtype t, const void *p);

#endif
