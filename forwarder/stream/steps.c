/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps of a stream on the progress thread (steps.h): tagging messages
 * with their step, and the agreements that complete each step in order.
 */
#include "stream/steps.h"

#include "local/local_tier.h"
#include "stream/appends.h"
#include "stream/stream.h"
#include "stream/stream_state.h"
#include "log.h"
#include "write/message.h"
#include "write/sender.h"
#include "agreement/agreements.h"
#include "agreement/outcome.h"
#include "storage/storage.h"
#include "write/writer.h"

#include <stdlib.h>
#include <string.h>

/* Step tags run over 1..2^20 (the step index modulo 2^20, plus 1): ranks that
 * ended different numbers of steps pass different tags at the first
 * agreement where they part. Small enough that P * tag^2 fits 64 bits. */
#define STEP_TAG_SPAN ((uint64_t)1 << 20)

static uint64_t step_tag(uint64_t index) { return index % STEP_TAG_SPAN + 1; }

static struct fwdioi_stream *stream_of(const fwdio_file_t *f) { return f->s.stream; }

void fwdioi_steps_outcome(const fwdio_file_t *f, fwdioi_step_outcome_t *out)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_stream *sm = stream_of(f);
    *out = (fwdioi_step_outcome_t){0, 0, FWDIOI_ERRINFO_OK};
    if (!sm)
        return;
    out->complete = out->ok = (int64_t)sm->steps_complete;
    out->failed = sm->steps_failed;
    if (sm->steps_failed.status != FWDIO_OK)
        out->ok = (int64_t)sm->steps_failed_at;
}

void fwdioi_steps_abort_heard(fwdio_file_t *f, const fwdioi_step_outcome_t *o)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    if (sm && !sm->abort_heard) {
        sm->abort_heard = 1;
        sm->abort_steps = *o;
    }
}

int fwdioi_steps_defer_abort(fwdio_file_t *f, int call, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    if ((call != FWDIOI_MPI_SCAN_APPEND && call != FWDIOI_MPI_AGREE_STEP) || !sm ||
        !sm->head_agreeing || f->s.outcome.aborted)
        return 0;
    /* The step before is being agreed on, and every rank will take part:
     * its outcome first (fwdioi_steps_pump announces the abort). */
    if (!sm->abort_deferred) {
        sm->abort_deferred = 1;
        sm->deferred_why = *why;
    }
    return 1;
}

void fwdioi_steps_set_tag(uint64_t *sums, int nwriters, uint64_t tag)
{
    sums[nwriters + FWDIOI_SUM_TAG] = tag;
    sums[nwriters + FWDIOI_SUM_TAG2] = tag * tag;
}

int fwdioi_steps_tags_agree(const uint64_t *sums, int nwriters, int nranks, uint64_t tag)
{
    /* sum t_i = P t and sum t_i^2 = P t^2 hold only when every t_i = t
     * (their variance is 0) */
    return sums[nwriters + FWDIOI_SUM_TAG] == (uint64_t)nranks * tag &&
           sums[nwriters + FWDIOI_SUM_TAG2] == (uint64_t)nranks * tag * tag;
}

/* ---- the step record and its callback ---- */

static void step_task(fwdioi_task_t *task);

static void run_step(fwdioi_call_t *call)
{
    fwdioi_step_t *step = (fwdioi_step_t *)((char *)call - offsetof(fwdioi_step_t, call));
    fwdio_file_t *f = step->file;
    if (f->cbs.step)
        f->cbs.step(f, step->index, step->status, f->cbs.user);
    fwdioi_rt_lock(f->engine);
    f->steps_done = step->index + 1;
    if (step->status != FWDIO_OK && f->step_fail_from == UINT64_MAX) {
        f->step_fail_from = step->index;
        f->step_fail_status = step->status;
    }
    fwdioi_rt_broadcast(f->engine); /* fwdio_step_wait */
    fwdioi_rt_unlock(f->engine);
    fwdioi_step_free(step);
}

fwdioi_step_t *fwdioi_step_new(fwdio_file_t *f)
{
    size_t n = (size_t)f->plan.nwriters + FWDIOI_CLOSE_EXTRA;
    fwdioi_step_t *step = calloc(1, sizeof *step + n * sizeof step->sums[0]);
    if (!step)
        return NULL;
    step->committer = -1;
    step->task.run = step_task;
    fwdioi_append_list_init(&step->appends);
    step->call.run = run_step;
    step->file = f;
    return step;
}

void fwdioi_step_free(fwdioi_step_t *step)
{
    if (!step)
        return;
    fwdioi_commit_set_free(&step->commit);
    free(step);
}

/* ---- tagging messages ---- */

/* Send the messages of appends routed at a scan, in order: once a send has
 * aborted the file, the sender drops the rest (their copies go back). */
static void send_appends(fwdio_file_t *f, fwdioi_task_list_t *msgs)
{
    while (!STAILQ_EMPTY(msgs)) {
        fwdioi_msg_t *m = (fwdioi_msg_t *)STAILQ_FIRST(msgs);
        STAILQ_REMOVE_HEAD(msgs, link);
        fwdioi_sender_send(f, m);
    }
}

/* fwdio_step_end's record reaches the progress thread: every message of the
 * step was tagged before it (tasks run in order), the next ones belong to
 * the next step. */
static void step_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_step_t *step = (fwdioi_step_t *)task;
    fwdio_file_t *f = step->file;
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    const int nw = f->plan.nwriters;
    memcpy(step->sums, sm->step_sent, (size_t)nw * sizeof *sm->step_sent);
    memset(sm->step_sent, 0, (size_t)nw * sizeof *sm->step_sent);
    sm->step_fill++;
    step->sums[nw + FWDIOI_SUM_COMMITS] = step->commit.n > 0;
    step->sums[nw + FWDIOI_SUM_COMMITTER] = step->commit.n > 0 ? (uint64_t)f->rank : 0;
    fwdioi_steps_set_tag(step->sums, nw, step_tag(step->index));
    STAILQ_INSERT_TAIL(&sm->steps, step, link);
    if (s->outcome.aborted)
        fwdioi_steps_fail_all(f, &s->outcome.abort_info);
    else
        fwdioi_steps_pump(f);
}

int fwdioi_steps_pending(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_stream *sm = stream_of(f);
    return sm && (!STAILQ_EMPTY(&sm->steps) || sm->step_counting);
}

/* ---- completing steps in order ----
 *
 * Every rank starts the file's collectives in one order: for each step, the
 * scan of its appends, its counts, its status and, with a commit block, the
 * commit's status. A step's scan and counts (steps "being counted") may run
 * while the step before it drains and agrees on its status, but the scan of
 * step k+1 starts only once every collective of step k has been started
 * (seq_ready): when its status agreement starts (no commit block), or once
 * it is known whether a commit agreement follows, and that one started. The
 * first step (the head) drains, agrees and commits only once counted; later
 * steps wait for it, and a failed step is known on every rank before the
 * next head decides anything. After a failure the remaining steps are still
 * scanned and counted (a rank may have started that already; the results
 * are ignored), but they drain and agree on nothing. */

/* The first step is complete with `result`: its callback goes out. A failure
 * fails the stream. */
static void complete_first(fwdio_file_t *f, const fwdioi_errinfo_t *result)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    fwdioi_step_t *step = STAILQ_FIRST(&sm->steps);
    STAILQ_REMOVE_HEAD(&sm->steps, link);
    if (sm->step_counting == step)
        sm->step_counting = NULL;
    sm->step_busy = 0;
    sm->head_agreeing = 0;
    sm->steps_complete = step->index + 1;
    step->status = (int)result->status;
    fwdioi_appends_drop(f, &step->appends); /* not routed: the step failed */
    if (result->status != FWDIO_OK && sm->steps_failed.status == FWDIO_OK) {
        sm->steps_failed = *result;
        sm->steps_failed_at = step->index;
        fwdioi_outcome_publish_error(f, result); /* later writes are refused */
    }
    uint64_t index = step->index; /* the step is the callback's from here */
    fwdioi_rt_deliver(f->engine, &step->call);
    fwdioi_step_drains_complete(f, index, result); /* a tier stream's */
    if (f->my_writer >= 0) { /* the next step's bytes may go to the file now */
        if (f->opts.rewrites && !s->outcome.aborted)
            fwdioi_writer_forget_step(f); /* and may write this one's again */
        fwdioi_writer_release_deferred(f);
    }
    if (f->opts.rewrites) /* this rank's messages of the next step may go */
        fwdioi_sender_release_held(f);
}

void fwdioi_steps_fail_all(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    static const fwdioi_errinfo_t ok = FWDIOI_ERRINFO_OK;
    if (!sm)
        return;
    sm->step_counting = NULL; /* its collectives are given up with the file's */
    while (!STAILQ_EMPTY(&sm->steps)) {
        int64_t k = (int64_t)STAILQ_FIRST(&sm->steps)->index;
        const fwdioi_errinfo_t *result = why;
        if (sm->steps_failed.status != FWDIO_OK)
            result = &sm->steps_failed;
        else if (sm->abort_heard && k < sm->abort_steps.ok)
            result = &ok; /* complete on the rank that aborted: it was OK there */
        else if (sm->abort_heard && k < sm->abort_steps.complete)
            result = &sm->abort_steps.failed;
        complete_first(f, result);
    }
}

/* Every collective of the head step has been started: the next step's scan
 * may start. */
static void sequence_free(fwdio_file_t *f)
{
    stream_of(f)->seq_ready = 1;
    fwdioi_steps_pump(f);
}

static void on_step_commit_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_STEP_COMMIT, st))
        return;
    complete_first(f, &stream_of(f)->step_commit_agreed);
    fwdioi_steps_pump(f);
}

static void start_commit_agreement(fwdio_file_t *f)
{
    struct fwdioi_stream *sm = stream_of(f);
    if (fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_STEP_COMMIT, &sm->step_commit_local,
                                    &sm->step_commit_agreed, on_step_commit_agreed) == 0)
        sequence_free(f);
}

static void on_step_commit_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    fwdioi_outcome_storage_failed(f, job->fail_time); /* fwdio_file_stats_t */
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&sm->step_commit_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    s->io_pending--;
    fwdioi_storage_job_free(job);
    fwdioi_commit_set_free(&sm->step_commit);
    if (s->outcome.aborted)
        fwdioi_outcome_finish_if_aborted(f);
    else
        start_commit_agreement(f);
}

/* The step's data is in the file (durable) on every writer: its rank writes
 * the step's commit blocks and syncs them. */
static void start_step_commit(fwdio_file_t *f, fwdioi_step_t *step)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    sm->step_commit_local = FWDIOI_ERRINFO_OK;
    if (f->rank != sm->step_committer) {
        start_commit_agreement(f);
        return;
    }
    fwdioi_storage_job_t *job =
        fwdioi_storage_job_new(FWDIOI_STORAGE_COMMIT, f, on_step_commit_done);
    if (!job) {
        fwdioi_errinfo_set(&sm->step_commit_local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    /* the stream holds the blocks while the job runs: the step may fail
     * (an abort) meanwhile */
    fwdioi_commit_set_move(&sm->step_commit, &step->commit);
    job->path = f->write_path;
    if (fwdioi_storage_job_add_blocks(job, &sm->step_commit) != 0) {
        fwdioi_storage_job_free(job);
        fwdioi_commit_set_free(&sm->step_commit);
        fwdioi_errinfo_set(&sm->step_commit_local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

static void on_step_final(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_stream *sm = stream_of(f);
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_STEP_FINAL, st))
        return;
    if (sm->step_agreed.status == FWDIO_OK && sm->step_committers == 1) {
        start_step_commit(f, STAILQ_FIRST(&sm->steps)); /* its agreement frees the sequence */
        return;
    }
    int waited = sm->step_committers != 0; /* the sequence waited for this answer */
    complete_first(f, &sm->step_agreed);
    if (waited)
        sequence_free(f);
    else
        fwdioi_steps_pump(f);
}

void fwdioi_steps_data_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    if (s->outcome.aborted) {
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    if (fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_STEP_FINAL, &s->outcome.local_error,
                                    &sm->step_agreed, on_step_final) != 0)
        return;
    sm->head_agreeing = 1;
    /* Without a commit block nothing more of this step is agreed: the next
     * step's scan may start now. With one, whether the commit agreement
     * follows depends on this one's answer. */
    if (sm->step_committers == 0)
        sequence_free(f);
}

/* The head step is counted: drain it (a writer), then agree on its status. */
static void start_head(fwdio_file_t *f, fwdioi_step_t *step)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    sm->step_busy = 1;
    sm->step_committers = step->committers;
    sm->step_committer = step->committer;
    if (step->committers > 1 && step->commit.n > 0) {
        fwdioi_errinfo_t e = fwdioi_errinfo_committers(f->rank, step->committers,
                                                       step->committer_ranks,
                                                       step->commit.b[0].offset);
        if (s->outcome.local_error.status == FWDIO_OK)
            s->outcome.local_error = e;
    }
    if (f->my_writer < 0) {
        fwdioi_steps_data_done(f);
        return;
    }
    fwdioi_writer_drain_step(f, step->out[f->my_writer]);
}

static void on_step_counts(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_stream *sm = stream_of(f);
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_STEP, st))
        return;
    const int nw = f->plan.nwriters;
    fwdioi_step_t *step = sm->step_counting;
    if (!fwdioi_steps_tags_agree(step->out, nw, f->plan.nranks, step_tag(step->index))) {
        /* Another rank closed the file, or is at another step: every rank
         * sees the same sums and gives up the file's collectives alike. */
        fwdioi_errinfo_t why = {FWDIO_EINVAL, -1, 0, 0, FWDIOI_REASON_STEPS, -1, 0};
        fwdioi_outcome_abort(f, &why, 0);
        return;
    }
    sm->append_base += step->out[nw + FWDIOI_SUM_APPENDED]; /* the next step appends after these */
    step->committers = (int)step->out[nw + FWDIOI_SUM_COMMITS];
    step->committer_ranks = step->out[nw + FWDIOI_SUM_COMMITTER];
    step->committer = step->committers == 1 ? (int)step->committer_ranks : -1;
    step->counted = 1;
    sm->step_counting = NULL;
    fwdioi_steps_pump(f);
}

/* The step's appended bytes are placed (this rank's after lower ranks'):
 * route them, then agree on the step's bytes per writer. 0, or -1 when the
 * file is aborted or the agreement could not start. */
static int step_scanned(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    fwdioi_step_t *step = sm->step_counting;
    const int nw = f->plan.nwriters;
    step->in[nw + FWDIOI_SUM_APPENDED] = step->appends.bytes;
    if (sm->steps_failed.status != FWDIO_OK) { /* counted all the same, nothing sent */
        fwdioi_appends_drop(f, &step->appends);
    } else {
        uint64_t at = sm->append_base + (f->rank == 0 ? 0 : *step->append_prefix);
        fwdioi_task_list_t msgs;
        STAILQ_INIT(&msgs);
        fwdioi_appends_route(f, &step->appends, at, step->index, step->in, &msgs);
        send_appends(f, &msgs);
        if (s->outcome.aborted) /* sending failed */
            return -1;
    }
    return fwdioi_session_agree(f, FWDIOI_MPI_AGREE_STEP, step->in, step->out,
                                nw + FWDIOI_CLOSE_EXTRA, MPI_UINT64_T, MPI_SUM, on_step_counts);
}

/* Every rank's appended bytes of the step are scanned. */
static void on_step_scan(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    if (fwdioi_session_agreement_ok(f, FWDIOI_MPI_SCAN_APPEND, st))
        (void)step_scanned(f); /* a failure aborts the file or waits for the head */
}

/* The next step to count, if this rank has ended it. */
static fwdioi_step_t *next_to_count(const struct fwdioi_stream *sm)
{
    fwdioi_step_t *step;
    STAILQ_FOREACH(step, &sm->steps, link)
        if (step->index == sm->scan_next)
            return step;
    return NULL;
}

void fwdioi_steps_pump(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    if (s->outcome.aborted || !fwdioi_file_in_open_phase(f))
        return;
    /* a tier stream's step drains are getting their communicator from the
     * file's: no collective of the file meanwhile (it pumps again) */
    if (fwdioi_step_drains_dup_pending(f))
        return;
    if (!sm) { /* no steps: the close may start */
        fwdioi_outcome_try_close(f);
        return;
    }
    if (sm->abort_deferred && !sm->head_agreeing) { /* the head is complete everywhere */
        sm->abort_deferred = 0;
        fwdioi_outcome_abort(f, &sm->deferred_why, 1);
        return;
    }
    /* The open failed: every rank knows, and no step agrees on anything. */
    while (s->outcome.open_agreed.status != FWDIO_OK && !STAILQ_EMPTY(&sm->steps))
        complete_first(f, &s->outcome.open_agreed);
    for (;;) {
        /* the next step's scan, once the sequence allows it */
        fwdioi_step_t *next = sm->step_counting || !sm->seq_ready ? NULL : next_to_count(sm);
        if (next) {
            sm->step_counting = next;
            sm->scan_next++;
            sm->seq_ready = 0;
            /* the slot of the step two before is free: that step is complete */
            const size_t n = (size_t)f->plan.nwriters + FWDIOI_CLOSE_EXTRA;
            uint64_t *slot = sm->step_slots + (next->index % 2) * (2 * n + 2);
            next->in = slot;
            next->out = slot + n;
            next->append_mine = slot + 2 * n;
            next->append_prefix = slot + 2 * n + 1;
            memcpy(next->in, next->sums, n * sizeof *next->in);
            *next->append_mine = next->appends.bytes;
            if (f->opts.offsets_only) { /* nothing appended anywhere: no scan */
                *next->append_prefix = 0;
                if (step_scanned(f) != 0)
                    return;
            } else if (fwdioi_session_scan_appends(f, next->append_mine, next->append_prefix,
                                                   on_step_scan) != 0) {
                return;
            }
        }
        /* the head, once counted */
        fwdioi_step_t *head = STAILQ_FIRST(&sm->steps);
        if (!head || sm->step_busy || !head->counted)
            break;
        if (sm->steps_failed.status != FWDIO_OK) {
            /* every rank knows: nothing of it is agreed, the sequence goes on */
            complete_first(f, &sm->steps_failed);
            sm->seq_ready = 1;
            continue;
        }
        start_head(f, head);
        break;
    }
    fwdioi_outcome_try_close(f);
}

/* ---- the close: bytes appended after the last step end ---- */

static void on_close_scan(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    struct fwdioi_stream *sm = stream_of(f);
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_SCAN_APPEND, st))
        return;
    if (s->outcome.open_agreed.status != FWDIO_OK || sm->steps_failed.status != FWDIO_OK)
        fwdioi_appends_drop(f, &sm->close_appends); /* the stream failed: nothing is sent */
    else {
        fwdioi_task_list_t msgs;
        STAILQ_INIT(&msgs);
        fwdioi_appends_route(f, &sm->close_appends,
                             sm->append_base + (f->rank == 0 ? 0 : sm->append_prefix),
                             sm->step_fill, NULL, &msgs);
        send_appends(f, &msgs);
    }
    sm->close_scan = CLOSE_SCAN_DONE;
    if (!s->outcome.aborted)
        fwdioi_outcome_try_close(f);
}

int fwdioi_steps_close_scanned(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    if (!sm || sm->close_scan == CLOSE_SCAN_DONE)
        return 1;
    if (f->opts.offsets_only) { /* no rank can have appended: nothing to place */
        sm->close_scan = CLOSE_SCAN_DONE;
        return 1;
    }
    if (sm->close_scan == CLOSE_SCAN_RUNNING)
        return 0;
    /* Every rank scans, appended or not. */
    fwdioi_rt_lock(f->engine);
    fwdioi_append_list_move(&sm->close_appends, &f->appends);
    fwdioi_rt_unlock(f->engine);
    sm->append_mine = sm->close_appends.bytes;
    sm->close_scan = CLOSE_SCAN_RUNNING;
    fwdioi_session_scan_appends(f, &sm->append_mine, &sm->append_prefix, on_close_scan);
    return 0;
}

uint64_t fwdioi_steps_close_appended(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_stream *sm = stream_of(f);
    return sm ? sm->append_mine : 0;
}

void fwdioi_steps_end(fwdio_file_t *f, const fwdioi_errinfo_t *final)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    fwdioi_steps_fail_all(f, final); /* their callbacks come before complete */
    fwdioi_rt_lock(f->engine);
    fwdioi_append_list_t left = f->appends; /* appended after the last step end, unsent */
    fwdioi_append_list_init(&f->appends);
    fwdioi_rt_unlock(f->engine);
    if (left.head)
        fwdioi_appends_drop(f, &left);
    if (sm)
        fwdioi_appends_drop(f, &sm->close_appends); /* an abort during their scan */
}
