/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-mpiio-calls: what an MPI-IO write call costs the caller, with and
 * without the MPI-IO layer (run it twice: plain, and with LD_PRELOAD of
 * libfwdio-mpiio.so and FWDIO_MPIIO naming the file; bench/runs has the
 * recipe). It knows nothing of fwdio.
 *
 *   write   every rank MPI_File_write_at's --size bytes at its own offset,
 *           --calls times into one file, timing only the calls; then
 *           MPI_File_sync and MPI_File_close, timed apart. With --compute S
 *           every rank computes (busy, on its core) S seconds before each
 *           call, as a simulation does between frames: the calls then meet
 *           no write of the call before still under way in the background,
 *           and the loop's whole time (compute and calls) says what that
 *           background cost the computing;
 *   small   --files times: open a new file, every rank writes --small bytes
 *           at its own offset, close (the whole, timed: a file per frame);
 *           with --compute S, after S seconds of computing each;
 *   rounds  --rounds times into one file: every rank MPI_File_write_at_all's
 *           --piece bytes at its own offset, then MPI_File_read_at_all's
 *           them back (checked), each call timed: a parallel HDF5 code's
 *           metadata and chunks, written collectively and read back.
 *
 * Prints one line per figure: the median and the best over calls (write
 * calls: the max over ranks of each call), in seconds and GB/s per rank.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nranks;

/* A failed call ends the run: a figure over calls that did nothing is no
 * figure (MPI-IO's files return errors by default). */
static void check(int rc, const char *call, const char *path)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "fwdio-mpiio-calls: rank %d: %s of %s failed: %s\n", rank, call, path, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Busy for s seconds (arithmetic between clock reads), as a rank that
 * computes holds its core. */
static volatile double sink;
static void compute(double s)
{
    double x = 1.0, end = MPI_Wtime() + s;
    while (MPI_Wtime() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The max over ranks of each rank's time of call i, sorted. */
static void over_ranks(double *t, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
}

static void report(const char *what, double *t, int n, long bytes)
{
    over_ranks(t, n);
    if (rank == 0)
        printf("%-14s median %.6f s (%.2f GB/s per rank)  best %.6f s  worst %.6f s\n", what,
               t[n / 2], bytes / t[n / 2] / 1e9, t[0], t[n - 1]);
}

/* Open (make) DIR/NAME on every rank with amode, its path in path. */
static MPI_File open_out(const char *dir, const char *name, int amode, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", dir, name);
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path, amode | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
          "MPI_File_open", path);
    return fh;
}

/* --rounds collective writes of `piece` bytes per rank into one file, each
 * read back by a collective read; both calls timed, the bytes checked. */
static void rounds(const char *dir, long piece, int n)
{
    char path[4096];
    MPI_File fh = open_out(dir, "rounds.out", MPI_MODE_RDWR, path, sizeof path);
    char *out = malloc((size_t)piece), *in = malloc((size_t)piece);
    double *tw = malloc(sizeof(double) * (size_t)n), *tr = malloc(sizeof(double) * (size_t)n);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        MPI_Offset at = ((MPI_Offset)i * nranks + rank) * piece;
        memset(out, 'a' + (i + rank) % 26, (size_t)piece);
        memset(in, 0, (size_t)piece);
        double t0 = MPI_Wtime();
        check(MPI_File_write_at_all(fh, at, out, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE),
              "MPI_File_write_at_all", path);
        double t1 = MPI_Wtime();
        check(MPI_File_read_at_all(fh, at, in, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE),
              "MPI_File_read_at_all", path);
        tr[i] = MPI_Wtime() - t1;
        tw[i] = t1 - t0;
        if (memcmp(in, out, (size_t)piece) != 0) {
            fprintf(stderr, "fwdio-mpiio-calls: rank %d: round %d read back other bytes\n",
                    rank, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    check(MPI_File_close(&fh), "MPI_File_close", path);
    report("write_at_all", tw, n, piece);
    report("read_at_all", tr, n, piece);
    if (rank == 0)
        unlink(path);
    free(tw);
    free(tr);
    free(in);
    free(out);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n N fwdio-mpiio-calls [--dir DIR] [--size BYTES] [--calls N]\n"
            "                                    [--small BYTES] [--files N] [--compute S]\n"
            "                                    [--piece BYTES] [--rounds N]\n"
            "  --dir DIR      where the files go; it must exist (.)\n"
            "  --size BYTES   bytes of each timed MPI_File_write_at per rank (4M)\n"
            "  --calls N      timed write calls per rank into calls.out (20)\n"
            "  --small BYTES  bytes per rank of each small file (64K)\n"
            "  --files N      small files opened, written and closed (20)\n"
            "  --compute S    seconds of busy computing before each write call (0)\n"
            "  --piece BYTES  bytes per rank of each collective write and read (1K)\n"
            "  --rounds N     collective writes, each read back collectively (20)\n"
            "  --help         this text\n"
            "Run it plain, then with LD_PRELOAD of libfwdio-mpiio.so and FWDIO_MPIIO naming\n"
            "*.out (bench/runs has the recipe).\n" CLI_SIZE_GRAMMAR);
}

enum { OPT_DIR = 256, OPT_SIZE, OPT_CALLS, OPT_SMALL, OPT_FILES, OPT_COMPUTE, OPT_PIECE, OPT_ROUNDS };

static const struct option options[] = {
    {"dir", required_argument, NULL, OPT_DIR},
    {"size", required_argument, NULL, OPT_SIZE},
    {"calls", required_argument, NULL, OPT_CALLS},
    {"small", required_argument, NULL, OPT_SMALL},
    {"files", required_argument, NULL, OPT_FILES},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    {"piece", required_argument, NULL, OPT_PIECE},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    CLI_HELP_OPTION,
    {0}};

struct opts {
    const char *dir;
    uint64_t size, small, piece;
    int calls, files, rounds;
    double compute;
};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_DIR: o->dir = c->arg; return 0;
    case OPT_SIZE: return cli_size(c, 1, INT32_MAX, &o->size);
    case OPT_SMALL: return cli_size(c, 1, INT32_MAX, &o->small);
    case OPT_CALLS: return cli_int(c, 1, 1000000, &o->calls);
    case OPT_FILES: return cli_int(c, 1, 1000000, &o->files);
    case OPT_COMPUTE: return cli_double(c, 0.0, 10.0, &o->compute);
    case OPT_PIECE: return cli_size(c, 1, 64 << 20, &o->piece);
    case OPT_ROUNDS: return cli_int(c, 1, 1000000, &o->rounds);
    default: return CLI_BAD;
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {".", 4 << 20, 64 << 10, 1 << 10, 20, 20, 20, 0.0};
    cli_t cli;
    cli_begin(&cli, "fwdio-mpiio-calls", argc, argv, options, rank != 0);
    int parsed = cli_parse(&cli, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    const char *dir = o.dir;
    const long size = (long)o.size, small = (long)o.small;
    const int calls = o.calls, files = o.files;
    char *buf = malloc((size_t)(size > small ? size : small));
    memset(buf, rank + 1, (size_t)(size > small ? size : small));
    char path[4096];

    /* write: calls into one file */
    MPI_File fh = open_out(dir, "calls.out", MPI_MODE_WRONLY, path, sizeof path);
    double *t = malloc(sizeof(double) * (size_t)(calls > files ? calls : files));
    MPI_Barrier(MPI_COMM_WORLD);
    double t_loop = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        MPI_Offset at = ((MPI_Offset)i * nranks + rank) * size;
        if (o.compute > 0)
            compute(o.compute);
        double t0 = MPI_Wtime();
        int rc = MPI_File_write_at(fh, at, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        t[i] = MPI_Wtime() - t0;
        check(rc, "MPI_File_write_at", path);
    }
    t_loop = MPI_Wtime() - t_loop;
    double t0 = MPI_Wtime();
    check(MPI_File_sync(fh), "MPI_File_sync", path);
    double t_sync = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    check(MPI_File_close(&fh), "MPI_File_close", path);
    double t_close = MPI_Wtime() - t0;
    report("write call", t, calls, size);
    if (rank == 0) /* --calls x --size per rank: gone, as the small files go */
        unlink(path);
    if (o.compute > 0) {
        MPI_Allreduce(MPI_IN_PLACE, &t_loop, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-14s %.6f s: %d x %.4f s computing, and the calls (max over ranks)\n",
                   "compute+calls", t_loop, calls, o.compute);
    }
    double ends[2] = {t_sync, t_close};
    MPI_Allreduce(MPI_IN_PLACE, ends, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%-14s %.6f s, close %.6f s (max over ranks)\n", "then sync", ends[0], ends[1]);

    /* small: a new file each time (after computing, with --compute) */
    double t_files = MPI_Wtime();
    for (int i = 0; i < files; i++) {
        snprintf(path, sizeof path, "%s/small-%d.out", dir, i);
        if (o.compute > 0)
            compute(o.compute);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                               MPI_INFO_NULL, &fh);
        int rc_write = rc == MPI_SUCCESS ? MPI_File_write_at(fh, (MPI_Offset)rank * small, buf,
                                                             (int)small, MPI_BYTE,
                                                             MPI_STATUS_IGNORE)
                                         : MPI_SUCCESS;
        int rc_close = rc == MPI_SUCCESS ? MPI_File_close(&fh) : MPI_SUCCESS;
        t[i] = MPI_Wtime() - t0;
        check(rc, "MPI_File_open", path);
        check(rc_write, "MPI_File_write_at", path);
        check(rc_close, "MPI_File_close", path);
    }
    t_files = MPI_Wtime() - t_files;
    report("small file", t, files, small);
    if (o.compute > 0) {
        MPI_Allreduce(MPI_IN_PLACE, &t_files, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-14s %.6f s: %d x %.4f s computing, and the files (max over ranks)\n",
                   "compute+files", t_files, files, o.compute);
    }
    if (rank == 0)
        for (int i = 0; i < files; i++) {
            snprintf(path, sizeof path, "%s/small-%d.out", dir, i);
            unlink(path);
        }

    /* rounds: a collective write, read back collectively */
    rounds(dir, (long)o.piece, o.rounds);
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
