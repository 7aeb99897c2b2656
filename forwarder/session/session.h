/* SPDX-License-Identifier: BSD-3-Clause */
/* A file's session (session.c): its phases and agreements, run on the
 * progress thread. writer.c and sender.c call back into it. */
#ifndef FWDIOI_SESSION_H
#define FWDIOI_SESSION_H

#include "state.h"

/** Set up the session of a new file (fwdio_open). */
void fwdioi_session_init(fwdio_file_t *f);
/** Free what the session holds (at its end) (progress thread). */
void fwdioi_session_free(fwdio_file_t *f);
/** The runtime's client poll hook, run on every tick of its loop (runtime.h)
 *  (progress thread). */
int fwdioi_session_poll(void *runtime, int *active);
/** Give up the file's collectives after an MPI failure (`notify`: this rank's
 *  own, so tell the other ranks) and complete it with `why` once its own
 *  traffic is done (progress thread). */
void fwdioi_session_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify);
/** Another rank announced it aborted the file with `why`, its steps ended as
 *  `steps`: abort here too, the steps it completed keeping their status
 *  (progress thread). */
void fwdioi_session_abort_heard(fwdio_file_t *f, const fwdioi_errinfo_t *why,
                                const fwdioi_step_outcome_t *steps);
/** The active file of sequence number `seq` (its open task ran, its session
 *  has not ended), or NULL; O(1) (progress thread). */
fwdio_file_t *fwdioi_session_active_file(struct fwdio_runtime *o, uint64_t seq);
/** Another rank announced that an MPI call of file `seq`'s drain (node-local
 *  tier) failed with `why`: the drain here, if it runs, ends with it too
 *  (1); 0 when this rank has no drain of `seq` in flight (not yet, or no
 *  more) (progress thread). */
int fwdioi_session_drain_abort_heard(struct fwdio_runtime *o, uint64_t seq,
                                     const fwdioi_errinfo_t *why);
/** Abort the file: this rank ran out of memory for it (at `offset`), and
 *  says so (progress thread). */
void fwdioi_session_abort_nomem(fwdio_file_t *f, uint64_t offset);
/** MPI call `call` (fwdioi_mpi_call_t) of this rank returned `mpi_rc`:
 *  abort (progress thread). */
void fwdioi_session_mpi_failed(fwdio_file_t *f, int call, int mpi_rc);
/** This rank is done with the file's data (as a writer: all of it written and
 *  synced); the final agreement starts once its own sends are done
 *  (progress thread). */
void fwdioi_session_data_done(fwdio_file_t *f);
/** An aborted file completes once nothing of its own is in flight (progress thread). */
void fwdioi_session_finish_if_aborted(fwdio_file_t *f);
/** A read file, after the close is agreed and whenever one of its reads or
 *  its reader's work ends: once this rank's reads and its reader are done,
 *  the file's data is done (fwdioi_session_data_done) (progress thread). */
void fwdioi_session_read_check_done(fwdio_file_t *f);
/** The writer's open job is done: agree on the open status (progress thread). */
void fwdioi_session_opened(fwdio_file_t *f);
/** Start one of the file's agreements: `count` elements of `type` of `in`
 *  reduced with `op` into `out` on the file's communicator; `done` runs on
 *  completion (progress thread). 0, or -1 when it could not start (the file
 *  is aborted). */
int fwdioi_session_agree(fwdio_file_t *f, int call, const void *in, void *out, int count,
                         MPI_Datatype type, MPI_Op op, fwdioi_req_cb_t done);
/** Start one of the file's status agreements (one at a time): every rank's
 *  `*in` reduced (agree.h: the lowest rank's error, MPI_MINLOC over pairs)
 *  into `*out`, set before `done` runs (progress thread). 0, or -1 (aborted). */
int fwdioi_session_agree_status(fwdio_file_t *f, int call, const fwdioi_errinfo_t *in,
                                fwdioi_errinfo_t *out, fwdioi_req_cb_t done);
/** Start the exclusive scan of this rank's appended bytes (*mine into
 *  *prefix; undefined on rank 0) (progress thread). 0, or -1 (aborted). */
int fwdioi_session_scan_appends(fwdio_file_t *f, const uint64_t *mine, uint64_t *prefix,
                                fwdioi_req_cb_t done);
/** An agreement completed: whether it succeeded, else the file is aborted
 *  (progress thread). */
int fwdioi_session_agreement_ok(fwdio_file_t *f, int call, const MPI_Status *st);
/** Make a failure visible to the application: writes refused, error text
 *  (progress thread). */
void fwdioi_session_publish_error(fwdio_file_t *f, const fwdioi_errinfo_t *e);
/** Start the close agreement once this rank closed the file, it is open and
 *  no step of it is pending (progress thread). */
void fwdioi_session_try_close(fwdio_file_t *f);

#endif
