/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-idle-cost: what an idle fwdio runtime costs an application that is
 * only computing (docs/results/idle-cost.md).
 *
 * One rep runs a fixed-work compute loop three times, in this order:
 *   none        no fwdio runtime;
 *   idle        after fwdio_init, no file ever opened;
 *   after file  same runtime, after one small file was opened, written,
 *               closed, waited for and freed (the runtime was active and has
 *               gone back to sleep);
 *   file open   same runtime, with a file open (ready on every rank) and
 *               nothing in flight: what a trajectory costs between frames;
 *   stream open same runtime, with a stream (FWDIO_SIZE_GROWS) open whose
 *               first step was written and is complete: a trajectory
 *               between two frames;
 * then fwdio_finalize. For each loop every rank records its wall time and the
 * CPU time of its threads other than the main one: process CPU time
 * (RUSAGE_SELF) minus main-thread CPU time (RUSAGE_THREAD), taken before and
 * after the loop. Without a runtime that is the MPI library's own threads; with
 * one it adds fwdio's progress (and I/O) threads.
 *
 * The loop's work is calibrated once, at start, so that it takes about
 * --seconds of wall time with all ranks computing at once. Timed sections are
 * fenced by barriers that sleep, so waiting ranks leave the cores to the
 * others. See docs/results/idle-cost.md.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */

#include "cli.h"
#include "fwdio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { CFG_NONE, CFG_IDLE, CFG_AFTER_FILE, CFG_FILE_OPEN, CFG_STREAM_OPEN, NCFG };

static const char *const cfg_names[NCFG] = {"none", "idle", "after file", "file open",
                                            "stream open"};

/* Bytes each rank writes to the small file of the "after file" variant. */
enum { SMALL_FILE_BYTES_PER_RANK = 4096 };

struct opts {
    double seconds;
    int reps;
};

/* One timed loop, already combined over ranks. */
struct sample {
    double wall;       /* seconds, max over ranks */
    double other_cpu;  /* seconds of non-main-thread CPU, summed over ranks */
    double cpu_per_s;  /* mean over ranks of (non-main CPU / own wall), s per s */
};

struct ctx {
    int rank, nranks;
    uint64_t iters;
    char path[256];
};

/* ------------------------------------------------------------ helpers */

static void die_on_fwdio(int rc, const char *what)
{
    if (rc == FWDIO_OK)
        return;
    fprintf(stderr, "fwdio-idle-cost: %s failed: %s (%d)\n", what, fwdio_strerror(rc), rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A barrier that sleeps while it waits: 8 ranks share 2 cores here, and a
 * spinning barrier would steal CPU from ranks still in a timed section. */
static void sleepy_barrier(void)
{
    const struct timespec nap = {.tv_sec = 0, .tv_nsec = 100000};
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    while (!done) {
        nanosleep(&nap, NULL);
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

static double timeval_seconds(struct timeval tv)
{
    return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

static double rusage_seconds(int who)
{
    struct rusage ru;
    if (getrusage(who, &ru) != 0)
        return 0.0;
    return timeval_seconds(ru.ru_utime) + timeval_seconds(ru.ru_stime);
}

/* CPU seconds used so far by every thread of this process except the caller.
 * The caller's own time is read on both sides of the process reading and
 * averaged, so the caller running between the two calls biases neither way. */
static double other_threads_cpu(void)
{
    double me_before = rusage_seconds(RUSAGE_THREAD);
    double self = rusage_seconds(RUSAGE_SELF);
    double me_after = rusage_seconds(RUSAGE_THREAD);
    return self - 0.5 * (me_before + me_after);
}

/* ------------------------------------------------------------ compute */

/* Fixed work: a chain of dependent floating-point and integer steps that the
 * compiler can neither vectorise nor remove (the result is kept). */
static volatile double compute_sink;

static void compute(uint64_t iters)
{
    double x = 1.0;
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (uint64_t i = 0; i < iters; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x = x * 0.999999 + (double)(s & 0xff) * 1e-9;
    }
    compute_sink = x;
}

/* Wall time of compute(iters) run on every rank at once, max over ranks. */
static double concurrent_compute_time(uint64_t iters)
{
    sleepy_barrier();
    double t0 = MPI_Wtime();
    compute(iters);
    double dt = MPI_Wtime() - t0, max;
    MPI_Allreduce(&dt, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

/* Iterations for which the concurrent loop takes about `seconds` of wall time.
 * Every rank takes the same decisions (they use only reduced values). */
static uint64_t calibrate(double seconds)
{
    uint64_t iters = 1u << 16;
    double t = concurrent_compute_time(iters);
    while (t < 0.1 * seconds && t < 0.2) {
        iters *= 4;
        t = concurrent_compute_time(iters);
    }
    /* Once more at the estimated size, so the estimate is from a long run. */
    uint64_t guess = (uint64_t)((double)iters * seconds / t) + 1;
    t = concurrent_compute_time(guess);
    uint64_t result = (uint64_t)((double)guess * seconds / t) + 1;
    MPI_Bcast(&result, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return result;
}

/* ------------------------------------------------------------ one loop */

static struct sample timed_loop(const struct ctx *c)
{
    sleepy_barrier();
    double cpu0 = other_threads_cpu();
    double t0 = MPI_Wtime();
    compute(c->iters);
    double wall = MPI_Wtime() - t0;
    double cpu = other_threads_cpu() - cpu0;
    sleepy_barrier();

    double mine[2] = {cpu, wall > 0 ? cpu / wall : 0.0}, sums[2];
    struct sample s = {0};
    MPI_Allreduce(&wall, &s.wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    s.other_cpu = sums[0];
    s.cpu_per_s = sums[1] / c->nranks;
    return s;
}

/* Open, write one small block per rank, close, wait, free: afterwards no file
 * is open and the runtime has nothing left to do. */
static void write_small_file(const struct ctx *c, fwdio_runtime_t *rt)
{
    unsigned char buf[SMALL_FILE_BYTES_PER_RANK];
    memset(buf, 'a' + c->rank % 26, sizeof buf);
    uint64_t size = (uint64_t)c->nranks * sizeof buf;
    fwdio_file_t *file = NULL;
    die_on_fwdio(fwdio_open(rt, c->path, size, NULL, NULL, &file), "fwdio_open");
    die_on_fwdio(fwdio_write(file, buf, sizeof buf, (uint64_t)c->rank * sizeof buf),
                 "fwdio_write");
    die_on_fwdio(fwdio_close(file), "fwdio_close");
    die_on_fwdio(fwdio_wait(file), "the small file (fwdio_wait)");
    fwdio_file_free(file);
    sleepy_barrier();
    if (c->rank == 0)
        unlink(c->path);
}

static void on_ready(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    *(int *)user = status == FWDIO_OK ? 1 : -1;
}

/* A file opened and ready on every rank, with nothing written to it. */
static fwdio_file_t *open_idle_file(const struct ctx *c, fwdio_runtime_t *rt, int *ready)
{
    fwdio_callbacks_t cbs = {.ready = on_ready, .user = ready};
    fwdio_file_t *file = NULL;
    *ready = 0;
    die_on_fwdio(fwdio_open(rt, c->path, (uint64_t)c->nranks * SMALL_FILE_BYTES_PER_RANK, NULL,
                            &cbs, &file),
                 "fwdio_open");
    const struct timespec nap = {.tv_sec = 0, .tv_nsec = 1000000};
    while (*ready == 0) {
        fwdio_poll(rt);
        nanosleep(&nap, NULL);
    }
    if (*ready < 0)
        die_on_fwdio(FWDIO_EOPEN, "the open file (ready)");
    sleepy_barrier();
    return file;
}

/* A stream open on every rank with its first step (SMALL_FILE_BYTES_PER_RANK
 * from each rank) complete, nothing in flight. */
static fwdio_file_t *open_idle_stream(const struct ctx *c, fwdio_runtime_t *rt)
{
    fwdio_file_t *file = NULL;
    die_on_fwdio(fwdio_open(rt, c->path, FWDIO_SIZE_GROWS, NULL, NULL, &file), "fwdio_open");
    static char bytes[SMALL_FILE_BYTES_PER_RANK];
    memset(bytes, 'a' + c->rank % 26, sizeof bytes);
    die_on_fwdio(fwdio_write(file, bytes, sizeof bytes, (uint64_t)c->rank * sizeof bytes),
                 "fwdio_write (stream)");
    die_on_fwdio(fwdio_step_end(file), "fwdio_step_end");
    die_on_fwdio(fwdio_step_wait(file, 0), "fwdio_step_wait");
    sleepy_barrier();
    return file;
}

/* One rep: the loops in order, results into out[NCFG]. */
static void run_rep(const struct ctx *c, struct sample *out)
{
    out[CFG_NONE] = timed_loop(c);

    fwdio_runtime_t *rt = NULL;
    die_on_fwdio(fwdio_init(MPI_COMM_WORLD, NULL, &rt), "fwdio_init");
    out[CFG_IDLE] = timed_loop(c);
    write_small_file(c, rt);
    out[CFG_AFTER_FILE] = timed_loop(c);
    int ready;
    fwdio_file_t *file = open_idle_file(c, rt, &ready);
    out[CFG_FILE_OPEN] = timed_loop(c);
    die_on_fwdio(fwdio_close(file), "fwdio_close");
    die_on_fwdio(fwdio_wait(file), "the open file (fwdio_wait)");
    fwdio_file_free(file);
    sleepy_barrier();
    file = open_idle_stream(c, rt);
    out[CFG_STREAM_OPEN] = timed_loop(c);
    die_on_fwdio(fwdio_close(file), "fwdio_close (stream)");
    die_on_fwdio(fwdio_wait(file), "the stream (fwdio_wait)");
    fwdio_file_free(file);
    sleepy_barrier();
    if (c->rank == 0)
        unlink(c->path);
    die_on_fwdio(fwdio_finalize(rt), "fwdio_finalize");
}

/* ------------------------------------------------------------ report */

struct spread {
    double median, min, max;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place; n > 0. */
static struct spread spread_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double mid = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return (struct spread){mid, v[0], v[n - 1]};
}

enum column { COL_WALL_MS, COL_RATIO, COL_CPU_MS_PER_S, COL_ALL_RANKS_PCT, NCOL };

static const char *const col_names[NCOL] = {
    "loop ms (max over ranks)",
    "loop / none",
    "other-thread CPU ms per s of loop, per rank",
    "all ranks, % of one core",
};

/* Value of one column for config `cfg` in one rep (samples[NCFG]). */
static double column_value(const struct sample *rep, int cfg, enum column col)
{
    const struct sample *s = &rep[cfg];
    switch (col) {
    case COL_WALL_MS: return 1e3 * s->wall;
    case COL_RATIO: return s->wall / rep[CFG_NONE].wall;
    case COL_CPU_MS_PER_S: return 1e3 * s->cpu_per_s;
    case COL_ALL_RANKS_PCT: return 100.0 * s->other_cpu / s->wall;
    case NCOL: break;
    }
    return 0.0;
}

static void format_cell(char *buf, size_t cap, const struct sample *samples, int reps, int cfg,
                        enum column col)
{
    if (col == COL_RATIO && cfg == CFG_NONE) {
        snprintf(buf, cap, "-");
        return;
    }
    double *v = malloc(sizeof *v * (size_t)reps);
    if (!v) {
        snprintf(buf, cap, "(no memory)");
        return;
    }
    for (int r = 0; r < reps; r++)
        v[r] = column_value(&samples[r * NCFG], cfg, col);
    struct spread s = spread_of(v, reps);
    free(v);
    int decimals = col == COL_WALL_MS ? 1 : col == COL_RATIO ? 3 : 2;
    snprintf(buf, cap, "%.*f [%.*f, %.*f]", decimals, s.median, decimals, s.min, decimals, s.max);
}

static void print_table(const struct ctx *c, const struct opts *o, const struct sample *samples)
{
    printf("\nfwdio-idle-cost: %d ranks, %d reps, loop of %llu iterations (~%.2f s target)\n",
           c->nranks, o->reps, (unsigned long long)c->iters, o->seconds);
    printf("cells: median [min, max] over reps\n\n| runtime |");
    for (int col = 0; col < NCOL; col++)
        printf(" %s |", col_names[col]);
    printf("\n| --- |");
    for (int col = 0; col < NCOL; col++)
        printf(" --- |");
    printf("\n");
    for (int cfg = 0; cfg < NCFG; cfg++) {
        printf("| %s |", cfg_names[cfg]);
        for (int col = 0; col < NCOL; col++) {
            char cell[96];
            format_cell(cell, sizeof cell, samples, o->reps, cfg, (enum column)col);
            printf(" %s |", cell);
        }
        printf("\n");
    }
    fflush(stdout);
}

/* ------------------------------------------------------------ main */

static void usage(FILE *out)
{
    fprintf(out, "usage: fwdio-idle-cost [--seconds S] [--reps R]\n"
                 "  --seconds S  wall time of one compute loop, all ranks at once, up to 3600\n"
                 "               (0.5)\n"
                 "  --reps R     repetitions, interleaved, up to 1000 (5)\n"
                 "  --help       this text\n");
}

enum { OPT_SECONDS = 256, OPT_REPS };

static const struct option options[] = {
    {"seconds", required_argument, NULL, OPT_SECONDS},
    {"reps", required_argument, NULL, OPT_REPS},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_SECONDS:
        if (cli_double(c, 0, 3600, &o->seconds))
            return CLI_BAD;
        return o->seconds > 0 ? 0 : cli_bad_value(c, "more than 0 seconds");
    case OPT_REPS: return cli_int(c, 1, 1000, &o->reps);
    default: return CLI_BAD;
    }
}

/* The small file's name, chosen by rank 0 and shared. */
static void choose_path(struct ctx *c)
{
    if (c->rank == 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(c->path, sizeof c->path, "%s/fwdio-idle-cost-%ld.dat",
                 dir && *dir ? dir : "/tmp", (long)getpid());
    }
    MPI_Bcast(c->path, (int)sizeof c->path, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static int run(const struct opts *o)
{
    struct ctx c = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.nranks);
    choose_path(&c);
    c.iters = calibrate(o->seconds);

    struct sample *samples = calloc((size_t)o->reps * NCFG, sizeof *samples);
    if (!samples) {
        fprintf(stderr, "fwdio-idle-cost: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < o->reps; r++) {
        run_rep(&c, &samples[r * NCFG]);
        if (c.rank == 0) {
            fprintf(stderr,
                    "rep %d/%d: none %.1f ms, idle %.1f ms, after file %.1f ms, file open %.1f "
                    "ms, stream open %.1f ms\n",
                    r + 1, o->reps, 1e3 * samples[r * NCFG + CFG_NONE].wall,
                    1e3 * samples[r * NCFG + CFG_IDLE].wall,
                    1e3 * samples[r * NCFG + CFG_AFTER_FILE].wall,
                    1e3 * samples[r * NCFG + CFG_FILE_OPEN].wall,
                    1e3 * samples[r * NCFG + CFG_STREAM_OPEN].wall);
        }
    }
    if (c.rank == 0)
        print_table(&c, o, samples);
    free(samples);
    return 0;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct opts o = {.seconds = 0.5, .reps = 5};
    cli_t c;
    cli_begin(&c, "fwdio-idle-cost", argc, argv, options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    int rc = run(&o);
    MPI_Finalize();
    return rc;
}
