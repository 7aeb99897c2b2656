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

/** A step record for `f` (app thread), its callback and task set; NULL
 *  without memory. */
fwdioi_step_t *fwdioi_step_new(fwdio_file_t *f);
/** Free a step that was never queued. */
void fwdioi_step_free(fwdioi_step_t *step);

/** Tag one of this rank's messages with the step it belongs to, and count
 *  its bytes for that step, as its task runs (progress thread). */
void fwdioi_steps_tag(fwdio_file_t *f, fwdioi_msg_t *m);
/** Tag a message with `step` and count its bytes in `sums` per writer (NULL:
 *  not counted there): appended bytes, routed at their scan
 *  (progress thread). */
void fwdioi_steps_tag_as(fwdio_file_t *f, fwdioi_msg_t *m, uint64_t step, uint64_t *sums);
/** A message of this rank could not be sent: take its bytes off its step's
 *  count (progress thread). 0, or -1 when that count was agreed already (the
 *  file must be aborted: a writer waits for the bytes). */
int fwdioi_steps_untag(fwdio_file_t *f, const fwdioi_msg_t *m);
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
/** Whether the tags of an agreement's sums say every rank passed `tag`. */
int fwdioi_steps_tags_agree(const uint64_t *sums, int nwriters, int nranks, uint64_t tag);
/** Fill the tag elements of sums for `tag`. */
void fwdioi_steps_set_tag(uint64_t *sums, int nwriters, uint64_t tag);

#endif
