/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "output_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const md_backend_t *backend_of(md_output_mode_t mode)
{
    switch (mode) {
    case MD_OUT_FWDIO: return &md_backend_fwdio;
    case MD_OUT_MPIIO: return &md_backend_mpiio;
    case MD_OUT_SERIAL: return &md_backend_serial;
    case MD_OUT_MPIIO_ASYNC: return &md_backend_mpiio_async;
    case MD_OUT_LOCAL_COPY: return &md_backend_local_copy;
    case MD_OUT_NONE: break;
    }
    return NULL;
}

int output_create(md_output_t **out, const md_output_params_t *p)
{
    md_output_t *o = calloc(1, sizeof *o);
    int ok = o != NULL;
    if (o) {
        o->p = *p;
        MPI_Comm_rank(p->comm, &o->rank);
        MPI_Comm_size(p->comm, &o->nranks);
        o->be = backend_of(p->mode);
        pack_init(&o->pack);
        ledger_init(&o->ledger, p->ckpt_base, p->resumed_from);
        if (p->dcd_path)
            dcd_header(o->dcd_header, &p->dcd);
        if (p->verify && o->be) {
            o->verify = verify_create(p->comm, p->dcd_path ? &p->dcd : NULL);
            ok = o->verify != NULL;
        }
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, p->comm);
    if (all_ok && o->be) {
        double t = MPI_Wtime();
        ok = o->be->open(o) == 0;
        o->rep.blocked += MPI_Wtime() - t;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, p->comm);
    }
    if (!all_ok) {
        if (o && o->rank == 0)
            fprintf(stderr, "mdlj: cannot start the %s output\n", md_output_mode_name(p->mode));
        output_destroy(o);
        *out = NULL;
        return -1;
    }
    *out = o;
    return 0;
}

void output_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    if (!o->be || !o->p.dcd_path)
        return;
    double t = MPI_Wtime();
    o->be->frame(o, snap, frame);
    o->rep.blocked += MPI_Wtime() - t;
    o->rep.frames++;
    if (o->verify) {
        t = MPI_Wtime();
        verify_expect_frame(o->verify, snap, frame);
        o->rep.verify_time += MPI_Wtime() - t;
    }
}

void output_checkpoint(md_output_t *o, const md_snapshot_t *snap)
{
    if (!o->be || !o->p.ckpt_base)
        return;
    ckpt_info_t info = o->p.ckpt;
    info.step = snap->step;
    char path[4096];
    int too_long = o->be->ckpt_path ? o->be->ckpt_path(o, snap->step, path, sizeof path)
                                    : ckpt_path(path, sizeof path, o->p.ckpt_base, snap->step);
    if (too_long != 0) {
        if (o->rank == 0)
            fprintf(stderr, "mdlj: checkpoint path too long: %s\n", o->p.ckpt_base);
        o->rep.failures++;
        return;
    }
    if (o->verify) {
        /* Gathered before the write, so that the expected image is there when
         * the checkpoint completes (possibly inside the backend call). */
        double t = MPI_Wtime();
        verify_expect_checkpoint(o->verify, snap, &info);
        o->rep.verify_time += MPI_Wtime() - t;
    }
    double t = MPI_Wtime();
    if (!o->be->keeps_own && ledger_started(&o->ledger, snap->step) != 0)
        fprintf(stderr, "mdlj: rank %d: out of memory tracking checkpoints; old ones are kept\n",
                o->rank);
    o->rep.checkpoints++;
    o->be->checkpoint(o, snap, &info, path);
    o->rep.blocked += MPI_Wtime() - t;
}

void output_poll(md_output_t *o)
{
    if (!o->be || !o->be->poll)
        return;
    double t = MPI_Wtime();
    o->be->poll(o);
    o->rep.blocked += MPI_Wtime() - t;
}

void output_finish(md_output_t *o, md_output_report_t *rep)
{
    if (o->be) {
        double t = MPI_Wtime();
        o->be->finish(o);
        o->rep.final_wait = MPI_Wtime() - t;
        o->rep.blocked += o->rep.final_wait;
    }
    int failures = 0;
    MPI_Allreduce(&o->rep.failures, &failures, 1, MPI_INT, MPI_MAX, o->p.comm);
    o->rep.failures = failures;
    if (o->verify) {
        double t = MPI_Wtime();
        if (o->p.dcd_path && !failures)
            verify_trajectory_file(o->verify, o->p.dcd_path, o->dcd_header);
        int64_t frames = 0, ckpts = 0;
        o->rep.verify_failures = verify_result(o->verify, &frames, &ckpts);
        o->rep.verify_time += MPI_Wtime() - t;
        if (o->rank == 0 && !o->rep.verify_failures)
            printf("mdlj: verify: %" PRId64 " trajectory frames and %" PRId64
                   " checkpoints in the files are identical to the state gathered on rank 0\n",
                   frames, ckpts);
    }
    *rep = o->rep;
}

void output_destroy(md_output_t *o)
{
    if (!o)
        return;
    if (o->be && o->be->destroy)
        o->be->destroy(o);
    verify_destroy(o->verify);
    ledger_free(&o->ledger);
    pack_free(&o->pack);
    free(o);
}

void output_checkpoint_finished(md_output_t *o, int64_t step, const char *path, int ok)
{
    if (ok)
        o->rep.checkpoints_ok++;
    else
        o->rep.failures++;
    if (o->verify) {
        double t = MPI_Wtime();
        if (ok)
            verify_checkpoint_file(o->verify, step, path);
        else
            verify_drop_checkpoint(o->verify, step);
        o->rep.verify_time += MPI_Wtime() - t;
    }
    if (!o->be->keeps_own)
        ledger_finished(&o->ledger, step, ok, o->rank == 0);
}

int output_commit_record(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                         const unsigned char header[CKPT_HEADER_BYTES], int failed,
                         unsigned char out[CKPT_COMMIT_BYTES])
{
    /* Unsigned addition modulo 2^64 is associative and commutative, so the
     * reduction order cannot change the sum. */
    uint64_t part[2] = {ckpt_partial_checksum(snap), failed ? 1u : 0u}, sum[2] = {0, 0};
    MPI_Allreduce(part, sum, 2, MPI_UINT64_T, MPI_SUM, o->p.comm);
    ckpt_commit_record(out, info, sum[0], header);
    return sum[1] != 0;
}

void output_crash_point(md_output_t *o, int64_t step)
{
    if (step != o->p.crash_at)
        return;
    if (o->rank == 0) {
        printf("mdlj: --crash-at %" PRId64 ": aborting with the checkpoint's data written and "
               "no commit record\n",
               step);
        fflush(stdout);
        /* Give data already sent a moment to reach the writers, as a real
         * crash would find some of it on disk. */
        nanosleep(&(struct timespec){.tv_nsec = 300 * 1000 * 1000}, NULL);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (;;) /* the abort ends this rank too */
        nanosleep(&(struct timespec){.tv_sec = 1}, NULL);
}

double output_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int output_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)offset);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}
