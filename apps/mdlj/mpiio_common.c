/* SPDX-License-Identifier: BSD-3-Clause */
#include "mpiio_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int mpiio_check(md_output_t *o, int rc, const char *what, const char *path)
{
    if (rc == MPI_SUCCESS)
        return 0;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "mdlj: rank %d: %s %s: %s\n", o->rank, what, path, text);
    return -1;
}

int mpiio_view_of_pack(md_output_t *o, MPI_File fh, MPI_Info info, const char *path, int *count,
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
    *count = 0;
    if (!failed && blocks > 0) {
        MPI_Type_create_hindexed((int)blocks, lens, displs, MPI_BYTE, &filetype);
        MPI_Type_commit(&filetype);
        *count = (int)o->pack.len;
    }
    int rc = MPI_File_set_view(fh, 0, MPI_BYTE, filetype, "native", info);
    failed |= mpiio_check(o, rc, "MPI_File_set_view on", path);
    if (filetype != MPI_BYTE)
        MPI_Type_free(&filetype);
    free(lens);
    free(displs);
    *blocks_out += b;
    return failed ? -1 : 0;
}

int mpiio_files_open(md_output_t *o, mpiio_files_t *f)
{
    f->traj = f->header = MPI_FILE_NULL;
    f->info = MPI_INFO_NULL;
    if (o->p.writers > 0) {
        char value[32];
        snprintf(value, sizeof value, "%d", o->p.writers);
        MPI_Info_create(&f->info);
        MPI_Info_set(f->info, "cb_nodes", value);
    }
    if (!o->p.dcd_path)
        return 0;
    int rc = MPI_File_open(o->p.comm, o->p.dcd_path, MPI_MODE_CREATE | MPI_MODE_WRONLY, f->info,
                           &f->traj);
    if (mpiio_check(o, rc, "MPI_File_open", o->p.dcd_path))
        return -1;
    /* Size the file for every frame (a continued trajectory keeps the
     * previous run's); the header counts the frames written so far. */
    rc = MPI_File_set_size(f->traj, (MPI_Offset)dcd_file_bytes(&o->p.dcd));
    if (mpiio_check(o, rc, "MPI_File_set_size", o->p.dcd_path))
        return -1;
    if (o->rank != 0)
        return 0;
    rc = MPI_File_open(MPI_COMM_SELF, o->p.dcd_path, MPI_MODE_WRONLY, MPI_INFO_NULL, &f->header);
    if (mpiio_check(o, rc, "MPI_File_open (header)", o->p.dcd_path))
        return -1;
    return mpiio_files_count_frames(o, f, o->p.dcd.kept);
}

int mpiio_files_count_frames(md_output_t *o, mpiio_files_t *f, int64_t frames)
{
    unsigned char header[DCD_HEADER_BYTES];
    dcd_header_of(header, &o->p.dcd, frames);
    int rc = MPI_File_write_at(f->header, 0, header, DCD_HEADER_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
    return mpiio_check(o, rc, "writing the header of", o->p.dcd_path);
}

void mpiio_files_close(md_output_t *o, mpiio_files_t *f)
{
    if (f->header != MPI_FILE_NULL && MPI_File_close(&f->header) != MPI_SUCCESS)
        o->rep.failures++;
    if (f->traj != MPI_FILE_NULL) {
        int rc = MPI_File_close(&f->traj);
        if (mpiio_check(o, rc, "MPI_File_close", o->p.dcd_path))
            o->rep.failures++;
    }
}

void mpiio_files_free(mpiio_files_t *f)
{
    if (f->header != MPI_FILE_NULL)
        MPI_File_close(&f->header);
    if (f->traj != MPI_FILE_NULL)
        MPI_File_close(&f->traj);
    if (f->info != MPI_INFO_NULL)
        MPI_Info_free(&f->info);
}

int mpiio_ckpt_open(md_output_t *o, MPI_Info info, const char *path, int64_t natoms, MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(o->p.comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, fh);
    if (mpiio_check(o, rc, "MPI_File_open", path)) {
        *fh = MPI_FILE_NULL;
        return -1;
    }
    rc = MPI_File_set_size(*fh, (MPI_Offset)ckpt_file_bytes(natoms));
    return mpiio_check(o, rc, "MPI_File_set_size", path);
}

int mpiio_ckpt_seal(md_output_t *o, MPI_File *fh, MPI_Info info, const char *path,
                    int64_t natoms, const unsigned char *commit)
{
    /* Back to a plain byte view for rank 0's commit record. */
    int rc = MPI_File_set_view(*fh, 0, MPI_BYTE, MPI_BYTE, "native", info);
    int failed = mpiio_check(o, rc, "MPI_File_set_view on", path);
    if (commit && o->rank == 0) {
        rc = MPI_File_write_at(*fh, (MPI_Offset)ckpt_commit_offset(natoms), commit,
                               CKPT_COMMIT_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
        failed |= mpiio_check(o, rc, "writing the commit record of", path);
    }
    rc = MPI_File_sync(*fh);
    failed |= mpiio_check(o, rc, "MPI_File_sync", path);
    rc = MPI_File_close(fh);
    failed |= mpiio_check(o, rc, "MPI_File_close", path);
    return failed ? -1 : 0;
}
