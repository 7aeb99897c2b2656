/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Spatial decomposition of mdlj's periodic cubic box over a 3-D grid of ranks
 * (MPI_Dims_create). Rank (cx, cy, cz) owns the half-open box
 * [bound(cx), bound(cx+1)) x ... ; an atom's owner is a function of its
 * position only, which is what makes a restarted run place every atom on the
 * rank an uninterrupted run has it on.
 */
#ifndef MDLJ_DOMAIN_H
#define MDLJ_DOMAIN_H

#include <mpi.h>

typedef struct md_domain {
    MPI_Comm cart;   /* periodic Cartesian communicator, same rank numbers as the world */
    int rank, nranks;
    int dims[3];     /* ranks along x, y, z */
    int coords[3];   /* this rank's place in the grid */
    int lower[3];    /* neighbour rank below along each dimension (periodic) */
    int upper[3];    /* neighbour rank above */
    double box;      /* side of the cubic box */
    double cutoff;
    double lo[3];    /* this rank's owned region [lo, hi) */
    double hi[3];
} md_domain_t;

/*
 * Collective over `comm`: build the grid for a box of side `box`. Returns 0,
 * or -1 on every rank (with a message from rank 0) when a rank's region would
 * be thinner than the cutoff or the box shorter than two cutoffs, which the
 * one-hop halo exchange cannot serve.
 */
int domain_create(MPI_Comm comm, double box, double cutoff, md_domain_t *dom);

void domain_destroy(md_domain_t *dom);

/* Lower edge of grid cell `c` along a dimension with `n` cells: bound(n) = box. */
double domain_bound(double box, int n, int c);

/* Grid coordinate owning position `x` (in [0, box)) along a dimension of `n` cells. */
int domain_coord_of(double box, int n, double x);

/* Cartesian rank owning position p[3] (each in [0, box)). */
int domain_owner(const md_domain_t *dom, const double p[3]);

/* Non-zero when this rank owns position p[3] (each in [0, box)). */
int domain_owns(const md_domain_t *dom, const double p[3]);

/* x moved back into [0, box) after leaving it by less than one box length. */
static inline double domain_wrap(double x, double box)
{
    if (x < 0.0)
        x += box;
    if (x >= box)
        x -= box;
    return x;
}

#endif
