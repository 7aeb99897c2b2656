/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators kept for later files (comm_pool.c), by fwdio's files
 * (forwarder/session/session.c, "Communicators for files") and by the MPI-IO
 * layer's (mpiio/files.c). A file's collectives and messages run on a
 * communicator of its own, and making one (MPI_Comm_dup, MPI_Comm_idup)
 * costs several rounds of MPI progress. A file that ended well on this rank gives its communicator back
 * to the runtime's pool instead of freeing it, and a later file takes one
 * from there; which one is agreed in a single reduction, so that every rank
 * pairs the same communicators:
 *
 * - Slots are numbered; a slot is made when the ranks agree that no slot is
 *   free on all of them (the k-th such agreement makes the same slot on every
 *   rank, so `made` is the same everywhere) and the file then duplicates
 *   the runtime's communicator into it.
 * - Each rank offers the slots whose communicator it holds idle
 *   (fwdioi_comm_pool_offer); the bitwise AND over the ranks is what every
 *   rank may take, and every rank takes its lowest bit (fwdioi_comm_pool_take).
 * - A file that failed, was aborted or whose communicator the drain took
 *   never gives it back: its slot stays made and is never offered again on
 *   this rank (a message sent for it could still be waiting), so no rank
 *   takes it any more; the other ranks keep theirs idle until fwdio_finalize.
 *
 * Pure bookkeeping: no MPI calls (the callers make them), and no lock: each
 * pool has one owner thread at a time (fwdio's progress thread; the layer's
 * open and close under its lock).
 */
#ifndef FWDIOI_COMM_POOL_H
#define FWDIOI_COMM_POOL_H

#include <mpi.h>
#include <stdint.h>

/** Slots of the pool (one bit each in an offer). */
#define FWDIOI_COMM_POOL_SLOTS 64

typedef struct fwdioi_comm_pool {
    MPI_Comm comm[FWDIOI_COMM_POOL_SLOTS]; /* a slot's communicator while idle */
    uint64_t made; /* slots made, the same on every rank */
    uint64_t idle; /* slots whose communicator this rank holds idle */
} fwdioi_comm_pool_t;

/** An empty pool. */
void fwdioi_comm_pool_init(fwdioi_comm_pool_t *p);

/** The slots this rank offers for the next file: those it holds idle. */
uint64_t fwdioi_comm_pool_offer(const fwdioi_comm_pool_t *p);

/**
 * Take the slot the ranks agreed on (`agreed`, the AND of their offers):
 * its lowest bit. Returns the slot with *comm set, or -1 when `agreed` is 0
 * (no slot idle on every rank) or names a slot this rank did not offer (an
 * AND of offers never does: then *comm is MPI_COMM_NULL and the caller
 * treats it as a failed agreement).
 */
int fwdioi_comm_pool_take(fwdioi_comm_pool_t *p, uint64_t agreed, MPI_Comm *comm);

/** A new slot for a communicator about to be duplicated (after an agreed 0),
 *  or -1 when every slot is made (that file's communicator is then freed at
 *  its end, not kept). */
int fwdioi_comm_pool_make(fwdioi_comm_pool_t *p);

/** Take every idle slot out of the offers of other callers, for one open
 *  that agrees with other ranks without holding a lock meanwhile (the MPI-IO
 *  layer's, where another thread may open a file at the same time): returns
 *  them; fwdioi_comm_pool_unreserve gives them back before the take. */
uint64_t fwdioi_comm_pool_reserve(fwdioi_comm_pool_t *p);
void fwdioi_comm_pool_unreserve(fwdioi_comm_pool_t *p, uint64_t reserved);

/** Give slot `slot`'s communicator back, idle (a file that ended well). */
void fwdioi_comm_pool_give(fwdioi_comm_pool_t *p, int slot, MPI_Comm comm);

/** Hand every idle communicator to `release` (fwdio_finalize) and empty the
 *  pool. */
void fwdioi_comm_pool_drain(fwdioi_comm_pool_t *p, void (*release)(MPI_Comm *comm));

#endif
