/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes of taken files: the application's data (packed first when its
 * datatype is not one contiguous run) cut at the view's extents of the file
 * and handed to fwdio_write, which copies it. */
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct write_ctx {
    mpiio_file_t *f;
    const char *data;
    const char *call;
    int keep; /* keep a copy for this rank's reads (see readback.c) */
    int collective;
    int direct; /* an independent write with another handle of the path open */
    int status;
    int code; /* an MPI error of the layer's own write (through the handler already) */
    mpiio_file_t *alias[MPIIO_ALIASES_MAX]; /* other handles of the path (state.c) */
    size_t naliases;
} write_ctx_t;

int mpiio_preallocate(mpiio_file_t *f, MPI_Offset size)
{
    const char *call = "MPI_File_preallocate";
    if (size < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "%s: a negative size", call);
    /* MPI-IO may read and rewrite blocks to allocate them: every write first. */
    int code = mpiio_settle_collective(f, 1, call);
    if (code != MPI_SUCCESS)
        return code;
    /* One rank allocates (the size grows to `size` if smaller; no byte
     * changes); every rank returns its outcome. */
    int err = 0;
    if (f->rank == 0 && size > 0) {
        int fd = mpiio_direct_fd(f);
        err = fd < 0 ? errno : posix_fallocate(fd, 0, (off_t)size);
    }
    PMPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    if (err == 0)
        return MPI_SUCCESS;
    char text[MPI_MAX_ERROR_STRING];
    mpiio_error_text(text, sizeof text, f->path, "%s of %lld bytes: %s", call, (long long)size,
                     strerror(err));
    int rc = mpiio_error_code(FWDIO_ESYNC, err, text);
    PMPI_File_call_errhandler(f->fh, rc);
    return rc;
}

/* --- one extent of a write ------------------------------------------------------ */

/*
 * The stream takes bytes of earlier steps again (it is opened with
 * rewrites): a later step's bytes replace them, so those go to fwdio like any
 * other. Within one step each byte goes to the stream once, so bytes this
 * rank gave in the current step (or kept in the overlay) are kept, in order,
 * and written by the layer once the current step ends and is in the file
 * (the next collective call on the file). Bytes another rank wrote in the
 * same step are not this rank's to write (MPI leaves conflicting writes
 * without sync-barrier-sync undefined): fwdio fails the file with its
 * overlap error instead.
 */
static int write_extent(void *arg, int64_t off, int64_t len, int64_t data_pos)
{
    write_ctx_t *w = arg;
    mpiio_file_t *f = w->f;
    const char *data = w->data + data_pos;
    int rc;
    if (off < 0) {
        w->status = FWDIO_ERANGE;
        return 1;
    }
    /* Bytes this process wrote through another handle of the path that no
     * collective call there has ended yet land when that handle's step
     * does: a copy of these follows them there, so that the file holds
     * these, the later ones, as every MPI-IO keeps one process's order. */
    if (mpiio_aliases_keep(w->alias, w->naliases, data, off, len) != 0) {
        w->status = FWDIO_ENOMEM;
        return 1;
    }
    if (mpiio_touches_unended(f, off, off + len)) {
        rc = mpiio_overlay_add(f, data, len, off);
    } else if (w->direct ||
               (w->keep &&
                mpiio_copies_keep(&f->copies, data, len, off, f->readback_limit) != 0)) {
        /* Past the bytes kept for this rank's reads of its own writes, or
         * with the path open through another handle here (whose reads,
         * and other ranks' reads through theirs, cannot see this handle's
         * bytes on their way: PnetCDF reads its independent handle's bytes
         * through its collective one after a barrier): the layer writes
         * these now, as MPI-IO would, so the reads see them (after the
         * steps ended before, which they may write over). */
        w->code = mpiio_settle_ended(f, w->call);
        if (w->code == MPI_SUCCESS)
            w->code = mpiio_direct_write(f, data, len, off, w->call);
        if (w->code != MPI_SUCCESS)
            return 1;
        rc = FWDIO_OK;
    } else {
        /* held back while the file may stay small (hold.c), else the
         * stream's */
        rc = mpiio_hold_keep(f, data, len, off);
        if (rc == MPIIO_NOT_HELD)
            rc = mpiio_stream_write(f, data, len, off);
        if (rc == FWDIO_OK && mpiio_extents_add(&f->own, off, off + len) != 0)
            rc = FWDIO_ENOMEM;
        if (rc == FWDIO_OK) {
            f->own_lo = off < f->own_lo ? off : f->own_lo;
            f->own_hi = off + len > f->own_hi ? off + len : f->own_hi;
        }
        if (rc == FWDIO_OK && !w->collective) { /* not in the file yet (unsynced.c) */
            f->ind_lo = off < f->ind_lo ? off : f->ind_lo;
            f->ind_hi = off + len > f->ind_hi ? off + len : f->ind_hi;
        }
    }
    if (rc != FWDIO_OK) {
        w->status = rc;
        return 1;
    }
    if (off + len > f->max_end)
        f->max_end = off + len;
    return 0;
}

/* This rank's part of a write failed in fwdio (no memory, say). */
static int write_failed(mpiio_file_t *f, int status, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    mpiio_error_text(text, sizeof text, f->path, "%s: %s", call, fwdio_strerror(status));
    return mpiio_local_error(f, status, 0, text);
}

int mpiio_write(mpiio_file_t *f, int64_t pos, const void *buf, int count, MPI_Datatype type,
                int collective, int64_t *bytes, const char *call)
{
    int64_t n = 0;
    *bytes = 0;
    int cls = mpiio_type_bytes(count, type, &n);
    if (cls != MPI_SUCCESS)
        return mpiio_refuse(f, cls, "%s: %s", call,
                            cls == MPI_ERR_COUNT ? "a negative count, or more than 2^63 bytes"
                                                 : "an invalid datatype");
    if (pos < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "%s: a negative offset", call);
    if (f->error_code != MPI_SUCCESS)
        return mpiio_file_error(f, FWDIO_EFAILED, call);
    if (n == 0)
        return MPI_SUCCESS;
    /* A collective write ends the step before it returns: no read can come
     * between, so its bytes need no copy; nor do those of a handle that
     * cannot read (MPI_MODE_WRONLY). */
    write_ctx_t w = {.f = f,
                     .call = call,
                     .keep = !collective && !f->write_only,
                     .collective = collective,
                     .status = FWDIO_OK,
                     .code = MPI_SUCCESS};
    /* Steps other handles of the path ended are in the file first. */
    w.naliases = mpiio_aliases(f, w.alias, MPIIO_ALIASES_MAX);
    w.direct = !collective && w.naliases > 0;
    for (size_t i = 0; i < w.naliases; i++)
        mpiio_settle_quietly(w.alias[i]);
    int rc = mpiio_map_data(&f->view, pos, buf, count, type, n, &w.data, write_extent, &w);
    if (rc != MPI_SUCCESS)
        return mpiio_refuse(f, rc, "%s: the data could not be packed", call);
    if (w.code != MPI_SUCCESS)
        return w.code;
    if (w.status != FWDIO_OK)
        return w.status == FWDIO_ERANGE
                   ? mpiio_refuse(f, MPI_ERR_ARG,
                                  "%s: bytes outside the file (before byte 0, or past 2^62)", call)
                   : write_failed(f, w.status, call);
    *bytes = n;
    return MPI_SUCCESS;
}
