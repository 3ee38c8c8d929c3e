/* fill.c - seeded random inputs for `tensorc run`.
 *
 * An input the user does not give is made up, reproducibly: parameter P
 * with seed S draws from a splitmix64 stream started at S ^ FNV-1a(P).
 * Hashing the name in means one parameter's values do not depend on which
 * other inputs were given or in what order, so replacing one random input
 * with a file leaves the rest unchanged.  The recipe is documented in the
 * README so another tool can reproduce the numbers:
 *
 *   u = (next() >> 11) * 2^-53                  uniform in [0, 1)
 *   float tensors   2u - 1, rounded to the dtype [-1, 1)
 *   int tensors     -10 + next() % 20            [-10, 10)
 *   bool tensors    next() >> 63                 true half the time
 *   float scalars   1 - u                        (0, 1]
 *   int scalars     1 + next() % 10              [1, 10]
 *
 * (Values are never all zeros or all equal, so a kernel that ignores its
 * input or mixes up two of them shows up in a comparison.)
 */
#include "cli.h"

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

rng rng_for(uint64_t seed, const char *name)
{
    return (rng){seed ^ fnv1a(name)};
}

uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1p-53;
}

void fill_tensor(rng *r, htensor *t)
{
    int64_t n = ht_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (dt_is_float(t->dtype))
            v = 2 * uniform01(r) - 1; /* rounded to the dtype as it is stored */
        else if (dt_is_int(t->dtype))
            v = -10 + (double)(rng_next(r) % 20);
        else
            v = (double)(rng_next(r) >> 63);
        ht_setf(t, i, v);
    }
}

double random_scalar(rng *r, DLDataType dt)
{
    if (dt_is_float(dt))
        return 1 - uniform01(r);
    if (dt_is_int(dt))
        return 1 + (double)(rng_next(r) % 10);
    return (double)(rng_next(r) >> 63);
}
