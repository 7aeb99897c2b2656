/* SPDX-License-Identifier: BSD-3-Clause */
/* File views of the MPI-IO layer: a datatype flattened into runs of bytes,
 * and the map from a position in a view's data to extents of the file. */
#ifndef FWDIO_MPIIO_VIEW_H
#define FWDIO_MPIIO_VIEW_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* `count` contiguous runs of a datatype's bytes, `len` bytes each, the
 * m-th at `disp` + m `stride` from the start of the type's instance (a
 * vector's blocks: one entry however many); `before` counts the type's
 * bytes in the runs ahead of the first (the position of its first byte in
 * packed data), the m-th's are m `len` after. count 1: one run (stride 0). */
typedef struct mpiio_run {
    int64_t disp;
    int64_t len;
    int64_t before;
    int64_t count;
    int64_t stride;
} mpiio_run_t;

/* A flattened datatype, in typemap order, adjacent runs merged, runs of
 * one length at one stride kept as one entry. */
typedef struct mpiio_runs {
    mpiio_run_t *r;
    size_t n, cap;  /* entries */
    int64_t size;   /* bytes of data in one instance (sum of run lengths) */
    int64_t extent; /* the type's extent: instance k starts k * extent later */
} mpiio_runs_t;

/* The most entries a flattened type may have (each of any number of runs
 * at one stride); a type with more is not handled. */
#define MPIIO_MAX_RUNS ((size_t)1 << 22)

/* A file view: displacement, etype size and the flattened filetype. */
typedef struct mpiio_view {
    int64_t disp;
    int64_t etype_size;
    mpiio_runs_t ft;
} mpiio_view_t;

/* Flatten `type` (any combiner but darray and the Fortran-only ones). On
 * failure returns non-zero with the reason in why (at least 96 bytes) and
 * leaves `out` empty. */
int mpiio_flatten(MPI_Datatype type, mpiio_runs_t *out, char *why, size_t why_len);
void mpiio_runs_free(mpiio_runs_t *runs);

/* The default view: displacement 0, etype and filetype MPI_BYTE. */
int mpiio_view_default(mpiio_view_t *v);
void mpiio_view_free(mpiio_view_t *v);

/* Called for each extent of the file that data bytes map to: `len` bytes at
 * file offset `off`, which are the data's bytes from `data_pos` on. Non-zero
 * stops the walk and is returned. */
typedef int (*mpiio_extent_fn)(void *arg, int64_t off, int64_t len, int64_t data_pos);

/* Walk the file extents of data bytes [pos, pos + len) of the view (pos
 * counts the view's data bytes: an offset in etypes times the etype size),
 * merging extents that touch. */
int mpiio_view_map(const mpiio_view_t *v, int64_t pos, int64_t len, mpiio_extent_fn fn, void *arg);

/* The file offset of the view's data byte `pos`. */
int64_t mpiio_view_byte_offset(const mpiio_view_t *v, int64_t pos);

/* How many data bytes of the view lie below file offset `file_size`. */
int64_t mpiio_view_bytes_below(const mpiio_view_t *v, int64_t file_size);

#endif
