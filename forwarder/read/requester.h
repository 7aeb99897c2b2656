/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reads, the requesting side (requester.c, progress thread unless noted): every
 * fwdio_read of this rank, from the call to its done callback.
 *
 * A read is cut by the plan into one part per reader that owns some of its
 * bytes; each part goes to its reader as one request (FWDIOI_TAG_READ_REQ).
 * The reader answers piece by piece, a piece being the part's bytes within
 * one of its units: first the piece's bytes (FWDIOI_TAG_READ_DATA), then a
 * header that says which piece they are (FWDIOI_TAG_READ_HDR). The requester
 * receives the header, checks it against its own plan and what it asked
 * for, and only then receives the bytes straight into the caller's buffer:
 * no copy (read_wire.h has the messages). Both tags keep MPI's order
 * between two ranks, so the bytes a header announces are the next bytes
 * from its reader; a reader sends them before the header, so a header
 * always has its bytes behind it.
 *
 * A read ends when every byte of it is accounted for (received, or failed
 * at its reader); its callback runs then, and the file completes only after
 * every read of every rank has ended.
 */
#ifndef FWDIOI_REQUESTER_H
#define FWDIOI_REQUESTER_H

#include "read/read_wire.h"
#include "state.h"

/** The requester's state of a file opened for reading (and the reader's,
 *  on a reader): at fwdio_open_read. 0, or -1 without memory. */
int fwdioi_requester_create(fwdio_file_t *f);
/** A fwdio_read call (app thread, runtime lock held): its record, queued for the progress
 *  thread. `buf` may be NULL only for len 0. FWDIO_OK or FWDIO_ENOMEM. */
int fwdioi_requester_submit(fwdio_file_t *f, void *buf, uint64_t len, uint64_t offset,
                        fwdio_read_cb_t done, void *arg);
/** The open is decided: send the reads held until now, or end them with the
 *  open's status (progress thread). */
void fwdioi_requester_open_decided(fwdio_file_t *f);
/** Receive the headers that arrived and the bytes behind them; returns the
 *  receives started (progress thread). */
int fwdioi_requester_probe(fwdio_file_t *f);
/** Whether reads of this rank are still under way, so polls are needed
 *  (progress thread). */
int fwdioi_requester_pending(const fwdio_file_t *f);
/** The file aborted: reads end with its status as soon as nothing of theirs
 *  is in flight (progress thread). */
void fwdioi_requester_abort(fwdio_file_t *f);
/** What the watchdog says of this rank's reads, into `out` (an
 *  open_memstream) (progress thread). */
void fwdioi_requester_report(FILE *out, const fwdio_file_t *f);
/** Free the requester's state at the end of the session (progress thread). */
void fwdioi_requester_free(fwdio_file_t *f);

#endif
