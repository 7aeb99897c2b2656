/* SPDX-License-Identifier: BSD-3-Clause */
/* The sending side of a session (sender.c, progress thread). */
#ifndef FWDIOI_SENDER_H
#define FWDIOI_SENDER_H

#include "state.h"

/** Task: a message from fwdio_write, held until the file is open
 *  (progress thread). */
void fwdioi_msg_task(fwdioi_task_t *task);
/** Send a message to its writer, without MPI to this rank's own writer
 *  (progress thread). */
void fwdioi_sender_dispatch(fwdio_file_t *f, fwdioi_msg_t *m);
/** Send a message once its turn has come: held while the file is not open,
 *  and, in a stream with rewrites, while a step before the message's is not
 *  complete here, until fwdioi_sender_release_held sends it
 *  (progress thread). */
void fwdioi_sender_send(fwdio_file_t *f, fwdioi_msg_t *m);
/** Send the held messages whose turn has come, in order, or drop them all
 *  when the file failed to open (progress thread). */
void fwdioi_sender_release_held(fwdio_file_t *f);
/** Drop a message that will never be sent (the file failed): `status` for a
 *  lent buffer's callback (progress thread). */
void fwdioi_sender_drop(fwdio_file_t *f, fwdioi_msg_t *m, int status);
/** Send the messages whose writer's ring was full, in order, while there is
 *  room (and drop those of files that failed) (progress thread); returns
 *  how many went. */
int fwdioi_sender_retry_blocked(struct fwdio_runtime *o);

#endif
