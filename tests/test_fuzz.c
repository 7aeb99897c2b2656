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
 *    a refused open or init hands out no handle and takes no sequence number
 *    (the next files would not match across ranks); inside the ready
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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

enum { MAX_FILES = 24, MAX_LIST = 8, NO_ALT = 1 /* never a status code */ };

typedef enum {
    KIND_GOOD,
    KIND_OVERLAP,     /* one rank rewrites bytes of an extent */
    KIND_BADPATH,     /* in a missing directory */
    KIND_TWO_COMMITS, /* two ranks set a commit block */
    KIND_RENAME_FAILS /* atomic replace of a non-empty directory */
} kind_t;
static const char *const kind_name[] = {"good", "overlap", "bad-path", "two-commits",
                                        "rename-fails"};
static const int want_ready[] = {FWDIO_OK, FWDIO_OK, FWDIO_EOPEN, FWDIO_OK, FWDIO_OK};
static const int want_final[] = {FWDIO_OK, FWDIO_EOVERLAP, FWDIO_EOPEN, FWDIO_EINVAL,
                                 FWDIO_ECOMMIT};

/* A piece of the file this rank must write, written from its start. */
typedef struct job {
    size_t ext; /* index in the plan, or SIZE_MAX for the overlapping rewrite */
    uint64_t offset, len, done;
} job_t;

/* One fwdio_write_lent buffer, kept until the end of the round. */
typedef struct lent {
    struct lent *next;
    uint8_t *buf;
    size_t len;
    int file;
    atomic_int calls;
    atomic_int status;
} lent_t;

typedef struct ffile {
    char name[48], path[4096];
    kind_t kind;
    uint64_t size, seed;
    fwdio_options_t opts;
    int list[MAX_LIST];
    tc_extent_t *ext; /* the shared plan: owner -1 is a hole */
    size_t n_ext;
    int deadline; /* last epoch in which a rank may still write or close it */
    job_t *jobs;  /* this rank's; [0, pending) not finished yet */
    size_t n_jobs, pending;
    int may_skip; /* this rank may close before writing everything */
    int committer[2];  /* ranks that set a commit block, or -1 */
    uint64_t commit_off, commit_len;
    int commit_pending; /* this rank still has to set its block */
    int commit_set;     /* this rank has set it */
    uint64_t accepted_bytes, accepted_calls;
    tc_cbstate_t cb;
    fwdio_file_t *f; /* NULL once freed here or released by fwdio_finalize */
    int closed;
    int have_status, status; /* from fwdio_wait / fwdio_test */
} ffile_t;

/* Counts of what this rank did, for the summary. */
typedef struct counts {
    long calls, refused, writes, lent, try_eagain, waits, tests, frees, early_closes, commits;
} counts_t;

typedef struct fuzz {
    uint64_t seed;
    int force_mode; /* -1: random callback mode per runtime */
    fwdio_runtime_t *rt;
    fwdio_callback_mode_t mode;
    uint64_t staging_budget;
    ffile_t files[MAX_FILES];
    int nfiles;
    lent_t *lents;
    tc_rng_t shared, mine;
    counts_t n;
    int round, epoch;
    atomic_int context_checks; /* callbacks that tried the forbidden calls */
} fuzz_t;

static int want(fuzz_t *z, uint64_t one_in) { return tc_rng_below(&z->mine, one_in) == 0; }

/* ---- checks ------------------------------------------------------------ */

/* got must be `want`, or `alt` when the file is one that fails anyway. */
static void check_rc(const ffile_t *m, const char *call, int got, int want_rc, int alt)
{
    if (got == want_rc || (alt != NO_ALT && got == alt && m && m->kind != KIND_GOOD))
        return;
    tc_fail("%s%s%s: got %d (%s), expected %d (%s)", m ? m->name : "", m ? ": " : "", call, got,
            fwdio_strerror(got), want_rc, fwdio_strerror(want_rc));
}

/* A refused call on a file must leave its write counters as they were. */
static void check_unchanged(const ffile_t *m, const char *call)
{
    fwdio_file_stats_t s;
    if (fwdio_file_stats(m->f, &s) != FWDIO_OK) {
        tc_fail("%s: fwdio_file_stats failed after refused %s", m->name, call);
        return;
    }
    TC_CHECK(s.bytes_written == m->accepted_bytes && s.write_calls == m->accepted_calls,
             "%s: after refused %s the file counts %" PRIu64 " bytes in %" PRIu64
             " calls, expected %" PRIu64 " in %" PRIu64,
             m->name, call, s.bytes_written, s.write_calls, m->accepted_bytes,
             m->accepted_calls);
}

static void refused(fuzz_t *z, ffile_t *m, const char *call, int got, int want_rc, int alt)
{
    z->n.calls++;
    z->n.refused++;
    check_rc(m, call, got, want_rc, alt);
    if (m && m->f)
        check_unchanged(m, call);
}

/* ---- shared plans -------------------------------------------------------- */

static void random_config(fuzz_t *z, fwdio_config_t *c)
{
    static const size_t staging[] = {0, 64 << 10, 256 << 10, 1 << 20};
    static const size_t writer[] = {0, 256 << 10, 1 << 20};
    static const size_t message[] = {0, 4096, 64 << 10};
    tc_rng_t *r = &z->shared;
    memset(c, 0, sizeof *c);
    c->callback_mode = z->force_mode >= 0 ? (fwdio_callback_mode_t)z->force_mode
                                          : (fwdio_callback_mode_t)tc_rng_below(r, 2);
    c->staging_buffer = staging[tc_rng_below(r, 4)];
    c->writer_buffer = writer[tc_rng_below(r, 3)];
    c->max_message_size = message[tc_rng_below(r, 3)];
    c->io_inline = tc_rng_below(r, 4) == 0;
    c->poll_min_us = (unsigned)tc_rng_below(r, 50);
    c->poll_max_us = (unsigned)tc_rng_below(r, 3000);
}

static void random_options(fuzz_t *z, ffile_t *m)
{
    static const uint64_t units[] = {4 << 10, 8 << 10, 16 << 10, 64 << 10, 0};
    tc_rng_t *r = &z->shared;
    fwdio_options_t *o = &m->opts;
    fwdio_options_init(o);
    o->write_size = units[tc_rng_below(r, 5)];
    o->stripe_size = o->write_size * (1 + tc_rng_below(r, 4));
    o->writers = (int)tc_rng_below(r, (uint64_t)tc_size + 3); /* 0: default; > P: clamped */
    o->layout = (fwdio_layout_t)tc_rng_below(r, 3);
    if (o->layout == FWDIO_LAYOUT_TARGETS)
        o->targets = (int)tc_rng_below(r, 6);
    o->durable = tc_rng_below(r, 8) == 0;
    switch (tc_rng_below(r, 3)) {
    case 1:
        o->placement = FWDIO_PLACEMENT_STRIDE;
        o->first_writer = (int)tc_rng_below(r, (uint64_t)tc_size);
        o->writer_stride = (int)tc_rng_below(r, 4);
        break;
    case 2: { /* distinct ranks in random order */
        int n = 1 + (int)tc_rng_below(r, (uint64_t)(tc_size < MAX_LIST ? tc_size : MAX_LIST));
        int *all = malloc((size_t)tc_size * sizeof *all);
        for (int i = 0; i < tc_size; i++)
            all[i] = i;
        for (int i = 0; i < n; i++) {
            int j = i + (int)tc_rng_below(r, (uint64_t)(tc_size - i));
            int t = all[i];
            all[i] = all[j];
            all[j] = t;
            m->list[i] = all[i];
        }
        free(all);
        o->placement = FWDIO_PLACEMENT_LIST;
        o->writer_list = m->list;
        o->writer_list_len = n;
        o->writers = n;
        break;
    }
    default:
        break; /* spread */
    }
}

/* Extents of random length for random owners over [0, size), some holes. */
static void random_plan(fuzz_t *z, ffile_t *m)
{
    static const uint64_t chunks[] = {16, 512, 8 << 10, 64 << 10, 300 << 10};
    tc_rng_t *r = &z->shared;
    uint64_t max_chunk = chunks[tc_rng_below(r, 5)];
    if (max_chunk < m->size / 1500) /* keep the plan to a few thousand extents */
        max_chunk = m->size / 1500;
    int holes = tc_rng_below(r, 3) == 0;
    size_t cap = 8;
    m->ext = malloc(cap * sizeof *m->ext);
    m->n_ext = 0;
    for (uint64_t off = 0; off < m->size;) {
        uint64_t len = 1 + tc_rng_below(r, max_chunk);
        if (len > m->size - off)
            len = m->size - off;
        if (m->n_ext == cap) {
            cap *= 2;
            m->ext = realloc(m->ext, cap * sizeof *m->ext);
        }
        int owner = (int)tc_rng_below(r, (uint64_t)tc_size);
        if (holes && tc_rng_below(r, 5) == 0)
            owner = -1;
        m->ext[m->n_ext++] = (tc_extent_t){off, len, owner};
        off += len;
    }
}

/* This rank's jobs: its extents, and the rewrite if the overlap falls to it. */
static void make_jobs(fuzz_t *z, ffile_t *m, int ov_rank, uint64_t ov_off, uint64_t ov_len)
{
    m->jobs = malloc((m->n_ext + 1) * sizeof *m->jobs);
    m->n_jobs = 0;
    for (size_t e = 0; e < m->n_ext; e++)
        if (m->ext[e].owner == tc_rank)
            m->jobs[m->n_jobs++] = (job_t){e, m->ext[e].offset, m->ext[e].len, 0};
    if (ov_rank == tc_rank)
        m->jobs[m->n_jobs++] = (job_t){SIZE_MAX, ov_off, ov_len, 0};
    m->pending = m->n_jobs;
    m->may_skip = m->kind == KIND_BADPATH || (m->kind == KIND_GOOD && want(z, 6));
    m->commit_pending = m->committer[0] == tc_rank || m->committer[1] == tc_rank;
}

/* Shared: a commit block on one random rank (two for KIND_TWO_COMMITS). */
static void random_commit(fuzz_t *z, ffile_t *m)
{
    tc_rng_t *r = &z->shared;
    m->committer[0] = m->committer[1] = -1;
    int two = m->kind == KIND_TWO_COMMITS;
    if (m->size == 0 || (two && tc_size < 2)) {
        if (two)
            m->kind = KIND_GOOD;
        return;
    }
    if (!two && (m->kind != KIND_GOOD || tc_rng_below(r, 4) != 0))
        return;
    uint64_t room;
    m->commit_off = tc_rng_below(r, m->size);
    room = m->size - m->commit_off;
    m->commit_len = 1 + tc_rng_below(r, room < 4096 ? room : 4096);
    m->committer[0] = (int)tc_rng_below(r, (uint64_t)tc_size);
    if (two)
        m->committer[1] =
            (m->committer[0] + 1 + (int)tc_rng_below(r, (uint64_t)tc_size - 1)) % tc_size;
}

/* The target of KIND_RENAME_FAILS: a directory with a file in it, which no
 * rename can replace. Collective (the plan says so on every rank). */
static void make_blocking_dir(const ffile_t *m)
{
    if (tc_rank == 0) {
        char inner[4160];
        snprintf(inner, sizeof inner, "%s/keep", m->path);
        FILE *fp = NULL;
        if (mkdir(m->path, 0755) != 0 || !(fp = fopen(inner, "w")))
            tc_fail("cannot create %s: %s", inner, strerror(errno));
        if (fp)
            fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The ready callback tries the calls a callback may not make (fwdio.h,
 * fwdio_callback_mode_t): each must be refused with FWDIO_ECONTEXT. */
static void calls_from_callback(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)status;
    fuzz_t *z = st->user;
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_ECONTEXT, "fwdio_wait in a callback returned %d (%s)", rc,
             fwdio_strerror(rc));
    rc = fwdio_finalize(z->rt);
    TC_CHECK(rc == FWDIO_ECONTEXT, "fwdio_finalize in a callback returned %d (%s)", rc,
             fwdio_strerror(rc));
    if (z->mode == FWDIO_CALLBACKS_ON_PROGRESS) {
        fwdio_file_t *g = NULL;
        rc = fwdio_poll(z->rt);
        TC_CHECK(rc == FWDIO_ECONTEXT, "fwdio_poll in a progress callback returned %d (%s)", rc,
                 fwdio_strerror(rc));
        rc = fwdio_open(z->rt, "never-opened.dat", 1, NULL, NULL, &g);
        TC_CHECK(rc == FWDIO_ECONTEXT && g == NULL,
                 "fwdio_open in a progress callback returned %d (%s)", rc, fwdio_strerror(rc));
    }
    atomic_fetch_add(&z->context_checks, 1);
}

static void open_file(fuzz_t *z, int epoch, int epochs)
{
    if (z->nfiles == MAX_FILES)
        return;
    tc_rng_t *r = &z->shared;
    int idx = z->nfiles;
    ffile_t *m = &z->files[idx];
    memset(m, 0, sizeof *m);
    switch (tc_rng_below(r, 10)) {
    case 0: m->size = 0; break;
    case 1: m->size = 1 + tc_rng_below(r, 100); break;
    case 2: case 3: case 4: m->size = 1 + tc_rng_below(r, 64 << 10); break;
    default: m->size = 1 + tc_rng_below(r, 1 << 20); break;
    }
    m->seed = z->seed * 1000003 + (uint64_t)z->round * 101 + (uint64_t)idx;
    random_options(z, m);
    random_plan(z, m);
    m->deadline = epoch + (int)tc_rng_below(r, (uint64_t)(epochs - epoch));
    static const kind_t kinds[20] = {KIND_BADPATH, KIND_BADPATH, KIND_OVERLAP, KIND_OVERLAP,
                                     KIND_TWO_COMMITS, KIND_RENAME_FAILS};
    m->kind = kinds[tc_rng_below(r, 20)]; /* the rest: KIND_GOOD */
    int ov_rank = -1;
    uint64_t ov_off = 0, ov_len = 0;
    if (m->kind == KIND_OVERLAP) {
        size_t e = (size_t)tc_rng_below(r, m->n_ext + 1);
        while (e < m->n_ext && m->ext[e].owner < 0)
            e++;
        if (e >= m->n_ext) {
            m->kind = KIND_GOOD; /* nothing written, nothing to overlap */
        } else {
            ov_rank = (int)tc_rng_below(r, (uint64_t)tc_size);
            ov_off = m->ext[e].offset + tc_rng_below(r, m->ext[e].len);
            ov_len = 1 + tc_rng_below(r, m->ext[e].offset + m->ext[e].len - ov_off);
        }
    }
    random_commit(z, m);
    m->opts.atomic_replace = m->kind == KIND_RENAME_FAILS || tc_rng_below(r, 6) == 0;
    snprintf(m->name, sizeof m->name, "r%d_f%d_%s", z->round, idx, kind_name[m->kind]);
    char rel[96];
    if (m->kind == KIND_BADPATH)
        snprintf(rel, sizeof rel, "missing_r%d_f%d/file.dat", z->round, idx);
    else
        snprintf(rel, sizeof rel, "%s.dat", m->name);
    tc_path(m->path, sizeof m->path, rel);
    make_jobs(z, m, ov_rank, ov_off, ov_len);
    if (m->kind == KIND_RENAME_FAILS)
        make_blocking_dir(m);

    tc_cb_init(&m->cb);
    m->cb.on_ready = calls_from_callback;
    m->cb.user = z;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&m->cb);
    tc_phase("round %d epoch %d: open %s", z->round, epoch, m->name);
    int rc = fwdio_open(z->rt, m->path, m->size, &m->opts, &cbs, &m->f);
    z->n.calls++;
    if (rc != FWDIO_OK || !m->f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", m->path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    z->nfiles++;
}

/* ---- writes -------------------------------------------------------------- */

static void on_lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
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

/* The file failed (only bad-path and overlap files may): nothing more to do. */
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
        rc = fwdio_write_lent(m->f, l->buf, (size_t)n, off, on_lent_done, l);
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
            z->n.calls--; /* counted by refused() */
            refused(z, m, "fwdio_try_write", rc, want_rc, NO_ALT);
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
    check_rc(m, "fwdio_set_commit", fwdio_set_commit(m->f, buf, (size_t)m->commit_len,
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
        check_rc(m, "fwdio_close", fwdio_close(m->f), FWDIO_OK, NO_ALT);
        m->closed = 1;
    }
}

/* ---- bad calls ----------------------------------------------------------- */

/* A fwdio_set_commit that is wrong in exactly one way. */
static void bad_commit(fuzz_t *z, ffile_t *m)
{
    static uint8_t junk[64];
    tc_rng_t *r = &z->mine;
    uint64_t n = 1 + tc_rng_below(r, sizeof junk);
    uint64_t past = m->size - (n <= m->size ? n : m->size) + 1 + tc_rng_below(r, 1000);
    uint64_t fits = n <= m->size ? n : m->size; /* > 0 unless the file is empty */
    switch (tc_rng_below(r, 5)) {
    case 0:
        refused(z, m, "fwdio_set_commit(NULL file)", fwdio_set_commit(NULL, junk, 1, 0),
                FWDIO_EINVAL, NO_ALT);
        break;
    case 1:
        refused(z, m, "fwdio_set_commit(NULL buf)",
                fwdio_set_commit(m->f, NULL, (size_t)fits, 0), FWDIO_EINVAL, NO_ALT);
        break;
    case 2:
        refused(z, m, "fwdio_set_commit(len 0)", fwdio_set_commit(m->f, junk, 0, 0), FWDIO_EINVAL,
                NO_ALT);
        break;
    case 3:
        refused(z, m, "fwdio_set_commit(past the end)",
                fwdio_set_commit(m->f, junk, (size_t)n, past), FWDIO_ERANGE, NO_ALT);
        break;
    default:
        if (m->closed && fits > 0)
            refused(z, m, "fwdio_set_commit after close",
                    fwdio_set_commit(m->f, junk, (size_t)fits, 0), FWDIO_ECLOSED, NO_ALT);
        else if (m->commit_set && fits > 0)
            refused(z, m, "second fwdio_set_commit on this rank",
                    fwdio_set_commit(m->f, junk, (size_t)fits, 0), FWDIO_EINVAL, NO_ALT);
        break;
    }
}

static void bad_write(fuzz_t *z, ffile_t *m)
{
    static uint8_t junk[64];
    static lent_t stray;
    tc_rng_t *r = &z->mine;
    uint64_t n = 1 + tc_rng_below(r, sizeof junk);
    uint64_t past = m->size - (n <= m->size ? n : m->size) + 1 + tc_rng_below(r, 1000);
    switch (tc_rng_below(r, 10)) {
    case 0:
        refused(z, m, "fwdio_write(NULL buf)", fwdio_write(m->f, NULL, (size_t)n, 0),
                FWDIO_EINVAL, NO_ALT);
        break;
    case 1:
        refused(z, m, "fwdio_try_write(NULL buf)", fwdio_try_write(m->f, NULL, (size_t)n, 0),
                FWDIO_EINVAL, NO_ALT);
        break;
    case 2:
        refused(z, m, "fwdio_write_lent(NULL done)",
                fwdio_write_lent(m->f, junk, (size_t)n, 0, NULL, NULL), FWDIO_EINVAL, NO_ALT);
        break;
    case 3:
        refused(z, m, "fwdio_write(past the end)", fwdio_write(m->f, junk, (size_t)n, past),
                FWDIO_ERANGE, NO_ALT);
        break;
    case 4: /* if it were accepted, its callback would find this record */
        stray.buf = junk;
        stray.len = sizeof junk;
        refused(z, m, "fwdio_write_lent(past the end)",
                fwdio_write_lent(m->f, junk, (size_t)n, past, on_lent_done, &stray), FWDIO_ERANGE,
                NO_ALT);
        break;
    case 5:
        refused(z, m, "fwdio_try_write(offset + len overflows)",
                fwdio_try_write(m->f, junk, (size_t)n, UINT64_MAX - tc_rng_below(r, n)),
                FWDIO_ERANGE, NO_ALT);
        break;
    case 6:
        if (m->closed) {
            uint64_t len = n <= m->size ? n : m->size;
            refused(z, m, "fwdio_write after close",
                    fwdio_write(m->f, junk, (size_t)len, m->size - len), FWDIO_ECLOSED,
                    FWDIO_EFAILED);
        } else {
            refused(z, m, "fwdio_wait before close", fwdio_wait(m->f), FWDIO_ENOTCLOSED, NO_ALT);
            int done = -1;
            z->n.calls++;
            check_rc(m, "fwdio_test before close", fwdio_test(m->f, &done), FWDIO_OK, NO_ALT);
            TC_CHECK(done == 0, "%s: fwdio_test before this rank closed it says done=%d", m->name,
                     done);
        }
        break;
    case 7:
        if (!m->closed && m->size > z->staging_budget) {
            uint8_t *big = calloc(1, (size_t)z->staging_budget + 1);
            refused(z, m, "fwdio_try_write(more than the staging budget)",
                    fwdio_try_write(m->f, big, (size_t)z->staging_budget + 1, 0), FWDIO_ETOOBIG,
                    FWDIO_EFAILED);
            free(big);
        } else if (m->closed) {
            refused(z, m, "second fwdio_close", fwdio_close(m->f), FWDIO_ECLOSED, NO_ALT);
        }
        break;
    case 8:
        bad_commit(z, m);
        break;
    default: {
        int done = 0;
        fwdio_error_info_t info;
        fwdio_file_stats_t st;
        refused(z, m, "fwdio_test(done NULL)", fwdio_test(m->f, NULL), FWDIO_EINVAL, NO_ALT);
        refused(z, m, "fwdio_file_writers(max -1)", fwdio_file_writers(m->f, NULL, -1),
                FWDIO_EINVAL, NO_ALT);
        refused(z, m, "fwdio_file_writer_bytes(max -1)", fwdio_file_writer_bytes(m->f, NULL, -1),
                FWDIO_EINVAL, NO_ALT);
        refused(z, m, "fwdio_file_stats(NULL)", fwdio_file_stats(m->f, NULL), FWDIO_EINVAL,
                NO_ALT);
        refused(z, m, "fwdio_file_error_info(NULL)", fwdio_file_error_info(m->f, NULL),
                FWDIO_EINVAL, NO_ALT);
        refused(z, m, "fwdio_test(NULL file)", fwdio_test(NULL, &done), FWDIO_EINVAL, NO_ALT);
        refused(z, m, "fwdio_file_stats(NULL file)", fwdio_file_stats(NULL, &st), FWDIO_EINVAL,
                NO_ALT);
        refused(z, m, "fwdio_file_error_info(NULL file)", fwdio_file_error_info(NULL, &info),
                FWDIO_EINVAL, NO_ALT);
        break;
    }
    }
}

/* An fwdio_open the documentation says is refused: EINVAL, no handle. */
static void bad_open(fuzz_t *z)
{
    tc_rng_t *r = &z->mine;
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.write_size = 8 << 10;
    o.stripe_size = 32 << 10;
    int list[3] = {0, 0, tc_size};
    const char *what;
    char path[4096];
    tc_path(path, sizeof path, "refused.dat");
    const char *p = path;
    fwdio_runtime_t *rt = z->rt;
    fwdio_file_t *sentinel = (fwdio_file_t *)&o, *f = sentinel;
    switch (tc_rng_below(r, 12)) {
    case 0: what = "stripe not a multiple of write_size"; o.stripe_size = 12 << 10; break;
    case 1: what = "write_size over 2 GiB"; o.write_size = o.stripe_size = (3ull << 30); break;
    case 2: what = "layout 3"; o.layout = (fwdio_layout_t)(3 + tc_rng_below(r, 100)); break;
    case 3: what = "placement 3"; o.placement = (fwdio_placement_t)3; break;
    case 4: what = "writers -1"; o.writers = -1 - (int)tc_rng_below(r, 10); break;
    case 5: what = "negative stride"; o.writer_stride = -2; break;
    case 6: what = "negative targets"; o.layout = FWDIO_LAYOUT_TARGETS; o.targets = -3; break;
    case 7: what = "first_writer = P"; o.first_writer = tc_size; break;
    case 8:
        what = "writer list: rank P";
        o.writer_list = &list[2];
        o.writer_list_len = 1;
        break;
    case 9:
        what = "writer list: rank twice";
        o.writer_list = list;
        o.writer_list_len = 2;
        break;
    case 10: what = "NULL path"; p = tc_rng_below(r, 2) ? NULL : ""; break;
    default: what = "NULL runtime"; rt = NULL; break;
    }
    char call[128];
    snprintf(call, sizeof call, "fwdio_open(%s)", what);
    refused(z, NULL, call, fwdio_open(rt, p, 1000, &o, NULL, &f), FWDIO_EINVAL, NO_ALT);
    TC_CHECK(f == sentinel, "refused %s handed out a handle", call);
    refused(z, NULL, "fwdio_open(file NULL)", fwdio_open(z->rt, path, 10, NULL, NULL, NULL),
            FWDIO_EINVAL, NO_ALT);
}

/* A configuration fwdio_init must refuse (checked before any collective). */
static void bad_init(fuzz_t *z)
{
    fwdio_config_t c;
    memset(&c, 0, sizeof c);
    switch (tc_rng_below(&z->mine, 4)) {
    case 0: c.callback_mode = (fwdio_callback_mode_t)2; break;
    case 1: c.callback_mode = (fwdio_callback_mode_t)-1; break;
    case 2: c.max_message_size = 1 + (size_t)tc_rng_below(&z->mine, 4095); break;
    default: c.max_message_size = ((size_t)1 << 30) + 1; break;
    }
    fwdio_runtime_t *sentinel = (fwdio_runtime_t *)&c, *rt = sentinel;
    refused(z, NULL, "fwdio_init(invalid config)", fwdio_init(MPI_COMM_WORLD, &c, &rt),
            FWDIO_EINVAL, NO_ALT);
    TC_CHECK(rt == sentinel, "a refused fwdio_init handed out a runtime");
}

static void junk_calls(fuzz_t *z)
{
    int code = (int)tc_rng_next(&z->mine);
    int codes[] = {code, INT_MIN, INT_MAX, -18, 1, code % 40};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = fwdio_strerror(codes[i]);
        TC_CHECK(s && s[0], "fwdio_strerror(%d) is NULL or empty", codes[i]);
    }
    fwdio_runtime_stats_t rs;
    int done = 0;
    refused(z, NULL, "fwdio_poll(NULL)", fwdio_poll(NULL), FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_runtime_stats(NULL)", fwdio_runtime_stats(NULL, &rs), FWDIO_EINVAL,
            NO_ALT);
    refused(z, NULL, "fwdio_runtime_stats(rt, NULL)", fwdio_runtime_stats(z->rt, NULL),
            FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_close(NULL)", fwdio_close(NULL), FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_wait(NULL)", fwdio_wait(NULL), FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_test(NULL)", fwdio_test(NULL, &done), FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_write(NULL file)", fwdio_write(NULL, &done, 1, 0), FWDIO_EINVAL,
            NO_ALT);
    refused(z, NULL, "fwdio_finalize(NULL)", fwdio_finalize(NULL), FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_plan_describe(out NULL)",
            fwdio_plan_describe(z->rt, 100, NULL, 0, 0, NULL, 0, NULL), FWDIO_EINVAL, NO_ALT);
    refused(z, NULL, "fwdio_plan_describe(nranks -1)",
            fwdio_plan_describe(NULL, 100, NULL, -1, 0, NULL, 0, stderr), FWDIO_EINVAL, NO_ALT);
    fwdio_file_free(NULL);
    fwdio_options_init(NULL);
    TC_CHECK(fwdio_file_error(NULL) != NULL, "fwdio_file_error(NULL) is NULL");
    if (want(z, 2))
        bad_open(z);
    else
        bad_init(z);
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
    check_rc(m, "fwdio_file_stats", fwdio_file_stats(m->f, &s), FWDIO_OK, NO_ALT);
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
    check_rc(m, "fwdio_file_error_info", fwdio_file_error_info(m->f, &info), FWDIO_OK, NO_ALT);
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
        rc = fwdio_write_lent(m->f, NULL, 0, 0, on_lent_done, l);
        if (rc == FWDIO_OK) {
            l->next = z->lents;
            z->lents = l;
        } else {
            free(l);
        }
    }
    }
    check_rc(m, "zero-length write", rc, want_rc, FWDIO_EFAILED);
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
        bad_write(z, m);
    } else if (a < 72) {
        int done = -1;
        z->n.calls++;
        z->n.tests++;
        int rc = fwdio_test(m->f, &done);
        if (done == 1)
            record_status(m, rc, "fwdio_test");
        else
            check_rc(m, "fwdio_test (not done)", rc, FWDIO_OK, NO_ALT);
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
            check_rc(m, "fwdio_close", fwdio_close(m->f), FWDIO_OK, NO_ALT);
            m->closed = 1;
        }
    } else if (a < 89) {
        if (m->closed && m->deadline < z->epoch) {
            z->n.calls++;
            z->n.waits++;
            tc_phase("round %d epoch %d: fwdio_wait %s", z->round, z->epoch, m->name);
            record_status(m, fwdio_wait(m->f), "fwdio_wait");
        } else if (!m->closed) {
            refused(z, m, "fwdio_wait before close", fwdio_wait(m->f), FWDIO_ENOTCLOSED, NO_ALT);
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
        junk_calls(z);
        return;
    }
    act_on_file(z, live[tc_rng_below(&z->mine, (uint64_t)n)]);
}

/* ---- rounds -------------------------------------------------------------- */

static void start_runtime(fuzz_t *z)
{
    fwdio_config_t c;
    random_config(z, &c);
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

/* The pieces of v (sorted, tiling the file) with [a, b) cut out and given to
 * `owner`: what a commit block does to the file. Returns the new count. */
static size_t paint(const tc_extent_t *v, size_t nv, uint64_t a, uint64_t b, int owner,
                    tc_extent_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < nv; i++) {
        uint64_t lo = v[i].offset, hi = v[i].offset + v[i].len;
        uint64_t cut_lo = lo > a ? lo : a, cut_hi = hi < b ? hi : b;
        if (cut_lo >= cut_hi) {
            out[n++] = v[i];
            continue;
        }
        if (lo < cut_lo)
            out[n++] = (tc_extent_t){lo, cut_lo - lo, v[i].owner};
        out[n++] = (tc_extent_t){cut_lo, cut_hi - cut_lo, owner};
        if (cut_hi < hi)
            out[n++] = (tc_extent_t){cut_hi, hi - cut_hi, v[i].owner};
    }
    return n;
}

/* Collective: the bytes of a completed file. Each extent holds what its
 * owner got accepted (a prefix of it), the rest reads as zeros; a commit
 * block lies over whatever was there. */
static void verify_good(ffile_t *m)
{
    uint64_t *done = calloc(m->n_ext + 1, sizeof *done);
    for (size_t j = 0; j < m->n_jobs; j++)
        if (m->jobs[j].ext != SIZE_MAX)
            done[m->jobs[j].ext] = m->jobs[j].done;
    MPI_Allreduce(MPI_IN_PLACE, done, (int)m->n_ext, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    tc_extent_t *v = malloc((2 * m->n_ext + 3) * sizeof *v);
    size_t nv = 0;
    for (size_t e = 0; e < m->n_ext; e++) {
        const tc_extent_t *x = &m->ext[e];
        if (done[e] > 0)
            v[nv++] = (tc_extent_t){x->offset, done[e], x->owner};
        if (done[e] < x->len)
            v[nv++] = (tc_extent_t){x->offset + done[e], x->len - done[e], -1};
    }
    if (m->committer[0] >= 0) {
        tc_extent_t *w = malloc((nv + 3) * sizeof *w);
        nv = paint(v, nv, m->commit_off, m->commit_off + m->commit_len, m->committer[0], w);
        free(v);
        v = w;
    }
    tc_verify_extents(MPI_COMM_WORLD, m->path, m->size, m->seed, v, nv);
    free(v);
    free(done);
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Rank 0: what a finished file leaves beside it. No temporary of atomic
 * replace; a failed atomic replace leaves the target as it was (absent, or
 * the blocking directory); a failed open creates no directory. */
static void check_leftovers(const ffile_t *m)
{
    char dir[4096], tmp[4200];
    snprintf(dir, sizeof dir, "%s", m->path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    snprintf(tmp, sizeof tmp, "%s/.%s.fwdio-tmp", dir, slash + 1);
    if (m->kind == KIND_BADPATH) {
        TC_CHECK(!exists(dir), "%s: the failed open created %s", m->name, dir);
        return;
    }
    if (!m->opts.atomic_replace)
        return;
    TC_CHECK(!exists(tmp), "%s: temporary %s left behind", m->name, tmp);
    if (m->kind == KIND_RENAME_FAILS) {
        char keep[4160];
        snprintf(keep, sizeof keep, "%s/keep", m->path);
        TC_CHECK(exists(keep), "%s: the directory the rename failed on lost %s", m->name, keep);
    } else if (m->kind != KIND_GOOD) {
        TC_CHECK(!exists(m->path), "%s: failed atomic replace created %s", m->name, m->path);
    }
}

/* Collective: statuses, callbacks, byte counts and contents of every file. */
static void check_files(fuzz_t *z)
{
    for (int i = 0; i < z->nfiles; i++) {
        ffile_t *m = &z->files[i];
        tc_phase("round %d: checking %s", z->round, m->name);
        tc_cb_check(MPI_COMM_WORLD, &m->cb, m->name, want_ready[m->kind], want_final[m->kind],
                    z->mode, m->f);
        if (m->have_status)
            TC_CHECK(m->status == atomic_load(&m->cb.complete_status),
                     "%s: fwdio_wait/test gave %d (%s), the complete callback %d", m->name,
                     m->status, fwdio_strerror(m->status), atomic_load(&m->cb.complete_status));
        long total = tc_sum(MPI_COMM_WORLD, (long)m->accepted_bytes);
        if (m->f && m->kind == KIND_GOOD) {
            uint64_t wb[64] = {0}, sum = 0;
            int nw = fwdio_file_writer_bytes(m->f, wb, 64);
            for (int w = 0; w < nw && w < 64; w++)
                sum += wb[w];
            TC_CHECK(sum == (uint64_t)total,
                     "%s: the writers received %" PRIu64 " bytes, the ranks' accepted calls "
                     "carried %ld", m->name, sum, total);
        }
        if (m->kind == KIND_GOOD)
            verify_good(m);
        if (tc_rank == 0)
            check_leftovers(m);
    }
}

static void check_lents(fuzz_t *z)
{
    while (z->lents) {
        lent_t *l = z->lents;
        z->lents = l->next;
        const ffile_t *m = &z->files[l->file];
        int calls = atomic_load(&l->calls), status = atomic_load(&l->status);
        TC_CHECK(calls == 1, "%s: a lent buffer was handed back %d times by complete", m->name,
                 calls);
        if (calls == 1 && m->kind == KIND_GOOD)
            TC_CHECK(status == FWDIO_OK, "%s: lent buffer handed back with %d (%s)", m->name,
                     status, fwdio_strerror(status));
        if (calls == 1 && m->kind != KIND_GOOD)
            TC_CHECK(status == FWDIO_OK || status == atomic_load(&m->cb.complete_status),
                     "%s: lent buffer handed back with %d (%s)", m->name, status,
                     fwdio_strerror(status));
        free(l->buf);
        free(l);
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
        else if (m->kind != KIND_BADPATH && m->kind != KIND_RENAME_FAILS && exists(m->path) &&
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
        for (int k = 0; k < opens; k++)
            open_file(z, z->epoch, epochs);
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
    check_files(z);
    check_lents(z);
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
