/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared path (progress thread): a message for a writer on this rank's
 * node is not sent over MPI. Its buffer was cut from this rank's segment of
 * the node-shared area (message.c), so the sender pushes a small entry naming
 * it onto the writer's ring (node_area.h); the writer checks it against its
 * own plan like any message, assembles and pwrites straight from the sender's
 * memory, and when the last write from it is done pushes a release back, upon
 * which the sender frees the message as if its MPI send had completed. Both
 * sides sleep in between: the entries come with a doorbell.
 */
#ifndef FWDIOI_SHARED_PATH_H
#define FWDIOI_SHARED_PATH_H

#include "state.h"

/** Hand `m` (m->area_to >= 0) to its writer through the area (progress
 *  thread): 0, or -1 when its ring is full (then it goes over MPI like any
 *  other). */
int fwdioi_shared_send(fwdio_file_t *f, fwdioi_msg_t *m);

/** Tell the writer on local rank `to` that `m` comes over MPI, not in the
 *  area (progress thread): 0, or -1 when the writer's ring is full. */
int fwdioi_shared_note(fwdio_file_t *f, const fwdioi_msg_t *m, int to);

/** Take what this node's other ranks pushed to this rank: what waited, then
 *  messages for its writers, and its own messages given back (progress
 *  thread). Returns how many entries it handled. The messages blocked by a
 *  full ring are the sender's to retry then (fwdioi_sender_retry_blocked),
 *  before fwdioi_shared_settle. */
int fwdioi_shared_poll(struct fwdio_runtime *o);
/** After a poll and the sender's retry: whether entries or messages still
 *  wait (poll again); notes whether the area keeps idle chunks (progress
 *  thread). */
int fwdioi_shared_settle(struct fwdio_runtime *o);

/** A peer's message held by `h` is done with (its last write finished, or
 *  the file dropped it): give it back to its sender (progress thread). */
void fwdioi_shared_release(struct fwdio_runtime *o, fwdioi_hold_t *h);

#endif
