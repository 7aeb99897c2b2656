/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdlj's initial state: an FCC lattice filling a cubic box at the requested
 * density, and Maxwell-Boltzmann velocities from a counter-based generator
 * keyed by (seed, lattice site), shifted to zero total momentum and scaled
 * to the requested temperature exactly.
 *
 * The box holds C^3 unit cells of 4 sites, C = ceil(cbrt(N / 4)). When N is
 * not 4 C^3 the atoms take N of the 4 C^3 sites spread evenly (the k-th
 * atom site is floor(k * sites / N)), leaving scattered vacancies. Cells are
 * visited along a Z-order (Morton) curve. The positions and velocities, as a
 * set, are the same for any number of ranks.
 *
 * Atom ids are handed out per rank, as LAMMPS's create_atoms does: rank 0's
 * atoms get ids 0 .. n0 - 1 in Z-order, rank 1's the next n1, and so on. So
 * each rank starts with one run of consecutive ids and writes each array of a
 * trajectory frame or checkpoint with one call; atoms that migrate later
 * split runs one by one. Ids, and so a trajectory's atom order, depend on
 * the rank count.
 */
#ifndef MDLJ_LATTICE_H
#define MDLJ_LATTICE_H

#include "atoms.h"
#include "domain.h"

#include <stdint.h>

typedef struct md_lattice {
    int64_t natoms;
    int64_t sites;     /* 4 * cells^3 >= natoms */
    int cells;         /* unit cells per side */
    double box;        /* side of the box */
    double spacing;    /* side of a unit cell */
    int32_t *cell_xyz; /* 3 coordinates of each cell, in Z-order */
} md_lattice_t;

/* Side of the cubic box that holds `natoms` at `density`. */
double lattice_box_side(int64_t natoms, double density);

/* Plan the lattice. Returns 0, or -1 when out of memory. */
int lattice_create(md_lattice_t *lat, int64_t natoms, double density);
void lattice_destroy(md_lattice_t *lat);

/* Position of the k-th occupied site (in [0, box)), k < natoms. */
void lattice_position(const md_lattice_t *lat, int64_t k, double out[3]);

/*
 * Collective over dom->cart: fill `atoms` with the atoms this rank owns (ids
 * ascending, numbered per rank as above), with velocities at `temperature`.
 * Returns 0, or -1 when out of memory.
 */
int lattice_fill(const md_lattice_t *lat, uint64_t seed, double temperature,
                 const md_domain_t *dom, md_atoms_t *atoms);

#endif
