/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A taken file's first bytes, held by the layer. A small file written with
 * independent writes and then closed (a header, a frame, a restart piece
 * per rank) gains nothing from its stream: the close waits until its bytes
 * are in the file, and fwdio's rounds, the forwarding and its writer's one
 * pwrite cost more than each rank writing its own bytes, as MPI-IO does
 * (docs/results/mpiio-layer.md, "Small files held"). So the bytes a rank
 * gives the stream are first kept here, up to FWDIO_MPIIO_HOLD bytes
 * (MPIIO_HOLD_DEFAULT; 0: never held), in call order. The first call that
 * needs them in the stream hands them over, in order, and the file goes on
 * as if they had gone at once: a write past the hold (access.c), and every
 * call that resolves the stream's open or ends a step (collective writes,
 * syncs, reads, a release: opening.c, steps.c). A close where every rank
 * still holds all it wrote (agreed in the close's first round) has each
 * rank write its own bytes itself, then its overlay; the stream, which got
 * no byte, finishes in the background (state.c's pending list, quietly: it
 * writes nothing, and its writers never create the path, so a rename or
 * unlink after the close stays as the code made it). Only for a handle
 * opened MPI_MODE_WRONLY: through one that can read, ranks may read each
 * other's bytes after a mere barrier (MPI leaves that undefined without a
 * sync, but MPI-IO over POSIX shows them, and HDF5's and PnetCDF's tests
 * expect it), and a held byte is further from the file than one sent to a
 * writer. Not in the node-local tier (its steps are the point) nor with
 * FWDIO_MPIIO_CLOSE=async (its close does not wait for the stream, so the
 * stream is what keeps the writes off the caller).
 */
#include "layer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* Bytes held by every file of this process (at most MPIIO_HOLD_TOTAL): the
 * hold is memory outside fwdio's budgets, so many files open at once hand
 * theirs over instead of holding more. */
static atomic_llong held_total;

/* Forget the held bytes (counted out of held_total) and hold no more. */
static void hold_forget(mpiio_file_t *f)
{
    atomic_fetch_sub(&held_total, (long long)f->hold.used);
    mpiio_copies_free(&f->hold);
    f->holding = 0;
}

void mpiio_hold_start(mpiio_file_t *f)
{
    f->hold_max = f->tier || mpiio_close_async() || !f->write_only
                      ? 0
                      : mpiio_env_size("FWDIO_MPIIO_HOLD", MPIIO_HOLD_DEFAULT,
                                       MPIIO_OPEN_LOG_MAX, "held", f->rank);
    f->holding = f->hold_max > 0;
}

/* Count len more bytes in held_total if they fit in MPIIO_HOLD_TOTAL. */
static int total_reserve(int64_t len)
{
    long long now = atomic_load(&held_total);
    do {
        if (now + len > MPIIO_HOLD_TOTAL)
            return 0;
    } while (!atomic_compare_exchange_weak(&held_total, &now, now + len));
    return 1;
}

int mpiio_hold_keep(mpiio_file_t *f, const char *data, int64_t len, int64_t off)
{
    if (!f->holding)
        return MPIIO_NOT_HELD;
    if (mpiio_copies_fit(&f->hold, len, f->hold_max) && total_reserve(len)) {
        if (mpiio_copies_keep(&f->hold, data, len, off, f->hold_max) == 0)
            return FWDIO_OK;
        atomic_fetch_sub(&held_total, (long long)len);
        return FWDIO_ENOMEM;
    }
    int rc = mpiio_hold_release(f);
    return rc == FWDIO_OK ? MPIIO_NOT_HELD : rc;
}

int mpiio_hold_release(mpiio_file_t *f)
{
    if (!f->holding)
        return FWDIO_OK;
    f->holding = 0;
    const mpiio_copies_t *k = &f->hold;
    int rc = FWDIO_OK;
    for (size_t i = 0; i < k->n && rc == FWDIO_OK; i++)
        rc = mpiio_stream_write(f, k->data + k->c[i].at, k->c[i].len, k->c[i].off);
    hold_forget(f);
    return rc;
}

int mpiio_hold_release_call(mpiio_file_t *f, const char *call)
{
    int rc = mpiio_hold_release(f);
    if (rc == FWDIO_OK)
        return MPI_SUCCESS;
    char text[MPI_MAX_ERROR_STRING];
    mpiio_error_text(text, sizeof text, f->path, "%s: handing the held bytes to fwdio: %s",
                     call, fwdio_strerror(rc));
    return mpiio_local_error(f, rc, 0, text);
}

/* Write len bytes at off through MPI-IO's handle, all of them: a write that
 * returns success having written fewer (Open MPI's ompio does so when the
 * file system refuses the rest, a full disk or a file size limit) is asked
 * for the rest, and one that writes none is a failure. MPI_SUCCESS, or the
 * error class of MPI-IO's failure (MPI_ERR_IO for no progress) with its text
 * in why. */
static int held_write_all(MPI_File fh, int64_t off, const char *data, int64_t len, char *why,
                          size_t why_len)
{
    while (len > 0) {
        MPI_Status st;
        int code = PMPI_File_write_at(fh, (MPI_Offset)off, data, (int)len, MPI_BYTE, &st);
        if (code != MPI_SUCCESS) {
            int wlen = 0;
            if (PMPI_Error_string(code, why, &wlen) != MPI_SUCCESS)
                snprintf(why, why_len, "MPI error %d", code);
            return code;
        }
        int n = 0;
        if (PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n <= 0 || n > len) {
            snprintf(why, why_len, "MPI-IO wrote %d of %lld bytes at %lld (no space left on the "
                     "device, or a file size limit?)", n, (long long)len, (long long)off);
            return MPI_ERR_IO;
        }
        data += n;
        off += n;
        len -= n;
    }
    return MPI_SUCCESS;
}

int mpiio_hold_write(mpiio_file_t *f, const char *call)
{
    f->holding = 0;
    const mpiio_copies_t *k = &f->hold;
    int code = MPI_SUCCESS;
    char why[MPI_MAX_ERROR_STRING] = "";
    /* Through MPI-IO's own handle, whose view is still the default (a
     * set_view releases the hold), as MPI-IO would have written them: no
     * descriptor of the layer's to open for a small file. */
    for (size_t i = 0; i < k->n && code == MPI_SUCCESS; i++) {
        code = held_write_all(f->fh, k->c[i].off, k->data + k->c[i].at, k->c[i].len, why,
                              sizeof why);
        if (code == MPI_SUCCESS)
            f->bytes_direct += k->c[i].len;
    }
    if (code != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        mpiio_error_text(text, sizeof text, f->path, "%s: writing the held bytes: %s", call,
                         why);
        code = mpiio_local_error(f, FWDIO_EWRITE, 0, text);
    }
    hold_forget(f);
    /* overwrites kept for after the step follow, as after any step */
    if (code == MPI_SUCCESS)
        code = mpiio_overlay_apply(f, call);
    else
        mpiio_overlay_drop(f);
    return code;
}

void mpiio_hold_drop(mpiio_file_t *f) { hold_forget(f); }

void mpiio_hold_leave(mpiio_file_t *f, fwdio_file_t *stream)
{
    /* Nothing to wait for: its writers open the path only as it is
     * (must_exist, files.c), so one that opens it late makes nothing where
     * the code renamed or deleted the file. Its ready callback may still
     * come with f: the struct goes with the stream (the pending list may
     * free it at once, if the stream is done). */
    char *path = f->path;
    f->path = NULL;
    mpiio_add_pending(stream, path, 1, f);
    free(path);
}
