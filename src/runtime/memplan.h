/* memplan.h - where a run's temporaries live: offsets in one device block.
 *
 * A plan's TEMP buffers each live from the step that first writes them to
 * the step that last reads them (plan.h).  Their sizes are known only once
 * sizes are bound, so the packing is done at run time, here: every temporary
 * gets an offset in one block, and two temporaries whose lives overlap get
 * disjoint ranges.  The runtime keeps the block in the context and grows it
 * only when a run needs more, so repeated runs allocate nothing.
 *
 * The algorithm is greedy by size (as in TensorFlow Lite's arena planner):
 * largest first, each placed at the lowest aligned offset that does not
 * collide with an already placed temporary alive at the same time.  It is
 * simple, deterministic, and within a few percent of optimal on the
 * interval-shaped lifetimes a straight-line plan produces.  (The plan's own
 * `slot` suggestion is not needed: lifetimes say everything it encodes, and
 * sizes, which it cannot know, decide the packing.)
 */
#ifndef TC_MEMPLAN_H
#define TC_MEMPLAN_H

#include <stdbool.h>
#include <stdint.h>

/* Offsets are multiples of this: enough for any vector access and for
 * cuBLAS, and the driver's own allocation granularity. */
#define MEMPLAN_ALIGN 256u

typedef struct mp_item {
    uint64_t bytes;
    int first, last;        /* steps, inclusive; first <= last */
} mp_item;

/*! memplan(): offsets[i] for each of the n items and *total, the block size
 *  (a multiple of MEMPLAN_ALIGN; 0 when n is 0).  Items whose [first, last]
 *  intersect never share a byte.  @return false only when out of memory. */
bool memplan(const mp_item *items, int n, uint64_t *offsets, uint64_t *total);

#endif
