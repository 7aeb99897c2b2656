/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The staging budget on its own (forwarder/write/staging.h): the bytes of copied
 * writes a rank holds until they are sent. A one-rank runtime with a 64 KiB
 * budget; reservations are made with the runtime lock held, as fwdio_write
 * makes them, some of them plain numbers, some carried by real combined
 * messages:
 *
 *   accounting  reserve and release move the runtime's and the file's staged
 *               bytes and their peaks; fwdio_runtime_stats reports them
 *   full        the budget admits exactly its size; one byte more is
 *               FWDIO_EAGAIN without waiting and reserves nothing; an empty
 *               budget admits a whole-budget reservation
 *   wait        a reservation that may wait sleeps until another thread
 *               releases room, then takes it
 *   closed      a reservation waiting for room on a file that another thread
 *               closes returns FWDIO_ECLOSED once it wakes (at the latest when
 *               room is made) and counts nothing; every later one is refused
 *               at once; fwdio_write and fwdio_try_write say the same
 *   failed      once a file's failure is known (a path whose directory does
 *               not exist: FWDIO_EOPEN), reservations are FWDIO_EFAILED
 *   own bytes   part of the budget sits in an open combined message: a
 *               reservation that does not fit seals and queues it, even when
 *               it may not wait (FWDIO_EAGAIN), and one that may wait gets
 *               its room as soon as that message is sent, long before the
 *               progress thread would send it by age (poll_max_us is 30 s)
 *
 * A reservation that waited when it must not would hang the test, which the
 * test's watchdog then fails.
 */
#include "forwarder_test.h"

#include "write/combine.h"
#include "pattern.h"
#include "write/staging.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BUDGET = 64 << 10, STRIPE = 4096, UNIT = 1024 };
static const uint64_t SIZE = 1 << 20;

static fwdio_runtime_t *g_rt;

static fwdio_file_t *open_file(const char *name, const fwdio_callbacks_t *cbs)
{
    char path[4096];
    tc_path(path, sizeof path, name);
    fwdio_options_t o = ft_options(STRIPE, UNIT, 1, FWDIO_LAYOUT_BLOCK);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(g_rt, path, SIZE, &o, cbs, &f), FWDIO_OK, name);
    if (!f)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return f;
}

static int reserve(fwdio_file_t *f, uint64_t n, int may_wait)
{
    fwdioi_rt_lock(g_rt->engine);
    int rc = fwdioi_staging_reserve_locked(f, n, may_wait);
    fwdioi_rt_unlock(g_rt->engine);
    return rc;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* ---- accounting ---- */

static void step_accounting(fwdio_file_t *f)
{
    tc_phase("accounting");
    fwdioi_rt_lock(g_rt->engine);
    TC_CHECK(g_rt->staged == 0 && f->staged_file == 0, "something is staged at the start");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 1000, 0), FWDIO_OK, "reserve 1000");
    TC_CHECK(g_rt->staged == 1000 && f->staged_file == 1000 && g_rt->staged_peak >= 1000 &&
                 f->stats.peak_staged_bytes == 1000,
             "after reserving 1000: staged %llu, file %llu, peaks %llu and %llu",
             (unsigned long long)g_rt->staged, (unsigned long long)f->staged_file,
             (unsigned long long)g_rt->staged_peak,
             (unsigned long long)f->stats.peak_staged_bytes);
    fwdioi_staging_release_locked(f, 400);
    TC_CHECK(g_rt->staged == 600 && f->staged_file == 600 && f->stats.peak_staged_bytes == 1000,
             "after releasing 400: staged %llu, file %llu, peak %llu",
             (unsigned long long)g_rt->staged, (unsigned long long)f->staged_file,
             (unsigned long long)f->stats.peak_staged_bytes);
    fwdioi_rt_unlock(g_rt->engine);
    fwdioi_staging_release(f, 600); /* takes the lock itself */
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(g_rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(rs.staged == 0 && rs.staging_peak >= 1000 && rs.staging_budget == BUDGET,
             "runtime stats: staged %llu, peak %llu, budget %llu", (unsigned long long)rs.staged,
             (unsigned long long)rs.staging_peak, (unsigned long long)rs.staging_budget);
}

/* ---- a full budget ---- */

static void step_full(fwdio_file_t *f)
{
    tc_phase("full");
    fwdioi_rt_lock(g_rt->engine);
    TC_EXPECT(fwdioi_staging_reserve_locked(f, BUDGET - 10, 0), FWDIO_OK, "reserve budget - 10");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 10, 0), FWDIO_OK, "the last 10 bytes");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 1, 0), FWDIO_EAGAIN, "one byte over the budget");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, BUDGET, 0), FWDIO_EAGAIN, "a budget on a full one");
    TC_CHECK(g_rt->staged == BUDGET && f->staged_file == BUDGET,
             "refused reservations changed the count: %llu staged",
             (unsigned long long)g_rt->staged);
    fwdioi_staging_release_locked(f, BUDGET);
    TC_EXPECT(fwdioi_staging_reserve_locked(f, BUDGET, 0), FWDIO_OK, "the whole budget, empty");
    fwdioi_staging_release_locked(f, BUDGET);
    TC_CHECK(g_rt->staged == 0, "%llu bytes staged after releasing everything",
             (unsigned long long)g_rt->staged);
    fwdioi_rt_unlock(g_rt->engine);
}

/* ---- waiting for room ---- */

typedef struct helper {
    fwdio_file_t *release_from; /* gives back `release` bytes of this file's */
    uint64_t release;
    fwdio_file_t *close_first; /* closed before the release, if set */
    atomic_int done;           /* set just before the release */
} helper_t;

static void *helper_main(void *arg)
{
    helper_t *h = arg;
    sleep_ms(200); /* long enough for the main thread to be waiting */
    if (h->close_first)
        TC_EXPECT(fwdio_close(h->close_first), FWDIO_OK, "fwdio_close from another thread");
    atomic_store(&h->done, 1);
    fwdioi_staging_release(h->release_from, h->release);
    return NULL;
}

static void step_wait(fwdio_file_t *f)
{
    tc_phase("wait for room");
    TC_EXPECT(reserve(f, BUDGET, 0), FWDIO_OK, "fill the budget");
    helper_t h = {.release_from = f, .release = 100};
    atomic_init(&h.done, 0);
    pthread_t t;
    pthread_create(&t, NULL, helper_main, &h);
    fwdioi_rt_lock(g_rt->engine);
    int rc = fwdioi_staging_reserve_locked(f, 50, 1);
    int released = atomic_load(&h.done);
    uint64_t staged = g_rt->staged;
    fwdioi_rt_unlock(g_rt->engine);
    pthread_join(t, NULL);
    TC_EXPECT(rc, FWDIO_OK, "a reservation that waited for room");
    TC_CHECK(released, "the reservation returned before any room was made");
    TC_CHECK(staged == BUDGET - 100 + 50, "after the wait %llu bytes are staged, not %llu",
             (unsigned long long)staged, (unsigned long long)(BUDGET - 50));
    fwdioi_staging_release(f, BUDGET - 50);
}

static void step_closed(fwdio_file_t *f, fwdio_file_t *other)
{
    tc_phase("closed while waiting");
    TC_EXPECT(reserve(other, BUDGET, 0), FWDIO_OK, "fill the budget with another file's bytes");
    helper_t h = {.release_from = other, .release = 1, .close_first = f};
    atomic_init(&h.done, 0);
    pthread_t t;
    pthread_create(&t, NULL, helper_main, &h);
    /* The waiter wakes on room made, or earlier on any other broadcast of
     * the runtime's condition (a callback queued); it must give up either
     * way once the file is closed. */
    int rc = reserve(f, 10, 1);
    pthread_join(t, NULL);
    TC_EXPECT(rc, FWDIO_ECLOSED, "a waiting reservation whose file was closed");
    fwdioi_rt_lock(g_rt->engine);
    TC_CHECK(g_rt->staged == BUDGET - 1 && f->staged_file == 0,
             "the refused reservation was counted: %llu staged, %llu for the file",
             (unsigned long long)g_rt->staged, (unsigned long long)f->staged_file);
    fwdioi_rt_unlock(g_rt->engine);
    fwdioi_staging_release(other, BUDGET - 1);
    /* closed: refused at once, room or not, waiting allowed or not */
    fwdioi_rt_lock(g_rt->engine);
    TC_EXPECT(fwdioi_write_refusal_locked(f), FWDIO_ECLOSED, "refusal of a closed file");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 1, 0), FWDIO_ECLOSED, "reserve on a closed file");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 1, 1), FWDIO_ECLOSED,
              "reserve on a closed file, may wait");
    TC_CHECK(g_rt->staged == 0, "a closed file's reservation was counted");
    fwdioi_rt_unlock(g_rt->engine);
    uint8_t b[8] = {0};
    TC_EXPECT(fwdio_write(f, b, sizeof b, 0), FWDIO_ECLOSED, "fwdio_write after close");
    TC_EXPECT(fwdio_try_write(f, b, sizeof b, 0), FWDIO_ECLOSED, "fwdio_try_write after close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the closed file (nothing written)");
}

/* ---- a failed file ---- */

static void step_failed(void)
{
    tc_phase("failed file");
    tc_cbstate_t cb;
    tc_cb_init(&cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&cb);
    fwdio_file_t *f = open_file("no-such-directory/file", &cbs);
    tc_poll_until_count(g_rt, &cb.ready_count, 1); /* the open status is agreed */
    TC_EXPECT(atomic_load(&cb.ready_status), FWDIO_EOPEN, "ready of a file that cannot be opened");
    fwdioi_rt_lock(g_rt->engine);
    uint64_t staged0 = g_rt->staged;
    TC_EXPECT(fwdioi_write_refusal_locked(f), FWDIO_EFAILED, "refusal of a failed file");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 10, 0), FWDIO_EFAILED, "reserve on a failed file");
    TC_EXPECT(fwdioi_staging_reserve_locked(f, 10, 1), FWDIO_EFAILED,
              "reserve on a failed file, may wait");
    TC_CHECK(g_rt->staged == staged0 && f->staged_file == 0,
             "a failed file's reservation was counted");
    fwdioi_rt_unlock(g_rt->engine);
    uint8_t b[8] = {0};
    TC_EXPECT(fwdio_write(f, b, sizeof b, 0), FWDIO_EFAILED, "fwdio_write to a failed file");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close of a failed file");
    TC_EXPECT(fwdio_wait(f), FWDIO_EOPEN, "the failed file");
    fwdio_file_free(f);
}

/* ---- the budget held by this rank's own open messages ---- */

/* A combined write of `len` bytes at `offset`, reserved first (lock held). */
static void combined_locked(fwdio_file_t *f, uint64_t offset, uint64_t len)
{
    uint8_t buf[1024];
    pattern_fill(buf, len, offset, 31);
    TC_EXPECT(fwdioi_staging_reserve_locked(f, len, 0), FWDIO_OK, "reserve a combined write");
    TC_EXPECT(ft_combine_write_locked(f, buf, len, offset), FWDIO_OK, "combine");
}

static void step_own_bytes(fwdio_file_t *hold, fwdio_file_t *k)
{
    tc_phase("own bytes: may not wait");
    /* 64 KiB - 700 reserved for `hold`, 600 in k's open message: 100 left */
    TC_EXPECT(reserve(hold, BUDGET - 700, 0), FWDIO_OK, "reserve most of the budget");
    fwdioi_rt_lock(g_rt->engine);
    combined_locked(k, 0, 600);
    TC_CHECK(k->combine[0].open && k->combine[0].open->payload == 600,
             "the combined write is not in an open message");
    TC_EXPECT(fwdioi_staging_reserve_locked(k, 200, 0), FWDIO_EAGAIN, "200 bytes with 100 free");
    TC_CHECK(k->combine[0].open == NULL && g_rt->combining_files == 0,
             "a reservation that did not fit left the open message open");
    TC_CHECK(g_rt->staged == BUDGET - 100, "%llu bytes staged, not %llu",
             (unsigned long long)g_rt->staged, (unsigned long long)(BUDGET - 100));
    fwdioi_rt_unlock(g_rt->engine);
    /* it was queued: once sent, its 600 bytes come back */
    TC_CHECK(ft_wait_staged(g_rt, BUDGET - 700, 60) == 0,
             "the sealed message was not sent: %llu bytes staged", (unsigned long long)ft_staged(g_rt));

    tc_phase("own bytes: may wait");
    fwdioi_rt_lock(g_rt->engine);
    combined_locked(k, 1000, 600);
    double t0 = MPI_Wtime();
    int rc = fwdioi_staging_reserve_locked(k, 200, 1);
    double waited = MPI_Wtime() - t0;
    uint64_t staged = g_rt->staged;
    fwdioi_rt_unlock(g_rt->engine);
    TC_EXPECT(rc, FWDIO_OK, "200 bytes with 100 free, waiting");
    TC_CHECK(waited < 10, "the reservation waited %.1f s: its own open message was not sent", waited);
    TC_CHECK(staged == BUDGET - 700 + 200, "%llu bytes staged after the wait, not %llu",
             (unsigned long long)staged, (unsigned long long)(BUDGET - 500));
    fwdioi_staging_release(k, 200);
    fwdioi_staging_release(hold, BUDGET - 700);
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    for (int i = 1; i < argc; i++) {
        if (!tc_common_option(argc, argv, &i, &timeout, &mode)) {
            fprintf(stderr, "usage: %s [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (tc_size != 1) {
        if (tc_rank == 0)
            fprintf(stderr, "test_staging runs on one rank\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.staging_buffer = BUDGET;
    cfg.combine_size = 1024;
    cfg.max_message_size = 4096;
    cfg.poll_max_us = 30 * 1000 * 1000; /* no flush by age within the test's bounds */
    cfg.callback_mode = FWDIO_CALLBACKS_ON_POLL;
    g_rt = ft_runtime(&cfg);

    fwdio_file_t *f = open_file("f", NULL);
    fwdio_file_t *g = open_file("g", NULL);
    step_accounting(f);
    step_full(f);
    step_wait(f);
    step_closed(f, g);
    step_failed();
    fwdio_file_t *k = open_file("k", NULL);
    step_own_bytes(g, k);

    tc_phase("finish");
    TC_EXPECT(fwdio_close(g), FWDIO_OK, "close g");
    TC_EXPECT(fwdio_close(k), FWDIO_OK, "close k");
    TC_EXPECT(fwdio_wait(g), FWDIO_OK, "g (nothing written)");
    TC_EXPECT(fwdio_wait(k), FWDIO_OK, "k");
    char path[4096];
    tc_path(path, sizeof path, "k");
    uint64_t bad = 0;
    TC_CHECK(pattern_check_file(path, SIZE, 0, 600, 31, 0, &bad) == 0 &&
                 pattern_check_file(path, SIZE, 600, 400, 0, 1, &bad) == 0 &&
                 pattern_check_file(path, SIZE, 1000, 600, 31, 0, &bad) == 0 &&
                 pattern_check_file(path, SIZE, 1600, SIZE - 1600, 0, 1, &bad) == 0,
             "k's bytes are wrong at %llu", (unsigned long long)bad);
    TC_CHECK(ft_staged(g_rt) == 0, "%llu bytes staged at the end", (unsigned long long)ft_staged(g_rt));
    fwdio_file_free(f);
    fwdio_file_free(g);
    fwdio_file_free(k);
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_staging");
}
