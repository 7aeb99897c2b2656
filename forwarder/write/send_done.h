/* SPDX-License-Identifier: BSD-3-Clause */
/* A sent message done with (send_done.c): what the sender (an MPI send
 * completed) and the node's data path (the writer gave the message back)
 * both do at the end of one of this rank's messages. */
#ifndef FWDIOI_SEND_DONE_H
#define FWDIOI_SEND_DONE_H

#include "state.h"

/** A sent message is done with (its MPI send completed with `mpi_error`, or
 *  its writer gave it back through the node-shared area: MPI_SUCCESS): free
 *  it and report to the session (outcome.h: a failed send aborts the file;
 *  the last send may let the final agreement start) (progress thread). */
void fwdioi_send_done(fwdioi_msg_t *m, int mpi_error);

#endif
