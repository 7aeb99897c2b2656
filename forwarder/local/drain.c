/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drain of a file of the node-local tier (progress thread, its system
 * calls as jobs of the runtime's I/O pool). Once the file is complete in the
 * local stores, every writer copies its units, whole write units, from its
 * local file to the target (the temporary with atomic_replace), in order:
 *
 *   OPEN   open the local file (read) and the target (O_CREAT, no O_TRUNC;
 *          writer 0 sets its length): every byte of the target below its
 *          size belongs to some writer's units, which are written whole
 *          (holes as zeros), so no writer has to wait for another's
 *          truncation;
 *   COPY   pread a unit, pwrite it, a few MiB per job (paced to
 *          drain_bandwidth), until the writer's last unit;
 *   CLOSE  fdatasync the target when durable or a commit follows, close both.
 *
 * Then, on the file's communicator the session handed over, every rank (the
 * writers with their status, the others with none) agrees on the drain's
 * status; the committer writes the commit block and renames the temporary
 * over the target, or removes the temporary if the drain failed, and the
 * commit's status is agreed; after a success each writer keeps its local
 * file for a restart (local_restart.h), its version record now saying
 * drained with the target as the drain left it. The drained status (the first failure, else OK) is published and
 * the *drained* callback delivered on every rank; a failed drain keeps the
 * local files (the only whole copy).
 *
 * The jobs run on the pool, not the ordered I/O thread, so the next file's
 * writes into the local store are not queued behind a drain; a file has one
 * drain job at a time, so its jobs keep their order.
 */
#include "local/local_life.h"
#include "local/local_state.h"

#include "clock.h"
#include "local/drain_io.h"
#include "local/local_keep.h"
#include "local/local_space.h"
#include "log.h"
#include "session/file_life.h"
#include "storage/storage.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void drain_agree(fwdio_file_t *f);
static void open_next(fwdio_file_t *f);
static void drain_over(fwdio_file_t *f);
static void abort_continue(fwdio_file_t *f);
static void on_commit_done(fwdioi_storage_job_t *job);

/* ---- the progress side ---- */

static void drain_job_done(fwdioi_io_job_t *io);

static void submit(fwdio_file_t *f, fwdioi_drain_step_t step)
{
    struct fwdioi_local *l = f->local;
    fwdioi_drain_job_t *j = calloc(1, sizeof *j);
    if (!j) {
        fwdioi_errinfo_set(&l->drain_local, FWDIO_ENOMEM, f->rank, 0, 0);
        /* the descriptors leak rather than the drain hangs */
        l->in_fd = l->out_fd = -1;
        if (step == FWDIOI_DRAIN_KEEP || step == FWDIOI_DRAIN_REMOVE)
            drain_over(f); /* the drain is agreed: only the clean-up is lost */
        else if (l->aborted)
            abort_continue(f);
        else
            drain_agree(f);
        return;
    }
    j->io.run = fwdioi_drain_job_run;
    j->io.done = drain_job_done;
    j->file = f;
    j->step = step;
    j->unit = f->plan.write_size;
    j->seq = f->seq;
    if (step == FWDIOI_DRAIN_REMOVE) {
        j->paths = l->drain_paths;
        j->npaths = l->nremove;
    } else if (l->drain_at < l->ndrain) {
        j->writer = l->drain_writers[l->drain_at];
        j->local_path = l->drain_paths[l->drain_at];
    }
    j->target_path = f->write_path;
    j->final_path = f->path;
    j->in_fd = l->in_fd;
    j->out_fd = l->out_fd;
    j->sets_length = j->writer == 0 && !f->stream; /* a stream's open set it */
    j->no_create = f->stream; /* a stream's open made it: never again after an unlink */
    /* durable as asked; always before a commit block or a rename; not after
     * a failure (the drain's status is settled) */
    j->sync = (f->opts.durable || l->committer >= 0) && l->drain_local.status == FWDIO_OK;
    j->size = f->size;
    j->buf = l->buf;
    j->runs = l->runs;
    j->nruns = l->nruns;
    j->next_run = l->next_run;
    j->next_off = l->next_off;
    j->moved = l->moved;
    j->bandwidth = l->bandwidth;
    j->t0 = l->t0;
    j->status = FWDIO_OK;
    l->busy = 1;
    fwdioi_rt_io_submit_any(f->engine, &j->io);
}

static void drain_job_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_drain_job_t *j = (fwdioi_drain_job_t *)io;
    fwdio_file_t *f = j->file;
    struct fwdioi_local *l = f->local;
    fwdioi_drain_step_t step = j->step;
    int removed = j->removed;
    int gone = j->target_gone;
    if (j->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&l->drain_local, j->status, f->rank, j->sys_errno, j->err_offset,
                                j->call);
    l->in_fd = j->in_fd;
    l->out_fd = j->out_fd;
    l->next_run = j->next_run;
    l->next_off = j->next_off;
    l->moved += j->copied;
    l->busy = 0;
    free(j);
    if (l->aborted && step != FWDIOI_DRAIN_KEEP) {
        abort_continue(f);
        return;
    }
    switch (step) {
    case FWDIOI_DRAIN_OPEN:
    case FWDIOI_DRAIN_COPY: {
        if (gone)
            fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s was removed since the stream's open: its "
                       "last bytes are not drained", f->rank, f->path);
        int more = l->next_run < l->nruns && !gone;
        submit(f, l->drain_local.status == FWDIO_OK && more ? FWDIOI_DRAIN_COPY : FWDIOI_DRAIN_CLOSE);
        return;
    }
    case FWDIOI_DRAIN_CLOSE:
        if (l->drain_local.status == FWDIO_OK && l->drain_at + 1 < l->ndrain) {
            l->drain_at++; /* the next writer's units this rank drains */
            open_next(f);
            return;
        }
        drain_agree(f);
        return;
    case FWDIOI_DRAIN_CHECK: /* its own done: check_done */
        return;
    case FWDIOI_DRAIN_REMOVE: /* the partner copies gone: this rank's own copy is kept */
        fwdioi_local_partner_room_give(f, l->partner_bytes);
        if (f->stream) { /* its local file went too: its room goes back */
            fwdioi_local_space_free(f);
        } else if (l->data_path && !l->direct) {
            submit(f, FWDIOI_DRAIN_KEEP);
            return;
        }
        drain_over(f);
        return;
    case FWDIOI_DRAIN_KEEP:
        /* drained: the copy stays counted, kept until a new file of this
         * rank needs its room (local_keep.h) */
        fwdioi_local_pending_end(f);
        if (l->reserved > 0 && removed) /* not kept after all (drain_io.c) */
            fwdioi_area_local_give(&f->owner->area, l->reserved);
        else if (l->reserved > 0)
            fwdioi_local_kept_add(f->owner, l->data_path, fwdioi_local_version_id(f),
                                  l->reserved);
        l->reserved = 0;
        drain_over(f);
        return;
    }
}

/* ---- agreements ---- */

/* The drain is over with `result` here: publish it, then mark the local
 * file drained after a success. */
static void drain_finish(fwdio_file_t *f, const fwdioi_errinfo_t *result)
{
    struct fwdioi_local *l = f->local;
    l->over = 1;
    /* Not after a collective was given up: MPI still progresses it among
     * the ranks that joined (Open MPI's libnbc then touched the freed
     * communicator and crashed), so the communicator is left to MPI too. */
    if (l->comm != MPI_COMM_NULL && !l->abandoned)
        l->comm_done(f, &l->comm, result->status == FWDIO_OK);
    l->comm = MPI_COMM_NULL;
    free(l->buf);
    l->buf = NULL;
    l->drain_agreed = *result; /* what drain_over publishes */
    double t = fwdioi_now() - l->t0;
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s drained: %s (%llu bytes in %.3f s)", f->rank,
               f->path, fwdio_strerror((int)result->status), (unsigned long long)l->moved, t);
    /* drained: the partner copies this rank holds for others go (they were
     * the drain's insurance), then its own copy is kept for a restart */
    l->nremove = 0;
    for (int i = 0; result->status == FWDIO_OK && l->drain_paths && i < l->nkept; i++)
        l->drain_paths[l->nremove++] = l->kept_paths[i];
    /* a stream's local file holds only what its writer wrote, never a
     * restart's copy: drained, it goes */
    if (result->status == FWDIO_OK && f->stream && l->drain_paths && l->data_path && !l->direct)
        l->drain_paths[l->nremove++] = l->data_path;
    if (l->nremove > 0)
        submit(f, FWDIOI_DRAIN_REMOVE);
    else if (result->status == FWDIO_OK && l->data_path && !l->direct)
        submit(f, FWDIOI_DRAIN_KEEP);
    else
        drain_over(f);
}

/* ---- aborts ----
 *
 * An MPI call of the drain that fails on one rank (an agreement that cannot
 * start or completes with an error) would leave the other ranks waiting in
 * that collective for ever, and a rank that gave up alone would report
 * another status than theirs. So the failing rank tells every other rank
 * (the session's announce, abort.c, marked as the drain's), and each rank,
 * the failing one and those that hear of it, gives up the drain's
 * collectives and ends its drain with that one error (the same status and
 * text everywhere): the job in flight finishes, its files are closed
 * without a sync, the committer removes the temporary of atomic_replace
 * unless it renamed it already, and the local files are kept (a failed
 * drain's rule). As with the session's aborts, a collective that failed on
 * one rank only after it completed on the others cannot be taken back
 * there: MPI reports a failed collective where it did not complete. */

/* Go on with an aborted drain once nothing of it is in flight. */
static void abort_continue(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (l->over || l->busy || l->agreeing || !l->started)
        return; /* the job in flight, or the start task, calls again */
    if (l->in_fd >= 0 || l->out_fd >= 0) {
        submit(f, FWDIOI_DRAIN_CLOSE); /* no sync: drain_local failed */
        return;
    }
    if (f->rank == l->committer && f->opts.atomic_replace && !l->committed) {
        l->committed = 1;
        fwdioi_storage_job_t *job =
            fwdioi_storage_job_new(FWDIOI_STORAGE_COMMIT, f, on_commit_done);
        if (job) {
            job->path = f->write_path;
            job->target = f->path;
            job->discard = 1;
            l->busy = 1;
            fwdioi_rt_io_submit(f->engine, &job->io);
            return;
        }
        /* no memory: the temporary stays, as after a killed job */
    }
    drain_finish(f, &l->abort_info);
}

/* The drain fails with `why` (an MPI failure), here first (`announce`: tell
 * the others) or on another rank. */
static void drain_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int announce)
{
    struct fwdioi_local *l = f->local;
    if (l->over || l->aborted)
        return;
    l->aborted = 1;
    l->abort_info = *why;
    if (l->drain_local.status == FWDIO_OK)
        l->drain_local = *why;
    fwdioi_log(FWDIOI_LOG_WARN, "rank %d: the drain of %s is aborted (%s on rank %lld)", f->rank,
               f->path, fwdio_strerror((int)why->status), (long long)why->rank);
    if (announce && l->announce)
        l->announce(f, why);
    fwdioi_step_drains_give_up(f, why); /* and a stream's steps not drained yet */
    if (l->agreeing) { /* one that cannot complete: left to MPI, with its communicator */
        fwdioi_rt_forget(f->engine, f);
        l->agreeing = 0;
        l->abandoned = 1;
    }
    abort_continue(f);
}

void fwdioi_local_drain_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    if (f->local)
        drain_abort(f, why, 1);
}

void fwdioi_local_abort_heard(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    if (f->local)
        drain_abort(f, why, 0);
}

/* An agreement of the drain completed: whether it succeeded (else the drain
 * is aborted on every rank). */
static int agreement_ok(fwdio_file_t *f, int call, const MPI_Status *st)
{
    if (st->MPI_ERROR == MPI_SUCCESS)
        return 1;
    fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set_mpi(&e, f->rank, call, st->MPI_ERROR);
    drain_abort(f, &e, 1);
    return 0;
}

/* The commit's status is agreed: the drain is over (progress thread). */
static void on_commit_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_local *l = f->local;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_DRAIN_COMMIT, st))
        return;
    drain_finish(f, l->drain_agreed.status != FWDIO_OK ? &l->drain_agreed : &l->commit_agreed);
}

/* An agreement of the drain completed: its result unpacked, then its step. */
static void on_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_local *l = f->local;
    l->agreeing = 0;
    if (st->MPI_ERROR == MPI_SUCCESS)
        fwdioi_errinfo_unpack(l->agree_out, l->agree_result);
    l->agree_done(f, st);
}

/* Agree on a status over the drain's communicator, as the session's status
 * agreements do (MPI_MINLOC over pairs, agree.h). */
static int start(fwdio_file_t *f, int call, const fwdioi_errinfo_t *in, fwdioi_errinfo_t *out,
                 fwdioi_req_cb_t done)
{
    struct fwdioi_local *l = f->local;
    fwdioi_errinfo_pack(in, f->rank, l->agree_in);
    l->agree_result = out;
    l->agree_done = done;
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Iallreduce(l->agree_in, l->agree_out, FWDIOI_ERRINFO_PAIRS, MPI_LONG_INT,
                                  MPI_MINLOC, l->comm, &req);
    if (rc != MPI_SUCCESS) {
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set_mpi(&e, f->rank, call, rc);
        drain_abort(f, &e, 1);
        return -1;
    }
    l->agreeing = 1;
    fwdioi_rt_track(f->engine, req, on_agreed, f);
    return 0;
}

static void commit_agree(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    start(f, FWDIOI_MPI_AGREE_DRAIN_COMMIT, &l->commit_local, &l->commit_agreed,
          on_commit_agreed);
}

static void on_commit_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    struct fwdioi_local *l = f->local;
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&l->commit_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    fwdioi_storage_job_free(job);
    l->busy = 0;
    l->committed = 1;
    if (l->aborted) {
        abort_continue(f);
        return;
    }
    commit_agree(f);
}

/* The committer writes the commit block and renames the temporary over the
 * target, or removes the temporary after a failed drain (storage.c's COMMIT
 * job, as at a direct file's completion). */
static void commit(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (f->rank != l->committer) {
        commit_agree(f);
        return;
    }
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_COMMIT, f, on_commit_done);
    if (job) {
        job->path = f->write_path;
        job->target = f->opts.atomic_replace ? f->path : NULL;
        job->discard = l->drain_agreed.status != FWDIO_OK;
        /* the blocks were set before fwdio_close; nothing changes them now */
        if (l->committers == 1 && fwdioi_storage_job_add_blocks(job, &f->commit) != 0) {
            fwdioi_storage_job_free(job);
            job = NULL;
        }
    }
    if (!job) {
        fwdioi_errinfo_set(&l->commit_local, FWDIO_ENOMEM, f->rank, 0, 0);
        commit_agree(f);
        return;
    }
    l->busy = 1;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

/* The drain's status is agreed: commit, or be over (progress thread). */
static void on_drain_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_local *l = f->local;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_DRAIN, st))
        return;
    if (l->committer >= 0)
        commit(f);
    else
        drain_finish(f, &l->drain_agreed);
}

/* This rank is done with its part: agree on the drain's status. */
static void drain_agree(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    start(f, FWDIOI_MPI_AGREE_DRAIN, &l->drain_local, &l->drain_agreed, on_drain_agreed);
}

/* Open the local file of drain_writers[drain_at], with the runs its units
 * are (its stripes: a stream's writer has what it wrote). */
static void open_next(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    int w = l->drain_writers[l->drain_at];
    free(l->runs);
    l->runs = fwdioi_local_runs_of(f, w, &l->nruns);
    l->next_run = l->next_off = 0;
    if (!l->runs) {
        fwdioi_errinfo_set(&l->drain_local, FWDIO_ENOMEM, f->rank, 0, 0);
        drain_agree(f);
        return;
    }
    submit(f, FWDIOI_DRAIN_OPEN);
}

/* Copy the units of the writers in drain_writers (ndrain of them) to the
 * target, one writer after the other, then agree. */
static void copy_assigned(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (l->ndrain == 0) { /* nothing of its own in the local store */
        drain_agree(f);
        return;
    }
    l->buf = malloc(f->plan.write_size);
    if (!l->buf) {
        fwdioi_errinfo_set(&l->drain_local, FWDIO_ENOMEM, f->rank, 0, 0);
        drain_agree(f);
        return;
    }
    l->drain_at = 0;
    open_next(f);
}

/* ---- partner copies (local_copies 2): which copy each writer's units
 * come from ----
 *
 * Before it copies, every rank reads back the index of each local file it
 * holds (its own, the partner copies it keeps: CHECK), and all ranks OR
 * what they found intact per writer (bit 1 the writer's copy, 2 the
 * partner's, 4 the writer wrote straight to the target). Every rank then
 * sees the same table: a writer's units come from its own copy, else from
 * its partner's; a writer with neither fails the drain (each rank that held
 * a copy of it gives the reason its check found, so the agreed error names
 * one) and nobody copies anything. */

static void on_intact_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_local *l = f->local;
    l->agreeing = 0;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_INTACT, st))
        return;
    int lost = 0;
    for (int w = 0; w < f->plan.nwriters; w++)
        lost += l->avail[w] == 0;
    l->ndrain = 0;
    if (lost > 0) {
        /* the reasons found here for the lost writers' copies */
        for (int i = 0; i <= l->nkept; i++) {
            int w = l->check_writers[i];
            if (l->check_paths[i] && l->avail[w] == 0 && l->drain_local.status == FWDIO_OK) {
                l->drain_local = l->check_errs[i];
                if (i > 0) { /* the text names the partner copy */
                    l->drain_local.other_rank = w;
                    l->drain_local.other_value = FWDIOI_LOCAL_PARTNER_COPY;
                }
            }
        }
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: %d writer(s) have no intact local copy: the "
                   "drain fails", f->rank, f->path, lost);
        drain_agree(f);
        return;
    }
    if (f->my_writer >= 0 && (l->avail[f->my_writer] & 1) && !l->direct) {
        l->drain_writers[l->ndrain] = f->my_writer;
        l->drain_paths[l->ndrain++] = l->data_path;
    }
    for (int i = 0; i < l->nkept; i++) {
        int w = l->kept[i];
        if (l->avail[w] != 2)
            continue; /* the writer's own copy, or the target, has its units */
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s: writer %d's units drained from its partner "
                   "copy %s", f->rank, f->path, w, l->kept_paths[i]);
        l->drain_writers[l->ndrain] = w;
        l->drain_paths[l->ndrain++] = l->kept_paths[i];
    }
    copy_assigned(f);
}

static void check_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_drain_job_t *j = (fwdioi_drain_job_t *)io;
    fwdio_file_t *f = j->file;
    struct fwdioi_local *l = f->local;
    int own = l->check_paths[0] != NULL;
    const int *intact = j->intact;
    free(j);
    l->busy = 0;
    if (l->aborted) {
        abort_continue(f);
        return;
    }
    int nw = f->plan.nwriters;
    memset(l->avail_in, 0, (size_t)nw * sizeof *l->avail_in);
    if (f->my_writer >= 0 && l->direct)
        l->avail_in[f->my_writer] |= 4;
    if (own && intact[0])
        l->avail_in[f->my_writer] |= 1;
    else if (own)
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: the local copy %s is lost (%s)", f->rank,
                   f->path, l->data_path, strerror((int)l->check_errs[0].sys_errno));
    for (int i = 0; i < l->nkept; i++)
        if (intact[1 + i])
            l->avail_in[l->kept[i]] |= 2;
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Iallreduce(l->avail_in, l->avail, nw, MPI_INT, MPI_BOR, l->comm, &req);
    if (rc != MPI_SUCCESS) {
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set_mpi(&e, f->rank, FWDIOI_MPI_AGREE_INTACT, rc);
        drain_abort(f, &e, 1);
        return;
    }
    l->agreeing = 1;
    fwdioi_rt_track(f->engine, req, on_intact_agreed, f);
}

/* Read back the index of every local file this rank holds (a pool job). */
static void check_copies(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    int n = 1 + l->nkept, nw = f->plan.nwriters;
    fwdioi_drain_job_t *j = calloc(1, sizeof *j);
    l->avail = calloc((size_t)nw, sizeof *l->avail);
    l->avail_in = calloc((size_t)nw, sizeof *l->avail_in);
    l->check_paths = calloc((size_t)n, sizeof *l->check_paths);
    l->check_writers = calloc((size_t)n, sizeof *l->check_writers);
    l->check_intact = calloc((size_t)n, sizeof *l->check_intact);
    l->check_errs = calloc((size_t)n, sizeof *l->check_errs);
    if (!j || !l->avail || !l->avail_in || !l->check_paths || !l->check_writers ||
        !l->check_intact || !l->check_errs) {
        free(j);
        /* the others are in the table's reduction: all give up alike */
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set(&e, FWDIO_ENOMEM, f->rank, 0, 0);
        drain_abort(f, &e, 1);
        return;
    }
    /* slot 0: this writer's own file (NULL: none) */
    int own = f->my_writer >= 0 && l->data_path && !l->direct;
    for (int i = 0; i < n; i++)
        l->check_errs[i] = FWDIOI_ERRINFO_OK;
    l->check_paths[0] = own ? l->data_path : NULL;
    l->check_writers[0] = f->my_writer;
    for (int i = 0; i < l->nkept; i++) {
        l->check_paths[1 + i] = l->kept_paths[i];
        l->check_writers[1 + i] = l->kept[i];
    }
    j->io.run = fwdioi_drain_job_run;
    j->io.done = check_done;
    j->file = f;
    j->unit = f->plan.write_size;
    j->seq = f->seq;
    j->step = FWDIOI_DRAIN_CHECK;
    j->paths = l->check_paths;
    j->path_writers = l->check_writers;
    j->npaths = n;
    j->intact = l->check_intact;
    j->errs = l->check_errs;
    j->in_fd = j->out_fd = -1;
    l->busy = 1;
    fwdioi_rt_io_submit_any(f->engine, &j->io);
}

void fwdioi_drain_start(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    /* a stream's steps drain first, in order; this drain copies what was
     * written after the last one (called again once they are over) */
    if (!fwdioi_step_drains_idle(f, fwdioi_drain_start))
        return;
    l->drain_local = l->drain_agreed = l->commit_local = l->commit_agreed = FWDIOI_ERRINFO_OK;
    l->t0 = fwdioi_now();
    l->moved = 0;
    l->next_run = l->next_off = 0;
    l->started = 1;
    if (l->aborted) { /* another rank's drain failed before this one began */
        abort_continue(f);
        return;
    }
    /* the writers this rank drains (at most its own and the copies it
     * keeps), and the files its REMOVE takes */
    l->drain_writers = calloc((size_t)(1 + l->nkept), sizeof *l->drain_writers);
    l->drain_paths = calloc((size_t)(1 + l->nkept), sizeof *l->drain_paths);
    if (!l->drain_writers || !l->drain_paths) {
        fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set(&e, FWDIO_ENOMEM, f->rank, 0, 0);
        drain_abort(f, &e, 1); /* with copies, the others may be in another reduction */
        return;
    }
    if (l->copies > 1) {
        check_copies(f);
        return;
    }
    l->ndrain = 0;
    const fwdioi_errinfo_t *steps_failed = fwdioi_step_drains_failed(f);
    if (steps_failed) { /* agreed on every rank: nothing more is copied */
        l->drain_local = *steps_failed;
        drain_agree(f);
        return;
    }
    if (f->my_writer >= 0 && !l->direct) {
        l->drain_writers[0] = f->my_writer;
        l->drain_paths[l->ndrain++] = l->data_path;
    }
    copy_assigned(f);
}

void fwdioi_drain_over_failed(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    l->over = 1;
    fwdioi_local_pending_end(f); /* never a drained copy */
    drain_over(f);
}

/* ---- the report ---- */

/* The drained callback (where the callback mode says), after complete. */
static void run_drained(fwdioi_call_t *call)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)call - offsetof(fwdio_file_t, drained_call));
    fwdioi_rt_lock(f->engine);
    int status = f->drain_status;
    fwdioi_rt_unlock(f->engine);
    if (f->cbs.drained)
        f->cbs.drained(f, status, f->cbs.user);
    fwdioi_rt_lock(f->engine);
    f->drained_delivered = 1;
    /* Freed by the application already (complete came first): ours to release. */
    int release = f->app_freed && f->complete_delivered;
    if (release)
        fwdioi_file_unlink_locked(f);
    fwdioi_rt_broadcast(f->engine);
    fwdioi_rt_unlock(f->engine);
    if (release)
        fwdioi_file_release(f);
}

/* Publish the drained status and its text, let the path's next file open,
 * and deliver drained, last: it may free f. */
static void drain_over(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    const fwdioi_errinfo_t *e = &l->drain_agreed;
    char text[sizeof f->drain_text], local[4096];
    const char *written = f->write_path;
    if (e->call == FWDIOI_CALL_PREAD || (e->call == FWDIOI_CALL_OPEN && e->status == FWDIO_EREAD))
        written = fwdioi_local_error_path(f, e, local, sizeof local);
    fwdioi_errinfo_format(e, f->path, written, text, sizeof text);
    fwdioi_rt_lock(f->engine);
    f->drain_status = (int)e->status;
    f->drain_error = *e;
    memcpy(f->drain_text, text, sizeof text);
    fwdioi_rt_unlock(f->engine);
    /* its bytes no longer wait for a drain: writers waiting for room
     * (local_space.h) look again, the next file of this path too */
    fwdioi_local_pending_end(f);
    fwdioi_local_room_changed(f->owner);
    l->path_free(f);
    f->drained_call.run = run_drained;
    fwdioi_rt_deliver(f->engine, &f->drained_call);
}
