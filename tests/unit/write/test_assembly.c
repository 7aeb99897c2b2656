/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer-side assembly against an in-memory file: every writer of a plan gets
 * its bytes in random pieces and random order, with holes; what the flushes
 * deliver must equal the source bytes exactly, holes untouched, and a second
 * copy of any byte must be reported as an overlap. The bookkeeping reported
 * through the meta hook must add up to what the assembly says it holds, and
 * come back to zero when it is freed.
 *
 * Then cases one by one: overlaps with complete and flushed units, arrival in
 * reverse order, flush_fullest and flush_partial choosing the right units,
 * bytes that are not the writer's, and one-byte units over a large file,
 * whose bookkeeping must stay a small fraction of a unit table.
 */
#include "write/assembly.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct image {
    uint8_t *bytes;   /* what flushes wrote */
    uint8_t *written; /* how often each byte was written */
    uint64_t size;
    int bad;
    uint64_t budget;   /* buffer bytes the assembly may hold */
    uint64_t reserved; /* buffer bytes it holds now */
    uint64_t peak;
    int64_t meta;      /* bookkeeping bytes, as the meta hook told */
    int64_t meta_peak;
    int meta_negative; /* the sum of deltas went below zero */
} image_t;

static void write_extents(image_t *img, const uint8_t *buf, uint64_t offset,
                          const fwdioi_range_t *ext, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (uint64_t j = ext[i].start; j < ext[i].end; j++) {
            if (offset + j >= img->size) {
                img->bad = 1;
                continue;
            }
            img->bytes[offset + j] = buf[j];
            img->written[offset + j]++;
        }
}

static void flush_to_image(void *arg, uint8_t *buf, uint64_t size, uint64_t offset,
                           fwdioi_range_t *ext, size_t n)
{
    image_t *img = arg;
    write_extents(img, buf, offset, ext, n);
    img->reserved -= size;
    free(buf);
    free(ext);
}

static int reserve(void *arg, uint64_t bytes)
{
    image_t *img = arg;
    if (img->reserved + bytes > img->budget)
        return 0;
    img->reserved += bytes;
    if (img->reserved > img->peak)
        img->peak = img->reserved;
    return 1;
}

static void unreserve(void *arg, uint64_t bytes)
{
    ((image_t *)arg)->reserved -= bytes;
}

static void direct_to_image(void *arg, const uint8_t *data, uint64_t offset, uint64_t len)
{
    fwdioi_range_t ext = {0, len};
    write_extents(arg, data, offset, &ext, 1);
}

static void meta_to_image(void *arg, int64_t delta)
{
    image_t *img = arg;
    img->meta += delta;
    if (img->meta < 0)
        img->meta_negative = 1;
    if (img->meta > img->meta_peak)
        img->meta_peak = img->meta;
}

static fwdioi_assembly_hooks_t image_hooks(image_t *img)
{
    return (fwdioi_assembly_hooks_t){.flush = flush_to_image,
                                     .direct = direct_to_image,
                                     .reserve = reserve,
                                     .unreserve = unreserve,
                                     .meta = meta_to_image,
                                     .arg = img};
}

typedef struct piece {
    uint64_t off, len;
} piece_t;

/* budget: buffer bytes each writer's assembly may hold (UINT64_MAX: no limit);
 * flush_every: flush the fullest partial unit after every n-th piece (0: never) */
static int run_case(uint64_t size, uint64_t stripe, uint64_t unit, int writers,
                    fwdio_layout_t layout, uint64_t budget, int flush_every, unsigned seed)
{
    fwdio_options_t in = {.write_size = unit, .stripe_size = stripe, .writers = writers,
                          .layout = layout, .targets = layout == FWDIO_LAYOUT_TARGETS ? 3 : 0};
    fwdio_options_t o;
    if (fwdioi_options_resolve(&in, writers, 1, &o, NULL) != FWDIO_OK)
        return 1;
    int ranks[16];
    for (int w = 0; w < o.writers; w++)
        ranks[w] = w;
    fwdioi_plan_t plan;
    fwdioi_plan_init(&plan, size, &o, writers, ranks, o.writers);

    uint8_t *src = malloc(size + 1);
    uint8_t *hole = calloc(size + 1, 1);
    for (uint64_t i = 0; i < size; i++)
        src[i] = (uint8_t)(i * 131 + 7);
    /* cut the file into random pieces that never cross into another writer's
     * stripe (as routing does); drop some */
    piece_t *pieces = malloc((size + 1) * sizeof *pieces);
    size_t np = 0;
    for (uint64_t off = 0; off < size;) {
        uint64_t s = off / stripe;
        int owner = fwdioi_plan_stripe_writer(&plan, s);
        while (s + 1 < plan.nstripes && fwdioi_plan_stripe_writer(&plan, s + 1) == owner)
            s++;
        uint64_t stripe_end = (s + 1) * stripe;
        uint64_t longest = rand_r(&seed) % 4 == 0 ? 5 * unit : unit + unit / 2;
        uint64_t len = 1 + (uint64_t)rand_r(&seed) % longest;
        if (off + len > stripe_end)
            len = stripe_end - off;
        if (off + len > size)
            len = size - off;
        if (rand_r(&seed) % 9 == 0)
            memset(hole + off, 1, len);
        else
            pieces[np++] = (piece_t){off, len};
        off += len;
    }
    for (size_t i = np; i > 1; i--) { /* shuffle */
        size_t j = (size_t)rand_r(&seed) % i;
        piece_t t = pieces[i - 1];
        pieces[i - 1] = pieces[j];
        pieces[j] = t;
    }

    image_t img = {calloc(size + 1, 1), calloc(size + 1, 1), size, 0, budget, 0, 0, 0, 0, 0};
    fwdioi_assembly_hooks_t hooks = image_hooks(&img);
    int rc = 0;
    fwdioi_assembly_t *asm_ = calloc((size_t)plan.nwriters, sizeof *asm_);
    for (int w = 0; w < plan.nwriters; w++)
        fwdioi_assembly_init(&asm_[w], &plan, w, &hooks);
    for (size_t i = 0; i < np && !rc; i++) {
        int w = fwdioi_plan_stripe_writer(&plan, pieces[i].off / stripe);
        uint64_t bad;
        if (fwdioi_assembly_add(&asm_[w], pieces[i].off, src + pieces[i].off, pieces[i].len,
                                &bad) != FWDIO_OK) {
            fprintf(stderr, "add [%llu,+%llu) failed\n", (unsigned long long)pieces[i].off,
                    (unsigned long long)pieces[i].len);
            rc = 1;
        }
        if (flush_every && i % (size_t)flush_every == 0) {
            uint64_t pending;
            fwdioi_assembly_flush_fullest(&asm_[w], &pending);
        }
        if (img.reserved > budget) {
            fprintf(stderr, "holds %llu buffer bytes, budget %llu\n",
                    (unsigned long long)img.reserved, (unsigned long long)budget);
            rc = 1;
        }
    }
    /* a byte sent twice is an overlap, before and after its unit was flushed */
    if (!rc && np > 0) {
        piece_t p = pieces[np / 2];
        int w = fwdioi_plan_stripe_writer(&plan, p.off / stripe);
        uint64_t bad = 0;
        if (fwdioi_assembly_add(&asm_[w], p.off, src + p.off, 1, &bad) != FWDIO_EOVERLAP ||
            bad != p.off) {
            fprintf(stderr, "second copy of byte %llu not reported\n", (unsigned long long)p.off);
            rc = 1;
        }
    }
    int64_t meta_sum = 0;
    for (int w = 0; w < plan.nwriters; w++)
        meta_sum += (int64_t)fwdioi_assembly_meta_bytes(&asm_[w]);
    if (meta_sum != img.meta) {
        fprintf(stderr, "assemblies hold %lld bookkeeping bytes, the hook was told %lld\n",
                (long long)meta_sum, (long long)img.meta);
        rc = 1;
    }
    for (int w = 0; w < plan.nwriters; w++) {
        fwdioi_assembly_flush_partial(&asm_[w]);
        fwdioi_assembly_free(&asm_[w]);
    }
    if (img.meta != 0 || img.meta_negative) {
        fprintf(stderr, "bookkeeping after free: %lld bytes%s\n", (long long)img.meta,
                img.meta_negative ? " (went below zero)" : "");
        rc = 1;
    }
    if (img.reserved != 0) {
        fprintf(stderr, "%llu buffer bytes never given back\n", (unsigned long long)img.reserved);
        rc = 1;
    }
    for (uint64_t i = 0; i < size && !rc; i++) {
        int want = hole[i] ? 0 : 1;
        if (img.written[i] != want || (want && img.bytes[i] != src[i])) {
            fprintf(stderr, "byte %llu written %d times (want %d)\n", (unsigned long long)i,
                    img.written[i], want);
            rc = 1;
        }
    }
    if (img.bad) {
        fprintf(stderr, "a flush went past the end of the file\n");
        rc = 1;
    }
    free(asm_);
    free(img.bytes);
    free(img.written);
    free(pieces);
    free(hole);
    free(src);
    return rc;
}

/* Hooks that only count the bytes written (for files too large to image). */
static uint64_t counted_bytes;

static void flush_counted(void *arg, uint8_t *buf, uint64_t size, uint64_t offset,
                          fwdioi_range_t *ext, size_t n)
{
    (void)offset;
    for (size_t i = 0; i < n; i++)
        counted_bytes += ext[i].end - ext[i].start;
    ((image_t *)arg)->reserved -= size;
    free(buf);
    free(ext);
}

static void direct_counted(void *arg, const uint8_t *data, uint64_t offset, uint64_t len)
{
    (void)arg;
    (void)data;
    (void)offset;
    counted_bytes += len;
}

/* ---- cases one by one ---- */

#define EXPECT(cond, ...)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "test_assembly: %s:%d: ", __func__, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static int failures;
static int g_ranks[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* A plan of `writers` writers with exactly these sizes: the assembly must
 * take any plan, also sizes that fwdioi_options_resolve would raise. */
static void make_plan(fwdioi_plan_t *plan, uint64_t size, uint64_t stripe, uint64_t unit,
                      int writers, fwdio_layout_t layout)
{
    fwdio_options_t o = {.write_size = unit, .stripe_size = stripe, .writers = writers,
                         .layout = layout};
    fwdioi_plan_init(plan, size, &o, writers, g_ranks, writers);
}

static image_t new_image(uint64_t size, uint64_t budget)
{
    image_t img = {calloc(size + 1, 1), calloc(size + 1, 1), size, 0, budget, 0, 0, 0, 0, 0};
    return img;
}

static void free_image(image_t *img)
{
    free(img->bytes);
    free(img->written);
}

/* Bytes [off, off + len) of the file were each written once, with src's values. */
static int image_has(const image_t *img, const uint8_t *src, uint64_t off, uint64_t len)
{
    for (uint64_t i = off; i < off + len; i++)
        if (img->written[i] != 1 || img->bytes[i] != src[i])
            return 0;
    return 1;
}

static uint8_t *source(uint64_t size)
{
    uint8_t *src = malloc(size);
    for (uint64_t i = 0; i < size; i++)
        src[i] = (uint8_t)(i * 131 + 7);
    return src;
}

static int add(fwdioi_assembly_t *a, const uint8_t *src, uint64_t off, uint64_t len,
               uint64_t *bad)
{
    *bad = UINT64_MAX;
    return fwdioi_assembly_add(a, off, src + off, len, bad);
}

/* Overlaps with units that are complete (written whole, assembled from
 * pieces, or written direct), with flushed partial units, and a piece that is
 * taken in part before it meets a complete unit. */
static void case_overlaps(void)
{
    const uint64_t U = 4096, size = 16 * U;
    fwdioi_plan_t plan;
    make_plan(&plan, size, 4 * U, U, 1, FWDIO_LAYOUT_BLOCK);
    uint8_t *src = source(size);
    image_t img = new_image(size, UINT64_MAX);
    fwdioi_assembly_hooks_t hooks = image_hooks(&img);
    fwdioi_assembly_t a;
    fwdioi_assembly_init(&a, &plan, 0, &hooks);
    uint64_t bad;
    EXPECT(add(&a, src, 0, U, &bad) == FWDIO_OK, "unit 0 whole");
    EXPECT(add(&a, src, U + 100, U - 100, &bad) == FWDIO_OK, "unit 1 tail");
    EXPECT(fwdioi_assembly_units_in_progress(&a) == 1, "unit 1 in progress");
    EXPECT(add(&a, src, U, 100, &bad) == FWDIO_OK, "unit 1 head");
    EXPECT(fwdioi_assembly_units_in_progress(&a) == 0, "unit 1 complete");
    EXPECT(add(&a, src, 17, 1, &bad) == FWDIO_EOVERLAP && bad == 17, "byte of whole unit 0: %llu",
           (unsigned long long)bad);
    EXPECT(add(&a, src, U + 4000, 10, &bad) == FWDIO_EOVERLAP && bad == U + 4000,
           "bytes of assembled unit 1");
    EXPECT(add(&a, src, U - 5, 10, &bad) == FWDIO_EOVERLAP && bad == U - 5,
           "piece over units 0 and 1");
    /* unit 2 partly, unit 3 untouched, unit 4 partly: a piece from the middle
     * of 3 into 4 overlaps where 4's bytes are */
    EXPECT(add(&a, src, 2 * U + 10, 20, &bad) == FWDIO_OK, "unit 2 piece");
    EXPECT(add(&a, src, 4 * U + 50, 50, &bad) == FWDIO_OK, "unit 4 piece");
    EXPECT(add(&a, src, 3 * U + 10, U + 60, &bad) == FWDIO_EOVERLAP && bad == 4 * U + 50,
           "piece from unit 3 into unit 4: %llu", (unsigned long long)bad);
    /* a partial unit flushed to storage still knows its bytes */
    uint64_t pending;
    while (fwdioi_assembly_flush_fullest(&a, &pending) > 0)
        ;
    EXPECT(image_has(&img, src, 3 * U + 10, U - 10), "the part in unit 3 was taken");
    EXPECT(add(&a, src, 2 * U + 29, 2, &bad) == FWDIO_EOVERLAP && bad == 2 * U + 29,
           "flushed unit 2");
    EXPECT(add(&a, src, 2 * U + 30, 5, &bad) == FWDIO_OK, "next to flushed bytes");
    /* whole units after a complete one: unit 5 and 6 whole, then 6 again */
    EXPECT(add(&a, src, 5 * U, 2 * U, &bad) == FWDIO_OK, "units 5-6 whole");
    EXPECT(add(&a, src, 6 * U, 2 * U, &bad) == FWDIO_EOVERLAP && bad == 6 * U, "units 6-7");
    EXPECT(add(&a, src, 7 * U, U, &bad) == FWDIO_OK, "unit 7 after the refused piece");
    fwdioi_assembly_flush_partial(&a);
    fwdioi_assembly_free(&a);
    EXPECT(img.reserved == 0 && img.meta == 0 && !img.meta_negative && !img.bad,
           "reserved %llu, meta %lld", (unsigned long long)img.reserved, (long long)img.meta);
    EXPECT(image_has(&img, src, 0, 3 * U) == 0, "unit 2 has holes");
    EXPECT(image_has(&img, src, 0, 2 * U) && image_has(&img, src, 5 * U, 3 * U),
           "units 0, 1, 5-7 written once");
    free_image(&img);
    free(src);
}

/* A file that allows overlaps (options.overlaps): three "ranks" write
 * random pieces of their own bytes, overlapping each other and themselves,
 * over a file of a few units, with budgets from none to plenty and forced
 * partial flushes. Nothing is refused; afterwards every byte some piece
 * covered holds the bytes of one of the ranks that wrote it (the one rank,
 * where only one did), no other byte was written, and the bookkeeping is
 * back to zero. */
static void case_overlaps_allowed(void)
{
    const uint64_t U = 1024, size = 9 * U + 100;
    const uint64_t budgets[] = {UINT64_MAX, 2 * U, 0};
    unsigned seed = 99;
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++)
        for (int round = 0; round < 40; round++) {
            fwdioi_plan_t plan;
            make_plan(&plan, size, 2 * U, U, 2, FWDIO_LAYOUT_CYCLIC);
            uint8_t *src[3];
            for (int r = 0; r < 3; r++) {
                src[r] = malloc(size);
                for (uint64_t i = 0; i < size; i++)
                    src[r][i] = (uint8_t)(i * 7 + 50 * r + 1);
            }
            uint8_t *who = calloc(size, 1); /* bit r: rank r wrote the byte */
            image_t img = new_image(size, budgets[b]);
            fwdioi_assembly_hooks_t hooks = image_hooks(&img);
            fwdioi_assembly_t a[2];
            for (int w = 0; w < 2; w++) {
                fwdioi_assembly_init(&a[w], &plan, w, &hooks);
                a[w].overlaps = 1;
            }
            for (int k = 0; k < 60; k++) {
                int r = rand_r(&seed) % 3;
                uint64_t off = (uint64_t)rand_r(&seed) % size;
                uint64_t len = 1 + (uint64_t)rand_r(&seed) % (k % 5 == 0 ? 3 * U : 200);
                len = off + len > size ? size - off : len;
                /* cut at stripes, as routing does */
                for (uint64_t at = off; at < off + len;) {
                    uint64_t stripe_end = (at / plan.stripe_size + 1) * plan.stripe_size;
                    uint64_t end = stripe_end < off + len ? stripe_end : off + len;
                    int w = fwdioi_plan_stripe_writer(&plan, at / plan.stripe_size);
                    uint64_t bad = UINT64_MAX;
                    EXPECT(fwdioi_assembly_add(&a[w], at, src[r] + at, end - at, &bad) ==
                               FWDIO_OK,
                           "overlaps allowed: piece [%llu, %llu) refused at %llu",
                           (unsigned long long)at, (unsigned long long)end,
                           (unsigned long long)bad);
                    for (uint64_t i = at; i < end; i++)
                        who[i] |= (uint8_t)(1u << r);
                    at = end;
                }
                if (k % 7 == 6) {
                    uint64_t pending;
                    fwdioi_assembly_flush_fullest(&a[k % 2], &pending);
                }
            }
            for (int w = 0; w < 2; w++) {
                fwdioi_assembly_flush_partial(&a[w]);
                fwdioi_assembly_free(&a[w]);
            }
            EXPECT(img.reserved == 0 && img.meta == 0 && !img.meta_negative && !img.bad,
                   "overlaps allowed: reserved %llu, meta %lld",
                   (unsigned long long)img.reserved, (long long)img.meta);
            for (uint64_t i = 0; i < size; i++) {
                int ok = who[i] == 0 ? img.written[i] == 0 : img.written[i] > 0;
                int one_of = 0;
                for (int r = 0; r < 3; r++)
                    one_of |= (who[i] >> r & 1) && img.bytes[i] == src[r][i];
                if (!ok || (who[i] && !one_of)) {
                    EXPECT(0, "overlaps allowed: byte %llu written %d times holds %u (writers "
                              "0x%x)",
                           (unsigned long long)i, img.written[i], img.bytes[i], who[i]);
                    break;
                }
            }
            free_image(&img);
            free(who);
            for (int r = 0; r < 3; r++)
                free(src[r]);
        }
}

/* 8-byte pieces of 4 "ranks" interleaved over 8 units of 1 MiB (HDF5's
 * column writes), rank by rank, where pieces may overlap and the budget
 * holds 2 unit buffers: the units without a buffer write their pieces
 * direct and keep no record of them (fwdioi_unit_t), so the bookkeeping
 * stays near the two buffered units' records (a bitmap of each unit's
 * bytes for what arrived and what is buffered) instead of growing with the
 * units in progress; every byte lands once, and every unit completes. */
static void case_interleaved_overlaps(void)
{
    const uint64_t U = 1 << 20, size = 8 * U;
    fwdioi_plan_t plan;
    make_plan(&plan, size, U, U, 1, FWDIO_LAYOUT_CYCLIC);
    uint8_t *src = source(size);
    image_t img = new_image(size, 2 * U);
    fwdioi_assembly_hooks_t hooks = image_hooks(&img);
    fwdioi_assembly_t a;
    fwdioi_assembly_init(&a, &plan, 0, &hooks);
    a.overlaps = 1;
    uint64_t bad;
    for (uint64_t r = 0; r < 4; r++)
        for (uint64_t off = r * 8; off < size; off += 32)
            if (add(&a, src, off, 8, &bad) != FWDIO_OK) {
                EXPECT(0, "interleaved piece at %llu refused", (unsigned long long)off);
                r = 4;
                break;
            }
    EXPECT(fwdioi_assembly_units_in_progress(&a) == 0, "%zu units still in progress",
           fwdioi_assembly_units_in_progress(&a));
    const int64_t records = 2 * 2 * (int64_t)(U / 8 + 64); /* two buffered units' */
    EXPECT(img.meta_peak <= records + 65536, "bookkeeping peaked at %lld bytes (records of the "
           "buffered units: %lld)", (long long)img.meta_peak, (long long)records);
    EXPECT(fwdioi_assembly_flush_partial(&a) == 0, "nothing partial left");
    fwdioi_assembly_free(&a);
    EXPECT(image_has(&img, src, 0, size), "every byte once");
    EXPECT(img.reserved == 0 && img.meta == 0, "reserved %llu, meta %lld",
           (unsigned long long)img.reserved, (long long)img.meta);
    free_image(&img);
    free(src);
}

/* Pieces of 77 bytes (cut at stripe boundaries, as routing does) arrive last
 * first: walking down the file, one unit is in progress at a time, and every
 * unit completes. */
static void case_reverse_order(void)
{
    const uint64_t U = 1000, size = 50 * U + 333; /* a short last unit */
    fwdioi_plan_t plan;
    make_plan(&plan, size, 5 * U, U, 2, FWDIO_LAYOUT_CYCLIC);
    uint8_t *src = source(size);
    image_t img = new_image(size, 3 * U);
    fwdioi_assembly_hooks_t hooks = image_hooks(&img);
    fwdioi_assembly_t a[2];
    fwdioi_assembly_init(&a[0], &plan, 0, &hooks);
    fwdioi_assembly_init(&a[1], &plan, 1, &hooks);
    piece_t *pieces = malloc(size * sizeof *pieces);
    size_t n = 0;
    for (uint64_t off = 0; off < size;) {
        uint64_t stripe_end = (off / plan.stripe_size + 1) * plan.stripe_size;
        uint64_t end = off + 77 < stripe_end ? off + 77 : stripe_end;
        end = end < size ? end : size;
        pieces[n++] = (piece_t){off, end - off};
        off = end;
    }
    size_t most = 0;
    uint64_t bad;
    for (size_t i = n; i-- > 0;) {
        int w = fwdioi_plan_stripe_writer(&plan, pieces[i].off / plan.stripe_size);
        EXPECT(add(&a[w], src, pieces[i].off, pieces[i].len, &bad) == FWDIO_OK, "piece at %llu",
               (unsigned long long)pieces[i].off);
        size_t k = fwdioi_assembly_units_in_progress(&a[0]) +
                   fwdioi_assembly_units_in_progress(&a[1]);
        most = k > most ? k : most;
    }
    EXPECT(most == 1, "%zu units in progress at once", most);
    EXPECT(fwdioi_assembly_units_in_progress(&a[0]) == 0 &&
               fwdioi_assembly_units_in_progress(&a[1]) == 0,
           "every unit complete");
    EXPECT(image_has(&img, src, 0, size), "every byte once");
    for (int w = 0; w < 2; w++) {
        EXPECT(fwdioi_assembly_flush_partial(&a[w]) == 0, "nothing partial left");
        fwdioi_assembly_free(&a[w]);
    }
    EXPECT(img.reserved == 0 && img.meta == 0, "reserved %llu, meta %lld",
           (unsigned long long)img.reserved, (long long)img.meta);
    free(pieces);
    free_image(&img);
    free(src);
}

/* flush_fullest picks the unit with the most pending bytes; flush_partial
 * flushes every buffered unit and returns how many. */
static void case_flush_choice(void)
{
    const uint64_t U = 4096, size = 8 * U;
    fwdioi_plan_t plan;
    make_plan(&plan, size, 8 * U, U, 1, FWDIO_LAYOUT_BLOCK);
    uint8_t *src = source(size);
    image_t img = new_image(size, UINT64_MAX);
    fwdioi_assembly_hooks_t hooks = image_hooks(&img);
    fwdioi_assembly_t a;
    fwdioi_assembly_init(&a, &plan, 0, &hooks);
    uint64_t bad, pending;
    EXPECT(fwdioi_assembly_fullest_pending(&a) == 0, "empty: nothing to flush");
    EXPECT(fwdioi_assembly_flush_fullest(&a, &pending) == 0 && pending == 0, "empty flush");
    add(&a, src, 1 * U + 10, 100, &bad);
    add(&a, src, 3 * U + 10, 300, &bad);
    add(&a, src, 3 * U + 1000, 50, &bad); /* unit 3: two extents, 350 bytes */
    add(&a, src, 6 * U + 10, 200, &bad);
    EXPECT(fwdioi_assembly_fullest_pending(&a) == 350, "fullest %llu",
           (unsigned long long)fwdioi_assembly_fullest_pending(&a));
    EXPECT(img.reserved == 3 * U, "three buffers reserved");
    EXPECT(fwdioi_assembly_flush_fullest(&a, &pending) == U && pending == 350, "flush unit 3");
    EXPECT(image_has(&img, src, 3 * U + 10, 300) && image_has(&img, src, 3 * U + 1000, 50) &&
               img.written[1 * U + 10] == 0 && img.written[6 * U + 10] == 0,
           "unit 3's extents, and only those, written");
    EXPECT(img.reserved == 2 * U, "unit 3's buffer given back");
    EXPECT(fwdioi_assembly_fullest_pending(&a) == 200, "next fullest is unit 6");
    /* unit 3 takes new bytes into a new buffer and completes later */
    add(&a, src, 3 * U + 310, 10, &bad);
    EXPECT(fwdioi_assembly_flush_partial(&a) == 3, "units 1, 3 and 6 flushed");
    EXPECT(img.reserved == 0 && fwdioi_assembly_fullest_pending(&a) == 0, "all given back");
    EXPECT(fwdioi_assembly_units_in_progress(&a) == 3, "still in progress after the flush");
    add(&a, src, 3 * U, 10, &bad);
    add(&a, src, 3 * U + 320, 1000 - 320, &bad);
    EXPECT(add(&a, src, 3 * U + 1050, U - 1050, &bad) == FWDIO_OK, "unit 3's last piece");
    EXPECT(fwdioi_assembly_units_in_progress(&a) == 2, "unit 3 complete");
    EXPECT(image_has(&img, src, 3 * U, U), "unit 3 written once");
    EXPECT(fwdioi_assembly_flush_partial(&a) == 0, "nothing buffered");
    fwdioi_assembly_free(&a);
    EXPECT(img.meta == 0 && img.reserved == 0, "freed");
    free_image(&img);
    free(src);
}

/* Bytes outside the file or the writer's stripes are refused, untouched. */
static void case_not_mine(void)
{
    const uint64_t U = 4096, size = 16 * U + 5;
    fwdioi_plan_t plan;
    make_plan(&plan, size, 2 * U, U, 3, FWDIO_LAYOUT_CYCLIC);
    uint8_t *src = source(size + U);
    image_t img = new_image(size + U, UINT64_MAX);
    fwdioi_assembly_hooks_t hooks = image_hooks(&img);
    fwdioi_assembly_t a;
    fwdioi_assembly_init(&a, &plan, 1, &hooks); /* stripes 1, 4, 7 */
    uint64_t bad;
    EXPECT(add(&a, src, 0, 10, &bad) == FWDIO_EINVAL && bad == 0, "writer 0's stripe");
    EXPECT(add(&a, src, 2 * U - 1, 2, &bad) == FWDIO_EINVAL, "from writer 0's stripe into ours");
    EXPECT(add(&a, src, 4 * U - 1, 2, &bad) == FWDIO_EINVAL, "from ours into writer 2's");
    EXPECT(add(&a, src, 2 * U, 2 * U + 1, &bad) == FWDIO_EINVAL, "across two stripes");
    fwdioi_assembly_t last;
    fwdioi_assembly_init(&last, &plan, 2, &hooks); /* stripes 2, 5, 8 (short) */
    EXPECT(add(&last, src, 16 * U, 6, &bad) == FWDIO_EINVAL, "past the end");
    EXPECT(add(&last, src, size, 1, &bad) == FWDIO_EINVAL, "at the end");
    EXPECT(add(&last, src, UINT64_MAX - 2, 2, &bad) == FWDIO_EINVAL, "near 2^64");
    EXPECT(add(&last, src, 16 * U, 5, &bad) == FWDIO_OK, "the short last unit");
    for (uint64_t i = 0; i < size + U; i++)
        EXPECT(img.written[i] == (i >= 16 * U && i < size), "byte %llu written %d times",
               (unsigned long long)i, img.written[i]);
    fwdioi_assembly_free(&a);
    fwdioi_assembly_free(&last);
    EXPECT(img.meta == 0, "freed");
    free_image(&img);
    free(src);
}

/* One-byte units over 256 MiB: a unit table would take 64 bytes a unit
 * (16 GiB); the bitmap pages and the units in progress take far less. Pieces of random length in random order,
 * written straight through; a second writer with 16-byte units gets pieces
 * that leave units in progress. */
static void case_tiny_units(void)
{
    const uint64_t size = (uint64_t)256 << 20;
    unsigned seed = 99;
    for (uint64_t unit = 1; unit <= 16; unit += 15) {
        fwdioi_plan_t plan;
        make_plan(&plan, size, unit, unit, 1, FWDIO_LAYOUT_BLOCK);
        image_t img = {NULL, NULL, 0, 0, 1 << 20, 0, 0, 0, 0, 0};
        fwdioi_assembly_hooks_t hooks = image_hooks(&img);
        hooks.flush = NULL; /* set below: nothing is kept, only counted */
        fwdioi_assembly_t a;
        /* pieces: cut the file at random points, then shuffle */
        size_t n = 0, cap = 1 << 14;
        piece_t *pieces = malloc(cap * sizeof *pieces);
        for (uint64_t off = 0; off < size;) {
            uint64_t len = 1 + (uint64_t)rand_r(&seed) % (64 << 10);
            len = len < size - off ? len : size - off;
            if (n == cap)
                pieces = realloc(pieces, (cap *= 2) * sizeof *pieces);
            pieces[n++] = (piece_t){off, len};
            off += len;
        }
        for (size_t i = n; i > 1; i--) {
            size_t j = (size_t)rand_r(&seed) % i;
            piece_t t = pieces[i - 1];
            pieces[i - 1] = pieces[j];
            pieces[j] = t;
        }
        uint8_t *zeros = calloc(64 << 10, 1);
        hooks.flush = flush_counted;
        hooks.direct = direct_counted;
        counted_bytes = 0;
        fwdioi_assembly_init(&a, &plan, 0, &hooks);
        uint64_t bad;
        for (size_t i = 0; i < n; i++)
            EXPECT(fwdioi_assembly_add(&a, pieces[i].off, zeros, pieces[i].len, &bad) ==
                       FWDIO_OK,
                   "piece %zu", i);
        uint64_t dir = (size / unit / 32768 + 1) * 16 + 16; /* the page directory */
        EXPECT(fwdioi_assembly_units_in_progress(&a) == 0, "unit %llu: all complete",
               (unsigned long long)unit);
        EXPECT((uint64_t)img.meta <= dir + 64, "unit %llu: %lld bytes held at the end",
               (unsigned long long)unit, (long long)img.meta);
        /* at most a byte a unit, where a unit table took 64 */
        EXPECT((uint64_t)img.meta_peak < size / unit,
               "unit %llu: bookkeeping peaked at %lld bytes for %llu units",
               (unsigned long long)unit, (long long)img.meta_peak,
               (unsigned long long)(size / unit));
        EXPECT(counted_bytes == size, "unit %llu: %llu bytes written",
               (unsigned long long)unit, (unsigned long long)counted_bytes);
        printf("test_assembly: %llu-byte units over %llu MiB: bookkeeping peak %lld bytes\n",
               (unsigned long long)unit, (unsigned long long)(size >> 20),
               (long long)img.meta_peak);
        fwdioi_assembly_free(&a);
        EXPECT(img.meta == 0 && img.reserved == 0, "freed");
        free(zeros);
        free(pieces);
    }
}

int main(void)
{
    const uint64_t K = 1024;
    unsigned seed = 7;
    int cases = 0;
    /* no budget, a budget of a few units, and none at all; with and without
     * forced partial flushes */
    const uint64_t budgets[] = {UINT64_MAX, 3 * 4 * K, 0};
    for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++)
        for (int flush_every = 0; flush_every <= 7; flush_every += 7)
            for (int layout = 0; layout < 3; layout++)
                for (int writers = 1; writers <= 5; writers++)
                    for (uint64_t size = 1; size < 400 * K; size = size * 3 + 1001) {
                        if (run_case(size, 16 * K, 4 * K, writers, (fwdio_layout_t)layout,
                                     budgets[b], flush_every, seed++)) {
                            fprintf(stderr,
                                    "test_assembly: failed: size %llu writers %d layout %d "
                                    "budget %llu flush_every %d\n",
                                    (unsigned long long)size, writers, layout,
                                    (unsigned long long)budgets[b], flush_every);
                            return 1;
                        }
                        cases++;
                    }
    case_overlaps();
    case_overlaps_allowed();
    case_interleaved_overlaps();
    case_reverse_order();
    case_flush_choice();
    case_not_mine();
    case_tiny_units();
    if (failures) {
        fprintf(stderr, "test_assembly: %d checks failed\n", failures);
        return 1;
    }
    printf("test_assembly: %d random cases and the single cases passed\n", cases);
    return 0;
}
