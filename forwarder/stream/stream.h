/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stream's own state (stream.c): struct fwdioi_stream, the session's
 * `stream`, private to forwarder/stream/ (stream_state.h); steps.c and
 * appends.c do its work (steps.h, appends.h).
 */
#ifndef FWDIOI_STREAM_H
#define FWDIOI_STREAM_H

#include "state.h"

/** Make the stream state of `f`, a stream, its appends starting at
 *  `append_start` (application thread, in fwdio_open, before the file is
 *  handed to the progress thread). 0, or -1 when out of memory. */
int fwdioi_stream_create(fwdio_file_t *f, uint64_t append_start);
/** Free the stream state of `f`, if it has one, with the file (any thread:
 *  the progress thread is done with the file). The buffers of the steps'
 *  scans and counts live as long, as collectives given up may still write
 *  into them after their step is gone. */
void fwdioi_stream_free(fwdio_file_t *f);

/* What the writer and the sender ask of a stream's state: its steps
 * complete, the step its messages belong to (a file that is no stream has
 * none). */
/** Tag one of this rank's messages with the step it belongs to, and count
 *  its bytes for that step, as its task runs (progress thread). */
void fwdioi_steps_tag(fwdio_file_t *f, fwdioi_msg_t *m);
/** A message of this rank could not be sent: take its bytes off its step's
 *  count (progress thread). 0, or -1 when that count was agreed already (the
 *  file must be aborted: a writer waits for the bytes). */
int fwdioi_steps_untag(fwdio_file_t *f, const fwdioi_msg_t *m);
/** Steps complete here (their callbacks delivered) (progress thread). */
uint64_t fwdioi_steps_complete(const fwdio_file_t *f);
/** Whether ranks set commit blocks in the first step, which is being
 *  drained: its bytes must be durable before they are written (progress
 *  thread). */
int fwdioi_steps_head_commits(const fwdio_file_t *f);

#endif
