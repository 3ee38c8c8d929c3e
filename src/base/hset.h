/* hset.h - the one open-addressing hash table of the compiler: the graph
 * builder's names and hash-consing, lowering's interning, the dim
 * context's atoms and dims, and fusion's record of decisions all use it.
 *
 * Linear probing in a power-of-two table kept at most half full, so a
 * lookup costs O(1) on average.  Each slot keeps its element's hash, so the
 * table grows without calling back into the caller.  Elements are non-NULL
 * pointers the caller owns (a small integer key can travel as one, cast to
 * a pointer); equality is the caller's, passed to each lookup.  The slots
 * live in an arena, like everything a compilation makes.
 */
#ifndef TC_HSET_H
#define TC_HSET_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

typedef struct tc_hset {
    void **elem;            /* cap slots, NULL when empty */
    uint64_t *hash;         /* each full slot's hash */
    int cap, n;
} tc_hset;

/* Whether an element equals the key a lookup was given. */
typedef bool (*tc_hset_eq)(const void *elem, const void *key);

/* An empty table with room for cap elements before it grows (a power of
 * two; 0: the first hset_add makes 16 slots). */
void hset_init(tc_hset *s, tc_arena *a, int cap);
/* The element of hash h equal to key, or NULL. */
void *hset_find(const tc_hset *s, uint64_t h, tc_hset_eq eq, const void *key);
/* Add elem of hash h (the caller has checked it is not there), growing the
 * table in a when it would be more than half full. */
void hset_add(tc_hset *s, tc_arena *a, uint64_t h, void *elem);

#endif
