/*
 * A set of disjoint byte ranges [start, end) kept sorted and merged: which
 * bytes of a write unit have arrived. Finds overlapping writes.
 */
#ifndef FWDIOI_RANGES_H
#define FWDIOI_RANGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct fwdioi_range {
    uint64_t start, end;
} fwdioi_range_t;

typedef struct fwdioi_ranges {
    fwdioi_range_t *r;
    size_t n, cap;
} fwdioi_ranges_t;

enum { FWDIOI_RANGES_OK = 0, FWDIOI_RANGES_OVERLAP = -1, FWDIOI_RANGES_NOMEM = -2 };

/**
 * Add [start, end) (start < end). On overlap nothing is added and *overlap_at
 * is set to the first byte already present. Returns a FWDIOI_RANGES_* code.
 */
int fwdioi_ranges_add(fwdioi_ranges_t *set, uint64_t start, uint64_t end, uint64_t *overlap_at);
/** Bytes covered. */
uint64_t fwdioi_ranges_bytes(const fwdioi_ranges_t *set);
/** True when the set is exactly [0, len). */
int fwdioi_ranges_covers(const fwdioi_ranges_t *set, uint64_t len);
void fwdioi_ranges_free(fwdioi_ranges_t *set);

#endif
