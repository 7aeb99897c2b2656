/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's outcome, below the roles (outcome.c): how the writer, the sender,
 * the reader, the requester, a stream's steps and the node's data path
 * report a failure, or that their part of a phase is done, and the queries
 * of a file's phase they need. It names no role and calls nothing of
 * session.c by name: the session fills a table of its entry points
 * (fwdioi_session_ops_t, session.h: fwdioi_session_ops) that the runtime
 * holds (struct fwdio_runtime's session_ops), and the reports go through it,
 * as ROMIO's ADIOI_Fns or Mercury's na_class_ops are called. A role's unit
 * test fills the table with its own functions.
 */
#ifndef FWDIOI_OUTCOME_H
#define FWDIOI_OUTCOME_H

#include "state.h"

/** What the session does with the roles' reports (session.c fills it; each
 *  runs on the progress thread). */
typedef struct fwdioi_session_ops {
    /** The file was aborted with `why`, recorded already
     *  (fwdioi_outcome_abort): give up its collectives, tell the other ranks
     *  when `notify`, drop and fail what waits, complete it once its own
     *  traffic is done. */
    void (*aborted)(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify);
    /** MPI call `call` failed with `why` while the step before it is being
     *  agreed on: 1 if the abort waits for that step's outcome, else 0. */
    int (*defer_abort)(fwdio_file_t *f, int call, const fwdioi_errinfo_t *why);
    /** Another rank announced it aborted the file, its steps ended as
     *  `steps` (called before the abort is recorded). */
    void (*abort_heard)(fwdio_file_t *f, const fwdioi_step_outcome_t *steps);
    /** An aborted file completes once nothing of its own is in flight. */
    void (*finish_if_aborted)(fwdio_file_t *f);
    /** The writer's (reader's) open job is done: agree on the open status. */
    void (*opened)(fwdio_file_t *f);
    /** This rank is done with the file's data. */
    void (*data_done)(fwdio_file_t *f);
    /** This rank is done with a stream's first step's data. */
    void (*step_data_done)(fwdio_file_t *f);
    /** A read file's read or reader work ended: done once all of it is. */
    void (*read_check_done)(fwdio_file_t *f);
    /** A step ended or was agreed: start the close agreement if it waits. */
    void (*try_close)(fwdio_file_t *f);
    /** Where the bytes of a failure `e` were written when not at the
     *  file's write path (the node-local tier's local file: its name into
     *  `buf`), else NULL; NULL itself: always the write path. */
    const char *(*error_path)(const fwdio_file_t *f, const fwdioi_errinfo_t *e, char *buf,
                              size_t len);
    /** Another rank announced that the drain of the file `seq` aborted
     *  (a file of the node-local tier): 1 if a drain here took it, 0 if
     *  no drain of that file runs here (yet). */
    int (*drain_abort_heard)(struct fwdio_runtime *o, uint64_t seq, const fwdioi_errinfo_t *why);
    /** A dormant file was woken (session/dormant.h): start its session
     *  where it stopped, if it has its communicator. */
    void (*woken)(fwdio_file_t *f);
} fwdioi_session_ops_t;

/** Abort the file with `why` (an MPI failure, no memory, a broken rule;
 *  `notify`: this rank's own, so tell the other ranks). The first error
 *  wins: a file aborted or done already keeps its outcome, and `why` is
 *  kept as its abort_info and, if no error came before it, its local_error;
 *  then the session gives up its collectives (progress thread). */
void fwdioi_outcome_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify);
/** Another rank announced it aborted the file with `why`, its steps ended as
 *  `steps`: abort here too (progress thread). */
void fwdioi_outcome_abort_heard(fwdio_file_t *f, const fwdioi_errinfo_t *why,
                                const fwdioi_step_outcome_t *steps);
/** Abort the file: this rank ran out of memory for it (at `offset`), and
 *  says so (progress thread). */
void fwdioi_outcome_nomem(fwdio_file_t *f, uint64_t offset);
/** MPI call `call` (fwdioi_mpi_call_t) of this rank returned `mpi_rc`:
 *  abort, after the outcome of a step being agreed on (progress thread). */
void fwdioi_outcome_mpi_failed(fwdio_file_t *f, int call, int mpi_rc);
/** An aborted file completes once nothing of its own is in flight
 *  (progress thread). */
void fwdioi_outcome_finish_if_aborted(fwdio_file_t *f);
/** The writer's (reader's) open job is done, its status in s.outcome.open_local
 *  (progress thread). */
void fwdioi_outcome_opened(fwdio_file_t *f);
/** This rank is done with the file's data (as a writer: all of it written
 *  and synced) (progress thread). */
void fwdioi_outcome_data_done(fwdio_file_t *f);
/** This rank is done with a stream's first step's data (as a writer:
 *  drained, flushed and synced): its status is agreed (progress thread). */
void fwdioi_outcome_step_data_done(fwdio_file_t *f);
/** A read file: one of this rank's reads or its reader's work ended
 *  (progress thread). */
void fwdioi_outcome_read_check_done(fwdio_file_t *f);
/** A stream's step ended or its scan finished: the close may start
 *  (progress thread). */
void fwdioi_outcome_try_close(fwdio_file_t *f);

/** Make a failure visible to the application: writes refused from now on,
 *  the error text made once (runtime lock held). */
void fwdioi_outcome_publish_error_locked(fwdio_file_t *f, const fwdioi_errinfo_t *e);
/** fwdioi_outcome_publish_error_locked, taking the lock (progress thread). */
void fwdioi_outcome_publish_error(fwdio_file_t *f, const fwdioi_errinfo_t *e);

/** A storage job of the file ended with its failing call returning at
 *  `when` (the job's fail_time; 0: it did not fail): the earliest is kept
 *  for fwdio_file_stats_t.time_to_failure (progress thread). */
static inline void fwdioi_outcome_storage_failed(fwdio_file_t *f, double when)
{
    FWDIOI_ASSERT_PROGRESS();
    double *first = &f->s.stats.first_failure;
    if (when > 0 && (*first == 0 || when < *first))
        *first = when;
}

/** The active file of sequence number `seq` (its open task ran, its session
 *  has not ended), or NULL; O(1) (progress thread). */
fwdio_file_t *fwdioi_outcome_active_file(struct fwdio_runtime *o, uint64_t seq);

/* Queries of a file's phase and outcome, for the roles (progress thread). */

/** Whether the file was aborted on this rank. */
static inline int fwdioi_file_aborted(const fwdio_file_t *f) { return f->s.outcome.aborted; }
/** Whether the open is not yet agreed (the phases before OPEN). */
static inline int fwdioi_file_before_open(const fwdio_file_t *f)
{
    return f->s.phase < FWDIOI_PHASE_OPEN;
}
/** Whether the open was agreed and succeeded: data flows (OPEN and after). */
static inline int fwdioi_file_open_ok(const fwdio_file_t *f)
{
    return f->s.phase >= FWDIOI_PHASE_OPEN && f->s.outcome.open_agreed.status == FWDIO_OK;
}
/** Whether the open was agreed and failed. */
static inline int fwdioi_file_open_failed(const fwdio_file_t *f)
{
    return f->s.phase >= FWDIOI_PHASE_OPEN && f->s.outcome.open_agreed.status != FWDIO_OK;
}
/** Whether the close agreement started (CLOSING and after, or early,
 *  beside the open's): no step is agreed any more, and the bytes sent to
 *  each writer are counted already. */
static inline int fwdioi_file_closing(const fwdio_file_t *f)
{
    return f->s.phase >= FWDIOI_PHASE_CLOSING || f->s.close_early;
}
/** Whether the file is open and its close agreement has not started: a
 *  step may be agreed. */
static inline int fwdioi_file_in_open_phase(const fwdio_file_t *f)
{
    return f->s.phase == FWDIOI_PHASE_OPEN;
}

#endif
