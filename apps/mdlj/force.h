/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lennard-Jones forces in reduced units (epsilon = sigma = mass = 1), cut at
 * `cutoff`, with cell lists over a rank's region plus one layer of ghost
 * cells.
 *
 * Every owned atom sums its own full neighbour list (each pair is computed
 * once from each side): no forces travel back to ghost owners, and the terms
 * of an atom's force are added in a fixed order (the 27 neighbour cells in
 * order, each cell's atoms by local index), so the force is a function of the
 * positions alone and a restarted run reproduces an uninterrupted one bit for
 * bit.
 */
#ifndef MDLJ_FORCE_H
#define MDLJ_FORCE_H

#include "atoms.h"
#include "domain.h"

#include <stddef.h>

typedef struct md_cells {
    int dim[3];         /* cells per dimension, ghost layers included */
    double origin[3];   /* lower corner of cell (0, 0, 0) */
    double inv_side[3]; /* 1 / cell side */
    size_t ncells;
    size_t *start;      /* atoms of cell c: order[start[c] .. start[c + 1]) */
    size_t *order;      /* local atom indices by cell, ascending within a cell */
    size_t *cell_of;    /* cell of each local atom */
    double *pos;        /* positions in `order` order, for locality */
    size_t atom_cap;
} md_cells_t;

/* Cells for dom's region (at least cutoff wide each). 0, or -1 without memory. */
int cells_init(md_cells_t *cells, const md_domain_t *dom);
void cells_free(md_cells_t *cells);

/*
 * Forces on the owned atoms of `a` from owned and ghost atoms within the
 * cutoff, into a->f. Returns the potential energy of the owned atoms (half of
 * each pair, shifted so that a pair at the cutoff has zero energy), or NAN
 * when memory ran out.
 */
double force_compute(md_cells_t *cells, const md_domain_t *dom, md_atoms_t *a);

#endif
