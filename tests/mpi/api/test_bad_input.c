/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input, refused at the call or reported as the file's final status, and
 * the job going on afterwards.
 *
 *  1. Arguments refused at the call with FWDIO_EINVAL (NULL handles, bad
 *     options) and fwdio_strerror naming every code.
 *  2. On a good file: a NULL buffer with len > 0 (EINVAL), writes past the size
 *     (ERANGE, also when offset + len overflows), a write after close and a
 *     double close (ECLOSED). The refused calls must change nothing: the file
 *     still completes with FWDIO_OK and verifies byte for byte. A zero-sized
 *     file refuses any byte (ERANGE).
 *  3. With good files in flight at the same time: overlapping writes (final
 *     status FWDIO_EOVERLAP on every rank through the callbacks and
 *     fwdio_wait; fwdio_file_error[_info] names a writer rank and an offset in
 *     the overlap), a path in a missing directory (FWDIO_EOPEN, errno ENOENT)
 *     and a path under a regular file (FWDIO_EOPEN, errno ENOTDIR). Once the
 *     ready callback reported the failure, fwdio_write gives FWDIO_EFAILED.
 *     The good files in flight complete and verify.
 *  4. A file opened after all the failures completes and verifies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

static int g_writers = 0;
static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static fwdio_options_t small_opts(void)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.stripe_size = 64 << 10;
    o.write_size = 16 << 10;
    o.writers = g_writers;
    return o;
}

/* This rank's share of [0, size) when every rank writes one contiguous slice. */
static void my_slice(uint64_t size, uint64_t *off, uint64_t *len)
{
    uint64_t lo = size * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t hi = size * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    *off = lo;
    *len = hi - lo;
}

typedef struct goodfile {
    const char *name;
    char path[4096];
    uint64_t size;
    uint64_t seed;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} goodfile_t;

static void good_open(fwdio_runtime_t *rt, goodfile_t *g, const char *name, uint64_t size,
                      uint64_t seed)
{
    g->name = name;
    g->size = size;
    g->seed = seed;
    g->f = NULL;
    tc_path(g->path, sizeof g->path, name);
    tc_cb_init(&g->cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&g->cb);
    fwdio_options_t o = small_opts();
    tc_phase("open %s", name);
    int rc = fwdio_open(rt, g->path, size, &o, &cbs, &g->f);
    if (rc != FWDIO_OK || !g->f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", g->path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void good_write_close(goodfile_t *g)
{
    uint64_t off, len;
    my_slice(g->size, &off, &len);
    tc_phase("write+close %s", g->name);
    TC_EXPECT(tc_write_pattern(g->f, off, len, g->seed, 10000), FWDIO_OK, "write good file");
    TC_EXPECT(fwdio_close(g->f), FWDIO_OK, "close good file");
}

static void good_finish(goodfile_t *g)
{
    tc_phase("wait+verify %s", g->name);
    TC_EXPECT(fwdio_wait(g->f), FWDIO_OK, g->name);
    tc_cb_check(MPI_COMM_WORLD, &g->cb, g->name, FWDIO_OK, FWDIO_OK, g_mode, g->f);
    tc_verify_full(MPI_COMM_WORLD, g->path, g->size, g->seed);
    fwdio_file_free(g->f);
    g->f = NULL;
}


/* fwdio_file_error_info is the same on every rank and names a writer of the file. */
static void check_error_info(const fwdio_file_t *f, const char *what, int want_status,
                             int want_errno, uint64_t off_lo, uint64_t off_hi)
{
    fwdio_error_info_t info;
    memset(&info, 0, sizeof info);
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.status == want_status, "%s: error info status %d (%s), expected %d (%s)", what,
             info.status, fwdio_strerror(info.status), want_status, fwdio_strerror(want_status));
    int nw = fwdio_file_writers(f, NULL, 0);
    int is_writer = 0;
    if (nw > 0) {
        int *ranks = calloc((size_t)nw, sizeof(int));
        nw = fwdio_file_writers(f, ranks, nw);
        for (int i = 0; i < nw; i++)
            is_writer |= ranks[i] == info.rank;
        free(ranks);
    } else {
        tc_fail("%s: fwdio_file_writers returned %d on a failed file", what, nw);
    }
    TC_CHECK(is_writer, "%s: error info rank %d is not a writer of the file", what, info.rank);
    if (want_errno >= 0)
        TC_CHECK(info.sys_errno == want_errno, "%s: errno %d (%s), expected %d (%s)", what,
                 info.sys_errno, strerror(info.sys_errno), want_errno, strerror(want_errno));
    if (off_hi > off_lo)
        TC_CHECK(info.offset >= off_lo && info.offset < off_hi,
                 "%s: error offset %" PRIu64 " is outside the overlap [%" PRIu64 ", %" PRIu64 ")",
                 what, info.offset, off_lo, off_hi);
    if (!tc_all_same(MPI_COMM_WORLD, info.status) || !tc_all_same(MPI_COMM_WORLD, info.rank) ||
        !tc_all_same(MPI_COMM_WORLD, info.sys_errno) ||
        !tc_all_same(MPI_COMM_WORLD, (long)info.offset))
        tc_fail("%s: fwdio_file_error_info differs between ranks (here: status %d rank %d errno "
                "%d offset %" PRIu64 ")",
                what, info.status, info.rank, info.sys_errno, info.offset);

    const char *s = fwdio_file_error(f);
    if (!s) {
        tc_fail("%s: fwdio_file_error returned NULL", what);
        return;
    }
    char num[64];
    snprintf(num, sizeof num, "%d", info.rank);
    TC_CHECK(strstr(s, num) != NULL, "%s: fwdio_file_error '%s' does not name writer rank %d",
             what, s, info.rank);
    if (want_status == FWDIO_EOVERLAP) {
        snprintf(num, sizeof num, "%" PRIu64, info.offset);
        TC_CHECK(strstr(s, num) != NULL, "%s: fwdio_file_error '%s' does not name offset %s",
                 what, s, num);
    }
    if (want_errno > 0) {
        snprintf(num, sizeof num, "%d", want_errno);
        TC_CHECK(strstr(s, strerror(want_errno)) != NULL || strstr(s, num) != NULL,
                 "%s: fwdio_file_error '%s' does not mention errno %d (%s)", what, s, want_errno,
                 strerror(want_errno));
    }
    if (tc_rank == 0)
        tc_note("%s: fwdio_file_error: %s", what, s);
}

static void phase_arguments(fwdio_runtime_t *rt)
{
    tc_phase("arguments refused at the call");
    unsigned char b[16] = {0};
    int done = 0;
    fwdio_error_info_t info;
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, NULL), FWDIO_EINVAL, "fwdio_init(rt NULL)");
    TC_EXPECT(fwdio_finalize(NULL), FWDIO_EINVAL, "fwdio_finalize(NULL)");
    TC_EXPECT(fwdio_poll(NULL), FWDIO_EINVAL, "fwdio_poll(NULL)");
    TC_EXPECT(fwdio_write(NULL, b, sizeof b, 0), FWDIO_EINVAL, "fwdio_write(NULL file)");
    TC_EXPECT(fwdio_close(NULL), FWDIO_EINVAL, "fwdio_close(NULL)");
    TC_EXPECT(fwdio_wait(NULL), FWDIO_EINVAL, "fwdio_wait(NULL)");
    TC_EXPECT(fwdio_test(NULL, &done), FWDIO_EINVAL, "fwdio_test(NULL)");
    TC_EXPECT(fwdio_file_error_info(NULL, &info), FWDIO_EINVAL, "fwdio_file_error_info(NULL)");
    TC_EXPECT(fwdio_file_writers(NULL, NULL, 0), FWDIO_EINVAL, "fwdio_file_writers(NULL)");

    /* fwdio_strerror names every code, differently, and never returns NULL. */
    const char *texts[16];
    for (int c = 0; c >= -15; c--) {
        texts[-c] = fwdio_strerror(c);
        TC_CHECK(texts[-c] && texts[-c][0], "fwdio_strerror(%d) is empty", c);
        for (int d = 0; d > c && texts[-c]; d--)
            TC_CHECK(!texts[-d] || strcmp(texts[-c], texts[-d]) != 0,
                     "fwdio_strerror(%d) and (%d) are both '%s'", c, d, texts[-c]);
    }
    TC_CHECK(fwdio_strerror(-999) != NULL, "fwdio_strerror(-999) is NULL");
    TC_CHECK(fwdio_strerror(7) != NULL, "fwdio_strerror(7) is NULL");

    /* Bad fwdio_open arguments, refused on every rank alike: no open happens;
     * each refusal with a runtime keeps its place in the open order on every
     * rank (fwdio.h, "Refusals"), so the files after them still match. */
    char path[4096];
    tc_path(path, sizeof path, "never.dat");
    fwdio_options_t o = small_opts();
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(NULL, path, 100, &o, NULL, &f), FWDIO_EINVAL, "fwdio_open(rt NULL)");
    TC_EXPECT(fwdio_open(rt, NULL, 100, &o, NULL, &f), FWDIO_EINVAL, "fwdio_open(path NULL)");
    TC_EXPECT(fwdio_open(rt, path, 100, &o, NULL, NULL), FWDIO_EINVAL, "fwdio_open(file NULL)");
    o.stripe_size = 48 << 10;
    o.write_size = 32 << 10;
    TC_EXPECT(fwdio_open(rt, path, 100, &o, NULL, &f), FWDIO_EINVAL,
              "fwdio_open(stripe_size not a multiple of write_size)");
    o = small_opts();
    o.first_writer = tc_size;
    TC_EXPECT(fwdio_open(rt, path, 100, &o, NULL, &f), FWDIO_EINVAL,
              "fwdio_open(first_writer = number of ranks)");
    o.first_writer = -1;
    TC_EXPECT(fwdio_open(rt, path, 100, &o, NULL, &f), FWDIO_EINVAL,
              "fwdio_open(first_writer = -1)");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(access(path, F_OK) != 0, "a refused fwdio_open created %s", path);
}

static void phase_bad_writes(fwdio_runtime_t *rt)
{
    goodfile_t g;
    const uint64_t size = (1 << 20) + 333;
    good_open(rt, &g, "refused_writes.dat", size, 101);
    tc_phase("refused writes on %s", g.name);
    unsigned char b[128];
    pattern_fill(b, sizeof b, size - 99, g.seed);
    TC_EXPECT(fwdio_write(g.f, NULL, 10, 0), FWDIO_EINVAL, "fwdio_write(NULL buf, len 10)");
    TC_EXPECT(fwdio_write(g.f, NULL, 0, 0), FWDIO_OK, "fwdio_write(NULL buf, len 0)");
    TC_EXPECT(fwdio_write(g.f, b, 1, size), FWDIO_ERANGE, "fwdio_write(1 byte at size)");
    TC_EXPECT(fwdio_write(g.f, b, 100, size - 99), FWDIO_ERANGE,
              "fwdio_write(100 bytes at size - 99)");
    TC_EXPECT(fwdio_write(g.f, b, 2, UINT64_MAX), FWDIO_ERANGE,
              "fwdio_write(2 bytes at UINT64_MAX: offset + len overflows)");
    TC_EXPECT(fwdio_write(g.f, b, 16, UINT64_MAX - 8), FWDIO_ERANGE,
              "fwdio_write(16 bytes at UINT64_MAX - 8)");
    good_write_close(&g);
    tc_phase("use after close of %s", g.name);
    TC_EXPECT(fwdio_write(g.f, b, 1, 0), FWDIO_ECLOSED, "fwdio_write after fwdio_close");
    TC_EXPECT(fwdio_close(g.f), FWDIO_ECLOSED, "second fwdio_close");
    good_finish(&g);

    /* A zero-sized file takes no byte. */
    good_open(rt, &g, "empty.dat", 0, 102);
    tc_phase("refused writes on %s", g.name);
    TC_EXPECT(fwdio_write(g.f, b, 1, 0), FWDIO_ERANGE, "fwdio_write(1 byte to an empty file)");
    TC_EXPECT(fwdio_close(g.f), FWDIO_OK, "close empty file");
    TC_EXPECT(fwdio_close(g.f), FWDIO_ECLOSED, "second close of the empty file");
    good_finish(&g);
}

typedef struct failfile {
    const char *name;
    char path[4096];
    int want_errno;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} failfile_t;

static void phase_failures(fwdio_runtime_t *rt)
{
    /* A regular file to use as a "directory". */
    char notdir[4096];
    tc_path(notdir, sizeof notdir, "regular_file");
    if (tc_rank == 0) {
        int fd = open(notdir, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0)
            tc_fail("cannot create %s: %s", notdir, strerror(errno));
        else
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    goodfile_t before, after;
    good_open(rt, &before, "in_flight_before.dat", (3 << 19) + 17, 201);

    /* Overlap: rank 0 writes [0, 105000), rank 1 (rank 0 itself with one rank)
     * writes [100000, size): bytes [100000, 105000) are written twice. */
    const uint64_t ov_size = 256 << 10, ov_lo = 100000, ov_hi = 105000;
    const uint64_t ov_seed = 202;
    char ov_path[4096];
    tc_path(ov_path, sizeof ov_path, "overlap.dat");
    tc_cbstate_t ov_cb;
    tc_cb_init(&ov_cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&ov_cb);
    fwdio_options_t o = small_opts();
    fwdio_file_t *ov = NULL;
    tc_phase("open overlap.dat");
    int rc = fwdio_open(rt, ov_path, ov_size, &o, &cbs, &ov);
    if (rc != FWDIO_OK || !ov) {
        tc_fail("fwdio_open(%s) returned %d (%s)", ov_path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    failfile_t ff[2];
    ff[0].name = "missing directory";
    tc_path(ff[0].path, sizeof ff[0].path, "no/such/dir/file.dat");
    ff[0].want_errno = ENOENT;
    ff[1].name = "parent is a regular file";
    tc_path(ff[1].path, sizeof ff[1].path, "regular_file/file.dat");
    ff[1].want_errno = ENOTDIR;
    unsigned char b[4096];
    for (int i = 0; i < 2; i++) {
        tc_phase("open %s (%s)", ff[i].path, ff[i].name);
        tc_cb_init(&ff[i].cb);
        cbs = tc_cb_callbacks(&ff[i].cb);
        ff[i].f = NULL;
        rc = fwdio_open(rt, ff[i].path, 1 << 20, &o, &cbs, &ff[i].f);
        if (rc != FWDIO_OK || !ff[i].f) {
            tc_fail("fwdio_open(%s) returned %d (%s); the failure must come later as "
                    "FWDIO_EOPEN",
                    ff[i].path, rc, fwdio_strerror(rc));
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* Written at once, before ready: accepted (or already known to fail). */
        pattern_fill(b, sizeof b, (uint64_t)tc_rank * sizeof b, 203);
        rc = fwdio_write(ff[i].f, b, sizeof b, (uint64_t)tc_rank * sizeof b);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED,
                 "%s: write before ready returned %d (%s), expected FWDIO_OK (or FWDIO_EFAILED)",
                 ff[i].name, rc, fwdio_strerror(rc));
    }

    good_open(rt, &after, "in_flight_after.dat", (1 << 20) + 4097, 204);

    tc_phase("overlapping writes");
    if (tc_rank == 0)
        TC_EXPECT(tc_write_pattern(ov, 0, ov_hi, ov_seed, 30000), FWDIO_OK, "overlap part 1");
    if (tc_rank == (tc_size > 1 ? 1 : 0)) {
        rc = tc_write_pattern(ov, ov_lo, ov_size - ov_lo, ov_seed, 30000);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED,
                 "overlap part 2: fwdio_write returned %d (%s)", rc, fwdio_strerror(rc));
    }
    TC_EXPECT(fwdio_close(ov), FWDIO_OK, "close overlap.dat");
    good_write_close(&before);
    good_write_close(&after);

    for (int i = 0; i < 2; i++) {
        tc_phase("waiting for ready of %s", ff[i].name);
        tc_poll_until_count(rt, &ff[i].cb.ready_count, 1);
        TC_EXPECT(atomic_load(&ff[i].cb.ready_status), FWDIO_EOPEN, ff[i].name);
        TC_EXPECT(fwdio_write(ff[i].f, b, 1, 0), FWDIO_EFAILED,
                  "fwdio_write after ready reported FWDIO_EOPEN");
        TC_EXPECT(fwdio_close(ff[i].f), FWDIO_OK, "fwdio_close of the failed file");
    }

    tc_phase("waiting for overlap.dat");
    TC_EXPECT(fwdio_wait(ov), FWDIO_EOVERLAP, "fwdio_wait(overlap.dat)");
    tc_cb_check(MPI_COMM_WORLD, &ov_cb, "overlap.dat", FWDIO_OK, FWDIO_EOVERLAP, g_mode, ov);
    check_error_info(ov, "overlap.dat", FWDIO_EOVERLAP, -1, ov_lo, ov_hi);
    fwdio_file_free(ov);

    for (int i = 0; i < 2; i++) {
        tc_phase("waiting for %s", ff[i].name);
        TC_EXPECT(fwdio_wait(ff[i].f), FWDIO_EOPEN, ff[i].name);
        tc_cb_check(MPI_COMM_WORLD, &ff[i].cb, ff[i].name, FWDIO_EOPEN, FWDIO_EOPEN, g_mode,
                    ff[i].f);
        check_error_info(ff[i].f, ff[i].name, FWDIO_EOPEN, ff[i].want_errno, 0, 0);
        fwdio_file_free(ff[i].f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) {
        char p[4096];
        tc_path(p, sizeof p, "no");
        TC_CHECK(access(p, F_OK) != 0, "the failed open created directory %s", p);
    }

    good_finish(&before);
    good_finish(&after);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--writers") && i + 1 < argc)
            g_writers = (int)tc_parse_long(argv[++i]);
        else if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        else {
            fprintf(stderr, "usage: %s [--writers N] [--callback-mode poll|progress] "
                            "[--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();

    tc_phase("fwdio_init");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);

    phase_arguments(rt);
    phase_bad_writes(rt);
    phase_failures(rt);

    /* The job goes on: a file opened after every failure completes. */
    goodfile_t last;
    good_open(rt, &last, "after_failures.dat", (2 << 20) + 1, 301);
    good_write_close(&last);
    good_finish(&last);

    tc_phase("fwdio_finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_bad_input");
}
