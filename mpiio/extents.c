/* SPDX-License-Identifier: BSD-3-Clause */
/* This rank's extents of the current step: fwdio's set of byte ranges,
 * coarsened when it holds too many. */
#include "layer.h"

#include <stdlib.h>

int mpiio_extents_touch(const mpiio_extents_t *x, int64_t start, int64_t end)
{
    return fwdioi_ranges_touch(x, (uint64_t)start, (uint64_t)end);
}

/* Halve the extents by joining neighbours (the set only grows): 0, or -1
 * without memory (the set is as it was). */
static int coarsen(mpiio_extents_t *x)
{
    size_t n = x->n;
    fwdioi_range_t *r = fwdioi_ranges_list(x);
    if (!r)
        return -1;
    mpiio_extents_t joined = {0};
    uint64_t added;
    for (size_t i = 0; i < n; i += 2) {
        uint64_t end = i + 1 < n ? r[i + 1].end : r[i].end;
        if (fwdioi_ranges_merge(&joined, r[i].start, end, &added) != FWDIOI_RANGES_OK) {
            fwdioi_ranges_free(&joined);
            free(r);
            return -1;
        }
    }
    free(r);
    fwdioi_ranges_free(x);
    *x = joined;
    return 0;
}

int mpiio_extents_add(mpiio_extents_t *x, int64_t start, int64_t end)
{
    if (x->n >= MPIIO_EXTENTS_MAX && coarsen(x) != 0)
        return -1;
    /* After coarsening, joined extents may cover part of it: the union. */
    uint64_t added;
    return fwdioi_ranges_merge(x, (uint64_t)start, (uint64_t)end, &added) == FWDIOI_RANGES_OK
               ? 0
               : -1;
}

void mpiio_extents_clear(mpiio_extents_t *x)
{
    fwdioi_ranges_free(x);
}
