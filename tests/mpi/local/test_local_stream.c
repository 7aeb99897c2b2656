/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams through the node-local tier (local_dir on a stream, asked for by
 * the code): the same program of steps written straight to one path and
 * through the tier to another leaves the two files byte for byte the same.
 *
 * The program: over an old version of OLD_SIZE bytes of 'o', three steps;
 * in each, every rank writes PIECES pieces of PIECE bytes with holes between
 * them, interleaved with the other ranks'; the second step rewrites half of
 * the first's span and goes past it, the third writes far beyond (a hole
 * of a few MiB). Two writers (rank 0 and the last), cyclic layout.
 *
 *   keep       the MPI-IO layer's options (keep_contents, append_start at
 *              the old size, rewrites, overlaps, offsets_only): the old
 *              bytes no step wrote stay;
 *   cut        keep_contents off, append_start 1 MiB: the old bytes below
 *              it stay, the rest goes (as the stream's open cuts it);
 *   capacity   keep, with a local_capacity below a writer's bytes: the
 *              writer's file moves to the target during the stream;
 *   fault      keep, the last writer's second local pwrite failing
 *              (FWDIO_FAULT enospc): its file moves to the target;
 * in each, the tier's steps and file complete OK with the writers' local
 * files there (none of a moved writer), each step is drained to the path
 * while the stream is open (fwdio_step_drain_wait: every rank finds its
 * pieces of the second step at the path, and the third step's drain tested
 * until it is done before the close; in each step's callback
 * fwdio_step_drain_wait is refused with FWDIO_ECONTEXT and
 * fwdio_step_drain_test works), the drain is OK, no local file is
 * left after it, and the target equals the straight one; and
 *   drainfail  (own runtime, FWDIO_FAULT: the last writer's pwrites to the
 *              target fail) the steps and the file complete OK in the local
 *              stores, the step's drain fails with FWDIO_EWRITE (named by
 *              fwdio_file_error while the stream is open), the drain fails
 *              with FWDIO_EWRITE on every rank (one text), the local files
 *              stay (the only copy);
 *   mpifault   (only with --case, under MPI_FAULTS_RULE failing one rank's
 *              agreement of the third step) local_capacity 4.2 MB: the
 *              stream ends with FWDIO_EMPI on every rank (one text), its
 *              drain too, nobody hangs; the room its writes took comes
 *              back, so the same program then fits the store again and
 *              equals the straight one;
 *   stepfault  (only with --case, under MPI_FAULTS_RULE failing one rank's
 *              agreement of the second step's drain) each step's drain
 *              waited for: the first OK, the second FWDIO_EMPI on every
 *              rank (one text), the stream and its drain too, nobody hangs;
 *   refusals   fwdio_set_commit on such a stream: FWDIO_EINVAL; local_copies
 *              2: fwdio_open refuses it (FWDIO_EINVAL); rank 0 alone asking
 *              for the tier: FWDIO_EINVAL on every rank naming local_dir;
 *              FWDIO_LOCAL_DIR in
 *              the environment leaves a stream straight (no local file, the
 *              bytes at the path at completion).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

enum { STRIPE = 64 << 10, WRITE_UNIT = 16 << 10, PIECE = 40000, GAP = 3000, PIECES = 8 };
static const uint64_t OLD_SIZE = 4 << 20;
static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static int g_writers[2];

typedef enum { KEEP, CUT } variant_t;

static void stream_options(fwdio_options_t *o, variant_t v)
{
    fwdio_options_init(o);
    g_writers[0] = 0;
    g_writers[1] = tc_size - 1;
    o->writer_list = g_writers;
    o->writer_list_len = tc_size > 1 ? 2 : 1;
    o->stripe_size = STRIPE;
    o->write_size = WRITE_UNIT;
    o->layout = FWDIO_LAYOUT_CYCLIC;
    o->rewrites = 1;
    if (v == KEEP) {
        o->keep_contents = 1;
        o->append_start = OLD_SIZE;
        o->overlaps = 1;
        o->offsets_only = 1;
    } else {
        o->append_start = 1 << 20;
    }
}

/* OLD_SIZE bytes of 'o' at path (rank 0), before the stream opens it. */
static void write_old(const char *path)
{
    if (tc_rank == 0) {
        FILE *p = fopen(path, "w");
        for (uint64_t i = 0; p && i < OLD_SIZE; i++)
            fputc('o', p);
        if (p)
            fclose(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Where step k's pieces start. */
static uint64_t step_base(int k)
{
    const uint64_t span = (uint64_t)PIECES * (uint64_t)tc_size * (PIECE + GAP);
    return k == 0 ? 10000 : k == 1 ? 10000 + span / 2 : OLD_SIZE + (3 << 20) + 777;
}

static int local_files(const char *dir)
{
    int n = 0;
    if (tc_rank == 0) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            n += len >= 12 && !strcmp(e->d_name + len - 12, ".fwdio-local");
        }
        if (d)
            closedir(d);
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return n;
}

/* Every rank: its pieces of step k are at `path` now (read with POSIX
 * calls while the stream is open). */
static void expect_step_at_path(const char *path, int k)
{
    uint8_t *buf = malloc(PIECE);
    int fd = open(path, O_RDONLY);
    TC_CHECK(buf && fd >= 0, "cannot read %s", path);
    for (int i = 0; buf && fd >= 0 && i < PIECES; i++) {
        uint64_t off = step_base(k) + ((uint64_t)i * (uint64_t)tc_size + (uint64_t)tc_rank) *
                                          (PIECE + GAP);
        ssize_t n = pread(fd, buf, PIECE, (off_t)off);
        int bad = n != PIECE ? 0 : -1;
        for (int b = 0; n == PIECE && b < PIECE && bad < 0; b++)
            if (buf[b] != pattern_byte(500 + (uint64_t)k, off + (uint64_t)b))
                bad = b;
        if (n != PIECE || bad >= 0) {
            tc_fail("%s: step %d drained, but rank %d's piece at %llu is not at the path "
                    "(read %zd bytes, byte %d differs)", path, k, tc_rank,
                    (unsigned long long)off, n, bad);
            break;
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
}

/* The program: open, three steps, close, wait; with local_dir, the local
 * files while the stream is open (after its second step, `*during`) and at
 * completion (`*at_complete`: the drain after the close, which copies only
 * the bytes after the last step, may have removed some by then), the drain,
 * and none after it. */
/* Step k of the program with the pattern of `seed`: this rank's pieces, then
 * the step's end. With may_fail, on a stream that may fail meanwhile: its
 * writes and its end are refused then (FWDIO_EFAILED). */
static void write_step(fwdio_file_t *f, int k, uint64_t seed, int may_fail)
{
    for (int i = 0; i < PIECES; i++) {
        uint64_t off = step_base(k) + ((uint64_t)i * (uint64_t)tc_size + (uint64_t)tc_rank) *
                                          (PIECE + GAP);
        int rc = tc_write_pattern(f, off, PIECE, seed, 7000);
        if (!may_fail || rc != FWDIO_EFAILED)
            TC_EXPECT(rc, FWDIO_OK, "write");
    }
    int rc = fwdio_step_end(f);
    if (!may_fail || rc != FWDIO_EFAILED)
        TC_EXPECT(rc, FWDIO_OK, "fwdio_step_end");
}

/* A step's callback: waiting for a drain there could never end (the
 * callback holds up what the wait needs), so fwdio_step_drain_wait says so;
 * testing works. Counts the steps seen (checks recorded with tc_fail are
 * thread-safe). */
static void on_step(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    TC_EXPECT(status, FWDIO_OK, "the step's status in its callback");
    TC_EXPECT(fwdio_step_drain_wait(f, step), FWDIO_ECONTEXT,
              "fwdio_step_drain_wait from a step callback");
    int done = -1;
    int rc = fwdio_step_drain_test(f, step, &done);
    TC_CHECK(rc == FWDIO_OK && (done == 0 || done == 1),
             "fwdio_step_drain_test from a step callback: %d (%s), done %d", rc,
             fwdio_strerror(rc), done);
    atomic_fetch_add((atomic_int *)user, 1);
}

static void run_stream(fwdio_runtime_t *rt, const char *path, variant_t v, const char *local_dir,
                       uint64_t capacity, int *during, int *at_complete)
{
    write_old(path);
    fwdio_options_t o;
    stream_options(&o, v);
    o.local_dir = local_dir;
    o.local_capacity = capacity;
    fwdio_file_t *f = NULL;
    atomic_int steps_seen = 0;
    fwdio_callbacks_t cbs = {.step = on_step, .user = &steps_seen};
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, &cbs, &f), FWDIO_OK, "fwdio_open");
    for (int k = 0; k < 3; k++) {
        write_step(f, k, 500 + (uint64_t)k, 0);
        if (k == 1) {
            TC_EXPECT(fwdio_step_wait(f, 1), FWDIO_OK, "fwdio_step_wait");
            /* at the path while the stream is open (a stream not in the
             * tier: as fwdio_step_wait) */
            TC_EXPECT(fwdio_step_drain_wait(f, 1), FWDIO_OK, "fwdio_step_drain_wait");
            MPI_Barrier(MPI_COMM_WORLD);
            expect_step_at_path(path, 1);
            if (local_dir)
                *during = local_files(local_dir);
        }
    }
    int done = 0;
    TC_EXPECT(fwdio_step_drain_test(f, 3, &done), FWDIO_EINVAL,
              "fwdio_step_drain_test of a step not ended");
    while (!done) { /* the last step drains before the close too */
        TC_EXPECT(fwdio_step_drain_test(f, 2, &done), FWDIO_OK, "fwdio_step_drain_test");
        if (!done)
            usleep(1000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_step_at_path(path, 2);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_CHECK(atomic_load(&steps_seen) == 3, "%d step callbacks ran, expected 3",
             atomic_load(&steps_seen));
    if (local_dir) {
        *at_complete = local_files(local_dir);
        TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
        MPI_Barrier(MPI_COMM_WORLD);
        int left = local_files(local_dir);
        TC_CHECK(left == 0, "%s: %d local files left after the drain", path, left);
    }
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0: the two files byte for byte the same. */
static void expect_same(const char *a, const char *b)
{
    int same = 1;
    if (tc_rank == 0) {
        FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
        long at = 0;
        int ca = 0, cb = 0;
        while (fa && fb && (ca = fgetc(fa)) == (cb = fgetc(fb)) && ca != EOF)
            at++;
        same = fa && fb && ca == cb;
        if (!same)
            tc_fail("%s and %s differ at byte %ld (%d against %d)", a, b, at, ca, cb);
        if (fa)
            fclose(fa);
        if (fb)
            fclose(fb);
    }
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

static void case_variant(fwdio_runtime_t *rt, const char *name, variant_t v, uint64_t capacity,
                         int want_local)
{
    char straight[4096], tier[4096], dir[4096];
    snprintf(straight, sizeof straight, "%s/%s-straight.dat", tc_tmpdir(), name);
    snprintf(tier, sizeof tier, "%s/%s-tier.dat", tc_tmpdir(), name);
    snprintf(dir, sizeof dir, "%s/%s-local", tc_tmpdir(), name);
    tc_phase("%s", name);
    int during = -1, n = -1;
    run_stream(rt, straight, v, NULL, 0, &during, &n);
    run_stream(rt, tier, v, dir, capacity, &during, &n);
    int writers = tc_size > 1 ? 2 : 1;
    if (want_local >= 0)
        TC_CHECK(during == want_local, "%s: %d local files while the stream is open, expected %d",
                 name, during, want_local);
    else /* a moved writer's local file goes with its last job */
        TC_CHECK(n < writers, "%s: %d local files at completion: a writer should have moved",
                 name, n);
    expect_same(straight, tier);
}

static void case_refusals(fwdio_runtime_t *rt)
{
    char path[4096], dir[4096];
    snprintf(dir, sizeof dir, "%s/refusals-local", tc_tmpdir());
    tc_phase("refusals");
    fwdio_options_t o;
    stream_options(&o, KEEP);
    o.local_dir = dir;
    snprintf(path, sizeof path, "%s/commit.dat", tc_tmpdir());
    write_old(path);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    TC_EXPECT(fwdio_set_commit(f, "x", 1, 0), FWDIO_EINVAL, "fwdio_set_commit on a tier stream");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    fwdio_file_free(f);

    snprintf(path, sizeof path, "%s/copies.dat", tc_tmpdir());
    o.local_copies = 2;
    f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_EINVAL,
              "fwdio_open of a tier stream with local_copies 2");
    TC_CHECK(f == NULL, "a refused open gave a handle");

    /* ranks that disagree: one writes the stream through the tier, the
     * others straight */
    snprintf(path, sizeof path, "%s/disagree.dat", tc_tmpdir());
    stream_options(&o, KEEP);
    o.local_dir = tc_rank == 0 ? dir : NULL;
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "local_dir");

    /* FWDIO_LOCAL_DIR is for checkpoints: a stream stays straight */
    char envdir[4096];
    snprintf(envdir, sizeof envdir, "%s/env-local", tc_tmpdir());
    snprintf(path, sizeof path, "%s/env.dat", tc_tmpdir());
    setenv("FWDIO_LOCAL_DIR", envdir, 1);
    stream_options(&o, KEEP);
    write_old(path);
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    TC_EXPECT(tc_write_pattern(f, 100, PIECE, 900 + (uint64_t)tc_rank, 7000), FWDIO_OK, "write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    int n = local_files(envdir);
    TC_CHECK(n == 0, "%d local files of a stream under FWDIO_LOCAL_DIR", n);
    fwdio_file_free(f);
    unsetenv("FWDIO_LOCAL_DIR");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank has the same error text for f (in text, for further checks). */
static void expect_one_text(fwdio_file_t *f, char *text, size_t len)
{
    char first[256];
    snprintf(text, len, "%s", fwdio_file_error(f));
    snprintf(first, sizeof first, "%s", text);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TC_CHECK(!strcmp(first, text), "error texts differ: \"%s\" on rank 0, \"%s\" here", first,
             text);
}

static void case_drain_fail(fwdio_runtime_t *rt)
{
    char target_dir[4096], path[4200], dir[4096];
    snprintf(target_dir, sizeof target_dir, "%s/drainfail-target", tc_tmpdir());
    snprintf(path, sizeof path, "%s/x.dat", target_dir);
    snprintf(dir, sizeof dir, "%s/drainfail-local", tc_tmpdir());
    if (tc_rank == 0)
        mkdir(target_dir, 0777);
    MPI_Barrier(MPI_COMM_WORLD);
    tc_phase("drainfail");
    write_old(path);
    fwdio_options_t o;
    stream_options(&o, KEEP);
    o.local_dir = dir;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    for (int i = 0; i < PIECES; i++)
        TC_EXPECT(tc_write_pattern(f, ((uint64_t)i * (uint64_t)tc_size + (uint64_t)tc_rank) *
                                          (PIECE + GAP), PIECE, 700, 7000),
                  FWDIO_OK, "write");
    TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
    TC_EXPECT(fwdio_step_wait(f, 0), FWDIO_OK, "fwdio_step_wait: in the local stores");
    /* the step's drain fails too, and the open stream names why */
    TC_EXPECT(fwdio_step_drain_wait(f, 0), FWDIO_EWRITE, "fwdio_step_drain_wait");
    TC_CHECK(strstr(fwdio_file_error(f), "pwrite of ") != NULL,
             "fwdio_file_error after a failed step drain: \"%s\"", fwdio_file_error(f));
    fwdio_error_info_t info;
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_EXPECT(info.status, FWDIO_EWRITE, "fwdio_file_error_info's status after a failed step drain");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete in the local stores");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_EWRITE, "fwdio_drain_wait");
    char text[256];
    expect_one_text(f, text, sizeof text);
    int n = local_files(dir);
    TC_CHECK(n == (tc_size > 1 ? 2 : 1), "%d local files after a failed drain: they are the "
             "only copy", n);
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void case_mpi_fault(fwdio_runtime_t *rt)
{
    /* room for one run of the program at 3 ranks (3.5-3.8 MB as its
     * writers write it), not with the failed run's first two steps still
     * counted */
    const uint64_t room = 4200000;
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/mpifault.dat", tc_tmpdir());
    snprintf(dir, sizeof dir, "%s/mpifault-local", tc_tmpdir());
    tc_phase("mpifault");
    write_old(path);
    fwdio_options_t o;
    stream_options(&o, KEEP);
    o.local_dir = dir;
    o.local_capacity = room;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    for (int k = 0; k < 3; k++)
        write_step(f, k, 800 + (uint64_t)k, 1);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_EMPI, "fwdio_wait: an agreement failed on one rank");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_EMPI, "fwdio_drain_wait: no drain after a failure");
    char text[256];
    expect_one_text(f, text, sizeof text);
    TC_CHECK(strstr(text, "MPI_Iallreduce") != NULL, "the error does not name the call: %s",
             text);
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "MPI_FAULTS_RULE fired %ld times, expected once",
             tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    fwdio_file_free(f); /* the room its writes took goes back */
    MPI_Barrier(MPI_COMM_WORLD);
    char straight[4096], tier[4096], dir2[4096];
    snprintf(straight, sizeof straight, "%s/mpifault-straight.dat", tc_tmpdir());
    snprintf(tier, sizeof tier, "%s/mpifault-tier.dat", tc_tmpdir());
    snprintf(dir2, sizeof dir2, "%s/mpifault-local2", tc_tmpdir());
    int during = -1, n = -1;
    run_stream(rt, straight, KEEP, NULL, 0, &during, &n);
    run_stream(rt, tier, KEEP, dir2, room, &during, &n);
    TC_CHECK(during == (tc_size > 1 ? 2 : 1), "%d local files of the stream after the failed "
             "one: its room did not come back", during);
    expect_same(straight, tier);
}

static void case_step_fault(fwdio_runtime_t *rt)
{
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/stepfault.dat", tc_tmpdir());
    snprintf(dir, sizeof dir, "%s/stepfault-local", tc_tmpdir());
    tc_phase("stepfault");
    write_old(path);
    fwdio_options_t o;
    stream_options(&o, KEEP);
    o.local_dir = dir;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    for (int k = 0; k < 3; k++) {
        write_step(f, k, 500 + (uint64_t)k, 1);
        if (k == 0) {
            TC_EXPECT(fwdio_step_drain_wait(f, 0), FWDIO_OK, "fwdio_step_drain_wait(0)");
            expect_step_at_path(path, 0);
        } else if (k == 1) {
            TC_EXPECT(fwdio_step_drain_wait(f, 1), FWDIO_EMPI,
                      "fwdio_step_drain_wait(1): its agreement failed on one rank");
        }
    }
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_EMPI, "fwdio_wait: the stream failed with it");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_EMPI, "fwdio_drain_wait");
    char text[256];
    expect_one_text(f, text, sizeof text);
    TC_CHECK(strstr(text, "drain") != NULL, "the error does not name the step's drain: %s",
             text);
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "MPI_FAULTS_RULE fired %ld times, expected once",
             tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- a job killed while a step drains ---- */

enum { KILL_STEP = 2 }; /* the killed run's second step: step_base(2), past the old size */

/* Every rank: the bytes of its pieces of step KILL_STEP that reached `path`
 * are that step's (a piece may be cut short or missing: it was draining). */
static void expect_kill_step_partial(const char *path)
{
    uint8_t *buf = malloc(PIECE);
    int fd = open(path, O_RDONLY);
    TC_CHECK(buf && fd >= 0, "cannot read %s", path);
    for (int i = 0; buf && fd >= 0 && i < PIECES; i++) {
        uint64_t off = step_base(KILL_STEP) +
                       ((uint64_t)i * (uint64_t)tc_size + (uint64_t)tc_rank) * (PIECE + GAP);
        ssize_t n = pread(fd, buf, PIECE, (off_t)off);
        for (ssize_t b = 0; b < n; b++) {
            uint8_t want = pattern_byte(500 + (uint64_t)KILL_STEP, off + (uint64_t)b);
            if (buf[b] != want && buf[b] != 0) {
                tc_fail("%s: byte %llu of the step draining when the job was killed is %#x, "
                        "neither the step's %#x nor a hole", path,
                        (unsigned long long)(off + (uint64_t)b), buf[b], want);
                break;
            }
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
}

/* Rank 0: below the old size, every byte no piece of step 0 covers is still
 * the old version's. */
static void expect_old_around_step0(const char *path)
{
    if (tc_rank != 0)
        return;
    const uint64_t span = (uint64_t)PIECES * (uint64_t)tc_size * (PIECE + GAP);
    uint8_t *buf = malloc(OLD_SIZE);
    int fd = open(path, O_RDONLY);
    ssize_t n = buf && fd >= 0 ? pread(fd, buf, OLD_SIZE, 0) : -1;
    TC_CHECK(n == (ssize_t)OLD_SIZE, "%s: read %zd of the old version's %llu bytes", path, n,
             (unsigned long long)OLD_SIZE);
    for (uint64_t at = 0; n == (ssize_t)OLD_SIZE && at < OLD_SIZE; at++) {
        uint64_t rel = at - step_base(0);
        int in_piece = at >= step_base(0) && rel < span && rel % (PIECE + GAP) < PIECE;
        if (!in_piece && buf[at] != 'o') {
            tc_fail("%s: old byte %llu is %#x after the killed drain", path,
                    (unsigned long long)at, buf[at]);
            break;
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
}

/*
 * With --dir DIR, one side of a job killed while its stream's steps drain
 * (driven by drain_kill.cmake): `--kill` writes an old version, opens a
 * tier stream (drain capped at 1 MiB/s per writer), drains step 0, writes
 * a second step past the old size, and once that step is complete in the
 * local stores but still draining, every rank dies; `--after-kill` checks
 * that the path holds what was drained (step 0 whole, the old bytes around
 * it, of the draining step only its own bytes or holes) and that the
 * writers' local files are still there (the rest of the stream, for a
 * person to recover).
 */
static void killed_step_drain(fwdio_runtime_t *rt, const char *dir, int kill)
{
    char path[4200], local[4200];
    snprintf(path, sizeof path, "%s/stream.dat", dir);
    snprintf(local, sizeof local, "%s/local", dir);
    int writers = tc_size > 1 ? 2 : 1;
    if (!kill) {
        tc_phase("after the kill: the path and the local files");
        expect_step_at_path(path, 0);
        expect_old_around_step0(path);
        expect_kill_step_partial(path);
        int n = local_files(local);
        TC_CHECK(n == writers, "%d local files after the killed drain, expected %d", n,
                 writers);
        return;
    }
    tc_phase("kill: step 0, drained");
    if (tc_rank == 0)
        mkdir(local, 0777);
    write_old(path);
    fwdio_options_t o;
    stream_options(&o, KEEP);
    o.local_dir = local;
    o.drain_bandwidth = 1 << 20;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    for (int step = 0; step < 2; step++) {
        int k = step == 0 ? 0 : KILL_STEP;
        write_step(f, k, 500 + (uint64_t)k, 0);
        TC_EXPECT(fwdio_step_wait(f, (uint64_t)step), FWDIO_OK, "fwdio_step_wait");
    }
    TC_EXPECT(fwdio_step_drain_wait(f, 0), FWDIO_OK, "fwdio_step_drain_wait(0)");
    int done = -1;
    TC_EXPECT(fwdio_step_drain_test(f, 1, &done), FWDIO_OK, "fwdio_step_drain_test(1)");
    TC_CHECK(done == 0, "the second step had drained already: the kill comes too late");
    tc_phase("kill: every rank dies while the second step drains");
    fflush(NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    _exit(tc_failures() ? 1 : 3);
}

/* A runtime of its own whose last rank breaks a call as FWDIO_FAULT's rule
 * `fmt` (its %d: that rank) says. */
static fwdio_runtime_t *fault_runtime(const char *fmt)
{
    char spec[128];
    snprintf(spec, sizeof spec, fmt, tc_size - 1);
    setenv("FWDIO_FAULT", spec, 1);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    return rt;
}

int main(int argc, char **argv)
{
    unsigned timeout = 60;
    tc_mpi_init(&argc, &argv, timeout);
    const char *only = NULL, *kill_dir = NULL;
    int faults = 1, kill = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--no-faults")) {
            faults = 0; /* built without FWDIO_FAULT */
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            kill_dir = argv[++i];
        } else if (!strcmp(argv[i], "--kill") || !strcmp(argv[i], "--after-kill")) {
            kill = !strcmp(argv[i], "--kill");
        } else {
            fprintf(stderr, "usage: test_local_stream [--case NAME] [--no-faults] [--timeout S] "
                            "[--callback-mode poll|progress] [--dir DIR --kill|--after-kill]\n");
            return 2;
        }
    }
    tc_watchdog_start(timeout);
    int writers = tc_size > 1 ? 2 : 1;
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (kill_dir) {
        killed_step_drain(rt, kill_dir, kill);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        return tc_finish("test_local_stream (a job killed while a step drains)");
    }
    if (!only || !strcmp(only, "keep"))
        case_variant(rt, "keep", KEEP, 0, writers);
    if (!only || !strcmp(only, "cut"))
        case_variant(rt, "cut", CUT, 0, writers);
    if (!only || !strcmp(only, "capacity"))
        case_variant(rt, "capacity", KEEP, 256 << 10, -1);
    if (!only || !strcmp(only, "refusals"))
        case_refusals(rt);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    if (faults && (!only || !strcmp(only, "fault"))) {
        rt = fault_runtime("pwrite:enospc:path=fwdio-local:nth=2:rank=%d");
        case_variant(rt, "fault", KEEP, 0, -1);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    if (only && !strcmp(only, "stepfault")) {
        rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
        case_step_fault(rt);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    if (only && !strcmp(only, "mpifault")) {
        rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
        case_mpi_fault(rt);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    if (faults && (!only || !strcmp(only, "drainfail"))) {
        rt = fault_runtime("pwrite:eio:path=drainfail-target/:rank=%d");
        case_drain_fail(rt);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    return tc_finish("test_local_stream");
}
