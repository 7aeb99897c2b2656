/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output through nonblocking MPI-IO collectives, the best asynchronous peer
 * of fwdio: a frame or a checkpoint is handed to MPI_File_iwrite_at_all
 * through the same file view as out_mpiio.c, and the call returns; every
 * step tests the request (MPI_Test, so that an MPI that moves I/O only inside
 * its calls can); the next output, or the end of the run, waits for it. Only
 * then is a frame counted in the header, and a checkpoint synced, given its
 * commit record by rank 0, synced again and closed, as out_mpiio.c does
 * before its call returns. One frame and one checkpoint may be in flight;
 * their bytes stay in a pack of their own until they are written.
 */
#include "mpiio_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A write in flight: its request, the pack its bytes are in, and whether it
 * failed on this rank. */
struct in_flight {
    int active;
    MPI_Request req;
    md_pack_t pack;
    int failed;
};

struct async_state {
    mpiio_files_t f;
    struct in_flight frame;
    int64_t frame_number;
    struct in_flight ckpt;
    MPI_File ckpt_fh;
    ckpt_info_t ckpt_info;
    char ckpt_path[4096];
    unsigned char commit[CKPT_COMMIT_BYTES];
    int ckpt_any_failed; /* some rank could not hand over its part (agreed) */
};

/* Collective: o->pack written through fh's view by MPI_File_iwrite_at_all;
 * the pack moves into `w` (o->pack takes w's idle buffer) and stays there
 * until the write is waited for. */
static void start_write(md_output_t *o, struct in_flight *w, MPI_File fh, MPI_Info info,
                        const char *path, uint64_t *blocks)
{
    int count = 0;
    w->failed = mpiio_view_of_pack(o, fh, info, path, &count, blocks) != 0;
    md_pack_t idle = w->pack;
    w->pack = o->pack;
    o->pack = idle;
    int rc = MPI_File_iwrite_at_all(fh, 0, w->pack.buf, count, MPI_BYTE, &w->req);
    if (mpiio_check(o, rc, "MPI_File_iwrite_at_all on", path)) {
        w->failed = 1;
        w->req = MPI_REQUEST_NULL;
    }
    w->active = 1;
}

/* Waits for w's write; 0, or -1 when it failed on this rank. */
static int wait_write(md_output_t *o, struct in_flight *w, const char *path)
{
    MPI_Status st;
    int rc = MPI_Wait(&w->req, &st);
    w->failed |= mpiio_check(o, rc, "MPI_Wait for MPI_File_iwrite_at_all on", path);
    w->active = 0;
    return w->failed ? -1 : 0;
}

/* Collective: the frame in flight written and counted in the header. */
static void finish_frame(md_output_t *o, struct async_state *s)
{
    if (!s->frame.active)
        return;
    int failed = wait_write(o, &s->frame, o->p.dcd_path) != 0;
    if (!failed && o->rank == 0)
        failed = mpiio_files_count_frames(o, &s->f, s->frame_number + 1) != 0;
    if (failed && !o->traj_failed) {
        o->traj_failed = 1;
        o->rep.failures++;
    }
}

/* Collective: the checkpoint in flight written, synced, committed, closed. */
static void finish_checkpoint(md_output_t *o, struct async_state *s)
{
    if (!s->ckpt.active)
        return;
    const char *path = s->ckpt_path;
    int failed = s->ckpt_fh == MPI_FILE_NULL;
    if (!failed) {
        failed = wait_write(o, &s->ckpt, path) != 0;
        int rc = MPI_File_sync(s->ckpt_fh);
        failed |= mpiio_check(o, rc, "MPI_File_sync", path);
    }
    /* The commit record needs every rank's data: agree first. */
    int all_failed = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    output_crash_point(o, s->ckpt_info.step);
    int commit = !all_failed && !s->ckpt_any_failed;
    if (s->ckpt_fh != MPI_FILE_NULL)
        failed |= mpiio_ckpt_seal(o, &s->ckpt_fh, s->f.info, path, s->ckpt_info.natoms,
                                  commit ? s->commit : NULL) != 0;
    s->ckpt.active = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    output_checkpoint_finished(o, s->ckpt_info.step, path, commit && !all_failed);
}

static int async_open(md_output_t *o)
{
    struct async_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    o->state = s;
    pack_init(&s->frame.pack);
    pack_init(&s->ckpt.pack);
    s->frame.req = s->ckpt.req = MPI_REQUEST_NULL;
    s->ckpt_fh = MPI_FILE_NULL;
    return mpiio_files_open(o, &s->f);
}

static void async_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    struct async_state *s = o->state;
    finish_frame(o, s);
    finish_checkpoint(o, s);
    pack_reset(&o->pack);
    if (dcd_pack_frame(&o->pack, &o->p.dcd, frame, snap,
                       o->rank == 0 ? DCD_WITH_RECORDS : DCD_ATOMS_ONLY) != 0)
        pack_reset(&o->pack); /* joins the collective with nothing; counted when waited */
    s->frame_number = frame;
    start_write(o, &s->frame, s->f.traj, s->f.info, o->p.dcd_path, &o->rep.frame_extents);
}

static void async_checkpoint(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                             const char *path)
{
    struct async_state *s = o->state;
    finish_frame(o, s);
    finish_checkpoint(o, s);
    unsigned char header[CKPT_HEADER_BYTES];
    ckpt_header(header, info);
    pack_reset(&o->pack);
    int failed = ckpt_pack(&o->pack, snap, o->rank == 0 ? header : NULL) != 0;
    if (failed)
        pack_reset(&o->pack);
    s->ckpt_info = *info;
    snprintf(s->ckpt_path, sizeof s->ckpt_path, "%s", path);
    failed |= mpiio_ckpt_open(o, s->f.info, path, info->natoms, &s->ckpt_fh) != 0;
    /* The checksum is of this snapshot, which the next step changes. */
    s->ckpt_any_failed = output_commit_record(o, snap, info, header, failed, s->commit);
    if (s->ckpt_fh != MPI_FILE_NULL)
        start_write(o, &s->ckpt, s->ckpt_fh, s->f.info, path, &o->rep.ckpt_extents);
    else
        s->ckpt.active = 1; /* finished (failed) at the next output */
}

/* Not collective: MPI moves the writes on inside its calls. */
static void async_poll(md_output_t *o)
{
    struct async_state *s = o->state;
    int done;
    if (s->frame.active && s->frame.req != MPI_REQUEST_NULL)
        MPI_Test(&s->frame.req, &done, MPI_STATUS_IGNORE);
    if (s->ckpt.active && s->ckpt.req != MPI_REQUEST_NULL)
        MPI_Test(&s->ckpt.req, &done, MPI_STATUS_IGNORE);
}

static void async_finish(md_output_t *o)
{
    struct async_state *s = o->state;
    finish_frame(o, s);
    finish_checkpoint(o, s);
    mpiio_files_close(o, &s->f);
}

static void async_destroy(md_output_t *o)
{
    struct async_state *s = o->state;
    if (!s)
        return;
    if (s->frame.req != MPI_REQUEST_NULL)
        MPI_Wait(&s->frame.req, MPI_STATUS_IGNORE);
    if (s->ckpt.req != MPI_REQUEST_NULL)
        MPI_Wait(&s->ckpt.req, MPI_STATUS_IGNORE);
    if (s->ckpt_fh != MPI_FILE_NULL)
        MPI_File_close(&s->ckpt_fh);
    mpiio_files_free(&s->f);
    pack_free(&s->frame.pack);
    pack_free(&s->ckpt.pack);
    free(s);
    o->state = NULL;
}

const md_backend_t md_backend_mpiio_async = {
    .open = async_open,
    .frame = async_frame,
    .checkpoint = async_checkpoint,
    .poll = async_poll,
    .finish = async_finish,
    .destroy = async_destroy,
};
