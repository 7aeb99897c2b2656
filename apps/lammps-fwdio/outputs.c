/* SPDX-License-Identifier: BSD-3-Clause */
#include "outputs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int lfw_output_open(lfw_output_t *o, fwdio_runtime_t *rt, int writers, int rank)
{
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = writers;
    opts.append_start = o->append_start;
    opts.pinned |= FWDIO_PIN_APPEND_START;
    opts.local_dir = o->local_dir; /* NULL: FWDIO_LOCAL_DIR, for the files with a size */
    int rc = fwdio_open(rt, o->path, o->stream ? FWDIO_SIZE_GROWS : o->size, &opts, NULL,
                        &o->file);
    if (rc != FWDIO_OK && rank == 0)
        fprintf(stderr, "lammps-fwdio: fwdio_open %s %s: %s\n", o->what, o->path,
                fwdio_strerror(rc));
    return rc;
}

int lfw_output_close(lfw_output_t *o)
{
    return fwdio_close(o->file);
}

int lfw_output_wait(lfw_output_t *o, MPI_Comm comm, int rank)
{
    int status = fwdio_wait(o->file);
    fwdio_file_stats_t st;
    memset(&st, 0, sizeof st);
    fwdio_file_stats(o->file, &st);

    int worst = status;
    MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MIN, comm); /* errors are negative */
    unsigned long long mine = st.bytes_written, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);

    if (worst != FWDIO_OK) {
        if (rank == 0)
            fprintf(stderr, "lammps-fwdio: %s %s failed: %s\n", o->what, o->path,
                    status != FWDIO_OK ? fwdio_file_error(o->file) : fwdio_strerror(worst));
        return -1;
    }
    if (!o->stream && total != o->size) {
        if (rank == 0)
            fprintf(stderr,
                    "lammps-fwdio: %s %s is incomplete: the ranks wrote %llu of its %" PRIu64
                    " bytes\n",
                    o->what, o->path, total, o->size);
        return -1;
    }
    return 0;
}

void lfw_output_free(lfw_output_t *o)
{
    fwdio_file_free(o->file);
    o->file = NULL;
    lfw_layout_free(&o->layout);
}
