/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Property test of the whole API under random call sequences.
 *
 * Each round (--iterations) runs on a runtime started with a random
 * configuration (callback mode, staging and writer budgets, message size,
 * inline I/O), opens files over a few epochs and, between the opens, makes
 * random calls on every rank. What every rank does collectively (init, the
 * files it opens with their size, options and write plan, finalize) comes
 * from a generator seeded the same on every rank; everything else (which
 * extent to write next, with which call, in how many pieces, when to close,
 * test, wait, free, and the bad calls mixed in) from a generator seeded per
 * rank. The same --seed replays the same run.
 *
 * Files are of five kinds: good (ranks write disjoint extents of a shared
 * plan, some may close early and leave holes; a quarter have a commit block
 * set by one rank), overlap (one rank also rewrites some bytes of an extent:
 * FWDIO_EOVERLAP on every rank), bad-path (in a missing directory:
 * FWDIO_EOPEN), two-commits (two ranks set a commit block: FWDIO_EINVAL) and
 * rename-fails (atomic replace of a non-empty directory: FWDIO_ECOMMIT). A
 * sixth of the files, and every rename-fails one, replace atomically.
 *
 * Properties checked:
 *  - every call returns a documented code; the bad ones (NULL handles and
 *    buffers, out-of-range and overflowing offsets, writes after close,
 *    double close, wait before close, try_write beyond the budget, invalid
 *    options and configurations, strerror of junk codes) are refused with
 *    the documented code and change nothing: the file's write counters stay,
 *    a refused open or init hands out no handle; a refused open with a
 *    runtime keeps its place in the open order (fwdio.h, "Refusals"), so
 *    every rank makes its refused opens at the same points, each its own
 *    bad call, and the next files still match across ranks; inside the ready
 *    callback, the calls a callback may not make return FWDIO_ECONTEXT;
 *  - every file ends COMPLETE or FAILED with the status its kind implies,
 *    the same on every rank, ready and complete exactly once each and in
 *    order, fwdio_wait/fwdio_test agreeing with the callbacks;
 *  - every lent buffer is handed back exactly once, before complete;
 *  - atomic replace leaves no temporary, and a failed one leaves the target
 *    as it was;
 *  - the writers received exactly the bytes the ranks' accepted calls
 *    carried, and every completed file verifies byte for byte.
 *
 * Blocking calls cannot hang: each file has a deadline epoch (shared), at
 * the start of the next epoch every rank has finished writing and closed it,
 * and fwdio_wait is only called on files whose deadline has passed.
 *
 * This file runs the rounds and the per-rank calls; fuzz/ holds the
 * shared plans (plans.c), the bad calls (bad_calls.c) and the end-of-round
 * checks (checks.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "pattern.h"

/* ---- writes -------------------------------------------------------------- */

void fuzz_on_lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    lent_t *l = arg;
    if (buf != l->buf)
        tc_fail("lent callback got buffer %p, lent was %p", buf, (void *)l->buf);
    atomic_store(&l->status, status);
    /* The buffer is ours again: a byte fwdio still read would land as 0x5A. */
    if (l->len > 0)
        memset(l->buf, 0x5A, l->len);
    atomic_fetch_add(&l->calls, 1);
}

static void job_finished(ffile_t *m, size_t j)
{
    job_t t = m->jobs[j];
    m->jobs[j] = m->jobs[m->pending - 1];
    m->jobs[m->pending - 1] = t;
    m->pending--;
}

/* The file failed (only files of the failing kinds may): nothing more to do. */
static void file_failed(ffile_t *m, int rc, const char *call)
{
    if (m->kind == KIND_GOOD)
        tc_fail("%s: %s returned %d (%s) on a good file", m->name, call, rc, fwdio_strerror(rc));
    m->pending = 0;
}

/* A write larger than the staging budget streams through it in chunks of the
 * budget; when the file fails meanwhile, the chunks already accepted stay
 * (fwdio.h) and the call still returns the error. */
static void count_streamed_part(fuzz_t *z, ffile_t *m, uint64_t n)
{
    fwdio_file_stats_t s;
    if (fwdio_file_stats(m->f, &s) != FWDIO_OK)
        return;
    uint64_t part = s.bytes_written - m->accepted_bytes;
    TC_CHECK(part < n && part % z->staging_budget == 0,
             "%s: a refused write of %" PRIu64 " bytes left %" PRIu64 " bytes counted, not a "
             "number of whole %" PRIu64 "-byte staging chunks below it",
             m->name, n, part, z->staging_budget);
    m->accepted_bytes += part;
}

/* Write the next piece of pending job j, with a random one of the three calls. */
static void write_piece(fuzz_t *z, int fi, size_t j, int blocking_only)
{
    ffile_t *m = &z->files[fi];
    job_t *jb = &m->jobs[j];
    uint64_t rest = jb->len - jb->done;
    uint64_t n = want(z, 2) ? rest : 1 + tc_rng_below(&z->mine, rest);
    uint64_t off = jb->offset + jb->done;
    int how = blocking_only ? 0 : (int)tc_rng_below(&z->mine, 4); /* 0,1 write; 2 try; 3 lent */
    int rc;
    z->n.calls++;
    if (how == 3) {
        lent_t *l = calloc(1, sizeof *l);
        l->buf = malloc((size_t)n);
        l->len = (size_t)n;
        l->file = fi;
        pattern_fill(l->buf, (size_t)n, off, m->seed);
        rc = fwdio_write_lent(m->f, l->buf, (size_t)n, off, fuzz_on_lent_done, l);
        if (rc == FWDIO_OK) {
            l->next = z->lents;
            z->lents = l;
            z->n.lent++;
        } else {
            free(l->buf);
            free(l);
        }
    } else {
        uint8_t *buf = malloc((size_t)n);
        pattern_fill(buf, (size_t)n, off, m->seed);
        rc = how == 2 ? fwdio_try_write(m->f, buf, (size_t)n, off)
                      : fwdio_write(m->f, buf, (size_t)n, off);
        free(buf);
        if (how == 2 && rc != FWDIO_OK && rc != FWDIO_EFAILED) {
            int want_rc = n > z->staging_budget ? FWDIO_ETOOBIG : FWDIO_EAGAIN;
            z->n.try_eagain += rc == FWDIO_EAGAIN;
            z->n.calls--; /* counted by fuzz_refused() */
            fuzz_refused(z, m, "fwdio_try_write", rc, want_rc, NO_ALT);
            return;
        }
        z->n.writes++;
    }
    if (rc == FWDIO_OK) {
        jb->done += n;
        m->accepted_bytes += n;
        m->accepted_calls++;
        if (jb->done == jb->len)
            job_finished(m, j);
    } else if (rc == FWDIO_EFAILED) {
        if (how < 2)
            count_streamed_part(z, m, n);
        file_failed(m, rc, how == 3 ? "fwdio_write_lent" : "a write");
    } else {
        tc_fail("%s: write of %" PRIu64 " bytes at %" PRIu64 " returned %d (%s)", m->name, n,
                off, rc, fwdio_strerror(rc));
        m->pending = 0;
    }
}

/* This rank's commit block: the pattern bytes of its range. */
static void set_commit(fuzz_t *z, ffile_t *m)
{
    uint8_t *buf = malloc((size_t)m->commit_len);
    pattern_fill(buf, (size_t)m->commit_len, m->commit_off, m->seed);
    z->n.calls++;
    z->n.commits++;
    fuzz_check_rc(m, "fwdio_set_commit", fwdio_set_commit(m->f, buf, (size_t)m->commit_len,
                                                     m->commit_off),
             FWDIO_OK, NO_ALT);
    free(buf);
    m->commit_pending = 0;
    m->commit_set = 1;
}

/* Whether this rank may close (or free) the file now. */
static int may_close(const ffile_t *m)
{
    return !m->commit_pending && (m->pending == 0 || m->may_skip);
}

/* Write everything still pending with fwdio_write, then close. */
static void finish_file(fuzz_t *z, int fi, int close_it)
{
    ffile_t *m = &z->files[fi];
    if (!m->f || m->closed)
        return;
    tc_phase("round %d: finishing %s", z->round, m->name);
    if (!m->may_skip || !want(z, 2))
        while (m->pending > 0)
            write_piece(z, fi, m->pending - 1, 1);
    if (m->commit_pending)
        set_commit(z, m);
    if (close_it) {
        z->n.calls++;
        fuzz_check_rc(m, "fwdio_close", fwdio_close(m->f), FWDIO_OK, NO_ALT);
        m->closed = 1;
    }
}

/* ---- the per-rank actions ------------------------------------------------ */

static void record_status(ffile_t *m, int status, const char *how)
{
    if (m->have_status && m->status != status)
        tc_fail("%s: %s gave %d (%s), earlier %d (%s)", m->name, how, status,
                fwdio_strerror(status), m->status, fwdio_strerror(m->status));
    m->have_status = 1;
    m->status = status;
}

static void query(fuzz_t *z, ffile_t *m)
{
    fwdio_file_stats_t s;
    z->n.calls += 5;
    fuzz_check_rc(m, "fwdio_file_stats", fwdio_file_stats(m->f, &s), FWDIO_OK, NO_ALT);
    TC_CHECK(s.bytes_written == m->accepted_bytes && s.write_calls == m->accepted_calls,
             "%s: stats count %" PRIu64 " bytes in %" PRIu64 " calls, accepted were %" PRIu64
             " in %" PRIu64,
             m->name, s.bytes_written, s.write_calls, m->accepted_bytes, m->accepted_calls);
    int ranks[64];
    int nw = fwdio_file_writers(m->f, ranks, 64);
    TC_CHECK(nw >= 1 && nw <= tc_size, "%s: fwdio_file_writers gave %d", m->name, nw);
    for (int i = 0; i < nw && i < 64; i++)
        TC_CHECK(ranks[i] >= 0 && ranks[i] < tc_size, "%s: writer %d is rank %d", m->name, i,
                 ranks[i]);
    TC_CHECK(fwdio_file_writer_bytes(m->f, NULL, 0) == nw,
             "%s: fwdio_file_writer_bytes and fwdio_file_writers disagree on the count", m->name);
    const char *text = fwdio_file_error(m->f);
    TC_CHECK(text && text[0], "%s: fwdio_file_error is NULL or empty", m->name);
    fwdio_error_info_t info;
    fuzz_check_rc(m, "fwdio_file_error_info", fwdio_file_error_info(m->f, &info), FWDIO_OK, NO_ALT);
    if (m->kind == KIND_GOOD)
        TC_CHECK(info.status == FWDIO_OK, "%s: error info %d (%s) on a good file", m->name,
                 info.status, fwdio_strerror(info.status));
}

/* Zero bytes: accepted while the file is open (a lent one is handed back at
 * once), refused like any write after close. */
static void zero_length_write(fuzz_t *z, int fi)
{
    ffile_t *m = &z->files[fi];
    int want_rc = m->closed ? FWDIO_ECLOSED : FWDIO_OK, rc;
    z->n.calls++;
    switch (tc_rng_below(&z->mine, 3)) {
    case 0: rc = fwdio_write(m->f, NULL, 0, m->size); break;
    case 1: rc = fwdio_try_write(m->f, NULL, 0, 0); break;
    default: {
        lent_t *l = calloc(1, sizeof *l);
        l->file = fi;
        rc = fwdio_write_lent(m->f, NULL, 0, 0, fuzz_on_lent_done, l);
        if (rc == FWDIO_OK) {
            l->next = z->lents;
            z->lents = l;
        } else {
            free(l);
        }
    }
    }
    fuzz_check_rc(m, "zero-length write", rc, want_rc, FWDIO_EFAILED);
}

static void act_on_file(fuzz_t *z, int fi)
{
    ffile_t *m = &z->files[fi];
    tc_rng_t *r = &z->mine;
    uint64_t a = tc_rng_below(r, 100);
    if (a < 45) { /* write */
        if (!m->closed && m->commit_pending && want(z, 4))
            set_commit(z, m);
        else if (!m->closed && m->pending > 0)
            write_piece(z, fi, (size_t)tc_rng_below(r, m->pending), 0);
    } else if (a < 52) {
        zero_length_write(z, fi);
    } else if (a < 62) {
        fuzz_bad_write(z, m);
    } else if (a < 72) {
        int done = -1;
        z->n.calls++;
        z->n.tests++;
        int rc = fwdio_test(m->f, &done);
        if (done == 1)
            record_status(m, rc, "fwdio_test");
        else
            fuzz_check_rc(m, "fwdio_test (not done)", rc, FWDIO_OK, NO_ALT);
        TC_CHECK(done == 0 || done == 1, "%s: fwdio_test set done=%d", m->name, done);
        TC_CHECK(m->closed || done == 0, "%s: complete before this rank closed it", m->name);
    } else if (a < 76) {
        z->n.calls++;
        int n = fwdio_poll(z->rt);
        TC_CHECK(n >= 0, "fwdio_poll returned %d (%s)", n, fwdio_strerror(n));
    } else if (a < 84) {
        if (!m->closed && may_close(m)) {
            z->n.calls++;
            z->n.early_closes += m->pending > 0;
            fuzz_check_rc(m, "fwdio_close", fwdio_close(m->f), FWDIO_OK, NO_ALT);
            m->closed = 1;
        }
    } else if (a < 89) {
        if (m->closed && m->deadline < z->epoch) {
            z->n.calls++;
            z->n.waits++;
            tc_phase("round %d epoch %d: fwdio_wait %s", z->round, z->epoch, m->name);
            record_status(m, fwdio_wait(m->f), "fwdio_wait");
        } else if (!m->closed) {
            fuzz_refused(z, m, "fwdio_wait before close", fwdio_wait(m->f), FWDIO_ENOTCLOSED, NO_ALT);
        }
    } else if (a < 92) {
        if (may_close(m)) {
            z->n.calls++;
            z->n.frees++;
            fwdio_file_free(m->f);
            m->f = NULL;
            m->closed = 1;
        }
    } else {
        query(z, m);
    }
}

static void act(fuzz_t *z)
{
    int live[MAX_FILES], n = 0;
    for (int i = 0; i < z->nfiles; i++)
        if (z->files[i].f)
            live[n++] = i;
    if (n == 0 || want(z, 12)) {
        fuzz_junk_calls(z);
        return;
    }
    act_on_file(z, live[tc_rng_below(&z->mine, (uint64_t)n)]);
}

/* ---- rounds -------------------------------------------------------------- */

static void start_runtime(fuzz_t *z)
{
    fwdio_config_t c;
    fuzz_random_config(z, &c);
    tc_phase("round %d: fwdio_init", z->round);
    z->rt = tc_start_runtime_with(MPI_COMM_WORLD, &c);
    z->mode = c.callback_mode;
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(z->rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    z->staging_budget = rs.staging_budget;
    if (tc_rank == 0)
        tc_note("round %d: runtime: callbacks %s, staging %" PRIu64 ", writer buffer %" PRIu64
                ", max message %" PRIu64 ", io inline %d",
                z->round, c.callback_mode ? "progress" : "poll", rs.staging_budget,
                rs.writer_budget, rs.max_message, c.io_inline);
}

static void stop_runtime(fuzz_t *z)
{
    tc_phase("round %d: fwdio_finalize", z->round);
    TC_EXPECT(fwdio_finalize(z->rt), FWDIO_OK, "fwdio_finalize");
    z->rt = NULL;
    for (int i = 0; i < z->nfiles; i++)
        z->files[i].f = NULL; /* released by fwdio_finalize */
}

/* Every file of the round has completed on this rank: its final status. */
static void await_all(fuzz_t *z)
{
    for (int i = 0; i < z->nfiles; i++) {
        ffile_t *m = &z->files[i];
        tc_phase("round %d: waiting for %s", z->round, m->name);
        if (!m->f) {
            tc_poll_until_complete(z->rt, &m->cb);
        } else if (want(z, 2)) {
            z->n.waits++;
            record_status(m, fwdio_wait(m->f), "fwdio_wait");
        } else {
            struct timespec ts = {0, 200 * 1000};
            int done = 0, rc;
            while ((rc = fwdio_test(m->f, &done)) == FWDIO_OK && !done)
                nanosleep(&ts, NULL);
            if (done)
                record_status(m, rc, "fwdio_test");
            else
                tc_fail("%s: fwdio_test returned %d (%s) with done=0", m->name, rc,
                        fwdio_strerror(rc));
        }
    }
}

static void end_round(fuzz_t *z)
{
    for (int i = 0; i < z->nfiles; i++) {
        ffile_t *m = &z->files[i];
        if (m->f)
            fwdio_file_free(m->f);
        free(m->ext);
        free(m->jobs);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has verified before the files go */
    for (int i = 0; tc_rank == 0 && i < z->nfiles; i++) {
        const ffile_t *m = &z->files[i];
        char keep[4160];
        snprintf(keep, sizeof keep, "%s/keep", m->path);
        if (m->kind == KIND_RENAME_FAILS && (unlink(keep) != 0 || rmdir(m->path) != 0))
            tc_fail("cannot remove %s: %s", m->path, strerror(errno));
        else if (m->kind != KIND_BADPATH && m->kind != KIND_RENAME_FAILS && fuzz_exists(m->path) &&
                 unlink(m->path) != 0)
            tc_fail("cannot remove %s: %s", m->path, strerror(errno));
    }
    z->nfiles = 0;
}

static void run_round(fuzz_t *z)
{
    tc_rng_seed(&z->shared, z->seed * 7919 + (uint64_t)z->round);
    tc_rng_seed(&z->mine, (z->seed * 7919 + (uint64_t)z->round) * 131 + (uint64_t)tc_rank + 1);
    if (!z->rt)
        start_runtime(z);
    int epochs = 2 + (int)tc_rng_below(&z->shared, 4);
    for (z->epoch = 0; z->epoch < epochs; z->epoch++) {
        for (int i = 0; i < z->nfiles; i++)
            if (z->files[i].deadline < z->epoch)
                finish_file(z, i, 1);
        int opens = (z->epoch == 0) + (int)tc_rng_below(&z->shared, 4);
        for (int k = 0; k < opens; k++) {
            if (want_shared(z, 4)) /* refused on every rank, at the same point */
                fuzz_bad_open(z);
            fuzz_open_file(z, z->epoch, epochs);
        }
        int actions = 10 + (int)tc_rng_below(&z->mine, 60);
        tc_phase("round %d epoch %d: %d random calls", z->round, z->epoch, actions);
        for (int k = 0; k < actions; k++)
            act(z);
    }
    /* The end: close and wait for everything, or leave it to fwdio_finalize. */
    int ending = (int)tc_rng_below(&z->shared, 3); /* 0 keep, 1 wait + finalize, 2 finalize */
    for (int i = 0; i < z->nfiles; i++)
        finish_file(z, i, ending != 2 || want(z, 2));
    if (ending != 2)
        await_all(z);
    if (ending != 0)
        stop_runtime(z);
    fuzz_check_files(z);
    fuzz_check_lents(z);
    if (tc_rank == 0) {
        int kinds[5] = {0, 0, 0, 0, 0}, commits = 0, atomics = 0;
        for (int i = 0; i < z->nfiles; i++) {
            kinds[z->files[i].kind]++;
            commits += z->files[i].kind == KIND_GOOD && z->files[i].committer[0] >= 0;
            atomics += z->files[i].opts.atomic_replace != 0;
        }
        tc_note("round %d: %d files (%d good, %d of them with a commit block; %d overlap, "
                "%d bad path, %d two commits, %d rename fails; %d atomic), ended by %s",
                z->round, z->nfiles, kinds[0], commits, kinds[1], kinds[2], kinds[3], kinds[4],
                atomics,
                ending == 0 ? "waiting" : ending == 1 ? "waiting, then finalize" : "finalize");
    }
    end_round(z);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    int mode_given = 0, iterations = 4;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
            iterations = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--callback-mode") && i + 1 < argc &&
                 tc_common_option(argc, argv, &i, &timeout, &mode))
            mode_given = 1;
        else if (tc_common_option(argc, argv, &i, &timeout, &mode))
            continue;
        else {
            fprintf(stderr, "usage: %s [--seed N] [--iterations ROUNDS] "
                            "[--callback-mode poll|progress (default: random per runtime)] "
                            "[--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    fuzz_t *z = calloc(1, sizeof *z);
    atomic_init(&z->context_checks, 0);
    z->seed = seed;
    z->force_mode = mode_given ? (int)mode : -1;
    if (tc_rank == 0)
        tc_note("seed %" PRIu64 ", %d rounds", seed, iterations);
    for (z->round = 0; z->round < iterations; z->round++)
        run_round(z);
    if (z->rt)
        stop_runtime(z);
    counts_t *n = &z->n;
    long sums[11] = {n->calls, n->refused, n->writes, n->lent, n->try_eagain, n->waits,
                     n->tests, n->frees, n->early_closes, n->commits,
                     atomic_load(&z->context_checks)};
    MPI_Allreduce(MPI_IN_PLACE, sums, 11, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (tc_rank == 0)
        tc_note("all ranks: %ld calls, %ld refused as documented, %ld copied writes, %ld lent, "
                "%ld EAGAIN, %ld waits, %ld tests, %ld frees, %ld early closes, %ld commit "
                "blocks, %ld callbacks refused blocking calls",
                sums[0], sums[1], sums[2], sums[3], sums[4], sums[5], sums[6], sums[7], sums[8],
                sums[9], sums[10]);
    free(z);
    return tc_finish("test_fuzz");
}
