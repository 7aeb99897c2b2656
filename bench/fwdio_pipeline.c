/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-pipeline: does the writer's I/O thread overlap receiving with writing?
 *
 * An application computes between output steps. Each step every rank writes
 * its contiguous share of a new file through fwdio, closes, computes, and
 * waits for the file. The same loop runs with fwdio's I/O thread (pwrite and
 * fdatasync on their own thread) and inline (fwdio_config_t.io_inline = 1:
 * on the progress thread, so a writer stops receiving while it writes), and
 * with no output at all, interleaved rep by rep, in one run.
 *
 * From the writers' fwdio_file_stats it takes the write phase W (pwrite +
 * fdatasync time); the receive phase is R = inline end-to-end - W (inline, the
 * writer does one after the other). The overlap the I/O thread achieves,
 * inline end-to-end - thread end-to-end, is compared with its bound min(R, W)
 * (a pipeline can hide at most the shorter of the two phases).
 * Results: docs/results/writer-pipeline.md.
 */
#define _GNU_SOURCE /* syncfs */

#include "app_util.h"
#include "cli.h"
#include "fwdio.h"
#include "pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)
#define CALLS_PER_STEP 4 /* fwdio_write calls per rank and step, like a few arrays */
#define NO_BAD_OFFSET UINT64_MAX

/* ------------------------------------------------------------------ options */

struct pipe_opts {
    uint64_t size;          /* bytes per output step (one file) */
    int steps;
    double compute_s;       /* CPU seconds per rank between output steps */
    int writers;
    uint64_t writer_buffer; /* fwdio_config_t.writer_buffer */
    int durable;
    int reps;
    const char *csv;
    const char *dir;
    int warm_up;            /* one untimed output loop before each rep */
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: fwdio-pipeline [options]\n"
            "  --size BYTES          bytes per output step (default 256M)\n"
            "  --steps N             output steps per loop (default 4)\n"
            "  --compute SECONDS     CPU seconds per rank after each step (default 0.2)\n"
            "  --writers W           writer ranks (default 2)\n"
            "  --writer-buffer BYTES writer memory budget (default 64M)\n"
            "  --durable | --no-durable  fdatasync before complete (default on)\n"
            "  --reps N              repetitions (default 3)\n"
            "  --no-warm-up          no untimed output loop before each rep\n"
            "  --dir DIR             where the files go (default $TMPDIR or /tmp)\n"
            "  --csv FILE            one row per step\n"
            "  --help                this text\n"
            CLI_SIZE_GRAMMAR);
}

enum {
    OPT_SIZE = 256, OPT_STEPS, OPT_COMPUTE, OPT_WRITERS, OPT_WRITER_BUFFER, OPT_DURABLE,
    OPT_NO_DURABLE, OPT_REPS, OPT_NO_WARM_UP, OPT_DIR, OPT_CSV
};

static const struct option options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"writer-buffer", required_argument, NULL, OPT_WRITER_BUFFER},
    {"durable", no_argument, NULL, OPT_DURABLE},
    {"no-durable", no_argument, NULL, OPT_NO_DURABLE},
    {"reps", required_argument, NULL, OPT_REPS},
    {"no-warm-up", no_argument, NULL, OPT_NO_WARM_UP},
    {"dir", required_argument, NULL, OPT_DIR},
    {"csv", required_argument, NULL, OPT_CSV},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct pipe_opts *o = ctx;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &o->size);
    case OPT_WRITER_BUFFER: return cli_size(c, 1, UINT64_MAX, &o->writer_buffer);
    case OPT_STEPS: return cli_int(c, 1, INT_MAX, &o->steps);
    case OPT_WRITERS: return cli_int(c, 1, INT_MAX, &o->writers);
    case OPT_REPS: return cli_int(c, 1, INT_MAX, &o->reps);
    case OPT_COMPUTE: return cli_double(c, 0, 1e9, &o->compute_s);
    case OPT_DURABLE: o->durable = 1; return 0;
    case OPT_NO_DURABLE: o->durable = 0; return 0;
    case OPT_NO_WARM_UP: o->warm_up = 0; return 0;
    case OPT_DIR: o->dir = c->arg; return 0;
    case OPT_CSV: o->csv = c->arg; return 0;
    default: return CLI_BAD;
    }
}

/* ------------------------------------------------------------ the results */

enum mode { MODE_NONE, MODE_THREAD, MODE_INLINE, NMODES };
static const char *const mode_names[NMODES] = {"no output", "I/O thread", "inline"};

/* One output step, each field the max over ranks. */
struct step_result {
    double blocked;      /* fwdio_open + fwdio_write calls + fwdio_close */
    double e2e_wait;     /* fwdio_open to fwdio_wait returning (includes the compute) */
    double e2e_complete; /* fwdio_open to the complete status (fwdio_file_stats) */
    double write_phase;  /* W: pwrite_time + sync_time of the busiest writer */
    double pwrite, sync; /* the two parts, each the max over writers */
    double pwrite_calls; /* summed over writers */
    double partial;      /* partial flushes, summed over writers */
    int status;          /* worst status over ranks */
    int verified;        /* 1: every byte matched */
};

/* One loop of `steps` steps in one mode. */
struct loop_result {
    double tts;            /* the whole loop, max over ranks */
    struct step_result *steps;
    uint64_t writer_peak;  /* max over ranks of fwdio_runtime_stats.writer_peak */
    uint64_t staging_peak;
    uint64_t writer_budget;
    int failed;
};

/* ------------------------------------------------------------ the context */

struct pipe_ctx {
    const struct pipe_opts *opts;
    int rank, nranks;
    uint64_t offset, len;  /* this rank's share of every file */
    unsigned char **data;  /* one buffer per step, filled before each loop */
    long slice_iters;      /* calibrated compute slice */
    char dir[PATH_MAX];
};

static uint64_t seed_of(int rep, int mode, int step, int steps)
{
    return 0x919E11ull + (uint64_t)((rep * NMODES + mode) * steps + step);
}

static void file_path(const struct pipe_ctx *ctx, int rep, int mode, int step, char *out,
                      size_t cap)
{
    snprintf(out, cap, "%s/r%d-%s-s%d.dat", ctx->dir, rep, mode == MODE_THREAD ? "thread" : "inline",
             step);
}

/* ------------------------------------------------------------- one step */

/* This rank's share in CALLS_PER_STEP fwdio_write calls; returns the first error. */
static int write_share(const struct pipe_ctx *ctx, fwdio_file_t *file, const unsigned char *src)
{
    uint64_t call = (ctx->len + CALLS_PER_STEP - 1) / CALLS_PER_STEP;
    int first_error = FWDIO_OK;
    for (uint64_t done = 0; done < ctx->len;) {
        uint64_t n = ctx->len - done < call ? ctx->len - done : call;
        int rc = fwdio_write(file, src + done, (size_t)n, ctx->offset + done);
        if (rc != FWDIO_OK && first_error == FWDIO_OK)
            first_error = rc;
        done += n;
    }
    return first_error;
}

/* One output step on this rank: output, compute, wait. Fills this rank's numbers. */
static void run_step(struct pipe_ctx *ctx, fwdio_runtime_t *rt, const char *path,
                     const unsigned char *src, double compute_s, struct step_result *out)
{
    fwdio_options_t fo;
    fwdio_options_init(&fo);
    fo.writers = ctx->opts->writers;
    fo.durable = ctx->opts->durable;
    fwdio_file_t *file = NULL;

    double t0 = MPI_Wtime();
    int rc = fwdio_open(rt, path, ctx->opts->size, &fo, NULL, &file);
    if (rc == FWDIO_OK) {
        int wrc = write_share(ctx, file, src);
        int crc = fwdio_close(file);
        rc = wrc != FWDIO_OK ? wrc : crc;
    }
    out->blocked = MPI_Wtime() - t0;
    app_compute(rt, ctx->slice_iters, compute_s);
    int status = file ? fwdio_wait(file) : rc;
    out->e2e_wait = MPI_Wtime() - t0;
    out->status = rc != FWDIO_OK ? rc : status;
    if (out->status != FWDIO_OK)
        fprintf(stderr, "[rank %d] %s: %s\n", ctx->rank, path,
                file ? fwdio_file_error(file) : fwdio_strerror(out->status));
    if (!file)
        return;
    fwdio_file_stats_t st;
    if (fwdio_file_stats(file, &st) == FWDIO_OK) {
        out->e2e_complete = st.time_to_complete;
        out->write_phase = st.pwrite_time + st.sync_time;
        out->partial = (double)st.partial_flushes;
        out->pwrite = st.pwrite_time;
        out->sync = st.sync_time;
        out->pwrite_calls = (double)st.pwrite_calls;
    }
    fwdio_file_free(file);
}

/* Max over ranks of the times, sum of partial flushes, min of the status. */
static void combine_steps(struct step_result *steps, int n)
{
    for (int s = 0; s < n; s++) {
        struct step_result *r = &steps[s];
        double mine[6] = {r->blocked, r->e2e_wait, r->e2e_complete, r->write_phase, r->pwrite,
                          r->sync};
        double most[6], counts[2] = {r->partial, r->pwrite_calls}, sums[2];
        MPI_Allreduce(mine, most, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(counts, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int worst;
        MPI_Allreduce(&r->status, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        *r = (struct step_result){.blocked = most[0], .e2e_wait = most[1],
                                  .e2e_complete = most[2], .write_phase = most[3],
                                  .pwrite = most[4], .sync = most[5], .partial = sums[0],
                                  .pwrite_calls = sums[1], .status = worst};
    }
}

/*
 * Commits the file system's journal now, so that the work the removals leave
 * behind (freeing blocks; with the `discard` mount option, discards sent to the
 * disk) is done here, untimed, instead of during the next timed loop. Without
 * it, the first loop after a pause measured 2x longer pwrite times on ext4.
 */
static void settle_file_system(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || syncfs(fd) != 0)
        fprintf(stderr, "fwdio-pipeline: syncfs %s: %s\n", dir, strerror(errno));
    if (fd >= 0)
        close(fd);
}

/* Every rank checks its share of every file, then rank 0 removes them. Returns failures. */
static int verify_and_remove(struct pipe_ctx *ctx, int rep, int mode, struct step_result *steps)
{
    int failures = 0;
    for (int s = 0; s < ctx->opts->steps; s++) {
        char path[PATH_MAX + 64];
        file_path(ctx, rep, mode, s, path, sizeof path);
        uint64_t bad = NO_BAD_OFFSET, first_bad;
        if (ctx->len && pattern_check_file(path, ctx->opts->size, ctx->offset, ctx->len,
                                           seed_of(rep, mode, s, ctx->opts->steps), 0, &bad) == 0)
            bad = NO_BAD_OFFSET;
        MPI_Allreduce(&bad, &first_bad, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
        steps[s].verified = first_bad == NO_BAD_OFFSET;
        failures += !steps[s].verified || steps[s].status != FWDIO_OK;
        if (!steps[s].verified && ctx->rank == 0)
            fprintf(stderr, "fwdio-pipeline: %s: first bad offset %" PRIu64 "\n", path, first_bad);
        if (ctx->rank == 0 && unlink(path) != 0 && errno != ENOENT)
            fprintf(stderr, "fwdio-pipeline: cannot remove %s: %s\n", path, strerror(errno));
    }
    if (ctx->rank == 0)
        settle_file_system(ctx->dir);
    MPI_Barrier(MPI_COMM_WORLD); /* the next loop starts with the files gone */
    return failures;
}

/* ------------------------------------------------------------- one loop */

/* Returns 0 when fwdio started on every rank, -1 when on none (aborts on a split). */
static int start_fwdio(const struct pipe_ctx *ctx, int io_inline, fwdio_runtime_t **rt)
{
    fwdio_config_t cfg = {.writer_buffer = (size_t)ctx->opts->writer_buffer,
                          .io_inline = io_inline};
    int rc = fwdio_init(MPI_COMM_WORLD, &cfg, rt);
    if (rc != FWDIO_OK)
        fprintf(stderr, "[rank %d] fwdio_init: %s\n", ctx->rank, fwdio_strerror(rc));
    int failed = rc != FWDIO_OK, nfailed;
    MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (nfailed > 0 && nfailed < ctx->nranks)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return nfailed ? -1 : 0;
}

static void fill_buffers(struct pipe_ctx *ctx, int rep, int mode)
{
    for (int s = 0; s < ctx->opts->steps; s++)
        pattern_fill(ctx->data[s], (size_t)ctx->len, ctx->offset,
                     seed_of(rep, mode, s, ctx->opts->steps));
}

/* The application without output: the same compute, for the overhead on time to solution. */
static void run_no_output(struct pipe_ctx *ctx, struct loop_result *out)
{
    app_quiet_barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < ctx->opts->steps; s++)
        app_compute(NULL, ctx->slice_iters, ctx->opts->compute_s);
    double tts = MPI_Wtime() - t0;
    app_quiet_barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&tts, &out->tts, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static void collect_memory(fwdio_runtime_t *rt, struct loop_result *out)
{
    fwdio_runtime_stats_t rs = {0};
    fwdio_runtime_stats(rt, &rs);
    uint64_t mine[3] = {rs.writer_peak, rs.staging_peak, rs.writer_budget}, most[3];
    MPI_Allreduce(mine, most, 3, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    out->writer_peak = most[0];
    out->staging_peak = most[1];
    out->writer_budget = most[2];
}

/* The loop with output through a fresh runtime (I/O thread or inline). */
static void run_with_output(struct pipe_ctx *ctx, int rep, int mode, struct loop_result *out)
{
    fwdio_runtime_t *rt;
    if (start_fwdio(ctx, mode == MODE_INLINE, &rt) != 0) {
        out->failed = ctx->opts->steps;
        return;
    }
    fill_buffers(ctx, rep, mode);
    app_quiet_barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < ctx->opts->steps; s++) {
        char path[PATH_MAX + 64];
        file_path(ctx, rep, mode, s, path, sizeof path);
        run_step(ctx, rt, path, ctx->data[s], ctx->opts->compute_s, &out->steps[s]);
    }
    double tts = MPI_Wtime() - t0;
    app_quiet_barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&tts, &out->tts, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    combine_steps(out->steps, ctx->opts->steps);
    collect_memory(rt, out);
    fwdio_finalize(rt);
    out->failed = verify_and_remove(ctx, rep, mode, out->steps);
}

/* --------------------------------------------------------------- summaries */


enum step_field { F_BLOCKED, F_E2E_WAIT, F_E2E_COMPLETE, F_WRITE_PHASE };

static double step_field(const struct step_result *r, enum step_field f)
{
    switch (f) {
    case F_BLOCKED: return r->blocked;
    case F_E2E_WAIT: return r->e2e_wait;
    case F_E2E_COMPLETE: return r->e2e_complete;
    case F_WRITE_PHASE: return r->write_phase;
    }
    return 0.0;
}

/* Mean over the steps of one loop. */
static double step_mean(const struct loop_result *l, int steps, enum step_field f)
{
    double sum = 0;
    for (int s = 0; s < steps; s++)
        sum += step_field(&l->steps[s], f);
    return sum / steps;
}

/* The pipeline analysis of one rep, from its inline and thread loops (means per step). */
struct phases {
    double e2e_thread, e2e_inline; /* to complete */
    double write, receive;         /* W (inline) and R = inline e2e - W */
    double bound, overlap;         /* min(R, W) and inline e2e - thread e2e */
};

static struct phases phases_of(const struct loop_result *rep_loops, int steps)
{
    struct phases p;
    p.e2e_thread = step_mean(&rep_loops[MODE_THREAD], steps, F_E2E_COMPLETE);
    p.e2e_inline = step_mean(&rep_loops[MODE_INLINE], steps, F_E2E_COMPLETE);
    p.write = step_mean(&rep_loops[MODE_INLINE], steps, F_WRITE_PHASE);
    p.receive = p.e2e_inline - p.write;
    p.bound = p.receive < p.write ? p.receive : p.write;
    p.overlap = p.e2e_inline - p.e2e_thread;
    return p;
}

/* All results: loops[rep * NMODES + mode]. */
struct table {
    const struct loop_result *loops;
    const struct pipe_opts *opts;
};

typedef double (*rep_value_fn)(const struct table *t, int rep, int mode);

static app_spread_t over_reps(const struct table *t, int mode, rep_value_fn fn)
{
    double *v = malloc(sizeof *v * (size_t)t->opts->reps);
    if (!v)
        return (app_spread_t){0};
    for (int rep = 0; rep < t->opts->reps; rep++)
        v[rep] = fn(t, rep, mode);
    app_spread_t s = app_spread_of(v, t->opts->reps);
    free(v);
    return s;
}

static const struct loop_result *loop_at(const struct table *t, int rep, int mode)
{
    return &t->loops[rep * NMODES + mode];
}

static double v_tts(const struct table *t, int rep, int mode)
{
    return loop_at(t, rep, mode)->tts;
}

static double v_overhead(const struct table *t, int rep, int mode)
{
    double base = loop_at(t, rep, MODE_NONE)->tts;
    return base > 0 ? 100.0 * (loop_at(t, rep, mode)->tts - base) / base : 0.0;
}

static double v_blocked(const struct table *t, int rep, int mode)
{
    return 1e3 * step_mean(loop_at(t, rep, mode), t->opts->steps, F_BLOCKED);
}

static double v_e2e_wait(const struct table *t, int rep, int mode)
{
    return 1e3 * step_mean(loop_at(t, rep, mode), t->opts->steps, F_E2E_WAIT);
}

static double v_e2e_complete(const struct table *t, int rep, int mode)
{
    return 1e3 * step_mean(loop_at(t, rep, mode), t->opts->steps, F_E2E_COMPLETE);
}

static double v_write(const struct table *t, int rep, int mode)
{
    return 1e3 * step_mean(loop_at(t, rep, mode), t->opts->steps, F_WRITE_PHASE);
}

static double v_peak(const struct table *t, int rep, int mode)
{
    return (double)loop_at(t, rep, mode)->writer_peak / MIB;
}

static double v_ratio_tts(const struct table *t, int rep, int mode)
{
    (void)mode;
    return v_tts(t, rep, MODE_THREAD) / v_tts(t, rep, MODE_INLINE);
}

static double v_ratio_wait(const struct table *t, int rep, int mode)
{
    (void)mode;
    return v_e2e_wait(t, rep, MODE_THREAD) / v_e2e_wait(t, rep, MODE_INLINE);
}

static double v_ratio_complete(const struct table *t, int rep, int mode)
{
    (void)mode;
    return v_e2e_complete(t, rep, MODE_THREAD) / v_e2e_complete(t, rep, MODE_INLINE);
}

static struct phases rep_phases(const struct table *t, int rep)
{
    return phases_of(loop_at(t, rep, 0), t->opts->steps);
}

static double v_receive(const struct table *t, int rep, int mode)
{
    (void)mode;
    return 1e3 * rep_phases(t, rep).receive;
}

static double v_bound(const struct table *t, int rep, int mode)
{
    (void)mode;
    return 1e3 * rep_phases(t, rep).bound;
}

static double v_overlap(const struct table *t, int rep, int mode)
{
    (void)mode;
    return 1e3 * rep_phases(t, rep).overlap;
}

static double v_overlap_share(const struct table *t, int rep, int mode)
{
    (void)mode;
    struct phases p = rep_phases(t, rep);
    return p.bound > 0 ? p.overlap / p.bound : 0.0;
}

/* "median [min, max]" of fn over reps, as a table cell. */
static const char *cell(char *buf, size_t cap, const struct table *t, int mode, rep_value_fn fn,
                        int decimals)
{
    app_spread_t s = over_reps(t, mode, fn);
    snprintf(buf, cap, "%.*f [%.*f, %.*f]", decimals, s.median, decimals, s.min, decimals, s.max);
    return buf;
}

static int verified_count(const struct table *t, int mode, int *total)
{
    int ok = 0;
    *total = t->opts->reps * t->opts->steps;
    for (int rep = 0; rep < t->opts->reps; rep++)
        for (int s = 0; s < t->opts->steps; s++) {
            const struct step_result *r = &loop_at(t, rep, mode)->steps[s];
            ok += r->verified && r->status == FWDIO_OK;
        }
    return ok;
}

static void print_mode_table(const struct table *t)
{
    char a[48], b[48], c[48], d[48], e[48], f[48], g[48];
    printf("| mode | time to solution s | overhead vs no output %% | blocked ms/step | "
           "end-to-end to wait ms/step | end-to-end to complete ms/step | W = pwrite+sync "
           "ms/step | writer peak MiB | verified |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    printf("| %s | %s | - | - | - | - | - | - | - |\n", mode_names[MODE_NONE],
           cell(a, sizeof a, t, MODE_NONE, v_tts, 3));
    for (int m = MODE_THREAD; m < NMODES; m++) {
        int total, ok = verified_count(t, m, &total);
        /* Without compute there is no application time to add overhead to. */
        if (t->opts->compute_s > 0)
            cell(b, sizeof b, t, m, v_overhead, 1);
        else
            snprintf(b, sizeof b, "-");
        printf("| %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |\n", mode_names[m],
               cell(a, sizeof a, t, m, v_tts, 3), b,
               cell(c, sizeof c, t, m, v_blocked, 1), cell(d, sizeof d, t, m, v_e2e_wait, 1),
               cell(e, sizeof e, t, m, v_e2e_complete, 1), cell(f, sizeof f, t, m, v_write, 1),
               cell(g, sizeof g, t, m, v_peak, 1), ok, total);
    }
}

static void print_pair_table(const struct table *t)
{
    char a[48], b[48], c[48], d[48], e[48], f[48], g[48], h[48];
    printf("\n| e2e thread/inline (to complete) | e2e thread/inline (to wait) | "
           "tts thread/inline | R ms | W ms | bound min(R,W) ms | overlap ms | overlap/bound |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n",
           cell(a, sizeof a, t, 0, v_ratio_complete, 2), cell(b, sizeof b, t, 0, v_ratio_wait, 2),
           cell(c, sizeof c, t, 0, v_ratio_tts, 2), cell(d, sizeof d, t, 0, v_receive, 1),
           cell(e, sizeof e, t, MODE_INLINE, v_write, 1), cell(f, sizeof f, t, 0, v_bound, 1),
           cell(g, sizeof g, t, 0, v_overlap, 1), cell(h, sizeof h, t, 0, v_overlap_share, 2));
}

static void print_report(const struct table *t, int nranks)
{
    const struct pipe_opts *o = t->opts;
    const struct loop_result *any = loop_at(t, 0, MODE_THREAD);
    printf("\nfwdio-pipeline: S = %.1f MiB per step, %d steps, %.3f s CPU per rank between "
           "steps, P = %d, W = %d writers, writer budget %.1f MiB, %s, %d reps\n",
           (double)o->size / MIB, o->steps, o->compute_s, nranks, o->writers,
           (double)any->writer_budget / MIB, o->durable ? "durable (fdatasync)" : "page cache",
           o->reps);
    printf("per-step values are means over the steps of a loop; cells are median [min, max] "
           "over reps; ratios paired rep by rep\n\n");
    print_mode_table(t);
    print_pair_table(t);
}

static int write_csv(const struct table *t, int nranks)
{
    const struct pipe_opts *o = t->opts;
    FILE *f = fopen(o->csv, "w");
    if (!f) {
        fprintf(stderr, "fwdio-pipeline: cannot write %s: %s\n", o->csv, strerror(errno));
        return -1;
    }
    fprintf(f, "rep,mode,step,size,nranks,writers,writer_buffer,durable,compute_s,tts_s,"
               "blocked_s,e2e_wait_s,e2e_complete_s,write_phase_s,pwrite_s,sync_s,pwrite_calls,"
               "partial_flushes,"
               "writer_peak,staging_peak,status,verified\n");
    for (int rep = 0; rep < o->reps; rep++)
        for (int m = MODE_THREAD; m < NMODES; m++)
            for (int s = 0; s < o->steps; s++) {
                const struct loop_result *l = loop_at(t, rep, m);
                const struct step_result *r = &l->steps[s];
                fprintf(f, "%d,%s,%d,%" PRIu64 ",%d,%d,%" PRIu64 ",%d,%.6f,%.9f,%.9f,%.9f,"
                           "%.9f,%.9f,%.9f,%.9f,%.0f,%.0f,%" PRIu64 ",%" PRIu64 ",%d,%d\n",
                        rep, m == MODE_THREAD ? "thread" : "inline", s, o->size, nranks,
                        o->writers, o->writer_buffer, o->durable, o->compute_s, l->tts,
                        r->blocked, r->e2e_wait, r->e2e_complete, r->write_phase, r->pwrite, r->sync,
                        r->pwrite_calls, r->partial,
                        l->writer_peak, l->staging_peak, r->status, r->verified);
            }
    if (fclose(f) != 0) {
        fprintf(stderr, "fwdio-pipeline: cannot write %s: %s\n", o->csv, strerror(errno));
        return -1;
    }
    return 0;
}

static void print_progress(const struct table *t, int rep, int mode)
{
    const struct loop_result *l = loop_at(t, rep, mode);
    printf("rep %d %-10s tts %7.3f s", rep, mode_names[mode], l->tts);
    if (mode != MODE_NONE)
        printf("  e2e/step %8.1f ms (complete %8.1f)  W/step %8.1f ms  peak %.1f MiB  %s",
               v_e2e_wait(t, rep, mode), v_e2e_complete(t, rep, mode), v_write(t, rep, mode),
               v_peak(t, rep, mode), l->failed ? "FAILED" : "verified");
    printf("\n");
    fflush(stdout);
}

/* ---------------------------------------------------------------- set-up */

static int make_run_dir(struct pipe_ctx *ctx)
{
    return app_make_run_dir(ctx->opts->dir, "fwdio-pipeline", ctx->dir, sizeof ctx->dir);
}

/* This rank's share and one buffer per step; returns 0 when every rank has them. */
static int setup_data(struct pipe_ctx *ctx)
{
    uint64_t base = ctx->opts->size / (uint64_t)ctx->nranks;
    ctx->offset = base * (uint64_t)ctx->rank;
    ctx->len = ctx->rank == ctx->nranks - 1 ? ctx->opts->size - ctx->offset : base;
    ctx->data = calloc((size_t)ctx->opts->steps, sizeof *ctx->data);
    int ok = ctx->data != NULL, all_ok;
    for (int s = 0; ok && s < ctx->opts->steps; s++)
        ok = (ctx->data[s] = malloc(ctx->len ? (size_t)ctx->len : 1)) != NULL;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok ? 0 : -1;
}

static void teardown(struct pipe_ctx *ctx)
{
    for (int s = 0; ctx->data && s < ctx->opts->steps; s++)
        free(ctx->data[s]);
    free(ctx->data);
    if (ctx->rank == 0 && ctx->dir[0] && rmdir(ctx->dir) != 0)
        fprintf(stderr, "fwdio-pipeline: cannot remove %s: %s\n", ctx->dir, strerror(errno));
}

static struct loop_result *alloc_loops(const struct pipe_opts *o)
{
    int n = o->reps * NMODES;
    struct loop_result *loops = calloc((size_t)n, sizeof *loops);
    for (int i = 0; loops && i < n; i++)
        if (!(loops[i].steps = calloc((size_t)o->steps, sizeof *loops[i].steps)))
            return NULL; /* the process exits right after: nothing worth freeing */
    return loops;
}

static void free_loops(struct loop_result *loops, const struct pipe_opts *o)
{
    for (int i = 0; loops && i < o->reps * NMODES; i++)
        free(loops[i].steps);
    free(loops);
}

/*
 * One untimed output loop before a rep's timed ones, in the mode that comes
 * first, its files verified and removed like the others. On the 2-core test VM
 * the first output loop of a rep ran 2x slower in whatever mode it had.
 */
static int warm_up(struct pipe_ctx *ctx, int rep, int mode)
{
    struct loop_result scratch = {0};
    scratch.steps = calloc((size_t)ctx->opts->steps, sizeof *scratch.steps);
    int ok = scratch.steps != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok)
        run_with_output(ctx, rep, mode, &scratch);
    free(scratch.steps);
    return all_ok ? scratch.failed : 1;
}

/* Every rep runs the three modes in turn; returns the number of failed steps. */
static int run_all(struct pipe_ctx *ctx, struct loop_result *loops)
{
    struct table t = {.loops = loops, .opts = ctx->opts};
    int failures = 0;
    /* Odd reps run inline before the I/O thread, so neither always follows the other. */
    static const int order[2][NMODES] = {{MODE_THREAD, MODE_INLINE, MODE_NONE},
                                         {MODE_INLINE, MODE_THREAD, MODE_NONE}};
    for (int rep = 0; rep < ctx->opts->reps; rep++) {
        if (ctx->opts->warm_up)
            failures += warm_up(ctx, rep, order[rep % 2][0]);
        for (int i = 0; i < NMODES; i++) {
            int m = order[rep % 2][i];
            struct loop_result *l = &loops[rep * NMODES + m];
            if (m == MODE_NONE)
                run_no_output(ctx, l);
            else
                run_with_output(ctx, rep, m, l);
            failures += l->failed;
            if (ctx->rank == 0)
                print_progress(&t, rep, m);
        }
    }
    return failures;
}

static int pipeline_main(const struct pipe_opts *opts)
{
    struct pipe_ctx ctx = {.opts = opts};
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.nranks);
    const char *env = getenv("FWDIO_IO_INLINE");
    if (ctx.rank == 0 && env && env[0] == '1')
        fprintf(stderr, "fwdio-pipeline: FWDIO_IO_INLINE=1 makes both modes inline\n");
    if (setup_data(&ctx) != 0 || make_run_dir(&ctx) != 0) {
        if (ctx.rank == 0)
            fprintf(stderr, "fwdio-pipeline: set-up failed (memory or run directory)\n");
        teardown(&ctx);
        return 1;
    }
    app_quiet_barrier(MPI_COMM_WORLD); /* calibrate with every rank computing, as in the loop */
    ctx.slice_iters = app_calibrate_slice();
    struct loop_result *loops = alloc_loops(opts);
    int have = loops != NULL, all_have;
    MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int failed = !all_have || run_all(&ctx, loops) != 0;
    if (ctx.rank == 0 && all_have) {
        struct table t = {.loops = loops, .opts = opts};
        print_report(&t, ctx.nranks);
        if (opts->csv && write_csv(&t, ctx.nranks) != 0)
            failed = 1;
    }
    free_loops(loops, opts);
    teardown(&ctx);
    int any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct pipe_opts opts = {.size = (uint64_t)256 << 20, .steps = 4, .compute_s = 0.2,
                             .writers = 2, .writer_buffer = (uint64_t)64 << 20, .durable = 1,
                             .reps = 3, .warm_up = 1};
    cli_t c;
    cli_begin(&c, "fwdio-pipeline", argc, argv, options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &opts, print_usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    int rc = pipeline_main(&opts);
    MPI_Finalize();
    return rc;
}
