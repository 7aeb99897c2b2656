/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps of a stream on the progress thread (steps.h): tagging messages
 * with their step, and the agreements that complete each step in order.
 */
#include "stream/steps.h"

#include "stream/appends.h"
#include "log.h"
#include "write/sender.h"
#include "session/session.h"
#include "storage/storage.h"
#include "write/writer.h"

#include <stdlib.h>
#include <string.h>

/* Step tags run over 1..2^20 (the step index modulo 2^20, plus 1): ranks that
 * ended different numbers of steps pass different tags at the first
 * agreement where they part. Small enough that P * tag^2 fits 64 bits. */
#define STEP_TAG_SPAN ((uint64_t)1 << 20)

static uint64_t step_tag(uint64_t index) { return index % STEP_TAG_SPAN + 1; }

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
    fwdioi_rt_lock(f->rt);
    f->steps_done = step->index + 1;
    if (step->status != FWDIO_OK && f->step_fail_from == UINT64_MAX) {
        f->step_fail_from = step->index;
        f->step_fail_status = step->status;
    }
    fwdioi_rt_broadcast(f->rt); /* fwdio_step_wait */
    fwdioi_rt_unlock(f->rt);
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

void fwdioi_steps_tag_as(fwdio_file_t *f, fwdioi_msg_t *m, uint64_t step, uint64_t *sums)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!f->stream)
        return;
    m->step = step;
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    h.step = (uint32_t)step;
    memcpy(m->wire, &h, sizeof h);
    if (sums)
        sums[m->writer] += m->payload;
}

void fwdioi_steps_tag(fwdio_file_t *f, fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_steps_tag_as(f, m, f->s.step_fill, f->s.step_sent);
}

int fwdioi_steps_untag(fwdio_file_t *f, const fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!f->stream)
        return 0;
    if (m->step != f->s.step_fill)
        return -1;
    f->s.step_sent[m->writer] -= m->payload;
    return 0;
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
    const int nw = f->plan.nwriters;
    memcpy(step->sums, s->step_sent, (size_t)nw * sizeof *s->step_sent);
    memset(s->step_sent, 0, (size_t)nw * sizeof *s->step_sent);
    s->step_fill++;
    step->sums[nw + FWDIOI_SUM_COMMITS] = step->commit.n > 0;
    step->sums[nw + FWDIOI_SUM_COMMITTER] = step->commit.n > 0 ? (uint64_t)f->rank : 0;
    fwdioi_steps_set_tag(step->sums, nw, step_tag(step->index));
    STAILQ_INSERT_TAIL(&s->steps, step, link);
    if (s->aborted)
        fwdioi_steps_fail_all(f, &s->abort_info);
    else
        fwdioi_steps_pump(f);
}

int fwdioi_steps_pending(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    return !STAILQ_EMPTY(&f->s.steps) || f->s.step_counting;
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
    fwdioi_step_t *step = STAILQ_FIRST(&s->steps);
    STAILQ_REMOVE_HEAD(&s->steps, link);
    if (s->step_counting == step)
        s->step_counting = NULL;
    s->step_busy = 0;
    s->head_agreeing = 0;
    s->steps_complete = step->index + 1;
    step->status = (int)result->status;
    fwdioi_appends_drop(f, &step->appends); /* not routed: the step failed */
    if (result->status != FWDIO_OK && s->steps_failed.status == FWDIO_OK) {
        s->steps_failed = *result;
        s->steps_failed_at = step->index;
        fwdioi_session_publish_error(f, result); /* later writes are refused */
    }
    fwdioi_rt_deliver(f->rt, &step->call);
    if (f->my_writer >= 0) { /* the next step's bytes may go to the file now */
        if (f->opts.rewrites && !s->aborted)
            fwdioi_writer_forget_step(f); /* and may write this one's again */
        fwdioi_writer_release_deferred(f);
    }
    if (f->opts.rewrites) /* this rank's messages of the next step may go */
        fwdioi_sender_release_held(f);
}

void fwdioi_steps_fail_all(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    static const fwdioi_errinfo_t ok = FWDIOI_ERRINFO_OK;
    s->step_counting = NULL; /* its collectives are given up with the file's */
    while (!STAILQ_EMPTY(&s->steps)) {
        int64_t k = (int64_t)STAILQ_FIRST(&s->steps)->index;
        const fwdioi_errinfo_t *result = why;
        if (s->steps_failed.status != FWDIO_OK)
            result = &s->steps_failed;
        else if (s->abort_heard && k < s->abort_steps.ok)
            result = &ok; /* complete on the rank that aborted: it was OK there */
        else if (s->abort_heard && k < s->abort_steps.complete)
            result = &s->abort_steps.failed;
        complete_first(f, result);
    }
}

/* Every collective of the head step has been started: the next step's scan
 * may start. */
static void sequence_free(fwdio_file_t *f)
{
    f->s.seq_ready = 1;
    fwdioi_steps_pump(f);
}

static void on_step_commit_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_STEP_COMMIT, st))
        return;
    complete_first(f, &f->s.step_commit_agreed);
    fwdioi_steps_pump(f);
}

static void start_commit_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_STEP_COMMIT, &s->step_commit_local,
                                    &s->step_commit_agreed, on_step_commit_agreed) == 0)
        sequence_free(f);
}

static void on_step_commit_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    fwdioi_session_t *s = &f->s;
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&s->step_commit_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    s->io_pending--;
    fwdioi_storage_job_free(job);
    fwdioi_commit_set_free(&s->step_commit);
    if (s->aborted)
        fwdioi_session_finish_if_aborted(f);
    else
        start_commit_agreement(f);
}

/* The step's data is in the file (durable) on every writer: its rank writes
 * the step's commit blocks and syncs them. */
static void start_step_commit(fwdio_file_t *f, fwdioi_step_t *step)
{
    fwdioi_session_t *s = &f->s;
    s->step_commit_local = FWDIOI_ERRINFO_OK;
    if (f->rank != s->step_committer) {
        start_commit_agreement(f);
        return;
    }
    fwdioi_storage_job_t *job =
        fwdioi_storage_job_new(FWDIOI_STORAGE_COMMIT, f, on_step_commit_done);
    if (!job) {
        fwdioi_errinfo_set(&s->step_commit_local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    /* the session holds the blocks while the job runs: the step may fail
     * (an abort) meanwhile */
    fwdioi_commit_set_move(&s->step_commit, &step->commit);
    job->path = f->write_path;
    if (fwdioi_storage_job_add_blocks(job, &s->step_commit) != 0) {
        fwdioi_storage_job_free(job);
        fwdioi_commit_set_free(&s->step_commit);
        fwdioi_errinfo_set(&s->step_commit_local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    s->io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

static void on_step_final(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_STEP_FINAL, st))
        return;
    if (s->step_agreed.status == FWDIO_OK && s->step_committers == 1) {
        start_step_commit(f, STAILQ_FIRST(&s->steps)); /* its agreement frees the sequence */
        return;
    }
    int waited = s->step_committers != 0; /* the sequence waited for this answer */
    complete_first(f, &s->step_agreed);
    if (waited)
        sequence_free(f);
    else
        fwdioi_steps_pump(f);
}

void fwdioi_steps_data_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->aborted) {
        fwdioi_session_finish_if_aborted(f);
        return;
    }
    if (fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_STEP_FINAL, &s->local_error,
                                    &s->step_agreed, on_step_final) != 0)
        return;
    s->head_agreeing = 1;
    /* Without a commit block nothing more of this step is agreed: the next
     * step's scan may start now. With one, whether the commit agreement
     * follows depends on this one's answer. */
    if (s->step_committers == 0)
        sequence_free(f);
}

/* The head step is counted: drain it (a writer), then agree on its status. */
static void start_head(fwdio_file_t *f, fwdioi_step_t *step)
{
    fwdioi_session_t *s = &f->s;
    s->step_busy = 1;
    s->step_committers = step->committers;
    s->step_committer = step->committer;
    if (step->committers > 1 && step->commit.n > 0) {
        fwdioi_errinfo_t e = {FWDIO_EINVAL, f->rank, 0, (int64_t)step->commit.b[0].offset,
                              FWDIOI_REASON_COMMITTERS, -1, step->committers};
        if (s->local_error.status == FWDIO_OK)
            s->local_error = e;
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
    fwdioi_session_t *s = &f->s;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_STEP, st))
        return;
    const int nw = f->plan.nwriters;
    fwdioi_step_t *step = s->step_counting;
    if (!fwdioi_steps_tags_agree(step->out, nw, f->plan.nranks, step_tag(step->index))) {
        /* Another rank closed the file, or is at another step: every rank
         * sees the same sums and gives up the file's collectives alike. */
        fwdioi_errinfo_t why = {FWDIO_EINVAL, -1, 0, 0, FWDIOI_REASON_STEPS, -1, 0};
        fwdioi_session_abort(f, &why, 0);
        return;
    }
    s->append_base += step->out[nw + FWDIOI_SUM_APPENDED]; /* the next step appends after these */
    step->committers = (int)step->out[nw + FWDIOI_SUM_COMMITS];
    step->committer = step->committers == 1 ? (int)step->out[nw + FWDIOI_SUM_COMMITTER] : -1;
    step->counted = 1;
    s->step_counting = NULL;
    fwdioi_steps_pump(f);
}

/* The step's appended bytes are placed (this rank's after lower ranks'):
 * route them, then agree on the step's bytes per writer. 0, or -1 when the
 * file is aborted or the agreement could not start. */
static int step_scanned(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    fwdioi_step_t *step = s->step_counting;
    const int nw = f->plan.nwriters;
    step->in[nw + FWDIOI_SUM_APPENDED] = step->appends.bytes;
    if (s->steps_failed.status != FWDIO_OK) { /* counted all the same, nothing sent */
        fwdioi_appends_drop(f, &step->appends);
    } else {
        uint64_t at = s->append_base + (f->rank == 0 ? 0 : *step->append_prefix);
        fwdioi_appends_route(f, &step->appends, at, step->index, step->in);
        if (s->aborted) /* sending failed */
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
static fwdioi_step_t *next_to_count(const fwdioi_session_t *s)
{
    fwdioi_step_t *step;
    STAILQ_FOREACH(step, &s->steps, link)
        if (step->index == s->scan_next)
            return step;
    return NULL;
}

void fwdioi_steps_pump(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->aborted || s->phase != FWDIOI_PHASE_OPEN)
        return;
    if (s->abort_deferred && !s->head_agreeing) { /* the head is complete everywhere */
        s->abort_deferred = 0;
        fwdioi_session_abort(f, &s->deferred_why, 1);
        return;
    }
    /* The open failed: every rank knows, and no step agrees on anything. */
    while (s->open_agreed.status != FWDIO_OK && !STAILQ_EMPTY(&s->steps))
        complete_first(f, &s->open_agreed);
    for (;;) {
        /* the next step's scan, once the sequence allows it */
        fwdioi_step_t *next = s->step_counting || !s->seq_ready ? NULL : next_to_count(s);
        if (next) {
            s->step_counting = next;
            s->scan_next++;
            s->seq_ready = 0;
            /* the slot of the step two before is free: that step is complete */
            const size_t n = (size_t)f->plan.nwriters + FWDIOI_CLOSE_EXTRA;
            uint64_t *slot = s->step_slots + (next->index % 2) * (2 * n + 2);
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
        fwdioi_step_t *head = STAILQ_FIRST(&s->steps);
        if (!head || s->step_busy || !head->counted)
            break;
        if (s->steps_failed.status != FWDIO_OK) {
            /* every rank knows: nothing of it is agreed, the sequence goes on */
            complete_first(f, &s->steps_failed);
            s->seq_ready = 1;
            continue;
        }
        start_head(f, head);
        break;
    }
    fwdioi_session_try_close(f);
}
