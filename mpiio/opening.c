/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A taken file's stream open after MPI_File_open returned. The open does not
 * wait for fwdio's ready status: it returns with the stream pending (writes
 * go to it at once; fwdio holds them until the writers have the file) and
 * the layer keeps its own copy of every byte it hands over (the open log).
 * The ready callback only records the status; each call on the file checks
 * it without blocking and drops the log once the open is known good. A call
 * that needs the stream's outcome (anything that ends a step, waits for one,
 * reads, makes a collective of the layer's, or closes) resolves the open
 * first: it waits for the status, which fwdio agrees on every rank, so every
 * rank resolves alike by its next such call and the layer's collectives stay
 * matched. A failed open leaves the file to MPI-IO as if it had never been
 * taken: the layer writes the logged bytes itself, in the order they were
 * written, then the overwrites it kept for after the step (which came later),
 * and the handle is MPI-IO's from then on.
 */
#include "layer.h"

#include <stdio.h>
#include <string.h>

static void on_ready(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    mpiio_file_t *f = user;
    atomic_store(&f->ready_status, status);
}

void mpiio_opening_callbacks(mpiio_file_t *f, fwdio_callbacks_t *cbs)
{
    *cbs = (fwdio_callbacks_t){.ready = on_ready, .user = f};
    atomic_store(&f->ready_status, MPIIO_READY_UNKNOWN);
}

/* The open is known good: the stream has every byte, the log is not needed. */
static void known_good(mpiio_file_t *f)
{
    mpiio_copies_free(&f->open_log);
    atomic_store(&f->opening, MPIIO_OPEN_KNOWN);
}

void mpiio_opening_check(mpiio_file_t *f)
{
    if (atomic_load(&f->opening) == MPIIO_OPEN_PENDING &&
        atomic_load(&f->ready_status) == FWDIO_OK)
        known_good(f);
}

int mpiio_opening_moot(const mpiio_file_t *f)
{
    return atomic_load(&f->opening) == MPIIO_OPEN_PENDING && f->open_log.used == 0 &&
           f->hold.used == 0 && f->steps_ended == 0 && !mpiio_has_unended(f);
}

int mpiio_opening_log_full(const mpiio_file_t *f, int count, MPI_Datatype type)
{
    int64_t n = 0;
    /* the held bytes (hold.c) go to the log first when these do not fit */
    return atomic_load(&f->opening) == MPIIO_OPEN_PENDING &&
           mpiio_type_bytes(count, type, &n) == MPI_SUCCESS &&
           !mpiio_copies_fit(&f->open_log, n + (int64_t)f->hold.used, MPIIO_OPEN_LOG_MAX);
}

int mpiio_opening_log(mpiio_file_t *f, const char *data, int64_t len, int64_t off)
{
    if (atomic_load(&f->opening) != MPIIO_OPEN_PENDING)
        return 0;
    return mpiio_copies_keep(&f->open_log, data, len, off, MPIIO_OPEN_LOG_MAX);
}

int mpiio_stream_write(mpiio_file_t *f, const char *data, int64_t len, int64_t off)
{
    /* While the stream's open is pending the layer keeps a copy of what it
     * hands over (opening.c; the caller saw the log has room). */
    if (mpiio_opening_log(f, data, len, off) != 0)
        return FWDIO_ENOMEM;
    int rc = fwdio_write(f->stream, data, (size_t)len, (uint64_t)off);
    /* The stream failed (some ranks know it sooner than others): the bytes
     * are dropped, and the failure comes back from the calls that wait for
     * the steps, on every rank alike. */
    if (rc == FWDIO_EFAILED)
        rc = FWDIO_OK;
    if (rc == FWDIO_OK)
        f->bytes_stream += len;
    return rc;
}

/* The held bytes (hold.c: while a file holds, nothing is logged), the
 * logged bytes, then the overlay, written by the layer: MPI_SUCCESS or the
 * first failure (this rank's, mpiio_local_error: the next agreement makes
 * every rank return it). The held copies stay until the close frees them
 * (mpiio_hold_drop): the file is MPI-IO's from now on and holds nothing. */
static int replay(mpiio_file_t *f, const char *call)
{
    int code = mpiio_direct_write_copies(f, &f->hold, call);
    f->holding = 0;
    if (code == MPI_SUCCESS)
        code = mpiio_direct_write_copies(f, &f->open_log, call);
    if (code == MPI_SUCCESS)
        code = mpiio_overlay_apply(f, call);
    else
        mpiio_overlay_drop(f);
    return code;
}

/* fwdio could not open the file (status agreed on every rank): it goes back
 * to MPI-IO with every byte written through it in place. */
static int give_back(mpiio_file_t *f, const char *call, int closing)
{
    snprintf(f->released, sizeof f->released, "released: fwdio could not open it: %s",
             fwdio_file_error(f->stream));
    const char *why = f->released + strlen("released: ");
    /* The failed stream completes once closed here (its held writes are
     * dropped): local. (From inside a callback fwdio_wait returns at once
     * and fwdio_file_free lets it complete in the background; its one
     * callback, ready, has run.) */
    int64_t logged = (int64_t)f->open_log.used;
    fwdio_file_t *stream = f->stream;
    f->stream = NULL;
    fwdio_close(stream);
    fwdio_wait(stream);
    fwdio_file_free(stream);
    int code = replay(f, call);
    mpiio_copies_free(&f->open_log);
    mpiio_extents_clear(&f->own);
    mpiio_copies_clear(&f->copies);
    atomic_store(&f->opening, MPIIO_OPEN_GIVEN_BACK);
    if (!closing)
        mpiio_untaken_add(f->fh, f->path); /* MPI-IO's now, and ordered as any */
    if (mpiio_verbose())
        mpiio_say("%s: rank %d: handed back to MPI-IO at %s: %s; the layer wrote the %lld "
                  "bytes written through it so far itself%s",
                  f->path, f->rank, call, why, (long long)logged,
                  code == MPI_SUCCESS ? "" : ", which failed");
    /* MPI-IO keeps the individual file pointer from now on. */
    if (!closing)
        PMPI_File_seek(f->fh, f->fp, MPI_SEEK_SET);
    return code;
}

static int resolve(mpiio_file_t *f, const char *call, int closing)
{
    if (atomic_load(&f->opening) != MPIIO_OPEN_PENDING)
        return MPI_SUCCESS;
    int status = fwdio_wait_ready(f->stream);
    if (status == FWDIO_ECONTEXT) {
        /* Called from inside an fwdio callback: no waiting there, but the
         * status may be known already. */
        status = atomic_load(&f->ready_status);
        if (status == MPIIO_READY_UNKNOWN)
            return mpiio_refuse(f, MPI_ERR_OTHER,
                                "%s: called from inside an fwdio callback before the file's "
                                "open is known (fwdio_wait_ready cannot wait there)",
                                call);
    }
    if (status == FWDIO_OK) {
        known_good(f);
        return MPI_SUCCESS;
    }
    return give_back(f, call, closing);
}

int mpiio_opening_resolve(mpiio_file_t *f, const char *call)
{
    return resolve(f, call, 0);
}

int mpiio_opening_close(mpiio_file_t *f, const char *call)
{
    return resolve(f, call, 1);
}

int mpiio_opening_resolve_all(mpiio_file_t *f, const char *call)
{
    int code = mpiio_opening_resolve(f, call);
    if (atomic_load(&f->opening) != MPIIO_OPEN_GIVEN_BACK)
        return code;
    atomic_store(&f->opening, MPIIO_OPEN_KNOWN);
    return mpiio_agree_error(f, code, call);
}
