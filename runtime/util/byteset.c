/* SPDX-License-Identifier: BSD-3-Clause */
#include "byteset.h"

#include <stdlib.h>
#include <string.h>

/* What malloc keeps beside a block (counted as ranges.c counts it). */
enum { MALLOC_OVERHEAD = 16 };

/* The forms, in the top two bits of limit_form. */
#define FORM_SHIFT 62
#define LIMIT_MASK ((UINT64_C(1) << FORM_SHIFT) - 1)
enum { FORM_TREE = 0, FORM_BITMAP = 1, FORM_COUNT = 2 };

static unsigned form_of(const fwdioi_byteset_t *set)
{
    return (unsigned)(set->limit_form >> FORM_SHIFT);
}

static uint64_t limit_of(const fwdioi_byteset_t *set) { return set->limit_form & LIMIT_MASK; }

static void set_form(fwdioi_byteset_t *set, unsigned form)
{
    set->limit_form = limit_of(set) | (uint64_t)form << FORM_SHIFT;
}

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
    if (fwdioi_ranges_memory(&set->u.tree) <= bitmap_memory(limit_of(set)))
        return;
    uint64_t *bits = calloc(words_of(limit_of(set)), sizeof *bits);
    fwdioi_range_t *r = fwdioi_ranges_list(&set->u.tree);
    if (!bits || !r) {
        free(bits);
        free(r);
        return;
    }
    for (size_t i = 0; i < set->u.tree.n; i++)
        set_bits(bits, r[i].start, r[i].end);
    free(r);
    uint64_t bytes = fwdioi_ranges_bytes(&set->u.tree);
    fwdioi_ranges_free(&set->u.tree);
    set->u.map.bits = bits;
    set->u.map.bytes = bytes;
    set_form(set, FORM_BITMAP);
}

int fwdioi_byteset_add(fwdioi_byteset_t *set, uint64_t limit, uint64_t start, uint64_t end,
                       int strict, uint64_t *overlap_at, uint64_t *added)
{
    if (limit_of(set) == 0)
        set->limit_form |= limit & LIMIT_MASK;
    switch (form_of(set)) {
    case FORM_COUNT:
        set->u.counted += end - start;
        *added = end - start;
        return FWDIOI_RANGES_OK;
    case FORM_BITMAP:
        if (strict) {
            uint64_t at = next_bit(set->u.map.bits, start, end, 1);
            if (at < end) {
                *overlap_at = at;
                return FWDIOI_RANGES_OVERLAP;
            }
        }
        *added = set_bits(set->u.map.bits, start, end);
        set->u.map.bytes += *added;
        return FWDIOI_RANGES_OK;
    default: {
        int rc = strict ? fwdioi_ranges_add(&set->u.tree, start, end, overlap_at)
                        : fwdioi_ranges_merge(&set->u.tree, start, end, added);
        if (strict && rc == FWDIOI_RANGES_OK)
            *added = end - start;
        if (rc == FWDIOI_RANGES_OK)
            maybe_to_bitmap(set);
        return rc;
    }
    }
}

void fwdioi_byteset_count_only(fwdioi_byteset_t *set)
{
    if (form_of(set) == FORM_COUNT)
        return;
    uint64_t bytes = fwdioi_byteset_bytes(set);
    uint64_t limit = limit_of(set);
    fwdioi_byteset_free(set);
    set->u.counted = bytes;
    set->limit_form = limit;
    set_form(set, FORM_COUNT);
}

int fwdioi_byteset_counting(const fwdioi_byteset_t *set) { return form_of(set) == FORM_COUNT; }

uint64_t fwdioi_byteset_bytes(const fwdioi_byteset_t *set)
{
    switch (form_of(set)) {
    case FORM_COUNT: return set->u.counted;
    case FORM_BITMAP: return set->u.map.bytes;
    default: return fwdioi_ranges_bytes(&set->u.tree);
    }
}

int fwdioi_byteset_covers(const fwdioi_byteset_t *set, uint64_t len)
{
    switch (form_of(set)) {
    case FORM_COUNT: return set->u.counted >= len;
    case FORM_BITMAP:
        return set->u.map.bytes == len && next_bit(set->u.map.bits, 0, len, 0) == len;
    default: return fwdioi_ranges_covers(&set->u.tree, len);
    }
}

fwdioi_range_t *fwdioi_byteset_list(const fwdioi_byteset_t *set, size_t *n)
{
    *n = 0;
    if (form_of(set) == FORM_COUNT)
        return NULL;
    if (form_of(set) == FORM_TREE) {
        *n = set->u.tree.n;
        return fwdioi_ranges_list(&set->u.tree);
    }
    const uint64_t *bits = set->u.map.bits;
    const uint64_t limit = limit_of(set);
    size_t runs = 0;
    for (uint64_t at = next_bit(bits, 0, limit, 1); at < limit;
         at = next_bit(bits, next_bit(bits, at, limit, 0), limit, 1))
        runs++;
    *n = runs;
    if (runs == 0)
        return NULL;
    fwdioi_range_t *out = malloc(runs * sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (uint64_t at = next_bit(bits, 0, limit, 1); at < limit;) {
        uint64_t end = next_bit(bits, at, limit, 0);
        out[k++] = (fwdioi_range_t){at, end};
        at = next_bit(bits, end, limit, 1);
    }
    return out;
}

int fwdioi_byteset_is_bitmap(const fwdioi_byteset_t *set) { return form_of(set) == FORM_BITMAP; }

uint64_t fwdioi_byteset_memory(const fwdioi_byteset_t *set)
{
    switch (form_of(set)) {
    case FORM_COUNT: return 0;
    case FORM_BITMAP: return bitmap_memory(limit_of(set));
    default: return fwdioi_ranges_memory(&set->u.tree);
    }
}

void fwdioi_byteset_free(fwdioi_byteset_t *set)
{
    if (form_of(set) == FORM_TREE)
        fwdioi_ranges_free(&set->u.tree);
    else if (form_of(set) == FORM_BITMAP)
        free(set->u.map.bits);
    memset(set, 0, sizeof *set);
}
