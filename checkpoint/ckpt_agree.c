/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_agree.h"

#include <stdio.h>
#include <string.h>

#include "fwdio.h"

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t fwdioi_ckpt_digest(const char *name, const char *dir, uint64_t version, uint64_t size,
                            unsigned keep)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *d = dir && *dir ? dir : ".";
    h = fnv(h, name ? name : "", name ? strlen(name) + 1 : 1);
    h = fnv(h, d, strlen(d) + 1);
    h = fnv(h, &version, sizeof version);
    h = fnv(h, &size, sizeof size);
    return fnv(h, &keep, sizeof keep);
}

int fwdioi_ckpt_agree(MPI_Comm comm, int ok, uint64_t digest, const char *call)
{
    /* min(!ok) is 0 when a rank cannot go on; min(digest) == max(digest)
     * (the complement's min) when every rank passed the same. */
    uint64_t in[3] = {ok ? 1u : 0u, digest, ~digest}, out[3];
    if (MPI_Allreduce(in, out, 3, MPI_UINT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (out[0] == 0) {
        if (rank == 0)
            fprintf(stderr, "fwdio: %s: a rank refused its arguments (it said why)\n", call);
        return FWDIO_EINVAL;
    }
    if (out[1] != ~out[2]) {
        if (rank == 0)
            fprintf(stderr,
                    "fwdio: %s: ranks disagree on the set's name, dir, version, size or keep\n",
                    call);
        return FWDIO_EINVAL;
    }
    return FWDIO_OK;
}

int fwdioi_ckpt_comm(const fwdio_runtime_t *rt, MPI_Comm *comm, int *rank)
{
    int rc = fwdio_runtime_comm(rt, comm);
    if (rc != FWDIO_OK)
        return rc;
    return MPI_Comm_rank(*comm, rank) == MPI_SUCCESS ? FWDIO_OK : FWDIO_EMPI;
}
