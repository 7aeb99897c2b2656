/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The steps this rank ended that are not known complete yet, oldest first,
 * each with the file's bytes every rank wrote in it, [lo, hi): the bounds
 * the collective write that ended it agreed on (layer.h, mpiio_inflight_*),
 * [0, INT64_MAX) for a step ended otherwise (a sync, a close, a collective
 * read). An independent read that touches none of them (calls.c, in the
 * same walk of its extents as its test for this rank's own bytes) reads the
 * file at once: every byte it covers is in the file already, since a step's bytes
 * land only within its bounds. Steps complete in order, so the list sheds
 * its head as they do; past MPIIO_INFLIGHT_MAX entries the two oldest
 * merge into their union (a read then waits more often, never less).
 */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

void mpiio_inflight_ended(mpiio_file_t *f, uint64_t step)
{
    if (f->ninflight == MPIIO_INFLIGHT_MAX) { /* the two oldest as one */
        mpiio_inflight_t *a = &f->inflight[0], *b = &f->inflight[1];
        b->lo = a->lo < b->lo ? a->lo : b->lo;
        b->hi = a->hi > b->hi ? a->hi : b->hi;
        memmove(a, b, (size_t)(--f->ninflight) * sizeof *a);
    }
    f->inflight[f->ninflight++] = (mpiio_inflight_t){step, 0, INT64_MAX};
}

void mpiio_inflight_set(mpiio_file_t *f, uint64_t step, int64_t lo, int64_t hi)
{
    for (int i = f->ninflight - 1; i >= 0; i--) {
        if (f->inflight[i].step != step)
            continue;
        f->inflight[i].lo = lo;
        f->inflight[i].hi = hi;
        return;
    }
}

void mpiio_inflight_clear(mpiio_file_t *f) { f->ninflight = 0; }

int mpiio_inflight_pending(mpiio_file_t *f)
{
    /* Drop the steps known complete here (a failed one stays: the reads
     * that touch it wait for it and report its failure). */
    int gone = 0;
    while (gone < f->ninflight && f->stream) {
        int done = 0;
        if (fwdio_step_test(f->stream, f->inflight[gone].step, &done) != FWDIO_OK || !done)
            break;
        gone++;
    }
    if (gone > 0) {
        f->ninflight -= gone;
        memmove(f->inflight, f->inflight + gone, (size_t)f->ninflight * sizeof f->inflight[0]);
    }
    return f->ninflight > 0;
}

int mpiio_inflight_touches(const mpiio_file_t *f, int64_t off, int64_t len)
{
    for (int i = 0; i < f->ninflight; i++)
        if (off < f->inflight[i].hi && f->inflight[i].lo < off + len)
            return 1;
    return 0;
}
