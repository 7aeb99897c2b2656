/* SPDX-License-Identifier: BSD-3-Clause */
#include "force.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cells_init(md_cells_t *cells, const md_domain_t *dom)
{
    memset(cells, 0, sizeof *cells);
    cells->ncells = 1;
    for (int d = 0; d < 3; d++) {
        double width = dom->hi[d] - dom->lo[d];
        int inner = (int)(width / dom->cutoff);
        if (inner < 1)
            inner = 1;
        double side = width / inner;
        cells->dim[d] = inner + 2;
        cells->origin[d] = dom->lo[d] - side;
        cells->inv_side[d] = 1.0 / side;
        cells->ncells *= (size_t)cells->dim[d];
    }
    cells->start = calloc(cells->ncells + 1, sizeof *cells->start);
    return cells->start ? 0 : -1;
}

void cells_free(md_cells_t *cells)
{
    free(cells->start);
    free(cells->order);
    free(cells->cell_of);
    free(cells->pos);
    memset(cells, 0, sizeof *cells);
}

static int reserve_atoms(md_cells_t *cells, size_t n)
{
    if (n <= cells->atom_cap)
        return 0;
    size_t cap = cells->atom_cap ? cells->atom_cap : 1024;
    while (cap < n)
        cap *= 2;
    size_t *order = realloc(cells->order, cap * sizeof *order);
    if (order)
        cells->order = order;
    size_t *cell_of = realloc(cells->cell_of, cap * sizeof *cell_of);
    if (cell_of)
        cells->cell_of = cell_of;
    double *pos = realloc(cells->pos, 3 * cap * sizeof *pos);
    if (pos)
        cells->pos = pos;
    if (!order || !cell_of || !pos)
        return -1;
    cells->atom_cap = cap;
    return 0;
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Counting sort of the local atoms into cells; stable, so ascending within a cell. */
static void bin_atoms(md_cells_t *cells, const md_atoms_t *a)
{
    size_t total = a->n + a->nghost;
    memset(cells->start, 0, (cells->ncells + 1) * sizeof *cells->start);
    for (size_t i = 0; i < total; i++) {
        const double *x = a->x + 3 * i;
        int c[3];
        for (int d = 0; d < 3; d++) {
            int k = (int)floor((x[d] - cells->origin[d]) * cells->inv_side[d]);
            /* Owned atoms sit in the inner cells; rounding must not push them out. */
            c[d] = i < a->n ? clamp(k, 1, cells->dim[d] - 2) : clamp(k, 0, cells->dim[d] - 1);
        }
        size_t cell = ((size_t)c[2] * (size_t)cells->dim[1] + (size_t)c[1]) * (size_t)cells->dim[0] +
                      (size_t)c[0];
        cells->cell_of[i] = cell;
        cells->start[cell + 1]++;
    }
    for (size_t c = 0; c < cells->ncells; c++)
        cells->start[c + 1] += cells->start[c];
    /* start[c] is used as the fill cursor of cell c, then restored. */
    for (size_t i = 0; i < total; i++) {
        size_t slot = cells->start[cells->cell_of[i]]++;
        cells->order[slot] = i;
        memcpy(cells->pos + 3 * slot, a->x + 3 * i, 3 * sizeof(double));
    }
    for (size_t c = cells->ncells; c > 0; c--)
        cells->start[c] = cells->start[c - 1];
    cells->start[0] = 0;
}

double force_compute(md_cells_t *cells, const md_domain_t *dom, md_atoms_t *a)
{
    if (reserve_atoms(cells, a->n + a->nghost + 1))
        return NAN;
    bin_atoms(cells, a);
    const double rc2 = dom->cutoff * dom->cutoff;
    const double inv_rc6 = 1.0 / (rc2 * rc2 * rc2);
    const double shift = 4.0 * inv_rc6 * (inv_rc6 - 1.0);
    const int nx = cells->dim[0], ny = cells->dim[1], nz = cells->dim[2];
    double energy = 0.0;
    for (int cz = 1; cz < nz - 1; cz++)
        for (int cy = 1; cy < ny - 1; cy++)
            for (int cx = 1; cx < nx - 1; cx++) {
                size_t cell = ((size_t)cz * (size_t)ny + (size_t)cy) * (size_t)nx + (size_t)cx;
                for (size_t s = cells->start[cell]; s < cells->start[cell + 1]; s++) {
                    size_t i = cells->order[s];
                    if (i >= a->n)
                        continue; /* a ghost in an inner cell: its owner computes it */
                    const double *xi = cells->pos + 3 * s;
                    double fx = 0.0, fy = 0.0, fz = 0.0, ei = 0.0;
                    for (int dz = -1; dz <= 1; dz++)
                        for (int dy = -1; dy <= 1; dy++)
                            for (int dx = -1; dx <= 1; dx++) {
                                size_t nb = ((size_t)(cz + dz) * (size_t)ny + (size_t)(cy + dy)) *
                                                (size_t)nx +
                                            (size_t)(cx + dx);
                                for (size_t t = cells->start[nb]; t < cells->start[nb + 1]; t++) {
                                    if (t == s)
                                        continue;
                                    const double *xj = cells->pos + 3 * t;
                                    double rx = xi[0] - xj[0], ry = xi[1] - xj[1],
                                           rz = xi[2] - xj[2];
                                    double r2 = rx * rx + ry * ry + rz * rz;
                                    if (r2 >= rc2)
                                        continue;
                                    double inv2 = 1.0 / r2;
                                    double inv6 = inv2 * inv2 * inv2;
                                    /* F = 24 (2 r^-12 - r^-6) / r^2 * r_vec */
                                    double scale = 24.0 * inv6 * (2.0 * inv6 - 1.0) * inv2;
                                    fx += scale * rx;
                                    fy += scale * ry;
                                    fz += scale * rz;
                                    ei += 4.0 * inv6 * (inv6 - 1.0) - shift;
                                }
                            }
                    a->f[3 * i] = fx;
                    a->f[3 * i + 1] = fy;
                    a->f[3 * i + 2] = fz;
                    energy += 0.5 * ei;
                }
            }
    return energy;
}
