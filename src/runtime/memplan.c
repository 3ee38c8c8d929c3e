/* memplan.c - greedy-by-size placement of temporaries; see memplan.h. */
#include "memplan.h"

#include <stdlib.h>

static uint64_t round_up(uint64_t v)
{
    return (v + MEMPLAN_ALIGN - 1) / MEMPLAN_ALIGN * MEMPLAN_ALIGN;
}

static bool alive_together(const mp_item *a, const mp_item *b)
{
    return a->first <= b->last && b->first <= a->last;
}

typedef struct {
    const mp_item *items;
    int i;
} order_key;

/* Largest first; ties by earlier start, then by index, so the result never
 * depends on qsort's stability. */
static int by_size(const void *pa, const void *pb)
{
    const order_key *a = pa, *b = pb;
    const mp_item *x = &a->items[a->i], *y = &b->items[b->i];
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int by_offset(const void *pa, const void *pb)
{
    const uint64_t *a = pa, *b = pb; /* pairs: offset, end */
    return (a[0] > b[0]) - (a[0] < b[0]);
}

bool memplan(const mp_item *items, int n, uint64_t *offsets, uint64_t *total)
{
    *total = 0;
    if (n <= 0)
        return true;
    order_key *order = malloc((size_t)n * sizeof *order);
    uint64_t *busy = malloc((size_t)n * 2 * sizeof *busy); /* [offset, end) of conflicting items */
    bool *placed = calloc((size_t)n, sizeof *placed);
    if (!order || !busy || !placed) {
        free(order);
        free(busy);
        free(placed);
        return false;
    }
    for (int i = 0; i < n; i++)
        order[i] = (order_key){items, i};
    qsort(order, (size_t)n, sizeof *order, by_size);

    for (int r = 0; r < n; r++) {
        int i = order[r].i;
        uint64_t need = round_up(items[i].bytes);
        int nb = 0;
        for (int j = 0; j < n; j++)
            if (placed[j] && alive_together(&items[i], &items[j])) {
                busy[2 * nb] = offsets[j];
                busy[2 * nb + 1] = offsets[j] + round_up(items[j].bytes);
                nb++;
            }
        qsort(busy, (size_t)nb, 2 * sizeof *busy, by_offset);
        /* The first gap from 0 that holds `need` bytes; ranges may nest or
         * overlap each other (they belong to items not alive together), so
         * track the furthest end seen. */
        uint64_t at = 0;
        for (int k = 0; k < nb; k++) {
            if (busy[2 * k] >= at + need)
                break;
            if (busy[2 * k + 1] > at)
                at = busy[2 * k + 1];
        }
        offsets[i] = at;
        placed[i] = true;
        if (at + need > *total)
            *total = at + need;
    }
    free(order);
    free(busy);
    free(placed);
    return true;
}
