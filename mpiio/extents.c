/* SPDX-License-Identifier: BSD-3-Clause */
/* This rank's extents of the current step: fwdio's set of byte ranges,
 * a new one joined to its neighbour when it holds too many. */
#include "layer.h"

int mpiio_extents_touch(const mpiio_extents_t *x, int64_t start, int64_t end)
{
    return fwdioi_ranges_touch(x, (uint64_t)start, (uint64_t)end);
}

int mpiio_extents_cover(const mpiio_extents_t *x, int64_t start, int64_t end)
{
    fwdioi_range_t r; /* the extent starting highest at or below start (they never touch) */
    return fwdioi_ranges_neighbour(x, (uint64_t)start, &r) && r.start <= (uint64_t)start &&
           r.end >= (uint64_t)end;
}

/* With MPIIO_EXTENTS_MAX extents, a new one joins its nearest neighbour
 * (the one below it, else the one above), the bytes between them included:
 * the set stays that size, each add still O(log n) (halving the whole set
 * each time it filled, as before, cost a rebuild of it every 2^19 adds:
 * half the layer's time on 2^22 interleaved 8-byte pieces). A larger
 * extent only sends more writes around (layer.h). */
int mpiio_extents_add(mpiio_extents_t *x, int64_t start, int64_t end)
{
    uint64_t lo = (uint64_t)start, hi = (uint64_t)end, added;
    fwdioi_range_t near;
    if (x->n >= MPIIO_EXTENTS_MAX && fwdioi_ranges_neighbour(x, lo, &near)) {
        lo = near.start < lo ? near.start : lo;
        hi = near.end > hi ? near.end : hi;
    }
    return fwdioi_ranges_merge(x, lo, hi, &added) == FWDIOI_RANGES_OK ? 0 : -1;
}

void mpiio_extents_clear(mpiio_extents_t *x)
{
    fwdioi_ranges_free(x);
}
