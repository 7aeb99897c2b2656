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

#endif
