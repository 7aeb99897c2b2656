/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-local-drain: the node-local tier's drain against writing straight to
 * the target (docs/results/local-tier.md). Each repetition writes one file
 * of --size bytes twice, in turn: straight to the target (open to complete),
 * then through the tier (local_dir: open to complete, then complete to
 * drained). Every rank writes its contiguous share in 8 MiB calls. Rank 0
 * prints one line per repetition (times from a barrier, max over ranks) and
 * checks every byte of the target after each write (not timed), then
 * removes it, so every write starts from no file.
 *
 * Drain bandwidth = size / (drained - complete); straight bandwidth = size /
 * (complete - open) of the direct write.
 *
 * --compare adds the AHPIOS paper's comparison (an ad-hoc parallel file
 * system on the nodes' own storage against MPI-IO to the parallel file
 * system): each repetition also writes the file with MPI_File_write_at_all
 * (open to close), and after the tier's write reads it back three ways,
 * each rank its share in 8 MiB reads, every byte checked: fwdio_open_read
 * with local_dir (the restart from the local copies), fwdio_open_read of the
 * target, and MPI_File_read_at_all of the target.
 *
 * At the end every rank removes the tier's copies of the file that the tier
 * keeps for restarts (its drained copies and their version records, named
 * "<file name>.<hash>.w<writer>.fwdio-local[.ver]") from its local
 * directory, and the directory if that leaves it empty, so that runs do
 * not leave them in /dev/shm.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pread */

#include "app_util.h"
#include "cli.h"
#include "fwdio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct opts {
    uint64_t size;
    int reps, writers;
    uint64_t cap;
    const char *dir, *local;
    int compare;
    const char *csv;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fwdio-local-drain [--size BYTES] [--reps N] [--writers N] [--cap BYTES]\n"
            "                         [--dir DIR] [--local DIR] [--compare] [--csv FILE]\n"
            "  Writes one file straight to DIR, then through the node-local tier (LOCAL),\n"
            "  in turn, N times; rank 0 prints the seconds and MiB/s of each and checks\n"
            "  every byte of the target.\n"
            "  --size BYTES   the file, 1M to 64G (256M)\n"
            "  --reps N       repetitions, 1 to 100 (3)\n"
            "  --writers N    writer ranks, 1 to 1024 (2)\n"
            "  --cap BYTES    drain_bandwidth per writer, bytes/s; 0: none (0)\n"
            "  --dir DIR      where the target goes, created if missing (/dev/shm/fwdio-drain)\n"
            "  --local DIR    local_dir, %%h the host name (/dev/shm/fwdio-local-%%h)\n"
            "  --compare      also MPI_File_write_at_all, and reads of the tier's file: from\n"
            "                 the local copies, from the target, with MPI_File_read_at_all\n"
            "  --csv FILE     also one row per run (rank 0; bench/seeds' columns)\n"
            "  --help         this text\n" CLI_SIZE_GRAMMAR);
}

enum { OPT_SIZE = 256, OPT_REPS, OPT_WRITERS, OPT_CAP, OPT_DIR, OPT_LOCAL, OPT_COMPARE, OPT_CSV };

static const struct option options[] = {{"size", required_argument, NULL, OPT_SIZE},
                                        {"reps", required_argument, NULL, OPT_REPS},
                                        {"writers", required_argument, NULL, OPT_WRITERS},
                                        {"cap", required_argument, NULL, OPT_CAP},
                                        {"dir", required_argument, NULL, OPT_DIR},
                                        {"local", required_argument, NULL, OPT_LOCAL},
                                        {"compare", no_argument, NULL, OPT_COMPARE},
                                        {"csv", required_argument, NULL, OPT_CSV},
                                        CLI_HELP_OPTION,
                                        {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1u << 20, (uint64_t)64 << 30, &o->size);
    case OPT_REPS: return cli_int(c, 1, 100, &o->reps);
    case OPT_WRITERS: return cli_int(c, 1, 1024, &o->writers);
    case OPT_CAP: return cli_size(c, 0, (uint64_t)1 << 40, &o->cap);
    case OPT_DIR: o->dir = c->arg; return 0;
    case OPT_LOCAL: o->local = c->arg; return 0;
    case OPT_COMPARE: o->compare = 1; return 0;
    case OPT_CSV: o->csv = c->arg; return 0;
    default: return CLI_BAD;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char pattern(uint64_t k)
{
    return (unsigned char)(k * 7u + (k >> 20) + 1u);
}

static double max_over_ranks(double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Rank 0: the target holds the pattern, every byte. */
static int check_file(const char *path, uint64_t size)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size == size;
    enum { CHUNK = 8 << 20 };
    unsigned char *buf = malloc(CHUNK);
    for (uint64_t at = 0; ok && buf && at < size; at += CHUNK) {
        size_t n = size - at < CHUNK ? (size_t)(size - at) : CHUNK;
        ok = pread(fd, buf, n, (off_t)at) == (ssize_t)n;
        for (size_t k = 0; ok && k < n; k++)
            ok = buf[k] == pattern(at + k);
    }
    free(buf);
    if (fd >= 0)
        close(fd);
    return ok && buf;
}

/* Rank 0: check_file, then the target goes. */
static int check_and_remove(const char *path, uint64_t size)
{
    int ok = check_file(path, size);
    unlink(path);
    return ok;
}

enum { CALL = 8 << 20 };

/* This rank's share of the file: [*first, *last). */
static void share_of(const struct opts *o, int rank, int nranks, uint64_t *first, uint64_t *last)
{
    uint64_t share = o->size / (uint64_t)nranks;
    *first = share * (uint64_t)rank;
    *last = rank == nranks - 1 ? o->size : *first + share;
}

/* The most CALL-sized pieces any rank's share takes (collective calls). */
static int calls_per_rank(const struct opts *o, int nranks)
{
    uint64_t most = o->size - (o->size / (uint64_t)nranks) * (uint64_t)(nranks - 1);
    return (int)((most + CALL - 1) / CALL);
}

/* The file written with MPI_File_write_at_all, open to close, from the
 * barrier; MPI_SUCCESS or the first failing call's code. */
static int write_mpiio(const struct opts *o, const char *path, int rank, int nranks, double *t)
{
    uint64_t first, last;
    share_of(o, rank, nranks, &first, &last);
    unsigned char *buf = malloc(CALL);
    if (!buf)
        return MPI_ERR_NO_MEM;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                           &fh);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return rc;
    }
    uint64_t at = first;
    for (int i = 0; i < calls_per_rank(o, nranks); i++) {
        size_t n = at < last ? (last - at < CALL ? (size_t)(last - at) : CALL) : 0;
        for (size_t k = 0; k < n; k++)
            buf[k] = pattern(at + k);
        int w = MPI_File_write_at_all(fh, (MPI_Offset)at, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
        rc = rc == MPI_SUCCESS ? w : rc;
        at += n;
    }
    int c = MPI_File_close(&fh);
    *t = now() - t0;
    free(buf);
    return rc == MPI_SUCCESS ? c : rc;
}

/* Whether buf holds the pattern of [at, at + n). */
static int holds_pattern(const unsigned char *buf, uint64_t at, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (buf[k] != pattern(at + k))
            return 0;
    return 1;
}

/* A read of this rank's share with MPI_File_read_at_all, from the barrier;
 * 1 when every byte is right. */
static int read_mpiio(const struct opts *o, const char *path, int rank, int nranks, double *t)
{
    uint64_t first, last;
    share_of(o, rank, nranks, &first, &last);
    unsigned char *buf = malloc(CALL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    MPI_File fh;
    int ok = buf && MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) ==
                        MPI_SUCCESS;
    uint64_t at = first;
    for (int i = 0; ok && i < calls_per_rank(o, nranks); i++) {
        size_t n = at < last ? (last - at < CALL ? (size_t)(last - at) : CALL) : 0;
        ok = MPI_File_read_at_all(fh, (MPI_Offset)at, buf, (int)n, MPI_BYTE,
                                  MPI_STATUS_IGNORE) == MPI_SUCCESS &&
             holds_pattern(buf, at, n);
        at += n;
    }
    if (buf && ok)
        ok = MPI_File_close(&fh) == MPI_SUCCESS;
    *t = now() - t0;
    free(buf);
    return ok;
}

/* A read of this rank's share with fwdio_open_read, from the local copies
 * (`local` set) or the target, from the barrier; 1 when every byte is right. */
static int read_fwdio(fwdio_runtime_t *rt, const struct opts *o, const char *path, const char *local,
                      int rank, int nranks, double *t)
{
    uint64_t first, last;
    share_of(o, rank, nranks, &first, &last);
    unsigned char *buf = malloc(last - first ? (size_t)(last - first) : 1);
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = o->writers;
    opts.pinned |= FWDIO_PIN_LOCAL_DIR;
    opts.local_dir = local;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    fwdio_file_t *f = NULL;
    int rc = buf ? fwdio_open_read(rt, path, &opts, NULL, &f) : FWDIO_ENOMEM;
    for (uint64_t at = first; rc == FWDIO_OK && at < last; at += CALL) {
        size_t n = last - at < CALL ? (size_t)(last - at) : CALL;
        rc = fwdio_read(f, buf + (at - first), n, at, NULL, NULL);
    }
    if (f) {
        int closed = fwdio_close(f);
        int status = fwdio_wait(f);
        rc = rc != FWDIO_OK ? rc : closed != FWDIO_OK ? closed : status;
        fwdio_file_free(f);
    }
    *t = now() - t0;
    int ok = rc == FWDIO_OK && holds_pattern(buf, first, (size_t)(last - first));
    free(buf);
    return ok;
}

/* Rank 0: one run's line on stdout, and its row in the CSV (when asked):
 * rep, config, mode, writers, ... as bench/seeds reads them. `t` is the
 * run's time (the tier: to complete), `mib` the MiB/s printed (the tier:
 * its drain's), `drained` the tier's time to drained (< 0: none). */
static void report(FILE *csv, const struct opts *o, int rep, const char *mode, double t,
                   double drained, double mib, int ok, const char *why)
{
    if (drained >= 0)
        printf("%3d %-8s %10.3f %9.3f %10.1f %s%s\n", rep, mode, t, drained, mib,
               ok ? "yes" : "NO ", why);
    else
        printf("%3d %-8s %10.3f %9s %10.1f %s%s\n", rep, mode, t, "-", mib, ok ? "yes" : "NO ",
               why);
    if (csv)
        fprintf(csv, "%d,%s,%s,%d,,,,%.6f,%.6f,%.3f,%d,%d,0,%.6f\n", rep, mode, mode, o->writers,
                t, t, (double)o->size / (1 << 20) / t, ok, ok ? 0 : 1,
                drained >= 0 ? drained : 0.0); /* MiB/s: the size over `t`, as seeds' rows */
}

/* One write of the file; *t_complete and *t_drained from the barrier. */
static int write_once(fwdio_runtime_t *rt, const struct opts *o, const char *path, int tier,
                      int rank, int nranks, double *t_complete, double *t_drained)
{
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = o->writers;
    opts.pinned |= FWDIO_PIN_LOCAL_DIR | FWDIO_PIN_DRAIN_BANDWIDTH; /* as given here */
    opts.local_dir = tier ? o->local : NULL;
    opts.drain_bandwidth = o->cap;
    uint64_t first, last;
    share_of(o, rank, nranks, &first, &last);
    unsigned char *buf = malloc(CALL);
    if (!buf)
        return FWDIO_ENOMEM;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    fwdio_file_t *f;
    int rc = fwdio_open(rt, path, o->size, &opts, NULL, &f);
    if (rc != FWDIO_OK) {
        free(buf);
        return rc;
    }
    for (uint64_t at = first; at < last && rc == FWDIO_OK; at += CALL) {
        size_t n = last - at < CALL ? (size_t)(last - at) : CALL;
        for (size_t k = 0; k < n; k++)
            buf[k] = pattern(at + k);
        rc = fwdio_write(f, buf, n, at);
    }
    free(buf);
    int closed = fwdio_close(f);
    int status = fwdio_wait(f);
    *t_complete = now() - t0;
    int drained = fwdio_drain_wait(f);
    *t_drained = now() - t0;
    fwdio_file_free(f);
    return rc != FWDIO_OK ? rc : closed != FWDIO_OK ? closed : status != FWDIO_OK ? status : drained;
}

/* Remove the tier's kept copies of `path` from this rank's local directory
 * (every rank of a host tries; one succeeds). */
static void remove_kept_copies(const char *local, const char *path)
{
    char dir[4096], glob[512], file[8192];
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (app_expand_host(local, dir, sizeof dir) != 0 ||
        (size_t)snprintf(glob, sizeof glob, "%s.*.w*.fwdio-local*", name) >= sizeof glob)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (fnmatch(glob, e->d_name, 0) == 0 &&
            (size_t)snprintf(file, sizeof file, "%s/%s", dir, e->d_name) < sizeof file)
            (void)unlink(file);
    closedir(d);
    (void)rmdir(dir); /* only if nothing else is in it */
}

int main(int argc, char **argv)
{
    int provided, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {(uint64_t)256 << 20, 3, 2, 0, "/dev/shm/fwdio-drain",
                     "/dev/shm/fwdio-local-%h", 0, NULL};
    cli_t c;
    cli_begin(&c, "fwdio-local-drain", argc, argv, options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    if (rank == 0 && mkdir(o.dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fwdio-local-drain: mkdir %s: %s\n", o.dir, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fwdio_runtime_t *rt;
    int rc = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
    if (rc != FWDIO_OK) {
        fprintf(stderr, "fwdio-local-drain: fwdio_init: %s\n", fwdio_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/drained.dat", o.dir);
    FILE *csv = NULL;
    if (rank == 0) {
        printf("rep mode     complete_s drained_s MiB/s(size/time; tier: /drain) ok\n");
        if (o.csv && !(csv = fopen(o.csv, "w")))
            fprintf(stderr, "fwdio-local-drain: %s: %s\n", o.csv, strerror(errno));
        if (csv)
            fprintf(csv, "rep,config,mode,writers,policy,layout,io_component,blocked_s,"
                         "end_to_end_s,mib_per_s,verified,status,skipped,drained_s\n");
    }
    int bad = 0;
    const double mib = (double)o.size / (1 << 20);
    for (int r = 0; r < o.reps; r++) {
        if (o.compare) { /* MPI-IO's own write of the same bytes */
            double t = 0;
            int mrc = write_mpiio(&o, path, rank, nranks, &t);
            t = max_over_ranks(t);
            int ok = mrc == MPI_SUCCESS && (rank != 0 || check_and_remove(path, o.size));
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            bad += !ok;
            if (rank == 0)
                report(csv, &o, r, "mpiio", t, -1, mib / t, ok, "");
        }
        for (int tier = 0; tier <= 1; tier++) {
            double tc = 0, td = 0;
            rc = write_once(rt, &o, path, tier, rank, nranks, &tc, &td);
            tc = max_over_ranks(tc);
            td = max_over_ranks(td);
            int keep = tier && o.compare; /* read back below */
            int ok = rc == FWDIO_OK && (rank != 0 || (keep ? check_file(path, o.size)
                                                            : check_and_remove(path, o.size)));
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            bad += !ok;
            if (rank == 0)
                report(csv, &o, r, tier ? "tier" : "straight", tc, td,
                       tier ? mib / (td - tc) : mib / tc, ok, rc != FWDIO_OK ? fwdio_strerror(rc) : "");
        }
        if (!o.compare)
            continue;
        /* the restart: the tier's file read back three ways */
        static const char *const how[3] = {"rd-local", "rd-fwdio", "rd-mpiio"};
        for (int k = 0; k < 3; k++) {
            double t = 0;
            int ok = k == 2 ? read_mpiio(&o, path, rank, nranks, &t)
                            : read_fwdio(rt, &o, path, k == 0 ? o.local : NULL, rank, nranks, &t);
            t = max_over_ranks(t);
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            bad += !ok;
            if (rank == 0)
                report(csv, &o, r, how[k], t, -1, mib / t, ok, "");
        }
        if (rank == 0)
            unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (csv)
        fclose(csv);
    fwdio_finalize(rt);
    remove_kept_copies(o.local, path);
    MPI_Finalize();
    return bad ? 1 : 0;
}
