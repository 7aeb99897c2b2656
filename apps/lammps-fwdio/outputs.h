/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fwdio files of a run: each is opened once, at its full size, before the
 * run, written by the callback during it, and closed and waited for after it.
 * A file counts as written only when fwdio reports it complete and the ranks
 * together handed it every byte of its layout (no holes: nothing lost).
 */
#ifndef LFW_OUTPUTS_H
#define LFW_OUTPUTS_H

#include "fwdio.h"
#include "layout.h"

#include <mpi.h>

typedef struct lfw_output {
    const char *what;     /**< "text dump", "binary dump" */
    const char *path;     /**< NULL: not requested */
    lfw_layout_t layout;  /**< where the snapshots go (none for the idle reference) */
    uint64_t size;        /**< bytes of the file: the layout's size, 0 for the idle reference */
    int stream;           /**< a fwdio stream (FWDIO_SIZE_GROWS): its size is not known */
    uint64_t append_start; /**< a stream: the bytes of an existing file it keeps */
    const char *local_dir; /**< fwdio's node-local tier (local_dir), or NULL */
    fwdio_file_t *file;   /**< open between lfw_output_open and lfw_output_free */
} lfw_output_t;

/**
 * fwdio_open the output (collective over the runtime's ranks) with `writers`
 * writers (0: fwdio's default). Returns the fwdio status (message printed by
 * rank 0 on error).
 */
int lfw_output_open(lfw_output_t *o, fwdio_runtime_t *rt, int writers, int rank);

/** fwdio_close on this rank (nonblocking); the fwdio status. */
int lfw_output_close(lfw_output_t *o);

/**
 * Collective over comm: wait for the file, then check that it completed on
 * every rank and that the ranks wrote o->size bytes in all. Rank 0 prints
 * what went wrong. Returns 0 when the file is whole, -1 otherwise (the same on
 * every rank).
 */
int lfw_output_wait(lfw_output_t *o, MPI_Comm comm, int rank);

/** Release the file handle and the layout. */
void lfw_output_free(lfw_output_t *o);

#endif
