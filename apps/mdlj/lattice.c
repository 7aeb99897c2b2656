/* SPDX-License-Identifier: BSD-3-Clause */
#include "lattice.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>

/* Site offsets inside an FCC unit cell, in units of the cell side (the
 * conventional basis). Where rank regions meet on a lattice plane, the atoms
 * of that plane start on the edge and half of them migrate in the first steps. */
static const double fcc_basis[4][3] = {{0.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.5, 0.0, 0.5}, {0.0, 0.5, 0.5}};

double lattice_box_side(int64_t natoms, double density)
{
    return cbrt((double)natoms / density);
}

int lattice_create(md_lattice_t *lat, int64_t natoms, double density)
{
    int cells = (int)ceil(cbrt((double)natoms / 4.0));
    while (4 * (int64_t)cells * cells * cells < natoms)
        cells++;
    lat->natoms = natoms;
    lat->cells = cells;
    lat->sites = 4 * (int64_t)cells * cells * cells;
    lat->box = lattice_box_side(natoms, density);
    lat->spacing = lat->box / cells;
    lat->cell_xyz = malloc(3 * sizeof(int32_t) * (size_t)cells * cells * cells);
    if (!lat->cell_xyz)
        return -1;
    int bits = 0;
    while ((1 << bits) < cells)
        bits++;
    /* Walk the Z-order curve of the enclosing power-of-two cube and keep the
     * cells inside the box: x takes bits 0, 3, 6, ..., y 1, 4, ..., z 2, 5, ... */
    int64_t k = 0;
    for (uint64_t code = 0; code < (uint64_t)1 << (3 * bits); code++) {
        int32_t c[3] = {0, 0, 0};
        for (int b = 0; b < bits; b++)
            for (int d = 0; d < 3; d++)
                c[d] |= (int32_t)((code >> (3 * b + d)) & 1u) << b;
        if (c[0] >= cells || c[1] >= cells || c[2] >= cells)
            continue;
        for (int d = 0; d < 3; d++)
            lat->cell_xyz[3 * k + d] = c[d];
        k++;
    }
    return 0;
}

void lattice_destroy(md_lattice_t *lat)
{
    free(lat->cell_xyz);
    lat->cell_xyz = NULL;
}

void lattice_position(const md_lattice_t *lat, int64_t k, double out[3])
{
    /* Spread the atoms over the sites: k * sites fits in 64 bits for any
     * atom count a DCD file can hold. */
    int64_t site = (int64_t)(((uint64_t)k * (uint64_t)lat->sites) / (uint64_t)lat->natoms);
    int64_t cell = site / 4;
    const double *basis = fcc_basis[site % 4];
    for (int d = 0; d < 3; d++)
        out[d] = domain_wrap(((double)lat->cell_xyz[3 * cell + d] + basis[d]) * lat->spacing, lat->box);
}

static void raw_velocity(uint64_t seed, int64_t k, double v[3])
{
    for (int d = 0; d < 3; d++)
        v[d] = rng_gaussian(seed, (uint64_t)k, (uint64_t)d);
}

int lattice_fill(const md_lattice_t *lat, uint64_t seed, double temperature,
                 const md_domain_t *dom, md_atoms_t *atoms)
{
    int64_t n = lat->natoms;
    int64_t *first_id = calloc((size_t)dom->nranks + 1, sizeof *first_id);
    if (!first_id)
        return -1;
    /* Pass 1, in site order on every rank (so every rank gets the same bits):
     * total momentum, and how many atoms each rank owns. */
    double p[3] = {0, 0, 0};
    for (int64_t k = 0; k < n; k++) {
        double v[3], x[3];
        raw_velocity(seed, k, v);
        for (int d = 0; d < 3; d++)
            p[d] += v[d];
        lattice_position(lat, k, x);
        first_id[domain_owner(dom, x) + 1]++;
    }
    for (int r = 0; r < dom->nranks; r++)
        first_id[r + 1] += first_id[r];
    for (int d = 0; d < 3; d++)
        p[d] /= (double)n;
    /* Pass 2: kinetic energy after the shift (unit masses), 3N - 3 degrees of freedom. */
    double sum_v2 = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double v[3];
        raw_velocity(seed, k, v);
        for (int d = 0; d < 3; d++)
            sum_v2 += (v[d] - p[d]) * (v[d] - p[d]);
    }
    double dof = n > 1 ? 3.0 * (double)(n - 1) : 3.0;
    double scale = sum_v2 > 0.0 ? sqrt(temperature * dof / sum_v2) : 0.0;
    /* Pass 3: keep this rank's atoms, numbered from its first id on. */
    int64_t next_id = first_id[dom->rank];
    free(first_id);
    atoms->n = 0;
    for (int64_t k = 0; k < n; k++) {
        double x[3];
        lattice_position(lat, k, x);
        if (!domain_owns(dom, x))
            continue;
        double v[3];
        raw_velocity(seed, k, v);
        for (int d = 0; d < 3; d++)
            v[d] = (v[d] - p[d]) * scale;
        if (atoms_push(atoms, next_id++, x, v))
            return -1;
    }
    return 0;
}
