/* SPDX-License-Identifier: BSD-3-Clause */
/* Sending a small message along the relay tree (relay_send.c): what aborts
 * (abort.c) and the wakes of dormant files (session/dormant.c) travel on,
 * on the runtime's communicator (progress thread). */
#ifndef FWDIOI_RELAY_SEND_H
#define FWDIOI_RELAY_SEND_H

#include "state.h"

/** The most int64 words a relayed message carries. */
#define FWDIOI_RELAY_INTS_MAX 64

/** Send the `n` words of `msg` with `tag` to this rank's neighbours in the
 *  relay tree (relay_tree.h) but `except` (-1: to all of them); `what` names
 *  the news in the warning printed when a send cannot be posted (the news
 *  then stops there) (progress thread). */
void fwdioi_relay_send(struct fwdio_runtime *o, const int64_t *msg, int n, int tag, int except,
                       const char *what);

#endif
