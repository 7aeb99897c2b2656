/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checkpoint calls' small agreements on the fwdio_init communicator:
 * that every rank passed the same arguments (a digest, compared by one
 * MPI_MIN reduction of it and its complement) and that every rank could go
 * on; and rank 0's answers sent to the others.
 */
#ifndef FWDIOI_CKPT_AGREE_H
#define FWDIOI_CKPT_AGREE_H

#include <mpi.h>
#include <stdint.h>

#include "fwdio.h"

/** FNV-1a of the arguments that must be the same on every rank. */
uint64_t fwdioi_ckpt_digest(const char *name, const char *dir, uint64_t version, uint64_t size,
                            unsigned keep);

/** Collective: FWDIO_OK when every rank has `ok` and the same digest,
 *  FWDIO_EINVAL otherwise (rank 0 says which on stderr, naming `call`),
 *  FWDIO_EMPI when the reduction fails. The same on every rank. */
int fwdioi_ckpt_agree(MPI_Comm comm, int ok, uint64_t digest, const char *call);

/** The communicator of the ckpt calls and this rank in it; FWDIO_OK or
 *  FWDIO_EINVAL/FWDIO_EMPI. */
int fwdioi_ckpt_comm(const fwdio_runtime_t *rt, MPI_Comm *comm, int *rank);

#endif
