/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The byte-range set against a bitmap oracle: random strict adds and unions,
 * touches, the listing, each position's neighbour and the byte count after
 * every change; then many
 * small interleaved ranges, kept in a tree of logarithmic height (the time
 * they take is bench/ranges's).
 */
#include "ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 512, ROUNDS = 2000 };

static int fail(const char *what, uint64_t a, uint64_t b)
{
    fprintf(stderr, "[%llu,%llu): %s\n", (unsigned long long)a, (unsigned long long)b, what);
    return 1;
}

/* The set equals the oracle: count, bytes, order, merging, covers. */
static int check_against(const fwdioi_ranges_t *set, const unsigned char *have)
{
    uint64_t count = 0, runs = 0;
    for (uint64_t i = 0; i < LEN; i++) {
        count += have[i];
        runs += have[i] && (i == 0 || !have[i - 1]);
    }
    if (fwdioi_ranges_bytes(set) != count || set->n != runs)
        return fail("bytes or number of ranges differ from the oracle", count, runs);
    fwdioi_range_t *r = fwdioi_ranges_list(set);
    if (set->n > 0 && !r)
        return fail("no list", 0, set->n);
    int rc = 0;
    for (size_t i = 0; i < set->n && !rc; i++) {
        if (r[i].start >= r[i].end || (i > 0 && r[i - 1].end >= r[i].start))
            rc = fail("ranges not sorted, empty or not merged", r[i].start, r[i].end);
        for (uint64_t j = r[i].start; j < r[i].end && !rc; j++)
            if (!have[j])
                rc = fail("a range covers an absent byte", j, j + 1);
    }
    /* the neighbour of every position: the last range starting at or
     * before it, else the first */
    for (uint64_t pos = 0; pos < LEN + 2 && !rc; pos++) {
        fwdioi_range_t got, want = {0, 0};
        int found = fwdioi_ranges_neighbour(set, pos, &got);
        for (size_t i = 0; i < set->n; i++)
            if (r[i].start <= pos || i == 0)
                want = r[i];
        if (found != (set->n > 0) || (found && (got.start != want.start || got.end != want.end)))
            rc = fail("neighbour() is wrong", pos, found ? got.start : 0);
    }
    free(r);
    if (!rc && fwdioi_ranges_covers(set, LEN) != (count == LEN))
        rc = fail("covers() is wrong", 0, count);
    return rc;
}

static int run_round(unsigned *seed, int unions)
{
    unsigned char have[LEN] = {0};
    fwdioi_ranges_t set = {0};
    int rc = 0;
    for (int step = 0; step < 200 && !rc; step++) {
        uint64_t a = (uint64_t)(rand_r(seed) % LEN);
        uint64_t len = 1 + (uint64_t)(rand_r(seed) % 40);
        uint64_t b = a + len > LEN ? LEN : a + len;
        uint64_t first_present = UINT64_MAX, absent = 0;
        for (uint64_t i = a; i < b; i++) {
            if (have[i] && first_present == UINT64_MAX)
                first_present = i;
            absent += !have[i];
        }
        if (fwdioi_ranges_touch(&set, a, b) != (first_present != UINT64_MAX))
            rc = fail("touch() is wrong", a, b);
        if (unions) {
            uint64_t added = 0;
            if (fwdioi_ranges_merge(&set, a, b, &added) != FWDIOI_RANGES_OK || added != absent)
                rc = fail("the union added a wrong number of bytes", added, absent);
            memset(have + a, 1, b - a);
        } else {
            uint64_t at = 0;
            int got = fwdioi_ranges_add(&set, a, b, &at);
            if (first_present != UINT64_MAX) {
                if (got != FWDIOI_RANGES_OVERLAP || at != first_present)
                    rc = fail("expected an overlap at the first byte present", at, first_present);
            } else if (got != FWDIOI_RANGES_OK) {
                rc = fail("refused", a, b);
            } else {
                memset(have + a, 1, b - a);
            }
        }
        if (!rc)
            rc = check_against(&set, have);
    }
    if (set.n > 0 && fwdioi_ranges_memory(&set) == 0)
        rc = fail("a set that holds ranges reports no memory", 0, set.n);
    fwdioi_ranges_free(&set);
    if (!rc && (set.n != 0 || fwdioi_ranges_memory(&set) != 0))
        rc = fail("free left something", 0, set.n);
    return rc;
}

/* n pieces of 16 bytes 128 bytes apart from 8 "ranks" taking turns (rank
 * k's pieces start at 16 k), as a parallel point selection's pieces reach a
 * writer: from the second rank on every piece lands between two others.
 * Halfway (4 ranks in) the set holds n / 2 ranges in a tree of logarithmic
 * height, so that each add costs O(log n) (a sorted array moved its tail
 * for each); at the end one range. 0 when all is as it should be. */
static int interleaved(uint64_t n, unsigned *half_height)
{
    fwdioi_ranges_t set = {0};
    uint64_t per = n / 8, at;
    int bad = 0;
    for (uint64_t k = 0; k < 8; k++) {
        for (uint64_t i = 0; i < per; i++)
            if (fwdioi_ranges_add(&set, i * 128 + k * 16, i * 128 + k * 16 + 16, &at) != 0)
                bad = 1;
        if (k == 3) {
            *half_height = fwdioi_ranges_height(&set);
            bad |= set.n != per;
        }
    }
    bad |= set.n != 1 || fwdioi_ranges_bytes(&set) != per * 128;
    fwdioi_ranges_free(&set);
    return bad;
}

int main(void)
{
    unsigned seed = 12345;
    for (int round = 0; round < ROUNDS; round++)
        if (run_round(&seed, round % 2)) {
            fprintf(stderr, "test_ranges: failed in round %d (%s)\n", round,
                    round % 2 ? "unions" : "strict adds");
            return 1;
        }
    unsigned h = 0;
    const uint64_t n = (uint64_t)1 << 20; /* pieces: 2^19 ranges halfway */
    if (interleaved(n, &h)) {
        fprintf(stderr, "test_ranges: interleaved pieces went wrong\n");
        return 1;
    }
    printf("test_ranges: %d rounds passed; 2^19 interleaved ranges in a tree of height %u\n",
           ROUNDS, h);
    if (h > 4 * 19) { /* a treap's expected height is about 2.5 log2 n */
        fprintf(stderr, "test_ranges: height %u for 2^19 ranges: not logarithmic\n", h);
        return 1;
    }
    return 0;
}
