/* hset.c - the open-addressing hash table; see hset.h. */
#include "hset.h"

/* The slot of hash h: the first empty one from h's, or the first whose
 * element eq matches (eq NULL: the first empty one). */
static int probe(void *const *elem, const uint64_t *hash, int cap, uint64_t h, tc_hset_eq eq,
                 const void *key)
{
    int mask = cap - 1;
    for (int i = (int)(h & (uint64_t)mask);; i = (i + 1) & mask)
        if (!elem[i] || (eq && hash[i] == h && eq(elem[i], key)))
            return i;
}

void hset_init(tc_hset *s, tc_arena *a, int cap)
{
    s->cap = cap;
    s->n = 0;
    s->elem = cap ? ARENA_ARRAY(a, void *, cap) : NULL;
    s->hash = cap ? ARENA_ARRAY(a, uint64_t, cap) : NULL;
}

void *hset_find(const tc_hset *s, uint64_t h, tc_hset_eq eq, const void *key)
{
    if (!s->cap)
        return NULL;
    return s->elem[probe(s->elem, s->hash, s->cap, h, eq, key)];
}

void hset_add(tc_hset *s, tc_arena *a, uint64_t h, void *elem)
{
    if (2 * (s->n + 1) > s->cap) {
        tc_hset old = *s;
        hset_init(s, a, old.cap ? 2 * old.cap : 16);
        for (int i = 0; i < old.cap; i++)
            if (old.elem[i]) {
                int j = probe(s->elem, s->hash, s->cap, old.hash[i], NULL, NULL);
                s->elem[j] = old.elem[i];
                s->hash[j] = old.hash[i];
            }
        s->n = old.n;
    }
    int j = probe(s->elem, s->hash, s->cap, h, NULL, NULL);
    s->elem[j] = elem;
    s->hash[j] = h;
    s->n++;
}
