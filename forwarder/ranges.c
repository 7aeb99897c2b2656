#include "ranges.h"

#include <stdlib.h>
#include <string.h>

/* Index of the first range whose end is > pos (binary search). */
static size_t first_ending_after(const fwdioi_ranges_t *set, uint64_t pos)
{
    size_t lo = 0, hi = set->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->r[mid].end <= pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int fwdioi_ranges_add(fwdioi_ranges_t *set, uint64_t start, uint64_t end, uint64_t *overlap_at)
{
    size_t i = first_ending_after(set, start);
    if (i < set->n && set->r[i].start < end) {
        *overlap_at = set->r[i].start > start ? set->r[i].start : start;
        return FWDIOI_RANGES_OVERLAP;
    }
    /* Merge with the neighbour before (ends at start) and after (starts at end). */
    int join_prev = i > 0 && set->r[i - 1].end == start;
    int join_next = i < set->n && set->r[i].start == end;
    if (join_prev && join_next) {
        set->r[i - 1].end = set->r[i].end;
        memmove(&set->r[i], &set->r[i + 1], (set->n - i - 1) * sizeof *set->r);
        set->n--;
        return FWDIOI_RANGES_OK;
    }
    if (join_prev) {
        set->r[i - 1].end = end;
        return FWDIOI_RANGES_OK;
    }
    if (join_next) {
        set->r[i].start = start;
        return FWDIOI_RANGES_OK;
    }
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 4;
        fwdioi_range_t *r = realloc(set->r, cap * sizeof *r);
        if (!r)
            return FWDIOI_RANGES_NOMEM;
        set->r = r;
        set->cap = cap;
    }
    memmove(&set->r[i + 1], &set->r[i], (set->n - i) * sizeof *set->r);
    set->r[i] = (fwdioi_range_t){start, end};
    set->n++;
    return FWDIOI_RANGES_OK;
}

uint64_t fwdioi_ranges_bytes(const fwdioi_ranges_t *set)
{
    uint64_t total = 0;
    for (size_t i = 0; i < set->n; i++)
        total += set->r[i].end - set->r[i].start;
    return total;
}

int fwdioi_ranges_covers(const fwdioi_ranges_t *set, uint64_t len)
{
    return set->n == 1 && set->r[0].start == 0 && set->r[0].end == len;
}

void fwdioi_ranges_free(fwdioi_ranges_t *set)
{
    free(set->r);
    *set = (fwdioi_ranges_t){0};
}
