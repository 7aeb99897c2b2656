/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reads, the reader's side (reader.c, progress thread): a writer of the
 * plan, for a file opened with fwdio_open_read, takes the requests of every
 * rank, cuts them at its units, reads each unit whole from its I/O thread
 * (pread, in the order the units were first wanted) and answers every piece
 * from the unit's buffer (read_wire.h has the messages, requester.h the
 * exchange). A unit stays in memory
 * while pieces wait for it or are being sent, and after that while
 * writer_buffer has room, so a unit wanted by several ranks is read once;
 * a unit needed when the budget is full waits, and idle units of any read
 * file make room first.
 */
#ifndef FWDIOI_READER_H
#define FWDIOI_READER_H

#include "session/role.h"
#include "state.h"

#include <stdio.h>

/** The reader's state (at fwdio_open_read). 0, or -1 without memory. */
int fwdioi_reader_create(fwdio_file_t *f);
/** The reader as the session drives it (role.h). */
extern const fwdioi_role_ops_t fwdioi_reader_role;
/** Open the file on the I/O thread: its size goes into the open's status
 *  then fwdioi_outcome_opened (progress thread). */
void fwdioi_reader_open(fwdio_file_t *f);
/** Take the requests that arrived (while the number of pieces waiting stays
 *  bounded) (progress thread); returns the receives started. */
int fwdioi_reader_probe(fwdio_file_t *f);
/** Whether the reader has work under way or may still get requests
 *  (progress thread). */
int fwdioi_reader_busy(const fwdio_file_t *f);
/** Once the close is agreed: whether every request announced was answered
 *  and the file is closed, starting the close when it is due
 *  (progress thread). */
int fwdioi_reader_done(fwdio_file_t *f);
/** The file aborted: close its descriptor (no sync), now, or once the
 *  preads in flight on the I/O pool are done (progress thread). */
void fwdioi_reader_close_aborted(fwdio_file_t *f);
/** The file aborted: forget the waiting pieces, free what is idle
 *  (progress thread). */
void fwdioi_reader_abort(fwdio_file_t *f);
/** Free idle units of every read file of the runtime until `need` more
 *  bytes fit in writer_buffer (or none is left); for writers too
 *  (progress thread). */
void fwdioi_reader_make_room(struct fwdio_runtime *o, uint64_t need);
/** What the watchdog says of the reader (progress thread). */
void fwdioi_reader_report(FILE *out, const fwdio_file_t *f);
/** Free the reader's state (progress thread): no job or send of it may be
 *  in flight. */
void fwdioi_reader_free(fwdio_file_t *f);

#endif
