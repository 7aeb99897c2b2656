/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An ordinary parallel HDF5 program, for the MPI-IO layer's tests: it knows
 * nothing of fwdio. It writes, on every rank of MPI_COMM_WORLD:
 *   /contiguous  a 2-D double dataset, a block of rows per rank, written
 *                collectively;
 *   /chunked     a chunked, extendible 2-D dataset, grown by --steps
 *                collective writes of a block of rows per rank each
 *                (H5Dset_extent before every step);
 *   /independent a 1-D int dataset, an interleaved hyperslab per rank,
 *                written independently;
 *   an attribute "steps" on the file's root group,
 * flushes the file, reads /contiguous back collectively in the same open
 * (read after write), closes it, reopens it read-only and checks every value
 * of every dataset (each rank a share of the rows, mostly written by another
 * rank). The values are a function of their indices, so the file
 * is the same whatever the rank count.
 *
 * Usage: hdf5_client FILE [--rows R] [--cols C] [--steps S] [--compute SEC]
 *                         [--no-output] [--no-fill] [--leave-open]
 * --leave-open writes everything, then calls MPI_Finalize with the file and
 * its datasets still open: HDF5 closes them from its MPI_COMM_SELF attribute
 * callback inside MPI_Finalize (nothing is read back; the test compares the
 * file with the one written without the layer).
 * --compute SEC spins SEC seconds of arithmetic before every step (a
 * simulation's work between outputs); --no-output does the same work and
 * writes nothing (the baseline of a time to solution); --no-fill asks HDF5
 * not to write fill values into chunks it allocates (H5D_FILL_TIME_NEVER:
 * each chunk's bytes are then written once). The last line says
 * the time to solution (from the start to the return of H5Fclose, max over
 * ranks) and the time blocked in the HDF5 calls that write (H5Dwrite,
 * H5Dset_extent, H5Fflush, H5Fclose; max over ranks).
 * Exit 0 when every value read back is right; 1 with a message otherwise.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;
static double blocked; /* seconds in the HDF5 calls that write */
static volatile double sink;

/* SEC seconds of arithmetic, as a simulation step would do. */
static void compute(double sec)
{
    double end = MPI_Wtime() + sec, x = 1.0;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

#define TIMED(call)                    \
    do {                               \
        double t0_ = MPI_Wtime();      \
        call;                          \
        blocked += MPI_Wtime() - t0_;  \
    } while (0)

#define CHECK(cond, what)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "hdf5_client: rank %d: %s failed\n", rank, what);  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                      \
        }                                                                      \
    } while (0)

static double value(long row, long col, int which) { return which * 1e6 + row * 1000.0 + col; }

static hid_t fapl(void)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(p >= 0 && H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "fapl");
    return p;
}

static hid_t xfer(H5FD_mpio_xfer_t mode)
{
    hid_t p = H5Pcreate(H5P_DATASET_XFER);
    CHECK(p >= 0 && H5Pset_dxpl_mpio(p, mode) >= 0, "dxpl");
    return p;
}

/* The file space of dataset d with rows [r0, r0 + n) x cols selected, and
 * a memory space of that shape; both select nothing when n is 0 (a rank
 * with no rows still joins a collective call). */
static void select_rows(hid_t d, long r0, long n, long cols, hid_t *fs, hid_t *ms)
{
    hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)n, (hsize_t)cols};
    *fs = H5Dget_space(d);
    CHECK(H5Sselect_hyperslab(*fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0, "select");
    *ms = H5Screate_simple(2, count, NULL);
    if (n == 0) {
        H5Sselect_none(*fs);
        H5Sselect_none(*ms);
    }
}

/* Write rows [r0, r0 + n) x cols of `which` into dataset d (collectively). */
static void write_rows(hid_t d, hid_t dxpl, long r0, long n, long cols, int which)
{
    double *buf = malloc(sizeof(double) * (size_t)(n * cols + 1));
    CHECK(buf, "malloc");
    for (long i = 0; i < n; i++)
        for (long j = 0; j < cols; j++)
            buf[i * cols + j] = value(r0 + i, j, which);
    hid_t fs, ms;
    select_rows(d, r0, n, cols, &fs, &ms);
    herr_t rc;
    TIMED(rc = H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf));
    CHECK(rc >= 0, "H5Dwrite");
    H5Sclose(ms);
    H5Sclose(fs);
    free(buf);
}

/* Read and check this rank's share of the `rows` rows of dataset d: the
 * rows are cut into one contiguous share per rank, and rank r checks share
 * r + 1 (mod ranks), which another rank wrote when there are several; the
 * ranks together check every value. Reading all of it on every rank made
 * the check read the file once per rank, minutes over the emulated file
 * system. */
static long check_rows(hid_t d, hid_t dxpl, long rows, long cols, int which)
{
    long share = (rank + 1) % nranks;
    long r0 = rows * share / nranks, n = rows * (share + 1) / nranks - r0;
    double *buf = malloc(sizeof(double) * (size_t)(n * cols + 1));
    CHECK(buf, "malloc");
    hid_t fs, ms;
    select_rows(d, r0, n, cols, &fs, &ms);
    CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, dxpl, buf) >= 0, "H5Dread");
    H5Sclose(ms);
    H5Sclose(fs);
    long bad = 0;
    for (long i = 0; i < n; i++)
        for (long j = 0; j < cols; j++)
            if (buf[i * cols + j] != value(r0 + i, j, which)) {
                if (bad++ < 3)
                    fprintf(stderr,
                            "hdf5_client: rank %d: dataset %d [%ld][%ld] = %.10g, not %.10g\n",
                            rank, which, r0 + i, j, buf[i * cols + j], value(r0 + i, j, which));
            }
    free(buf);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: hdf5_client FILE [--rows R] [--cols C] [--steps S]\n");
        MPI_Finalize();
        return 2;
    }
    const char *path = argv[1];
    long rows_per_rank = 40, cols = 64, steps = 5;
    double compute_sec = 0;
    int output = 1, fill = 1, leave_open = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--no-output"))
            output = 0;
        if (!strcmp(argv[i], "--no-fill"))
            fill = 0;
        if (!strcmp(argv[i], "--leave-open"))
            leave_open = 1;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--no-output") || !strcmp(argv[i], "--no-fill") ||
            !strcmp(argv[i], "--leave-open")) {
            i--;
            continue;
        }
        if (!strcmp(argv[i], "--compute"))
            compute_sec = atof(argv[i + 1]);
        if (!strcmp(argv[i], "--rows"))
            rows_per_rank = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--cols"))
            cols = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps"))
            steps = atol(argv[i + 1]);
    }
    long rows = rows_per_rank * nranks;
    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = MPI_Wtime();
    if (!output) {
        for (long s = 0; s < steps; s++)
            compute(compute_sec);
        double t = MPI_Wtime() - t_start, tmax = 0;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("hdf5_client: no output: %ld steps: time=%.4f blocked=0\n", steps, tmax);
        MPI_Finalize();
        return 0;
    }
    hid_t coll = xfer(H5FD_MPIO_COLLECTIVE), indep = xfer(H5FD_MPIO_INDEPENDENT);
    hid_t acc = fapl();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, acc);
    CHECK(f >= 0, "H5Fcreate");
    /* No modification times in the object headers: two runs give the same bytes. */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    if (!fill)
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);

    /* contiguous */
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dc = H5Dcreate2(f, "contiguous", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(dc >= 0, "H5Dcreate contiguous");
    write_rows(dc, coll, rank * rows_per_rank, rows_per_rank, cols, 1);
    H5Sclose(space);

    /* chunked, grown step by step */
    hid_t ccpl = H5Pcopy(dcpl);
    hsize_t chunk[2] = {16, (hsize_t)cols}, zero[2] = {0, (hsize_t)cols},
            maxd[2] = {H5S_UNLIMITED, (hsize_t)cols};
    H5Pset_chunk(ccpl, 2, chunk);
    space = H5Screate_simple(2, zero, maxd);
    hid_t dk = H5Dcreate2(f, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, ccpl, H5P_DEFAULT);
    CHECK(dk >= 0, "H5Dcreate chunked");
    H5Sclose(space);
    for (long s = 0; s < steps; s++) {
        compute(compute_sec);
        hsize_t grown[2] = {(hsize_t)((s + 1) * rows), (hsize_t)cols};
        herr_t rc;
        TIMED(rc = H5Dset_extent(dk, grown));
        CHECK(rc >= 0, "H5Dset_extent");
        write_rows(dk, coll, s * rows + rank * rows_per_rank, rows_per_rank, cols, 2);
    }

    /* independent: element i belongs to rank i % nranks */
    hsize_t n1 = (hsize_t)(rows * 4);
    space = H5Screate_simple(1, &n1, NULL);
    hid_t di = H5Dcreate2(f, "independent", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(di >= 0, "H5Dcreate independent");
    hsize_t start = (hsize_t)rank, stride = (hsize_t)nranks, count = n1 / (hsize_t)nranks;
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, &stride, &count, NULL) >= 0, "sel");
    hid_t ms = H5Screate_simple(1, &count, NULL);
    int *ib = malloc(sizeof(int) * count);
    for (hsize_t k = 0; k < count; k++)
        ib[k] = (int)(start + k * stride) * 7 + 3;
    herr_t irc;
    TIMED(irc = H5Dwrite(di, H5T_NATIVE_INT, ms, space, indep, ib));
    CHECK(irc >= 0, "H5Dwrite independent");
    free(ib);
    H5Sclose(ms);
    H5Sclose(space);

    hid_t as = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(f, "steps", H5T_NATIVE_LONG, as, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(at >= 0 && H5Awrite(at, H5T_NATIVE_LONG, &steps) >= 0, "attribute");
    H5Aclose(at);
    H5Sclose(as);
    if (leave_open) {
        if (rank == 0)
            printf("hdf5_client: %s: %ld ranks: written; MPI_Finalize closes it\n", path,
                   (long)nranks);
        MPI_Finalize();
        return 0;
    }

    /* read after write, in the same open */
    herr_t frc;
    TIMED(frc = H5Fflush(f, H5F_SCOPE_GLOBAL));
    CHECK(frc >= 0, "H5Fflush");
    long bad = check_rows(dc, coll, rows, cols, 1);
    H5Dclose(dc);
    H5Dclose(dk);
    H5Dclose(di);
    H5Pclose(ccpl);
    H5Pclose(dcpl);
    TIMED(frc = H5Fclose(f));
    CHECK(frc >= 0, "H5Fclose");
    double mine[2] = {MPI_Wtime() - t_start, blocked}, most[2] = {0, 0};
    MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    /* reopen read-only and check everything */
    f = H5Fopen(path, H5F_ACC_RDONLY, acc);
    CHECK(f >= 0, "H5Fopen");
    dc = H5Dopen2(f, "contiguous", H5P_DEFAULT);
    bad += check_rows(dc, indep, rows, cols, 1);
    dk = H5Dopen2(f, "chunked", H5P_DEFAULT);
    bad += check_rows(dk, coll, rows * steps, cols, 2);
    di = H5Dopen2(f, "independent", H5P_DEFAULT);
    int *all = malloc(sizeof(int) * n1);
    CHECK(H5Dread(di, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, indep, all) >= 0, "H5Dread independent");
    for (hsize_t k = 0; k < n1; k++)
        if (all[k] != (int)k * 7 + 3 && bad++ < 3)
            fprintf(stderr, "hdf5_client: rank %d: independent[%llu] = %d\n", rank,
                    (unsigned long long)k, all[k]);
    free(all);
    long got = 0;
    at = H5Aopen(f, "steps", H5P_DEFAULT);
    CHECK(at >= 0 && H5Aread(at, H5T_NATIVE_LONG, &got) >= 0, "attribute read");
    if (got != steps)
        bad++;
    H5Aclose(at);
    H5Dclose(dc);
    H5Dclose(dk);
    H5Dclose(di);
    H5Fclose(f);
    H5Pclose(acc);
    H5Pclose(coll);
    H5Pclose(indep);
    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hdf5_client: %s: %ld ranks, %ld rows x %ld, %ld steps: %s: time=%.4f "
               "blocked=%.4f\n", path, (long)nranks, rows, cols, steps,
               total ? "WRONG VALUES" : "every value right", most[0], most[1]);
    MPI_Finalize();
    return total ? 1 : 0;
}
