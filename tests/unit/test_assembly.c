/*
 * Writer-side assembly against an in-memory file: every writer of a plan gets
 * its bytes in random pieces and random order, with holes; what the flushes
 * deliver must equal the source bytes exactly, holes untouched, and a second
 * copy of any byte must be reported as an overlap.
 */
#include "assembly.h"

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

    image_t img = {calloc(size + 1, 1), calloc(size + 1, 1), size, 0, budget, 0, 0};
    fwdioi_assembly_hooks_t hooks = {flush_to_image, direct_to_image, reserve, unreserve, &img};
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
    for (int w = 0; w < plan.nwriters; w++) {
        fwdioi_assembly_flush_partial(&asm_[w]);
        fwdioi_assembly_free(&asm_[w]);
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
    printf("test_assembly: %d cases passed\n", cases);
    return 0;
}
