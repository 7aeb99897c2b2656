/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_streams cases: appends. Ordered appends of every rank per step after a
 * header (append), a rank steps ahead of the others within the staging
 * budget (ahead), and an existing file's contents kept (keep).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "streams.h"
#include "test_common.h"

enum { AHEAD_STEPS = 12, AHEAD_BUDGET = 64 << 10 };

/* Rank r's appended bytes per step in the `ahead` case. */
static uint64_t ahead_len(int r) { return r == 0 ? 12 << 10 : 4 << 10; }

void case_ahead(uint64_t seed)
{
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.staging_buffer = AHEAD_BUDGET;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    char path[4096];
    tc_path(path, sizeof path, "stream-ahead");
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    fwdio_file_t *f = NULL;
    tc_phase("ahead: open");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "open");
    uint8_t *buf = malloc(AHEAD_BUDGET);
    uint64_t base = 0, step_bytes = 0;
    for (int r = 0; r < tc_size; r++)
        step_bytes += ahead_len(r);
    for (int k = 0; k < AHEAD_STEPS; k++) {
        tc_phase("ahead: step %d", k);
        uint64_t off = base;
        for (int r = 0; r < tc_rank; r++)
            off += ahead_len(r);
        if (tc_rank != 0)
            usleep(30000); /* rank 0 runs ahead, its appends of ended steps held */
        pattern_fill(buf, ahead_len(tc_rank), off, seed);
        TC_EXPECT(fwdio_append(f, buf, ahead_len(tc_rank)), FWDIO_OK, "fwdio_append");
        if (k == 0)
            TC_EXPECT(fwdio_append(f, buf, AHEAD_BUDGET / 2 + 1), FWDIO_ETOOBIG,
                      "an append past half the budget within one step");
        TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
        base += step_bytes;
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "ahead: fwdio_wait");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize (ahead)");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) { /* the file: every step's appends in rank order */
        uint64_t bad = 0;
        TC_CHECK(pattern_check_file(path, base, 0, base, seed, 0, &bad) == 0,
                 "ahead: the file is wrong at offset %llu", (unsigned long long)bad);
    }
    free(buf);
}

/* ---- ordered appends ---- */

/* Rank r's appends in step k: their count and lengths, from the seed alone
 * (so every rank knows every rank's). */
static int appends_of(uint64_t seed, int k, int r, uint64_t *lens)
{
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 7919u + (uint64_t)k * 131u + (uint64_t)r);
    int n = (int)tc_rng_below(&rng, 4);
    for (int i = 0; i < n; i++)
        lens[i] = 1 + tc_rng_below(&rng, tc_rng_below(&rng, 3) == 0 ? 100000 : 3000);
    return n;
}

/* The content of append i of rank r in step k does not depend on where it
 * lands: a pattern keyed by (k, r, i). */
static uint64_t append_key(int k, int r, int i) { return ((uint64_t)(k * 64 + r) * 4 + (uint64_t)i) << 24; }

typedef struct append_case {
    stream_case_t c;
    uint64_t *step_end; /* [nsteps] where each step's appends end */
} append_case_t;

/* Check step k's appended bytes in the file (every rank's, in rank order). */
static int check_appends(const append_case_t *ac, int k)
{
    int fd = open(ac->c.path, O_RDONLY);
    if (fd < 0)
        return 0;
    uint64_t at = k == 0 ? HEADER : ac->step_end[k - 1];
    int ok = 1;
    for (int r = 0; r < tc_size && ok; r++) {
        uint64_t lens[4];
        int n = appends_of(ac->c.seed, k, r, lens);
        for (int i = 0; i < n && ok; i++) {
            uint8_t *want = malloc(lens[i]), *got = malloc(lens[i]);
            pattern_fill(want, lens[i], append_key(k, r, i), ac->c.seed);
            ok = pread(fd, got, lens[i], (off_t)at) == (ssize_t)lens[i] &&
                 !memcmp(want, got, lens[i]);
            if (!ok)
                tc_fail("%s: step %d: append %d of rank %d at %llu is wrong", ac->c.path, k, i,
                        r, (unsigned long long)at);
            at += lens[i];
            free(want);
            free(got);
        }
    }
    close(fd);
    return ok;
}

static void on_append_step(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    append_case_t *ac = ((tc_cbstate_t *)user)->user;
    if (step != (uint64_t)atomic_load(&ac->c.steps_seen) || f != ac->c.f)
        atomic_fetch_add(&ac->c.step_order_bad, 1);
    TC_CHECK(status == FWDIO_OK, "%s: step %llu: %s", ac->c.path, (unsigned long long)step,
             fwdio_strerror(status));
    if (status == FWDIO_OK && (int)step < ac->c.nsteps)
        check_appends(ac, (int)step);
    atomic_fetch_add(&ac->c.steps_seen, 1);
}

void case_append(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                 fwdio_layout_t layout)
{
    append_case_t ac = {0};
    stream_case_t *c = &ac.c;
    tc_path(c->path, sizeof c->path, "append");
    c->seed = seed;
    c->nsteps = nsteps;
    /* [nsteps]: what is appended after the last step end, placed at the close */
    ac.step_end = calloc((size_t)nsteps + 1, sizeof *ac.step_end);
    uint64_t at = HEADER;
    for (int k = 0; k <= nsteps; k++) {
        for (int r = 0; r < tc_size; r++) {
            uint64_t lens[4];
            int n = appends_of(seed, k, r, lens);
            for (int i = 0; i < n; i++)
                at += lens[i];
        }
        ac.step_end[k] = at;
    }
    /* an existing file: the header's first half, then debris to be cut */
    if (tc_rank == 0) {
        uint8_t old[HEADER + 5000];
        pattern_fill(old, HEADER / 2, 0, seed);
        memset(old + HEADER / 2, 0xab, sizeof old - HEADER / 2);
        int fd = open(c->path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        TC_CHECK(fd >= 0 && write(fd, old, sizeof old) == (ssize_t)sizeof old,
                 "cannot write %s", c->path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_options_t o = stream_options(writers, layout);
    o.append_start = HEADER;
    tc_cb_init(&c->cb);
    c->cb.user = &ac;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c->cb);
    cbs.step = on_append_step;
    tc_phase("open %s", c->path);
    TC_EXPECT(fwdio_open(rt, c->path, FWDIO_SIZE_GROWS, &o, &cbs, &c->f), FWDIO_OK,
              "fwdio_open (append)");
    /* the header's second half, at explicit offsets, a piece per rank */
    const uint64_t half = HEADER / 2;
    uint64_t share = (half + (uint64_t)tc_size - 1) / (uint64_t)tc_size;
    uint64_t h0 = half + share * (uint64_t)tc_rank;
    if (h0 < HEADER)
        TC_EXPECT(tc_write_pattern(c->f, h0, h0 + share > HEADER ? HEADER - h0 : share, seed, 0),
                  FWDIO_OK, "fwdio_write header");
    for (int k = 0; k <= nsteps; k++) {
        tc_phase("%s: step %d", c->path, k);
        uint64_t lens[4];
        int n = appends_of(seed, k, tc_rank, lens);
        for (int i = 0; i < n; i++) {
            uint8_t *buf = malloc(lens[i]);
            pattern_fill(buf, lens[i], append_key(k, tc_rank, i), seed);
            TC_EXPECT(fwdio_append(c->f, buf, lens[i]), FWDIO_OK, "fwdio_append");
            memset(buf, 0xee, lens[i]); /* copied: the buffer is ours again */
            free(buf);
        }
        if (k == nsteps)
            break; /* the last appends go with the close */
        TC_EXPECT(fwdio_step_end(c->f), FWDIO_OK, "fwdio_step_end");
        if (k % 7 == 6)
            TC_EXPECT(fwdio_step_wait(c->f, (uint64_t)k), FWDIO_OK, "fwdio_step_wait");
    }
    finish_stream(rt, c, FWDIO_OK, nsteps);
    struct stat st;
    uint64_t end = ac.step_end[nsteps];
    TC_CHECK(stat(c->path, &st) == 0 && (uint64_t)st.st_size == end, "%s: size %lld, want %llu",
             c->path, (long long)st.st_size, (unsigned long long)end);
    uint64_t bad;
    TC_CHECK(pattern_check_file(c->path, end, 0, HEADER, seed, 0, &bad) == 0,
             "%s: header byte %llu wrong", c->path, (unsigned long long)bad);
    for (int k = 0; k <= nsteps; k++)
        check_appends(&ac, k);
    fwdio_file_free(c->f);
    free(ac.step_end);
}

/* ---- keep_contents ---- */

void case_keep(fwdio_runtime_t *rt, uint64_t seed)
{
    enum { OLD = 20000, LATER = 9000, PIECE = 1000 };
    char path[4096];
    tc_path(path, sizeof path, "keep");
    uint8_t *old = malloc(OLD + LATER);
    pattern_fill(old, OLD + LATER, 0, seed);
    if (tc_rank == 0) {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        TC_CHECK(fd >= 0 && write(fd, old, OLD) == OLD, "cannot write %s", path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    o.append_start = 100; /* far below the file's end: would cut it */
    o.keep_contents = 1;
    fwdio_file_t *f = NULL;
    tc_phase("keep: open");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    /* another process writes past the end while the stream is open */
    if (tc_rank == 0) {
        int fd = open(path, O_WRONLY);
        TC_CHECK(fd >= 0 && pwrite(fd, old + OLD, LATER, OLD) == LATER, "cannot extend %s",
                 path);
        if (fd >= 0)
            close(fd);
    }
    uint8_t piece[PIECE];
    memset(piece, 0x5a + tc_rank, sizeof piece);
    uint64_t at = 2000 + (uint64_t)tc_rank * 3000;
    TC_EXPECT(fwdio_write(f, piece, sizeof piece, at), FWDIO_OK, "fwdio_write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "keep: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) {
        uint64_t end = OLD + LATER;
        for (int r = 0; r < tc_size; r++) {
            uint64_t e = 2000 + (uint64_t)r * 3000 + PIECE;
            for (uint64_t i = e - PIECE; i < e; i++)
                if (i < OLD + LATER)
                    old[i] = (uint8_t)(0x5a + r);
            end = e > end ? e : end;
        }
        uint8_t *got = calloc(end, 1);
        int fd = open(path, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : pread(fd, got, end + 1, 0);
        if (fd >= 0)
            close(fd);
        TC_CHECK(n == (ssize_t)end, "keep: %s has %zd bytes, want %llu", path, n,
                 (unsigned long long)end);
        for (uint64_t i = 0; i < OLD + LATER && i < end; i++)
            if (got[i] != old[i]) {
                tc_fail("keep: byte %llu of %s is %u, want %u (cut at the open?)",
                        (unsigned long long)i, path, got[i], old[i]);
                break;
            }
        free(got);
    }
    free(old);
    if (tc_size < 2)
        return;
    tc_phase("keep: ranks that disagree");
    o.keep_contents = tc_rank == 1;
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "keep_contents");
}

/* ---- must_exist: the path is opened as it is, never made ---- */

void case_must_exist(fwdio_runtime_t *rt)
{
    enum { PIECE = 1000 };
    char path[4096];
    tc_path(path, sizeof path, "must_exist");
    uint8_t piece[PIECE];
    memset(piece, 0x31 + tc_rank, sizeof piece);
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    o.keep_contents = 1;
    o.must_exist = 1;

    tc_phase("must_exist: a missing path");
    if (tc_rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    int rc = fwdio_write(f, piece, sizeof piece, (uint64_t)tc_rank * PIECE);
    TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "must_exist: fwdio_write: %s",
             fwdio_strerror(rc)); /* the open may have failed by now */
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_EOPEN, "must_exist: a missing path's stream ends with %s, want "
             "FWDIO_EOPEN (%s)", fwdio_strerror(rc), fwdio_file_error(f));
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    struct stat st;
    TC_CHECK(stat(path, &st) != 0 && errno == ENOENT, "must_exist: %s was made", path);
    MPI_Barrier(MPI_COMM_WORLD);

    tc_phase("must_exist: a path that exists");
    if (tc_rank == 0) {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        TC_CHECK(fd >= 0, "cannot make %s", path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    TC_EXPECT(fwdio_write(f, piece, sizeof piece, (uint64_t)tc_rank * PIECE), FWDIO_OK,
              "fwdio_write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "must_exist: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) {
        size_t n = (size_t)tc_size * PIECE;
        uint8_t *got = calloc(n + 1, 1);
        int fd = open(path, O_RDONLY);
        ssize_t len = fd < 0 ? -1 : pread(fd, got, n + 1, 0);
        if (fd >= 0)
            close(fd);
        TC_CHECK(len == (ssize_t)n, "must_exist: %s has %zd bytes, want %zu", path, len, n);
        for (size_t i = 0; len == (ssize_t)n && i < n; i++)
            if (got[i] != (uint8_t)(0x31 + i / PIECE)) {
                tc_fail("must_exist: byte %zu of %s is %u, want %u", i, path, got[i],
                        (unsigned)(0x31 + i / PIECE));
                break;
            }
        free(got);
    }

    tc_phase("must_exist: with the node-local tier");
    char local[4096];
    tc_path(local, sizeof local, "must_exist-local");
    fwdio_options_t a = o;
    a.local_dir = local;
    f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &a, NULL, &f), FWDIO_EINVAL,
              "fwdio_open with local_dir");
    if (tc_size < 2)
        return;
    tc_phase("must_exist: ranks that disagree");
    o.must_exist = tc_rank == 1;
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "must_exist");
}

/* ---- offsets_only: no appends, and no round to place them ---- */

void case_offsets_only(fwdio_runtime_t *rt)
{
    char path[4096];
    tc_path(path, sizeof path, "offsets-only");
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    o.offsets_only = 1;
    fwdio_file_t *f = NULL;
    tc_phase("offsets_only: appends refused");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    uint8_t piece[100];
    memset(piece, 0x30 + tc_rank, sizeof piece);
    TC_EXPECT(fwdio_append(f, piece, sizeof piece), FWDIO_EINVAL,
              "fwdio_append on an offsets_only stream");
    TC_EXPECT(fwdio_write(f, piece, sizeof piece, (uint64_t)tc_rank * sizeof piece), FWDIO_OK,
              "fwdio_write");
    TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
    TC_EXPECT(fwdio_append(f, piece, sizeof piece), FWDIO_EINVAL,
              "fwdio_append after a step end");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "offsets_only: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) {
        uint8_t got[100];
        int fd = open(path, O_RDONLY);
        struct stat st;
        TC_CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == (off_t)(tc_size * 100),
                 "offsets_only: %s is not %d bytes", path, tc_size * 100);
        for (int r = 0; fd >= 0 && r < tc_size; r++) {
            TC_CHECK(pread(fd, got, sizeof got, r * 100) == (ssize_t)sizeof got,
                     "offsets_only: short read of %s", path);
            for (size_t i = 0; i < sizeof got; i++)
                if (got[i] != (uint8_t)(0x30 + r)) {
                    tc_fail("offsets_only: byte %zu of rank %d's piece is %u", i, r, got[i]);
                    break;
                }
        }
        if (fd >= 0)
            close(fd);
    }
    if (tc_size < 2)
        return;
    tc_phase("offsets_only: ranks that disagree");
    o.offsets_only = tc_rank == 1;
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "offsets_only");
}
