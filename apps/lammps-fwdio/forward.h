/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fix external callback that forwards each snapshot through fwdio.
 *
 * On every snapshot step each rank sorts its local atoms by id, formats them
 * straight into a buffer from fwdio_alloc (text lines and/or binary records)
 * and lends every run of consecutive ids to fwdio_write_lent as one call, at
 * the offset the layout gives that id; rank 0 also writes the snapshot's
 * header. Nothing waits for the disk, and nothing is copied before it: a
 * writer on the same node writes the bytes from where they were formatted
 * while LAMMPS goes on; the buffer is reused once those writes are done.
 *
 * With --format lammps the text dump is instead LAMMPS's default `dump custom`
 * format, whose numbers have no fixed width: each rank formats its atoms in
 * its own order (as LAMMPS's unsorted dump does) and fwdio_append places them
 * after the lower ranks' (rank 0's header first); every snapshot is a step
 * of the stream (fwdio_step_end), so the atom count may change between
 * snapshots.
 *
 * A problem (a coordinate too wide for the text format, an id out of range, a
 * step with no snapshot, a refused fwdio_write) stops this rank's forwarding
 * and is kept in lfw_forward_t.error for the caller to report after the run;
 * the run itself goes on, as LAMMPS offers a callback no way to stop it.
 */
#ifndef LFW_FORWARD_H
#define LFW_FORWARD_H

#include "dump_text.h"
#include "fwdio.h"
#include "lammps_api.h"
#include "layout.h"
#include "lent_pool.h"

#include <stdint.h>

/** One destination: a file and where its snapshots lie. */
typedef struct lfw_target {
    fwdio_file_t *file;        /**< NULL: this output is not written */
    const lfw_layout_t *layout;
} lfw_target_t;

/** A local atom's id and its index in LAMMPS's arrays. */
typedef struct lfw_atom_ref {
    int64_t id;
    int index;
} lfw_atom_ref_t;

typedef struct lfw_forward {
    void *lmp;                  /**< to fetch the atom types */
    int rank;
    int64_t natoms;
    int ntypes;
    lfw_box_t box;
    const lfw_text_format_t *fmt;
    lfw_target_t text;          /**< the text dump */
    lfw_target_t binary;        /**< the binary dump */
    int lammps_format;          /**< the text dump is a stream in LAMMPS's own format */
    int64_t last_step;          /**< the last snapshot's step (-1: none yet) */
    char *lines;                /**< lammps format: this rank's part of a snapshot */
    size_t lines_cap;

    /* scratch, grown as needed */
    lfw_atom_ref_t *order;
    size_t order_cap;
    app_lent_pool_t bufs;       /**< what snapshots are formatted into (app_lent_pool_init) */

    /* what happened */
    int failed;                 /**< non-zero after the first problem */
    char error[256];            /**< that problem */
    int64_t snapshots;          /**< snapshots forwarded */
    uint64_t write_calls;       /**< fwdio_write and fwdio_write_lent calls */
    double seconds;             /**< wall time inside the callback */
} lfw_forward_t;

/** The FixExternalFnPtr to register with `ctx` = an lfw_forward_t. */
void lfw_forward_callback(void *ctx, lfw_step_t step, int nlocal, lfw_tag_t *ids, double **x,
                          double **fexternal);

/** Release the scratch buffers (after the files are complete). */
void lfw_forward_free(lfw_forward_t *fw);

#endif
