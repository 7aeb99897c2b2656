/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reads that may have missed another rank's writes (FWDIO_VERBOSE). An
 * independent write that goes to fwdio reaches the file some time after
 * its call returns, so another rank's independent read of those bytes
 * before the next collective call on the file (with only a barrier
 * between, no MPI_File_sync) may read what the file held before: MPI leaves
 * that read undefined in nonatomic mode, MPI-IO over a POSIX file system
 * returns the new bytes (README.md, "MPI's consistency rules"). A read
 * cannot know of such writes when it is made; the call that ends the step
 * can: its round agrees on the bounds of the bytes the ranks wrote
 * independently in the step and which ranks did (mpiio_agree_step_end),
 * and a rank whose reads in the step touched them, where another rank wrote
 * them, says so (its reads through another handle of the path count in
 * this handle's step too). Bounds, not byte sets: a read between two such writes of
 * one rank is named too ("may"); a read of this rank's own bytes of the
 * step is not (it sees them: readback.c). A write through a handle that
 * only its own process has (opened on MPI_COMM_SELF) reaches no round of
 * the reader's: a read of it is not named.
 */
#include "layer.h"

#include <stdio.h>

void mpiio_step_end_mine(const mpiio_file_t *f, mpiio_step_end_t *e)
{
    const int wrote = f->ind_lo < f->ind_hi;
    *e = (mpiio_step_end_t){.lo = f->own_lo,
                            .hi = f->own_hi,
                            .ind_lo = f->ind_lo,
                            .ind_hi = f->ind_hi,
                            .first = wrote ? f->rank : INT64_MAX,
                            .last = wrote ? f->rank : -1,
                            .read_lo = f->read_lo,
                            .read_hi = f->read_hi,
                            .read_call = f->read_call};
}

typedef struct read_bounds {
    const mpiio_extents_t *own; /* the handle's own bytes of its step */
    int64_t lo, hi;
} read_bounds_t;

static int note_extent(void *arg, int64_t off, int64_t len, int64_t data_pos)
{
    (void)data_pos;
    read_bounds_t *b = arg;
    if (len <= 0 || mpiio_extents_cover(b->own, off, off + len))
        return 0; /* this rank's own bytes of the step: it reads them */
    b->lo = off < b->lo ? off : b->lo;
    b->hi = off + len > b->hi ? off + len : b->hi;
    return 0;
}

/* The read's bytes (through f's view) kept in handle h's step. */
static void note_read(mpiio_file_t *h, mpiio_file_t *f, int64_t pos, int64_t len,
                      const char *call)
{
    if (h->said_unsynced_read)
        return;
    read_bounds_t b = {.own = &h->own, .lo = INT64_MAX, .hi = 0};
    (void)mpiio_view_map(&f->view, pos, len, note_extent, &b);
    if (b.lo >= b.hi)
        return;
    if (h->read_lo >= h->read_hi)
        h->read_call = call;
    h->read_lo = b.lo < h->read_lo ? b.lo : h->read_lo;
    h->read_hi = b.hi > h->read_hi ? b.hi : h->read_hi;
}

void mpiio_unsynced_read(mpiio_file_t *f, int64_t pos, int64_t len, const char *call)
{
    if (len <= 0)
        return;
    note_read(f, f, pos, len, call);
    /* and in the step of every other handle of the path here: another rank
     * may have written through that one (PnetCDF's header, written by rank
     * 0 through the collective handle, read by every rank through its
     * MPI_COMM_SELF one) */
    mpiio_file_t *alias[MPIIO_ALIASES_MAX];
    size_t n = mpiio_aliases(f, alias, MPIIO_ALIASES_MAX);
    for (size_t i = 0; i < n; i++)
        note_read(alias[i], f, pos, len, call);
}

void mpiio_unsynced_check(mpiio_file_t *f, const mpiio_step_end_t *e, const char *call)
{
    const int64_t lo = e->read_lo, hi = e->read_hi;
    if (lo >= hi || f->said_unsynced_read || e->ind_lo >= e->ind_hi)
        return;
    if (hi <= e->ind_lo || e->ind_hi <= lo) /* none of the reads touched them */
        return;
    if (e->first == f->rank && e->last == f->rank) /* written by this rank alone */
        return;
    f->said_unsynced_read = 1;
    char who[64];
    if (e->first == e->last)
        snprintf(who, sizeof who, "rank %lld", (long long)e->first);
    else
        snprintf(who, sizeof who, "ranks %lld to %lld", (long long)e->first, (long long)e->last);
    mpiio_say("%s: this rank's %s read bytes within [%lld, %lld) and, since the last collective "
              "call on the file, %s wrote bytes within [%lld, %lld) independently (found at %s): "
              "such writes may still have been on their way to fwdio's writers, and a read of "
              "them then returns what the file held before (MPI's rule: MPI_File_sync, a "
              "barrier and MPI_File_sync between a write and another rank's read of it; with "
              "FWDIO_MPIIO_READBACK=0 every independent write is in the file when its call "
              "returns, as with MPI-IO)",
              f->path, e->read_call ? e->read_call : "independent read", (long long)lo,
              (long long)hi, who, (long long)e->ind_lo, (long long)e->ind_hi, call);
}
