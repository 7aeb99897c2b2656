/* SPDX-License-Identifier: BSD-3-Clause */
/* Properties of the file plan over many shapes (no MPI needed). */
#include "plan/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
            failures++;                                                            \
            return;                                                                \
        }                                                                          \
    } while (0)

/* The plan with writers at first + w * stride (CkIO's basePE/skipPEs). */
static void check_plan(uint64_t size, uint64_t stripe, uint64_t unit, int writers, int first,
                       int stride, fwdio_layout_t layout, int targets, int nranks)
{
    fwdio_options_t in = {.write_size = unit, .stripe_size = stripe, .writers = writers,
                          .first_writer = first, .writer_stride = stride, .layout = layout,
                          .targets = targets, .placement = FWDIO_PLACEMENT_STRIDE};
    fwdio_options_t o;
    CHECK(fwdioi_options_resolve(&in, nranks, 1, &o, NULL) == FWDIO_OK, "resolve P=%d", nranks);
    int ranks[256];
    int nw = o.writers;
    CHECK(nw >= 1 && nw <= nranks && nw <= 256, "W=%d P=%d", nw, nranks);
    for (int w = 0; w < nw; w++)
        ranks[w] = o.first_writer + w * o.writer_stride;
    fwdioi_plan_t p;
    fwdioi_plan_init(&p, size, &o, nranks, ranks, nw);
    const char *shape = layout == FWDIO_LAYOUT_BLOCK    ? "block"
                        : layout == FWDIO_LAYOUT_CYCLIC ? "cyclic"
                                                        : "targets";
    if (writers > 0 && stride > 0 && first + (writers - 1) * stride < nranks)
        CHECK(p.nwriters == writers, "asked %d writers, got %d", writers, p.nwriters);

    /* writer ranks: distinct, in range, CkIO's basePE + w * skipPEs, invertible */
    for (int w = 0; w < p.nwriters; w++) {
        int r = fwdioi_plan_writer_rank(&p, w);
        CHECK(r >= 0 && r < nranks, "writer %d rank %d", w, r);
        CHECK(fwdioi_plan_writer_of_rank(&p, r) == w, "inverse w=%d", w);
    }
    int writer_count = 0;
    for (int r = 0; r < nranks; r++)
        writer_count += fwdioi_plan_writer_of_rank(&p, r) >= 0;
    CHECK(writer_count == p.nwriters, "%d ranks think they write, %d writers", writer_count,
          p.nwriters);

    /* every stripe exactly one writer; local indices count up per writer */
    uint64_t *seen = calloc((size_t)p.nwriters, sizeof *seen);
    uint64_t total_bytes = 0, min_bytes = UINT64_MAX, max_bytes = 0;
    for (uint64_t s = 0; s < p.nstripes; s++) {
        int w = fwdioi_plan_stripe_writer(&p, s);
        CHECK(w >= 0 && w < p.nwriters, "stripe %llu writer %d", (unsigned long long)s, w);
        CHECK(fwdioi_plan_local_stripe(&p, s) == seen[w], "local index of stripe %llu",
              (unsigned long long)s);
        seen[w]++;
    }
    for (int w = 0; w < p.nwriters; w++) {
        CHECK(seen[w] == fwdioi_plan_writer_stripes(&p, w), "%s: stripe count of writer %d: %llu vs %llu",
              shape, w, (unsigned long long)seen[w],
              (unsigned long long)fwdioi_plan_writer_stripes(&p, w));
        for (uint64_t i = 0; i < seen[w]; i++) {
            uint64_t st = fwdioi_plan_writer_stripe_at(&p, w, i);
            CHECK(st < p.nstripes && fwdioi_plan_stripe_writer(&p, st) == w &&
                      fwdioi_plan_local_stripe(&p, st) == i,
                  "%s: stripe_at(%d, %llu)", shape, w, (unsigned long long)i);
        }
        /* walking next_stripe visits exactly the writer's stripes */
        uint64_t n = 0;
        for (uint64_t s = fwdioi_plan_next_stripe(&p, w, 0); s < p.nstripes;
             s = fwdioi_plan_next_stripe(&p, w, s + 1)) {
            CHECK(fwdioi_plan_stripe_writer(&p, s) == w, "next_stripe gave a foreign stripe");
            n++;
        }
        CHECK(n == seen[w], "next_stripe walk of writer %d", w);
        uint64_t b = fwdioi_plan_writer_bytes(&p, w);
        total_bytes += b;
        if (b < min_bytes)
            min_bytes = b;
        if (b > max_bytes)
            max_bytes = b;
    }
    free(seen);

    /* what a writer accepts: exactly pieces within its own stripes */
    for (uint64_t s = 0; s < p.nstripes && s < 64; s++) {
        int w = fwdioi_plan_stripe_writer(&p, s);
        uint64_t start = s * p.stripe_size;
        uint64_t len = size - start < p.stripe_size ? size - start : p.stripe_size;
        CHECK(fwdioi_plan_owns(&p, w, start, len), "%s: writer %d refuses its stripe %llu",
              shape, w, (unsigned long long)s);
        CHECK(fwdioi_plan_owns(&p, w, start + len / 2, len - len / 2), "%s: part of a stripe",
              shape);
        for (int v = 0; v < p.nwriters; v++)
            CHECK(v == w || !fwdioi_plan_owns(&p, v, start, 1), "%s: writer %d takes stripe "
                  "%llu of writer %d", shape, v, (unsigned long long)s, w);
        if (s + 1 < p.nstripes && fwdioi_plan_stripe_writer(&p, s + 1) != w)
            CHECK(!fwdioi_plan_owns(&p, w, start + len - 1, 2), "%s: a piece across two "
                  "writers' stripes", shape);
    }
    for (int w = 0; w < p.nwriters; w++) {
        CHECK(!fwdioi_plan_owns(&p, w, size, 1), "%s: a byte past the end", shape);
        CHECK(!fwdioi_plan_owns(&p, w, 1, UINT64_MAX), "%s: a length that wraps", shape);
        CHECK(!fwdioi_plan_owns(&p, w, UINT64_MAX, 1), "%s: an offset past the end", shape);
    }
    CHECK(!fwdioi_plan_owns(&p, p.nwriters, 0, 0) && !fwdioi_plan_owns(&p, -1, 0, 0),
          "a writer that does not exist");
    CHECK(total_bytes == size, "bytes per writer add up to %llu, not %llu",
          (unsigned long long)total_bytes, (unsigned long long)size);
    if (layout != FWDIO_LAYOUT_TARGETS) {
        /* balanced within one stripe */
        CHECK(max_bytes - min_bytes <= stripe, "imbalance %llu > stripe %llu",
              (unsigned long long)(max_bytes - min_bytes), (unsigned long long)stripe);
    } else {
        /* each writer touches at most ceil(T/W) targets */
        uint64_t T = (uint64_t)o.targets, W = (uint64_t)p.nwriters;
        uint64_t bound = (T + W - 1) / W;
        for (int w = 0; w < p.nwriters; w++) {
            unsigned char touched[512] = {0};
            uint64_t n = 0;
            for (uint64_t s = fwdioi_plan_next_stripe(&p, w, 0); s < p.nstripes;
                 s = fwdioi_plan_next_stripe(&p, w, s + 1)) {
                uint64_t t = fwdioi_plan_stripe_target(&p, s);
                if (t < 512 && !touched[t]) {
                    touched[t] = 1;
                    n++;
                }
            }
            CHECK(n <= bound, "targets: writer %d touches %llu targets, bound %llu (T=%llu W=%llu)",
                  w, (unsigned long long)n, (unsigned long long)bound, (unsigned long long)T,
                  (unsigned long long)W);
        }
    }

    /* writers_in_range names every writer of the stripes in the range (and
     * exactly them for block and cyclic) */
    for (uint64_t s0 = 0; s0 < p.nstripes && s0 < 40; s0 += 3) {
        for (uint64_t s1 = s0; s1 < p.nstripes && s1 < s0 + 2 * (uint64_t)p.nwriters + 3; s1++) {
            int first_w, count;
            fwdioi_plan_writers_in_range(&p, s0, s1, &first_w, &count);
            char *in_range = calloc((size_t)p.nwriters, 1);
            for (int i = 0; i < count; i++)
                in_range[(first_w + i) % p.nwriters] = 1;
            int ok = 1;
            for (uint64_t s = s0; s <= s1; s++)
                ok &= in_range[fwdioi_plan_stripe_writer(&p, s)];
            int named = 0;
            for (int w = 0; w < p.nwriters; w++)
                named += in_range[w];
            free(in_range);
            int exact = layout == FWDIO_LAYOUT_TARGETS || named == count;
            CHECK(ok && exact, "%s: writers_in_range [%llu,%llu]", shape, (unsigned long long)s0,
                  (unsigned long long)s1);
        }
    }
}

static void check_resolve_errors(void)
{
    fwdio_options_t o;
    /* sizes too small for the budgets are raised, keeping stripe a multiple
     * of the unit (fwdio.h, stripe_size and write_size) */
    static const struct {
        uint64_t stripe, unit, want_stripe, want_unit;
    } clamps[] = {
        {1, 1, 512, 512},                 /* one-byte stripes */
        {16, 0, 512, 512},                /* unit from the stripe */
        {0, 16, 16384, 4096},             /* the default stripe follows the raised unit */
        {0, 3000, 24000, 6000},
        {100, 100, 600, 600},             /* the next multiple of the stripe */
        {4 << 20, 16, 4 << 20, 4096},     /* tiny units in default stripes */
        {4096, 1024, 4096, 4096},         /* the unit may not exceed the stripe */
        {6000, 1000, 6000, 6000},         /* no multiple of 1000 in [4096, 6000) divides */
        {24576, 3072, 24576, 6144},       /* 4096 does not divide; 6144 does */
        {1000003, 1, 1000003, 1},         /* a prime stripe: no unit to raise to */
        {64 << 10, 16 << 10, 64 << 10, 16 << 10}, /* large enough: unchanged */
        {512, 512, 512, 512},
    };
    for (size_t i = 0; i < sizeof clamps / sizeof *clamps; i++) {
        fwdio_options_t in = {.stripe_size = clamps[i].stripe, .write_size = clamps[i].unit};
        CHECK(fwdioi_options_resolve(&in, 4, 1, &o, NULL) == FWDIO_OK &&
                  o.stripe_size == clamps[i].want_stripe && o.write_size == clamps[i].want_unit,
              "stripe %llu unit %llu became %llu/%llu, expected %llu/%llu",
              (unsigned long long)clamps[i].stripe, (unsigned long long)clamps[i].unit,
              (unsigned long long)o.stripe_size, (unsigned long long)o.write_size,
              (unsigned long long)clamps[i].want_stripe, (unsigned long long)clamps[i].want_unit);
        CHECK(o.stripe_size % o.write_size == 0, "stripe a multiple of the unit");
    }
    fwdio_options_t bad_multiple = {.write_size = 3000, .stripe_size = 4000};
    CHECK(fwdioi_options_resolve(&bad_multiple, 4, 1, &o, NULL) == FWDIO_EINVAL,
          "stripe not a multiple of unit");
    fwdio_options_t bad_first = {.first_writer = 4};
    CHECK(fwdioi_options_resolve(&bad_first, 4, 1, &o, NULL) == FWDIO_EINVAL, "first_writer >= P");
    fwdio_options_t bad_writers = {.writers = -1};
    CHECK(fwdioi_options_resolve(&bad_writers, 4, 1, &o, NULL) == FWDIO_EINVAL, "writers < 0");
    fwdio_options_t bad_layout = {.layout = (fwdio_layout_t)7};
    CHECK(fwdioi_options_resolve(&bad_layout, 4, 1, &o, NULL) == FWDIO_EINVAL, "layout");

    /* documented defaults */
    CHECK(fwdioi_options_resolve(NULL, 8, 1, &o, NULL) == FWDIO_OK, "defaults");
    CHECK(o.write_size == FWDIO_DEFAULT_WRITE_SIZE, "default write_size");
    CHECK(o.stripe_size == FWDIO_DEFAULT_STRIPE_UNITS * FWDIO_DEFAULT_WRITE_SIZE, "stripe");
    CHECK(o.writers == FWDIO_DEFAULT_WRITERS_PER_NODE, "writers on one node: %d", o.writers);
    CHECK(o.placement == FWDIO_PLACEMENT_SPREAD, "default placement");
    CHECK(fwdioi_options_resolve(NULL, 4096, 16, &o, NULL) == FWDIO_OK &&
              o.writers == FWDIO_DEFAULT_MAX_WRITERS,
          "2 per node up to the cap: %d", o.writers);
    CHECK(fwdioi_options_resolve(NULL, 4096, 24, &o, NULL) == FWDIO_OK &&
              o.writers == FWDIO_DEFAULT_MAX_WRITERS,
          "the cap below as many nodes: %d", o.writers);
    CHECK(fwdioi_options_resolve(NULL, 4096, 64, &o, NULL) == FWDIO_OK && o.writers == 64,
          "one per node past the cap's nodes: %d", o.writers);
    CHECK(fwdioi_options_resolve(NULL, 40, 40, &o, NULL) == FWDIO_OK && o.writers == 40,
          "one per node, a rank each: %d", o.writers);
    CHECK(fwdioi_options_resolve(NULL, 1, 1, &o, NULL) == FWDIO_OK && o.writers == 1, "one rank");
    /* stride clamps the writer count to the ranks that exist; asking for a
     * first writer or a stride selects the stride placement */
    fwdio_options_t strided = {.writers = 5, .first_writer = 1, .writer_stride = 3};
    CHECK(fwdioi_options_resolve(&strided, 8, 1, &o, NULL) == FWDIO_OK && o.writers == 3 &&
              o.placement == FWDIO_PLACEMENT_STRIDE,
          "clamped to %d", o.writers);
    /* spread: writers per node times nodes */
    fwdio_options_t per_node = {.writers_per_node = 3};
    CHECK(fwdioi_options_resolve(&per_node, 64, 4, &o, NULL) == FWDIO_OK && o.writers == 12,
          "3 per node on 4 nodes: %d", o.writers);
    /* list: the list's length; an empty list is refused */
    int list[3] = {5, 1, 7};
    fwdio_options_t listed = {.placement = FWDIO_PLACEMENT_LIST, .writer_list = list,
                              .writer_list_len = 3};
    CHECK(fwdioi_options_resolve(&listed, 8, 1, &o, NULL) == FWDIO_OK && o.writers == 3, "list");
    listed.writer_list_len = 0;
    CHECK(fwdioi_options_resolve(&listed, 8, 1, &o, NULL) == FWDIO_EINVAL, "empty list");
    /* targets default to the writer count */
    fwdio_options_t tgt = {.layout = FWDIO_LAYOUT_TARGETS, .writers = 4};
    CHECK(fwdioi_options_resolve(&tgt, 8, 1, &o, NULL) == FWDIO_OK && o.targets == 4, "targets");
    fwdio_options_t bad_targets = {.targets = -2};
    CHECK(fwdioi_options_resolve(&bad_targets, 8, 1, &o, NULL) == FWDIO_EINVAL, "targets < 0");
}

/* fwdio_default_writers(nranks, nnodes) is what fwdioi_options_resolve gives
 * for the default options, spread and stride from rank 0. */
static void check_default_like_resolve(int nranks, int nnodes)
{
    fwdio_options_t o, stride = {.placement = FWDIO_PLACEMENT_STRIDE};
    int want = fwdio_default_writers(nranks, nnodes);
    CHECK(fwdioi_options_resolve(NULL, nranks, nnodes, &o, NULL) == FWDIO_OK && o.writers == want,
          "spread P=%d nodes=%d: resolved %d, fwdio_default_writers %d", nranks, nnodes,
          o.writers, want);
    CHECK(fwdioi_options_resolve(&stride, nranks, nnodes, &o, NULL) == FWDIO_OK &&
              o.writers == want,
          "stride P=%d nodes=%d: resolved %d, fwdio_default_writers %d", nranks, nnodes,
          o.writers, want);
}

/* fwdio_default_writers: the documented rule on its edges, refusals, and the
 * count fwdioi_options_resolve gives by default on every shape up to 80
 * ranks and at scale, so tools that use it predict what fwdio_open does. */
static void check_default_writers(void)
{
    static const struct {
        int nranks, nnodes, want;
    } cases[] = {{8, 1, 2},       {1, 1, 1},       {3, 2, 3},         {16, 16, 16},
                 {4096, 16, 32},  {4096, 24, 32},  {4096, 64, 64},    {40, 40, 40},
                 {65536, 33, 33}, {20, 17, 20},    {131072, 1024, 1024}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int got = fwdio_default_writers(cases[i].nranks, cases[i].nnodes);
        CHECK(got == cases[i].want, "P=%d nodes=%d: %d writers, want %d", cases[i].nranks,
              cases[i].nnodes, got, cases[i].want);
    }
    CHECK(fwdio_default_writers(0, 1) == FWDIO_EINVAL, "no ranks");
    CHECK(fwdio_default_writers(4, 0) == FWDIO_EINVAL, "no nodes");
    CHECK(fwdio_default_writers(-3, 2) == FWDIO_EINVAL, "negative ranks");
    for (int nranks = 1; nranks <= 80; nranks++)
        for (int nnodes = 1; nnodes <= nranks; nnodes++)
            check_default_like_resolve(nranks, nnodes);
    const int big_nodes[] = {1, 15, 16, 17, 31, 32, 33, 64, 1000};
    for (size_t k = 0; k < sizeof big_nodes / sizeof *big_nodes; k++) {
        check_default_like_resolve(4096, big_nodes[k]);
        check_default_like_resolve(131072, big_nodes[k]);
    }
}

int main(void)
{
    const uint64_t K = 1024;
    const uint64_t sizes[] = {0, 1, 1000, 16 * K, 64 * K, 64 * K + 1, 1000 * K, 3 * 1024 * K + 17};
    const int ranks[] = {1, 2, 3, 4, 7, 8, 16, 64};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t ri = 0; ri < sizeof ranks / sizeof *ranks; ri++)
            for (int layout = 0; layout < 3; layout++)
                for (int writers = 0; writers <= ranks[ri] + 1; writers += 1 + writers / 3)
                    for (int stride = 0; stride <= 3; stride++)
                        for (int first = 0; first < ranks[ri] && first < 3; first++)
                            for (int targets = 0; targets <= (layout == 2 ? 13 : 0);
                                 targets += 1 + targets / 2)
                                check_plan(sizes[si], 64 * K, 16 * K, writers, first, stride,
                                           (fwdio_layout_t)layout, targets, ranks[ri]);
    check_resolve_errors();
    check_default_writers();
    if (failures) {
        fprintf(stderr, "test_plan: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_plan: all checks passed\n");
    return 0;
}
