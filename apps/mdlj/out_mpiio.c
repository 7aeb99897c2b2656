/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output through MPI-IO collectives, the baseline fwdio is measured against:
 * every rank describes its extents (the same runs fwdio writes) with an
 * hindexed file view and all ranks call MPI_File_write_at_all together. A
 * checkpoint is written, synced (MPI_File_sync), then given its commit record
 * by rank 0 and synced again, all before the call returns.
 */
#include "output_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

struct mpiio_state {
    MPI_File traj;
    MPI_File header; /* rank 0: the trajectory again, for its header (no view) */
    MPI_Info info; /* cb_nodes when --writers is given */
};

static int check(md_output_t *o, int rc, const char *what, const char *path)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "mdlj: rank %d: %s %s: %s\n", o->rank, what, path, text);
    return -1;
}

/*
 * Collective: write o->pack through a file view made of its extents. Extents
 * longer than INT_MAX are split into several blocks. 0 or -1.
 */
static int write_pack(md_output_t *o, MPI_File fh, MPI_Info info, const char *path,
                      uint64_t *blocks_out)
{
    size_t blocks = 0;
    for (size_t e = 0; e < o->pack.next; e++)
        blocks += (size_t)((o->pack.ext[e].len + INT_MAX - 1) / INT_MAX);
    int *lens = malloc((blocks ? blocks : 1) * sizeof *lens);
    MPI_Aint *displs = malloc((blocks ? blocks : 1) * sizeof *displs);
    int failed = !lens || !displs || o->pack.len > INT_MAX;
    size_t b = 0;
    for (size_t e = 0; !failed && e < o->pack.next; e++) {
        uint64_t off = o->pack.ext[e].offset, left = o->pack.ext[e].len;
        while (left > 0) {
            uint64_t piece = left > INT_MAX ? INT_MAX : left;
            lens[b] = (int)piece;
            displs[b] = (MPI_Aint)off;
            b++;
            off += piece;
            left -= piece;
        }
    }
    if (failed)
        fprintf(stderr, "mdlj: rank %d: cannot describe %zu bytes in %zu blocks for MPI-IO\n",
                o->rank, o->pack.len, blocks);
    /* A rank with nothing to write (or that failed) still joins the collective. */
    MPI_Datatype filetype = MPI_BYTE;
    int count = 0;
    if (!failed && blocks > 0) {
        MPI_Type_create_hindexed((int)blocks, lens, displs, MPI_BYTE, &filetype);
        MPI_Type_commit(&filetype);
        count = (int)o->pack.len;
    }
    int rc = MPI_File_set_view(fh, 0, MPI_BYTE, filetype, "native", info);
    failed |= check(o, rc, "MPI_File_set_view on", path);
    rc = MPI_File_write_at_all(fh, 0, o->pack.buf, count, MPI_BYTE, MPI_STATUS_IGNORE);
    failed |= check(o, rc, "MPI_File_write_at_all on", path);
    if (filetype != MPI_BYTE)
        MPI_Type_free(&filetype);
    free(lens);
    free(displs);
    *blocks_out += b;
    return failed ? -1 : 0;
}

static int mpiio_open(md_output_t *o)
{
    struct mpiio_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    o->state = s;
    s->traj = s->header = MPI_FILE_NULL;
    s->info = MPI_INFO_NULL;
    if (o->p.writers > 0) {
        char value[32];
        snprintf(value, sizeof value, "%d", o->p.writers);
        MPI_Info_create(&s->info);
        MPI_Info_set(s->info, "cb_nodes", value);
    }
    if (!o->p.dcd_path)
        return 0;
    int rc = MPI_File_open(o->p.comm, o->p.dcd_path, MPI_MODE_CREATE | MPI_MODE_WRONLY, s->info,
                           &s->traj);
    if (check(o, rc, "MPI_File_open", o->p.dcd_path))
        return -1;
    /* Size the file for every frame (a continued trajectory keeps the
     * previous run's); the header counts the frames written so far. */
    rc = MPI_File_set_size(s->traj, (MPI_Offset)dcd_file_bytes(&o->p.dcd));
    if (check(o, rc, "MPI_File_set_size", o->p.dcd_path))
        return -1;
    if (o->rank == 0) {
        unsigned char header[DCD_HEADER_BYTES];
        dcd_header_of(header, &o->p.dcd, o->p.dcd.kept);
        rc = MPI_File_open(MPI_COMM_SELF, o->p.dcd_path, MPI_MODE_WRONLY, MPI_INFO_NULL,
                           &s->header);
        if (check(o, rc, "MPI_File_open (header)", o->p.dcd_path))
            return -1;
        rc = MPI_File_write_at(s->header, 0, header, DCD_HEADER_BYTES, MPI_BYTE,
                               MPI_STATUS_IGNORE);
        if (check(o, rc, "writing the header of", o->p.dcd_path))
            return -1;
    }
    return 0;
}

static void mpiio_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    struct mpiio_state *s = o->state;
    pack_reset(&o->pack);
    if (dcd_pack_frame(&o->pack, &o->p.dcd, frame, snap,
                       o->rank == 0 ? DCD_WITH_RECORDS : DCD_ATOMS_ONLY) != 0)
        pack_reset(&o->pack); /* joins the collective with nothing; counted below */
    int failed = write_pack(o, s->traj, s->info, o->p.dcd_path, &o->rep.frame_extents) != 0;
    if (!failed && o->rank == 0) { /* the frame is written: the header counts it */
        unsigned char header[DCD_HEADER_BYTES];
        dcd_header_of(header, &o->p.dcd, frame + 1);
        failed = check(o, MPI_File_write_at(s->header, 0, header, DCD_HEADER_BYTES, MPI_BYTE,
                                            MPI_STATUS_IGNORE),
                       "writing the header of", o->p.dcd_path);
    }
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
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(o->p.comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, s->info, &fh);
    int opened = !check(o, rc, "MPI_File_open", path);
    if (opened) {
        rc = MPI_File_set_size(fh, (MPI_Offset)ckpt_file_bytes(info->natoms));
        failed |= check(o, rc, "MPI_File_set_size", path);
        failed |= write_pack(o, fh, s->info, path, &o->rep.ckpt_extents);
        rc = MPI_File_sync(fh);
        failed |= check(o, rc, "MPI_File_sync", path);
    } else {
        failed = 1;
    }
    int any_failed = output_commit_record(o, snap, info, header, failed, commit);
    output_crash_point(o, info->step);
    if (opened) {
        /* Back to a plain byte view for rank 0's commit record. */
        rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", s->info);
        failed |= check(o, rc, "MPI_File_set_view on", path);
        if (!any_failed && o->rank == 0) {
            rc = MPI_File_write_at(fh, (MPI_Offset)ckpt_commit_offset(info->natoms), commit,
                                   CKPT_COMMIT_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
            failed |= check(o, rc, "writing the commit record of", path);
        }
        rc = MPI_File_sync(fh);
        failed |= check(o, rc, "MPI_File_sync", path);
        rc = MPI_File_close(&fh);
        failed |= check(o, rc, "MPI_File_close", path);
    }
    int all_failed = 0;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_LOR, o->p.comm);
    output_checkpoint_finished(o, info->step, path, !all_failed && !any_failed);
}

static void mpiio_finish(md_output_t *o)
{
    struct mpiio_state *s = o->state;
    if (s->header != MPI_FILE_NULL && MPI_File_close(&s->header) != MPI_SUCCESS)
        o->rep.failures++;
    if (s->traj != MPI_FILE_NULL) {
        int rc = MPI_File_close(&s->traj);
        if (check(o, rc, "MPI_File_close", o->p.dcd_path))
            o->rep.failures++;
    }
}

static void mpiio_destroy(md_output_t *o)
{
    struct mpiio_state *s = o->state;
    if (!s)
        return;
    if (s->header != MPI_FILE_NULL)
        MPI_File_close(&s->header);
    if (s->traj != MPI_FILE_NULL)
        MPI_File_close(&s->traj);
    if (s->info != MPI_INFO_NULL)
        MPI_Info_free(&s->info);
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
