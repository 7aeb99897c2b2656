/* SPDX-License-Identifier: BSD-3-Clause */
#include "domain.h"

#include <stdio.h>

double domain_bound(double box, int n, int c)
{
    /* One expression on every rank, so that neighbours agree on the edge bit for bit. */
    return c >= n ? box : box * (double)c / (double)n;
}

int domain_coord_of(double box, int n, double x)
{
    int c = (int)(x / box * (double)n);
    if (c < 0)
        c = 0;
    if (c > n - 1)
        c = n - 1;
    /* The division may round across an edge; settle with the same comparisons
     * migration makes. */
    while (c > 0 && x < domain_bound(box, n, c))
        c--;
    while (c < n - 1 && x >= domain_bound(box, n, c + 1))
        c++;
    return c;
}

int domain_owner(const md_domain_t *dom, const double p[3])
{
    int coords[3];
    for (int d = 0; d < 3; d++)
        coords[d] = domain_coord_of(dom->box, dom->dims[d], p[d]);
    int rank;
    MPI_Cart_rank(dom->cart, coords, &rank);
    return rank;
}

int domain_owns(const md_domain_t *dom, const double p[3])
{
    for (int d = 0; d < 3; d++)
        if (domain_coord_of(dom->box, dom->dims[d], p[d]) != dom->coords[d])
            return 0;
    return 1;
}

int domain_create(MPI_Comm comm, double box, double cutoff, md_domain_t *dom)
{
    *dom = (md_domain_t){.box = box, .cutoff = cutoff, .cart = MPI_COMM_NULL};
    MPI_Comm_rank(comm, &dom->rank);
    MPI_Comm_size(comm, &dom->nranks);
    MPI_Dims_create(dom->nranks, 3, dom->dims);
    double thinnest = box;
    for (int d = 0; d < 3; d++) {
        double w = box / dom->dims[d];
        if (w < thinnest)
            thinnest = w;
    }
    if (thinnest < cutoff || box <= 2.0 * cutoff) {
        if (dom->rank == 0)
            fprintf(stderr,
                    "mdlj: a %d x %d x %d rank grid cuts the box of side %.3f into regions %.3f "
                    "wide, thinner than the cutoff %.3f (or the box is under two cutoffs): use "
                    "more atoms or fewer ranks\n",
                    dom->dims[0], dom->dims[1], dom->dims[2], box, thinnest, cutoff);
        return -1;
    }
    int periodic[3] = {1, 1, 1};
    MPI_Cart_create(comm, 3, dom->dims, periodic, 0, &dom->cart);
    MPI_Comm_rank(dom->cart, &dom->rank);
    MPI_Cart_coords(dom->cart, dom->rank, 3, dom->coords);
    for (int d = 0; d < 3; d++) {
        MPI_Cart_shift(dom->cart, d, 1, &dom->lower[d], &dom->upper[d]);
        dom->lo[d] = domain_bound(box, dom->dims[d], dom->coords[d]);
        dom->hi[d] = domain_bound(box, dom->dims[d], dom->coords[d] + 1);
    }
    return 0;
}

void domain_destroy(md_domain_t *dom)
{
    if (dom->cart != MPI_COMM_NULL)
        MPI_Comm_free(&dom->cart);
}
