/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checkpoint sets' nonblocking completion (fwdio_ckpt_test) and bounded
 * search (fwdio_ckpt_latest_upto) on real ranks, bytes checked in the files:
 *   poll      a version whose pwrite is slowed (FWDIO_FAULT slow) beside a
 *             fast one: every fwdio_ckpt_test call returns at once while the
 *             slow one drains (the fast one's pwrite queues behind it on
 *             the same writer: it is done no earlier), ranks test at
 *             different paces and a third version is opened in between
 *             (after a different number of tests on each rank) and
 *             completed with a few tests then fwdio_ckpt_wait; every
 *             version complete, manifest in place, every byte right;
 *   misuse    a test before the close (FWDIO_ENOTCLOSED, at once, on that
 *             rank only), NULL arguments, a version whose data fails
 *             (FWDIO_EWRITE on every rank, again on later tests, no
 *             manifest), and, in the progress callback mode, test and wait
 *             from a callback on the progress thread (FWDIO_ECONTEXT);
 *   upto      fwdio_ckpt_latest_upto below, at and above versions, past a
 *             damaged one, with no version low enough, and with ranks
 *             passing different bounds (FWDIO_EINVAL on every rank).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt_files.h"
#include "test_common.h"

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

/* The slowed pwrite of the "slow" set, and the longest a test may take
 * while it runs (a blocking test would take the whole delay). */
#define SLOW_MS 1500
#define TEST_MAX_S 0.5

static unsigned char byte_of(uint64_t version, uint64_t offset)
{
    return (unsigned char)((offset * 29u + version * 13u + (offset >> 11)) & 0xff);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Open version `version` of `name`, write this rank's share, and close
 * it unless `keep_open`. The handle, or NULL (a failure is counted). */
static fwdio_ckpt_t *start_version(fwdio_runtime_t *rt, const char *name, uint64_t version,
                                   uint64_t size, const fwdio_ckpt_options_t *o, int keep_open)
{
    fwdio_ckpt_t *ck = NULL;
    TC_EXPECT(fwdio_ckpt_open(rt, name, version, size, o, &ck), FWDIO_OK, "fwdio_ckpt_open");
    if (!ck)
        return NULL;
    uint64_t share = size / (uint64_t)tc_size, from = share * (uint64_t)tc_rank;
    uint64_t to = tc_rank == tc_size - 1 ? size : from + share;
    unsigned char *buf = malloc(to > from ? to - from : 1);
    for (uint64_t i = from; i < to; i++)
        buf[i - from] = byte_of(version, i);
    TC_EXPECT(fwdio_ckpt_write(ck, buf, (size_t)(to - from), from), FWDIO_OK, "fwdio_ckpt_write");
    free(buf);
    if (!keep_open)
        TC_EXPECT(fwdio_ckpt_close(ck), FWDIO_OK, "fwdio_ckpt_close");
    return ck;
}

static int exists(const char *dir, const char *name, uint64_t version, const char *suffix)
{
    return ckpt_exists(dir, name, version, suffix);
}

/* Rank 0 checks every byte of a version's data file. */
static void check_bytes(const char *dir, const char *name, uint64_t version, uint64_t size)
{
    ckpt_check_bytes(dir, name, version, size, byte_of);
}

/* One fwdio_ckpt_test, timed: the longest call so far in *longest. */
static int timed_test(fwdio_ckpt_t *ck, int *done, double *longest)
{
    double t = now();
    int rc = fwdio_ckpt_test(ck, done);
    t = now() - t;
    if (t > *longest)
        *longest = t;
    return rc;
}

static void case_poll(fwdio_runtime_t *rt, const char *dir)
{
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = dir;
    const uint64_t size = 150001;
    tc_phase("poll: a slow and a fast version in flight");
    fwdio_ckpt_t *slow = start_version(rt, "slow", 1, size, &o, 0);
    fwdio_ckpt_t *fast = start_version(rt, "fast", 2, size, &o, 0);
    if (!slow || !fast)
        return;
    int slow_done = 0, fast_done = 0, rounds = 0;
    int slow_rc = FWDIO_OK, fast_rc = FWDIO_OK;
    double longest = 0;
    fwdio_ckpt_t *mid = NULL;
    /* Rank r tests at its own pace, and opens the third version after r + 2
     * rounds: the ranks reach that open after different numbers of tests. */
    while (!slow_done || !fast_done || !mid) {
        if (!fast_done) {
            fast_rc = timed_test(fast, &fast_done, &longest);
        }
        if (!slow_done)
            slow_rc = timed_test(slow, &slow_done, &longest);
        if (++rounds == tc_rank + 2)
            mid = start_version(rt, "mid", 3, size, &o, 0);
        nap_ms(1 + 3 * tc_rank);
        if (rounds > 100000) {
            tc_fail("the versions never completed (rounds %d)", rounds);
            break;
        }
    }
    TC_EXPECT(slow_rc, FWDIO_OK, "the slow version's test");
    TC_EXPECT(fast_rc, FWDIO_OK, "the fast version's test");
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, slow_rc) && tc_all_same(MPI_COMM_WORLD, fast_rc),
             "ranks disagree on the statuses");
    TC_CHECK(longest < TEST_MAX_S, "a fwdio_ckpt_test call took %.3f s (the slow pwrite "
                                   "takes %d ms): it blocked", longest, SLOW_MS);
    TC_CHECK(rounds > 3, "only %d rounds of tests while a %d ms pwrite ran", rounds, SLOW_MS);
    tc_note("rank %d: %d rounds of tests, the longest call %.1f ms", tc_rank, rounds,
            1e3 * longest);
    /* Done stays done, with its status. */
    int d = 0;
    TC_EXPECT(fwdio_ckpt_test(slow, &d), FWDIO_OK, "a test after done");
    TC_CHECK(d == 1, "done went back to 0");
    TC_EXPECT(fwdio_ckpt_wait(fast), FWDIO_OK, "a wait after done");
    /* The third: a few tests, then the wait goes on from there. */
    if (mid) {
        for (int k = 0; k < 3; k++)
            (void)fwdio_ckpt_test(mid, &d);
        TC_EXPECT(fwdio_ckpt_wait(mid), FWDIO_OK, "the wait after tests");
    }
    fwdio_ckpt_free(slow);
    fwdio_ckpt_free(fast);
    fwdio_ckpt_free(mid);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0)
        TC_CHECK(exists(dir, "slow", 1, "manifest") && exists(dir, "fast", 2, "manifest") &&
                     exists(dir, "mid", 3, "manifest"),
                 "a version done with FWDIO_OK has no manifest");
    check_bytes(dir, "slow", 1, size);
    check_bytes(dir, "fast", 2, size);
    check_bytes(dir, "mid", 3, size);
    uint64_t v = 0;
    TC_EXPECT(fwdio_ckpt_verify(rt, "slow", 1, &o), FWDIO_OK, "verify of the slow version");
    TC_EXPECT(fwdio_ckpt_latest(rt, "mid", &o, &v), FWDIO_OK, "latest of mid");
    TC_CHECK(v == 3, "latest of mid is %llu", (unsigned long long)v);
}

/* The progress mode: test and wait from a callback on the progress thread. */
static fwdio_ckpt_t *g_cb_ck;
static atomic_int g_cb_test_rc, g_cb_wait_rc, g_cb_ran;

static void complete_cb(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    (void)status;
    (void)user;
    int d = 0;
    atomic_store(&g_cb_test_rc, fwdio_ckpt_test(g_cb_ck, &d));
    atomic_store(&g_cb_wait_rc, fwdio_ckpt_wait(g_cb_ck));
    atomic_store(&g_cb_ran, 1);
}

static void case_misuse(fwdio_runtime_t *rt, const char *dir)
{
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = dir;
    const uint64_t size = 70000;
    int d = 7;
    tc_phase("misuse: NULL arguments");
    TC_EXPECT(fwdio_ckpt_test(NULL, &d), FWDIO_EINVAL, "test(NULL)");
    tc_phase("misuse: a test before the close");
    fwdio_ckpt_t *ck = start_version(rt, "early", 1, size, &o, 1);
    if (!ck)
        return;
    TC_EXPECT(fwdio_ckpt_test(ck, NULL), FWDIO_EINVAL, "test(ck, NULL)");
    /* One rank tests before it closes: only it hears it, at once. */
    if (tc_rank == 0) {
        d = 7;
        TC_EXPECT(fwdio_ckpt_test(ck, &d), FWDIO_ENOTCLOSED, "a test before the close");
        TC_CHECK(d == 0, "done %d before the close", d);
    }
    TC_EXPECT(fwdio_ckpt_close(ck), FWDIO_OK, "fwdio_ckpt_close");
    if (g_mode == FWDIO_CALLBACKS_ON_PROGRESS) {
        tc_phase("misuse: test and wait on the progress thread");
        g_cb_ck = ck;
        atomic_store(&g_cb_ran, 0);
        fwdio_callbacks_t cbs = {.complete = complete_cb};
        fwdio_file_t *f = NULL;
        char path[4096];
        tc_path(path, sizeof path, "misuse-cb");
        TC_EXPECT(fwdio_open(rt, path, 8, NULL, &cbs, &f), FWDIO_OK, "fwdio_open");
        if (tc_rank == 0)
            TC_EXPECT(fwdio_write(f, "12345678", 8, 0), FWDIO_OK, "fwdio_write");
        TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
        TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
        fwdio_file_free(f);
        TC_CHECK(atomic_load(&g_cb_ran), "the complete callback did not run");
        TC_EXPECT(atomic_load(&g_cb_test_rc), FWDIO_ECONTEXT, "fwdio_ckpt_test from a callback");
        TC_EXPECT(atomic_load(&g_cb_wait_rc), FWDIO_ECONTEXT, "fwdio_ckpt_wait from a callback");
    }
    TC_EXPECT(fwdio_ckpt_wait(ck), FWDIO_OK, "the version tested before its close");
    fwdio_ckpt_free(ck);
    check_bytes(dir, "early", 1, size);

    tc_phase("misuse: a version whose pwrite fails");
    ck = start_version(rt, "bad", 7, size, &o, 0);
    if (!ck)
        return;
    int rc = FWDIO_OK;
    d = 0;
    for (int k = 0; !d && k < 200000; k++) {
        rc = fwdio_ckpt_test(ck, &d);
        if (!d)
            nap_ms(1);
    }
    TC_CHECK(d, "the failing version never finished");
    TC_EXPECT(rc, FWDIO_EWRITE, "the failing version's test");
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc), "ranks disagree on the failing version");
    TC_EXPECT(fwdio_ckpt_test(ck, &d), FWDIO_EWRITE, "a test after the failure");
    TC_EXPECT(fwdio_ckpt_wait(ck), FWDIO_EWRITE, "a wait after the failure");
    fwdio_ckpt_free(ck);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0)
        TC_CHECK(!exists(dir, "bad", 7, "manifest") && !exists(dir, "bad", 7, "ckpt"),
                 "the failed version left a manifest or a data file");
    uint64_t v = 0;
    TC_EXPECT(fwdio_ckpt_latest(rt, "bad", &o, &v), FWDIO_ENOCKPT, "latest of the failed set");
}

static int upto(fwdio_runtime_t *rt, const fwdio_ckpt_options_t *o, uint64_t max,
                uint64_t *version)
{
    *version = 12345;
    int rc = fwdio_ckpt_latest_upto(rt, "up", o, max, version);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc) && tc_all_same(MPI_COMM_WORLD, (long)*version),
             "fwdio_ckpt_latest_upto(%llu): ranks got different answers",
             (unsigned long long)max);
    return rc;
}

static void case_upto(fwdio_runtime_t *rt, const char *dir)
{
    fwdio_ckpt_options_t o;
    fwdio_ckpt_options_init(&o);
    o.dir = dir;
    o.keep = 3;
    const uint64_t size = 40000;
    tc_phase("upto: versions 10, 20, 30");
    for (uint64_t v = 10; v <= 30; v += 10) {
        fwdio_ckpt_t *ck = start_version(rt, "up", v, size + v, &o, 0);
        if (ck)
            TC_EXPECT(fwdio_ckpt_wait(ck), FWDIO_OK, "fwdio_ckpt_wait");
        fwdio_ckpt_free(ck);
    }
    uint64_t v;
    TC_EXPECT(upto(rt, &o, 25, &v), FWDIO_OK, "upto 25");
    TC_CHECK(v == 20, "upto 25 gives %llu, want 20", (unsigned long long)v);
    TC_EXPECT(upto(rt, &o, 30, &v), FWDIO_OK, "upto 30");
    TC_CHECK(v == 30, "upto 30 gives %llu, want 30", (unsigned long long)v);
    TC_EXPECT(upto(rt, &o, UINT64_MAX, &v), FWDIO_OK, "upto UINT64_MAX");
    TC_CHECK(v == 30, "upto UINT64_MAX gives %llu, want 30", (unsigned long long)v);
    TC_EXPECT(upto(rt, &o, 9, &v), FWDIO_ENOCKPT, "upto 9 (below every version)");
    tc_phase("upto: a damaged version 20");
    if (tc_rank == 0) {
        char p[4096];
        snprintf(p, sizeof p, "%s/up.v20.ckpt", dir);
        int fd = open(p, O_RDWR);
        unsigned char b = 0;
        TC_CHECK(fd >= 0 && pread(fd, &b, 1, 777) == 1, "read %s", p);
        b ^= 1;
        TC_CHECK(fd >= 0 && pwrite(fd, &b, 1, 777) == 1, "damage %s", p);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(upto(rt, &o, 25, &v), FWDIO_OK, "upto 25 past the damaged 20");
    TC_CHECK(v == 10, "upto 25 past the damaged 20 gives %llu, want 10", (unsigned long long)v);
    TC_EXPECT(upto(rt, &o, 35, &v), FWDIO_OK, "upto 35");
    TC_CHECK(v == 30, "upto 35 gives %llu, want 30 (the damaged 20 is below)",
             (unsigned long long)v);
    tc_phase("upto: ranks passing different bounds");
    int rc = upto(rt, &o, tc_rank == 0 ? 25 : 35, &v);
    TC_EXPECT(rc, FWDIO_EINVAL, "different bounds");
    TC_EXPECT(fwdio_ckpt_latest_upto(rt, "up", &o, 30, NULL), FWDIO_EINVAL, "NULL version");
    TC_EXPECT(fwdio_ckpt_latest_upto(rt, "bad/name", &o, 30, &v), FWDIO_EINVAL, "a bad name");
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *which = "";
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else {
            fprintf(stderr, "usage: %s --case poll|misuse|upto [--callback-mode poll|progress]"
                            " [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    const char *dir = tc_tmpdir();
    char rules[8192] = "";
    if (!strcmp(which, "poll")) /* the data of "slow" goes to ".slow.v1.ckpt.fwdio-tmp" */
        snprintf(rules, sizeof rules, "pwrite:slow=%d:path=%s/.slow.v1.ckpt", SLOW_MS, dir);
    else if (!strcmp(which, "misuse"))
        snprintf(rules, sizeof rules, "pwrite:eio:path=%s/.bad.v7.ckpt", dir);
    if (*rules)
        setenv("FWDIO_FAULT", rules, 1);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (!strcmp(which, "poll"))
        case_poll(rt, dir);
    else if (!strcmp(which, "misuse"))
        case_misuse(rt, dir);
    else if (!strcmp(which, "upto"))
        case_upto(rt, dir);
    else
        tc_fail("no case %s", which);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_ckpt_test");
}
