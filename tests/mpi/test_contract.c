/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collective contract: what ranks that disagree, calls that cannot work
 * and MPI failures end in. Every case checks the status on every rank, the
 * error text, and the bytes on disk. `--case NAME` picks one:
 *
 *   mismatch_size     one rank opens with another size: FWDIO_EINVAL on every
 *                     rank naming "size"; the old file is untouched
 *   mismatch_order    rank 0 opens A then B, the others B then A: both fail
 *                     naming the path; both old files untouched
 *   mismatch_writers  one rank asks for another writer count
 *   mismatch_atomic   one rank asks for atomic_replace
 *   callback_open     a file opened from a poll-mode ready callback, at a
 *                     rank-local time: opens out of order fail, never cross
 *   versions          v1 of a path opened while v0 is in flight (no atomic
 *                     replace): both OK, the file holds exactly v1
 *   versions_atomic   the same with atomic replace and commit blocks: after
 *                     v0 completes the target is v0 whole, then v1 whole; no
 *                     temporary left
 *   path_open         v1 opened while v0 is not closed yet: v1 fails with
 *                     FWDIO_EINVAL on every rank, v0 completes whole
 *   huge              sizes and offsets past what a file can hold: ERANGE
 *   intercomm         fwdio_init on an intercommunicator: EINVAL
 *   after_finalize    fwdio_init after MPI_Finalize: EINVAL, no crash
 *   kill_versions     with --dir DIR and --kill: an old file at DIR/ckpt, then
 *                     v0 replaces it atomically and v1 is opened while v0 is
 *                     in flight; every rank dies before closing v1. With
 *                     --after-kill: DIR/ckpt is the old file or v0, whole,
 *                     never v1 or zeros; v2 then replaces it and verifies,
 *                     and DIR holds nothing else
 *   kill_shared       with --dir DIR and --kill: an old file at DIR/ckpt, then
 *                     a replacement whose writers are slow (every pwrite
 *                     0.2 s), so that the other ranks' messages sit in the
 *                     node-shared area; every rank dies before closing. With
 *                     --after-kill: DIR/ckpt is the old file, whole; /dev/shm
 *                     holds nothing of the killed job; a new replacement
 *                     completes and verifies, and DIR holds nothing else
 *   mpi_fault         with MPI_FAULTS_RULE set (tests/util/mpi_faults.h):
 *                     a first file ends with --expect1 (a status name, e.g.
 *                     EMPI) on every rank, its text naming --text; a second
 *                     file then ends with --expect2; finalize returns
 *   read_mpi_fault    the same for a file opened for reading: every read
 *                     ends (each OK one with the right bytes), the file ends
 *                     with --expect1 on every rank naming --text, a second
 *                     read file then reads right with --expect2
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

enum { STRIPE = 64 << 10, UNIT = 16 << 10 };
static const uint64_t SIZE = (1 << 20) + 4321;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static void options(fwdio_options_t *o)
{
    fwdio_options_init(o);
    o->stripe_size = STRIPE;
    o->write_size = UNIT;
    o->writers = tc_size > 1 ? 2 : 1;
}

/* Rank 0 writes `path` with the pattern of `seed` by plain I/O (an old file). */
static void old_file(const char *path, uint64_t size, uint64_t seed)
{
    if (tc_rank == 0) {
        FILE *out = fopen(path, "wb");
        if (!out) {
            tc_fail("cannot create %s: %s", path, strerror(errno));
        } else {
            uint8_t buf[4096];
            for (uint64_t off = 0; off < size; off += sizeof buf) {
                size_t n = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf;
                pattern_fill(buf, n, off, seed);
                fwrite(buf, 1, n, out);
            }
            fclose(out);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Writes to a file that is known to have failed are refused (EFAILED):
 * expected where an MPI failure is injected. */
static int g_writes_may_fail;

/* This rank's share of [0, size): stripe-sized pieces round robin. */
static void write_share(fwdio_file_t *f, uint64_t size, uint64_t seed)
{
    int piece = 0;
    for (uint64_t off = 0; off < size; off += STRIPE / 2, piece++) {
        if (piece % tc_size != tc_rank)
            continue;
        uint64_t len = size - off < STRIPE / 2 ? size - off : STRIPE / 2;
        int rc = tc_write_pattern(f, off, len, seed, 0);
        if (!(g_writes_may_fail && rc == FWDIO_EFAILED))
            TC_EXPECT(rc, FWDIO_OK, "write");
    }
}

/* Every rank: the file's status is `want` and its text holds `text`. */
static void expect_status(fwdio_file_t *f, int status, int want, const char *text,
                          const char *what)
{
    TC_EXPECT(status, want, what);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, status), "%s: ranks disagree on the status", what);
    const char *msg = fwdio_file_error(f);
    if (text)
        TC_CHECK(strstr(msg, text) != NULL, "%s: error text \"%s\" does not mention \"%s\"", what,
                 msg, text);
    if (tc_rank == 0)
        tc_note("%s: %s", what, msg);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* One file opened with `size` (rank `odd_rank` opens with odd_size, or
 * another change made by `tweak`), written, closed, waited for. */
static void mismatch_case(const char *what, void (*tweak)(fwdio_options_t *, uint64_t *),
                          const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    tc_path(path, sizeof path, what);
    old_file(path, 3 * STRIPE + 17, 99);
    fwdio_options_t o;
    options(&o);
    uint64_t size = SIZE;
    if (tc_rank == tc_size - 1)
        tweak(&o, &size);
    fwdio_file_t *f;
    tc_phase("open %s", what);
    TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    g_writes_may_fail = 1; /* refused once the failed check is known */
    write_share(f, SIZE < size ? SIZE : size, 1);
    g_writes_may_fail = 0;
    fwdio_close(f);
    tc_phase("wait %s", what);
    expect_status(f, fwdio_wait(f), FWDIO_EINVAL, text, what);
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, 3 * STRIPE + 17, 99) == 0,
             "%s: the old file was touched", what);
    /* the runtime goes on: the next file is written whole */
    tc_path(path, sizeof path, "after");
    options(&o);
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "fwdio_open after");
    write_share(f, SIZE, 2);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the file after");
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 2) == 0, "the file after");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static void other_size(fwdio_options_t *o, uint64_t *size)
{
    (void)o;
    *size += 4096;
}
static void other_writers(fwdio_options_t *o, uint64_t *size)
{
    (void)size;
    o->writers = 1;
}
static void other_atomic(fwdio_options_t *o, uint64_t *size)
{
    (void)size;
    o->atomic_replace = 1;
}

static void case_mismatch_order(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char a[4096], b[4096];
    tc_path(a, sizeof a, "A");
    tc_path(b, sizeof b, "B");
    old_file(a, 2 * STRIPE, 98);
    old_file(b, 2 * STRIPE + 1, 97);
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *fa, *fb;
    if (tc_rank == 0) {
        TC_EXPECT(fwdio_open(rt, a, SIZE, &o, NULL, &fa), FWDIO_OK, "open A");
        TC_EXPECT(fwdio_open(rt, b, SIZE, &o, NULL, &fb), FWDIO_OK, "open B");
    } else {
        TC_EXPECT(fwdio_open(rt, b, SIZE, &o, NULL, &fb), FWDIO_OK, "open B");
        TC_EXPECT(fwdio_open(rt, a, SIZE, &o, NULL, &fa), FWDIO_OK, "open A");
    }
    g_writes_may_fail = tc_size > 1;
    write_share(fa, SIZE, 3);
    write_share(fb, SIZE, 4);
    g_writes_may_fail = 0;
    fwdio_close(fa);
    fwdio_close(fb);
    tc_phase("wait A and B");
    int sa = fwdio_wait(fa), sb = fwdio_wait(fb);
    if (tc_size > 1) {
        expect_status(fa, sa, FWDIO_EINVAL, "path", "A");
        expect_status(fb, sb, FWDIO_EINVAL, "path", "B");
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, a, 2 * STRIPE, 98) == 0, "old A was touched");
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, b, 2 * STRIPE + 1, 97) == 0, "old B was touched");
    }
    fwdio_file_free(fa);
    fwdio_file_free(fb);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- callback_open ---- */

static fwdio_runtime_t *g_rt;
static fwdio_file_t *g_from_callback;
static char g_cb_path[4096];

static void open_from_ready(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)st;
    (void)f;
    (void)status;
    fwdio_options_t o;
    options(&o);
    TC_EXPECT(fwdio_open(g_rt, g_cb_path, SIZE, &o, NULL, &g_from_callback), FWDIO_OK,
              "open from a callback");
    g_writes_may_fail = tc_size > 1;
    write_share(g_from_callback, SIZE, 6);
    g_writes_may_fail = 0;
    fwdio_close(g_from_callback);
}

static void case_callback_open(void)
{
    g_rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    char a[4096], c[4096];
    tc_path(a, sizeof a, "first");
    tc_path(g_cb_path, sizeof g_cb_path, "from_callback");
    tc_path(c, sizeof c, "from_main");
    fwdio_options_t o;
    options(&o);
    tc_cbstate_t cb;
    tc_cb_init(&cb);
    cb.on_ready = open_from_ready;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&cb);
    fwdio_file_t *fa, *fc;
    TC_EXPECT(fwdio_open(g_rt, a, SIZE, &o, &cbs, &fa), FWDIO_OK, "open first");
    write_share(fa, SIZE, 5);
    fwdio_close(fa);
    /* rank 0 runs the callback (and so opens from_callback) before it opens
     * from_main; the others the other way round */
    if (tc_rank == 0)
        TC_EXPECT(fwdio_wait(fa), FWDIO_OK, "first");
    TC_EXPECT(fwdio_open(g_rt, c, SIZE, &o, NULL, &fc), FWDIO_OK, "open from_main");
    g_writes_may_fail = tc_size > 1;
    write_share(fc, SIZE, 7);
    g_writes_may_fail = 0;
    fwdio_close(fc);
    if (tc_rank != 0)
        TC_EXPECT(fwdio_wait(fa), FWDIO_OK, "first");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, a, SIZE, 5) == 0, "first");
    int sb = fwdio_wait(g_from_callback), sc = fwdio_wait(fc);
    int want = tc_size > 1 ? FWDIO_EINVAL : FWDIO_OK;
    expect_status(g_from_callback, sb, want, tc_size > 1 ? "path" : NULL, "from_callback");
    expect_status(fc, sc, want, tc_size > 1 ? "path" : NULL, "from_main");
    if (tc_size > 1) /* no bytes were written for either */
        TC_CHECK(!exists(g_cb_path) && !exists(c), "a file that failed its check was created");
    fwdio_file_free(fa);
    fwdio_file_free(fc);
    fwdio_file_free(g_from_callback);
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- versions of one path ---- */

static void case_versions(int atomic)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096], tmp[4096];
    tc_path(path, sizeof path, "ckpt");
    tc_path(tmp, sizeof tmp, ".ckpt.fwdio-tmp");
    const uint64_t size0 = SIZE + 3 * STRIPE, size1 = SIZE;
    const uint64_t block = 64;
    if (atomic)
        old_file(path, 2 * STRIPE, 90);
    fwdio_options_t o;
    options(&o);
    o.atomic_replace = atomic;
    fwdio_file_t *v0, *v1;
    tc_phase("v0");
    TC_EXPECT(fwdio_open(rt, path, size0, &o, NULL, &v0), FWDIO_OK, "open v0");
    write_share(v0, size0 - block, 10);
    if (tc_rank == tc_size - 1) { /* the commit block: the pattern's last bytes */
        uint8_t b[64];
        pattern_fill(b, block, size0 - block, 10);
        TC_EXPECT(fwdio_set_commit(v0, b, block, size0 - block), FWDIO_OK, "commit v0");
    }
    TC_EXPECT(fwdio_close(v0), FWDIO_OK, "close v0");
    /* v1 opens at once, while v0 is in flight */
    TC_EXPECT(fwdio_open(rt, path, size1, &o, NULL, &v1), FWDIO_OK, "open v1");
    if (!atomic) {
        write_share(v1, size1, 11);
        fwdio_close(v1);
    }
    tc_phase("wait v0");
    TC_EXPECT(fwdio_wait(v0), FWDIO_OK, "v0");
    if (atomic) { /* v1 cannot be renamed into place before it is closed */
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, size0, 10) == 0,
                 "after v0 completed, the target is not v0 whole");
        MPI_Barrier(MPI_COMM_WORLD);
        write_share(v1, size1 - block, 11);
        if (tc_rank == 0) {
            uint8_t b[64];
            pattern_fill(b, block, size1 - block, 11);
            TC_EXPECT(fwdio_set_commit(v1, b, block, size1 - block), FWDIO_OK, "commit v1");
        }
        fwdio_close(v1);
    }
    tc_phase("wait v1");
    TC_EXPECT(fwdio_wait(v1), FWDIO_OK, "v1");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, size1, 11) == 0, "the file is not v1 whole");
    TC_CHECK(!exists(tmp), "a temporary is left");
    fwdio_file_free(v0);
    fwdio_file_free(v1);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static void case_path_open(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096], same[4096];
    tc_path(path, sizeof path, "busy");
    /* the same file by another name */
    snprintf(same, sizeof same, "%s/./busy", tc_tmpdir());
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *v0, *v1;
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &v0), FWDIO_OK, "open v0");
    write_share(v0, SIZE, 12);
    TC_EXPECT(fwdio_open(rt, same, SIZE / 2, &o, NULL, &v1), FWDIO_OK, "open v1");
    g_writes_may_fail = 1;
    write_share(v1, SIZE / 2, 13);
    g_writes_may_fail = 0;
    fwdio_close(v1);
    tc_phase("wait v1");
    expect_status(v1, fwdio_wait(v1), FWDIO_EINVAL, "still open", "v1");
    fwdio_close(v0);
    tc_phase("wait v0");
    TC_EXPECT(fwdio_wait(v0), FWDIO_OK, "v0");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 12) == 0, "v0 is not whole");
    fwdio_file_free(v0);
    fwdio_file_free(v1);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static void case_huge(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    tc_path(path, sizeof path, "huge");
    /* (UINT64_MAX is FWDIO_SIZE_GROWS: a stream, test_streams) */
    const uint64_t sizes[] = {UINT64_MAX - 1, (uint64_t)INT64_MAX,
                              (uint64_t)INT64_MAX + 1, (uint64_t)INT64_MAX - 100};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fwdio_file_t *f = NULL;
        TC_EXPECT(fwdio_open(rt, path, sizes[i], NULL, NULL, &f), FWDIO_ERANGE, "huge size");
    }
    TC_CHECK(!exists(path), "a refused open created the file");
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *f;
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "open");
    uint8_t b[16] = {0};
    TC_EXPECT(fwdio_write(f, b, sizeof b, UINT64_MAX - 8), FWDIO_ERANGE, "offset near the end");
    TC_EXPECT(fwdio_write(f, b, sizeof b, SIZE - 8), FWDIO_ERANGE, "past the size");
    TC_EXPECT(fwdio_set_commit(f, b, sizeof b, UINT64_MAX - 4), FWDIO_ERANGE, "huge commit");
    write_share(f, SIZE, 14);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the file");
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 14) == 0, "the file");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static void case_intercomm(void)
{
    fwdio_runtime_t *rt = NULL;
    TC_EXPECT(fwdio_init(MPI_COMM_NULL, NULL, &rt), FWDIO_EINVAL, "MPI_COMM_NULL");
    if (tc_size < 2)
        return;
    MPI_Comm half, inter;
    int color = tc_rank < tc_size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, tc_rank, &half);
    int remote_leader = color ? tc_size / 2 : 0;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 7, &inter);
    TC_EXPECT(fwdio_init(inter, NULL, &rt), FWDIO_EINVAL, "intercommunicator");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

/* ---- a job killed between two versions ---- */

static const uint64_t OLD_SIZE = 2 * STRIPE + 5;

/* Rank 0: dir holds nothing but ckpt (no temporary left behind). */
static void check_only_ckpt(const char *dir)
{
    if (tc_rank != 0)
        return;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = ckpt", dir);
    TC_CHECK(system(cmd) == 0, "%s holds more than ckpt after the replacement", dir);
}

static void kill_versions(const char *dir, int after)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    fwdio_options_t o;
    options(&o);
    o.atomic_replace = 1;
    fwdio_file_t *v0, *v1;
    if (!after) {
        old_file(path, OLD_SIZE, 90);
        TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &v0), FWDIO_OK, "open v0");
        write_share(v0, SIZE, 10);
        fwdio_close(v0);
        TC_EXPECT(fwdio_open(rt, path, SIZE + STRIPE, &o, NULL, &v1), FWDIO_OK, "open v1");
        write_share(v1, SIZE + STRIPE, 11);
        fwdio_poll(rt);
        /* die at a moment that differs from run to run: v0 may be anywhere
         * from in flight to renamed into place */
        usleep((useconds_t)(getpid() % 20) * 1000);
        _exit(3);
    }
    uint64_t bad = 0;
    int is_old = pattern_check_file(path, OLD_SIZE, 0, OLD_SIZE, 90, 0, &bad) == 0;
    int is_v0 = !is_old && pattern_check_file(path, SIZE, 0, SIZE, 10, 0, &bad) == 0;
    TC_CHECK(is_old || is_v0, "after the kill %s is neither the old file nor v0 whole", path);
    if (tc_rank == 0)
        tc_note("after the kill the target holds %s", is_old ? "the old file" : "v0");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &v0), FWDIO_OK, "open v2");
    write_share(v0, SIZE, 12);
    fwdio_close(v0);
    TC_EXPECT(fwdio_wait(v0), FWDIO_OK, "v2");
    fwdio_file_free(v0);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 12) == 0, "v2");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    check_only_ckpt(dir);
}

static void kill_shared(const char *dir, int after)
{
    char path[4096], pidfile[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    snprintf(pidfile, sizeof pidfile, "%s/killed.pid", dir);
    if (!after)
        setenv("FWDIO_FAULT", "pwrite:slow=200", 1); /* read by fwdio_init */
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    fwdio_options_t o;
    options(&o);
    o.atomic_replace = 1;
    const uint64_t size = (uint64_t)8 << 20;
    fwdio_file_t *f;
    if (!after) {
        old_file(path, OLD_SIZE, 91);
        if (tc_rank == 0) { /* the area's names start with local rank 0's pid */
            FILE *p = fopen(pidfile, "w");
            if (p) {
                fprintf(p, "%ld\n", (long)getpid());
                fclose(p);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "open");
        write_share(f, size, 15);
        fwdio_poll(rt);
        usleep(50000); /* the messages are with the slow writers now */
        fwdio_runtime_stats_t rs;
        fwdio_runtime_stats(rt, &rs);
        if (tc_size > 1 && (rs.shared_budget == 0 || rs.shared_peak == 0)) {
            /* the run after the kill reports it: this one's output is not kept */
            char note[4200];
            snprintf(note, sizeof note, "%s/no_shared.%d", dir, tc_rank);
            FILE *n = fopen(note, "w");
            if (n)
                fclose(n);
        }
        _exit(3);
    }
    char note[4200];
    snprintf(note, sizeof note, "%s/no_shared.%d", dir, tc_rank);
    TC_CHECK(access(note, F_OK) != 0,
             "in the killed run no message of rank %d went through the node-shared area",
             tc_rank);
    unlink(note);
    uint64_t bad = 0;
    TC_CHECK(pattern_check_file(path, OLD_SIZE, 0, OLD_SIZE, 91, 0, &bad) == 0,
             "after the kill %s is not the old file (first bad byte at %llu)", path,
             (unsigned long long)bad);
    if (tc_rank == 0) {
        long pid = 0;
        FILE *p = fopen(pidfile, "r");
        TC_CHECK(p && fscanf(p, "%ld", &pid) == 1, "no pid of the killed job in %s", pidfile);
        if (p)
            fclose(p);
        unlink(pidfile);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "ls /dev/shm 2>/dev/null | grep -q '^fwdio\\.%ld\\.'", pid);
        TC_CHECK(pid > 0 && system(cmd) != 0,
                 "/dev/shm still holds segments of the killed job (fwdio.%ld.*)", pid);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "open after the kill");
    write_share(f, size, 16);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the replacement after the kill");
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, size, 16) == 0, "the replacement");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    check_only_ckpt(dir);
}

/* ---- MPI failures ---- */

static int status_named(const char *name)
{
    for (int s = 0; s >= -64; s--) {
        char buf[64];
        snprintf(buf, sizeof buf, "%d", s);
        if (!strcmp(name, buf))
            return s;
    }
    if (!strcmp(name, "OK"))
        return FWDIO_OK;
    if (!strcmp(name, "EMPI"))
        return FWDIO_EMPI;
    if (!strcmp(name, "EINVAL"))
        return FWDIO_EINVAL;
    fprintf(stderr, "unknown status %s\n", name);
    exit(2);
}

/* The next file of a runtime after a failure: written whole (seed 21) and
 * ending with `expect`. */
static void write_next_file(fwdio_runtime_t *rt, const fwdio_options_t *o, const char *name,
                            int expect)
{
    char path[4096];
    fwdio_file_t *f;
    tc_path(path, sizeof path, name);
    tc_phase("%s", name);
    TC_EXPECT(fwdio_open(rt, path, SIZE, o, NULL, &f), FWDIO_OK, name);
    write_share(f, SIZE, 21);
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), expect, NULL, name);
    fwdio_file_free(f);
    if (expect == FWDIO_OK)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 21) == 0, "%s", name);
}

static void case_mpi_fault(int expect1, int expect2, const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    fwdio_options_t o;
    options(&o);
    o.writers = 1; /* rank 0 receives, the others send */
    g_writes_may_fail = 1;
    fwdio_file_t *f;
    tc_path(path, sizeof path, "first");
    tc_phase("first file");
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "open first");
    write_share(f, SIZE, 20);
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), expect1, expect1 != FWDIO_OK ? text : NULL, "first file");
    fwdio_file_free(f);
    if (expect1 == FWDIO_OK)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 20) == 0, "first file");
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "the MPI fault fired %ld times, not once", tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    write_next_file(rt, &o, "second file", expect2);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* Reads of one read file: each rank reads READS pieces, all of them at once. */
enum { READS = 24 };

typedef struct read_slot {
    uint8_t *buf;
    uint64_t off, len, seed;
    atomic_int status; /* 1 until done */
} read_slot_t;

static void read_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    (void)f;
    (void)buf;
    read_slot_t *r = arg;
    atomic_store(&r->status, status);
}

/* Open `path` (SIZE bytes of pattern `seed`) for reading, read READS
 * overlapping pieces (every rank a different mix), close, and check: the
 * file's status is `expect` on every rank (its text naming `text`), every
 * read ended, those that ended OK hold the right bytes. */
static void read_file_case(fwdio_runtime_t *rt, const fwdio_options_t *o, const char *path,
                           uint64_t seed, int expect, const char *text, const char *what)
{
    read_slot_t slots[READS];
    fwdio_file_t *f;
    tc_phase("%s", what);
    TC_EXPECT(fwdio_open_read(rt, path, o, NULL, &f), FWDIO_OK, what);
    for (int i = 0; i < READS; i++) {
        read_slot_t *r = &slots[i];
        r->off = ((uint64_t)(i * 7 + tc_rank * 13) * 40009) % SIZE;
        r->len = (uint64_t)(i % 5) * 50021 + 17;
        if (r->len > SIZE - r->off)
            r->len = SIZE - r->off;
        r->seed = seed;
        r->buf = malloc(r->len);
        atomic_init(&r->status, 1);
        int rc = fwdio_read(f, r->buf, r->len, r->off, read_done, r);
        if (rc != FWDIO_OK) { /* the file failed already: refused, no callback */
            TC_CHECK(expect != FWDIO_OK && rc == FWDIO_EFAILED, "%s: read %d refused: %s", what,
                     i, fwdio_strerror(rc));
            atomic_store(&r->status, rc);
        }
    }
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), expect, expect != FWDIO_OK ? text : NULL, what);
    int ok = 0;
    for (int i = 0; i < READS; i++) {
        read_slot_t *r = &slots[i];
        int st = atomic_load(&r->status);
        TC_CHECK(st != 1, "%s: read %d never ended", what, i);
        if (st == FWDIO_OK) {
            uint8_t *want = malloc(r->len);
            pattern_fill(want, r->len, r->off, seed);
            TC_CHECK(memcmp(want, r->buf, r->len) == 0, "%s: read %d (%llu bytes at %llu) wrong",
                     what, i, (unsigned long long)r->len, (unsigned long long)r->off);
            free(want);
            ok++;
        }
        free(r->buf);
    }
    if (expect == FWDIO_OK)
        TC_CHECK(ok == READS, "%s: %d of %d reads OK", what, ok, READS);
    fwdio_file_free(f);
}

/* An MPI failure while a file is read: it fails on every rank, no read is
 * left waiting, and the next file reads right. */
static void case_read_mpi_fault(int expect1, int expect2, const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    fwdio_options_t o;
    options(&o);
    o.writers = 1; /* rank 0 reads, every rank asks */
    tc_path(path, sizeof path, "read");
    old_file(path, SIZE, 30);
    read_file_case(rt, &o, path, 30, expect1, text, "first read file");
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "the MPI fault fired %ld times, not once", tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    read_file_case(rt, &o, path, 30, expect2, NULL, "second read file");
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* A stream of STREAM_STEPS steps with an MPI failure in one of its
 * agreements: the steps before it complete (and are whole), it and the later
 * ones fail with FWDIO_EMPI on every rank, so does the stream, and the next
 * file of the runtime is written normally. */
enum { STREAM_STEPS = 4, STREAM_STEP_BYTES = 100000 };

typedef struct stream_steps {
    int status[STREAM_STEPS];
    atomic_int seen;
} stream_steps_t;

static void stream_step_cb(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    (void)f;
    stream_steps_t *s = user;
    if (step < STREAM_STEPS)
        s->status[step] = status;
    atomic_fetch_add(&s->seen, 1);
}

static void case_stream_mpi_fault(int fail_from, const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    fwdio_options_t o;
    options(&o);
    o.writers = 1;
    o.append_start = (uint64_t)STREAM_STEPS * STREAM_STEP_BYTES; /* appends after the steps */
    g_writes_may_fail = 1;
    stream_steps_t st = {0};
    fwdio_callbacks_t cbs = {.step = stream_step_cb, .user = &st};
    fwdio_file_t *f;
    tc_path(path, sizeof path, "stream");
    tc_phase("stream");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, &cbs, &f), FWDIO_OK, "open stream");
    const uint64_t share = STREAM_STEP_BYTES / (uint64_t)tc_size;
    uint8_t *buf = malloc(share);
    for (int k = 0; k < STREAM_STEPS; k++) {
        uint64_t at = (uint64_t)k * STREAM_STEP_BYTES + share * (uint64_t)tc_rank;
        pattern_fill(buf, share, at, 30);
        int rc = fwdio_write(f, buf, share, at);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "stream write: %s", fwdio_strerror(rc));
        uint8_t more = (uint8_t)k; /* and a byte appended after everything */
        rc = fwdio_append(f, &more, 1);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "stream append: %s", fwdio_strerror(rc));
        rc = fwdio_step_end(f);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "step end: %s", fwdio_strerror(rc));
    }
    free(buf);
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), FWDIO_EMPI, text, "stream");
    TC_CHECK(atomic_load(&st.seen) == STREAM_STEPS, "%d step callbacks, want %d",
             atomic_load(&st.seen), STREAM_STEPS);
    for (int k = 0; k < STREAM_STEPS; k++) {
        int want = k < fail_from ? FWDIO_OK : FWDIO_EMPI;
        TC_CHECK(st.status[k] == want, "step %d: %s, want %s", k, fwdio_strerror(st.status[k]),
                 fwdio_strerror(want));
        TC_CHECK(tc_all_same(MPI_COMM_WORLD, st.status[k]), "step %d: ranks disagree", k);
    }
    fwdio_file_free(f);
    if (tc_rank == 0)
        for (int k = 0; k < fail_from; k++) {
            uint64_t bad = 0;
            int fd = open(path, O_RDONLY);
            TC_CHECK(fd >= 0 && pattern_check_fd(fd, (uint64_t)k * STREAM_STEP_BYTES,
                                                 share * (uint64_t)tc_size, 30, 0, &bad) == 0,
                     "stream step %d: byte %llu is wrong", k, (unsigned long long)bad);
            if (fd >= 0)
                close(fd);
        }
    o.append_start = 0;
    write_next_file(rt, &o, "the file after the stream", FWDIO_OK);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    const char *which = NULL, *text = "MPI", *dir = NULL;
    int after_kill = 0;
    int expect1 = FWDIO_EMPI, expect2 = FWDIO_OK, fail_from = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--expect1") && i + 1 < argc)
            expect1 = status_named(argv[++i]);
        else if (!strcmp(argv[i], "--expect2") && i + 1 < argc)
            expect2 = status_named(argv[++i]);
        else if (!strcmp(argv[i], "--text") && i + 1 < argc)
            text = argv[++i];
        else if (!strcmp(argv[i], "--fail-from") && i + 1 < argc)
            fail_from = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--kill"))
            after_kill = 0;
        else if (!strcmp(argv[i], "--after-kill"))
            after_kill = 1;
        else {
            fprintf(stderr, "usage: %s --case NAME [--expect1 S --expect2 S --text T]\n", argv[0]);
            return 2;
        }
    }
    if (!which) {
        fprintf(stderr, "%s: --case is required\n", argv[0]);
        return 2;
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (!strcmp(which, "mismatch_size"))
        mismatch_case("mismatch_size", other_size, "size");
    else if (!strcmp(which, "mismatch_writers"))
        mismatch_case("mismatch_writers", other_writers, "writers");
    else if (!strcmp(which, "mismatch_atomic"))
        mismatch_case("mismatch_atomic", other_atomic, "atomic_replace");
    else if (!strcmp(which, "mismatch_order"))
        case_mismatch_order();
    else if (!strcmp(which, "callback_open"))
        case_callback_open();
    else if (!strcmp(which, "versions"))
        case_versions(0);
    else if (!strcmp(which, "versions_atomic"))
        case_versions(1);
    else if (!strcmp(which, "path_open"))
        case_path_open();
    else if (!strcmp(which, "huge"))
        case_huge();
    else if (!strcmp(which, "intercomm"))
        case_intercomm();
    else if (!strcmp(which, "kill_versions") && dir)
        kill_versions(dir, after_kill);
    else if (!strcmp(which, "kill_shared") && dir)
        kill_shared(dir, after_kill);
    else if (!strcmp(which, "mpi_fault"))
        case_mpi_fault(expect1, expect2, text);
    else if (!strcmp(which, "stream_mpi_fault"))
        case_stream_mpi_fault(fail_from, text);
    else if (!strcmp(which, "read_mpi_fault"))
        case_read_mpi_fault(expect1, expect2, text);
    else if (!strcmp(which, "after_finalize")) {
        int rc = tc_finish("test_contract after_finalize (before)");
        fwdio_runtime_t *rt = NULL;
        int got = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
        if (got != FWDIO_EINVAL) {
            fprintf(stderr, "FAIL: fwdio_init after MPI_Finalize returned %d (%s)\n", got,
                    fwdio_strerror(got));
            return 1;
        }
        printf("PASS: fwdio_init after MPI_Finalize: %s\n", fwdio_strerror(got));
        return rc;
    } else {
        fprintf(stderr, "%s: unknown case %s\n", argv[0], which);
        return 2;
    }
    char name[128];
    snprintf(name, sizeof name, "test_contract %s", which);
    return tc_finish(name);
}
