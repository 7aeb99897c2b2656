/*
 * mdlj's initial state: an FCC lattice filling a cubic box at the requested
 * density, and Maxwell-Boltzmann velocities from a counter-based generator
 * keyed by (seed, atom id), shifted to zero total momentum and scaled to the
 * requested temperature exactly.
 *
 * The box holds C^3 unit cells of 4 sites, C = ceil(cbrt(N / 4)). When N is
 * not 4 C^3 the atoms take N of the 4 C^3 sites spread evenly (site
 * floor(i * sites / N) for atom i), leaving scattered vacancies. Cells are
 * numbered along a Z-order (Morton) curve, so atoms near each other in space
 * have near ids, as in MD codes that sort atoms spatially: a rank's atoms
 * form a few long runs of consecutive ids, and it writes each run of a
 * trajectory frame or checkpoint with one call.
 *
 * Everything is computed in id order on every rank from the seed alone, so
 * the initial state does not depend on the number of ranks.
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

/* Position of atom `id` (in [0, box)). */
void lattice_position(const md_lattice_t *lat, int64_t id, double out[3]);

/*
 * Fill `atoms` with the atoms this rank owns (ids ascending), with velocities
 * at `temperature`. Returns 0, or -1 when out of memory.
 */
int lattice_fill(const md_lattice_t *lat, uint64_t seed, double temperature,
                 const md_domain_t *dom, md_atoms_t *atoms);

#endif
