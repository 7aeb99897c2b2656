/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drain of a node-local tier stream's steps, one step at a time, while
 * the stream is written (progress thread; the copies are drain jobs on the
 * runtime's I/O pool, drain_io.h).
 *
 * A stream's writer writes its steps into its local file. Each step's SYNC
 * job, which runs after the step's last write (the file's jobs run in
 * order), takes the byte ranges written locally since the step before
 * (storage.h, take_fresh) and hands them here. Once the step is complete
 * (its status agreed, steps.c), every rank queues it; in step order, a
 * writer copies that step's ranges from its local file to the target (OPEN,
 * COPY, CLOSE with an fdatasync when durable), and then every rank, writer
 * or not, agrees on the step's drain status (MPI_Iallreduce, MINLOC over
 * the status pairs as every agreement of a file) on a communicator of the
 * stream's own: the file's, duplicated right after its open agreement
 * started (the same place in every rank's sequence of the file's
 * collectives), since the ranks start these agreements at different points
 * of the file's other collectives. fwdio_step_drain_wait reports the
 * agreed status; a failed step, or a drain that failed, fails every later
 * step's drain without copying, and the stream's drain after the close.
 *
 * Bytes a later step writes again may be copied with an earlier step (the
 * copy reads the local file as it is); they are copied again with their
 * own step, so once step k is drained the target holds every byte of steps
 * 0..k, or a later step's bytes where one rewrote them.
 *
 * A writer whose file moves to the target while it is written (its local
 * store failed, failover.h) copies nothing more: the move copied every byte
 * written locally so far, and the bytes written after it go to the target;
 * each copied unit holds the failover where it is (fwdioi_failover_hold), so
 * an older step's copy never lands over a later step's bytes written at the
 * target after a move.
 *
 * The drain after the close (drain.c) waits until this queue is empty and
 * copies only what the writers wrote after their last step. When the
 * session ends failed, the queue is given up: an agreement in flight is left
 * to MPI (its communicator with it), queued steps fail, and a copy job in
 * flight ends before the file's drain is over (local_tier.c), so nothing of
 * this outlives the file.
 */
#include "local/local_state.h"

#include "local/drain_io.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

/* One complete step whose drain is not agreed yet. */
typedef struct step_batch {
    STAILQ_ENTRY(step_batch) link;
    uint64_t index;
    fwdioi_errinfo_t status; /* the step's own, agreed */
    fwdioi_errinfo_t lost;   /* this rank could not keep its ranges (no memory) */
    fwdioi_local_run_t *runs; /* this writer's ranges of it */
    size_t nruns;
} step_batch_t;

struct fwdioi_step_drains {
    fwdio_file_t *file;
    fwdioi_engine_t *engine;
    MPI_Comm comm;
    int dup_pending, comm_ready, given_up, abandoned;
    int dup_forgotten; /* given up in flight: the file's communicator is MPI's */
    /* owned copies of what a job needs */
    char *local_path, *target_path;
    uint64_t unit, seq, bandwidth;
    int durable;
    /* this writer's ranges handed over by SYNC jobs, not yet a step's */
    fwdioi_local_run_t *synced;
    size_t nsynced, synced_cap;
    fwdioi_errinfo_t synced_lost; /* some of them could not be kept: that step's drain fails */
    STAILQ_HEAD(, step_batch) queue;
    /* the head's copy and agreement */
    int busy, agreeing;
    int in_fd, out_fd;
    uint8_t *buf;
    uint64_t next_run, next_off, moved;
    double t0;
    fwdioi_errinfo_t local;
    fwdioi_agree_pair_t in[FWDIOI_ERRINFO_PAIRS], out[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_t failed; /* the first failed step drain (agreed) */
    void (*idle)(fwdio_file_t *f); /* once the queue is empty and nothing runs */
    void (*resume)(fwdio_file_t *f); /* the file's collectives go on */
    /* an MPI call of theirs failed here: the file (or its drain) fails on
     * every rank (the session's) */
    void (*fail)(fwdio_file_t *f, const fwdioi_errinfo_t *why);
};

typedef struct step_job {
    fwdioi_drain_job_t j;
    struct fwdioi_step_drains *sd;
} step_job_t;

static void pump(struct fwdioi_step_drains *sd);

int fwdioi_step_drains_on(const fwdio_file_t *f)
{
    return f->local && f->local->steps != NULL;
}

static void free_state(struct fwdioi_step_drains *sd)
{
    while (!STAILQ_EMPTY(&sd->queue)) {
        step_batch_t *b = STAILQ_FIRST(&sd->queue);
        STAILQ_REMOVE_HEAD(&sd->queue, link);
        free(b->runs);
        free(b);
    }
    free(sd->synced);
    free(sd->buf);
    free(sd->local_path);
    free(sd->target_path);
    free(sd);
}

/* ---- the communicator ---- */

static void on_dup_done(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_step_drains *sd = arg;
    sd->dup_pending = 0;
    fwdio_file_t *f = sd->file;
    if (st->MPI_ERROR != MPI_SUCCESS) {
        sd->comm = MPI_COMM_NULL;
        if (f) { /* the others have it: tell them (the file fails everywhere) */
            fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
            fwdioi_errinfo_set_mpi(&e, f->rank, FWDIOI_MPI_COMM_IDUP, st->MPI_ERROR);
            sd->fail(f, &e);
        }
        return;
    }
    (void)MPI_Comm_set_errhandler(sd->comm, MPI_ERRORS_RETURN);
    (void)MPI_Comm_set_name(sd->comm, "fwdio step drains"); /* for tools and tests */
    sd->comm_ready = 1;
    pump(sd);
    if (f)
        sd->resume(f);
}

int fwdioi_step_drains_start(fwdio_file_t *f, MPI_Comm file_comm,
                             void (*resume)(fwdio_file_t *f),
                             void (*fail)(fwdio_file_t *f, const fwdioi_errinfo_t *why))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || !f->stream || f->reading || l->steps)
        return MPI_SUCCESS;
    struct fwdioi_step_drains *sd = calloc(1, sizeof *sd);
    if (!sd)
        return MPI_ERR_NO_MEM;
    sd->file = f;
    sd->resume = resume;
    sd->fail = fail;
    sd->engine = f->engine;
    sd->comm = MPI_COMM_NULL;
    sd->in_fd = sd->out_fd = -1;
    sd->unit = f->plan.write_size;
    sd->seq = f->seq;
    sd->bandwidth = l->bandwidth;
    sd->durable = f->opts.durable;
    sd->failed = sd->local = sd->synced_lost = FWDIOI_ERRINFO_OK;
    STAILQ_INIT(&sd->queue);
    if ((l->data_path && !(sd->local_path = strdup(l->data_path))) ||
        !(sd->target_path = strdup(f->write_path))) {
        free_state(sd);
        return MPI_ERR_NO_MEM;
    }
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0 ? MPI_ERR_NO_MEM
                                                      : MPI_Comm_idup(file_comm, &sd->comm, &req);
    if (rc != MPI_SUCCESS) {
        free_state(sd);
        return rc;
    }
    sd->dup_pending = 1;
    l->steps = sd;
    fwdioi_rt_track(f->engine, req, on_dup_done, sd);
    return MPI_SUCCESS;
}

/* ---- what the writer wrote ---- */

void fwdioi_step_drains_synced(fwdio_file_t *f, fwdioi_range_t *list, size_t n)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    if (!sd || n == 0) {
        free(list);
        return;
    }
    if (sd->nsynced + n > sd->synced_cap) {
        size_t cap = sd->synced_cap ? sd->synced_cap : 16;
        while (cap < sd->nsynced + n)
            cap *= 2;
        fwdioi_local_run_t *r = realloc(sd->synced, cap * sizeof *r);
        if (!r) { /* the step's drain cannot know its bytes: it fails */
            fwdioi_errinfo_set(&sd->synced_lost, FWDIO_ENOMEM, f->rank, 0, 0);
            free(list);
            return;
        }
        sd->synced = r;
        sd->synced_cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        sd->synced[sd->nsynced++] =
            (fwdioi_local_run_t){list[i].start, list[i].end - list[i].start};
    free(list);
}

void fwdioi_step_drains_complete(fwdio_file_t *f, uint64_t index, const fwdioi_errinfo_t *status)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    if (!sd)
        return;
    step_batch_t *b = calloc(1, sizeof *b);
    if (!b) { /* its place in the agreements is lost: the others must hear */
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set(&e, FWDIO_ENOMEM, f->rank, 0, 0);
        sd->fail(f, &e);
        return;
    }
    b->index = index;
    b->status = *status;
    b->runs = sd->synced;
    b->nruns = sd->nsynced;
    b->lost = sd->synced_lost;
    sd->synced = NULL;
    sd->nsynced = sd->synced_cap = 0;
    sd->synced_lost = FWDIOI_ERRINFO_OK;
    STAILQ_INSERT_TAIL(&sd->queue, b, link);
    pump(sd);
}

/* ---- the head: copy, agree, publish ---- */

/* Step `b`'s drain is agreed with `result`: publish, and on to the next. */
static void head_done(struct fwdioi_step_drains *sd, const fwdioi_errinfo_t *result)
{
    step_batch_t *b = STAILQ_FIRST(&sd->queue);
    STAILQ_REMOVE_HEAD(&sd->queue, link);
    if (result->status != FWDIO_OK && sd->failed.status == FWDIO_OK)
        sd->failed = *result;
    fwdio_file_t *f = sd->file;
    if (f) {
        char text[sizeof f->step_drain_text] = "";
        if (result->status != FWDIO_OK)
            fwdioi_errinfo_format(result, f->path, f->write_path, text, sizeof text);
        fwdioi_rt_lock(f->engine);
        f->steps_drained = b->index + 1;
        if (result->status != FWDIO_OK && f->step_drain_fail_from == UINT64_MAX) {
            f->step_drain_fail_from = b->index;
            f->step_drain_error = *result;
            memcpy(f->step_drain_text, text, sizeof text);
        }
        fwdioi_rt_broadcast(f->engine); /* fwdio_step_drain_wait */
        fwdioi_rt_unlock(f->engine);
    }
    free(b->runs);
    free(b);
}

static void on_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_step_drains *sd = arg;
    sd->agreeing = 0;
    fwdio_file_t *f = sd->file;
    if (st->MPI_ERROR != MPI_SUCCESS) {
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set_mpi(&e, f ? f->rank : -1, FWDIOI_MPI_AGREE_STEP_DRAIN, st->MPI_ERROR);
        if (f)
            sd->fail(f, &e);
        return;
    }
    fwdioi_errinfo_t agreed;
    fwdioi_errinfo_unpack(sd->out, &agreed);
    head_done(sd, &agreed);
    pump(sd);
}

static void agree(struct fwdioi_step_drains *sd)
{
    fwdio_file_t *f = sd->file;
    fwdioi_errinfo_pack(&sd->local, f->rank, sd->in);
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Iallreduce(sd->in, sd->out, FWDIOI_ERRINFO_PAIRS, MPI_LONG_INT, MPI_MINLOC,
                                  sd->comm, &req);
    if (rc != MPI_SUCCESS) {
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set_mpi(&e, f->rank, FWDIOI_MPI_AGREE_STEP_DRAIN, rc);
        sd->fail(f, &e);
        return;
    }
    sd->agreeing = 1;
    fwdioi_rt_track(f->engine, req, on_agreed, sd);
}

static void job_done(fwdioi_io_job_t *io);

static void submit(struct fwdioi_step_drains *sd, fwdioi_drain_step_t step)
{
    step_batch_t *b = STAILQ_FIRST(&sd->queue);
    step_job_t *sj = calloc(1, sizeof *sj);
    if (!sj) {
        /* the descriptors leak rather than the step hangs */
        sd->in_fd = sd->out_fd = -1;
        if (sd->local.status == FWDIO_OK)
            fwdioi_errinfo_set(&sd->local, FWDIO_ENOMEM, sd->file->rank, 0, 0);
        if (sd->given_up)
            pump(sd);
        else
            agree(sd);
        return;
    }
    fwdioi_drain_job_t *j = &sj->j;
    sj->sd = sd;
    j->io.run = fwdioi_drain_job_run;
    j->io.done = job_done;
    j->step = step;
    j->unit = sd->unit;
    j->seq = sd->seq;
    j->local_path = sd->local_path;
    j->target_path = sd->target_path;
    j->in_fd = sd->in_fd;
    j->out_fd = sd->out_fd;
    j->sync = sd->durable && sd->local.status == FWDIO_OK;
    j->buf = sd->buf;
    j->runs = b ? b->runs : NULL;
    j->nruns = b ? b->nruns : 0;
    j->next_run = sd->next_run;
    j->next_off = sd->next_off;
    j->moved = sd->moved;
    j->bandwidth = sd->bandwidth;
    j->t0 = sd->t0;
    j->guard = sd->file->local->failover;
    j->no_create = 1; /* the stream's open made the target */
    j->status = FWDIO_OK;
    sd->busy = 1;
    fwdioi_rt_io_submit_any(sd->engine, &j->io);
}

static void job_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    step_job_t *sj = (step_job_t *)io;
    fwdioi_drain_job_t *j = &sj->j;
    struct fwdioi_step_drains *sd = sj->sd;
    fwdioi_drain_step_t step = j->step;
    sd->in_fd = j->in_fd;
    sd->out_fd = j->out_fd;
    sd->next_run = j->next_run;
    sd->next_off = j->next_off;
    sd->moved += j->copied;
    if (j->status != FWDIO_OK && sd->local.status == FWDIO_OK)
        fwdioi_errinfo_set_call(&sd->local, j->status, sd->file->rank, j->sys_errno,
                                j->err_offset, j->call);
    /* the target has these bytes already, or was removed since the open */
    int moved_away = j->moved_away || j->target_gone;
    free(sj);
    sd->busy = 0;
    step_batch_t *b = STAILQ_FIRST(&sd->queue);
    switch (step) {
    case FWDIOI_DRAIN_OPEN:
    case FWDIOI_DRAIN_COPY:
        submit(sd, sd->local.status == FWDIO_OK && !sd->given_up && !moved_away &&
                           sd->next_run < b->nruns
                       ? FWDIOI_DRAIN_COPY
                       : FWDIOI_DRAIN_CLOSE);
        return;
    default: /* CLOSE */
        if (sd->given_up) {
            pump(sd);
            return;
        }
        agree(sd);
        return;
    }
}

static void pump(struct fwdioi_step_drains *sd)
{
    while (!sd->busy && !sd->agreeing) {
        step_batch_t *b = STAILQ_FIRST(&sd->queue);
        fwdio_file_t *f = sd->file;
        if (!b) {
            if (sd->idle && f && !sd->dup_pending) {
                void (*idle)(fwdio_file_t *f) = sd->idle;
                sd->idle = NULL;
                idle(f);
            }
            return;
        }
        /* A failed step, or after a failure: every rank knows, nothing is
         * copied nor agreed. */
        if (b->status.status != FWDIO_OK || sd->failed.status != FWDIO_OK || sd->given_up) {
            head_done(sd, b->status.status != FWDIO_OK  ? &b->status
                          : sd->failed.status != FWDIO_OK ? &sd->failed
                                                          : &sd->local);
            continue;
        }
        if (!sd->comm_ready)
            return; /* on_dup_done pumps */
        sd->local = b->lost; /* this step's own, from here to its agreement */
        if (b->nruns > 0 && sd->local.status == FWDIO_OK && sd->local_path) {
            if (!sd->buf && !(sd->buf = malloc(sd->unit))) {
                fwdioi_errinfo_set(&sd->local, FWDIO_ENOMEM, f->rank, 0, 0);
                agree(sd);
                return;
            }
            sd->next_run = sd->next_off = 0;
            if (sd->t0 == 0)
                sd->t0 = fwdioi_now();
            submit(sd, FWDIOI_DRAIN_OPEN);
            return;
        }
        agree(sd);
        return;
    }
}

/* ---- ending ---- */

int fwdioi_step_drains_idle(fwdio_file_t *f, void (*then)(fwdio_file_t *f))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    if (!sd || (STAILQ_EMPTY(&sd->queue) && !sd->busy && !sd->agreeing && !sd->dup_pending))
        return 1;
    sd->idle = then;
    return 0;
}

int fwdioi_step_drains_dup_pending(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    return sd && (sd->dup_pending || sd->dup_forgotten);
}

const fwdioi_errinfo_t *fwdioi_step_drains_failed(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    return sd && sd->failed.status != FWDIO_OK ? &sd->failed : NULL;
}

void fwdioi_step_drains_give_up(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    if (!sd || sd->given_up)
        return;
    sd->given_up = 1;
    if (sd->failed.status == FWDIO_OK)
        sd->failed = *why;
    /* what no peer may complete any more is left to MPI, with the
     * communicator */
    if (sd->agreeing || sd->dup_pending) {
        fwdioi_rt_forget(f->engine, sd);
        sd->dup_forgotten = sd->dup_pending;
        sd->agreeing = sd->dup_pending = 0;
        sd->abandoned = 1;
    }
    pump(sd); /* the queued steps fail; a job in flight closes its files */
}


void fwdioi_step_drains_free(fwdio_file_t *f)
{
    struct fwdioi_step_drains *sd = f->local ? f->local->steps : NULL;
    if (!sd)
        return;
    f->local->steps = NULL;
    if (sd->comm != MPI_COMM_NULL && !sd->abandoned && !sd->dup_pending)
        fwdioi_log_mpi_failure(MPI_Comm_free(&sd->comm), "MPI_Comm_free (step drains)");
    free_state(sd);
}
