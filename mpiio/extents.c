/* This rank's extents of the current step: a sorted array of disjoint
 * [start, end) extents. */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

/* The first extent that ends after `start`. */
static size_t first_after(const mpiio_extents_t *x, int64_t start)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x->e[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mpiio_extents_touch(const mpiio_extents_t *x, int64_t start, int64_t end)
{
    size_t i = first_after(x, start);
    return i < x->n && x->e[i].start < end;
}

/* Halve the entries by joining neighbours: the set only grows. */
static void coarsen(mpiio_extents_t *x)
{
    size_t k = 0;
    for (size_t i = 0; i < x->n; i += 2, k++) {
        mpiio_extent_t e = x->e[i];
        if (i + 1 < x->n)
            e.end = x->e[i + 1].end;
        x->e[k] = e;
    }
    x->n = k;
}

int mpiio_extents_add(mpiio_extents_t *x, int64_t start, int64_t end)
{
    size_t i = first_after(x, start);
    /* Join an extent that ends where this one starts, or starts where it
     * ends. */
    if (i > 0 && x->e[i - 1].end == start) {
        x->e[i - 1].end = end;
        if (i < x->n && x->e[i].start == end) {
            x->e[i - 1].end = x->e[i].end;
            memmove(&x->e[i], &x->e[i + 1], (x->n - i - 1) * sizeof(*x->e));
            x->n--;
        }
        return 0;
    }
    if (i < x->n && x->e[i].start == end) {
        x->e[i].start = start;
        return 0;
    }
    if (x->n == MPIIO_EXTENTS_MAX) {
        coarsen(x);
        i = first_after(x, start);
        if (i < x->n && x->e[i].start < end) {
            /* Joined extents cover part of it now: one extent covers all. */
            size_t j = i;
            mpiio_extent_t u = {start < x->e[i].start ? start : x->e[i].start, end};
            for (; j < x->n && x->e[j].start < end; j++)
                u.end = x->e[j].end > u.end ? x->e[j].end : u.end;
            x->e[i] = u;
            memmove(&x->e[i + 1], &x->e[j], (x->n - j) * sizeof(*x->e));
            x->n -= j - i - 1;
            return 0;
        }
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        mpiio_extent_t *e = realloc(x->e, cap * sizeof(*e));
        if (!e)
            return -1;
        x->e = e;
        x->cap = cap;
    }
    memmove(&x->e[i + 1], &x->e[i], (x->n - i) * sizeof(*x->e));
    x->e[i] = (mpiio_extent_t){start, end};
    x->n++;
    return 0;
}

void mpiio_extents_clear(mpiio_extents_t *x)
{
    free(x->e);
    x->e = NULL;
    x->n = x->cap = 0;
}
