/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ordered appends of a stream (appends.c): fwdio_append copies the bytes and
 * holds them, counted as staged, until the step ends; there a nonblocking
 * exclusive scan of every rank's appended bytes gives each rank its offset
 * (after lower ranks' bytes of the step and everything earlier steps
 * appended), and the copies are routed as lent messages, so they are copied
 * once only.
 */
#ifndef FWDIOI_APPENDS_H
#define FWDIOI_APPENDS_H

#include "state.h"

/** An empty list. */
void fwdioi_append_list_init(fwdioi_append_list_t *l);
/** Move every append of `from` to the end of `to` (from is left empty). */
void fwdioi_append_list_move(fwdioi_append_list_t *to, fwdioi_append_list_t *from);

/** fwdio_append's work (application thread): checks, staging, the copy. */
int fwdioi_append(fwdio_file_t *f, const void *buf, size_t len);

/** Route the appends of `list` to bytes from `offset` on (progress thread):
 *  their messages, tagged with `step` and counted in `sums` per writer
 *  (NULL: bytes after the last step end), are added to `msgs` in order, for
 *  the caller to send. An append that cannot be routed (past the largest
 *  stream, no memory: the session's local error says so) is given back.
 *  The list is left empty. */
void fwdioi_appends_route(fwdio_file_t *f, fwdioi_append_list_t *list, uint64_t offset,
                          uint64_t step, uint64_t *sums, fwdioi_task_list_t *msgs);
/** Drop the appends of `list` (the stream failed): their copies and staging
 *  are given back. Any thread; takes the runtime lock. */
void fwdioi_appends_drop(fwdio_file_t *f, fwdioi_append_list_t *list);

#endif
