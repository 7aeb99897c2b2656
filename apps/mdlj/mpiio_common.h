/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What mdlj's two MPI-IO paths share (out_mpiio.c: write_at_all;
 * out_mpiio_async.c: iwrite_at_all waited at the next output): the
 * trajectory's handles, a rank's pack as a file view, and MPI errors printed
 * with the call and path.
 */
#ifndef MDLJ_MPIIO_COMMON_H
#define MDLJ_MPIIO_COMMON_H

#include "output_impl.h"

/* The trajectory through MPI-IO: every rank's handle, and rank 0's second
 * handle (no view) for the header; cb_nodes = --writers when given. */
typedef struct mpiio_files {
    MPI_File traj;
    MPI_File header; /* rank 0 */
    MPI_Info info;   /* every file's hints (MPI_INFO_NULL: none) */
} mpiio_files_t;

/* Collective: the hints, and the trajectory opened (with o->p.dcd_path),
 * sized for every frame and its header written. 0 or -1 (printed). */
int mpiio_files_open(md_output_t *o, mpiio_files_t *f);

/* Rank 0: the header counts `frames` frames. 0 or -1 (printed). */
int mpiio_files_count_frames(md_output_t *o, mpiio_files_t *f, int64_t frames);

/* Collective: the trajectory closed; a failure counted in o->rep.failures. */
void mpiio_files_close(md_output_t *o, mpiio_files_t *f);

/* Whatever is still open closed (after a failure), the hints freed. */
void mpiio_files_free(mpiio_files_t *f);

/* Collective: checkpoint `path` opened on o->p.comm with `info` and sized for
 * `natoms` atoms. 0, or -1 (printed; *fh is MPI_FILE_NULL when the open
 * failed). */
int mpiio_ckpt_open(md_output_t *o, MPI_Info info, const char *path, int64_t natoms, MPI_File *fh);

/* Collective: a checkpoint whose data every rank has written and synced is
 * put back to a byte view, given rank 0's commit record when `commit` is not
 * NULL, synced and closed (*fh MPI_FILE_NULL after). 0 or -1 on this rank. */
int mpiio_ckpt_seal(md_output_t *o, MPI_File *fh, MPI_Info info, const char *path,
                    int64_t natoms, const unsigned char *commit);

/* 0 when rc is MPI_SUCCESS; else prints "mdlj: rank R: WHAT PATH: text" and returns -1. */
int mpiio_check(md_output_t *o, int rc, const char *what, const char *path);

/*
 * Collective: set fh's view to the extents of o->pack (extents longer than
 * INT_MAX split into several blocks) and put in *count the bytes this rank
 * then writes from o->pack.buf at view offset 0 (0 when it has none, or
 * could not describe them: it still joins the collective). Adds the blocks
 * to *blocks_out. 0 or -1.
 */
int mpiio_view_of_pack(md_output_t *o, MPI_File fh, MPI_Info info, const char *path, int *count,
                       uint64_t *blocks_out);

#endif
