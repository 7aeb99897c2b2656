/* The sending side of a session (sender.c, progress thread). */
#ifndef FWDIOI_SENDER_H
#define FWDIOI_SENDER_H

#include "file.h"

/** Task: a message from fwdio_write, held until the file is open. */
void fwdioi_msg_task(fwdioi_task_t *task);
/** Send a message to its writer (this rank's own writer: no MPI). */
void fwdioi_sender_dispatch(fwdio_file_t *f, fwdioi_msg_t *m);
/** Drop a message that will never be sent (the file failed): `status` for a
 *  lent buffer's callback. */
void fwdioi_sender_drop(fwdio_file_t *f, fwdioi_msg_t *m, int status);
/** Send the messages whose writer's ring was full, in order, while there is
 *  room (and drop those of files that failed); returns how many went. */
int fwdioi_sender_retry_blocked(struct fwdio_runtime *o);
/** A sent message is done with (its MPI send completed with `mpi_error`, or
 *  its writer gave it back through the node-shared area: MPI_SUCCESS): free
 *  it and move the session on. */
void fwdioi_sender_done(fwdioi_msg_t *m, int mpi_error);

#endif
