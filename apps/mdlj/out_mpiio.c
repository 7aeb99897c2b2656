/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output through MPI-IO collectives, the baseline fwdio is measured against:
 * every rank describes its extents (the same runs fwdio writes) with an
 * hindexed file view and all ranks call MPI_File_write_at_all together. A
 * checkpoint is written, synced (MPI_File_sync), then given its commit record
 * by rank 0 and synced again, all before the call returns.
 */
#include "mpiio_common.h"

#include <stdio.h>
#include <stdlib.h>

struct mpiio_state {
    mpiio_files_t f;
};

/*
 * Collective: write o->pack through a file view made of its extents. 0 or -1.
 */
static int write_pack(md_output_t *o, MPI_File fh, MPI_Info info, const char *path,
                      uint64_t *blocks_out)
{
    int count = 0;
    int failed = mpiio_view_of_pack(o, fh, info, path, &count, blocks_out) != 0;
    int rc = MPI_File_write_at_all(fh, 0, o->pack.buf, count, MPI_BYTE, MPI_STATUS_IGNORE);
    failed |= mpiio_check(o, rc, "MPI_File_write_at_all on", path);
    return failed ? -1 : 0;
}

static int mpiio_open(md_output_t *o)
{
    struct mpiio_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    o->state = s;
    return mpiio_files_open(o, &s->f);
}

static void mpiio_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    struct mpiio_state *s = o->state;
    pack_reset(&o->pack);
    if (dcd_pack_frame(&o->pack, &o->p.dcd, frame, snap,
                       o->rank == 0 ? DCD_WITH_RECORDS : DCD_ATOMS_ONLY) != 0)
        pack_reset(&o->pack); /* joins the collective with nothing; counted below */
    int failed = write_pack(o, s->f.traj, s->f.info, o->p.dcd_path, &o->rep.frame_extents) != 0;
    if (!failed && o->rank == 0) /* the frame is written: the header counts it */
        failed = mpiio_files_count_frames(o, &s->f, frame + 1) != 0;
    if (failed && !o->traj_failed) {
        o->traj_failed = 1;
        o->rep.failures++;
    }
}

static void mpiio_checkpoint(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                             const char *path)
{
    struct mpiio_state *s = o->state;
    unsigned char header[CKPT_HEADER_BYTES], commit[CKPT_COMMIT_BYTES];
    ckpt_header(header, info);
    pack_reset(&o->pack);
    int failed = ckpt_pack(&o->pack, snap, o->rank == 0 ? header : NULL) != 0;
    if (failed)
        pack_reset(&o->pack);
    MPI_File fh;
    failed |= mpiio_ckpt_open(o, s->f.info, path, info->natoms, &fh) != 0;
    if (fh != MPI_FILE_NULL) {
        failed |= write_pack(o, fh, s->f.info, path, &o->rep.ckpt_extents);
        int rc = MPI_File_sync(fh);
        failed |= mpiio_check(o, rc, "MPI_File_sync", path);
    }
    int any_failed = output_commit_record(o, snap, info, header, failed, commit);
    output_crash_point(o, info->step);
    if (fh != MPI_FILE_NULL)
        failed |= mpiio_ckpt_seal(o, &fh, s->f.info, path, info->natoms,
                                  any_failed ? NULL : commit) != 0;
    int all_failed = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    output_checkpoint_finished(o, info->step, path, !all_failed && !any_failed);
}

static void mpiio_finish(md_output_t *o)
{
    struct mpiio_state *s = o->state;
    mpiio_files_close(o, &s->f);
}

static void mpiio_destroy(md_output_t *o)
{
    struct mpiio_state *s = o->state;
    if (!s)
        return;
    mpiio_files_free(&s->f);
    free(s);
    o->state = NULL;
}

const md_backend_t md_backend_mpiio = {
    .open = mpiio_open,
    .frame = mpiio_frame,
    .checkpoint = mpiio_checkpoint,
    .poll = NULL,
    .finish = mpiio_finish,
    .destroy = mpiio_destroy,
};
