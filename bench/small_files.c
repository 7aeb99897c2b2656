/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-small-files: a file's fixed cost, fwdio against MPI-IO
 * (docs/results/file-cost.md). One file after the other, each its own:
 *
 *   mpiio   MPI_File_open, every rank MPI_File_write_at_all's --small bytes
 *           at its own offset, MPI_File_close;
 *   fwdio   fwdio_open (the size known: ranks x --small), every rank
 *           fwdio_write's its bytes, fwdio_close, fwdio_wait: open to
 *           completion, every byte in the file.
 *
 * Each repetition runs --files files of each mode, the modes alternating
 * file by file, every file timed from a barrier to the end of its last call
 * on this rank, the max over ranks. Rank 0 prints each repetition's median
 * per mode and their ratio, then checks every byte of the last file of
 * each mode (not timed).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "fwdio.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nranks;

struct opts {
    const char *dir;
    uint64_t small;
    int files, reps, writers;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n N fwdio-small-files [--dir DIR] [--small BYTES] [--files N]\n"
            "                                      [--reps N] [--writers W]\n"
            "  --dir DIR      where the files go; it must exist (.)\n"
            "  --small BYTES  bytes per rank of each file (64K)\n"
            "  --files N      files per mode and repetition (40)\n"
            "  --reps N       repetitions (3)\n"
            "  --writers W    fwdio's writers (0: fwdio's choice)\n"
            "  --help         this text\n"
            "Prints per repetition the median file (max over ranks) of MPI-IO (open,\n"
            "write_at_all, close) and of fwdio (open, write, close, wait), and fwdio/mpiio.\n"
            CLI_SIZE_GRAMMAR);
}

enum { OPT_DIR = 256, OPT_SMALL, OPT_FILES, OPT_REPS, OPT_WRITERS };

static const struct option options[] = {
    {"dir", required_argument, NULL, OPT_DIR},
    {"small", required_argument, NULL, OPT_SMALL},
    {"files", required_argument, NULL, OPT_FILES},
    {"reps", required_argument, NULL, OPT_REPS},
    {"writers", required_argument, NULL, OPT_WRITERS},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_DIR: o->dir = c->arg; return 0;
    case OPT_SMALL: return cli_size(c, 1, INT32_MAX, &o->small);
    case OPT_FILES: return cli_int(c, 1, 1000000, &o->files);
    case OPT_REPS: return cli_int(c, 1, 1000, &o->reps);
    case OPT_WRITERS: return cli_int(c, 0, 1 << 20, &o->writers);
    default: return CLI_BAD;
    }
}

/* A failed call ends the run: a time of a call that did nothing is no figure. */
static void check(int failed, const char *call, const char *path, const char *why)
{
    if (!failed)
        return;
    fprintf(stderr, "fwdio-small-files: rank %d: %s of %s failed: %s\n", rank, call, path, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_mpi(int rc, const char *call, const char *path)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, text, &len);
    check(rc != MPI_SUCCESS, call, path, text);
}

static double mpiio_file(const char *path, const char *buf, uint64_t small)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    check_mpi(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                            MPI_INFO_NULL, &fh),
              "MPI_File_open", path);
    check_mpi(MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)small, buf, (int)small,
                                    MPI_BYTE, MPI_STATUS_IGNORE),
              "MPI_File_write_at_all", path);
    check_mpi(MPI_File_close(&fh), "MPI_File_close", path);
    return MPI_Wtime() - t0;
}

static double fwdio_file(fwdio_runtime_t *rt, const fwdio_options_t *opts, const char *path,
                         const char *buf, uint64_t small)
{
    fwdio_file_t *f = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = fwdio_open(rt, path, small * (uint64_t)nranks, opts, NULL, &f);
    check(rc != FWDIO_OK, "fwdio_open", path, fwdio_strerror(rc));
    rc = fwdio_write(f, buf, small, (uint64_t)rank * small);
    check(rc != FWDIO_OK, "fwdio_write", path, fwdio_strerror(rc));
    rc = fwdio_close(f);
    check(rc != FWDIO_OK, "fwdio_close", path, fwdio_strerror(rc));
    rc = fwdio_wait(f);
    double t = MPI_Wtime() - t0;
    check(rc != FWDIO_OK, "fwdio_wait", path, fwdio_file_error(f));
    fwdio_file_free(f);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median over files of the max over ranks. */
static double median_over_ranks(double *t, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

/* Rank 0: the file holds every rank's bytes (rank r's are r + 1), nothing else. */
static int file_right(const char *path, uint64_t small)
{
    uint64_t size = small * (uint64_t)nranks;
    unsigned char *got = malloc(size + 1);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 || !got ? -1 : pread(fd, got, size + 1, 0);
    if (fd >= 0)
        close(fd);
    int right = n == (ssize_t)size;
    for (uint64_t i = 0; right && i < size; i++)
        right = got[i] == (unsigned char)(i / small + 1);
    free(got);
    return right;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {".", 64 << 10, 40, 3, 0};
    cli_t cli;
    cli_begin(&cli, "fwdio-small-files", argc, argv, options, rank != 0);
    int parsed = cli_parse(&cli, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    fwdio_runtime_t *rt = NULL;
    int rc = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
    check(rc != FWDIO_OK, "fwdio_init", "-", fwdio_strerror(rc));
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    if (o.writers > 0) {
        opts.writers = o.writers;
        opts.pinned |= FWDIO_PIN_WRITERS;
    }
    char *buf = malloc(o.small);
    memset(buf, rank + 1, o.small);
    double *tm = malloc(sizeof(double) * (size_t)o.files);
    double *tf = malloc(sizeof(double) * (size_t)o.files);
    char pm[4096], pf[4096];
    if (rank == 0) {
        char load[64] = "?";
        FILE *l = fopen("/proc/loadavg", "r");
        if (l) {
            if (fscanf(l, "%63s", load) != 1)
                strcpy(load, "?");
            fclose(l);
        }
        printf("fwdio-small-files: %d ranks, %llu bytes per rank, %d files per mode and "
               "repetition, load %s\n",
               nranks, (unsigned long long)o.small, o.files, load);
    }
    for (int rep = 0; rep < o.reps; rep++) {
        for (int i = 0; i < o.files; i++) {
            snprintf(pm, sizeof pm, "%s/small-mpiio-%d.out", o.dir, i);
            snprintf(pf, sizeof pf, "%s/small-fwdio-%d.out", o.dir, i);
            tm[i] = mpiio_file(pm, buf, o.small);
            tf[i] = fwdio_file(rt, &opts, pf, buf, o.small);
        }
        double m = median_over_ranks(tm, o.files), f = median_over_ranks(tf, o.files);
        if (rank == 0)
            printf("rep %d  mpiio %.1f us  fwdio %.1f us  fwdio/mpiio %.2f\n", rep, m * 1e6,
                   f * 1e6, f / m);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    if (rank == 0) {
        bad = !file_right(pm, o.small) + !file_right(pf, o.small);
        if (bad)
            fprintf(stderr, "fwdio-small-files: %s or %s does not hold the bytes written\n", pm,
                    pf);
        for (int i = 0; i < o.files; i++) {
            snprintf(pm, sizeof pm, "%s/small-mpiio-%d.out", o.dir, i);
            snprintf(pf, sizeof pf, "%s/small-fwdio-%d.out", o.dir, i);
            unlink(pm);
            unlink(pf);
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(tm);
    free(tf);
    free(buf);
    fwdio_finalize(rt);
    MPI_Finalize();
    return bad ? 1 : 0;
}
