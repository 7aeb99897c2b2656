/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams (steps.c): files opened with FWDIO_SIZE_GROWS whose bytes come in
 * steps. fwdio_step_end queues a step record; on the progress thread every
 * message is tagged with the step it belongs to, and the steps are agreed
 * and completed one after the other:
 *
 *   counts (MPI_Iallreduce: bytes per writer, who commits, the tag)
 *   -> writers drain the step, flush partial units, sync if durable or a
 *      commit follows
 *   -> final (MPI_Iallreduce of the status)
 *   -> [commit block written and synced by its rank; its status agreed]
 *   -> the step callback.
 *
 * A step that fails fails the stream: later steps fail alike without
 * agreements (every rank knows), and writes are refused. The close agreement
 * waits until every step ended here is complete.
 */
#ifndef FWDIOI_STEPS_H
#define FWDIOI_STEPS_H

#include "state.h"

/** The tag every rank passes with the close agreement (steps use 1..2^20). */
#define FWDIOI_CLOSE_TAG ((uint64_t)1 << 20 | 1)

/* One step of a stream: ended by fwdio_step_end on this rank, agreed and
 * completed in order by the progress thread (steps.c), reported by its
 * callback. */
typedef struct fwdioi_step {
    fwdioi_task_t task; /* first: fwdio_step_end queues it for the progress thread */
    fwdioi_call_t call; /* the step callback */
    fwdio_file_t *file;
    uint64_t index;
    int status;
    fwdioi_commit_set_t commit; /* the blocks set during the step on this rank */
    fwdioi_append_list_t appends; /* this rank's fwdio_append calls of the step */
    STAILQ_ENTRY(fwdioi_step) link; /* in the stream's `steps` (progress) */
    /* the step's scan and counts (progress): this rank's appended bytes and
     * the lower ranks' (the scan), who commits, and whether they are agreed */
    int committers, committer;
    uint64_t committer_ranks; /* the sum of the ranks that set a block */
    int counted;
    /* the buffers of its scan and counts, in the stream's slot index % 2
     * while they run (steps.c: an abandoned collective may still write into
     * them after the step is gone) */
    uint64_t *in, *out, *append_mine, *append_prefix;
    /* [nwriters + FWDIOI_CLOSE_EXTRA]: this rank's bytes of the step per
     * writer, then the commit and tag elements (copied into `in` when its
     * counting starts) */
    uint64_t sums[];
} fwdioi_step_t;

/*
 * The stream's own state is private to forwarder/stream/ (struct
 * fwdioi_stream, the session's `stream`; stream.h makes and frees it). Other
 * modules use the functions below; for a file that is no stream they answer
 * as for a stream with no step ended.
 */

/** A step record for `f` (app thread), its callback and task set; NULL
 *  without memory. */
fwdioi_step_t *fwdioi_step_new(fwdio_file_t *f);
/** Free a step that was never queued. */
void fwdioi_step_free(fwdioi_step_t *step);

/** Start the next step's agreements when the file is open and none is under
 *  way; fail steps at once after a failure; start the close once no step is
 *  left (progress thread). */
void fwdioi_steps_pump(fwdio_file_t *f);
/** Whether steps ended here are not complete yet (progress thread). */
int fwdioi_steps_pending(const fwdio_file_t *f);
/** This rank is done with the first step's data (as a writer: drained,
 *  flushed and synced): agree on its status (progress thread). */
void fwdioi_steps_data_done(fwdio_file_t *f);
/** Complete every step not complete yet with `why`, at an abort or the end
 *  of the session (progress thread). */
void fwdioi_steps_fail_all(fwdio_file_t *f, const fwdioi_errinfo_t *why);
/** The session is over with `final`: every step not complete yet completes
 *  with it, and appends never sent are given back (progress thread). */
void fwdioi_steps_end(fwdio_file_t *f, const fwdioi_errinfo_t *final);

/** How this rank's steps ended, announced with its abort (progress thread). */
void fwdioi_steps_outcome(const fwdio_file_t *f, fwdioi_step_outcome_t *out);
/** Another rank aborted the file with its steps ended as `o`: the steps it
 *  completed keep their status here too (the first one heard counts)
 *  (progress thread). */
void fwdioi_steps_abort_heard(fwdio_file_t *f, const fwdioi_step_outcome_t *o);
/** MPI call `call` failed with `why`: when it is the next step's scan or
 *  counts while the first step's status is being agreed (every rank takes
 *  part in that one), keep the abort until it is done and return 1; else 0:
 *  abort now (progress thread). */
int fwdioi_steps_defer_abort(fwdio_file_t *f, int call, const fwdioi_errinfo_t *why);

/** Before the close agreement: a stream's bytes appended after its last
 *  step end get their offsets (an exclusive scan every rank runs), then
 *  are sent, and fwdioi_outcome_try_close is called again. 1 when the close
 *  may be agreed (the scan is done, or the file is no stream), 0 while the
 *  scan runs (it is started by the first call) (progress thread). */
int fwdioi_steps_close_scanned(fwdio_file_t *f);
/** The bytes this rank appended after its last step end (the close
 *  agreement sums them) (progress thread). */
uint64_t fwdioi_steps_close_appended(const fwdio_file_t *f);

/** Whether the tags of an agreement's sums say every rank passed `tag`. */
int fwdioi_steps_tags_agree(const uint64_t *sums, int nwriters, int nranks, uint64_t tag);
/** Fill the tag elements of sums for `tag`. */
void fwdioi_steps_set_tag(uint64_t *sums, int nwriters, uint64_t tag);

#endif
