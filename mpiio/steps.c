/* SPDX-License-Identifier: BSD-3-Clause */
/* A taken file's steps: the stream's step that a collective call ends, and
 * the waits for the steps already ended (settling) that calls needing the
 * bytes in the file make. In the node-local tier a step is complete once
 * in the local stores and in the file once drained: settling waits for the
 * drain (fwdio_step_drain_wait, which is fwdio_step_wait for a stream
 * written straight), MPI_File_sync only for the local stores. */
#include "layer.h"

int mpiio_end_step(mpiio_file_t *f, const char *call)
{
    int rc = fwdio_step_end(f->stream);
    f->steps_ended++;
    mpiio_inflight_ended(f, f->steps_ended - 1);
    /* A failed stream (known here sooner than elsewhere, perhaps) is the
     * step's status, which the calls that wait for it report everywhere. */
    int code = MPI_SUCCESS;
    if (rc != FWDIO_OK && rc != FWDIO_EFAILED) {
        char text[MPI_MAX_ERROR_STRING];
        mpiio_error_text(text, sizeof text, f->path, "%s: ending the step: %s", call,
                         fwdio_strerror(rc));
        code = mpiio_local_error(f, rc, 0, text);
    }
    /* Overwrites kept during the step follow it into the file, after the
     * stream's bytes they overwrite. */
    int over = f->overlay ? mpiio_settle_ended(f, call) : MPI_SUCCESS;
    if (over == MPI_SUCCESS)
        over = mpiio_overlay_apply(f, call);
    else
        mpiio_overlay_drop(f);
    mpiio_extents_clear(&f->own); /* the next step may write any of them again */
    f->own_lo = f->ind_lo = f->read_lo = INT64_MAX;
    f->own_hi = f->ind_hi = f->read_hi = 0;
    mpiio_copies_clear(&f->copies);
    return code != MPI_SUCCESS ? code : over;
}

int mpiio_end_step_agreed(mpiio_file_t *f, int code, const char *call, mpiio_step_end_t *e)
{
    mpiio_step_end_mine(f, e); /* before the step's end forgets them */
    int rc = mpiio_end_step(f, call);
    int failed = 0;
    rc = mpiio_agree_step_end(f, code != MPI_SUCCESS ? code : rc, call, NULL, 0, &failed, e);
    mpiio_unsynced_check(f, e, call);
    return rc;
}

/* Wait for the steps ended so far: complete, and with `drained` at the path. */
static int wait_ended(mpiio_file_t *f, int drained, const char *call)
{
    if (!f->stream || f->steps_ended == 0)
        return MPI_SUCCESS;
    int rc = fwdio_step_wait(f->stream, f->steps_ended - 1);
    if (rc != FWDIO_OK)
        return mpiio_file_error(f, rc, call);
    rc = drained ? fwdio_step_drain_wait(f->stream, f->steps_ended - 1) : FWDIO_OK;
    if (rc == FWDIO_OK && drained)
        mpiio_inflight_clear(f);
    return rc == FWDIO_OK ? MPI_SUCCESS : mpiio_drain_error(f, rc, call);
}

int mpiio_settle_ended(mpiio_file_t *f, const char *call) { return wait_ended(f, 1, call); }

void mpiio_settle_quietly(mpiio_file_t *f)
{
    if (f->stream && f->steps_ended > 0 &&
        fwdio_step_wait(f->stream, f->steps_ended - 1) == FWDIO_OK)
        (void)fwdio_step_drain_wait(f->stream, f->steps_ended - 1);
}

int mpiio_settle_all(mpiio_file_t *f, const char *call)
{
    if (!f->stream)
        return MPI_SUCCESS;
    int rc = mpiio_end_step(f, call);
    int wait = mpiio_settle_ended(f, call);
    return rc != MPI_SUCCESS ? rc : wait;
}

int mpiio_settle_durable(mpiio_file_t *f, const char *call)
{
    if (!f->stream)
        return MPI_SUCCESS;
    int rc = mpiio_end_step(f, call);
    int wait = wait_ended(f, 0, call);
    return rc != MPI_SUCCESS ? rc : wait;
}

/*
 * Where no rank wrote since the last collective call (a collective read
 * after a collective write, HDF5's every metadata read), a new step would
 * hold nothing, yet cost two more of fwdio's agreements before the wait
 * returned. A first agreement (with this rank's earlier failure) says
 * whether any rank wrote: if none did, the steps ended so far are waited
 * for; if one did, a step ends on every rank and is waited for. A second
 * agreement then makes the outcome the same everywhere, made in every
 * branch. A rank whose first agreement itself failed cannot know what the
 * others chose: it ends a step as if some rank wrote (where the others did
 * too, they wait for it, and it is the same step everywhere; where they did
 * not, the ranks' steps are out of step and fwdio fails the file at the
 * next one), waits for nothing (a step the others never end would never
 * complete), and makes the second agreement, which carries its failure to
 * every rank.
 */
int mpiio_settle_collective(mpiio_file_t *f, int drained, const char *call)
{
    int wrote = f->stream && mpiio_has_unended(f), failed = 0;
    mpiio_step_end_t e;
    mpiio_step_end_mine(f, &e);
    int rc = mpiio_agree_step_end(f, MPI_SUCCESS, call, &wrote, 1, &failed, &e);
    mpiio_unsynced_check(f, &e, call);
    if (!f->stream) /* released, or given back, on every rank alike */
        return rc;
    if (failed) /* its overlay would wait for the step: the file fails anyway */
        mpiio_overlay_drop(f);
    int settled = failed    ? mpiio_end_step(f, call)
                  : !wrote  ? wait_ended(f, drained, call)
                  : drained ? mpiio_settle_all(f, call)
                            : mpiio_settle_durable(f, call);
    return mpiio_agree_error(f, rc != MPI_SUCCESS ? rc : settled, call);
}
