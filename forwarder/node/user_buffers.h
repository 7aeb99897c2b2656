/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffers the application fills in place (fwdio_alloc / fwdio_release): cut
 * from this rank's heap in the node-shared area when it has room, so that a
 * writer on the node writes a lent write from them without any copy, else
 * ordinary memory. Every live buffer is registered, so that a release of
 * anything else, or of a buffer still lent to a write in flight, is a clear
 * error rather than a corrupted heap. Any thread (a lock of its own).
 */
#ifndef FWDIOI_USER_BUFFERS_H
#define FWDIOI_USER_BUFFERS_H

#include "state.h"

/** The registry of a runtime (at init); 0, or -1 without memory. */
int fwdioi_buffers_create(struct fwdio_runtime *o);
/** Free every buffer still allocated and the registry (at finalize, before the
 *  area goes). */
void fwdioi_buffers_destroy(struct fwdio_runtime *o);

/** A lent write of [buf, buf + len) starts: if buf lies in a live buffer, the
 *  buffer counts one more write in flight. FWDIO_OK, or FWDIO_EINVAL when the
 *  bytes start in a buffer and run past its end. *start: the buffer, or NULL. */
int fwdioi_buffers_lend(struct fwdio_runtime *o, const void *buf, uint64_t len, void **start);
/** That lent write is done (start from fwdioi_buffers_lend, non-NULL). */
void fwdioi_buffers_unlend(struct fwdio_runtime *o, void *start);

/** Bytes of live buffers now, in the area and outside it. */
void fwdioi_buffers_usage(struct fwdio_runtime *o, uint64_t *in_area, uint64_t *other);

#endif
