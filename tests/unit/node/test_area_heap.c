/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-shared area's heap (forwarder/node/area_heap.c) over a fake
 * backing: chunks are committed as blocks are cut from them and never beyond
 * the budget, a refused commit is a refused allocation that leaves nothing
 * committed, idle chunks beyond keep_idle go back at once and the rest on
 * trim, and a reused idle chunk costs no commit. A random run checks after
 * every step that each live block lies in committed chunks, that the heap's
 * count equals the fake's, and that no two live blocks overlap (each block
 * is filled with its own byte and checked when freed).
 */
#include "node/area_heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

enum { CHUNK = 4096, SIZE = 64 * CHUNK };

/* The fake backing: what is committed, chunk by chunk, under a budget. */
typedef struct fake {
    unsigned char committed[SIZE / CHUNK];
    uint64_t bytes, budget;
    int commits, uncommits, fail_next; /* fail_next: refuse the next commit */
} fake_t;

static int fake_commit(void *ctx, uint64_t off, uint64_t len)
{
    fake_t *f = ctx;
    CHECK(off % CHUNK == 0 && len % CHUNK == 0 && len > 0, "commit %llu+%llu not in chunks",
          (unsigned long long)off, (unsigned long long)len);
    if (f->fail_next) {
        f->fail_next = 0;
        return -1;
    }
    if (f->bytes + len > f->budget)
        return -1;
    for (uint64_t c = off / CHUNK; c < (off + len) / CHUNK; c++) {
        CHECK(!f->committed[c], "chunk %llu committed twice", (unsigned long long)c);
        f->committed[c] = 1;
    }
    f->bytes += len;
    f->commits++;
    return 0;
}

static void fake_uncommit(void *ctx, uint64_t off, uint64_t len)
{
    fake_t *f = ctx;
    for (uint64_t c = off / CHUNK; c < (off + len) / CHUNK; c++) {
        CHECK(f->committed[c], "chunk %llu given back but not committed", (unsigned long long)c);
        f->committed[c] = 0;
    }
    f->bytes -= len;
    f->uncommits++;
}

static uint8_t *g_base;

static void setup(fwdioi_heap_t *h, fake_t *f, uint64_t budget, uint64_t keep_idle)
{
    memset(f, 0, sizeof *f);
    f->budget = budget;
    fwdioi_heap_backing_t back = {fake_commit, fake_uncommit, f, CHUNK, keep_idle};
    CHECK(fwdioi_heap_init(h, g_base, SIZE, &back) == 0, "heap_init");
}

/* Every byte of [p, p + len) lies in a chunk the fake holds committed. */
static int in_committed(const fake_t *f, const void *p, uint64_t len)
{
    uint64_t off = (uint64_t)((const uint8_t *)p - g_base);
    for (uint64_t c = off / CHUNK; c <= (off + len - 1) / CHUNK; c++)
        if (!f->committed[c])
            return 0;
    return 1;
}

static void case_commit_as_used(void)
{
    fwdioi_heap_t h;
    fake_t f;
    setup(&h, &f, SIZE, 0);
    CHECK(f.bytes == 0, "committed %llu at init", (unsigned long long)f.bytes);
    void *a = fwdioi_heap_alloc(&h, 100);
    CHECK(a && in_committed(&f, a, 100) && f.bytes == CHUNK, "one small block: %llu committed",
          (unsigned long long)f.bytes);
    void *b = fwdioi_heap_alloc(&h, 3 * CHUNK);
    CHECK(b && in_committed(&f, b, 3 * CHUNK) && f.bytes == 4 * CHUNK,
          "a block over 3 more chunks: %llu committed", (unsigned long long)f.bytes);
    fwdioi_heap_memory_t m;
    fwdioi_heap_memory(&h, &m);
    CHECK(m.committed == f.bytes, "heap says %llu, fake %llu", (unsigned long long)m.committed,
          (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, b, 3 * CHUNK);
    CHECK(f.bytes == CHUNK, "keep_idle 0: freed chunks not given back (%llu)",
          (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, a, 100);
    CHECK(f.bytes == 0, "empty heap holds %llu", (unsigned long long)f.bytes);
    fwdioi_heap_destroy(&h);
}

static void case_keep_idle_and_trim(void)
{
    fwdioi_heap_t h;
    fake_t f;
    setup(&h, &f, SIZE, 2 * CHUNK);
    void *a = fwdioi_heap_alloc(&h, 4 * CHUNK);
    CHECK(a && f.bytes == 4 * CHUNK, "4 chunks: %llu", (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, a, 4 * CHUNK);
    CHECK(f.bytes == 2 * CHUNK, "keep_idle 2 chunks: %llu kept", (unsigned long long)f.bytes);
    int commits = f.commits;
    void *b = fwdioi_heap_alloc(&h, CHUNK);
    CHECK(b && f.commits == commits && f.bytes == 2 * CHUNK,
          "a block in an idle chunk committed again (%d commits, %llu bytes)", f.commits,
          (unsigned long long)f.bytes);
    fwdioi_heap_memory_t m;
    fwdioi_heap_memory(&h, &m);
    CHECK(m.idle == CHUNK, "idle %llu, not one chunk", (unsigned long long)m.idle);
    CHECK(fwdioi_heap_trim(&h) == CHUNK && f.bytes == CHUNK && in_committed(&f, b, CHUNK),
          "trim: %llu left, the live block's chunk must stay", (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, b, CHUNK);
    CHECK(f.bytes == CHUNK, "within keep_idle: kept (%llu)", (unsigned long long)f.bytes);
    CHECK(fwdioi_heap_trim(&h) == CHUNK && f.bytes == 0, "trim of an empty heap: %llu left",
          (unsigned long long)f.bytes);
    fwdioi_heap_destroy(&h);
}

static void case_budget(void)
{
    fwdioi_heap_t h;
    fake_t f;
    setup(&h, &f, 3 * CHUNK, 0);
    void *a = fwdioi_heap_alloc(&h, 4 * CHUNK);
    CHECK(!a && f.bytes == 0, "a block over the budget was handed out, or left %llu committed",
          (unsigned long long)f.bytes);
    void *b = fwdioi_heap_alloc(&h, 2 * CHUNK);
    CHECK(b && f.bytes == 2 * CHUNK, "within the budget: %p, %llu", b,
          (unsigned long long)f.bytes);
    void *c = fwdioi_heap_alloc(&h, 2 * CHUNK);
    CHECK(!c && f.bytes == 2 * CHUNK, "past the budget: %p, %llu committed", c,
          (unsigned long long)f.bytes);
    uint64_t used, peak;
    fwdioi_heap_usage(&h, &used, &peak);
    CHECK(used == 2 * CHUNK, "a refused block counted: used %llu", (unsigned long long)used);
    /* a refused commit in the middle of a block's chunks: the first run is
     * undone (chunk 2 is committed, so the block's chunks are 2 runs) */
    fwdioi_heap_free(&h, b, 2 * CHUNK);
    CHECK(f.bytes == 0, "freed: %llu", (unsigned long long)f.bytes);
    f.budget = SIZE;
    void *d = fwdioi_heap_alloc(&h, CHUNK); /* chunk 0 */
    void *e = fwdioi_heap_alloc(&h, CHUNK); /* chunk 1 */
    fwdioi_heap_free(&h, d, CHUNK);         /* chunk 0 back: free range 0, then 2.. */
    CHECK(f.bytes == CHUNK, "one chunk live: %llu", (unsigned long long)f.bytes);
    f.fail_next = 1;
    void *g = fwdioi_heap_alloc(&h, CHUNK); /* chunk 0: refused */
    CHECK(!g && f.bytes == CHUNK, "refused commit: %p, %llu committed", g,
          (unsigned long long)f.bytes);
    fwdioi_heap_memory_t m;
    fwdioi_heap_memory(&h, &m);
    CHECK(m.commit_failures == 3, "%llu refusals counted, not 3 (2 over the budget, 1 injected)",
          (unsigned long long)m.commit_failures);
    fwdioi_heap_free(&h, e, CHUNK);
    CHECK(f.bytes == 0, "all freed: %llu", (unsigned long long)f.bytes);
    fwdioi_heap_destroy(&h);
}

/* A block spanning committed and uncommitted chunks, and a refusal of its
 * second run undoing its first. */
static void case_runs(void)
{
    fwdioi_heap_t h;
    fake_t f;
    setup(&h, &f, SIZE, 0);
    void *a = fwdioi_heap_alloc(&h, CHUNK / 2);      /* chunk 0 */
    void *b = fwdioi_heap_alloc(&h, 2 * CHUNK);      /* chunks 0-2 */
    void *c = fwdioi_heap_alloc(&h, CHUNK);          /* chunks 2-3 */
    CHECK(a && b && c && f.bytes == 4 * CHUNK, "4 chunks: %llu", (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, b, 2 * CHUNK); /* chunk 1 idle: back */
    CHECK(f.bytes == 3 * CHUNK && !f.committed[1], "chunk 1 kept: %llu",
          (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, c, CHUNK);
    CHECK(f.bytes == CHUNK, "chunks 2-3 kept: %llu", (unsigned long long)f.bytes);
    /* free now: [CHUNK/2, SIZE); a block of 3 chunks from CHUNK/2 touches 0 (live),
     * 1-3 (holes) */
    void *d = fwdioi_heap_alloc(&h, 3 * CHUNK);
    CHECK(d && in_committed(&f, d, 3 * CHUNK) && f.bytes == 4 * CHUNK, "d: %llu",
          (unsigned long long)f.bytes);
    fwdioi_heap_free(&h, d, 3 * CHUNK);
    fwdioi_heap_free(&h, a, CHUNK / 2);
    CHECK(f.bytes == 0, "all freed: %llu", (unsigned long long)f.bytes);
    fwdioi_heap_destroy(&h);
}

/* No backing: the range is memory already; nothing to commit. */
static void case_unbacked(void)
{
    fwdioi_heap_t h;
    CHECK(fwdioi_heap_init(&h, g_base, SIZE, NULL) == 0, "init");
    void *a = fwdioi_heap_alloc(&h, SIZE);
    CHECK(a == g_base, "the whole range");
    CHECK(fwdioi_heap_alloc(&h, 1) == NULL, "past the range");
    fwdioi_heap_free(&h, a, SIZE);
    CHECK(fwdioi_heap_trim(&h) == 0, "trim without a backing");
    fwdioi_heap_destroy(&h);
}

typedef struct live {
    uint8_t *p;
    uint64_t len;
    uint8_t fill;
} live_t;

static void case_random(unsigned seed, uint64_t budget, uint64_t keep)
{
    fwdioi_heap_t h;
    fake_t f;
    setup(&h, &f, budget, keep);
    srand(seed);
    live_t v[64];
    int n = 0, refused = 0;
    for (int step = 0; step < 20000 && failures < 10; step++) {
        if (n < 64 && (n == 0 || rand() % 2)) {
            uint64_t len = 1 + (uint64_t)(rand() % (rand() % 4 ? 512 : 5 * CHUNK));
            uint8_t *p = fwdioi_heap_alloc(&h, len);
            if (!p) {
                refused++;
                continue;
            }
            CHECK(in_committed(&f, p, len), "step %d: a block in uncommitted memory", step);
            v[n] = (live_t){p, len, (uint8_t)(step * 7 + 1)};
            memset(p, v[n].fill, len);
            n++;
        } else {
            int i = rand() % n;
            for (uint64_t k = 0; k < v[i].len; k++)
                if (v[i].p[k] != v[i].fill) {
                    CHECK(0, "step %d: block %p overwritten at %llu", step, (void *)v[i].p,
                          (unsigned long long)k);
                    break;
                }
            fwdioi_heap_free(&h, v[i].p, v[i].len);
            v[i] = v[--n];
        }
        fwdioi_heap_memory_t m;
        fwdioi_heap_memory(&h, &m);
        CHECK(m.committed == f.bytes && f.bytes <= budget,
              "step %d: heap %llu, fake %llu, budget %llu", step,
              (unsigned long long)m.committed, (unsigned long long)f.bytes,
              (unsigned long long)budget);
        /* committed = chunks some live block touches + at most keep_idle idle */
        uint64_t touched = 0;
        for (int c = 0; c < SIZE / CHUNK; c++) {
            int t = 0;
            for (int i = 0; i < n && !t; i++) {
                uint64_t off = (uint64_t)(v[i].p - g_base);
                t = off / CHUNK <= (uint64_t)c && (off + v[i].len - 1) / CHUNK >= (uint64_t)c;
            }
            touched += t ? CHUNK : 0;
            CHECK(!t || f.committed[c], "step %d: live chunk %d not committed", step, c);
        }
        CHECK(f.bytes <= touched + keep, "step %d: %llu committed for %llu touched + %llu idle",
              step, (unsigned long long)f.bytes, (unsigned long long)touched,
              (unsigned long long)keep);
    }
    while (n > 0) {
        n--;
        fwdioi_heap_free(&h, v[n].p, v[n].len);
    }
    fwdioi_heap_trim(&h);
    CHECK(f.bytes == 0, "seed %u: %llu committed after everything was freed and trimmed", seed,
          (unsigned long long)f.bytes);
    printf("random seed %u budget %llu keep %llu: %d refused, %d commits, %d give-backs\n", seed,
           (unsigned long long)budget, (unsigned long long)keep, refused, f.commits,
           f.uncommits);
    fwdioi_heap_destroy(&h);
}

int main(void)
{
    g_base = aligned_alloc(CHUNK, SIZE);
    if (!g_base)
        return 1;
    case_commit_as_used();
    case_keep_idle_and_trim();
    case_budget();
    case_runs();
    case_unbacked();
    case_random(1, SIZE, 0);
    case_random(2, SIZE, 4 * CHUNK);
    case_random(3, 8 * CHUNK, 2 * CHUNK);
    case_random(4, CHUNK, 0);
    free(g_base);
    if (failures)
        fprintf(stderr, "test_area_heap: %d failure(s)\n", failures);
    else
        printf("test_area_heap: ok\n");
    return failures ? 1 : 0;
}
