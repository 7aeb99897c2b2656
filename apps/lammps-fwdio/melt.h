/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * LAMMPS's 3d Lennard-Jones melt (examples/melt) through the LAMMPS C library
 * interface: one LAMMPS instance on a communicator, the melt's set-up
 * commands, and the outputs attached to it (LAMMPS dumps or a fix external
 * callback).
 *
 * LAMMPS (as Debian builds it, without C++ exceptions) reports an error in a
 * command by printing it to its screen and log and aborting the MPI job; the
 * callers check everything they can before handing it to LAMMPS.
 */
#ifndef LFW_MELT_H
#define LFW_MELT_H

#include "dump_text.h"
#include "lammps_api.h"
#include "options.h"

typedef struct lfw_melt {
    void *lmp;      /**< the LAMMPS instance */
    int cells;      /**< fcc unit cells along each axis */
    int64_t natoms; /**< 4 * cells^3, ids 1 .. natoms */
    int ntypes;     /**< atom types (1) */
    lfw_box_t box;  /**< the periodic box, fixed for the run */
} lfw_melt_t;

/** Unit cells per axis of the smallest fcc cube holding at least `atoms` atoms. */
int lfw_melt_cells_for(int64_t atoms);

/**
 * Start LAMMPS on `comm` and set up the melt: lattice, box, atoms, velocities,
 * potential, neighbour lists and fix nve. Returns 0, or -1 (message on stderr
 * from rank 0) if a command could not even be formed.
 */
int lfw_melt_open(lfw_melt_t *m, MPI_Comm comm, const lfw_options_t *o);

/**
 * Why LAMMPS would refuse or reinterpret `path` as a dump file name (white
 * space or quotes break its command line; '*' and '%' make one file per step
 * or per rank; .gz, .zst and .bin select other formats), or NULL when it is fine.
 */
const char *lfw_melt_dump_path_problem(const char *path);

/**
 * Add LAMMPS's own `dump ID all STYLE every PATH id type x y z` with
 * `dump_modify ID sort id format line "FORMAT"`, or, with format_line NULL,
 * in LAMMPS's default format (unsorted: each rank's atoms in rank order);
 * `append`: `dump_modify ID append yes`. Returns 0, or -1 if the path is not
 * usable (see lfw_melt_dump_path_problem).
 */
int lfw_melt_add_dump(lfw_melt_t *m, const char *id, const char *style, int64_t every,
                      const char *path, const char *format_line, int append);

/** Remove a dump added with lfw_melt_add_dump (LAMMPS closes its file). */
void lfw_melt_remove_dump(lfw_melt_t *m, const char *id);

/** Delete the atoms in a sphere of a sixth of the box's side at its centre
 *  (LAMMPS's delete_atoms region): the atom count drops. */
void lfw_melt_delete_sphere(lfw_melt_t *m);

/**
 * Add `fix ID all external pf/callback every every` calling `fn(ctx, ...)` at
 * steps 0, every, 2*every, ... The forces fn leaves in its fexternal array are
 * added on those same steps only: LAMMPS does not carry fexternal along with
 * atoms that change ranks, so on any other step they could be stale.
 */
void lfw_melt_add_callback(lfw_melt_t *m, const char *id, int64_t every, FixExternalFnPtr fn,
                           void *ctx);

/** `run steps`. */
void lfw_melt_run(lfw_melt_t *m, int64_t steps);

/** Close the LAMMPS instance (MPI stays initialised). */
void lfw_melt_close(lfw_melt_t *m);

#endif
