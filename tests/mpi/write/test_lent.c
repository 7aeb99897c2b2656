/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lent (zero-copy) writes: every rank writes its share in random pieces with
 * fwdio_write_lent, each from its own buffer. Each done callback must fire
 * exactly once, before the file's complete callback; the test scribbles over a
 * buffer as soon as it is handed back, so a byte read from it afterwards would
 * show in the file. Also: a zero-length lent write, a lent write to a file that
 * cannot be opened (the callback reports the failure), and refusals at the call.
 */
#define _GNU_SOURCE
#include "test_common.h"

#include "pattern.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static fwdio_runtime_t *g_rt;

typedef struct lent_buf {
    uint8_t *bytes;
    size_t len;
    atomic_int done_count;
    atomic_int status;
    atomic_int complete_seen; /* the file's complete callback ran before this one */
} lent_buf_t;

static atomic_int g_complete_fired;

static void on_lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    lent_buf_t *b = arg;
    if (buf != b->bytes && b->len > 0)
        tc_fail("lent callback got buffer %p, expected %p", buf, (void *)b->bytes);
    atomic_store(&b->status, status);
    atomic_store(&b->complete_seen, atomic_load(&g_complete_fired));
    /* The buffer is ours again: anything fwdio still read from it would now
     * land in the file as 0x5A. */
    if (b->bytes)
        memset(b->bytes, 0x5A, b->len);
    atomic_fetch_add(&b->done_count, 1);
}

static void on_complete(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    (void)status;
    (void)user;
    atomic_fetch_add(&g_complete_fired, 1);
}

static void section_pieces(fwdio_layout_t layout, int writers, uint64_t size, uint64_t seed)
{
    tc_phase("lent pieces: layout %d, %d writers", (int)layout, writers);
    char path[4096];
    tc_path(path, sizeof path, layout == FWDIO_LAYOUT_BLOCK ? "lent_block.dat" : "lent_cyclic.dat");
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = writers;
    o.layout = layout;
    o.write_size = 16 << 10;
    o.stripe_size = 64 << 10;
    fwdio_callbacks_t cbs = {.complete = on_complete};
    atomic_store(&g_complete_fired, 0);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(g_rt, path, size, &o, &cbs, &f), FWDIO_OK, "fwdio_open");
    if (!f)
        return;

    /* This rank's share, cut into random pieces written in random order. */
    uint64_t first = size * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t end = size * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 1000 + (uint64_t)tc_rank);
    size_t cap = 64, n = 0;
    lent_buf_t *bufs = calloc(cap, sizeof *bufs);
    uint64_t *offs = calloc(cap, sizeof *offs);
    for (uint64_t off = first; off < end; n++) {
        if (n == cap) {
            cap *= 2;
            bufs = realloc(bufs, cap * sizeof *bufs);
            offs = realloc(offs, cap * sizeof *offs);
            memset(bufs + n, 0, (cap - n) * sizeof *bufs);
        }
        uint64_t len = 1 + tc_rng_below(&rng, 150000);
        if (len > end - off)
            len = end - off;
        bufs[n].bytes = malloc(len);
        bufs[n].len = (size_t)len;
        pattern_fill(bufs[n].bytes, len, off, seed);
        offs[n] = off;
        off += len;
    }
    for (size_t i = n; i > 1; i--) { /* random order */
        size_t j = (size_t)tc_rng_below(&rng, i);
        lent_buf_t tb = bufs[i - 1];
        bufs[i - 1] = bufs[j];
        bufs[j] = tb;
        uint64_t to = offs[i - 1];
        offs[i - 1] = offs[j];
        offs[j] = to;
    }
    for (size_t i = 0; i < n; i++)
        TC_EXPECT(fwdio_write_lent(f, bufs[i].bytes, bufs[i].len, offs[i], on_lent_done, &bufs[i]),
                  FWDIO_OK, "fwdio_write_lent");
    /* a zero-length lent write is handed back too */
    lent_buf_t empty = {0};
    TC_EXPECT(fwdio_write_lent(f, NULL, 0, 0, on_lent_done, &empty), FWDIO_OK,
              "zero-length fwdio_write_lent");
    TC_EXPECT(fwdio_write_lent(f, bufs[0].bytes, 1, size, on_lent_done, &empty), FWDIO_ERANGE,
              "lent write past the end");
    TC_EXPECT(fwdio_write_lent(f, bufs[0].bytes, 1, 0, NULL, NULL), FWDIO_EINVAL,
              "lent write without a callback");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_write_lent(f, bufs[0].bytes, 1, 0, on_lent_done, &empty), FWDIO_ECLOSED,
              "lent write after close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    tc_poll_until_count(g_rt, &empty.done_count, 1);

    for (size_t i = 0; i < n; i++) {
        int c = atomic_load(&bufs[i].done_count);
        TC_CHECK(c == 1, "lent piece at %llu: callback ran %d times",
                 (unsigned long long)offs[i], c);
        TC_CHECK(atomic_load(&bufs[i].status) == FWDIO_OK, "lent piece status %d",
                 atomic_load(&bufs[i].status));
        TC_CHECK(atomic_load(&bufs[i].complete_seen) == 0,
                 "lent piece at %llu handed back after the file's complete callback",
                 (unsigned long long)offs[i]);
        free(bufs[i].bytes);
    }
    TC_CHECK(atomic_load(&empty.done_count) == 1, "zero-length lent: %d callbacks",
             atomic_load(&empty.done_count));
    free(bufs);
    free(offs);
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
}

/* A file that cannot be opened: lent buffers come back with the failure. */
static void section_failed_open(void)
{
    tc_phase("lent write to a file that cannot be opened");
    char path[4096];
    tc_path(path, sizeof path, "no_such_dir/lent.dat");
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(g_rt, path, 1 << 20, NULL, NULL, &f), FWDIO_OK, "fwdio_open");
    if (!f)
        return;
    lent_buf_t b = {0};
    b.len = 4096;
    b.bytes = calloc(1, b.len);
    int rc = fwdio_write_lent(f, b.bytes, b.len, (uint64_t)tc_rank * b.len, on_lent_done, &b);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_EOPEN, "fwdio_wait of a file that cannot be opened");
    if (rc == FWDIO_OK) { /* accepted before the failure was known */
        tc_poll_until_count(g_rt, &b.done_count, 1);
        TC_CHECK(atomic_load(&b.done_count) == 1, "failed file: %d callbacks",
                 atomic_load(&b.done_count));
        TC_EXPECT(atomic_load(&b.status), FWDIO_EOPEN, "lent status of a failed file");
    } else {
        TC_EXPECT(rc, FWDIO_EFAILED, "lent write to a failed file");
        TC_CHECK(atomic_load(&b.done_count) == 0, "refused lent write called back");
    }
    free(b.bytes);
    fwdio_file_free(f);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    for (int i = 1; i < argc; i++) {
        if (!tc_common_option(argc, argv, &i, &timeout, &g_mode)) {
            fprintf(stderr, "usage: %s [--callback-mode poll|progress] [--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    g_rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    section_pieces(FWDIO_LAYOUT_BLOCK, 2, (3 << 20) + 12345, 401);
    section_pieces(FWDIO_LAYOUT_CYCLIC, 3, (2 << 20) + 777, 402);
    section_failed_open();
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_lent");
}
