/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A datatype's constructor and arguments (type_contents.h), read with
 * MPI 4's MPI_Count envelope and contents calls where the MPI has them: MPI
 * 4's MPI_Count constructors (MPI_Type_contiguous_c and the rest) keep their
 * counts and displacements in the contents' large-counts array, and MPICH
 * refuses the int-count MPI_Type_get_envelope for a type so made (an error
 * that is fatal under the default handler). The arguments come back in the
 * int-count constructors' layout either way.
 */
#include "type_contents.h"

#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
int mpiio_type_combiner(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int combiner = -1;
    if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner) != MPI_SUCCESS)
        return -1;
    return combiner;
}
#else
int mpiio_type_combiner(MPI_Datatype t)
{
    int ni, na, nd, combiner = -1;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return -1;
    return combiner;
}
#endif

void mpiio_type_contents_free(mpiio_type_contents_t *c)
{
    for (int64_t i = 0; c->types && i < c->ntypes; i++)
        if (mpiio_type_combiner(c->types[i]) != MPI_COMBINER_NAMED)
            PMPI_Type_free(&c->types[i]);
    free(c->ints);
    free(c->addrs);
    free(c->types);
    memset(c, 0, sizeof *c);
}

/* Room for the arguments: nints integers, naddrs addresses, ntypes types
 * (one more of each, so that none is a zero-sized allocation). */
static int make_room(mpiio_type_contents_t *c, int64_t nints, int64_t naddrs, int64_t ntypes)
{
    c->ints = calloc((size_t)nints + 1, sizeof *c->ints);
    c->addrs = calloc((size_t)naddrs + 1, sizeof *c->addrs);
    c->types = calloc((size_t)ntypes + 1, sizeof *c->types);
    c->nints = nints;
    c->naddrs = naddrs;
    return c->ints && c->addrs && c->types ? 0 : -1;
}

#if MPI_VERSION >= 4
/* A type an MPI_Count constructor made: its large counts `lc` (nc of them)
 * and integers `in` moved into the int-count constructor's layout. */
static void from_large(mpiio_type_contents_t *c, const int *in, const MPI_Count *lc,
                       int64_t nc)
{
    int64_t n = nc > 0 ? (int64_t)lc[0] : 0;
    switch (c->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:       /* count, blocklength, stride */
    case MPI_COMBINER_INDEXED:      /* count, blocklengths, displacements */
    case MPI_COMBINER_INDEXED_BLOCK: /* count, blocklength, displacements */
        for (int64_t i = 0; i < nc; i++)
            c->ints[i] = (int64_t)lc[i];
        break;
    case MPI_COMBINER_HVECTOR: /* count, blocklength; stride */
        c->ints[0] = (int64_t)lc[0];
        c->ints[1] = (int64_t)lc[1];
        c->addrs[0] = (int64_t)lc[2];
        break;
    case MPI_COMBINER_HINDEXED: /* count, blocklengths; displacements */
    case MPI_COMBINER_STRUCT:
        for (int64_t i = 0; i <= n; i++)
            c->ints[i] = (int64_t)lc[i];
        for (int64_t i = 0; i < n; i++)
            c->addrs[i] = (int64_t)lc[n + 1 + i];
        break;
    case MPI_COMBINER_HINDEXED_BLOCK: /* count, blocklength; displacements */
        c->ints[0] = (int64_t)lc[0];
        c->ints[1] = (int64_t)lc[1];
        for (int64_t i = 0; i < n; i++)
            c->addrs[i] = (int64_t)lc[2 + i];
        break;
    case MPI_COMBINER_SUBARRAY: { /* ndims, sizes, subsizes, starts, order */
        int64_t nd = in[0];
        c->ints[0] = nd;
        for (int64_t i = 0; i < 3 * nd; i++)
            c->ints[1 + i] = (int64_t)lc[i];
        c->ints[1 + 3 * nd] = in[1];
        break;
    }
    case MPI_COMBINER_RESIZED: /* lb, extent */
        c->addrs[0] = (int64_t)lc[0];
        c->addrs[1] = (int64_t)lc[1];
        break;
    default: /* darray and the rest: not flattened (view.c says why) */
        break;
    }
}
#endif

int mpiio_type_contents(MPI_Datatype t, mpiio_type_contents_t *c)
{
    memset(c, 0, sizeof *c);
#if MPI_VERSION >= 4
    MPI_Count ni, na, nc, nd;
    if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &c->combiner) != MPI_SUCCESS)
        return -1;
    if (c->combiner == MPI_COMBINER_NAMED)
        return 0;
    int *in = malloc(((size_t)ni + 1) * sizeof *in);
    MPI_Aint *ad = malloc(((size_t)na + 1) * sizeof *ad);
    MPI_Count *lc = malloc(((size_t)nc + 1) * sizeof *lc);
    /* the int-count layout needs at most ni + nc integers, na + nc addresses */
    int rc = in && ad && lc && make_room(c, ni + nc, na + nc, nd) == 0 ? 0 : -1;
    if (rc == 0 && PMPI_Type_get_contents_c(t, ni, na, nc, nd, in, ad, lc, c->types) != MPI_SUCCESS)
        rc = -1;
    if (rc == 0) {
        c->ntypes = nd;
        if (nc == 0) { /* an int-count constructor's */
            for (MPI_Count i = 0; i < ni; i++)
                c->ints[i] = in[i];
            for (MPI_Count i = 0; i < na; i++)
                c->addrs[i] = (int64_t)ad[i];
        } else {
            from_large(c, in, lc, (int64_t)nc);
        }
    }
    free(in);
    free(ad);
    free(lc);
#else
    int ni, na, nd;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &c->combiner) != MPI_SUCCESS)
        return -1;
    if (c->combiner == MPI_COMBINER_NAMED)
        return 0;
    int *in = malloc(((size_t)ni + 1) * sizeof *in);
    MPI_Aint *ad = malloc(((size_t)na + 1) * sizeof *ad);
    int rc = in && ad && make_room(c, ni, na, nd) == 0 ? 0 : -1;
    if (rc == 0 && PMPI_Type_get_contents(t, ni, na, nd, in, ad, c->types) != MPI_SUCCESS)
        rc = -1;
    if (rc == 0) {
        c->ntypes = nd;
        for (int i = 0; i < ni; i++)
            c->ints[i] = in[i];
        for (int i = 0; i < na; i++)
            c->addrs[i] = (int64_t)ad[i];
    }
    free(in);
    free(ad);
#endif
    if (rc != 0)
        mpiio_type_contents_free(c);
    return rc;
}
