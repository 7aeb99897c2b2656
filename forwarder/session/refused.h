/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A refused fwdio_open keeps its place in the open order (refused.c). A rank
 * that refuses a file at the call (a bad option set in code on this rank
 * only, an environment that differs from rank to rank, out of memory) cannot
 * know that the others refused it too; if it simply returned, the others'
 * file would wait in its communicator duplication and open check for a rank
 * that never comes. So the refusing rank joins that file's collective open
 * with a stand-in: a file with nothing but a session, whose open check
 * carries the refusal (FWDIOI_REASON_REFUSED), so that every rank's file
 * fails the check with it, and which fwdio releases itself once its part is
 * done (the application never got a handle). Later files keep matching: the
 * stand-in takes the sequence number and the communicator the file would
 * have taken.
 */
#ifndef FWDIOI_REFUSED_H
#define FWDIOI_REFUSED_H

#include "state.h"

/**
 * fwdio_open (or fwdio_open_read) refused a file on this rank with `status`:
 * queue the stand-in that takes its place in the open order (application
 * thread, runtime lock not held). 0, or -1 when not even the runtime's spare
 * stand-in was left and none could be allocated (then the other ranks' file
 * waits: said on stderr).
 */
int fwdioi_refused_join(struct fwdio_runtime *rt, int status);

/** Allocate the runtime's spare stand-in (fwdio_init), so that a refusal for
 *  want of memory can still take its place. 0, or -1 without memory. */
int fwdioi_refused_spare_make(struct fwdio_runtime *rt);

/** Free the spare (fwdio_finalize, or a failed fwdio_init). */
void fwdioi_refused_spare_free(struct fwdio_runtime *rt);

#endif
