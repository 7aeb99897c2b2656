/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write locally, then copy: the way SCR and VeloC checkpoint, the baseline of
 * fwdio's node-local tier. A checkpoint's call writes this rank's part (its
 * pack: the bytes of its extents back to back) into a file of its own in the
 * node-local directory (--local-dir, "%h" the host name) and fdatasyncs it;
 * that is the local completion. A thread of this rank then copies the part
 * into the shared checkpoint file at its extents' offsets and fdatasyncs it
 * (the flush), while the simulation goes on. The next output, or the end of
 * the run, joins the copy, agrees on every rank's outcome, and rank 0 writes
 * the commit record and syncs it; the local part is removed once copied.
 * Trajectory frames are written straight to the shared file by every rank
 * (pwrite of its extents), rank 0 counting each frame in the header once all
 * ranks have written it.
 */
#define _GNU_SOURCE
#include "app_util.h"
#include "output_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One checkpoint's copy from the local part to the shared file. */
struct copy {
    int active;          /* the checkpoint waits to be finished at the next output */
    int thread_running;  /* `thread` to join */
    pthread_t thread;
    int failed;          /* this rank's part failed (local write or copy) */
    int any_failed;      /* some rank could not hand over its part (agreed) */
    md_extent_t *ext;    /* the part's extents, in pack order */
    size_t next;
    char local[4096], target[4096];
    ckpt_info_t info;
    unsigned char commit[CKPT_COMMIT_BYTES];
    double local_s, copy_s; /* seconds to write the local part, and to copy it */
    int copy_errno;
};

struct local_copy_state {
    int traj_fd;
    char dir[4096]; /* --local-dir with %h replaced */
    struct copy ck;
};

static int fail_errno(md_output_t *o, const char *what, const char *path)
{
    fprintf(stderr, "mdlj: rank %d: %s %s: %s\n", o->rank, what, path, strerror(errno));
    return -1;
}

/* The thread: the local part into the shared file at its extents' offsets. */
static void *copy_part(void *arg)
{
    struct copy *c = arg;
    double t0 = output_now();
    int in = open(c->local, O_RDONLY);
    int out = in < 0 ? -1 : open(c->target, O_WRONLY);
    size_t cap = 4u << 20;
    unsigned char *buf = out < 0 ? NULL : malloc(cap);
    int err = in < 0 || out < 0 ? errno : buf ? 0 : ENOMEM;
    uint64_t from = 0;
    for (size_t e = 0; !err && e < c->next; e++) {
        for (uint64_t done = 0; !err && done < c->ext[e].len;) {
            size_t piece = c->ext[e].len - done < cap ? (size_t)(c->ext[e].len - done) : cap;
            ssize_t got = pread(in, buf, piece, (off_t)(from + done));
            if (got <= 0)
                err = got < 0 ? errno : EIO;
            else if (output_pwrite_all(out, buf, (size_t)got, c->ext[e].offset + done) != 0)
                err = errno;
            else
                done += (uint64_t)got;
        }
        from += c->ext[e].len;
    }
    if (!err && fdatasync(out) != 0)
        err = errno;
    if (out >= 0 && close(out) != 0 && !err)
        err = errno;
    if (in >= 0)
        close(in);
    if (!err)
        unlink(c->local);
    free(buf);
    c->copy_errno = err;
    c->copy_s = output_now() - t0;
    return NULL;
}

/* Collective: the checkpoint in flight copied everywhere, committed by rank 0. */
static void finish_checkpoint(md_output_t *o, struct local_copy_state *s)
{
    struct copy *c = &s->ck;
    if (!c->active)
        return;
    if (c->thread_running) {
        pthread_join(c->thread, NULL);
        c->thread_running = 0;
        if (c->copy_errno) {
            errno = c->copy_errno;
            c->failed = fail_errno(o, "cannot copy its part into", c->target) != 0;
        }
        o->rep.ckpt_copy += c->copy_s;
    } else {
        unlink(c->local); /* not copied: the part is of no use */
    }
    int failed = c->failed, all_failed = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    output_crash_point(o, c->info.step);
    int commit = !all_failed && !c->any_failed;
    if (commit && o->rank == 0) {
        int fd = open(c->target, O_WRONLY);
        failed = fd < 0 ||
                 output_pwrite_all(fd, c->commit, CKPT_COMMIT_BYTES,
                                   ckpt_commit_offset(c->info.natoms)) != 0 ||
                 fdatasync(fd) != 0;
        if (failed)
            fail_errno(o, "cannot write the commit record of", c->target);
        if (fd >= 0)
            close(fd);
    }
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    c->active = 0;
    output_checkpoint_finished(o, c->info.step, c->target, commit && !all_failed);
}

static int local_copy_open(md_output_t *o)
{
    struct local_copy_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    o->state = s;
    s->traj_fd = -1;
    if (!o->p.local_dir || !o->p.local_dir[0]) {
        if (o->rank == 0)
            fprintf(stderr, "mdlj: --output local-copy needs --local-dir DIR\n");
        return -1;
    }
    if (app_expand_host(o->p.local_dir, s->dir, sizeof s->dir) != 0) {
        fprintf(stderr, "mdlj: rank %d: --local-dir %s: too long\n", o->rank, o->p.local_dir);
        return -1;
    }
    if (mkdir(s->dir, 0755) != 0 && errno != EEXIST)
        return fail_errno(o, "cannot make the local directory", s->dir);
    if (!o->p.dcd_path)
        return 0;
    /* Rank 0 makes and sizes the trajectory (a continued one keeps the
     * previous run's frames) before any rank opens it. */
    int failed = 0, all_failed = 0;
    if (o->rank == 0) {
        int fd = open(o->p.dcd_path, O_WRONLY | O_CREAT | (o->p.dcd.kept ? 0 : O_TRUNC), 0644);
        unsigned char header[DCD_HEADER_BYTES];
        dcd_header_of(header, &o->p.dcd, o->p.dcd.kept);
        failed = fd < 0 || ftruncate(fd, (off_t)dcd_file_bytes(&o->p.dcd)) != 0 ||
                 output_pwrite_all(fd, header, DCD_HEADER_BYTES, 0) != 0;
        if (failed)
            fail_errno(o, "cannot write", o->p.dcd_path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    if (all_failed)
        return -1;
    s->traj_fd = open(o->p.dcd_path, O_WRONLY);
    return s->traj_fd < 0 ? fail_errno(o, "cannot open", o->p.dcd_path) : 0;
}

static void local_copy_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    struct local_copy_state *s = o->state;
    finish_checkpoint(o, s);
    pack_reset(&o->pack);
    int failed = o->traj_failed ||
                 dcd_pack_frame(&o->pack, &o->p.dcd, frame, snap,
                                o->rank == 0 ? DCD_WITH_RECORDS : DCD_ATOMS_ONLY) != 0;
    const unsigned char *p = o->pack.buf;
    for (size_t e = 0; !failed && e < o->pack.next; e++) {
        if (output_pwrite_all(s->traj_fd, p, (size_t)o->pack.ext[e].len, o->pack.ext[e].offset))
            failed = fail_errno(o, "cannot write", o->p.dcd_path) != 0;
        p += o->pack.ext[e].len;
        o->rep.frame_extents++;
    }
    /* The header counts the frame once every rank has written its part. */
    int all_failed = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    if (!all_failed && o->rank == 0) {
        unsigned char header[DCD_HEADER_BYTES];
        dcd_header_of(header, &o->p.dcd, frame + 1);
        if (output_pwrite_all(s->traj_fd, header, DCD_HEADER_BYTES, 0) != 0)
            all_failed = fail_errno(o, "cannot write", o->p.dcd_path) != 0;
    }
    if (all_failed && !o->traj_failed) {
        o->traj_failed = 1;
        o->rep.failures++;
    }
}

/* This rank's part into its local file, synced. 0 or -1 (printed). */
static int write_local(md_output_t *o, const char *local)
{
    int fd = open(local, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return fail_errno(o, "cannot create", local);
    int rc = 0;
    if (output_pwrite_all(fd, o->pack.buf, o->pack.len, 0) != 0 || fdatasync(fd) != 0)
        rc = fail_errno(o, "cannot write", local);
    if (close(fd) != 0 && rc == 0)
        rc = fail_errno(o, "cannot close", local);
    return rc;
}

static void local_copy_checkpoint(md_output_t *o, const md_snapshot_t *snap,
                                  const ckpt_info_t *info, const char *path)
{
    struct local_copy_state *s = o->state;
    struct copy *c = &s->ck;
    finish_checkpoint(o, s);
    unsigned char header[CKPT_HEADER_BYTES];
    ckpt_header(header, info);
    pack_reset(&o->pack);
    int failed = ckpt_pack(&o->pack, snap, o->rank == 0 ? header : NULL) != 0;
    if (failed)
        pack_reset(&o->pack);
    c->info = *info;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    failed |= snprintf(c->target, sizeof c->target, "%s", path) >= (int)sizeof c->target ||
              snprintf(c->local, sizeof c->local, "%s/%s.%d", s->dir, base, o->rank) >=
                  (int)sizeof c->local;
    double t0 = MPI_Wtime();
    if (!failed)
        failed = write_local(o, c->local) != 0;
    c->local_s = MPI_Wtime() - t0;
    o->rep.ckpt_local += c->local_s;
    /* Rank 0 makes the shared file empty and of its size before any copy
     * starts (the commit record's agreement below orders them). */
    if (o->rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ftruncate(fd, (off_t)ckpt_file_bytes(info->natoms)) != 0)
            failed = fail_errno(o, "cannot create", path) != 0;
        if (fd >= 0)
            close(fd);
    }
    c->any_failed = output_commit_record(o, snap, info, header, failed, c->commit);
    c->failed = failed;
    c->active = 1;
    c->copy_errno = 0;
    c->copy_s = 0;
    free(c->ext);
    c->ext = NULL;
    c->next = 0;
    if (c->any_failed)
        return; /* nothing to copy: finished (failed) at the next output */
    c->ext = malloc((o->pack.next ? o->pack.next : 1) * sizeof *c->ext);
    if (!c->ext) {
        c->failed = 1;
        return;
    }
    memcpy(c->ext, o->pack.ext, o->pack.next * sizeof *c->ext);
    c->next = o->pack.next;
    o->rep.ckpt_extents += c->next;
    if (pthread_create(&c->thread, NULL, copy_part, c) != 0)
        c->failed = 1;
    else
        c->thread_running = 1;
}

static void local_copy_finish(md_output_t *o)
{
    struct local_copy_state *s = o->state;
    finish_checkpoint(o, s);
    if (s->traj_fd >= 0) {
        if (close(s->traj_fd) != 0)
            o->rep.failures++;
        s->traj_fd = -1;
    }
}

static void local_copy_destroy(md_output_t *o)
{
    struct local_copy_state *s = o->state;
    if (!s)
        return;
    if (s->ck.thread_running)
        pthread_join(s->ck.thread, NULL);
    if (s->traj_fd >= 0)
        close(s->traj_fd);
    free(s->ck.ext);
    free(s);
    o->state = NULL;
}

const md_backend_t md_backend_local_copy = {
    .open = local_copy_open,
    .frame = local_copy_frame,
    .checkpoint = local_copy_checkpoint,
    .poll = NULL,
    .finish = local_copy_finish,
    .destroy = local_copy_destroy,
};
