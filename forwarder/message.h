/* Data messages (message.c): making one, finding a piece's bytes, giving it
 * back (any thread). The wire format is in file.h. */
#ifndef FWDIOI_MESSAGE_H
#define FWDIOI_MESSAGE_H

#include "file.h"

/** A message for `writer` of `f` with room for `wire_cap` wire bytes, its
 *  fields zero but the file, writer and task; `staged`: a copy that counts
 *  against the staging budget. NULL without memory. */
fwdioi_msg_t *fwdioi_msg_new(fwdio_file_t *f, int writer, size_t wire_cap, int staged);
/** Pointer to the data of piece `p` of a message (copied or lent). */
const uint8_t *fwdioi_msg_piece_data(const fwdioi_msg_t *m, const fwdioi_piece_t *p,
                                     const uint8_t *packed);
/** Give one message's buffer back (and its staging, and a lent buffer's
 *  callback when its last message goes). */
void fwdioi_msg_free(fwdioi_rt_t *rt, fwdioi_msg_t *m);
/** fwdioi_msg_free for every message of `msgs` (left empty). */
void fwdioi_msgs_free(fwdioi_rt_t *rt, fwdioi_task_list_t *msgs);

#endif
