/* SPDX-License-Identifier: BSD-3-Clause */
/* Data messages (message.c): making one, finding a piece's bytes, giving it
 * back (any thread). The wire format is in state.h. */
#ifndef FWDIOI_MESSAGE_H
#define FWDIOI_MESSAGE_H

#include "state.h"

/** Marks a message whose buffer is in this rank's node-shared segment. */
#define FWDIOI_MSG_AREA_MAGIC 0x66776d7367617265ull

/**
 * A message for `writer` of `f` with room for `wire_cap` wire bytes, its
 * fields zero but the file and writer (the caller sets its task's run: the
 * sender's fwdioi_msg_task, which message.c does not name); `staged`: a
 * copy that counts against the staging budget. When the writer is another
 * rank of this node, the buffer comes from the node-shared area if it has
 * room (and, for a lent write, only if the lent bytes [lent_buf, lent_buf +
 * lent_len) lie in the area too), so the writer can take it from there.
 * NULL without memory.
 */
fwdioi_msg_t *fwdioi_msg_new(fwdio_file_t *f, int writer, size_t wire_cap, int staged,
                             const void *lent_buf, uint64_t lent_len);
/** Pointer to the data of piece `p` of a message (copied or lent). */
const uint8_t *fwdioi_msg_piece_data(const fwdioi_msg_t *m, const fwdioi_piece_t *p,
                                     const uint8_t *packed);
/** The pieces of a packed wire (header, data, table) of `len` bytes; a
 *  malformed one gets table NULL and the payload its sender could have meant. */
void fwdioi_wire_view(const uint8_t *wire, size_t len, fwdioi_pieces_view_t *v);
/** The pieces of one of this rank's own messages (copied or lent). */
void fwdioi_msg_view(const fwdioi_msg_t *m, fwdioi_pieces_view_t *v);
/** Tag a message with the stream step its bytes belong to: the message's
 *  `step` and its wire header's (mod 2^32). */
void fwdioi_msg_set_step(fwdioi_msg_t *m, uint64_t step);
/** Give one message's buffer back (and its staging, and a lent buffer's
 *  callback when its last message goes). */
void fwdioi_msg_free(fwdioi_engine_t *engine, fwdioi_msg_t *m);
/** fwdioi_msg_free for every message of `msgs` (left empty). */
void fwdioi_msgs_free(fwdioi_engine_t *engine, fwdioi_task_list_t *msgs);

#endif
