/* SPDX-License-Identifier: BSD-3-Clause */
#include "gather.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void gather_free(md_gathered_t *g)
{
    free(g->id);
    free(g->x);
    free(g->v);
    memset(g, 0, sizeof *g);
}

int gather_snapshot(MPI_Comm comm, const md_snapshot_t *snap, md_gathered_t *g)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    int mine = snap->n > (size_t)(INT_MAX / 3) ? -1 : (int)snap->n;
    int *counts = NULL, *displs = NULL, *counts3 = NULL, *displs3 = NULL;
    int ok = 1;
    if (rank == 0) {
        counts = malloc(4 * sizeof(int) * (size_t)nranks);
        ok = counts != NULL;
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    if (rank == 0 && ok) {
        displs = counts + nranks;
        counts3 = counts + 2 * nranks;
        displs3 = counts + 3 * nranks;
        long long total = 0;
        for (int r = 0; r < nranks; r++) {
            if (counts[r] < 0 || 3 * (total + counts[r]) > INT_MAX)
                ok = 0;
            displs[r] = (int)total;
            counts3[r] = 3 * counts[r];
            displs3[r] = 3 * (int)total;
            total += counts[r];
        }
        if (ok) {
            g->n = (size_t)total;
            size_t n = g->n ? g->n : 1;
            int64_t *id = realloc(g->id, n * sizeof *id);
            if (id)
                g->id = id;
            double *x = realloc(g->x, 3 * n * sizeof *x);
            if (x)
                g->x = x;
            double *v = realloc(g->v, 3 * n * sizeof *v);
            if (v)
                g->v = v;
            ok = id && x && v;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok) {
        MPI_Gatherv(snap->id, mine, MPI_INT64_T, g->id, counts, displs, MPI_INT64_T, 0, comm);
        MPI_Gatherv(snap->x, 3 * mine, MPI_DOUBLE, g->x, counts3, displs3, MPI_DOUBLE, 0, comm);
        MPI_Gatherv(snap->v, 3 * mine, MPI_DOUBLE, g->v, counts3, displs3, MPI_DOUBLE, 0, comm);
    }
    free(counts);
    if (rank != 0)
        g->n = 0;
    return ok ? 0 : -1;
}
