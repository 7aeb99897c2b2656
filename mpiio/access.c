/* Writes of taken files: the application's data (packed first when its
 * datatype is not one contiguous run) cut at the view's extents of the file
 * and handed to fwdio_write, which copies it. */
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct write_ctx {
    mpiio_file_t *f;
    const char *data;
    int keep; /* keep a copy for this rank's reads (see readback.c) */
    int status;
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
    snprintf(text, sizeof(text), "fwdio-mpiio: %s: %s: writing %lld bytes at %lld again: %s",
             f->path, call, (long long)len, (long long)off, strerror(err));
    f->error_code = mpiio_error_code(FWDIO_EWRITE, err, text);
    return mpiio_file_error(f, FWDIO_EWRITE, call);
}

int mpiio_preallocate(mpiio_file_t *f, MPI_Offset size)
{
    const char *call = "MPI_File_preallocate";
    if (size < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "%s: a negative size", call);
    /* MPI-IO may read and rewrite blocks to allocate them: every write first. */
    int code = mpiio_settle_all(f, call);
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
    snprintf(text, sizeof(text), "fwdio-mpiio: %s: %s of %lld bytes: %s", f->path, call,
             (long long)size, strerror(err));
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

static int contiguous_data(const void *buf, int count, MPI_Datatype type, int64_t bytes,
                           const char **data, char **copy);

void mpiio_copy_to_aliases(mpiio_file_t **alias, size_t n, const mpiio_view_t *view,
                           int64_t pos, const void *buf, int count, MPI_Datatype type)
{
    int size = 0;
    if (n == 0 || count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return;
    const char *data;
    char *copy;
    int64_t bytes = (int64_t)count * size;
    if (contiguous_data(buf, count, type, bytes, &data, &copy) != MPI_SUCCESS)
        return;
    alias_ctx_t c = {alias, n, data};
    mpiio_view_map(view, pos, bytes, copy_extent_to_aliases, &c);
    free(copy);
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
    } else {
        rc = fwdio_write(f->stream, data, (size_t)len, (uint64_t)off);
        if (rc == FWDIO_OK && mpiio_extents_add(&f->own, off, off + len) != 0)
            rc = FWDIO_ENOMEM;
        if (rc == FWDIO_OK) {
            f->bytes_stream += len;
            if (w->keep)
                mpiio_copies_keep(&f->copies, data, len, off, f->readback_limit);
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

/* Is count x type one run of bytes, in the order MPI_Pack would take them?
 * A type whose bytes cover one range of memory may still list them out of
 * address order (a permuted hindexed, a struct ordered by file position):
 * MPI writes such data in typemap order, so it must be packed. Only a
 * predefined type, or one whose flattened typemap is a single run in order,
 * is used in place. */
int mpiio_one_run(int count, MPI_Datatype type, MPI_Aint *start)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    int size, nints, naddrs, ntypes, combiner;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    *start = true_lb;
    if (true_extent != size || (count > 1 && extent != size))
        return 0; /* gaps: not one run, whatever the order */
    if (size == 0)
        return 1;
    if (PMPI_Type_get_envelope(type, &nints, &naddrs, &ntypes, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_NAMED)
        return 1;
    mpiio_runs_t runs = {0};
    char why[128];
    int in_order = mpiio_flatten(type, &runs, why, sizeof why) == 0 && runs.n == 1 &&
                   runs.r[0].len == size && runs.r[0].disp == true_lb;
    mpiio_runs_free(&runs);
    return in_order;
}

static int contiguous_data(const void *buf, int count, MPI_Datatype type, int64_t bytes,
                           const char **data, char **copy)
{
    MPI_Aint start;
    *copy = NULL;
    if (mpiio_one_run(count, type, &start)) {
        *data = (const char *)buf + start;
        return MPI_SUCCESS;
    }
    if (bytes > INT_MAX) /* MPI_Pack counts in int */
        return MPI_ERR_COUNT;
    *copy = malloc((size_t)bytes);
    if (!*copy)
        return MPI_ERR_NO_MEM;
    int pos = 0;
    int rc = PMPI_Pack(buf, count, type, *copy, (int)bytes, &pos, MPI_COMM_SELF);
    if (rc != MPI_SUCCESS) {
        free(*copy);
        *copy = NULL;
        return rc;
    }
    *data = *copy;
    return MPI_SUCCESS;
}

int mpiio_write(mpiio_file_t *f, int64_t pos, const void *buf, int count, MPI_Datatype type,
                int collective, int64_t *bytes, const char *call)
{
    int size = 0;
    *bytes = 0;
    if (count < 0)
        return mpiio_refuse(f, MPI_ERR_COUNT, "%s: a negative count", call);
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return mpiio_refuse(f, MPI_ERR_TYPE, "%s: an invalid datatype", call);
    if (pos < 0)
        return mpiio_refuse(f, MPI_ERR_ARG, "%s: a negative offset", call);
    if (f->error_code != MPI_SUCCESS)
        return mpiio_file_error(f, FWDIO_EFAILED, call);
    int64_t n = (int64_t)count * size;
    if (n == 0)
        return MPI_SUCCESS;
    const char *data;
    char *copy;
    int rc = contiguous_data(buf, count, type, n, &data, &copy);
    if (rc != MPI_SUCCESS)
        return mpiio_refuse(f, rc, "%s: the data could not be packed", call);
    /* A collective write ends the step before it returns: no read can come
     * between, so its bytes need no copy. */
    write_ctx_t w = {.f = f, .data = data, .keep = !collective, .status = FWDIO_OK};
    /* Steps other handles of the path ended are in the file first. */
    w.naliases = mpiio_aliases(f, w.alias, MPIIO_ALIASES_MAX);
    for (size_t i = 0; i < w.naliases; i++)
        mpiio_settle_quietly(w.alias[i]);
    mpiio_view_map(&f->view, pos, n, write_extent, &w);
    free(copy);
    if (w.status != FWDIO_OK)
        return w.status == FWDIO_ERANGE
                   ? mpiio_refuse(f, MPI_ERR_ARG,
                                  "%s: bytes outside the file (before byte 0, or past 2^62)", call)
                   : mpiio_file_error(f, w.status, call);
    *bytes = n;
    return MPI_SUCCESS;
}
