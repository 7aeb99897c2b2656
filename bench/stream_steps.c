/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-steps: what a stream's steps cost and how soon they complete
 * (docs/results/streams.md).
 *
 * Every rank computes for --compute seconds per step (a calibrated loop) and,
 * in the stream variant, writes --size bytes of the step (its share of a
 * frame, at its place in the frame) and ends the step with fwdio_step_end,
 * without waiting; after the last step it closes the stream and waits for it.
 * Each rep runs the variants side by side: none (compute only) then stream.
 * Reported per rep and as medians: time to solution (max over ranks) of each
 * variant and their ratio; the time from a step's end to its completion
 * (step callback, run on the progress thread) on rank 0, median, 90th
 * percentile and maximum over the steps; the most steps ended but not yet
 * complete at any step end (the lag); and the CPU of fwdio's threads per
 * step (summed over ranks).
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */

#include "cli.h"
#include "fwdio.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct opts {
    uint64_t size;    /* bytes per rank per step */
    int steps;
    double compute;   /* seconds per step */
    int reps;
    int writers;
    int durable;
    const char *path;
};

static volatile double sink;

/* Loop iterations that take about `seconds` here. */
static uint64_t calibrate(double seconds)
{
    uint64_t n = 1 << 20;
    for (;;) {
        double t0 = MPI_Wtime();
        double x = 0;
        for (uint64_t i = 0; i < n; i++)
            x += sqrt((double)i);
        sink = x;
        double t = MPI_Wtime() - t0;
        if (t > 0.05) {
            double per = t / (double)n;
            uint64_t want = (uint64_t)(seconds / per);
            MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
            return want;
        }
        n *= 2;
    }
}

static void compute(uint64_t iters)
{
    double x = 0;
    for (uint64_t i = 0; i < iters; i++)
        x += sqrt((double)i);
    sink = x;
}

static double thread_cpu(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

struct run {
    double *t_end, *t_done; /* per step (rank 0's view) */
    atomic_int done;
    int max_lag;
};

static void on_step(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    (void)f;
    struct run *r = user;
    if (status != FWDIO_OK) {
        fprintf(stderr, "fwdio-steps: step %llu failed: %s\n", (unsigned long long)step,
                fwdio_strerror(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    r->t_done[step] = MPI_Wtime();
    atomic_store(&r->done, (int)step + 1);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One variant: returns the time to solution (max over ranks). */
static double run_variant(const struct opts *o, uint64_t iters, fwdio_runtime_t *rt,
                          struct run *r, double *other_cpu)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char *buf = rt ? malloc(o->size) : NULL;
    if (buf)
        memset(buf, 'a' + rank % 26, o->size);
    fwdio_file_t *f = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double cpu0 = thread_cpu(RUSAGE_SELF) - thread_cpu(RUSAGE_THREAD);
    double t0 = MPI_Wtime();
    if (rt) {
        fwdio_options_t opts;
        fwdio_options_init(&opts);
        opts.writers = o->writers;
        opts.durable = o->durable;
        fwdio_callbacks_t cbs = {.step = on_step, .user = r};
        if (fwdio_open(rt, o->path, FWDIO_SIZE_GROWS, &opts, &cbs, &f) != FWDIO_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    r->max_lag = 0;
    atomic_store(&r->done, 0);
    for (int k = 0; k < o->steps; k++) {
        compute(iters);
        if (!rt)
            continue;
        uint64_t at = ((uint64_t)k * (uint64_t)nranks + (uint64_t)rank) * o->size;
        if (fwdio_write(f, buf, o->size, at) != FWDIO_OK || fwdio_step_end(f) != FWDIO_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
        r->t_end[k] = MPI_Wtime();
        int lag = k + 1 - atomic_load(&r->done);
        if (lag > r->max_lag)
            r->max_lag = lag;
    }
    if (rt) {
        if (fwdio_close(f) != FWDIO_OK || fwdio_wait(f) != FWDIO_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
        fwdio_file_free(f);
    }
    double tts = MPI_Wtime() - t0;
    double cpu = thread_cpu(RUSAGE_SELF) - thread_cpu(RUSAGE_THREAD) - cpu0;
    MPI_Allreduce(MPI_IN_PLACE, &tts, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&cpu, other_cpu, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &r->max_lag, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(buf);
    return tts;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fwdio-steps [--size BYTES] [--steps N] [--compute S] [--reps R]\n"
            "                   [--writers W] [--durable] [--path FILE]\n"
            "  --size BYTES    bytes per rank per step (default 1M)\n"
            "  --steps N       steps of a run (default 50)\n"
            "  --compute S     seconds of computation per step (default 0.02)\n"
            "  --reps R        repetitions of both variants (default 3)\n"
            "  --writers W     fwdio writer ranks (default: fwdio's)\n"
            "  --durable       fdatasync before a step counts as complete\n"
            "  --path FILE     the stream's file, removed at the end (default fwdio-steps.out)\n"
            "  --help          this text\n"
            CLI_SIZE_GRAMMAR);
}

enum { OPT_SIZE = 256, OPT_STEPS, OPT_COMPUTE, OPT_REPS, OPT_WRITERS, OPT_DURABLE, OPT_PATH };

static const struct option options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    {"reps", required_argument, NULL, OPT_REPS},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"durable", no_argument, NULL, OPT_DURABLE},
    {"path", required_argument, NULL, OPT_PATH},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1, (uint64_t)1 << 40, &o->size);
    case OPT_STEPS: return cli_int(c, 1, 1 << 24, &o->steps);
    case OPT_COMPUTE: return cli_double(c, 0, 3600, &o->compute);
    case OPT_REPS: return cli_int(c, 1, 1 << 20, &o->reps);
    case OPT_WRITERS: return cli_int(c, 0, INT32_MAX, &o->writers);
    case OPT_DURABLE: o->durable = 1; return 0;
    case OPT_PATH: o->path = c->arg; return 0;
    default: return CLI_BAD;
    }
}

int main(int argc, char **argv)
{
    int provided, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {.size = 1 << 20, .steps = 50, .compute = 0.02, .reps = 3,
                     .path = "fwdio-steps.out"};
    cli_t c;
    cli_begin(&c, "fwdio-steps", argc, argv, options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    uint64_t iters = calibrate(o.compute);
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = FWDIO_CALLBACKS_ON_PROGRESS; /* completion times as they happen */
    cfg.pinned |= FWDIO_PIN_CALLBACK_MODE;
    fwdio_runtime_t *rt = NULL;
    if (fwdio_init(MPI_COMM_WORLD, &cfg, &rt) != FWDIO_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    struct run r = {.t_end = calloc((size_t)o.steps, sizeof(double)),
                    .t_done = calloc((size_t)o.steps, sizeof(double))};
    double *lat = calloc((size_t)o.steps, sizeof(double));
    double *ratio = calloc((size_t)o.reps, sizeof(double));
    double *p50 = calloc((size_t)o.reps, sizeof(double));
    double *p90 = calloc((size_t)o.reps, sizeof(double));
    double *pmax = calloc((size_t)o.reps, sizeof(double));
    double *cpu_step = calloc((size_t)o.reps, sizeof(double));
    if (rank == 0)
        printf("fwdio-steps: %d ranks, %d steps of %.3f s compute, %llu bytes per rank per "
               "step, writers %d%s\n",
               nranks, o.steps, o.compute, (unsigned long long)o.size, o.writers,
               o.durable ? ", durable" : "");
    for (int rep = 0; rep < o.reps; rep++) {
        double cpu_none, cpu_stream;
        double none = run_variant(&o, iters, NULL, &r, &cpu_none);
        double stream = run_variant(&o, iters, rt, &r, &cpu_stream);
        for (int k = 0; k < o.steps; k++)
            lat[k] = r.t_done[k] - r.t_end[k];
        double mx = 0;
        for (int k = 0; k < o.steps; k++)
            mx = lat[k] > mx ? lat[k] : mx;
        qsort(lat, (size_t)o.steps, sizeof *lat, by_value);
        ratio[rep] = stream / none;
        p50[rep] = lat[o.steps / 2];
        p90[rep] = lat[(o.steps * 9) / 10];
        pmax[rep] = mx;
        cpu_step[rep] = (cpu_stream - cpu_none) / o.steps;
        if (rank == 0)
            printf("rep %d: tts none %.3f s, stream %.3f s (x%.3f); step end -> complete "
                   "median %.1f ms, p90 %.1f ms, max %.1f ms; lag at most %d steps; fwdio "
                   "threads %.2f ms CPU per step\n",
                   rep + 1, none, stream, ratio[rep], 1e3 * p50[rep], 1e3 * p90[rep],
                   1e3 * pmax[rep], r.max_lag, 1e3 * cpu_step[rep]);
    }
    if (rank == 0) {
        printf("median of %d reps: stream/none time to solution %.3f; step latency median "
               "%.1f ms, p90 %.1f ms, max %.1f ms; fwdio CPU per step %.2f ms\n",
               o.reps, median(ratio, o.reps), 1e3 * median(p50, o.reps),
               1e3 * median(p90, o.reps), 1e3 * median(pmax, o.reps),
               1e3 * median(cpu_step, o.reps));
        unlink(o.path);
    }
    fwdio_finalize(rt);
    free(r.t_end);
    free(r.t_done);
    free(lat);
    free(ratio);
    free(p50);
    free(p90);
    free(pmax);
    free(cpu_step);
    MPI_Finalize();
    return 0;
}
