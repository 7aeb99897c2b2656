/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded byte set against a byte-per-byte oracle, over limits small
 * and large enough that it stays a range tree, turns into a bitmap at once,
 * or turns into one midway: random strict adds (an overlap refused at the
 * first byte present) and unions (the bytes added), the listing and covers
 * after every change, and its memory never past the bitmap's. Then a unit
 * of interleaved 8-byte pieces (the writer's worst case: a range per piece)
 * held in an eighth of the unit, and a set that only counts.
 */
#include "byteset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, uint64_t a, uint64_t b)
{
    fprintf(stderr, "test_byteset: [%llu,%llu): %s\n", (unsigned long long)a,
            (unsigned long long)b, what);
    return 1;
}

/* The bitmap's memory for `limit` bytes: what the set may hold at most. */
static uint64_t bound(uint64_t limit) { return (limit + 63) / 64 * 8 + 16; }

static int check_against(const fwdioi_byteset_t *set, const unsigned char *have, uint64_t limit)
{
    uint64_t count = 0, runs = 0;
    for (uint64_t i = 0; i < limit; i++) {
        count += have[i];
        runs += have[i] && (i == 0 || !have[i - 1]);
    }
    size_t n = 99;
    fwdioi_range_t *r = fwdioi_byteset_list(set, &n);
    if (n != runs)
        return fail("the number of ranges differs from the oracle", n, runs);
    if (n > 0 && !r)
        return fail("no list", 0, n);
    int rc = 0;
    uint64_t listed = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (r[i].start >= r[i].end || (i > 0 && r[i - 1].end >= r[i].start))
            rc = fail("ranges not sorted, empty or not merged", r[i].start, r[i].end);
        for (uint64_t j = r[i].start; j < r[i].end && !rc; j++)
            if (!have[j])
                rc = fail("a range covers an absent byte", j, j + 1);
        listed += r[i].end - r[i].start;
    }
    free(r);
    if (!rc && listed != count)
        rc = fail("the ranges miss present bytes", listed, count);
    if (!rc && fwdioi_byteset_bytes(set) != count)
        rc = fail("bytes() differs from the oracle", fwdioi_byteset_bytes(set), count);
    if (!rc && fwdioi_byteset_covers(set, limit) != (count == limit))
        rc = fail("covers() is wrong", 0, count);
    if (!rc && fwdioi_byteset_memory(set) > bound(limit))
        rc = fail("the set holds more memory than its bitmap would", fwdioi_byteset_memory(set),
                  bound(limit));
    return rc;
}

/* Random pieces of at most `longest` bytes; returns 0 when all went right,
 * *bitmap whether the set ended as a bitmap. */
static int run_round(unsigned *seed, uint64_t limit, uint64_t longest, int unions, int steps,
                     int *bitmap)
{
    unsigned char *have = calloc(limit, 1);
    fwdioi_byteset_t set = {0};
    int rc = 0;
    for (int step = 0; step < steps && !rc; step++) {
        uint64_t a = (uint64_t)rand_r(seed) % limit;
        uint64_t len = 1 + (uint64_t)rand_r(seed) % longest;
        uint64_t b = a + len > limit ? limit : a + len;
        uint64_t first_present = UINT64_MAX, absent = 0;
        for (uint64_t i = a; i < b; i++) {
            if (have[i] && first_present == UINT64_MAX)
                first_present = i;
            absent += !have[i];
        }
        uint64_t at = 0, added = 0;
        int got = fwdioi_byteset_add(&set, limit, a, b, !unions, &at, &added);
        if (unions || first_present == UINT64_MAX) {
            if (got != FWDIOI_RANGES_OK || added != absent)
                rc = fail("an add added a wrong number of bytes", added, absent);
            memset(have + a, 1, b - a);
        } else if (got != FWDIOI_RANGES_OVERLAP || at != first_present) {
            rc = fail("expected an overlap at the first byte present", at, first_present);
        }
        if (!rc)
            rc = check_against(&set, have, limit);
    }
    *bitmap = fwdioi_byteset_is_bitmap(&set);
    fwdioi_byteset_free(&set);
    if (!rc && fwdioi_byteset_memory(&set) != 0)
        rc = fail("free left memory", 0, fwdioi_byteset_memory(&set));
    free(have);
    return rc;
}

/* 8-byte pieces 32 bytes apart from 4 "ranks" taking turns over a 1 MiB
 * unit: after the first rank the set holds 32768 ranges (2 MiB of tree);
 * it must stay within the bitmap's 128 KiB and end covering the unit. */
static int interleaved(void)
{
    const uint64_t U = (uint64_t)1 << 20;
    fwdioi_byteset_t set = {0};
    uint64_t at, added, most = 0;
    int rc = 0;
    for (uint64_t k = 0; k < 4 && !rc; k++)
        for (uint64_t i = k * 8; i < U && !rc; i += 32) {
            if (fwdioi_byteset_add(&set, U, i, i + 8, 1, &at, &added) != FWDIOI_RANGES_OK)
                rc = fail("an interleaved piece was refused", i, i + 8);
            uint64_t m = fwdioi_byteset_memory(&set);
            most = m > most ? m : most;
            if (!rc && !fwdioi_byteset_covers(&set, U) != !(k == 3 && i + 32 >= U))
                rc = fail("covers() is wrong midway", i, k);
        }
    if (!rc && most > bound(U))
        rc = fail("interleaved pieces took more than the bitmap", most, bound(U));
    size_t n;
    fwdioi_range_t *r = fwdioi_byteset_list(&set, &n);
    if (!rc && (n != 1 || !r || r[0].start != 0 || r[0].end != U))
        rc = fail("the whole unit is not one range", n, U);
    free(r);
    fwdioi_byteset_free(&set);
    return rc;
}

/* A set that gives up its ranges (the tree, then a bitmap) keeps their
 * count, takes no memory, lists nothing, refuses nothing and covers a
 * length once the count reaches it. */
static int counting(void)
{
    const uint64_t U = 4096;
    for (int bitmap = 0; bitmap < 2; bitmap++) {
        fwdioi_byteset_t set = {0};
        uint64_t at, added;
        int n_pieces = bitmap ? 600 : 3; /* 600 ranges: past the bitmap's size */
        for (int i = 0; i < n_pieces; i++)
            fwdioi_byteset_add(&set, U, (uint64_t)i * 6, (uint64_t)i * 6 + 3, 1, &at, &added);
        if (fwdioi_byteset_is_bitmap(&set) != bitmap)
            return fail("the set is not in the form the test wants", (uint64_t)bitmap, 0);
        fwdioi_byteset_count_only(&set);
        size_t n = 9;
        fwdioi_range_t *r = fwdioi_byteset_list(&set, &n);
        if (!fwdioi_byteset_counting(&set) || fwdioi_byteset_memory(&set) != 0 || r || n != 0)
            return fail("a counting set holds memory or lists ranges", 0, n);
        if (fwdioi_byteset_bytes(&set) != (uint64_t)n_pieces * 3)
            return fail("the count lost the bytes before", fwdioi_byteset_bytes(&set), 0);
        /* an overlap is counted, not refused */
        if (fwdioi_byteset_add(&set, U, 0, 3, 1, &at, &added) != FWDIOI_RANGES_OK || added != 3)
            return fail("a counting set refused an add", 0, 3);
        uint64_t before = fwdioi_byteset_bytes(&set);
        if (fwdioi_byteset_covers(&set, U))
            return fail("covers before the count reached the length", before, U);
        fwdioi_byteset_add(&set, U, 0, U - before, 0, &at, &added);
        if (!fwdioi_byteset_covers(&set, U))
            return fail("does not cover once the count reached the length", before, U);
        fwdioi_byteset_free(&set);
        if (fwdioi_byteset_memory(&set) != 0 || fwdioi_byteset_counting(&set))
            return fail("free left a counting set", 0, 0);
    }
    return 0;
}

int main(void)
{
    unsigned seed = 4242;
    /* limit, longest piece, steps: a tree throughout (long pieces, few
     * ranges), a bitmap from the first add (a tiny limit), and a tree that
     * turns into a bitmap midway */
    const struct {
        uint64_t limit, longest;
        int steps;
    } kinds[] = {{1 << 16, 4096, 60}, {100, 10, 80}, {4096, 3, 600}, {1000, 1, 900}};
    int bitmaps[4] = {0};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int round = 0; round < 200; round++) {
            int bitmap = 0;
            if (run_round(&seed, kinds[k].limit, kinds[k].longest, round % 2, kinds[k].steps,
                          &bitmap)) {
                fprintf(stderr, "test_byteset: failed: limit %llu, round %d (%s)\n",
                        (unsigned long long)kinds[k].limit, round,
                        round % 2 ? "unions" : "strict adds");
                return 1;
            }
            bitmaps[k] += bitmap;
        }
    if (bitmaps[0] != 0 || bitmaps[1] != 200 || bitmaps[2] == 0 || bitmaps[3] == 0)
        return fail("the rounds did not exercise both forms", (uint64_t)bitmaps[0],
                    (uint64_t)bitmaps[2]);
    if (interleaved() || counting())
        return 1;
    printf("test_byteset: 800 rounds (tree, bitmap, both) and a unit of interleaved pieces "
           "passed\n");
    return 0;
}
