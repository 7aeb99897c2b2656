/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-file session state machine, run on the progress thread:
 *
 *   DUP -> CHECKING [-> WAIT_PATH] -> OPENING -> OPEN -> CLOSING -> SYNCING
 *       [-> COMMITTING] -> DONE
 *
 * DUP: the file gets its own communicator (MPI_Comm_idup), so its collectives
 * never mix with another file's, whatever order ranks close files in.
 * A file opened dormant (dormant.h) stops here, holding its communicator,
 * until a rank uses it; one that no rank used is discarded from there.
 * CHECKING: every rank's path, size and plan-shaping options are compared
 * (open_check.h); ranks that disagree fail the file everywhere with
 * FWDIO_EINVAL before anything touches storage, and it completes once closed
 * here, with no further collective (their plans may differ).
 * WAIT_PATH: an earlier file of this runtime still writes the same path; the
 * open (and its truncation, or the reuse of the temporary) waits until it is
 * complete, so versions of a path are written one after the other.
 * OPENING: writers open the file on the I/O thread; the statuses are agreed
 * (Iallreduce); ready fires. Writes issued before are held here, then sent.
 * OPEN: data messages flow; writers receive and assemble them.
 * CLOSING: once this rank closed, the bytes sent to each writer are summed
 * (Iallreduce), so each writer knows how many bytes to wait for.
 * SYNCING: writers drain, flush partial units, fdatasync if asked, close, and
 * the final status is agreed; complete fires.
 * COMMITTING (a commit block was set, or atomic_replace): once every byte is
 * durable, one rank writes the commit block and renames the temporary over
 * the target (or, if the file failed, removes the temporary); its status is
 * agreed and complete fires.
 * A failed writer keeps receiving and discarding, so no sender and no
 * collective ever waits for it forever.
 *
 * Every MPI call is checked. One that fails aborts the file on this rank
 * (fwdioi_outcome_abort): it tells the other ranks (abort.c), gives up the
 * file's collectives and completes with FWDIO_EMPI naming the call, once its
 * own sends, receives and storage jobs are done.
 */
#include "session/session.h"

#include "agreement/abort.h"
#include "agreement/agreements.h"
#include "agreement/outcome.h"
#include "session/dormant.h"
#include "session/file_life.h"
#include "local/local_life.h"
#include "local/local_restart.h"
#include "local/local_space.h"
#include "local/local_tier.h"
#include "log.h"
#include "read/requester.h"
#include "write/sender.h"
#include "node/shared_path.h"
#include "stream/steps.h"
#include "storage/storage.h"
#include "trace.h"
#include "session/watchdog.h"
#include "session/role.h"
#include "write/combine.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static void finish_session(fwdio_file_t *f, const fwdioi_errinfo_t *result);
static void finish_if_aborted(fwdio_file_t *f);
static void data_done(fwdio_file_t *f);
static void read_check_done(fwdio_file_t *f);
static void try_close(fwdio_file_t *f);
static void finish_discarded(fwdio_file_t *f);

static void feed_dups(struct fwdio_runtime *owner);

/* Hand the progress thread's counters to fwdio_file_stats (at completion, `t`;
 * runtime lock held). */
static void publish_stats_locked(fwdio_file_t *f, double t)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    const fwdioi_session_stats_t *ss = &f->s.stats;
    fwdio_file_stats_t *st = &f->stats;
    st->messages_sent = ss->messages_sent;
    st->writer_bytes = ss->writer_bytes;
    st->messages_received = ss->messages_received;
    st->pwrite_calls = ss->pwrite_calls;
    st->partial_flushes = ss->partial_flushes;
    st->pwrite_time = ss->pwrite_seconds;
    st->sync_time = ss->sync_seconds;
    st->peak_writer_bytes = f->s.wbuf.peak;
    st->bytes_copied += ss->writer_copied; /* beside the application side's */
    st->bytes_to_mpi = ss->bytes_to_mpi;
    st->bytes_to_pwrite = ss->bytes_to_pwrite;
    st->bytes_shared = ss->bytes_shared;
    st->bytes_from_storage = ss->bytes_from_storage;
    st->time_to_complete = t - f->t_open;
    st->time_to_failure = ss->first_failure > 0 ? ss->first_failure - f->t_open : 0;
}

/* ---- callbacks ---- */

static void run_ready(fwdioi_call_t *call)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)call - offsetof(fwdio_file_t, ready_call));
    uint64_t t_trace = fwdioi_trace_begin();
    if (f->cbs.ready)
        f->cbs.ready(f, (int)f->s.outcome.open_agreed.status, f->cbs.user);
    fwdioi_trace_end_file(t_trace, "ready callback", (int64_t)f->seq);
    fwdioi_rt_lock(f->engine);
    f->ready_returned = 1;
    fwdioi_rt_broadcast(f->engine);
    fwdioi_rt_unlock(f->engine);
}

static void run_complete(fwdioi_call_t *call)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)call - offsetof(fwdio_file_t, complete_call));
    uint64_t t_trace = fwdioi_trace_begin();
    if (f->cbs.complete)
        f->cbs.complete(f, (int)f->known_error.status, f->cbs.user);
    fwdioi_trace_end_file(t_trace, "complete callback", (int64_t)f->seq);
    fwdioi_rt_lock(f->engine);
    f->complete_delivered = 1;
    /* No drain follows (no node-local tier, or the file failed): the file is
     * as drained as it will be, with complete's status. */
    int drained_now = !f->drain_pending;
    if (drained_now)
        f->drain_status = (int)f->known_error.status;
    fwdioi_rt_unlock(f->engine);
    if (drained_now && f->cbs.drained)
        f->cbs.drained(f, f->drain_status, f->cbs.user);
    fwdioi_rt_lock(f->engine);
    f->drained_delivered |= drained_now;
    /* Freed by the application already (and drained): the last reference is
     * ours. Unlinked in the same critical section, so fwdio_finalize never
     * sees it half gone. */
    int release = f->app_freed && f->drained_delivered;
    if (release)
        fwdioi_file_unlink_locked(f);
    fwdioi_rt_broadcast(f->engine);
    fwdioi_rt_unlock(f->engine);
    if (release)
        fwdioi_file_release(f);
}

/* ---- one file per path at a time ---- */

static void start_open(fwdio_file_t *f);

/*
 * The active files of each path, in open order, so that an open and the end
 * of a file cost O(1) however many files are in flight (a scan of every
 * active file at each, as before, made n files in flight cost O(n^2)). The
 * runtime's active_by_path maps the hash of a path_key to the first of the
 * files with that hash, which form a ring in sequence order (open tasks run
 * in sequence order, so a file joins at the tail). Two paths with one hash
 * share a ring; a lookup skips the other path's files.
 */
static uint64_t path_hash(const fwdio_file_t *f)
{
    return f->path_hash; /* set by fwdio_open */
}

/* Index the file by its sequence number and path; -1 without memory (then it
 * is in neither) (progress thread). */
static int index_file(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdio_runtime *o = f->owner;
    uint64_t h = path_hash(f);
    fwdio_file_t *first = fwdioi_u64map_get(&o->active_by_path, h);
    if (fwdioi_u64map_reserve(&o->active_by_seq, o->active_by_seq.n + 1) != 0 ||
        (!first && fwdioi_u64map_put(&o->active_by_path, h, f) != 0))
        return -1;
    fwdioi_u64map_put(&o->active_by_seq, f->seq, f); /* reserved: cannot fail */
    if (!first) {
        f->s.links.path_prev = f->s.links.path_next = f;
        return 0;
    }
    fwdio_file_t *before = first->s.links.path_prev; /* the last, normally */
    while (before->seq > f->seq && before != first)
        before = before->s.links.path_prev;
    if (before->seq > f->seq) { /* earlier than every file of the ring */
        before = first->s.links.path_prev;
        fwdioi_u64map_put(&o->active_by_path, h, f); /* replaces: cannot fail */
    }
    f->s.links.path_prev = before;
    f->s.links.path_next = before->s.links.path_next;
    before->s.links.path_next->s.links.path_prev = f;
    before->s.links.path_next = f;
    return 0;
}

/* The file left the active list: out of the index by sequence number
 * (progress thread). */
static void unindex_seq(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdio_runtime *o = f->owner;
    if (fwdioi_u64map_get(&o->active_by_seq, f->seq) == f)
        fwdioi_u64map_remove(&o->active_by_seq, f->seq);
}

/* The file no longer writes its path: out of the index by path (at its
 * end, or its drain's) (progress thread). */
static void unindex_path(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdio_runtime *o = f->owner;
    if (!f->s.links.path_next)
        return;
    uint64_t h = path_hash(f);
    if (f->s.links.path_next == f)
        fwdioi_u64map_remove(&o->active_by_path, h);
    else {
        if (fwdioi_u64map_get(&o->active_by_path, h) == f)
            fwdioi_u64map_put(&o->active_by_path, h, f->s.links.path_next); /* replaces */
        f->s.links.path_prev->s.links.path_next = f->s.links.path_next;
        f->s.links.path_next->s.links.path_prev = f->s.links.path_prev;
    }
    f->s.links.path_prev = f->s.links.path_next = NULL;
}

/* The first active file of `key`'s path, or NULL (progress thread). */
static fwdio_file_t *first_of_path(struct fwdio_runtime *o, const char *key, uint64_t h)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *first = fwdioi_u64map_get(&o->active_by_path, h);
    fwdio_file_t *g = first;
    while (g && strcmp(g->path_key, key)) {
        g = g->s.links.path_next;
        if (g == first)
            return NULL;
    }
    return g;
}

/* An earlier file of the runtime, not complete here, writes f's path: f is
 * not the first active file of it. A file that could not be indexed (it is
 * aborted) waits for nothing. */
static int path_in_use(const fwdio_file_t *f)
{
    if (!f->s.links.path_next)
        return 0;
    fwdio_file_t *first = first_of_path(f->owner, f->path_key, path_hash(f));
    return first && first != f;
}

/* `done` left the active list: open the file that waited for its path, the
 * path's first active file now. */
static void start_waiting_opens(struct fwdio_runtime *o, const fwdio_file_t *done)
{
    fwdio_file_t *f = first_of_path(o, done->path_key, path_hash(done));
    if (f && f->s.phase == FWDIOI_PHASE_WAIT_PATH)
        start_open(f);
}

/* ---- the end: final agreement ---- */

/* f no longer holds a communicator (its session, or its drain, is over): a
 * file waiting for one under files_in_flight may take one. */
static void release_comm_count(fwdio_file_t *f)
{
    if (!f->s.links.holds_comm)
        return;
    f->s.links.holds_comm = 0;
    f->owner->comms_held--;
    feed_dups(f->owner);
}

/* The drain of a file of the node-local tier is over: the path is free for
 * the next file that writes it, and the communicator it drained on counts
 * no more against files_in_flight (progress thread). */
static void path_freed_by_drain(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    if (f->s.links.draining) {
        LIST_REMOVE(f, s.links.drain);
        f->s.links.draining = 0;
    }
    unindex_path(f);
    start_waiting_opens(f->owner, f);
    release_comm_count(f); /* the drain held the file's communicator until now */
}

/* An MPI call of f's drain failed on this rank: the other ranks hear of it
 * as of a session's abort, marked as the drain's (abort.c) (progress
 * thread). */
static void announce_drain_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_abort_announce_drain(f->owner, f->seq, why);
}

/* The drain of f is over with its communicator, on which none of its
 * collectives was given up: kept for a later file when the drain succeeded
 * (nothing of it can still arrive), else freed (progress thread). */
static void drain_comm_done(fwdio_file_t *f, MPI_Comm *comm, int reusable)
{
    FWDIOI_ASSERT_PROGRESS();
    if (reusable && f->s.links.comm_slot >= 0) {
        fwdioi_comm_pool_give(&f->owner->comm_pool, f->s.links.comm_slot, *comm);
        *comm = MPI_COMM_NULL;
        return;
    }
    fwdioi_log_mpi_failure(MPI_Comm_free(comm), "MPI_Comm_free (drain)");
}

/* The session is over: publish the result and fire complete (progress thread). */
static void finish_session(fwdio_file_t *f, const fwdioi_errinfo_t *result)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_DONE;
    fwdioi_dormant_ended(f); /* discarded, or aborted while dormant */
    LIST_REMOVE(f, s.links.active);
    if (s->links.polled) {
        LIST_REMOVE(f, s.links.poll);
        s->links.polled = 0;
    }
    unindex_seq(f);
    fwdioi_errinfo_t final = *result; /* result may point into the session */
    /* A file of the node-local tier drains now, on its communicator; its
     * path stays taken until the drain is over (path_freed_by_drain). */
    int draining = fwdioi_local_session_done(f, &final, &s->comm, path_freed_by_drain,
                                             announce_drain_abort, drain_comm_done);
    if (!draining)
        unindex_path(f);
    else {
        LIST_INSERT_HEAD(&f->owner->draining, f, s.links.drain);
        s->links.draining = 1;
        fwdioi_errinfo_t why;
        if (fwdioi_abort_take_pending(f->owner, f->seq, 1, &why))
            fwdioi_local_abort_heard(f, &why); /* another rank's drain failed first */
    }
    if (s->comm != MPI_COMM_NULL) {
        /* Kept for a later file when nothing of this one can still arrive on
         * it: every message of a file not aborted was received before its
         * end (data is sent synchronously, each writer waits for the bytes
         * agreed, reads end before the close), and its collectives are over. */
        int keep = s->links.comm_slot >= 0 && !s->outcome.aborted && !s->outcome.abandoned;
        if (keep) {
            fwdioi_comm_pool_give(&f->owner->comm_pool, s->links.comm_slot, s->comm);
        } else if (s->outcome.aborted && (f->my_writer >= 0 || f->reading))
            fwdioi_zombie_add(f->owner, s->comm, s->outcome.abandoned); /* late data (or answers) */
        else if (!s->outcome.abandoned) /* else left to MPI, as the agreement given up */
            fwdioi_log_mpi_failure(MPI_Comm_free(&s->comm), "MPI_Comm_free (file)");
        s->comm = MPI_COMM_NULL;
    }
    if (!draining) /* else the drain holds the communicator (path_freed_by_drain) */
        release_comm_count(f);
    fwdioi_session_free(f);
    double t = fwdioi_now();
    fwdioi_rt_lock(f->engine); /* stats, error and final status become visible together */
    publish_stats_locked(f, t);
    fwdioi_outcome_publish_error_locked(f, &final);
    f->known_error = final;
    fwdioi_rt_unlock(f->engine);
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s complete: %s", f->rank, f->path,
               fwdio_strerror((int)final.status));
    fwdioi_steps_end(f, &final); /* their callbacks come before complete */
    if (!draining)
        start_waiting_opens(f->owner, f);
    fwdioi_rt_deliver(f->engine, &f->complete_call); /* last: it may free f */
}

/* The status before the commit: the open's if it failed, else the final one. */
static const fwdioi_errinfo_t *data_result(const fwdio_file_t *f)
{
    return f->s.outcome.open_agreed.status != FWDIO_OK ? &f->s.outcome.open_agreed : &f->s.outcome.final_agreed;
}

static void on_commit_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_COMMIT, st))
        return;
    fwdioi_trace_end_file(f->s.trace_t0, "agree commit", (int64_t)f->seq);
    const fwdioi_errinfo_t *data = data_result(f);
    finish_session(f, data->status != FWDIO_OK ? data : &f->s.commit.agreed);
}

static void start_commit_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_COMMIT, &s->commit.local, &s->commit.agreed,
                                on_commit_agreed);
}

static int may_finish_aborted(const fwdio_file_t *f)
{
    const fwdioi_session_t *s = &f->s;
    return s->outcome.aborted && s->phase != FWDIOI_PHASE_DONE && s->phase != FWDIOI_PHASE_DUP &&
           s->close_requested && s->sends_pending == 0 && s->recvs_pending == 0 &&
           s->io_pending == 0 && (!f->role->waiting_len || f->role->waiting_len(f) < 0);
}

static void finish_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, finish_task));
    f->s.finish_queued = 0;
    if (may_finish_aborted(f))
        finish_session(f, &f->s.outcome.abort_info);
}

/* An aborted file completes once nothing of its own is in flight: from a
 * task, since the abort may have come from deep inside a callback (a send
 * failing among held messages released by a step's completion) whose
 * callers still use the file, which its completion lets the application
 * free (progress thread). */
static void finish_if_aborted(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    if (may_finish_aborted(f) && !f->s.finish_queued) {
        f->s.finish_queued = 1;
        fwdioi_rt_submit(f->engine, &f->finish_task);
    }
}

static void on_commit_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    fwdioi_outcome_storage_failed(f, job->fail_time); /* fwdio_file_stats_t */
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&f->s.commit.local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    f->s.io_pending--;
    fwdioi_storage_job_free(job);
    if (f->s.outcome.aborted)
        finish_if_aborted(f);
    else
        start_commit_agreement(f);
}

/* Every rank is done with the data and its status is agreed. The committer
 * writes the commit block and renames the temporary into place, or removes
 * the temporary if the file failed; everyone else waits for its status. */
static void start_commit(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_COMMITTING;
    if (f->rank != s->commit.committer) {
        start_commit_agreement(f);
        return;
    }
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_COMMIT, f, on_commit_done);
    if (!job) {
        fwdioi_errinfo_set(&s->commit.local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    job->path = f->write_path;
    job->target = f->opts.atomic_replace ? f->path : NULL;
    job->discard = data_result(f)->status != FWDIO_OK;
    if (s->commit.committers == 1 && fwdioi_storage_job_add_blocks(job, &f->commit) != 0) {
        fwdioi_storage_job_free(job);
        fwdioi_errinfo_set(&s->commit.local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

/* The node-local tier's partner copies are durable, or failed, with the
 * agreed status `copies` (local_tier.h: fwdioi_local_replicate) (progress
 * thread). */
static void copies_done(fwdio_file_t *f, const fwdioi_errinfo_t *copies)
{
    FWDIOI_ASSERT_PROGRESS();
    if (f->s.outcome.aborted) {
        finish_if_aborted(f);
        return;
    }
    finish_session(f, copies);
}

static void on_final_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_FINAL, st))
        return;
    fwdioi_trace_end_file(s->trace_t0, "agree final", (int64_t)f->seq);
    /* A failed file of the node-local tier has no drain to clean up: its
     * committer removes the temporary that writers which wrote (or moved)
     * straight to the target may have left. */
    int discards = data_result(f)->status != FWDIO_OK && f->opts.atomic_replace;
    if (s->commit.committer >= 0 && (!fwdioi_local_defers_commit(f) || discards))
        start_commit(f);
    else if (data_result(f)->status != FWDIO_OK || fwdioi_local_replicate(f, copies_done) != 0)
        finish_session(f, data_result(f));
    /* else the partner copies first (local_copies 2): copies_done */
}

/*
 * This rank is done with the file (closing agreed; as a writer, everything
 * written and synced). Its final status goes in once its own sends are done
 * too, so that every lent buffer is handed back before complete fires
 * (progress thread).
 */
static void data_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->outcome.aborted) {
        finish_if_aborted(f);
        return;
    }
    s->final_ready = 1;
    if (s->sends_pending > 0 || s->final_started)
        return;
    s->final_started = 1;
    s->phase = FWDIOI_PHASE_SYNCING;
    fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_FINAL, &s->outcome.local_error, &s->outcome.final_agreed,
                                on_final_agreed);
}

/* ---- closing: agree on the bytes per writer ---- */

/* The bytes per writer are agreed (and the open is decided). */
static void close_agreed(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    const int nw = f->plan.nwriters;
    /* A file that failed to open sent nothing on any rank (the writes held
     * for the open were dropped), whatever a close agreed beside the open
     * counted of them. */
    if (s->outcome.open_agreed.status != FWDIO_OK)
        memset(s->expected_bytes, 0, (size_t)nw * sizeof *s->expected_bytes);
    if (!fwdioi_steps_tags_agree(s->expected_bytes, nw, f->plan.nranks, FWDIOI_CLOSE_TAG)) {
        /* Another rank agreed on a step here: every rank sees the same sums
         * and gives up the file's collectives alike. */
        fwdioi_errinfo_t why = {FWDIO_EINVAL, -1, 0, 0, FWDIOI_REASON_STEPS, -1, 0};
        fwdioi_outcome_abort(f, &why, 0);
        return;
    }
    s->commit.committers = (int)s->expected_bytes[nw + FWDIOI_SUM_COMMITS];
    if (s->commit.committers == 1)
        s->commit.committer = (int)s->expected_bytes[nw + FWDIOI_SUM_COMMITTER];
    else if (s->commit.committers > 1 || f->opts.atomic_replace)
        s->commit.committer = fwdioi_plan_writer_rank(&f->plan, 0); /* cleans up, writes no block */
    if (s->commit.committers > 1 && f->commit.n > 0) {
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: fwdio_set_commit was called on %d ranks",
                   f->rank, f->path, s->commit.committers);
        fwdioi_errinfo_t e =
            fwdioi_errinfo_committers(f->rank, s->commit.committers,
                                      s->expected_bytes[nw + FWDIOI_SUM_COMMITTER],
                                      f->commit.b[0].offset);
        if (s->outcome.local_error.status == FWDIO_OK)
            s->outcome.local_error = e;
    }
    s->phase = FWDIOI_PHASE_SYNCING;
    s->watch.t_closed = fwdioi_now();
    fwdioi_rt_lock(f->engine);
    memcpy(f->writer_bytes_agreed, f->s.expected_bytes,
           (size_t)f->plan.nwriters * sizeof *f->writer_bytes_agreed);
    fwdioi_rt_unlock(f->engine);
    if (f->reading) { /* the requests each reader takes before it is done */
        s->close_agreed = 1;
        read_check_done(f);
        return;
    }
    if (f->my_writer < 0) {
        data_done(f);
        return;
    }
    f->s.close_agreed = 1;
    f->role->close_agreed(f);
}

static void on_close_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_CLOSE, st))
        return;
    fwdioi_trace_end_file(s->trace_t0, "agree close", (int64_t)f->seq);
    if (s->phase < FWDIOI_PHASE_CLOSING) { /* closed early: after the open's result */
        s->close_result_waits = 1;
        return;
    }
    close_agreed(f);
}

/* What this rank sent each writer (for a close started early, what it holds
 * for them), whether it holds the commit block and its rank, and a stream's
 * bytes appended after its last step, summed over the ranks. */
static void post_close_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    const int nw = f->plan.nwriters;
    int has_commit = f->commit.n > 0; /* set before fwdio_close, which queued us */
    s->sent_bytes[nw + FWDIOI_SUM_COMMITS] = (uint64_t)has_commit;
    s->sent_bytes[nw + FWDIOI_SUM_COMMITTER] = has_commit ? (uint64_t)f->rank : 0;
    fwdioi_steps_set_tag(s->sent_bytes, nw, FWDIOI_CLOSE_TAG);
    /* appended after the last step end */
    s->sent_bytes[nw + FWDIOI_SUM_APPENDED] = fwdioi_steps_close_appended(f);
    fwdioi_session_agree(f, FWDIOI_MPI_AGREE_CLOSE, s->sent_bytes, s->expected_bytes,
                    nw + FWDIOI_CLOSE_EXTRA, MPI_UINT64_T, MPI_SUM, on_close_agreed);
}

/*
 * Closing early. A file closed here before its open is decided (a small
 * file: open, write, close) starts its close agreement right behind the
 * open agreement instead of after it, so that the two rounds overlap: the
 * writes held for the open are counted as sent (they all go once the open
 * succeeds; after a failed open nothing is sent, and close_agreed counts
 * nothing for the writers), and a close result that comes first waits for
 * the open's (open_decided). Every rank makes the same collectives in the
 * same order, early or not: the check, the open, the close, the final. Not
 * for streams (their steps and appends come before the close) nor reads.
 */
static void try_close_early(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (!s->close_requested || s->close_early || s->outcome.aborted ||
        s->phase != FWDIOI_PHASE_OPENING || !s->open_agreement_started || f->stream ||
        f->reading)
        return;
    for (fwdioi_task_t *t = STAILQ_FIRST(&s->held); t; t = STAILQ_NEXT(t, link)) {
        const fwdioi_msg_t *m = (const fwdioi_msg_t *)t;
        s->sent_bytes[m->writer] += m->payload;
    }
    s->close_early = 1;
    post_close_agreement(f);
}

static void start_close_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->check.failed) {
        /* The ranks' plans may differ, so no further collective can be
         * trusted to match; every rank knows the status already. */
        finish_session(f, &s->outcome.open_agreed);
        return;
    }
    s->phase = FWDIOI_PHASE_CLOSING;
    post_close_agreement(f);
}

static void close_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, close_task));
    f->s.close_requested = 1;
    f->s.watch.t_close_called = fwdioi_now();
    if (f->s.dormant && !f->s.outcome.aborted) {
        /* Discarded (fwdioi_discard: a close would have woken it first, its
         * wake task running before this one): complete once it holds its
         * communicator (comm_taken), which every rank takes in open order. */
        if (f->s.phase != FWDIOI_PHASE_DUP)
            finish_discarded(f);
        return;
    }
    if (f->s.outcome.aborted)
        finish_if_aborted(f);
    else if (f->s.phase == FWDIOI_PHASE_OPENING)
        try_close_early(f);
    else
        try_close(f);
}

/* The close agreement waits for the file to be open (writes held until then
 * are counted) and for every step ended here (the agreements of a file run
 * in the same order on every rank) (progress thread). */
static void try_close(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (!s->close_requested || s->outcome.aborted || s->phase != FWDIOI_PHASE_OPEN ||
        fwdioi_steps_pending(f) || fwdioi_step_drains_dup_pending(f))
        return;
    /* A stream's bytes appended after its last step end get their offsets
     * first (steps.c; it calls here again once they have). */
    if (!s->check.failed && !fwdioi_steps_close_scanned(f))
        return;
    start_close_agreement(f);
}

/* ---- opening ---- */

static void deliver_ready(fwdio_file_t *f)
{
    if (f->s.ready_delivered)
        return;
    f->s.ready_delivered = 1;
    double t = fwdioi_now();
    fwdioi_rt_lock(f->engine);
    f->stats.time_to_ready = t - f->t_open;
    fwdioi_rt_unlock(f->engine);
    fwdioi_rt_deliver(f->engine, &f->ready_call);
}

/* Drop the writes held for the open, with `status` for lent buffers. */
static void drop_held(fwdio_file_t *f, int status)
{
    if (f->s.releasing) /* a release under way (sender.c): its rest too */
        STAILQ_CONCAT(&f->s.held, f->s.releasing);
    while (!STAILQ_EMPTY(&f->s.held)) {
        fwdioi_task_t *t = STAILQ_FIRST(&f->s.held);
        STAILQ_REMOVE_HEAD(&f->s.held, link);
        fwdioi_sender_drop(f, (fwdioi_msg_t *)t, status);
    }
}

/* A read file's open is agreed: the largest size its readers found is in
 * the agreement's offset, minus the smallest in other_value (agree.h). The
 * same on every rank, so every rank fails alike if they differ. */
static void read_size_decided(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->outcome.open_agreed.status != FWDIO_OK)
        return;
    uint64_t size = (uint64_t)s->outcome.open_agreed.offset;
    uint64_t smallest = (uint64_t)-s->outcome.open_agreed.other_value;
    if (size != smallest) {
        s->outcome.open_agreed = (fwdioi_errinfo_t){FWDIO_EOPEN, -1, 0, (int64_t)size,
                                            FWDIOI_REASON_READ_SIZES, -1, (int64_t)smallest};
        fwdioi_outcome_publish_error(f, &s->outcome.open_agreed);
        return;
    }
    fwdioi_rt_lock(f->engine);
    f->size = size;
    fwdioi_plan_set_size(&f->plan, size);
    f->size_known = 1;
    fwdioi_rt_unlock(f->engine);
}

/* The open status is known on every rank (open_agreed): data flows, or the
 * file failed. */
static void open_decided(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_OPEN;
    if (s->outcome.open_agreed.status != FWDIO_OK) {
        fwdioi_outcome_publish_error(f, &s->outcome.open_agreed);
        drop_held(f, (int)s->outcome.open_agreed.status);
    }
    fwdioi_sender_release_held(f);
    if (f->reading)
        read_size_decided(f);
    deliver_ready(f);
    if (f->reading)
        fwdioi_requester_open_decided(f); /* the reads issued before ready go out */
    if (s->close_early) { /* the close agreement is in flight, or agreed */
        s->phase = FWDIOI_PHASE_CLOSING;
        if (s->close_result_waits)
            close_agreed(f);
        return;
    }
    fwdioi_steps_pump(f); /* which starts the close once no step is left */
}

static void on_open_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_OPEN, st))
        return;
    fwdioi_trace_end_file(f->s.trace_t0, "agree open", (int64_t)f->seq);
    open_decided(f);
}

/* An MPI call of a tier stream's step drains failed on this rank: while
 * the file is open it is aborted (every rank hears, and gives the step
 * drains up); after, its drain is (progress thread). */
static void step_drains_failed(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: the drain of a step failed in MPI", f->rank,
               f->path);
    if (f->s.phase != FWDIOI_PHASE_DONE)
        fwdioi_outcome_abort(f, why, 1);
    else
        fwdioi_local_drain_abort(f, why);
}

static void start_open_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_OPENING;
    if (fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_OPEN, &s->outcome.open_local,
                                    &s->outcome.open_agreed, on_open_agreed) != 0)
        return;
    s->open_agreement_started = 1;
    /* a stream of the node-local tier: a communicator for its step drains,
     * duplicated here on every rank; the file's next collectives wait for
     * it (Open MPI's MPI_Comm_idup starts its later rounds as it
     * progresses, so a collective started meanwhile on the same
     * communicator may meet another on another rank); once it is done,
     * the steps (and the close) go on */
    int rc = fwdioi_step_drains_start(f, s->comm, fwdioi_steps_pump, step_drains_failed);
    if (rc != MPI_SUCCESS)
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_COMM_IDUP, rc);
    try_close_early(f); /* closed here already: its agreement right behind */
}

/* The writer's (reader's) open job is done: agree on the open status
 * (progress thread). */
static void opened(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    start_open_agreement(f);
}

/* The check passed and no earlier file writes the path: writers (readers)
 * open it. */
/* From now on the tick visits the file (progress thread): it may receive
 * (a writer or reader once open, any file once aborted). The files still
 * waiting for their communicator, their check or their path, most of them
 * when thousands are in flight, are not visited on every tick. */
static void poll_from_now(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!f->s.links.polled) {
        f->s.links.polled = 1;
        LIST_INSERT_HEAD(&f->owner->polled, f, s.links.poll);
    }
}

static void open_role(fwdio_file_t *f)
{
    if (f->my_writer < 0)
        start_open_agreement(f);
    else
        f->role->open(f);
}

static void start_open(fwdio_file_t *f)
{
    poll_from_now(f);
    /* a read with the node-local tier first agrees on the copy it reads */
    if (!fwdioi_local_restart_look(f, open_role))
        open_role(f);
}

static void on_check_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_CHECK, st))
        return;
    fwdioi_trace_end_file(s->trace_t0, "agree check", (int64_t)f->seq);
    fwdioi_errinfo_t result;
    fwdioi_open_check_result(s->check.out, &result);
    if (result.status != FWDIO_OK) {
        s->check.failed = 1;
        s->outcome.open_agreed = result;
        /* (a stand-in of rank 0 refused the file: it said why at the call) */
        if ((f->rank == 0 && !f->refused) || result.call == FWDIOI_REASON_PATH_OPEN) {
            char text[512];
            fwdioi_errinfo_format(&result, f->path, f->write_path, text, sizeof text);
            fwdioi_report("%s", text);
        }
        open_decided(f);
        return;
    }
    if (path_in_use(f)) {
        s->phase = FWDIOI_PHASE_WAIT_PATH;
        return;
    }
    start_open(f);
}

static void start_check_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_CHECKING;
    fwdioi_open_check_pack(s->check.in, f->rank, f->check_fields, &f->open_refusal);
    fwdioi_session_agree(f, FWDIOI_MPI_AGREE_CHECK, s->check.in, s->check.out,
                         FWDIOI_OPEN_CHECK_PAIRS, MPI_LONG_INT, MPI_MINLOC, on_check_agreed);
}

/*
 * Communicators for files. Every file gets a communicator of its own, so that
 * its collectives never match another file's whatever order ranks close files
 * in. Files take them in open order (the same order on every rank), one
 * choice at a time, made one ahead of need: once a file has taken its
 * communicator, the next file's is chosen while this one is written.
 *
 * A choice is first a reduction on the runtime's communicator (MPI_Iallreduce,
 * bitwise AND) of the slots of the runtime's pool each rank holds idle
 * (comm_pool.h): a file that ended well gave its communicator back there, so
 * the next file takes the lowest slot idle on every rank, and the ranks pair
 * the same communicators. Only when no slot is idle everywhere (the first
 * files, or more files alive at once than before) is the runtime's
 * communicator duplicated (MPI_Comm_idup, several rounds of MPI progress:
 * most of a small file's open when it waited for one) into a new slot. One
 * choice at a time: Open MPI hangs when several MPI_Comm_idup of one
 * communicator are in flight at once, and the k-th choice must go to the
 * k-th file on every rank (with every MPI: MPICH allows several, and one at a
 * time is as correct there, its cost hidden by the one made ahead). A choice
 * that failed on this rank fails the file that would have taken it (and
 * breaks the runtime: the others' choice can never complete).
 */
static struct fwdio_runtime *owner_of_dup(void *arg)
{
    return (struct fwdio_runtime *)((char *)arg - offsetof(struct fwdio_runtime, dup_next));
}

/* Whether a choice is in flight, for fwdio_finalize (under the lock). */
static void set_dup_busy(struct fwdio_runtime *owner, int busy)
{
    owner->dup_in_flight = busy;
    fwdioi_rt_lock(owner->engine);
    owner->dup_busy = busy;
    fwdioi_rt_unlock(owner->engine);
    if (!busy)
        fwdioi_rt_broadcast(owner->engine);
}

/* The choice in flight failed with MPI error `rc` at `call`: the file that
 * would have taken it takes the failure. */
static void choice_failed(struct fwdio_runtime *owner, int call, int rc)
{
    owner->dup_next = MPI_COMM_NULL;
    owner->spare_rc = rc;
    owner->spare_call = call;
    set_dup_busy(owner, 0);
    feed_dups(owner);
}

static void start_idup(struct fwdio_runtime *owner);

static void on_dup_done(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdio_runtime *owner = owner_of_dup(arg);
    if (owner->dup_picking) {
        owner->dup_picking = 0;
        fwdioi_trace_end_file(owner->dup_t0, "comm pick", FWDIOI_TRACE_NONE);
        if (st->MPI_ERROR != MPI_SUCCESS) {
            choice_failed(owner, FWDIOI_MPI_COMM_PICK, st->MPI_ERROR);
            return;
        }
        MPI_Comm kept = MPI_COMM_NULL;
        int slot = fwdioi_comm_pool_take(&owner->comm_pool, owner->pick_agreed, &kept);
        if (slot < 0 && owner->pick_agreed != 0) { /* an AND of offers names no other */
            choice_failed(owner, FWDIOI_MPI_COMM_PICK, MPI_ERR_INTERN);
            return;
        }
        if (slot >= 0) {
            owner->spare = kept;
            owner->spare_slot = slot;
            set_dup_busy(owner, 0);
            feed_dups(owner);
            return;
        }
        start_idup(owner); /* no slot idle on every rank: a new one */
        return;
    }
    fwdioi_trace_end_file(owner->dup_t0, "comm dup", FWDIOI_TRACE_NONE);
    if (st->MPI_ERROR != MPI_SUCCESS) {
        choice_failed(owner, FWDIOI_MPI_COMM_IDUP, st->MPI_ERROR);
        return;
    }
    owner->spare = owner->dup_next;
    owner->spare_slot = owner->dup_slot;
    owner->dup_next = MPI_COMM_NULL;
    set_dup_busy(owner, 0);
    feed_dups(owner);
}

/* The duplication of the runtime's communicator for the chosen file, into
 * a new slot of the pool when one is left (the same slot on every rank:
 * every rank made the same choices before). */
static void start_idup(struct fwdio_runtime *owner)
{
    MPI_Request req;
    owner->dup_t0 = fwdioi_trace_begin();
    owner->dup_slot = fwdioi_comm_pool_make(&owner->comm_pool);
    int rc = fwdioi_rt_track_reserve(owner->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Comm_idup(fwdioi_rt_comm(owner->engine), &owner->dup_next, &req);
    if (rc != MPI_SUCCESS) {
        choice_failed(owner, FWDIOI_MPI_COMM_IDUP, rc);
        return;
    }
    fwdioi_rt_track(owner->engine, req, on_dup_done, &owner->dup_next);
}

/* f took its communicator: on to the open check. */
static void comm_taken(fwdio_file_t *f)
{
    if (f->s.outcome.aborted) { /* another rank failed after its duplication */
        fwdioi_log_mpi_failure(MPI_Comm_free(&f->s.comm), "MPI_Comm_free (file)");
        f->s.phase = FWDIOI_PHASE_CHECKING;
        finish_if_aborted(f);
        return;
    }
    int rc = MPI_Comm_set_errhandler(f->s.comm, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        /* The others go on into the check: tell them. */
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_COMM_IDUP, rc);
        return;
    }
    if (f->s.dormant) { /* no collective of its own until it is used (dormant.h) */
        f->s.phase = FWDIOI_PHASE_CHECKING;
        if (f->s.close_requested) /* discarded meanwhile */
            finish_discarded(f);
        return;
    }
    start_check_agreement(f);
}

/* Hand chosen communicators to the files waiting in open order, then start
 * the next choice if none is in flight or ready. */
static void feed_dups(struct fwdio_runtime *owner)
{
    fwdio_file_t *f;
    while ((f = STAILQ_FIRST(&owner->dups)) && (owner->spare != MPI_COMM_NULL || owner->spare_rc)) {
        STAILQ_REMOVE_HEAD(&owner->dups, s.links.dup);
        if (owner->spare_rc) {
            int rc = owner->spare_rc;
            owner->spare_rc = 0;
            f->s.comm = MPI_COMM_NULL;
            fwdioi_outcome_mpi_failed(f, owner->spare_call, rc); /* breaks the runtime */
            return;
        }
        f->s.comm = owner->spare;
        f->s.links.comm_slot = owner->spare_slot;
        owner->spare = MPI_COMM_NULL;
        owner->spare_slot = -1;
        owner->comms_held++;
        f->s.links.holds_comm = 1;
        comm_taken(f); /* may fail the file, never the runtime */
    }
    if (owner->dup_in_flight || owner->spare != MPI_COMM_NULL || owner->spare_rc ||
        owner->broken.status != FWDIO_OK)
        return;
    /* No more than files_in_flight files hold a communicator: the next
     * waits for an earlier file to end (finish_session feeds again). The
     * k-th choice still goes to the k-th file on every rank, whenever each
     * rank starts it. */
    if (owner->comms_held >= fwdioi_rt_config(owner->engine)->files_in_flight)
        return;
    if (fwdioi_rt_track_reserve(owner->engine) != 0) {
        owner->spare_rc = MPI_ERR_NO_MEM;
        owner->spare_call = FWDIOI_MPI_COMM_PICK;
        if (!STAILQ_EMPTY(&owner->dups))
            feed_dups(owner); /* the waiting file takes the failure */
        return;
    }
    set_dup_busy(owner, 1);
    MPI_Request req;
    owner->dup_t0 = fwdioi_trace_begin();
    owner->dup_picking = 1;
    owner->pick_offer = fwdioi_comm_pool_offer(&owner->comm_pool);
    int rc = MPI_Iallreduce(&owner->pick_offer, &owner->pick_agreed, 1, MPI_UINT64_T, MPI_BAND,
                            fwdioi_rt_comm(owner->engine), &req);
    if (rc != MPI_SUCCESS) {
        owner->dup_picking = 0;
        choice_failed(owner, FWDIOI_MPI_COMM_PICK, rc);
        return;
    }
    fwdioi_rt_track(owner->engine, req, on_dup_done, &owner->dup_next);
}

/* A dormant file no rank used, discarded on every rank (dormant.h): it
 * completes here with no message; its communicator goes back to the pool
 * (progress thread). */
static void finish_discarded(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    deliver_ready(f); /* OK: nothing failed (ready before complete, as always) */
    finish_session(f, &f->s.outcome.open_agreed);
}

/* A dormant file was woken (dormant.c): its session starts where it stopped,
 * with the open check, once it holds its communicator (else comm_taken
 * starts it) (progress thread). */
static void woken(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    if (f->s.phase == FWDIOI_PHASE_CHECKING && !f->s.outcome.aborted)
        start_check_agreement(f);
}

static void open_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, open_task));
    struct fwdio_runtime *owner = f->owner;
    LIST_INSERT_HEAD(&owner->active, f, s.links.active);
    owner->opened_seq = f->seq + 1;
    fwdioi_errinfo_t why;
    if (index_file(f) != 0) {
        fwdioi_outcome_nomem(f, 0);
        return;
    }
    fwdioi_dormant_opened(f);
    if (owner->broken.status != FWDIO_OK) {
        why = owner->broken;
        why.call = FWDIOI_REASON_BROKEN;
        fwdioi_outcome_abort(f, &why, 0);
        return;
    }
    if (fwdioi_abort_take_pending(owner, f->seq, 0, &why)) {
        fwdioi_outcome_abort(f, &why, 0);
        return;
    }
    STAILQ_INSERT_TAIL(&owner->dups, f, s.links.dup);
    feed_dups(owner);
}

/* ---- aborts ---- */

/* f's communicator duplication failed or was given up: the runtime's
 * communicator is out of step between ranks, so no later file can use it. */
static void break_runtime(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    struct fwdio_runtime *o = f->owner;
    if (o->broken.status == FWDIO_OK) {
        o->broken = *why;
        fwdioi_rt_lock(f->engine);
        o->broken_known = 1;
        fwdioi_rt_unlock(f->engine);
    }
    /* No duplication of the runtime's communicator can match between ranks
     * any more: the one in flight is given up (left to MPI), a finished one
     * no file will take is freed. */
    if (o->dup_in_flight) {
        fwdioi_rt_forget(f->engine, &o->dup_next);
        o->dup_next = MPI_COMM_NULL;
        o->dup_picking = 0;
        set_dup_busy(o, 0);
    }
    if (o->spare != MPI_COMM_NULL)
        fwdioi_log_mpi_failure(MPI_Comm_free(&o->spare), "MPI_Comm_free (spare)");
    o->spare_rc = 0;
    /* Every file still queued for its duplication fails too (f itself may be
     * among them, with an abort from another rank). */
    STAILQ_HEAD(, fwdio_file) queued = STAILQ_HEAD_INITIALIZER(queued);
    STAILQ_CONCAT(&queued, &o->dups);
    fwdioi_errinfo_t later = o->broken;
    later.call = FWDIOI_REASON_BROKEN;
    while (!STAILQ_EMPTY(&queued)) {
        fwdio_file_t *g = STAILQ_FIRST(&queued);
        STAILQ_REMOVE_HEAD(&queued, s.links.dup);
        if (g != f)
            fwdioi_outcome_abort(g, &later, 0);
    }
}

/* The file was aborted with `why`, recorded as its outcome already
 * (outcome.c: the first error wins) (progress thread). */
static void on_aborted(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    poll_from_now(f);
    /* Collectives of the file that can no longer complete are given up: the
     * rank that failed never calls another collective on the file's
     * communicator (nor, after a failed duplication, on the runtime's), so
     * they cannot complete later either and write into memory we free. */
    int dup_failed = why->call == FWDIOI_REASON_MPI + FWDIOI_MPI_COMM_IDUP ||
                     why->call == FWDIOI_REASON_MPI + FWDIOI_MPI_COMM_PICK ||
                     why->call == FWDIOI_REASON_BROKEN;
    if (s->phase == FWDIOI_PHASE_DUP && dup_failed) {
        fwdioi_rt_forget(f->engine, f);
        break_runtime(f, why);
        s->phase = FWDIOI_PHASE_CHECKING; /* no duplication to wait for */
        s->comm = MPI_COMM_NULL; /* a duplicate that was never finished: left to MPI */
    } else if (s->phase != FWDIOI_PHASE_DUP) {
        if (fwdioi_rt_forget(f->engine, f) > 0)
            s->outcome.abandoned = 1; /* its buffers and communicator stay MPI's */
    }
    /* else: another rank failed later on; this rank's duplication still has
     * to match theirs, and completes the file when it is done (comm_taken) */
    if (notify) {
        /* with how this rank's steps ended, which the others then report too */
        fwdioi_step_outcome_t steps;
        fwdioi_steps_outcome(f, &steps);
        fwdioi_abort_announce(f->owner, f->seq, why, &steps);
    }
    fwdioi_outcome_publish_error(f, why);
    drop_held(f, (int)why->status);
    fwdioi_steps_fail_all(f, why);
    fwdioi_step_drains_give_up(f, why); /* a tier stream's: none waits for them */
    if (f->my_writer >= 0 && f->role->drop_deferred)
        f->role->drop_deferred(f); /* dropped: the file failed */
    if (s->phase < FWDIOI_PHASE_OPEN)
        s->outcome.open_agreed = *why; /* what ready reports */
    deliver_ready(f);
    if (f->reading)
        fwdioi_requester_abort(f); /* their callbacks after ready */
    if (f->my_writer >= 0 && s->phase >= FWDIOI_PHASE_OPENING)
        f->role->close_aborted(f);
    finish_if_aborted(f);
}

/* Another rank's abort is heard before this rank aborted: its steps'
 * outcome counts (progress thread). */
static void on_abort_heard(fwdio_file_t *f, const fwdioi_step_outcome_t *steps)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_steps_abort_heard(f, steps);
}

/* ---- setup, teardown, polling ---- */

void fwdioi_session_init(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_DUP;
    s->comm = MPI_COMM_NULL;
    s->links.comm_slot = -1;
    s->fd = -1;
    s->outcome.open_local = s->outcome.open_agreed = s->outcome.local_error = s->outcome.final_agreed = FWDIOI_ERRINFO_OK;
    s->commit.local = s->commit.agreed = s->outcome.abort_info = FWDIOI_ERRINFO_OK;
    s->commit.committer = -1;
    STAILQ_INIT(&s->held);
    f->open_task.run = open_task;
    f->close_task.run = close_task;
    f->finish_task.run = finish_task;
    f->ready_call.run = run_ready;
    f->complete_call.run = run_complete;
}

void fwdioi_session_free(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_requester_free(f);
    if (f->role->end)
        f->role->end(f);
}

/* Client poll hook: aborts from other ranks; writers look for data of every
 * file in the OPEN..SYNCING phases (an aborted one's only to drop it).
 * Returns the number of receives started; *active while any session runs. */
/* Whether data for writer `f` can arrive over MPI unannounced: from ranks of
 * another node (or of this one without the node-shared area), from ranks of
 * this node that announced it, one matched and waiting for room (both the
 * writer's: its role's may_receive);
 * and once the close is under way or the file aborted, probe regardless. */
static int mpi_may_bring_data(const struct fwdio_runtime *o, const fwdio_file_t *f)
{
    return o->mpi_senders || f->role->may_receive(f) || f->s.outcome.aborted ||
           f->s.phase >= FWDIOI_PHASE_CLOSING;
}

/* A read file: answers for this rank's reads, requests for its reader.
 * Requests come unannounced, so a reader polls until the last one it was
 * told of at the close has come. */
static int poll_reads(fwdio_file_t *f, int *probing)
{
    fwdioi_session_t *s = &f->s;
    if (s->phase < FWDIOI_PHASE_OPEN || s->phase == FWDIOI_PHASE_DONE ||
        (!s->outcome.aborted && s->outcome.open_agreed.status != FWDIO_OK))
        return 0;
    if (s->outcome.aborted) {
        /* Receives posted into the application's buffers complete; the
         * rest (answers, their bytes, requests) is dropped as it comes,
         * here and once the file is done (a zombie), so no sender waits. */
        *probing = 1;
        return s->comm != MPI_COMM_NULL ? fwdioi_abort_drain(f->owner, s->comm) : 0;
    }
    int events = 0;
    if (fwdioi_requester_pending(f) || s->recvs_pending > 0) {
        events += fwdioi_requester_probe(f);
        *probing = 1;
    }
    if (f->my_writer >= 0 && f->role->may_receive(f)) {
        events += f->role->probe(f);
        *probing = 1;
    }
    return events;
}

/* A read file, after the close is agreed and whenever one of its reads or
 * its reader's work ends: once this rank's reads and its reader are done,
 * the file's data is done (data_done) (progress thread). */
static void read_check_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->outcome.aborted) {
        finish_if_aborted(f);
        return;
    }
    if (!s->close_agreed || s->final_ready || fwdioi_requester_pending(f))
        return;
    if (f->my_writer >= 0 && !f->role->done(f))
        return;
    if (s->sends_pending > 0 || s->recvs_pending > 0 || s->io_pending > 0)
        return;
    data_done(f);
}

/* How often the tick runs the watchdog's pass over the active files (s). */
#define WATCHDOG_EVERY_S 0.1

int fwdioi_session_poll(void *runtime, int *active)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdio_runtime *owner = runtime;
    const fwdio_config_t *cfg = fwdioi_rt_config(owner->engine);
    int events = 0;
    double now = 0;
    *active = 0;
    /* The area's traffic wakes the thread by itself (its doorbell): it needs
     * no polls, so it does not count as movement here. */
    fwdioi_shared_poll(owner);
    /* rings emptied just now: messages blocked by a full one may fit */
    if (!STAILQ_EMPTY(&owner->area_blocked))
        fwdioi_sender_retry_blocked(owner);
    int area_waiting = fwdioi_shared_settle(owner);
    if (!LIST_EMPTY(&owner->active) || !LIST_EMPTY(&owner->draining))
        events += fwdioi_abort_receive(owner) + fwdioi_dormant_receive(owner);
    if (owner->nzombies)
        events += fwdioi_zombie_drain(owner, active);
    int combining = 0;
    if (cfg->combine_size > 1)
        events += fwdioi_combine_flush_stale(owner, (uint64_t)cfg->poll_max_us * 1000u,
                                             &combining);
    int probing = 0;
    /* The watchdog counts in seconds: its pass over every file runs once
     * every WATCHDOG_EVERY_S, not on every tick (ticks come every 20 us
     * while the application waits: with n files in flight the pass on each
     * tick was O(n) per tick, most of the progress thread's time at 4000
     * files). A wait is seen, and reported, at most that much late. */
    int watch = 0;
    if (!LIST_EMPTY(&owner->active) && cfg->watchdog != FWDIO_WATCHDOG_OFF) {
        now = fwdioi_now();
        watch = now >= owner->next_watch;
        if (watch)
            owner->next_watch = now + WATCHDOG_EVERY_S;
    }
    if (watch)
        for (fwdio_file_t *f = LIST_FIRST(&owner->active); f; f = LIST_NEXT(f, s.links.active))
            fwdioi_watchdog_check(f, now);
    for (fwdio_file_t *f = LIST_FIRST(&owner->polled); f; f = LIST_NEXT(f, s.links.poll)) {
        if (f->reading) {
            events += poll_reads(f, &probing);
            continue;
        }
        int receiving = f->s.outcome.aborted ? f->s.phase >= FWDIOI_PHASE_OPENING
                                     : f->s.phase >= FWDIOI_PHASE_OPEN && !f->s.finishing &&
                                           f->s.outcome.open_agreed.status == FWDIO_OK;
        if (f->my_writer >= 0 && receiving && mpi_may_bring_data(owner, f)) {
            events += f->role->probe(f);
            probing = 1;
        }
    }
    /* Polls are needed only for what nothing else announces: MPI data a
     * writer must probe for, combined messages to send when they are old
     * enough, entries that wait. Agreements and sends in flight are MPI
     * requests, which the runtime polls anyway; storage completions, tasks
     * and the area's entries wake the thread. An open file with nothing in
     * flight costs a tick every FWDIOI_SLOW_TICK_US, for its watchdog, and
     * so do idle chunks of the area until they are given back; writers
     * waiting for room in the local store (local_space.h), which another
     * rank of the node may free unannounced, a tick every
     * FWDIOI_WAIT_TICK_US. */
    int room_waiting = fwdioi_local_room_poll(owner);
    if (probing || combining || area_waiting || *active)
        *active = FWDIOI_POLL_SOON;
    else if (room_waiting || owner->ndormant > 0) /* wakes come unannounced */
        *active = FWDIOI_POLL_TICK;
    else if (!LIST_EMPTY(&owner->active) && cfg->watchdog != FWDIO_WATCHDOG_OFF)
        *active = FWDIOI_POLL_SLOW; /* the watchdog may have to report a file */
    else if (owner->area_idle_held)
        *active = FWDIOI_POLL_SLOW; /* the area's idle chunks go back soon */
    return events;
}

const fwdioi_session_ops_t fwdioi_session_ops = {
    .aborted = on_aborted,
    .defer_abort = fwdioi_steps_defer_abort,
    .abort_heard = on_abort_heard,
    .finish_if_aborted = finish_if_aborted,
    .opened = opened,
    .data_done = data_done,
    .step_data_done = fwdioi_steps_data_done,
    .read_check_done = read_check_done,
    .try_close = try_close,
    .error_path = fwdioi_local_error_path,
    .drain_abort_heard = fwdioi_local_drain_abort_heard,
    .woken = woken,
};
