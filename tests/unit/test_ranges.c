/* The byte-range set against a bitmap oracle, with random inserts. */
#include "ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 512, ROUNDS = 2000 };

static int run_round(unsigned *seed)
{
    unsigned char have[LEN] = {0};
    fwdioi_ranges_t set = {0};
    int rc = 0;
    for (int step = 0; step < 200 && !rc; step++) {
        uint64_t a = (uint64_t)(rand_r(seed) % LEN);
        uint64_t len = 1 + (uint64_t)(rand_r(seed) % 40);
        uint64_t b = a + len > LEN ? LEN : a + len;
        uint64_t first_present = UINT64_MAX;
        for (uint64_t i = a; i < b; i++)
            if (have[i]) {
                first_present = i;
                break;
            }
        uint64_t at = 0;
        int got = fwdioi_ranges_add(&set, a, b, &at);
        if (first_present != UINT64_MAX) {
            if (got != FWDIOI_RANGES_OVERLAP || at != first_present) {
                fprintf(stderr, "[%llu,%llu): expected overlap at %llu, got rc %d at %llu\n",
                        (unsigned long long)a, (unsigned long long)b,
                        (unsigned long long)first_present, got, (unsigned long long)at);
                rc = 1;
            }
            continue;
        }
        if (got != FWDIOI_RANGES_OK) {
            fprintf(stderr, "[%llu,%llu): unexpected rc %d\n", (unsigned long long)a,
                    (unsigned long long)b, got);
            rc = 1;
            continue;
        }
        memset(have + a, 1, b - a);
        /* the set is sorted, disjoint, merged, and equals the oracle */
        uint64_t count = 0;
        for (uint64_t i = 0; i < LEN; i++)
            count += have[i];
        if (fwdioi_ranges_bytes(&set) != count) {
            fprintf(stderr, "bytes %llu != %llu\n", (unsigned long long)fwdioi_ranges_bytes(&set),
                    (unsigned long long)count);
            rc = 1;
        }
        for (size_t i = 0; i < set.n && !rc; i++) {
            if (set.r[i].start >= set.r[i].end || (i > 0 && set.r[i - 1].end >= set.r[i].start)) {
                fprintf(stderr, "ranges not sorted/merged at %zu\n", i);
                rc = 1;
            }
            for (uint64_t j = set.r[i].start; j < set.r[i].end && !rc; j++)
                if (!have[j]) {
                    fprintf(stderr, "range covers absent byte %llu\n", (unsigned long long)j);
                    rc = 1;
                }
        }
        if (fwdioi_ranges_covers(&set, LEN) != (count == LEN)) {
            fprintf(stderr, "covers() wrong with %llu bytes\n", (unsigned long long)count);
            rc = 1;
        }
    }
    fwdioi_ranges_free(&set);
    return rc;
}

int main(void)
{
    unsigned seed = 12345;
    for (int round = 0; round < ROUNDS; round++)
        if (run_round(&seed)) {
            fprintf(stderr, "test_ranges: failed in round %d\n", round);
            return 1;
        }
    printf("test_ranges: %d rounds passed\n", ROUNDS);
    return 0;
}
