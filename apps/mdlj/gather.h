/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every rank's atoms in one place: the serial output path and --verify gather
 * a snapshot to rank 0 (MPI_Gatherv), in rank order.
 */
#ifndef MDLJ_GATHER_H
#define MDLJ_GATHER_H

#include "snapshot.h"

#include <mpi.h>

typedef struct md_gathered {
    size_t n;     /* atoms on rank 0; 0 elsewhere */
    int64_t *id;
    double *x;    /* 3 per atom */
    double *v;    /* 3 per atom */
} md_gathered_t;

/*
 * Collective over comm: gather every rank's snapshot to rank 0 into `g`
 * (arrays owned by `g`, reused between calls). Returns 0, or -1 on every rank
 * when rank 0 ran out of memory or the counts do not fit MPI's int.
 */
int gather_snapshot(MPI_Comm comm, const md_snapshot_t *snap, md_gathered_t *g);

void gather_free(md_gathered_t *g);

#endif
