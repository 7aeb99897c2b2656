/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ordinary PnetCDF program, for the MPI-IO layer's tests: it knows
 * nothing of fwdio. On every rank of MPI_COMM_WORLD it defines a fixed
 * variable "mass" (one value per atom) and two record variables "x" and
 * "energy" (a value per atom, and one per record), then writes --steps
 * records collectively, each rank its own slice of the atoms (rank 0 also
 * the record's energy), closes the file, reopens it read-only and checks
 * every value and the record count. The values are a function of their
 * indices, so the file is the same whatever the rank count. --independent
 * writes the records in independent data mode (ncmpi_begin_indep_data,
 * which opens the file again on MPI_COMM_SELF, and ncmpi_put_vara_double);
 * --sync calls ncmpi_sync before the close.
 *
 * Usage: pnetcdf_client FILE [--atoms N] [--steps S] [--independent] [--sync]
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

#define NC(call)                                                                     \
    do {                                                                             \
        int err_ = (call);                                                           \
        if (err_ != NC_NOERR) {                                                      \
            fprintf(stderr, "pnetcdf_client: rank %d: %s: %s\n", rank, #call,        \
                    ncmpi_strerror(err_));                                           \
            MPI_Abort(MPI_COMM_WORLD, 1);                                            \
        }                                                                            \
    } while (0)

static double xval(long step, long atom) { return step * 10000.0 + atom * 0.5; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: pnetcdf_client FILE [--atoms N] [--steps S]\n");
        MPI_Finalize();
        return 2;
    }
    const char *path = argv[1];
    long atoms = 1000, steps = 6;
    int independent = 0, sync = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--independent"))
            independent = 1;
        else if (!strcmp(argv[i], "--sync"))
            sync = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--atoms"))
            atoms = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--steps"))
            steps = atol(argv[++i]);
    }
    MPI_Offset mine = atoms / nranks + (rank < atoms % nranks);
    MPI_Offset first = rank * (atoms / nranks) + (rank < atoms % nranks ? rank : atoms % nranks);

    int nc, dim_t, dim_a, v_mass, v_x, v_e;
    NC(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
    NC(ncmpi_def_dim(nc, "time", NC_UNLIMITED, &dim_t));
    NC(ncmpi_def_dim(nc, "atom", atoms, &dim_a));
    NC(ncmpi_def_var(nc, "mass", NC_DOUBLE, 1, &dim_a, &v_mass));
    int d2[2] = {dim_t, dim_a};
    NC(ncmpi_def_var(nc, "x", NC_DOUBLE, 2, d2, &v_x));
    NC(ncmpi_def_var(nc, "energy", NC_DOUBLE, 1, &dim_t, &v_e));
    NC(ncmpi_put_att_text(nc, NC_GLOBAL, "title", 14, "pnetcdf client"));
    NC(ncmpi_enddef(nc));

    double *buf = malloc(sizeof(double) * (size_t)(mine + 1));
    for (MPI_Offset i = 0; i < mine; i++)
        buf[i] = 1.0 + (double)(first + i) / 8;
    NC(ncmpi_put_vara_double_all(nc, v_mass, &first, &mine, buf));
    if (independent)
        NC(ncmpi_begin_indep_data(nc));
    for (long s = 0; s < steps; s++) {
        MPI_Offset start[2] = {s, first}, count[2] = {1, mine};
        for (MPI_Offset i = 0; i < mine; i++)
            buf[i] = xval(s, first + i);
        MPI_Offset st = s, one = rank == 0 ? 1 : 0;
        double e = -3.5 * (double)s;
        if (independent) {
            NC(ncmpi_put_vara_double(nc, v_x, start, count, buf));
            if (rank == 0)
                NC(ncmpi_put_vara_double(nc, v_e, &st, &one, &e));
        } else {
            NC(ncmpi_put_vara_double_all(nc, v_x, start, count, buf));
            NC(ncmpi_put_vara_double_all(nc, v_e, &st, &one, &e));
        }
    }
    if (sync)
        NC(ncmpi_sync(nc));
    if (independent)
        NC(ncmpi_end_indep_data(nc));
    NC(ncmpi_close(nc));

    /* reopen and check everything, on every rank */
    long bad = 0;
    MPI_Offset nrec = 0;
    NC(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &nc));
    NC(ncmpi_inq_dimlen(nc, dim_t, &nrec));
    if (nrec != steps)
        bad++, fprintf(stderr, "pnetcdf_client: %lld records, not %ld\n", (long long)nrec, steps);
    double *all = malloc(sizeof(double) * (size_t)atoms);
    NC(ncmpi_get_var_double_all(nc, v_mass, all));
    for (long a = 0; a < atoms; a++)
        bad += all[a] != 1.0 + (double)a / 8;
    for (long s = 0; s < steps && s < nrec; s++) {
        MPI_Offset start[2] = {s, 0}, count[2] = {1, atoms};
        NC(ncmpi_get_vara_double_all(nc, v_x, start, count, all));
        for (long a = 0; a < atoms; a++)
            if (all[a] != xval(s, a) && bad++ < 3)
                fprintf(stderr, "pnetcdf_client: x[%ld][%ld] = %g\n", s, a, all[a]);
        MPI_Offset st = s, one = 1;
        double e = 0;
        NC(ncmpi_get_vara_double_all(nc, v_e, &st, &one, &e));
        bad += e != -3.5 * (double)s;
    }
    NC(ncmpi_close(nc));
    free(all);
    free(buf);
    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pnetcdf_client: %s: %d ranks, %ld atoms, %ld records: %s\n", path, nranks, atoms,
               steps, total ? "WRONG VALUES" : "every value right");
    MPI_Finalize();
    return total ? 1 : 0;
}
