/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where each snapshot of a run lands in a dump file. A run of S steps with a
 * snapshot every K steps writes the steps 0, K, 2K, ..., floor(S/K)*K (LAMMPS
 * writes a dump at the start of a run when the step is a multiple of K, and
 * fix external calls back on the same steps). The box is fixed and the atom
 * count constant, so every snapshot's header length and the whole file size
 * are known before the run: one fwdio file of exactly that size takes the
 * whole run.
 */
#ifndef LFW_LAYOUT_H
#define LFW_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct lfw_layout {
    int64_t every;       /**< K: steps between snapshots */
    int64_t count;       /**< snapshots in the file */
    int64_t natoms;      /**< atoms per snapshot, ids 1 .. natoms */
    size_t record_len;   /**< bytes per atom */
    size_t *header_len;  /**< header bytes of snapshot s */
    uint64_t *base;      /**< count + 1 entries: base[s] = first byte of snapshot s,
                          *   base[count] = the file size */
} lfw_layout_t;

/** Header length of the snapshot at `step`; `arg` as given to lfw_layout_init. */
typedef size_t (*lfw_header_len_fn)(int64_t step, const void *arg);

/**
 * Lay out the snapshots of a run of `steps` steps (>= 0) with one every
 * `every` steps (>= 1). Returns 0, or -1 when out of memory.
 */
int lfw_layout_init(lfw_layout_t *l, int64_t steps, int64_t every, int64_t natoms,
                    size_t record_len, lfw_header_len_fn header_len, const void *arg);

void lfw_layout_free(lfw_layout_t *l);

/** Snapshot index of `step`, or -1 if no snapshot is taken at that step. */
int64_t lfw_layout_snapshot(const lfw_layout_t *l, int64_t step);

/** Offset of atom `id` (1 .. natoms) in snapshot s. */
static inline uint64_t lfw_layout_atom_offset(const lfw_layout_t *l, int64_t s, int64_t id)
{
    return l->base[s] + l->header_len[s] + (uint64_t)(id - 1) * l->record_len;
}

/** Bytes of the whole file. */
static inline uint64_t lfw_layout_size(const lfw_layout_t *l)
{
    return l->base[l->count];
}

#endif
