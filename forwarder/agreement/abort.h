/* SPDX-License-Identifier: BSD-3-Clause */
/* Aborts (abort.c): telling other ranks of an MPI failure, and hearing of
 * theirs (progress thread). */
#ifndef FWDIOI_ABORT_H
#define FWDIOI_ABORT_H

#include "state.h"

/** Send `why` for file `seq` to every other rank of the runtime
 *  (progress thread). */
void fwdioi_abort_announce(struct fwdio_runtime *o, uint64_t seq, const fwdioi_errinfo_t *why,
                           const fwdioi_step_outcome_t *steps);
/** Send the abort of file `seq`'s drain (node-local tier; the session was
 *  over) to every other rank (progress thread). */
void fwdioi_abort_announce_drain(struct fwdio_runtime *o, uint64_t seq,
                                 const fwdioi_errinfo_t *why);
/** Take the aborts other ranks announced (progress thread); returns how
 *  many arrived. */
int fwdioi_abort_receive(struct fwdio_runtime *o);
/** An abort announced for `seq` (for its drain with `drain`) before this
 *  rank opened it (started its drain), taken (1) or none (0) (progress
 *  thread). */
int fwdioi_abort_take_pending(struct fwdio_runtime *o, uint64_t seq, int drain,
                              fwdioi_errinfo_t *why);
/** Keep receiving and dropping data on `comm` of an aborted file, freed at
 *  finalize unless `kept` (an agreement on it was given up, which MPI may
 *  still progress: left to MPI) (progress thread). */
void fwdioi_zombie_add(struct fwdio_runtime *o, MPI_Comm comm, int kept);
/** Drain the kept communicators (progress thread); returns the receives
 *  started. */
int fwdioi_zombie_drain(struct fwdio_runtime *o, int *active);
/** Receive and drop every message that has arrived on `comm` (an aborted
 *  file's, unclaimed by a receive posted for it) (progress thread); returns
 *  how many. */
int fwdioi_abort_drain(struct fwdio_runtime *o, MPI_Comm comm);
/** Free what abort.c keeps (fwdio_finalize, after the threads stopped). */
void fwdioi_abort_free(struct fwdio_runtime *o);

#endif
