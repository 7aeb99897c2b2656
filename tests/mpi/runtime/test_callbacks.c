/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The callbacks, in the mode given by --callback-mode poll|progress.
 *
 *  1. plain: ready then complete, each exactly once per rank, with the same
 *     status on every rank (MPI_Allreduce), on the application thread
 *     (ON_POLL) or on another thread (ON_PROGRESS). In ON_POLL mode nothing
 *     runs before the application polls, and fwdio_poll reports exactly the
 *     two callbacks it ran; in ON_PROGRESS mode fwdio_poll has nothing to run.
 *  2. an empty file closed at once still reports ready before complete.
 *  3. fwdio calls from inside callbacks: the ready callback writes the rank's
 *     data and closes the file (allowed in both modes). In ON_POLL mode the
 *     complete callback opens, writes and closes the next file (any call but
 *     fwdio_finalize is allowed); in ON_PROGRESS mode fwdio_wait, fwdio_poll,
 *     and fwdio_open from a callback give FWDIO_ECONTEXT, while
 *     fwdio_test, fwdio_file_error and fwdio_strerror work.
 *  4. NULL callbacks, and callbacks with only `complete` set.
 *  5. two application threads writing halves of the rank's slice of one file
 *     at the same time.
 *  6. fwdio_wait_ready: it returns once the ready callback has run on this
 *     rank (in ON_POLL mode it runs it), with the open status: FWDIO_OK, and
 *     FWDIO_EOPEN on every rank for a file whose directory does not exist;
 *     FWDIO_EINVAL for NULL. (From a callback: FWDIO_ECONTEXT, in 3.)
 *  8. callbacks never nest (test_nesting).
 *  7. only with --only finalize-in-callback (a hang would hide the rest):
 *     fwdio_finalize from a complete callback gives FWDIO_ECONTEXT.
 *  Every file is verified byte for byte.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static fwdio_runtime_t *g_rt;

static fwdio_options_t small_opts(int writers)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.stripe_size = 64 << 10;
    o.write_size = 16 << 10;
    o.writers = writers;
    return o;
}

static void my_slice(uint64_t size, uint64_t *off, uint64_t *len)
{
    uint64_t lo = size * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t hi = size * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    *off = lo;
    *len = hi - lo;
}

static fwdio_file_t *open_or_die(const char *name, uint64_t size, const fwdio_options_t *o,
                                 const fwdio_callbacks_t *cbs, char *path, size_t path_size)
{
    tc_path(path, path_size, name);
    fwdio_file_t *f = NULL;
    tc_phase("open %s", name);
    int rc = fwdio_open(g_rt, path, size, o, cbs, &f);
    if (rc != FWDIO_OK || !f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return f;
}

/* 1. ------------------------------------------------------------------------ */
static void test_plain(void)
{
    const uint64_t size = (2 << 20) + 5;
    const uint64_t seed = 401;
    char path[4096];
    tc_cbstate_t st;
    tc_cb_init(&st);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    fwdio_options_t o = small_opts(2);
    fwdio_file_t *f = open_or_die("plain.dat", size, &o, &cbs, path, sizeof path);
    uint64_t off, len;
    my_slice(size, &off, &len);
    tc_phase("plain: write");
    TC_EXPECT(tc_write_pattern(f, off, len, seed, 20000), FWDIO_OK, "plain: write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "plain: close");
    if (g_mode == FWDIO_CALLBACKS_ON_POLL) {
        /* Give the runtime time to finish everywhere; still nothing may run
         * until this thread polls. */
        MPI_Barrier(MPI_COMM_WORLD);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        TC_CHECK(atomic_load(&st.ready_count) == 0 && atomic_load(&st.complete_count) == 0,
                 "plain: ON_POLL callbacks ran (ready %d, complete %d) before any poll",
                 atomic_load(&st.ready_count), atomic_load(&st.complete_count));
    }
    tc_phase("plain: polling");
    long ran = 0;
    struct timespec ts = {0, 200 * 1000};
    while (atomic_load(&st.complete_count) == 0) {
        int n = fwdio_poll(g_rt);
        if (n < 0) {
            tc_fail("plain: fwdio_poll returned %d (%s)", n, fwdio_strerror(n));
            break;
        }
        ran += n;
        if (n == 0)
            nanosleep(&ts, NULL);
    }
    if (g_mode == FWDIO_CALLBACKS_ON_POLL)
        TC_CHECK(ran == 2, "plain: fwdio_poll ran %ld callbacks in total, expected 2 (ready, "
                           "complete)", ran);
    else
        TC_CHECK(ran == 0, "plain: fwdio_poll ran %ld callbacks in ON_PROGRESS mode, expected 0",
                 ran);
    int done = 0;
    TC_EXPECT(fwdio_test(f, &done), FWDIO_OK, "plain: fwdio_test after complete");
    TC_CHECK(done == 1, "plain: fwdio_test says not done after the complete callback");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "plain: fwdio_wait");
    TC_CHECK(fwdio_poll(g_rt) == 0, "plain: fwdio_poll ran callbacks after everything completed");
    tc_cb_check(MPI_COMM_WORLD, &st, "plain", FWDIO_OK, FWDIO_OK, g_mode, f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
    fwdio_file_free(f);
}

/* 2. ------------------------------------------------------------------------ */
static void test_empty_fast(void)
{
    char path[4096];
    tc_cbstate_t st;
    tc_cb_init(&st);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    fwdio_options_t o = small_opts(0);
    fwdio_file_t *f = open_or_die("empty_fast.dat", 0, &o, &cbs, path, sizeof path);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "empty: close");
    tc_phase("empty: wait");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "empty: fwdio_wait");
    tc_cb_check(MPI_COMM_WORLD, &st, "empty", FWDIO_OK, FWDIO_OK, g_mode, f);
    tc_verify_full(MPI_COMM_WORLD, path, 0, 0);
    fwdio_file_free(f);
}

/* 3. ------------------------------------------------------------------------ */
typedef struct chain {
    uint64_t size_a, size_b, seed_a, seed_b;
    char path_a[4096], path_b[4096];
    atomic_int ready_write_rc, ready_close_rc;
    atomic_int forbidden_checked;
    tc_cbstate_t st_b;
    _Atomic(fwdio_file_t *) file_b;
    atomic_int open_b_rc;
    atomic_int b_write_rc, b_close_rc;
} chain_t;

static chain_t g_chain;

static void chain_ready_a(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)st;
    if (status != FWDIO_OK)
        return;
    uint64_t off, len;
    my_slice(g_chain.size_a, &off, &len);
    atomic_store(&g_chain.ready_write_rc, tc_write_pattern(f, off, len, g_chain.seed_a, 30000));
    atomic_store(&g_chain.ready_close_rc, fwdio_close(f));
}

static void chain_complete_a(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)st;
    (void)status;
    /* Checks recorded with tc_fail are thread-safe. */
    if (g_mode == FWDIO_CALLBACKS_ON_PROGRESS) {
        TC_EXPECT(fwdio_wait(f), FWDIO_ECONTEXT, "fwdio_wait from an ON_PROGRESS callback");
        TC_EXPECT(fwdio_wait_ready(f), FWDIO_ECONTEXT,
                  "fwdio_wait_ready from an ON_PROGRESS callback");
        TC_EXPECT(fwdio_poll(g_rt), FWDIO_ECONTEXT, "fwdio_poll from an ON_PROGRESS callback");
        fwdio_file_t *nf = NULL;
        char p[4096];
        tc_path(p, sizeof p, "never_opened.dat");
        TC_EXPECT(fwdio_open(g_rt, p, 10, NULL, NULL, &nf), FWDIO_ECONTEXT,
                  "fwdio_open from an ON_PROGRESS callback");
        int done = -1;
        int rc = fwdio_test(f, &done);
        TC_CHECK(rc != FWDIO_ECONTEXT && rc != FWDIO_EINVAL,
                 "fwdio_test from an ON_PROGRESS callback returned %d (%s)", rc,
                 fwdio_strerror(rc));
        const char *s = fwdio_file_error(f);
        TC_CHECK(s != NULL, "fwdio_file_error from an ON_PROGRESS callback returned NULL");
        TC_CHECK(fwdio_strerror(FWDIO_EAGAIN) != NULL, "fwdio_strerror returned NULL");
        atomic_store(&g_chain.forbidden_checked, 1);
    } else {
        /* ON_POLL: a callback may open, write and close the next file. */
        fwdio_callbacks_t cbs = tc_cb_callbacks(&g_chain.st_b);
        fwdio_options_t o = small_opts(3);
        o.layout = FWDIO_LAYOUT_CYCLIC;
        fwdio_file_t *nf = NULL;
        int rc = fwdio_open(g_rt, g_chain.path_b, g_chain.size_b, &o, &cbs, &nf);
        atomic_store(&g_chain.open_b_rc, rc);
        if (rc == FWDIO_OK && nf) {
            uint64_t off, len;
            my_slice(g_chain.size_b, &off, &len);
            atomic_store(&g_chain.b_write_rc, tc_write_pattern(nf, off, len, g_chain.seed_b, 0));
            atomic_store(&g_chain.b_close_rc, fwdio_close(nf));
        }
        atomic_store(&g_chain.file_b, nf);
        atomic_store(&g_chain.forbidden_checked, 1);
    }
}

static void test_calls_from_callbacks(void)
{
    memset(&g_chain, 0, sizeof g_chain);
    g_chain.size_a = (1 << 20) + 999;
    g_chain.size_b = 700001;
    g_chain.seed_a = 501;
    g_chain.seed_b = 502;
    atomic_init(&g_chain.ready_write_rc, 1);
    atomic_init(&g_chain.ready_close_rc, 1);
    atomic_init(&g_chain.open_b_rc, 1);
    atomic_init(&g_chain.b_write_rc, 1);
    atomic_init(&g_chain.b_close_rc, 1);
    tc_path(g_chain.path_b, sizeof g_chain.path_b, "chain_b.dat");
    tc_cb_init(&g_chain.st_b);

    tc_cbstate_t st;
    tc_cb_init(&st);
    st.on_ready = chain_ready_a;
    st.on_complete = chain_complete_a;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    fwdio_options_t o = small_opts(2);
    fwdio_file_t *f = open_or_die("chain_a.dat", g_chain.size_a, &o, &cbs, g_chain.path_a,
                                  sizeof g_chain.path_a);
    /* Nothing written or closed here: the ready callback does both. Poll until
     * the complete callback has run (fwdio_wait needs this rank to have closed). */
    tc_phase("chain: waiting for the callbacks of chain_a.dat");
    tc_poll_until_complete(g_rt, &st);
    TC_EXPECT(atomic_load(&g_chain.ready_write_rc), FWDIO_OK, "fwdio_write from a ready callback");
    TC_EXPECT(atomic_load(&g_chain.ready_close_rc), FWDIO_OK, "fwdio_close from a ready callback");
    TC_CHECK(atomic_load(&g_chain.forbidden_checked) == 1, "chain: complete hook did not run");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "chain: fwdio_wait(chain_a.dat)");
    tc_cb_check(MPI_COMM_WORLD, &st, "chain_a.dat", FWDIO_OK, FWDIO_OK, g_mode, f);
    tc_verify_full(MPI_COMM_WORLD, g_chain.path_a, g_chain.size_a, g_chain.seed_a);
    fwdio_file_free(f);

    if (g_mode == FWDIO_CALLBACKS_ON_POLL) {
        TC_EXPECT(atomic_load(&g_chain.open_b_rc), FWDIO_OK, "fwdio_open from a complete callback");
        TC_EXPECT(atomic_load(&g_chain.b_write_rc), FWDIO_OK,
                  "fwdio_write from a complete callback");
        TC_EXPECT(atomic_load(&g_chain.b_close_rc), FWDIO_OK,
                  "fwdio_close from a complete callback");
        fwdio_file_t *fb = atomic_load(&g_chain.file_b);
        int ok = fb != NULL;
        if (!tc_all_same(MPI_COMM_WORLD, ok) || !ok) {
            tc_fail("chain_b.dat was not opened on every rank");
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        tc_phase("chain: fwdio_wait(chain_b.dat)");
        TC_EXPECT(fwdio_wait(fb), FWDIO_OK, "chain: fwdio_wait(chain_b.dat)");
        tc_cb_check(MPI_COMM_WORLD, &g_chain.st_b, "chain_b.dat", FWDIO_OK, FWDIO_OK, g_mode, fb);
        tc_verify_full(MPI_COMM_WORLD, g_chain.path_b, g_chain.size_b, g_chain.seed_b);
        fwdio_file_free(fb);
    }
}

/* 6. (run alone with --finalize-in-callback: a library that does not refuse the
 * call hangs, and the hang must not hide the other checks) ------------------ */
static atomic_int g_fin_rc;

static void finalize_in_complete(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)st;
    (void)f;
    (void)status;
    tc_phase("calling fwdio_finalize from a complete callback (must return FWDIO_ECONTEXT)");
    atomic_store(&g_fin_rc, fwdio_finalize(g_rt));
    tc_phase("back from fwdio_finalize in a complete callback");
}

static void test_finalize_in_callback(void)
{
    const uint64_t size = 200003, seed = 901;
    char path[4096];
    atomic_init(&g_fin_rc, 1);
    tc_cbstate_t st;
    tc_cb_init(&st);
    st.on_complete = finalize_in_complete;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    fwdio_options_t o = small_opts(2);
    fwdio_file_t *f = open_or_die("finalize_in_callback.dat", size, &o, &cbs, path, sizeof path);
    uint64_t off, len;
    my_slice(size, &off, &len);
    TC_EXPECT(tc_write_pattern(f, off, len, seed, 0), FWDIO_OK, "write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "close");
    tc_phase("polling until the complete callback has run");
    tc_poll_until_complete(g_rt, &st);
    TC_EXPECT(atomic_load(&g_fin_rc), FWDIO_ECONTEXT, "fwdio_finalize from a complete callback");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    tc_cb_check(MPI_COMM_WORLD, &st, "finalize_in_callback.dat", FWDIO_OK, FWDIO_OK, g_mode, f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
    fwdio_file_free(f);
}

/* 4. ------------------------------------------------------------------------ */
static void test_partial_callbacks(void)
{
    const uint64_t size = 300007, seed = 601;
    char path1[4096], path2[4096];
    fwdio_options_t o = small_opts(1);
    fwdio_file_t *f1 = open_or_die("no_callbacks.dat", size, &o, NULL, path1, sizeof path1);

    tc_cbstate_t st;
    tc_cb_init(&st);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    cbs.ready = NULL; /* only complete */
    o = small_opts(3);
    fwdio_file_t *f2 = open_or_die("complete_only.dat", size, &o, &cbs, path2, sizeof path2);
    uint64_t off, len;
    my_slice(size, &off, &len);
    tc_phase("partial callbacks: write");
    TC_EXPECT(tc_write_pattern(f1, off, len, seed, 7777), FWDIO_OK, "no_callbacks: write");
    TC_EXPECT(tc_write_pattern(f2, off, len, seed + 1, 7777), FWDIO_OK, "complete_only: write");
    TC_EXPECT(fwdio_close(f2), FWDIO_OK, "complete_only: close");
    TC_EXPECT(fwdio_close(f1), FWDIO_OK, "no_callbacks: close");
    tc_phase("partial callbacks: wait");
    TC_EXPECT(fwdio_wait(f1), FWDIO_OK, "no_callbacks: fwdio_wait");
    TC_EXPECT(fwdio_wait(f2), FWDIO_OK, "complete_only: fwdio_wait");
    TC_CHECK(atomic_load(&st.complete_count) == 1 && atomic_load(&st.ready_count) == 0,
             "complete_only: complete ran %d times, ready %d times (expected 1 and 0)",
             atomic_load(&st.complete_count), atomic_load(&st.ready_count));
    int cs = atomic_load(&st.complete_status);
    TC_CHECK(cs == FWDIO_OK, "complete_only: status %d (%s)", cs, fwdio_strerror(cs));
    if (!tc_all_same(MPI_COMM_WORLD, cs))
        tc_fail("complete_only: complete status differs between ranks");
    tc_verify_full(MPI_COMM_WORLD, path1, size, seed);
    tc_verify_full(MPI_COMM_WORLD, path2, size, seed + 1);
    fwdio_file_free(f1);
    fwdio_file_free(f2);
}

/* 5. ------------------------------------------------------------------------ */
typedef struct half {
    fwdio_file_t *f;
    uint64_t off, len, seed;
    int rc;
} half_t;

static void *write_half(void *arg)
{
    half_t *h = arg;
    /* Interleave with the other thread: write every other 4000-byte piece. */
    h->rc = FWDIO_OK;
    for (uint64_t p = h->off; p < h->off + h->len && h->rc == FWDIO_OK; p += 8000) {
        uint64_t n = h->off + h->len - p < 4000 ? h->off + h->len - p : 4000;
        h->rc = tc_write_pattern(h->f, p, n, h->seed, 0);
    }
    return NULL;
}

static void test_threads(void)
{
    const uint64_t size = (1 << 20) + 12345, seed = 701;
    char path[4096];
    tc_cbstate_t st;
    tc_cb_init(&st);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    fwdio_options_t o = small_opts(0);
    o.layout = FWDIO_LAYOUT_CYCLIC;
    fwdio_file_t *f = open_or_die("threads.dat", size, &o, &cbs, path, sizeof path);
    uint64_t off, len;
    my_slice(size, &off, &len);
    half_t h[2] = {{f, off, len, seed, 0}, {f, off + 4000, len > 4000 ? len - 4000 : 0, seed, 0}};
    pthread_t th[2];
    tc_phase("threads: two writer threads");
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, write_half, &h[i]) != 0) {
            tc_fail("pthread_create failed");
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        TC_EXPECT(h[i].rc, FWDIO_OK, "threads: fwdio_write from a second thread");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "threads: close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "threads: fwdio_wait");
    tc_cb_check(MPI_COMM_WORLD, &st, "threads", FWDIO_OK, FWDIO_OK, g_mode, f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
    fwdio_file_free(f);
}

/* 6. ------------------------------------------------------------------------ */
static void test_wait_ready(void)
{
    char path[4096];
    tc_cbstate_t st;
    tc_cb_init(&st);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&st);
    fwdio_options_t o = small_opts(2);
    fwdio_file_t *f = open_or_die("wait_ready.dat", 1000, &o, &cbs, path, sizeof path);
    tc_phase("wait_ready");
    TC_EXPECT(fwdio_wait_ready(f), FWDIO_OK, "fwdio_wait_ready");
    TC_CHECK(atomic_load(&st.ready_count) == 1 && atomic_load(&st.complete_count) == 0,
             "fwdio_wait_ready returned with ready %d, complete %d callbacks run",
             atomic_load(&st.ready_count), atomic_load(&st.complete_count));
    TC_EXPECT(fwdio_wait_ready(f), FWDIO_OK, "fwdio_wait_ready again");
    uint64_t off, len;
    my_slice(1000, &off, &len);
    TC_EXPECT(tc_write_pattern(f, off, len, 77, 300), FWDIO_OK, "wait_ready: write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "wait_ready: close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "wait_ready: fwdio_wait");
    tc_cb_check(MPI_COMM_WORLD, &st, "wait_ready", FWDIO_OK, FWDIO_OK, g_mode, f);
    tc_verify_full(MPI_COMM_WORLD, path, 1000, 77);
    fwdio_file_free(f);

    /* a directory that does not exist: the open fails on every rank */
    tc_cb_init(&st);
    cbs = tc_cb_callbacks(&st);
    f = open_or_die("no-such-dir/wait_ready.dat", 1000, &o, &cbs, path, sizeof path);
    TC_EXPECT(fwdio_wait_ready(f), FWDIO_EOPEN, "fwdio_wait_ready of a file that cannot open");
    TC_CHECK(atomic_load(&st.ready_count) == 1, "the failed open's ready callback ran %d times",
             atomic_load(&st.ready_count));
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "wait_ready: close of the failed file");
    TC_EXPECT(fwdio_wait(f), FWDIO_EOPEN, "wait_ready: fwdio_wait of the failed file");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_wait_ready(NULL), FWDIO_EINVAL, "fwdio_wait_ready(NULL)");
}

/* 8. Callbacks never nest: a stream's two steps complete before the
 *    application polls, so both step callbacks are queued; the first calls
 *    fwdio_poll, fwdio_test and fwdio_step_test, which must not run the
 *    second (nor the complete) inside it. Every callback runs once, in
 *    order, none inside another, and fwdio_step_wait of the second step
 *    returns (it waited for ever when a nested later step's callback had
 *    counted itself done before the earlier one's). */
typedef struct nest_state {
    atomic_int depth, max_depth, steps, complete, order_bad;
} nest_state_t;

static void nest_enter(nest_state_t *n)
{
    int d = atomic_fetch_add(&n->depth, 1) + 1;
    if (d > atomic_load(&n->max_depth))
        atomic_store(&n->max_depth, d);
}

static void nest_step(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    nest_state_t *n = user;
    nest_enter(n);
    TC_EXPECT(status, FWDIO_OK, "nesting: step status");
    if ((int)step != atomic_load(&n->steps) || atomic_load(&n->complete))
        atomic_fetch_add(&n->order_bad, 1);
    if (g_mode == FWDIO_CALLBACKS_ON_POLL)
        TC_EXPECT(fwdio_poll(g_rt), 0, "nesting: fwdio_poll inside a callback runs none");
    int done = -1;
    TC_EXPECT(fwdio_test(f, &done), FWDIO_OK, "nesting: fwdio_test inside a step callback");
    TC_EXPECT(fwdio_step_test(f, step, &done), FWDIO_OK,
              "nesting: fwdio_step_test inside a step callback");
    atomic_fetch_add(&n->steps, 1);
    atomic_fetch_sub(&n->depth, 1);
}

static void nest_complete(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    nest_state_t *n = user;
    nest_enter(n);
    TC_EXPECT(status, FWDIO_OK, "nesting: complete status");
    if (atomic_load(&n->steps) != 2)
        atomic_fetch_add(&n->order_bad, 1);
    atomic_store(&n->complete, 1);
    atomic_fetch_sub(&n->depth, 1);
}

static void test_nesting(void)
{
    char path[4096];
    nest_state_t n;
    memset(&n, 0, sizeof n);
    fwdio_callbacks_t cbs = {.step = nest_step, .complete = nest_complete, .user = &n};
    fwdio_options_t o = small_opts(2);
    tc_phase("nesting");
    fwdio_file_t *f = open_or_die("nesting.dat", FWDIO_SIZE_GROWS, &o, &cbs, path, sizeof path);
    const uint64_t step_len = 40000;
    for (int k = 0; k < 2; k++) {
        uint64_t off, len;
        my_slice(step_len, &off, &len);
        TC_EXPECT(tc_write_pattern(f, (uint64_t)k * step_len + off, len, 91, 500), FWDIO_OK,
                  "nesting: write");
        TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "nesting: fwdio_step_end");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "nesting: close");
    usleep(300000); /* both steps and the file complete meanwhile: their callbacks queue */
    TC_EXPECT(fwdio_step_wait(f, 1), FWDIO_OK, "nesting: fwdio_step_wait(1)");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "nesting: fwdio_wait");
    TC_CHECK(atomic_load(&n.max_depth) == 1, "nesting: callbacks nested %d deep",
             atomic_load(&n.max_depth));
    TC_CHECK(atomic_load(&n.steps) == 2 && atomic_load(&n.complete) == 1 &&
                 atomic_load(&n.order_bad) == 0,
             "nesting: %d step callbacks, complete %d, %d out of order", atomic_load(&n.steps),
             atomic_load(&n.complete), atomic_load(&n.order_bad));
    tc_verify_full(MPI_COMM_WORLD, path, 2 * step_len, 91);
    fwdio_file_free(f);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        else {
            fprintf(stderr, "usage: %s [--callback-mode poll|progress] [--timeout SEC]\n"
                            "  [--only plain|empty|chain|partial|threads|wait-ready|nesting|\n"
                            "          finalize-in-callback]\n"
                            "  (finalize-in-callback runs only when named)\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();

    tc_phase("fwdio_init");
    g_rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (tc_rank == 0)
        tc_note("callback mode %s",
                g_mode == FWDIO_CALLBACKS_ON_POLL ? "ON_POLL" : "ON_PROGRESS");

    static const struct {
        const char *name;
        void (*run)(void);
        int by_default;
    } sections[] = {
        {"plain", test_plain, 1},
        {"empty", test_empty_fast, 1},
        {"chain", test_calls_from_callbacks, 1},
        {"partial", test_partial_callbacks, 1},
        {"threads", test_threads, 1},
        {"wait-ready", test_wait_ready, 1},
        {"nesting", test_nesting, 1},
        {"finalize-in-callback", test_finalize_in_callback, 0},
    };
    int ran = 0;
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (only ? strcmp(only, sections[i].name) == 0 : sections[i].by_default) {
            sections[i].run();
            ran++;
        }
    }
    if (ran == 0) {
        tc_fail("--only %s names no section", only ? only : "(none)");
    }

    tc_phase("fwdio_finalize");
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_callbacks");
}
