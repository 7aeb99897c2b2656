/* SPDX-License-Identifier: BSD-3-Clause */
/* The writer side of a session (writer.c, progress thread). */
#ifndef FWDIOI_WRITER_H
#define FWDIOI_WRITER_H

#include "session/role.h"
#include "state.h"

/** The writer as the session drives it (role.h). */
extern const fwdioi_role_ops_t fwdioi_writer_role;

/*
 * The writer's own state is private to writer.c (struct fwdioi_writer, the
 * session's `writer`): other modules use the functions below. A rank that
 * does not write the file (or reads it) has none, and the queries answer
 * as for a writer that has taken nothing.
 */

/** Make the writer side of `f`, a file this rank writes (application
 *  thread, in fwdio_open, before the file is handed to the progress
 *  thread; fwdioi_writer_end frees it). 0, or -1 when out of memory. */
int fwdioi_writer_create(fwdio_file_t *f);
/** The session is over: put the writer's counts in the session's stats
 *  (writer_bytes, writer_copied) and free the writer side, if `f` has one
 *  (progress thread). */
void fwdioi_writer_end(fwdio_file_t *f);
/** Data bytes the writer has taken, from every sender (progress thread). */
uint64_t fwdioi_writer_received(const fwdio_file_t *f);
/** Data bytes the writer has taken from `rank` (progress thread). */
uint64_t fwdioi_writer_received_from(const fwdio_file_t *f, int rank);
/** The ranks the writer has taken data bytes from, ascending, into *ranks
 *  (malloc'd, the caller frees; NULL when none): their number, or -1 when
 *  they are not known (a sender could not be recorded, or no memory). No
 *  writer side: 0 (progress thread). */
int fwdioi_writer_senders(const fwdio_file_t *f, int **ranks);
/** The size of the matched message that waits for writer memory, or -1
 *  when none waits (progress thread). */
int fwdioi_writer_waiting_len(const fwdio_file_t *f);
/** Whether the writer must probe MPI even when only ranks of this node
 *  send: a rank of the node announced a message over MPI, or a matched one
 *  waits for room (progress thread). */
int fwdioi_writer_expects_mpi(const fwdio_file_t *f);
/** A rank of this node announced a message over MPI (progress thread). */
void fwdioi_writer_note_mpi(fwdio_file_t *f);

/** Open the file on the I/O thread, then fwdioi_outcome_opened
 *  (progress thread). */
void fwdioi_writer_open(fwdio_file_t *f);
/** Take the pieces of one message, checked against the plan, then drop the
 *  caller's reference to `hold` (progress thread). `source`: the sending
 *  rank. */
void fwdioi_writer_accept(fwdio_file_t *f, const fwdioi_pieces_view_t *v, fwdioi_hold_t *hold,
                          int source);
/** Once everything announced has arrived: flush, sync, close (progress thread). */
void fwdioi_writer_check_drained(fwdio_file_t *f);
/** Receive what has arrived for the file while memory allows; returns the
 *  receives started (progress thread). */
int fwdioi_writer_probe(fwdio_file_t *f);
/** A stream's first step is agreed, `expected` bytes of it announced to this
 *  writer: once they have all arrived, flush partial units, write (and
 *  sync) them, then fwdioi_outcome_step_data_done (progress thread). */
void fwdioi_writer_drain_step(fwdio_file_t *f, uint64_t expected);
/** A stream's step is complete (or the file aborted): take the messages
 *  kept for the steps now allowed, in arrival order (progress thread). */
void fwdioi_writer_release_deferred(fwdio_file_t *f);
/** A stream with rewrites completed a step: every byte of it is in the file
 *  and none of a later step has been taken, so the record of the bytes taken
 *  is dropped and the next step may write them again (progress thread). */
void fwdioi_writer_forget_step(fwdio_file_t *f);
/** Close the descriptor of an aborted file (a written one, or a read one),
 *  without a sync (progress thread). */
void fwdioi_writer_close_aborted(fwdio_file_t *f);

#endif
