/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Serial output, the way many MD codes start: every output gathers all atoms
 * to rank 0 (MPI_Gatherv), which formats the whole frame or checkpoint and
 * writes it with pwrite. A checkpoint's data is fdatasync'd before its commit
 * record is written and synced in turn.
 */
#define _POSIX_C_SOURCE 200809L
#include "gather.h"
#include "output_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct serial_state {
    int traj_fd; /* rank 0 */
    md_gathered_t gathered;
    unsigned char *image; /* rank 0: one frame or checkpoint */
    size_t image_cap;
};

static int fail_errno(const char *what, const char *path)
{
    fprintf(stderr, "mdlj: %s %s: %s\n", what, path, strerror(errno));
    return -1;
}

static unsigned char *image_buffer(struct serial_state *s, uint64_t len)
{
    if (len > s->image_cap) {
        unsigned char *p = realloc(s->image, (size_t)len);
        if (!p)
            return NULL;
        s->image = p;
        s->image_cap = (size_t)len;
    }
    return s->image;
}

static int serial_open(md_output_t *o)
{
    struct serial_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    o->state = s;
    s->traj_fd = -1;
    if (!o->p.dcd_path || o->rank != 0)
        return 0;
    /* A continued trajectory keeps the previous run's frames. */
    s->traj_fd = open(o->p.dcd_path, O_WRONLY | O_CREAT | (o->p.dcd.kept ? 0 : O_TRUNC), 0644);
    if (s->traj_fd < 0)
        return fail_errno("cannot create", o->p.dcd_path);
    /* The header counts the frames written so far, and each frame after it
     * is written, so a run cut short leaves a header that tells the truth. */
    unsigned char header[DCD_HEADER_BYTES];
    dcd_header_of(header, &o->p.dcd, o->p.dcd.kept);
    if (ftruncate(s->traj_fd, (off_t)dcd_file_bytes(&o->p.dcd)) != 0 ||
        output_pwrite_all(s->traj_fd, header, DCD_HEADER_BYTES, 0) != 0)
        return fail_errno("cannot write", o->p.dcd_path);
    return 0;
}

static void serial_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    struct serial_state *s = o->state;
    int failed = gather_snapshot(o->p.comm, snap, &s->gathered) != 0;
    if (o->rank != 0 || o->traj_failed)
        return;
    uint64_t len = dcd_frame_bytes(o->p.dcd.natoms);
    unsigned char *image = failed ? NULL : image_buffer(s, len);
    if (!image) {
        fprintf(stderr, "mdlj: trajectory frame %" PRId64 ": out of memory on rank 0\n", frame);
        failed = 1;
    } else {
        dcd_frame_image(image, &o->p.dcd, s->gathered.id, s->gathered.x, s->gathered.n);
        unsigned char header[DCD_HEADER_BYTES];
        dcd_header_of(header, &o->p.dcd, frame + 1);
        failed = (output_pwrite_all(s->traj_fd, image, len, dcd_frame_offset(&o->p.dcd, frame)) != 0 ||
                  output_pwrite_all(s->traj_fd, header, DCD_HEADER_BYTES, 0) != 0) &&
                 fail_errno("cannot write", o->p.dcd_path);
        o->rep.frame_extents++;
    }
    if (failed) {
        o->traj_failed = 1;
        o->rep.failures++;
    }
}

/* Rank 0: the whole checkpoint, data synced before the commit record. 0 or -1. */
static int write_checkpoint(md_output_t *o, const unsigned char *image, const ckpt_info_t *info,
                            const char *path)
{
    uint64_t commit_at = ckpt_commit_offset(info->natoms);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return fail_errno("cannot create", path);
    int rc = 0;
    if (output_pwrite_all(fd, image, (size_t)commit_at, 0) != 0 || fdatasync(fd) != 0)
        rc = fail_errno("cannot write", path);
    o->rep.ckpt_extents++;
    if (rc == 0) {
        output_crash_point(o, info->step);
        if (output_pwrite_all(fd, image + commit_at, CKPT_COMMIT_BYTES, commit_at) != 0 ||
            fdatasync(fd) != 0)
            rc = fail_errno("cannot write the commit record of", path);
    }
    if (close(fd) != 0 && rc == 0)
        rc = fail_errno("cannot close", path);
    return rc;
}

static void serial_checkpoint(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                              const char *path)
{
    struct serial_state *s = o->state;
    int failed = gather_snapshot(o->p.comm, snap, &s->gathered) != 0;
    if (o->rank == 0) {
        unsigned char *image = failed ? NULL : image_buffer(s, ckpt_file_bytes(info->natoms));
        if (!image) {
            fprintf(stderr, "mdlj: checkpoint %s: out of memory on rank 0\n", path);
            failed = 1;
        } else {
            ckpt_image(image, info, s->gathered.id, s->gathered.x, s->gathered.v, s->gathered.n);
            failed = write_checkpoint(o, image, info, path) != 0;
        }
    } else {
        /* Rank 0 may abort in there; the others wait to be told the outcome. */
        output_crash_point(o, info->step);
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, o->p.comm);
    output_checkpoint_finished(o, info->step, path, !failed);
}

static void serial_finish(md_output_t *o)
{
    struct serial_state *s = o->state;
    if (s->traj_fd >= 0) {
        if (close(s->traj_fd) != 0) {
            fail_errno("cannot close", o->p.dcd_path);
            o->rep.failures++;
        }
        s->traj_fd = -1;
    }
}

static void serial_destroy(md_output_t *o)
{
    struct serial_state *s = o->state;
    if (!s)
        return;
    if (s->traj_fd >= 0)
        close(s->traj_fd);
    gather_free(&s->gathered);
    free(s->image);
    free(s);
    o->state = NULL;
}

const md_backend_t md_backend_serial = {
    .open = serial_open,
    .frame = serial_frame,
    .checkpoint = serial_checkpoint,
    .poll = NULL,
    .finish = serial_finish,
    .destroy = serial_destroy,
};
