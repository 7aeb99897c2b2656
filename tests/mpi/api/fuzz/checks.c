/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective checks at the end of a round: statuses, callbacks, byte counts,
 * file contents and what atomic replace leaves behind. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static const int want_ready[] = {FWDIO_OK, FWDIO_OK, FWDIO_EOPEN, FWDIO_OK, FWDIO_OK};
static const int want_final[] = {FWDIO_OK, FWDIO_EOVERLAP, FWDIO_EOPEN, FWDIO_EINVAL,
                                 FWDIO_ECOMMIT};

/* The pieces of v (sorted, tiling the file) with [a, b) cut out and given to
 * `owner`: what a commit block does to the file. Returns the new count. */
static size_t paint(const tc_extent_t *v, size_t nv, uint64_t a, uint64_t b, int owner,
                    tc_extent_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < nv; i++) {
        uint64_t lo = v[i].offset, hi = v[i].offset + v[i].len;
        uint64_t cut_lo = lo > a ? lo : a, cut_hi = hi < b ? hi : b;
        if (cut_lo >= cut_hi) {
            out[n++] = v[i];
            continue;
        }
        if (lo < cut_lo)
            out[n++] = (tc_extent_t){lo, cut_lo - lo, v[i].owner};
        out[n++] = (tc_extent_t){cut_lo, cut_hi - cut_lo, owner};
        if (cut_hi < hi)
            out[n++] = (tc_extent_t){cut_hi, hi - cut_hi, v[i].owner};
    }
    return n;
}

/* Collective: the bytes of a completed file. Each extent holds what its
 * owner got accepted (a prefix of it), the rest reads as zeros; a commit
 * block lies over whatever was there. */
static void verify_good(ffile_t *m)
{
    uint64_t *done = calloc(m->n_ext + 1, sizeof *done);
    for (size_t j = 0; j < m->n_jobs; j++)
        if (m->jobs[j].ext != SIZE_MAX)
            done[m->jobs[j].ext] = m->jobs[j].done;
    MPI_Allreduce(MPI_IN_PLACE, done, (int)m->n_ext, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    tc_extent_t *v = malloc((2 * m->n_ext + 3) * sizeof *v);
    size_t nv = 0;
    for (size_t e = 0; e < m->n_ext; e++) {
        const tc_extent_t *x = &m->ext[e];
        if (done[e] > 0)
            v[nv++] = (tc_extent_t){x->offset, done[e], x->owner};
        if (done[e] < x->len)
            v[nv++] = (tc_extent_t){x->offset + done[e], x->len - done[e], -1};
    }
    if (m->committer[0] >= 0) {
        tc_extent_t *w = malloc((nv + 3) * sizeof *w);
        nv = paint(v, nv, m->commit_off, m->commit_off + m->commit_len, m->committer[0], w);
        free(v);
        v = w;
    }
    tc_verify_extents(MPI_COMM_WORLD, m->path, m->size, m->seed, v, nv);
    free(v);
    free(done);
}

int fuzz_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Rank 0: what a finished file leaves beside it. No temporary of atomic
 * replace; a failed atomic replace leaves the target as it was (absent, or
 * the blocking directory); a failed open creates no directory. */
static void check_leftovers(const ffile_t *m)
{
    char dir[4096], tmp[4200];
    snprintf(dir, sizeof dir, "%s", m->path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    snprintf(tmp, sizeof tmp, "%s/.%s.fwdio-tmp", dir, slash + 1);
    if (m->kind == KIND_BADPATH) {
        TC_CHECK(!fuzz_exists(dir), "%s: the failed open created %s", m->name, dir);
        return;
    }
    if (!m->opts.atomic_replace)
        return;
    TC_CHECK(!fuzz_exists(tmp), "%s: temporary %s left behind", m->name, tmp);
    if (m->kind == KIND_RENAME_FAILS) {
        char keep[4160];
        snprintf(keep, sizeof keep, "%s/keep", m->path);
        TC_CHECK(fuzz_exists(keep), "%s: the directory the rename failed on lost %s", m->name, keep);
    } else if (m->kind != KIND_GOOD) {
        TC_CHECK(!fuzz_exists(m->path), "%s: failed atomic replace created %s", m->name, m->path);
    }
}

/* Collective: statuses, callbacks, byte counts and contents of every file. */
void fuzz_check_files(fuzz_t *z)
{
    for (int i = 0; i < z->nfiles; i++) {
        ffile_t *m = &z->files[i];
        tc_phase("round %d: checking %s", z->round, m->name);
        tc_cb_check(MPI_COMM_WORLD, &m->cb, m->name, want_ready[m->kind], want_final[m->kind],
                    z->mode, m->f);
        if (m->have_status)
            TC_CHECK(m->status == atomic_load(&m->cb.complete_status),
                     "%s: fwdio_wait/test gave %d (%s), the complete callback %d", m->name,
                     m->status, fwdio_strerror(m->status), atomic_load(&m->cb.complete_status));
        long total = tc_sum(MPI_COMM_WORLD, (long)m->accepted_bytes);
        if (m->f && m->kind == KIND_GOOD) {
            uint64_t wb[64] = {0}, sum = 0;
            int nw = fwdio_file_writer_bytes(m->f, wb, 64);
            for (int w = 0; w < nw && w < 64; w++)
                sum += wb[w];
            TC_CHECK(sum == (uint64_t)total,
                     "%s: the writers received %" PRIu64 " bytes, the ranks' accepted calls "
                     "carried %ld", m->name, sum, total);
        }
        if (m->kind == KIND_GOOD)
            verify_good(m);
        if (tc_rank == 0)
            check_leftovers(m);
    }
}

void fuzz_check_lents(fuzz_t *z)
{
    while (z->lents) {
        lent_t *l = z->lents;
        z->lents = l->next;
        const ffile_t *m = &z->files[l->file];
        int calls = atomic_load(&l->calls), status = atomic_load(&l->status);
        TC_CHECK(calls == 1, "%s: a lent buffer was handed back %d times by complete", m->name,
                 calls);
        if (calls == 1 && m->kind == KIND_GOOD)
            TC_CHECK(status == FWDIO_OK, "%s: lent buffer handed back with %d (%s)", m->name,
                     status, fwdio_strerror(status));
        if (calls == 1 && m->kind != KIND_GOOD)
            TC_CHECK(status == FWDIO_OK || status == atomic_load(&m->cb.complete_status),
                     "%s: lent buffer handed back with %d (%s)", m->name, status,
                     fwdio_strerror(status));
        free(l->buf);
        free(l);
    }
}
