/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier (local_dir; after AHPIOS's ad-hoc striped
 * file system on the compute nodes' own storage): a file written with a
 * size and options.local_dir set is written by its writers into files of
 * their nodes' local stores (local_index.h: the units at their target
 * offsets, then an index), complete once every byte is durable there, and
 * then drained to the target path in the background (drain.c). This header
 * is what the rest of the forwarder calls: the open, the writer's few hooks
 * and the session's. Files without the tier have no `local` and every hook
 * answers as for a file written straight to its target.
 */
#ifndef FWDIOI_LOCAL_TIER_H
#define FWDIOI_LOCAL_TIER_H

#include "ranges.h"
#include "state.h"

struct fwdioi_storage_job; /* storage/storage.h */
struct fwdioi_failover;    /* storage/failover.h */

/** An error's `other_value` that marks it as about the target: the writer's
 *  local store failed, its file moved to the target (storage/failover.h)
 *  and a call there failed; the error's text names the target, not the
 *  local file. */
#define FWDIOI_LOCAL_AT_TARGET 2

/** The writer's file in the local store, which it opens instead of the
 *  target; NULL for a file without the tier, and for a writer that writes
 *  the file straight to the target (no room in the local store). */
const char *fwdioi_local_data_path(const fwdio_file_t *f);
/**
 * The writer is about to open the file with `job` (the target, as without
 * the tier): for a file of the tier, take the writer's bytes (its units and
 * its index) from the node's count (local_capacity, node/node_area.h) and
 * point the job at the local file (emptied, its directories made), with a
 * free-space check that falls back to the target (storage.h, need_free);
 * returns 0: the caller submits the job. Bytes that do not fit the count
 * wait for room when drains in flight can make it (local_space.h,
 * config.local_wait_ms): returns 1, the job held, and go(f, job, 1) later
 * submits it (pointed at the local file, or at the target once the wait
 * ends without room), or go(f, job, 0) when the file aborted meanwhile
 * (nothing opened). Bytes that cannot wait leave the job on the target at
 * once (0): the writer writes this file straight there (progress thread).
 */
int fwdioi_local_prepare_open(fwdio_file_t *f, struct fwdioi_storage_job *job,
                              void (*go)(fwdio_file_t *f, struct fwdioi_storage_job *job,
                                         int run));
/**
 * The writer's failover to the target, which its WRITE and FINISH jobs of
 * the file carry (storage.h): a local pwrite or fdatasync that fails
 * (ENOSPC, EDQUOT, EIO, ...) moves the file to the target instead of
 * failing it; its seal then finds the writer direct. NULL for a file
 * without the tier, a writer that writes straight to the target, or no
 * memory (progress thread).
 */
struct fwdioi_failover *fwdioi_local_failover(const fwdio_file_t *f);
/** The writer's open job is done: one that fell back to the target gives
 *  the bytes back, and the writer writes straight there (progress
 *  thread). */
void fwdioi_local_open_done(fwdio_file_t *f, const struct fwdioi_storage_job *job);
/**
 * The writer's local file is written, durable and closed: write its index
 * and make it durable (an I/O job), then then(f). Returns 0 when it did so,
 * -1 for a file without the tier or written to the target, also when its
 * jobs moved it there (the caller goes on itself); an index write that
 * fails moves it there too (progress thread).
 */
int fwdioi_local_seal(fwdio_file_t *f, void (*then)(fwdio_file_t *f));

/**
 * local_copies 2, once the file's final status is agreed OK: each writer
 * forwards its local file (its units, then its index) to its partner
 * (partner.h), which keeps it in its own local store under the same name
 * and makes it durable; every rank then agrees on the copies' status (the
 * first failure) and then(f, status) runs, the status the file completes
 * with (an abort of the file meanwhile: then(f) runs once nothing of the
 * copying is in flight, and the session's abort rules apply). Returns 0
 * when it started, -1 when the file has no partner copies (no tier, one
 * copy): the caller goes on (progress thread).
 */
int fwdioi_local_replicate(fwdio_file_t *f,
                           void (*then)(fwdio_file_t *f, const fwdioi_errinfo_t *copies));

/** The session must not commit (rename, commit block) at the file's
 *  completion: its drain does, once the target holds the bytes. */
int fwdioi_local_defers_commit(const fwdio_file_t *f);
/**
 * The session is over with `final` (finish_session, before complete is
 * delivered): a file of the tier that completed starts its drain, taking
 * over the file's communicator (*comm becomes MPI_COMM_NULL) and its path
 * (nobody opens it until the drain is over and calls path_free(f), the
 * session's, before drained is delivered); returns 1 then. 0: no drain (no
 * tier, or the file failed or aborted: the drained status is the complete
 * one). `announce`, the session's, tells the other ranks that an MPI call
 * of this rank's drain failed, so theirs end too (fwdioi_local_abort_heard).
 * `comm_done`, the session's, takes the communicator back at the drain's end
 * when no collective of it was given up (reusable: the drain succeeded, so
 * nothing of it is left on the communicator: the session may keep it for a
 * later file) (progress thread).
 */
int fwdioi_local_session_done(fwdio_file_t *f, const fwdioi_errinfo_t *final, MPI_Comm *comm,
                              void (*path_free)(fwdio_file_t *f),
                              void (*announce)(fwdio_file_t *f, const fwdioi_errinfo_t *why),
                              void (*comm_done)(fwdio_file_t *f, MPI_Comm *comm, int reusable));
/**
 * Another rank's drain of `f` failed in MPI with `why` (it announced it):
 * this rank's drain gives up its agreements, finishes the job in flight,
 * closes its files and, on the committer with atomic_replace, removes the
 * temporary, then is over with `why` (the same status and text on every
 * rank). Nothing after the drain's end (progress thread).
 */
void fwdioi_local_abort_heard(fwdio_file_t *f, const fwdioi_errinfo_t *why);
/** A stream of the tier drains its steps while it is written: once its
 *  open agreement has started, duplicate `file_comm` for their agreements
 *  (every rank at the same place in the file's collectives); no other
 *  collective of the file may start until it is done
 *  (fwdioi_step_drains_dup_pending), when resume(f) is called; an MPI call
 *  of the step drains that fails here (or no memory for a step's place in
 *  their agreements) calls fail(f, why), which must fail the file, or its
 *  drain after the close, on every rank. MPI_SUCCESS, or the MPI error
 *  (then the file fails) (progress thread). */
int fwdioi_step_drains_start(fwdio_file_t *f, MPI_Comm file_comm,
                             void (*resume)(fwdio_file_t *f),
                             void (*fail)(fwdio_file_t *f, const fwdioi_errinfo_t *why));
/** 1 while that duplication is in flight, or once it was given up in
 *  flight (then the file's communicator is left to MPI, never freed)
 *  (progress thread). */
int fwdioi_step_drains_dup_pending(const fwdio_file_t *f);
/** Whether `f`'s steps drain one by one (its SYNC jobs take their ranges). */
int fwdioi_step_drains_on(const fwdio_file_t *f);
/** A writer's step SYNC job took the ranges it wrote locally since the step
 *  before (`list`, n of them, malloc'ed: taken over) (progress thread). */
void fwdioi_step_drains_synced(fwdio_file_t *f, fwdioi_range_t *list, size_t n);
/** Step `index` is complete with its agreed `status`: its drain follows, in
 *  step order (progress thread). */
void fwdioi_step_drains_complete(fwdio_file_t *f, uint64_t index, const fwdioi_errinfo_t *status);
/** The drain of `f` after its session fails with `why` (an MPI failure
 *  here): every rank is told and gives it up (progress thread). */
void fwdioi_local_drain_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why);
/** Give up the step drains (the file failed, or its drain was aborted):
 *  queued steps fail with `why`, agreements in flight are left to MPI
 *  (progress thread). */
void fwdioi_step_drains_give_up(fwdio_file_t *f, const fwdioi_errinfo_t *why);

/**
 * Another rank announced that an MPI call of file `seq`'s drain failed with
 * `why`: this rank's drain of it, if one runs (in the runtime's `draining`
 * list), ends with it too (fwdioi_local_abort_heard) and 1 is returned; 0
 * when this rank has no drain of `seq` in flight (not yet, or no more)
 * (progress thread).
 */
int fwdioi_local_drain_abort_heard(struct fwdio_runtime *o, uint64_t seq,
                                   const fwdioi_errinfo_t *why);
#endif
