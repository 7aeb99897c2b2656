/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-files-in-flight: what many files in flight at once cost
 * (docs/results/files-in-flight.md). Every rank opens --files files one after
 * the other, writes --bytes bytes of each (rank r at offset r x bytes), then
 * closes them all, then waits for them all: every file is in flight at once
 * before the first completes, as when an application opens one file per
 * atom group or per frame and waits late. Rank 0 prints the time of each
 * phase (from a barrier, max over ranks) and then reads every file back and
 * checks its size and every byte (not timed), and removes it.
 *
 * The progress thread's work per file should not grow with the files in
 * flight: the total should grow linearly with --files.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pread */

#include "cli.h"
#include "fwdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct opts {
    int files;
    uint64_t bytes;
    const char *dir;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: fwdio-files-in-flight [--files N] [--bytes BYTES] [--dir DIR]\n"
                 "  Every rank opens N files, writes BYTES of each, closes all, waits for all;\n"
                 "  rank 0 prints the seconds of each phase and checks every byte.\n"
                 "  --files N      files in flight at once, 1 to 1000000 (1000)\n"
                 "  --bytes BYTES  bytes each rank writes to each file, 1 to 1M (64)\n"
                 "  --dir DIR      where the files go, created if missing (/dev/shm/fwdio-fif)\n"
                 "  --help         this text\n" CLI_SIZE_GRAMMAR);
}

enum { OPT_FILES = 256, OPT_BYTES, OPT_DIR };

static const struct option options[] = {{"files", required_argument, NULL, OPT_FILES},
                                        {"bytes", required_argument, NULL, OPT_BYTES},
                                        {"dir", required_argument, NULL, OPT_DIR},
                                        CLI_HELP_OPTION,
                                        {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_FILES: return cli_int(c, 1, 1000000, &o->files);
    case OPT_BYTES: return cli_size(c, 1, 1u << 20, &o->bytes);
    case OPT_DIR: o->dir = c->arg; return 0;
    default: return CLI_BAD;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The byte at `k` of rank r's part of file i. */
static unsigned char pattern(int i, int r, uint64_t k)
{
    return (unsigned char)((uint64_t)i * 131u + (uint64_t)r * 31u + k * 7u + 1u);
}

static void file_path(char *out, size_t len, const char *dir, int i)
{
    snprintf(out, len, "%s/f%07d", dir, i);
}

/* Rank 0: every file has nranks x bytes of the pattern; then removed. */
static int check_files(const struct opts *o, int nranks)
{
    uint64_t size = (uint64_t)nranks * o->bytes;
    unsigned char *buf = malloc(size);
    int bad = 0;
    for (int i = 0; buf && i < o->files; i++) {
        char path[4096];
        file_path(path, sizeof path, o->dir, i);
        int fd = open(path, O_RDONLY);
        struct stat st;
        ssize_t got = -1;
        if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == size)
            got = pread(fd, buf, size, 0);
        if (fd >= 0)
            close(fd);
        int ok = got == (ssize_t)size;
        for (uint64_t k = 0; ok && k < size; k++)
            ok = buf[k] == pattern(i, (int)(k / o->bytes), k % o->bytes);
        if (!ok && bad++ < 3)
            fprintf(stderr, "fwdio-files-in-flight: %s: wrong size or bytes\n", path);
        unlink(path);
    }
    free(buf);
    return buf ? bad : -1;
}

int main(int argc, char **argv)
{
    int provided, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {1000, 64, "/dev/shm/fwdio-fif"};
    cli_t c;
    cli_begin(&c, "fwdio-files-in-flight", argc, argv, options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    if (rank == 0 && mkdir(o.dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fwdio-files-in-flight: mkdir %s: %s\n", o.dir, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fwdio_runtime_t *rt;
    int rc = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
    if (rc != FWDIO_OK) {
        fprintf(stderr, "fwdio-files-in-flight: fwdio_init: %s\n", fwdio_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fwdio_file_t **f = calloc((size_t)o.files, sizeof *f);
    unsigned char *data = malloc(o.bytes);
    if (!f || !data) {
        fprintf(stderr, "fwdio-files-in-flight: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int failed = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int i = 0; i < o.files; i++) {
        char path[4096];
        file_path(path, sizeof path, o.dir, i);
        rc = fwdio_open(rt, path, (uint64_t)nranks * o.bytes, NULL, NULL, &f[i]);
        if (rc != FWDIO_OK) {
            fprintf(stderr, "fwdio-files-in-flight: open %s: %s\n", path, fwdio_strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (uint64_t k = 0; k < o.bytes; k++)
            data[k] = pattern(i, rank, k);
        rc = fwdio_write(f[i], data, o.bytes, (uint64_t)rank * o.bytes);
        failed += rc != FWDIO_OK;
    }
    double t1 = now();
    for (int i = 0; i < o.files; i++)
        failed += fwdio_close(f[i]) != FWDIO_OK;
    double t2 = now();
    for (int i = 0; i < o.files; i++) {
        rc = fwdio_wait(f[i]);
        if (rc != FWDIO_OK && failed++ < 3)
            fprintf(stderr, "fwdio-files-in-flight: file %d: %s: %s\n", i, fwdio_strerror(rc),
                    fwdio_file_error(f[i]));
        fwdio_file_free(f[i]);
    }
    double t3 = now();
    double mine[4] = {t1 - t0, t2 - t1, t3 - t2, t3 - t0}, most[4];
    MPI_Reduce(mine, most, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int failed_all = 0;
    MPI_Reduce(&failed, &failed_all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    fwdio_finalize(rt);
    int bad = 0;
    if (rank == 0) {
        bad = check_files(&o, nranks);
        printf("files %d ranks %d bytes %llu open_write_s %.3f close_s %.3f wait_s %.3f "
               "total_s %.3f per_file_ms %.3f failed %d bad %d\n",
               o.files, nranks, (unsigned long long)o.bytes, most[0], most[1], most[2], most[3],
               1e3 * most[3] / o.files, failed_all, bad);
    }
    free(data);
    free(f);
    MPI_Finalize();
    return rank == 0 && (failed_all || bad) ? 1 : 0;
}
