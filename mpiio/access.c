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
    int status;
    int code; /* an MPI error of the layer's own write (through the handler already) */
    mpiio_file_t *alias[MPIIO_ALIASES_MAX]; /* other handles of the path (state.c) */
    size_t naliases;
} write_ctx_t;

/* --- bytes the layer writes itself -------------------------------------------- */

static int direct_fd(mpiio_file_t *f)
{
    if (f->direct_fd < 0)
        f->direct_fd = open(f->path, O_WRONLY | O_CLOEXEC);
    return f->direct_fd;
}

/* pwrite all of it, or the errno that stopped it. */
static int write_all_at(int fd, const char *data, int64_t len, int64_t off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, data, (size_t)len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        data += n;
        len -= n;
        off += n;
    }
    return 0;
}

static int direct_write(mpiio_file_t *f, const char *data, int64_t len, int64_t off,
                        const char *call)
{
    int fd = direct_fd(f);
    int err = fd < 0 ? errno : write_all_at(fd, data, len, off);
    if (err == 0) {
        f->bytes_direct += len;
        return MPI_SUCCESS;
    }
    char text[MPI_MAX_ERROR_STRING];
    mpiio_error_text(text, sizeof text, f->path, "%s: writing %lld bytes at %lld: %s", call,
                     (long long)len, (long long)off, strerror(err));
    return mpiio_local_error(f, FWDIO_EWRITE, err, text);
}

int mpiio_preallocate(mpiio_file_t *f, MPI_Offset size)
{
    const char *call = "MPI_File_preallocate";
    if (size < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "%s: a negative size", call);
    /* MPI-IO may read and rewrite blocks to allocate them: every write first. */
    int code = mpiio_agree_error(f, mpiio_settle_all(f, call), call);
    if (code != MPI_SUCCESS)
        return code;
    /* One rank allocates (the size grows to `size` if smaller; no byte
     * changes); every rank returns its outcome. */
    int err = 0;
    if (f->rank == 0 && size > 0) {
        int fd = direct_fd(f);
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

int mpiio_overlay_apply(mpiio_file_t *f, const char *call)
{
    if (!f->overlay)
        return MPI_SUCCESS;
    /* The stream's bytes that these overwrite must be in the file first. */
    int rc = mpiio_settle_ended(f, call);
    for (mpiio_overlay_t *o = f->overlay; o && rc == MPI_SUCCESS; o = o->next)
        rc = direct_write(f, o->data, o->len, o->off, call);
    mpiio_overlay_drop(f);
    return rc;
}

void mpiio_overlay_drop(mpiio_file_t *f)
{
    while (f->overlay) {
        mpiio_overlay_t *o = f->overlay;
        f->overlay = o->next;
        free(o->data);
        free(o);
    }
    f->overlay_tail = &f->overlay;
}

static int overlay_touches(const mpiio_file_t *f, int64_t start, int64_t end)
{
    for (const mpiio_overlay_t *o = f->overlay; o; o = o->next)
        if (o->off < end && start < o->off + o->len)
            return 1;
    return 0;
}

int mpiio_has_unended(const mpiio_file_t *f) { return f->own.n > 0 || f->overlay != NULL; }

int mpiio_touches_unended(const mpiio_file_t *f, int64_t start, int64_t end)
{
    return mpiio_extents_touch(&f->own, start, end) || overlay_touches(f, start, end);
}

static int overlay_add(mpiio_file_t *f, const char *data, int64_t len, int64_t off)
{
    mpiio_overlay_t *o = malloc(sizeof(*o));
    char *copy = malloc((size_t)len);
    if (!o || !copy) {
        free(o);
        free(copy);
        return FWDIO_ENOMEM;
    }
    memcpy(copy, data, (size_t)len);
    *o = (mpiio_overlay_t){.off = off, .len = len, .data = copy, .next = NULL};
    if (!f->overlay_tail)
        f->overlay_tail = &f->overlay;
    *f->overlay_tail = o;
    f->overlay_tail = &o->next;
    return FWDIO_OK;
}

/* --- writes through other handles of the path ------------------------------------ */

typedef struct alias_ctx {
    mpiio_file_t **alias;
    size_t n;
    const char *data;
} alias_ctx_t;

/* Non-zero when a copy could not be kept (no memory). */
static int copy_extent_to_aliases(void *arg, int64_t off, int64_t len, int64_t data_pos)
{
    alias_ctx_t *c = arg;
    int rc = 0;
    for (size_t i = 0; i < c->n && off >= 0; i++)
        if (mpiio_touches_unended(c->alias[i], off, off + len) &&
            overlay_add(c->alias[i], c->data + data_pos, len, off) != FWDIO_OK)
            rc = 1;
    return rc;
}

void mpiio_copy_to_aliases(mpiio_file_t **alias, size_t n, const mpiio_view_t *view,
                           int64_t pos, const void *buf, int count, MPI_Datatype type)
{
    int64_t bytes = 0;
    if (n == 0 || mpiio_type_bytes(count, type, &bytes) != MPI_SUCCESS || bytes == 0)
        return;
    alias_ctx_t c = {alias, n, NULL};
    mpiio_map_data(view, pos, buf, count, type, bytes, &c.data, copy_extent_to_aliases, &c);
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
    alias_ctx_t aliases = {w->alias, w->naliases, w->data};
    if (copy_extent_to_aliases(&aliases, off, len, data_pos) != 0) {
        w->status = FWDIO_ENOMEM;
        return 1;
    }
    if (mpiio_touches_unended(f, off, off + len)) {
        rc = overlay_add(f, data, len, off);
    } else if (w->keep &&
               mpiio_copies_keep(&f->copies, data, len, off, f->readback_limit) != 0) {
        /* Past the bytes kept for this rank's reads of its own writes: the
         * layer writes these now, as MPI-IO would, so the reads see them
         * (after the steps ended before, which they may write over). */
        w->code = mpiio_settle_ended(f, w->call);
        if (w->code == MPI_SUCCESS)
            w->code = direct_write(f, data, len, off, w->call);
        if (w->code != MPI_SUCCESS)
            return 1;
        rc = FWDIO_OK;
    } else {
        rc = fwdio_write(f->stream, data, (size_t)len, (uint64_t)off);
        /* The stream failed (some ranks know it sooner than others): the
         * bytes are dropped, and the failure comes back from the calls that
         * wait for the steps, on every rank alike. */
        if (rc == FWDIO_EFAILED)
            rc = FWDIO_OK;
        else if (rc == FWDIO_OK && mpiio_extents_add(&f->own, off, off + len) != 0)
            rc = FWDIO_ENOMEM;
        if (rc == FWDIO_OK)
            f->bytes_stream += len;
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
                     .status = FWDIO_OK,
                     .code = MPI_SUCCESS};
    /* Steps other handles of the path ended are in the file first. */
    w.naliases = mpiio_aliases(f, w.alias, MPIIO_ALIASES_MAX);
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
