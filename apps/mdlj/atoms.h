/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The atoms one rank holds: `n` owned atoms (ids ascending after
 * atoms_sort_by_id) followed by `nghost` ghost copies of neighbours' atoms
 * (positions only). Positions, velocities and forces are stored xyz-interleaved.
 */
#ifndef MDLJ_ATOMS_H
#define MDLJ_ATOMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct md_atoms {
    size_t n;       /* owned atoms */
    size_t nghost;  /* ghosts after them in x */
    size_t cap;     /* owned capacity of id, v, f */
    size_t xcap;    /* owned + ghost capacity of x */
    int64_t *id;
    double *x;      /* 3 * xcap */
    double *v;      /* 3 * cap */
    double *f;      /* 3 * cap */
} md_atoms_t;

void atoms_init(md_atoms_t *a);
void atoms_free(md_atoms_t *a);

/* Room for `owned` owned atoms (ghosts are dropped). Returns 0 or -1 (no memory). */
int atoms_reserve(md_atoms_t *a, size_t owned);

/* Room for `total` owned + ghost positions, keeping those there. 0 or -1. */
int atoms_reserve_x(md_atoms_t *a, size_t total);

/* Append one owned atom (drops ghosts). 0 or -1. */
int atoms_push(md_atoms_t *a, int64_t id, const double x[3], const double v[3]);

/* Put the owned atoms in ascending id order (ghosts are dropped). 0 or -1. */
int atoms_sort_by_id(md_atoms_t *a);

#endif
