/* SPDX-License-Identifier: BSD-3-Clause */
#include "byteset.h"

#include <stdlib.h>
#include <string.h>

/* What malloc keeps beside a block (counted as ranges.c counts it). */
enum { MALLOC_OVERHEAD = 16 };

static uint64_t words_of(uint64_t limit) { return (limit + 63) / 64; }

static uint64_t bitmap_memory(uint64_t limit)
{
    return words_of(limit) * sizeof(uint64_t) + MALLOC_OVERHEAD;
}

/* Bits [lo, hi) of one word set, lo < hi <= 64. */
static uint64_t mask_of(unsigned lo, unsigned hi)
{
    uint64_t upto = hi == 64 ? ~(uint64_t)0 : (((uint64_t)1 << hi) - 1);
    return upto & ~(((uint64_t)1 << lo) - 1);
}

/* The first index in [from, to) whose bit is `want`, or `to`. */
static uint64_t next_bit(const uint64_t *bits, uint64_t from, uint64_t to, int want)
{
    while (from < to) {
        uint64_t w = from / 64;
        unsigned lo = (unsigned)(from % 64);
        uint64_t word = (want ? bits[w] : ~bits[w]) & mask_of(lo, 64);
        if (word) {
            uint64_t at = w * 64 + (uint64_t)__builtin_ctzll(word);
            return at < to ? at : to;
        }
        from = (w + 1) * 64;
    }
    return to;
}

/* Set bits [start, end); returns how many were not set before. */
static uint64_t set_bits(uint64_t *bits, uint64_t start, uint64_t end)
{
    uint64_t fresh = 0;
    while (start < end) {
        uint64_t w = start / 64;
        unsigned lo = (unsigned)(start % 64);
        unsigned hi = end - w * 64 >= 64 ? 64 : (unsigned)(end - w * 64);
        uint64_t m = mask_of(lo, hi);
        fresh += (uint64_t)__builtin_popcountll(m & ~bits[w]);
        bits[w] |= m;
        start = w * 64 + hi;
    }
    return fresh;
}

/* The tree has grown past what the bitmap takes: move to the bitmap (the
 * tree stays when there is no memory for it: still right, only larger). */
static void maybe_to_bitmap(fwdioi_byteset_t *set)
{
    if (fwdioi_ranges_memory(&set->tree) <= bitmap_memory(set->limit))
        return;
    uint64_t *bits = calloc(words_of(set->limit), sizeof *bits);
    fwdioi_range_t *r = fwdioi_ranges_list(&set->tree);
    if (!bits || !r) {
        free(bits);
        free(r);
        return;
    }
    for (size_t i = 0; i < set->tree.n; i++)
        set_bits(bits, r[i].start, r[i].end);
    free(r);
    set->bytes = fwdioi_ranges_bytes(&set->tree);
    fwdioi_ranges_free(&set->tree);
    set->bits = bits;
}

int fwdioi_byteset_add(fwdioi_byteset_t *set, uint64_t limit, uint64_t start, uint64_t end,
                       int strict, uint64_t *overlap_at, uint64_t *added)
{
    if (set->limit == 0)
        set->limit = limit;
    if (!set->bits) {
        int rc = strict ? fwdioi_ranges_add(&set->tree, start, end, overlap_at)
                        : fwdioi_ranges_merge(&set->tree, start, end, added);
        if (strict && rc == FWDIOI_RANGES_OK)
            *added = end - start;
        if (rc == FWDIOI_RANGES_OK)
            maybe_to_bitmap(set);
        return rc;
    }
    if (strict) {
        uint64_t at = next_bit(set->bits, start, end, 1);
        if (at < end) {
            *overlap_at = at;
            return FWDIOI_RANGES_OVERLAP;
        }
    }
    *added = set_bits(set->bits, start, end);
    set->bytes += *added;
    return FWDIOI_RANGES_OK;
}

uint64_t fwdioi_byteset_bytes(const fwdioi_byteset_t *set)
{
    return set->bits ? set->bytes : fwdioi_ranges_bytes(&set->tree);
}

int fwdioi_byteset_covers(const fwdioi_byteset_t *set, uint64_t len)
{
    if (!set->bits)
        return fwdioi_ranges_covers(&set->tree, len);
    return set->bytes == len && next_bit(set->bits, 0, len, 0) == len;
}

fwdioi_range_t *fwdioi_byteset_list(const fwdioi_byteset_t *set, size_t *n)
{
    if (!set->bits) {
        *n = set->tree.n;
        return fwdioi_ranges_list(&set->tree);
    }
    const uint64_t limit = set->limit;
    size_t runs = 0;
    for (uint64_t at = next_bit(set->bits, 0, limit, 1); at < limit;
         at = next_bit(set->bits, next_bit(set->bits, at, limit, 0), limit, 1))
        runs++;
    *n = runs;
    if (runs == 0)
        return NULL;
    fwdioi_range_t *out = malloc(runs * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (uint64_t at = next_bit(set->bits, 0, limit, 1); at < limit;) {
        uint64_t end = next_bit(set->bits, at, limit, 0);
        out[k++] = (fwdioi_range_t){at, end};
        at = next_bit(set->bits, end, limit, 1);
    }
    return out;
}

int fwdioi_byteset_is_bitmap(const fwdioi_byteset_t *set) { return set->bits != NULL; }

uint64_t fwdioi_byteset_memory(const fwdioi_byteset_t *set)
{
    return set->bits ? bitmap_memory(set->limit) : fwdioi_ranges_memory(&set->tree);
}

void fwdioi_byteset_free(fwdioi_byteset_t *set)
{
    fwdioi_ranges_free(&set->tree);
    free(set->bits);
    memset(set, 0, sizeof *set);
}
