/* refmath.h - the f64 math behind the `ref` column of ops.def.
 *
 * Each helper is the PyTorch definition of the op written out in double
 * precision, so the reference interpreter is the thing a kernel is checked
 * against rather than another implementation of the same shortcut.  Where
 * PyTorch has a choice to make (NaN, signed zero, huge arguments) the comment
 * says which way it goes.  These are static inline so ops.def can name them
 * in an expression; nothing here allocates or fails.
 */
#ifndef TC_REFMATH_H
#define TC_REFMATH_H

#include <math.h>

/* M_SQRT1_2 and friends are not ISO C; spell the constants out. */
#define RF_SQRT1_2 0.70710678118654752440   /* 1/sqrt(2) */
#define RF_SQRT_2_OVER_PI 0.79788456080286535588 /* sqrt(2/pi) */

/* 1 / (1 + e^-x), evaluated so that neither branch overflows: for x < 0,
 * e^-x would be huge, so use e^x / (1 + e^x) instead (sigmoid(-800) = 0,
 * sigmoid(800) = 1, never inf/inf).  NaN stays NaN. */
static inline double rf_sigmoid(double x)
{
    if (x >= 0)
        return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

/* torch.relu is clamp_min(x, 0): NaN propagates. */
static inline double rf_relu(double x)
{
    if (isnan(x))
        return x;
    return x > 0 ? x : 0.0;
}

/* torch.nn.functional.gelu(approximate='none'): x * 0.5 * (1 + erf(x / sqrt(2))). */
static inline double rf_gelu(double x)
{
    return x * 0.5 * (1.0 + erf(x * RF_SQRT1_2));
}

/* gelu(approximate='tanh'): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). */
static inline double rf_gelu_tanh(double x)
{
    double inner = RF_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(inner));
}

/* silu(x) = x * sigmoid(x), with the stable sigmoid above. */
static inline double rf_silu(double x) { return x * rf_sigmoid(x); }

/* torch softplus with beta = 1, threshold = 20: linear above the threshold,
 * where log1p(exp(x)) equals x to double precision anyway. */
static inline double rf_softplus(double x) { return x > 20.0 ? x : log1p(exp(x)); }

/* sign: -1, 0 or 1; NaN stays NaN; both zeros give +0 (as torch.sign). */
static inline double rf_sign(double x)
{
    if (isnan(x))
        return x;
    return (double)((x > 0) - (x < 0));
}

/* Python's %: the result has the sign of the divisor (or is zero).
 * fmod has the sign of the dividend, so move it over by one divisor when the
 * signs differ.  b == 0 gives NaN (fmod does); -5 % inf is inf like Python.
 * Integer nodes do not come here (see ref_pointwise.c): they use int64. */
static inline double rf_mod(double a, double b)
{
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    else if (r == 0)
        r = copysign(0.0, b);
    return r;
}

/* torch.maximum / torch.minimum: NaN if either side is NaN. */
static inline double rf_max(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a > b ? a : b;
}

static inline double rf_min(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return a < b ? a : b;
}

/* torch.clamp(x, lo, hi) = min(max(x, lo), hi); a NaN anywhere gives NaN. */
static inline double rf_clamp(double x, double lo, double hi) { return rf_min(rf_max(x, lo), hi); }

#endif
