/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-bench: output steps written by every rank, through fwdio and through
 * the MPI-IO and POSIX baselines, side by side, with a memcpy of the same
 * bytes as the floor and a compute-only run as the reference of time to
 * solution.
 *
 * The rules (docs/benchmarks.md, "fwdio-bench"): every configuration runs on the same
 * data and ranks, runs are interleaved (rep by rep, every configuration in
 * order), every file is verified after its run (not timed) and then removed,
 * and the report gives median, min and max over reps plus ratios paired rep by
 * rep ("blocked / memcpy", "fwdio end-to-end / mpiio end-to-end (same W)",
 * "time to solution / none").
 *
 * The pieces are tables so that new workloads and baselines slot in:
 *   patterns[]  which bytes of the file each rank writes (block, scattered, dcd);
 *   modes[]     how a configuration runs one output step, and what it waits
 *               for after the last one;
 *   struct run_result, write_csv()  one record per run.
 * See docs/benchmarks.md for the options and the meaning of each column.
 */
#define _POSIX_C_SOURCE 200809L

#include "app_util.h"
#include "cli.h"
#include "dirty_pages.h"
#include "fwdio.h"
#include "pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)
#define MAX_WRITER_COUNTS 32
#define MAX_LIST 1024
#define MAX_STEPS 10000
#define NO_BAD_OFFSET UINT64_MAX
/* Largest count handed to one MPI-IO call: counts are ints. */
#define MPIIO_MAX_CALL ((uint64_t)1 << 30)
/* Largest single pwrite / read of the benchmark's own POSIX paths. */
#define POSIX_MAX_CALL ((size_t)1 << 30)
/* A run's status when the configuration was skipped (not an error). */
#define STATUS_SKIPPED 1

/* ------------------------------------------------------------------ options */

/* Writer placements the benchmark can ask for: fwdio's three policies, plus
 * "packed", the crowded placement (a list of ranks 0 .. W-1). */
enum bench_policy { POLICY_SPREAD, POLICY_STRIDE, POLICY_LIST, POLICY_PACKED, NPOLICIES };
static const char *const policy_names[NPOLICIES] = {"spread", "stride", "list", "packed"};
#define NLAYOUTS 3
static const char *const layout_names[NLAYOUTS] = {"block", "cyclic", "targets"};

struct bench_opts {
    uint64_t size;
    int reps;
    int durable;
    const char *dir;      /* parent of the run directory; NULL: $TMPDIR or /tmp */
    const char *csv;      /* NULL: no CSV */
    const char *pattern;  /* name in patterns[] */
    const char *modes;    /* comma-separated names from modes[] */
    int writers[MAX_WRITER_COUNTS];
    int nwriters;
    /* fwdio configurations: every policy x every layout, in the order given */
    enum bench_policy policies[NPOLICIES];
    int npolicies;
    fwdio_layout_t layouts[NLAYOUTS];
    int nlayouts;
    int targets;          /* layout targets: T (0: fwdio's default, T = W) */
    int first_writer;     /* stride */
    int writer_stride;    /* stride (0: fwdio's default spacing) */
    int list[MAX_LIST];   /* list: writer w of W is list[w] */
    int list_len;
    uint64_t write_size;  /* 0: fwdio's default */
    uint64_t stripe_size; /* 0: fwdio's default */
    uint64_t call_size;   /* bytes per fwdio_write call; 0: one call per extent */
    uint64_t record_size; /* pattern scattered: bytes per record */
    int steps;            /* output steps per run, each a new file */
    double compute;       /* calibrated CPU seconds before each output step */
    int romio_iwrite;     /* run iwrite under ROMIO anyway (it crashes in Open MPI 4.1) */
    uint64_t writer_buffer;  /* fwdio_config_t.writer_buffer; 0: fwdio's */
    uint64_t staging_buffer; /* fwdio_config_t.staging_buffer; 0: fwdio's */
    uint64_t max_message;    /* fwdio_config_t.max_message_size; 0: fwdio's */
    uint64_t combine_size;   /* fwdio_config_t.combine_size; 0: fwdio's, 1: off */
    uint64_t shared_buffer;  /* fwdio_config_t.shared_buffer; 0: fwdio's (lent: room for
                                this rank's bytes), 1: off */
    int io_inline;           /* fwdio_config_t.io_inline */
    int settle;              /* wait for the kernel's dirty pages before every run */
    int presize;             /* MPI-IO modes: MPI_File_set_size(S) after the open */
    int no_unhinted;         /* skip the "no hint" baselines of the MPI-IO modes */
};

/* ----------------------------------------------------------------- patterns */

/* Bytes [offset, offset + len) of the file. */
struct extent {
    uint64_t offset;
    uint64_t len;
};

/* The extents rank `rank` writes, in file order: stores the first `max` of them
 * in out (out may be NULL when max is 0) and returns how many there are. */
typedef size_t (*pattern_fn)(const struct bench_opts *o, int rank, int nranks,
                             struct extent *out, size_t max);

struct pattern {
    const char *name;
    const char *description;
    pattern_fn extents;
};

/* floor(size * r / p) without overflowing: size = q*p + m, so it is q*r + m*r/p. */
static uint64_t scaled_boundary(uint64_t size, int r, int p)
{
    uint64_t q = size / (uint64_t)p, m = size % (uint64_t)p;
    return q * (uint64_t)r + m * (uint64_t)r / (uint64_t)p;
}

/* Where a pattern puts its extents: the first `max` go to out, all are counted. */
struct extent_sink {
    struct extent *out;
    size_t max, n;
    uint64_t end; /* end of the last extent added */
};

/* Adds [offset, offset + len) (nothing when len is 0), merged with the previous
 * extent when the two touch. */
static void add_extent(struct extent_sink *k, uint64_t offset, uint64_t len)
{
    if (len == 0)
        return;
    if (k->n > 0 && k->end == offset) {
        if (k->n <= k->max)
            k->out[k->n - 1].len += len;
    } else {
        if (k->n < k->max)
            k->out[k->n] = (struct extent){.offset = offset, .len = len};
        k->n++;
    }
    k->end = offset + len;
}

static size_t pattern_block(const struct bench_opts *o, int rank, int nranks, struct extent *out,
                            size_t max)
{
    /* r*S/P boundaries: deliberately not aligned to stripes or write units. */
    uint64_t begin = scaled_boundary(o->size, rank, nranks);
    uint64_t end = scaled_boundary(o->size, rank + 1, nranks);
    struct extent_sink k = {.out = out, .max = max};
    add_extent(&k, begin, end - begin);
    return k.n;
}

/* splitmix64: the same sequence on every rank. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Atoms after migration: the file is N records of R bytes (the last may be short),
 * cut into contiguous runs of 1..64 records; the runs are dealt to the ranks in
 * rounds of P, each round in a freshly shuffled rank order (fixed seed), so every
 * rank holds about the same number of runs, scattered over the whole file. */
static size_t pattern_scattered(const struct bench_opts *o, int rank, int nranks,
                                struct extent *out, size_t max)
{
    int *order = malloc(sizeof *order * (size_t)nranks);
    if (!order)
        return 0;
    uint64_t state = 0x5CA77E3Dull, record = o->record_size;
    struct extent_sink k = {.out = out, .max = max};
    int slot = nranks; /* next position in the current round */
    for (uint64_t offset = 0; offset < o->size;) {
        if (slot == nranks) { /* a new round: Fisher-Yates shuffle of the ranks */
            for (int i = 0; i < nranks; i++)
                order[i] = i;
            for (int i = nranks - 1; i > 0; i--) {
                int j = (int)(next_random(&state) % (uint64_t)(i + 1));
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            slot = 0;
        }
        uint64_t records = 1 + next_random(&state) % 64;
        uint64_t len = records * record;
        if (len > o->size - offset)
            len = o->size - offset;
        if (order[slot++] == rank)
            add_extent(&k, offset, len);
        offset += len;
    }
    free(order);
    return k.n;
}

/* A DCD-like frame: x[0..N), then y[0..N), then z[0..N) as float32 (N = S / 12);
 * rank r owns atoms [r*N/P, (r+1)*N/P), so it writes one piece of each array. The
 * S mod 12 bytes after the arrays (a trailer) go to the last rank. */
static size_t pattern_dcd(const struct bench_opts *o, int rank, int nranks, struct extent *out,
                          size_t max)
{
    uint64_t atoms = o->size / 12, array = atoms * 4;
    uint64_t first = scaled_boundary(atoms, rank, nranks);
    uint64_t last = scaled_boundary(atoms, rank + 1, nranks);
    struct extent_sink k = {.out = out, .max = max};
    for (int axis = 0; axis < 3; axis++)
        add_extent(&k, (uint64_t)axis * array + first * 4, (last - first) * 4);
    if (rank == nranks - 1)
        add_extent(&k, 3 * array, o->size - 3 * array);
    return k.n;
}

static const struct pattern patterns[] = {
    {"block", "each rank one contiguous block [r*S/P, (r+1)*S/P)", pattern_block},
    {"scattered", "records dealt out in shuffled runs of 1..64 (atoms after migration)",
     pattern_scattered},
    {"dcd", "x, y, z float32 arrays; each rank one piece of each", pattern_dcd},
};

static const struct pattern *find_pattern(const char *name)
{
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        if (!strcmp(patterns[i].name, name))
            return &patterns[i];
    return NULL;
}

/* The extents of `rank` in a new array (*n of them); NULL when out of memory. */
static struct extent *pattern_extents(const struct bench_opts *o, int rank, int nranks, size_t *n)
{
    const struct pattern *pat = find_pattern(o->pattern);
    *n = pat->extents(o, rank, nranks, NULL, 0);
    struct extent *x = malloc(sizeof *x * (*n ? *n : 1));
    if (x)
        pat->extents(o, rank, nranks, x, *n);
    return x;
}

/* ------------------------------------------------------- runs and results */

struct config;

/* Everything a run needs that does not change between runs. */
struct bench_ctx {
    const struct bench_opts *opts;
    int rank, nranks;
    fwdio_runtime_t *rt;    /* up during runs of modes that use it */
    struct extent *extents;
    size_t nextents;
    size_t max_nextents;    /* over all ranks */
    uint64_t nbytes;        /* this rank's bytes: the sum of its extents */
    unsigned char *data;    /* this rank's bytes, extents back to back */
    unsigned char *scratch; /* pre-touched destination of the memcpy reference */
    unsigned char *lent;    /* lent mode: this rank's bytes again, in a fwdio_alloc buffer */
    MPI_Datatype filetype;  /* the extents as an hindexed type, or MPI_DATATYPE_NULL */
    int view_ok;            /* every rank's bytes fit one MPI-IO call through the view */
    long slice_iters;       /* calibrated compute slice */
    const char *io;         /* Open MPI's io component as selected by the environment */
    char dir[PATH_MAX];     /* fresh directory holding this process's run files */
};

/* One rank's view of one run, before the ranks' numbers are combined. */
struct run_local {
    double blocked;    /* time in output calls inside the step loop, summed over steps */
    double end_to_end; /* per step: first call to every byte in the file, summed */
    double drain;      /* after the last step: waiting for output still in flight */
    double tts;        /* the whole loop: compute, output, drain */
    int status;        /* 0, STATUS_SKIPPED, or a negative fwdio/bench error */
    int64_t peak;      /* bytes the mode buffered on this rank at most; -1: not visible */
    uint64_t peak_writer, peak_staging; /* fwdio_runtime_stats */
    /* fwdio_file_stats summed over this rank's files: bytes copied, handed
     * to MPI, handed to pwrite */
    uint64_t copied, to_mpi, to_pwrite;
    char plan[256];    /* what the configuration actually did (rank 0 reports it) */
    /* output in flight between steps */
    fwdio_file_t **files;
    double *opened;
    int nfiles;
    MPI_File fh;
    MPI_Request req;
    double started;
    int pending;
    unsigned char *image;   /* gather: the whole file on rank 0 */
    unsigned char *staging; /* gather: rank 0's receive buffer (patterns of several pieces) */
};

/* One run as reported: the record written to CSV. */
struct run_result {
    int run;             /* index in execution order */
    int rep;
    int config;          /* index into the config list */
    double blocked;      /* per step, max over ranks, seconds */
    double end_to_end;   /* per step, max over ranks, seconds */
    double mib_per_s;    /* S / end_to_end */
    double drain;        /* max over ranks */
    double tts;          /* time to solution, max over ranks */
    int status;          /* worst (lowest) status over ranks */
    int verified;        /* 1: every byte checked; 0: failed; -1: not a file mode */
    uint64_t bad_offset; /* first bad offset when verified == 0 */
    int64_t peak;        /* max over ranks; -1: not visible */
    uint64_t peak_writer, peak_staging;
    double cpu;          /* CPU seconds of every rank, all threads, during the run */
    double settle;       /* seconds waited for dirty pages before the run (--settle) */
    /* fwdio runs (else 0): over every rank, copies per output byte (bytes
     * copied + to MPI + to pwrite, over the bytes written), and the CPU
     * seconds and wakeups of fwdio's progress and I/O threads */
    double copies_per_byte;
    double progress_cpu, io_cpu;
    uint64_t progress_wakeups, io_wakeups;
};

/* How one configuration runs one output step on every rank, and finishes a run. */
typedef void (*mode_step_fn)(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                             int step, struct run_local *out);
typedef void (*mode_finish_fn)(struct bench_ctx *ctx, const struct config *cfg,
                               struct run_local *out);

enum file_kind { FILES_NONE, FILES_SHARED, FILES_PER_PROCESS };

struct mode {
    const char *name;
    mode_step_fn step;
    mode_finish_fn finish; /* NULL: nothing left in flight after a step */
    enum file_kind files;  /* FILES_NONE: a reference that never touches storage */
    int per_writers;       /* one configuration per entry of --writers */
    int also_unhinted;     /* plus one configuration with no writer count */
    int uses_runtime;      /* a fwdio runtime is up during the run */
};

/* One line of the report: a mode with its parameters. */
struct config {
    const struct mode *mode;
    int writers; /* 0: the mode's own default */
    enum bench_policy policy; /* fwdio only */
    fwdio_layout_t layout;    /* fwdio only */
    char label[48];
    char plan[256];
};
/* -------------------------------------------------------------- the modes */

static void add_step_time(struct run_local *out, double blocked, double end_to_end)
{
    out->blocked += blocked;
    out->end_to_end += end_to_end;
}

/* Compute only: the reference of time to solution (`none`, no runtime) and, with a
 * runtime that was started but never used, the idle cost (`idle`). */
static void step_nothing(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                         int step, struct run_local *out)
{
    (void)ctx, (void)cfg, (void)path, (void)step;
    out->peak = 0;
    snprintf(out->plan, sizeof out->plan, "compute only%s",
             cfg->mode->uses_runtime ? ", fwdio runtime up and idle" : ", no fwdio runtime");
}

/* memcpy of the rank's bytes into a pre-touched buffer: no output path can block less. */
static void step_memcpy(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                        int step, struct run_local *out)
{
    (void)cfg, (void)path, (void)step;
    double t0 = MPI_Wtime();
    memcpy(ctx->scratch, ctx->data, (size_t)ctx->nbytes);
    double t = MPI_Wtime() - t0;
    add_step_time(out, t, t);
    out->peak = (int64_t)ctx->nbytes;
    snprintf(out->plan, sizeof out->plan, "%.1f MiB per rank", (double)ctx->nbytes / MIB);
}

static void describe_fwdio_plan(const fwdio_file_t *file, char *plan, size_t cap)
{
    int ranks[256];
    int count = fwdio_file_writers(file, ranks, 256);
    int used = snprintf(plan, cap, "writers:");
    for (int i = 0; i < count && i < 256 && used > 0 && (size_t)used < cap; i++)
        used += snprintf(plan + used, cap - (size_t)used, " %d", ranks[i]);
    if (count > 256 && used > 0 && (size_t)used < cap)
        snprintf(plan + used, cap - (size_t)used, " ... (%d)", count);
}

/* fwdio_write of each extent, in calls of at most --call-size bytes; returns the first error. */
static int fwdio_write_extents(struct bench_ctx *ctx, fwdio_file_t *file)
{
    uint64_t call = ctx->opts->call_size;
    const unsigned char *src = ctx->data;
    int first_error = FWDIO_OK;
    for (size_t e = 0; e < ctx->nextents; e++) {
        const struct extent *x = &ctx->extents[e];
        for (uint64_t done = 0; done < x->len;) {
            uint64_t len = call && x->len - done > call ? call : x->len - done;
            int rc = fwdio_write(file, src + done, (size_t)len, x->offset + done);
            if (rc != FWDIO_OK && first_error == FWDIO_OK)
                first_error = rc;
            done += len;
        }
        src += x->len;
    }
    return first_error;
}

/* The file options of a fwdio configuration; `packed` must outlive fwdio_open. */
static void fwdio_options_for(const struct bench_ctx *ctx, const struct config *cfg,
                              fwdio_options_t *fo, int *packed)
{
    const struct bench_opts *o = ctx->opts;
    fwdio_options_init(fo);
    fo->writers = cfg->writers;
    fo->layout = cfg->layout;
    fo->targets = cfg->layout == FWDIO_LAYOUT_TARGETS ? o->targets : 0;
    fo->durable = o->durable;
    switch (cfg->policy) {
    case POLICY_SPREAD:
        fo->placement = FWDIO_PLACEMENT_SPREAD;
        break;
    case POLICY_STRIDE:
        fo->placement = FWDIO_PLACEMENT_STRIDE;
        fo->first_writer = o->first_writer;
        fo->writer_stride = o->writer_stride;
        break;
    case POLICY_LIST: /* the first W ranks of --list (checked at start-up) */
        fo->placement = FWDIO_PLACEMENT_LIST;
        fo->writer_list = o->list;
        fo->writer_list_len = cfg->writers;
        break;
    case POLICY_PACKED: /* ranks 0 .. W-1: every writer on consecutive ranks */
        for (int w = 0; w < cfg->writers && w < MAX_LIST; w++)
            packed[w] = w;
        fo->placement = FWDIO_PLACEMENT_LIST;
        fo->writer_list = packed;
        fo->writer_list_len = cfg->writers;
        break;
    case NPOLICIES:
        break;
    }
    if (o->write_size)
        fo->write_size = o->write_size;
    if (o->stripe_size)
        fo->stripe_size = o->stripe_size;
}

/* open + one fwdio_write per piece + close; the file stays in flight until the end. */
/* One fwdio output step: open, `write` this rank's extents, close (the file is
 * waited for in finish_fwdio). */
static void step_fwdio_with(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                            int step, struct run_local *out,
                            int (*write)(struct bench_ctx *ctx, fwdio_file_t *file))
{
    fwdio_options_t fo;
    int packed[MAX_LIST];
    fwdio_options_for(ctx, cfg, &fo, packed);
    fwdio_file_t *file = NULL;

    double t0 = MPI_Wtime();
    int rc = fwdio_open(ctx->rt, path, ctx->opts->size, &fo, NULL, &file);
    if (rc == FWDIO_OK) {
        int wrc = write(ctx, file);
        int crc = fwdio_close(file);
        rc = wrc != FWDIO_OK ? wrc : crc;
    }
    out->blocked += MPI_Wtime() - t0;
    out->files[step] = file;
    out->opened[step] = t0;
    out->nfiles = step + 1;
    if (rc != FWDIO_OK) {
        if (out->status == 0)
            out->status = rc;
        fprintf(stderr, "[rank %d] %s: %s\n", ctx->rank, cfg->label,
                file ? fwdio_file_error(file) : fwdio_strerror(rc));
    }
}

static void step_fwdio(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                       int step, struct run_local *out)
{
    step_fwdio_with(ctx, cfg, path, step, out, fwdio_write_extents);
}

static void lent_done(fwdio_file_t *file, const void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    (void)status; /* the file's status says it too, checked in finish_fwdio */
    (void)arg;
}

/* fwdio_write_lent of every extent from ctx->lent. */
static int lend_extents(struct bench_ctx *ctx, fwdio_file_t *file)
{
    const unsigned char *src = ctx->lent;
    int rc = FWDIO_OK;
    for (size_t e = 0; e < ctx->nextents && rc == FWDIO_OK; e++) {
        const struct extent *x = &ctx->extents[e];
        rc = fwdio_write_lent(file, src, (size_t)x->len, x->offset, lent_done, NULL);
        src += x->len;
    }
    return rc;
}

/* As fwdio, but the bytes are lent from a fwdio_alloc buffer the application
 * packed its output into (ctx->lent, filled before the run like every mode's
 * data): what fwdio_alloc + fwdio_write_lent cost. Every step lends the same
 * bytes; the files are complete, so the buffer is free, before the next run
 * refills it. */
static void step_lent(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                      int step, struct run_local *out)
{
    step_fwdio_with(ctx, cfg, path, step, out, lend_extents);
}

/* Waits for every file of the run; end-to-end of a step is fwdio's own open-to-complete. */
static void finish_fwdio(struct bench_ctx *ctx, const struct config *cfg, struct run_local *out)
{
    double t0 = MPI_Wtime();
    for (int k = 0; k < out->nfiles; k++) {
        fwdio_file_t *file = out->files[k];
        if (!file)
            continue;
        int status = fwdio_wait(file);
        double waited = MPI_Wtime() - out->opened[k];
        if (status != FWDIO_OK) {
            if (out->status == 0)
                out->status = status;
            fprintf(stderr, "[rank %d] %s: %s\n", ctx->rank, cfg->label, fwdio_file_error(file));
        }
        fwdio_file_stats_t st;
        double e2e = fwdio_file_stats(file, &st) == FWDIO_OK && st.time_to_complete > 0
                         ? st.time_to_complete : waited;
        out->end_to_end += e2e;
        out->copied += st.bytes_copied;
        out->to_mpi += st.bytes_to_mpi;
        out->to_pwrite += st.bytes_to_pwrite;
        if (k == 0) {
            describe_fwdio_plan(file, out->plan, sizeof out->plan);
            size_t used = strlen(out->plan);
            snprintf(out->plan + used, sizeof out->plan - used,
                     "; %" PRIu64 " write calls sent as %" PRIu64 " messages (this rank)",
                     st.write_calls, st.messages_sent);
        }
        fwdio_file_free(file);
        out->files[k] = NULL;
    }
    out->drain = MPI_Wtime() - t0;
    fwdio_runtime_stats_t rs;
    if (fwdio_runtime_stats(ctx->rt, &rs) == FWDIO_OK) {
        out->peak_writer = rs.writer_peak;
        out->peak_staging = rs.staging_peak;
        out->peak = (int64_t)(rs.writer_peak + rs.staging_peak);
    }
}

/* Number of write_at_all calls every rank must make: collectives match by count. */
static int mpiio_call_count(const struct bench_ctx *ctx)
{
    long mine = 0, most;
    for (size_t e = 0; e < ctx->nextents; e++)
        mine += (long)((ctx->extents[e].len + MPIIO_MAX_CALL - 1) / MPIIO_MAX_CALL);
    MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return (int)most;
}

static int report_mpi_error(const struct bench_ctx *ctx, const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    fprintf(stderr, "[rank %d] %s: %s\n", ctx->rank, what, text);
    return -1;
}

/* Each extent as write_at_all calls of at most MPIIO_MAX_CALL bytes, then empty calls
 * until every rank has made `calls` of them. Returns 0 or -1. */
static int mpiio_write_extents(struct bench_ctx *ctx, MPI_File fh, int calls)
{
    const unsigned char *src = ctx->data;
    int made = 0, failed = 0;
    for (size_t e = 0; e < ctx->nextents; e++) {
        const struct extent *x = &ctx->extents[e];
        for (uint64_t done = 0; done < x->len; made++) {
            uint64_t len = x->len - done < MPIIO_MAX_CALL ? x->len - done : MPIIO_MAX_CALL;
            int err = MPI_File_write_at_all(fh, (MPI_Offset)(x->offset + done), src + done,
                                            (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                failed = report_mpi_error(ctx, "MPI_File_write_at_all", err);
            done += len;
        }
        src += x->len;
    }
    for (; made < calls; made++) {
        int err = MPI_File_write_at_all(fh, 0, src, 0, MPI_BYTE, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_write_at_all", err);
    }
    return failed;
}

/* Sets the rank's view to its pieces (one hindexed element each); returns 0 or -1. */
static int mpiio_set_view(struct bench_ctx *ctx, MPI_File fh)
{
    MPI_Datatype type = ctx->filetype != MPI_DATATYPE_NULL ? ctx->filetype : MPI_BYTE;
    int err = MPI_File_set_view(fh, 0, MPI_BYTE, type, "native", MPI_INFO_NULL);
    return err == MPI_SUCCESS ? 0 : report_mpi_error(ctx, "MPI_File_set_view", err);
}

/* Which aggregator count the MPI library says it kept from the cb_nodes hint. */
static void describe_mpiio_plan(const struct bench_ctx *ctx, MPI_File fh, const struct config *cfg,
                                char *plan, size_t cap)
{
    MPI_Info used;
    char nodes[64] = "";
    int flag = 0;
    if (MPI_File_get_info(fh, &used) == MPI_SUCCESS) {
        MPI_Info_get(used, "cb_nodes", (int)sizeof nodes - 1, nodes, &flag);
        MPI_Info_free(&used);
    }
    char hint[16] = "none";
    if (cfg->writers)
        snprintf(hint, sizeof hint, "%d", cfg->writers);
    snprintf(plan, cap, "io %s; hint cb_nodes=%s; the file reports cb_nodes=%s", ctx->io, hint,
             flag ? nodes : "(not reported)");
}

static MPI_Info mpiio_hints(const struct config *cfg)
{
    MPI_Info info = MPI_INFO_NULL;
    if (cfg->writers) {
        char value[16];
        snprintf(value, sizeof value, "%d", cfg->writers);
        MPI_Info_create(&info);
        MPI_Info_set(info, "cb_nodes", value);
    }
    return info;
}

/* MPI_File_open of a step's shared file; with --presize also MPI_File_set_size to
 * the step's size, so that no write extends the file (on a FUSE mount the kernel
 * serialises extending writes, which a real parallel file system does not).
 * Returns the first MPI error, reported, or MPI_SUCCESS; fh is open on success. */
static int shared_file_open(struct bench_ctx *ctx, const char *path, MPI_Info info, MPI_File *fh)
{
    int err = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, fh);
    if (err != MPI_SUCCESS) {
        report_mpi_error(ctx, "MPI_File_open", err);
        return err;
    }
    if (ctx->opts->presize && (err = MPI_File_set_size(*fh, (MPI_Offset)ctx->opts->size)) != 0) {
        report_mpi_error(ctx, "MPI_File_set_size", err);
        MPI_File_close(fh);
    }
    return err;
}

/* open + write_at_all (+ sync) + close: blocking collective I/O. A pattern of one
 * piece per rank writes it with explicit offsets; several pieces go through a view
 * of one hindexed element per piece, in one write_at_all. */
static void step_mpiio(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                       int step, struct run_local *out)
{
    (void)step;
    int calls = ctx->max_nextents <= 1 ? mpiio_call_count(ctx) : 0;
    MPI_Info info = mpiio_hints(cfg);
    MPI_File fh;
    int failed = 0;

    double t0 = MPI_Wtime();
    int err = shared_file_open(ctx, path, info, &fh);
    if (err != MPI_SUCCESS) {
        failed = 1;
    } else {
        if (ctx->max_nextents <= 1) {
            failed |= mpiio_write_extents(ctx, fh, calls);
        } else if ((failed = mpiio_set_view(ctx, fh)) == 0) {
            err = MPI_File_write_at_all(fh, 0, ctx->data, (int)ctx->nbytes, MPI_BYTE,
                                        MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS)
                failed = report_mpi_error(ctx, "MPI_File_write_at_all", err);
        }
        if (ctx->opts->durable && (err = MPI_File_sync(fh)) != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_sync", err);
        describe_mpiio_plan(ctx, fh, cfg, out->plan, sizeof out->plan); /* a local query */
        if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_close", err);
    }
    double t = MPI_Wtime() - t0;
    add_step_time(out, t, t); /* the application waits for all of it */
    if (failed && out->status == 0)
        out->status = -1;
    out->peak = -1; /* inside the MPI library: not visible from here */
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

static int io_is_romio(const struct bench_ctx *ctx)
{
    return strstr(ctx->io, "romio") != NULL;
}

/* MPI_Wait for the step in flight, (sync,) close. */
static void iwrite_complete(struct bench_ctx *ctx, const struct config *cfg, struct run_local *out)
{
    if (!out->pending)
        return;
    int err = MPI_Wait(&out->req, MPI_STATUS_IGNORE), failed = 0;
    if (err != MPI_SUCCESS)
        failed = report_mpi_error(ctx, "MPI_Wait (iwrite_at_all)", err);
    if (ctx->opts->durable && (err = MPI_File_sync(out->fh)) != MPI_SUCCESS)
        failed = report_mpi_error(ctx, "MPI_File_sync", err);
    describe_mpiio_plan(ctx, out->fh, cfg, out->plan, sizeof out->plan);
    if ((err = MPI_File_close(&out->fh)) != MPI_SUCCESS)
        failed = report_mpi_error(ctx, "MPI_File_close", err);
    out->end_to_end += MPI_Wtime() - out->started;
    out->pending = 0;
    if (failed && out->status == 0)
        out->status = -1;
}

/* With --romio-iwrite: say what crashed before the process dies (async-signal-safe). */
static void romio_iwrite_crashed(int sig)
{
    static const char msg[] = "fwdio-bench: crashed in mode iwrite under ROMIO "
                              "(MPI_File_iwrite_at_all is known to crash in this Open MPI)\n";
    ssize_t n = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)n;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Waits for the previous step (blocked), then open + set_view + iwrite_at_all; the
 * compute before the next step overlaps the write. */
static void step_iwrite(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                        int step, struct run_local *out)
{
    (void)step;
    out->peak = -1;
    if (io_is_romio(ctx) && !ctx->opts->romio_iwrite) {
        out->status = STATUS_SKIPPED;
        snprintf(out->plan, sizeof out->plan,
                 "skipped: ROMIO's iwrite_at_all crashes in this Open MPI (--romio-iwrite runs it)");
        return;
    }
    if (io_is_romio(ctx))
        signal(SIGSEGV, romio_iwrite_crashed);
    if (!ctx->view_ok) {
        if (out->status == 0)
            out->status = -1;
        if (ctx->rank == 0)
            fprintf(stderr, "fwdio-bench: iwrite needs every rank's bytes below 2 GiB\n");
        return;
    }
    double t0 = MPI_Wtime();
    iwrite_complete(ctx, cfg, out);
    MPI_Info info = mpiio_hints(cfg);
    double t1 = MPI_Wtime();
    int err = shared_file_open(ctx, path, info, &out->fh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (err != MPI_SUCCESS) {
        out->status = -1;
    } else if (mpiio_set_view(ctx, out->fh) != 0) {
        MPI_File_close(&out->fh);
        out->status = -1;
    } else if ((err = MPI_File_iwrite_at_all(out->fh, 0, ctx->data, (int)ctx->nbytes, MPI_BYTE,
                                             &out->req)) != MPI_SUCCESS) {
        report_mpi_error(ctx, "MPI_File_iwrite_at_all", err);
        MPI_File_close(&out->fh);
        out->status = -1;
    } else {
        out->pending = 1;
        out->started = t1;
    }
    out->blocked += MPI_Wtime() - t0;
}

static void finish_iwrite(struct bench_ctx *ctx, const struct config *cfg, struct run_local *out)
{
    double t0 = MPI_Wtime();
    iwrite_complete(ctx, cfg, out);
    out->drain = MPI_Wtime() - t0;
}

/* Every rank MPI_File_write_at of each of its pieces into the shared file, no collective
 * write (open, sync and close are collective by definition). */
static void step_independent(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                             int step, struct run_local *out)
{
    (void)cfg, (void)step;
    MPI_File fh;
    int failed = 0;
    double t0 = MPI_Wtime();
    int err = shared_file_open(ctx, path, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS) {
        failed = 1;
    } else {
        const unsigned char *src = ctx->data;
        for (size_t e = 0; e < ctx->nextents; e++) {
            const struct extent *x = &ctx->extents[e];
            for (uint64_t done = 0; done < x->len;) {
                uint64_t len = x->len - done < MPIIO_MAX_CALL ? x->len - done : MPIIO_MAX_CALL;
                err = MPI_File_write_at(fh, (MPI_Offset)(x->offset + done), src + done, (int)len,
                                        MPI_BYTE, MPI_STATUS_IGNORE);
                if (err != MPI_SUCCESS)
                    failed = report_mpi_error(ctx, "MPI_File_write_at", err);
                done += len;
            }
            src += x->len;
        }
        if (ctx->opts->durable && (err = MPI_File_sync(fh)) != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_sync", err);
        snprintf(out->plan, sizeof out->plan, "io %s; %zu MPI_File_write_at per rank (rank 0)",
                 ctx->io, ctx->nextents);
        if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_close", err);
    }
    double t = MPI_Wtime() - t0;
    add_step_time(out, t, t);
    out->peak = 0;
    if (failed && out->status == 0)
        out->status = -1;
}

/* pwrite all of buf at offset; returns 0 or -1 (errno set). */
static int pwrite_full(int fd, const unsigned char *buf, uint64_t len, uint64_t offset)
{
    while (len > 0) {
        size_t chunk = len < POSIX_MAX_CALL ? (size_t)len : POSIX_MAX_CALL;
        ssize_t n = pwrite(fd, buf, chunk, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n, len -= (uint64_t)n, offset += (uint64_t)n;
    }
    return 0;
}

/* Creates path, writes len bytes of buf at 0, fdatasyncs with --durable; 0 or -1. */
static int write_whole_file(const struct bench_ctx *ctx, const char *path,
                            const unsigned char *buf, uint64_t len)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0) {
        fprintf(stderr, "[rank %d] open %s: %s\n", ctx->rank, path, strerror(errno));
        return -1;
    }
    int rc = pwrite_full(fd, buf, len, 0);
    if (rc != 0)
        fprintf(stderr, "[rank %d] pwrite %s: %s\n", ctx->rank, path, strerror(errno));
    if (rc == 0 && ctx->opts->durable && fdatasync(fd) != 0) {
        fprintf(stderr, "[rank %d] fdatasync %s: %s\n", ctx->rank, path, strerror(errno));
        rc = -1;
    }
    if (close(fd) != 0 && rc == 0)
        rc = -1;
    return rc;
}

static void rank_file_path(char *out, size_t cap, const char *path, int rank)
{
    snprintf(out, cap, "%s.rank%d", path, rank);
}

/* File per process: each rank pwrites its pieces back to back into its own file. */
static void step_fpp(struct bench_ctx *ctx, const struct config *cfg, const char *path, int step,
                     struct run_local *out)
{
    (void)cfg, (void)step;
    char mine[PATH_MAX + 96];
    rank_file_path(mine, sizeof mine, path, ctx->rank);
    double t0 = MPI_Wtime();
    int rc = write_whole_file(ctx, mine, ctx->data, ctx->nbytes);
    double t = MPI_Wtime() - t0;
    add_step_time(out, t, t);
    out->peak = 0;
    if (rc != 0 && out->status == 0)
        out->status = -1;
    snprintf(out->plan, sizeof out->plan, "one file per rank, %zu pieces back to back (rank 0)",
             ctx->nextents);
}

/* Gather to rank 0: where every rank's pieces go in the file (rank 0 only). */
struct gather_map {
    int *counts, *displs;   /* bytes per rank and their place in the receive buffer */
    struct extent *pieces;  /* every rank's pieces, rank by rank, in receive order */
    size_t npieces;
    int direct;             /* one piece per rank: receive straight into the file image */
};
static struct gather_map gather_map;

static int build_gather_map(struct bench_ctx *ctx)
{
    struct gather_map *g = &gather_map;
    if (ctx->opts->size > INT_MAX)
        return -1;
    g->counts = calloc((size_t)ctx->nranks, sizeof *g->counts);
    g->displs = calloc((size_t)ctx->nranks, sizeof *g->displs);
    if (!g->counts || !g->displs)
        return -1;
    g->direct = ctx->max_nextents <= 1;
    uint64_t at = 0;
    for (int r = 0; r < ctx->nranks; r++) {
        size_t n;
        struct extent *x = pattern_extents(ctx->opts, r, ctx->nranks, &n);
        if (!x)
            return -1;
        uint64_t bytes = 0;
        for (size_t i = 0; i < n; i++)
            bytes += x[i].len;
        g->counts[r] = (int)bytes;
        g->displs[r] = g->direct ? (int)(n ? x[0].offset : 0) : (int)at;
        at += bytes;
        if (!g->direct) {
            struct extent *grown = realloc(g->pieces, sizeof *grown * (g->npieces + n + 1));
            if (!grown) {
                free(x);
                return -1;
            }
            g->pieces = grown;
            memcpy(g->pieces + g->npieces, x, sizeof *x * n);
            g->npieces += n;
        }
        free(x);
    }
    return 0;
}

static void free_gather_map(void)
{
    free(gather_map.counts);
    free(gather_map.displs);
    free(gather_map.pieces);
    gather_map = (struct gather_map){0};
}

/* MPI_Gatherv of every rank's bytes to rank 0, which places the pieces in an image of
 * the file and pwrites it whole. */
static void step_gather(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                        int step, struct run_local *out)
{
    (void)cfg, (void)step;
    const struct gather_map *g = &gather_map;
    uint64_t size = ctx->opts->size;
    if (size > INT_MAX) {
        out->status = -1;
        if (ctx->rank == 0)
            fprintf(stderr, "fwdio-bench: gather needs S below 2 GiB (MPI_Gatherv counts)\n");
        return;
    }
    if (ctx->rank == 0 && !out->image) { /* once per run, pre-touched, not timed */
        out->image = malloc((size_t)size);
        out->staging = g->direct ? NULL : malloc((size_t)size);
        if (!out->image || (!g->direct && !out->staging))
            MPI_Abort(MPI_COMM_WORLD, 1);
        memset(out->image, 0, (size_t)size);
        if (out->staging)
            memset(out->staging, 0, (size_t)size);
    }
    double t0 = MPI_Wtime();
    unsigned char *recv = g->direct ? out->image : out->staging;
    int err = MPI_Gatherv(ctx->data, (int)ctx->nbytes, MPI_BYTE, recv, g->counts, g->displs,
                          MPI_BYTE, 0, MPI_COMM_WORLD);
    int rc = err == MPI_SUCCESS ? 0 : report_mpi_error(ctx, "MPI_Gatherv", err);
    if (ctx->rank == 0) {
        if (!g->direct) {
            const unsigned char *src = out->staging;
            for (size_t i = 0; i < g->npieces; i++) {
                memcpy(out->image + g->pieces[i].offset, src, (size_t)g->pieces[i].len);
                src += g->pieces[i].len;
            }
        }
        rc |= write_whole_file(ctx, path, out->image, size);
    }
    double t = MPI_Wtime() - t0;
    add_step_time(out, t, t);
    out->peak = ctx->rank == 0 ? (int64_t)(g->direct ? size : 2 * size) : 0;
    if (rc != 0 && out->status == 0)
        out->status = -1;
    snprintf(out->plan, sizeof out->plan, "MPI_Gatherv to rank 0 (%s), one pwrite of %.1f MiB",
             g->direct ? "straight into the file image" : "then pieces copied into the image",
             (double)size / MIB);
}

static void finish_gather(struct bench_ctx *ctx, const struct config *cfg, struct run_local *out)
{
    (void)ctx, (void)cfg;
    free(out->image);
    free(out->staging);
    out->image = out->staging = NULL;
}

static const struct mode modes[] = {
    /* name       step              finish         files              perW unh rt */
    {"memcpy", step_memcpy, NULL, FILES_NONE, 0, 0, 0},
    {"none", step_nothing, NULL, FILES_NONE, 0, 0, 0},
    {"idle", step_nothing, NULL, FILES_NONE, 0, 0, 1},
    {"fwdio", step_fwdio, finish_fwdio, FILES_SHARED, 1, 0, 1},
    {"lent", step_lent, finish_fwdio, FILES_SHARED, 1, 0, 1},
    {"mpiio", step_mpiio, NULL, FILES_SHARED, 1, 1, 0},
    {"iwrite", step_iwrite, finish_iwrite, FILES_SHARED, 1, 1, 0},
    {"independent", step_independent, NULL, FILES_SHARED, 0, 0, 0},
    {"fpp", step_fpp, NULL, FILES_PER_PROCESS, 0, 0, 0},
    {"gather", step_gather, finish_gather, FILES_SHARED, 0, 0, 0},
};
#define NMODES (sizeof modes / sizeof modes[0])
/* ------------------------------------------------------- command line */


/* "1,2,4,8" -> {1,2,4,8}; returns the count, or -1. */
static int parse_int_list(const char *text, int *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > INT_MAX || n == max || (*end && *end != ','))
            return -1;
        out[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return n ? n : -1;
}

static void print_usage(FILE *to)
{
    fprintf(to,
            "usage: fwdio-bench [options]\n"
            "workload\n"
            "  --size BYTES        file size S per output step (default 256M)\n"
            "  --pattern NAME      which bytes each rank writes (default block):\n"
            "                        block      one contiguous block [r*S/P, (r+1)*S/P), not\n"
            "                                   aligned to stripes (a coordinate dump)\n"
            "                        scattered  N records of --record-size bytes in runs of\n"
            "                                   1..64 records dealt to ranks in shuffled rounds\n"
            "                                   (atoms after migration: many small pieces)\n"
            "                        dcd        float32 x[N], y[N], z[N] (N = S/12); rank r owns\n"
            "                                   atoms [r*N/P, (r+1)*N/P): 3 pieces\n"
            "  --record-size BYTES scattered: bytes per record (default 24, 3 doubles)\n"
            "  --steps N           output steps per run, each a new file (default 1)\n"
            "  --compute SECONDS   calibrated CPU before each step (default 0); with it the\n"
            "                      modes none and idle run too and the table adds time to\n"
            "                      solution and the overhead over none\n"
            "  --durable           fdatasync (fwdio, fpp, gather) / MPI_File_sync (MPI-IO)\n"
            "  --reps N            repetitions of every configuration (default 3)\n"
            "  --settle            before every run, wait until the kernel has written back\n"
            "                      its dirty pages (sync, then Dirty + Writeback <= 8 MiB)\n"
            "modes (--modes LIST, default memcpy,fwdio,mpiio)\n"
            "  memcpy       copy of the rank's bytes: the floor of blocked\n"
            "  none         compute only, no fwdio runtime (reference of time to solution)\n"
            "  idle         compute only with a started, idle fwdio runtime (idle cost)\n"
            "  fwdio        fwdio_open, one fwdio_write per piece, fwdio_close; waited at the end\n"
            "  lent         as fwdio, but fwdio_write_lent from a fwdio_alloc buffer holding\n"
            "               the rank's bytes (packed in place, untimed like all data)\n"
            "  mpiio        MPI_File_write_at_all (pieces as one hindexed view), cb_nodes = W\n"
            "  iwrite       MPI_File_iwrite_at_all, compute, MPI_Wait before the next step\n"
            "               (skipped under ROMIO, which crashes; --romio-iwrite runs it)\n"
            "  independent  MPI_File_write_at of every piece by its rank, no collective\n"
            "  fpp          file per process: each rank pwrites its pieces into its own file\n"
            "  gather       MPI_Gatherv to rank 0, which pwrites the whole file\n"
            "  The MPI-IO component is Open MPI's choice; OMPI_MCA_io=romio321 (or mpirun\n"
            "  --mca io romio321) selects ROMIO. The output records which.\n"
            "fwdio and MPI-IO writers\n"
            "  --writers LIST      writer counts W, e.g. 1,2,4,8 (default 1,2,4,8): one\n"
            "                      fwdio, mpiio and iwrite configuration per W\n"
            "  --policy LIST       of spread,stride,list,packed: fwdio writer placements\n"
            "                      (default spread; packed = writers on ranks 0..W-1)\n"
            "  --layout LIST       of block,cyclic,targets: fwdio stripe layouts (default block)\n"
            "                      every policy x layout runs for every W, interleaved\n"
            "  --targets T         storage targets for layout targets (default: W)\n"
            "  --first-writer R    stride: first writer rank (default 0)\n"
            "  --stride S          stride: ranks between writers (default: fwdio's spacing)\n"
            "  --list R,R,...      list: writer w is the w-th rank listed (needs max W entries)\n"
            "  --write-size BYTES  fwdio write unit (default: fwdio's)\n"
            "  --stripe-size BYTES fwdio stripe (default: fwdio's)\n"
            "  --call-size BYTES   bytes per fwdio_write call (default: one call per piece)\n"
            "  --writer-buffer BYTES   fwdio writer memory budget (default: fwdio's)\n"
            "  --staging-buffer BYTES  fwdio staging memory budget (default: fwdio's)\n"
            "  --max-message BYTES     largest fwdio data message (default: fwdio's)\n"
            "  --combine-size BYTES|off  fwdio write combining limit (default: fwdio's)\n"
            "  --shared-buffer BYTES|off  fwdio node-shared area per rank (default: fwdio's;\n"
            "                      with mode lent, fwdio's plus this rank's bytes + 16 MiB)\n"
            "  --io-inline         fwdio writers pwrite on the progress thread\n"
            "  --romio-iwrite      run iwrite under ROMIO anyway (may crash the job)\n"
            "  --presize           mpiio, iwrite, independent: MPI_File_set_size(S) after the\n"
            "                      open (timed), so no write extends the file: under FUSE (the\n"
            "                      emulator) the kernel serialises writes that extend a file\n"
            "  --no-unhinted       skip the MPI-IO modes' \"no hint\" configurations (then one\n"
            "                      invocation writes only the configurations asked for)\n"
            "output\n"
            "  --dir DIR           where the run files go (default $TMPDIR or /tmp)\n"
            "  --csv FILE          also write one CSV row per run\n"
            "  --help              this text\n"
            CLI_SIZE_GRAMMAR);
}

/* "a,b,c" of names[0..nnames) into out (each at most once); returns the count, or -1. */
static int parse_name_list(const char *text, const char *const *names, int nnames, int *out)
{
    int n = 0;
    for (const char *p = text; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int found = -1;
        for (int i = 0; i < nnames; i++)
            if (strlen(names[i]) == len && !strncmp(p, names[i], len))
                found = i;
        for (int i = 0; i < n; i++)
            if (out[i] == found)
                found = -1;
        if (found < 0 || n == nnames || (comma && !comma[1]))
            return -1;
        out[n++] = found;
        p += len + (comma != NULL);
    }
    return n ? n : -1;
}

static int parse_policies(const char *text, struct bench_opts *o)
{
    int v[NPOLICIES];
    o->npolicies = parse_name_list(text, policy_names, NPOLICIES, v);
    for (int i = 0; i < o->npolicies; i++)
        o->policies[i] = (enum bench_policy)v[i];
    return o->npolicies < 0 ? -1 : 0;
}

static int parse_layouts(const char *text, struct bench_opts *o)
{
    int v[NLAYOUTS];
    o->nlayouts = parse_name_list(text, layout_names, NLAYOUTS, v);
    for (int i = 0; i < o->nlayouts; i++)
        o->layouts[i] = (fwdio_layout_t)v[i];
    return o->nlayouts < 0 ? -1 : 0;
}

/* "7,2,5" (ranks, 0 allowed) into o->list. */
static int parse_rank_list(const char *text, struct bench_opts *o)
{
    o->list_len = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > INT_MAX || o->list_len == MAX_LIST ||
            (*end && *end != ',') || (*end == ',' && !end[1]))
            return -1;
        o->list[o->list_len++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return o->list_len ? 0 : -1;
}

enum {
    OPT_SIZE = 256, OPT_REPS, OPT_WRITERS, OPT_MODES, OPT_PATTERN, OPT_LAYOUT, OPT_POLICY,
    OPT_TARGETS, OPT_FIRST_WRITER, OPT_STRIDE, OPT_LIST, OPT_WRITE_SIZE, OPT_STRIPE_SIZE,
    OPT_CALL_SIZE, OPT_DIR, OPT_CSV, OPT_RECORD_SIZE, OPT_STEPS, OPT_COMPUTE,
    OPT_WRITER_BUFFER, OPT_STAGING_BUFFER, OPT_MAX_MESSAGE, OPT_COMBINE_SIZE,
    OPT_SHARED_BUFFER, OPT_DURABLE, OPT_IO_INLINE, OPT_ROMIO_IWRITE, OPT_SETTLE, OPT_PRESIZE,
    OPT_NO_UNHINTED
};

static const struct option bench_options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"reps", required_argument, NULL, OPT_REPS},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"modes", required_argument, NULL, OPT_MODES},
    {"pattern", required_argument, NULL, OPT_PATTERN},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"targets", required_argument, NULL, OPT_TARGETS},
    {"first-writer", required_argument, NULL, OPT_FIRST_WRITER},
    {"stride", required_argument, NULL, OPT_STRIDE},
    {"list", required_argument, NULL, OPT_LIST},
    {"write-size", required_argument, NULL, OPT_WRITE_SIZE},
    {"stripe-size", required_argument, NULL, OPT_STRIPE_SIZE},
    {"call-size", required_argument, NULL, OPT_CALL_SIZE},
    {"dir", required_argument, NULL, OPT_DIR},
    {"csv", required_argument, NULL, OPT_CSV},
    {"record-size", required_argument, NULL, OPT_RECORD_SIZE},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    {"writer-buffer", required_argument, NULL, OPT_WRITER_BUFFER},
    {"staging-buffer", required_argument, NULL, OPT_STAGING_BUFFER},
    {"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
    {"combine-size", required_argument, NULL, OPT_COMBINE_SIZE},
    {"shared-buffer", required_argument, NULL, OPT_SHARED_BUFFER},
    {"durable", no_argument, NULL, OPT_DURABLE},
    {"io-inline", no_argument, NULL, OPT_IO_INLINE},
    {"romio-iwrite", no_argument, NULL, OPT_ROMIO_IWRITE},
    {"settle", no_argument, NULL, OPT_SETTLE},
    {"presize", no_argument, NULL, OPT_PRESIZE},
    {"no-unhinted", no_argument, NULL, OPT_NO_UNHINTED},
    CLI_HELP_OPTION,
    {0}};

static int modes_valid(const char *list);

/* A size, or "off" (stored as 1: fwdio's value for "none"). */
static int size_or_off(cli_t *c, uint64_t *out)
{
    if (!strcmp(c->arg, "off")) {
        *out = 1;
        return 0;
    }
    return cli_size(c, 0, UINT64_MAX, out);
}

/* One option; 0, or CLI_BAD after the message. */
static int parse_option(cli_t *c, int key, void *ctx)
{
    struct bench_opts *o = ctx;
    const char *v = c->arg;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &o->size);
    case OPT_REPS: return cli_int(c, 1, 10000, &o->reps);
    case OPT_WRITERS:
        o->nwriters = parse_int_list(v, o->writers, MAX_WRITER_COUNTS);
        return o->nwriters < 0 ? cli_bad_value(c, "counts from 1 separated by commas") : 0;
    case OPT_MODES:
        o->modes = v;
        return modes_valid(v) ? 0 : cli_bad_value(c, "modes (--help lists them) separated by commas");
    case OPT_PATTERN:
        o->pattern = v;
        return find_pattern(v) ? 0 : cli_bad_value(c, "block, scattered or dcd");
    case OPT_LAYOUT:
        return parse_layouts(v, o) ? cli_bad_value(c, "of block,cyclic,targets") : 0;
    case OPT_POLICY:
        return parse_policies(v, o) ? cli_bad_value(c, "of spread,stride,list,packed") : 0;
    case OPT_TARGETS: return cli_int(c, 0, INT_MAX, &o->targets);
    case OPT_FIRST_WRITER: return cli_int(c, 0, INT_MAX, &o->first_writer);
    case OPT_STRIDE: return cli_int(c, 0, INT_MAX, &o->writer_stride);
    case OPT_LIST:
        return parse_rank_list(v, o) ? cli_bad_value(c, "ranks separated by commas") : 0;
    case OPT_WRITE_SIZE: return cli_size(c, 0, UINT64_MAX, &o->write_size);
    case OPT_STRIPE_SIZE: return cli_size(c, 0, UINT64_MAX, &o->stripe_size);
    case OPT_CALL_SIZE: return cli_size(c, 0, UINT64_MAX, &o->call_size);
    case OPT_DIR: o->dir = v; return 0;
    case OPT_CSV: o->csv = v; return 0;
    case OPT_RECORD_SIZE: return cli_size(c, 1, UINT64_MAX, &o->record_size);
    case OPT_STEPS: return cli_int(c, 1, MAX_STEPS, &o->steps);
    case OPT_COMPUTE: return cli_double(c, 0, 1e6, &o->compute);
    case OPT_WRITER_BUFFER: return cli_size(c, 0, UINT64_MAX, &o->writer_buffer);
    case OPT_STAGING_BUFFER: return cli_size(c, 0, UINT64_MAX, &o->staging_buffer);
    case OPT_MAX_MESSAGE: return cli_size(c, 0, UINT64_MAX, &o->max_message);
    case OPT_COMBINE_SIZE: return size_or_off(c, &o->combine_size);
    case OPT_SHARED_BUFFER: return size_or_off(c, &o->shared_buffer);
    case OPT_DURABLE: o->durable = 1; return 0;
    case OPT_IO_INLINE: o->io_inline = 1; return 0;
    case OPT_ROMIO_IWRITE: o->romio_iwrite = 1; return 0;
    case OPT_SETTLE: o->settle = 1; return 0;
    case OPT_PRESIZE: o->presize = 1; return 0;
    case OPT_NO_UNHINTED: o->no_unhinted = 1; return 0;
    default: return CLI_BAD; /* cli_next printed why */
    }
}

/* Fills o from the command line; returns 0, 1 for --help (printed by rank 0),
 * or CLI_BAD for a bad option (the message printed by rank 0). */
static int parse_args(int argc, char **argv, struct bench_opts *o, int rank)
{
    *o = (struct bench_opts){.size = (uint64_t)256 << 20, .reps = 3, .pattern = "block",
                             .modes = "memcpy,fwdio,mpiio", .writers = {1, 2, 4, 8},
                             .nwriters = 4, .policies = {POLICY_SPREAD}, .npolicies = 1,
                             .layouts = {FWDIO_LAYOUT_BLOCK}, .nlayouts = 1,
                             .record_size = 24, .steps = 1};
    cli_t c;
    cli_begin(&c, "fwdio-bench", argc, argv, bench_options, rank != 0);
    int parsed = cli_parse(&c, parse_option, o, print_usage, 0);
    if (parsed != 0)
        return parsed;
    int uses_list = 0, max_w = 0;
    for (int p = 0; p < o->npolicies; p++)
        uses_list |= o->policies[p] == POLICY_LIST;
    for (int w = 0; w < o->nwriters; w++)
        max_w = o->writers[w] > max_w ? o->writers[w] : max_w;
    if (uses_list && o->list_len < max_w)
        return cli_error(&c, "policy list needs --list with at least %d ranks", max_w);
    if (max_w > MAX_LIST)
        return cli_error(&c, "at most %d writers", MAX_LIST);
    return 0;
}

/* Whether `name` appears in the comma-separated `list`. */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return 1;
        p += len + (comma != NULL);
    }
    return 0;
}

/* Every name in --modes must be a known mode. */
static int modes_valid(const char *list)
{
    int known = 0;
    for (size_t m = 0; m < NMODES; m++)
        known += list_has(list, modes[m].name);
    int names = 1;
    for (const char *p = list; *p; p++)
        names += *p == ',';
    return *list && known == names;
}

/* ------------------------------------------------------ the configurations */

/* Whether mode `name` runs: listed in --modes, or with --compute the compute-only
 * references none (always) and idle (when fwdio runs). */
static int mode_selected(const struct bench_opts *o, const char *name)
{
    if (list_has(o->modes, name))
        return 1;
    if (o->compute > 0 && !strcmp(name, "none"))
        return 1;
    return o->compute > 0 && !strcmp(name, "idle") && list_has(o->modes, "fwdio");
}

/* Whether fwdio runs more than its default placement and layout: then labels say which. */
static int varies_fwdio(const struct bench_opts *o)
{
    return o->npolicies > 1 || o->nlayouts > 1 || o->policies[0] != POLICY_SPREAD ||
           o->layouts[0] != FWDIO_LAYOUT_BLOCK;
}

static void add_config(struct config *cfgs, int *n, const struct mode *m, int writers,
                       enum bench_policy policy, fwdio_layout_t layout, int name_variant)
{
    struct config *c = &cfgs[(*n)++];
    *c = (struct config){.mode = m, .writers = writers, .policy = policy, .layout = layout};
    if (!m->per_writers)
        snprintf(c->label, sizeof c->label, "%s", m->name);
    else if (writers && name_variant)
        snprintf(c->label, sizeof c->label, "%s W=%d %s/%s", m->name, writers,
                 policy_names[policy], layout_names[layout]);
    else if (writers)
        snprintf(c->label, sizeof c->label, "%s W=%d", m->name, writers);
    else
        snprintf(c->label, sizeof c->label, "%s no hint", m->name);
}

/* The references first, then for each W every per-W mode (so fwdio and MPI-IO with
 * the same W run back to back; fwdio once per policy x layout), then the unhinted
 * baselines. Returns the count. */
static int build_configs(const struct bench_opts *o, struct config *cfgs)
{
    int n = 0, named = varies_fwdio(o);
    for (size_t m = 0; m < NMODES; m++)
        if (!modes[m].per_writers && mode_selected(o, modes[m].name))
            add_config(cfgs, &n, &modes[m], 0, POLICY_SPREAD, FWDIO_LAYOUT_BLOCK, 0);
    for (int w = 0; w < o->nwriters; w++)
        for (size_t m = 0; m < NMODES; m++) {
            if (!modes[m].per_writers || !mode_selected(o, modes[m].name))
                continue;
            if (modes[m].step != step_fwdio) {
                add_config(cfgs, &n, &modes[m], o->writers[w], POLICY_SPREAD,
                           FWDIO_LAYOUT_BLOCK, 0);
                continue;
            }
            for (int p = 0; p < o->npolicies; p++)
                for (int l = 0; l < o->nlayouts; l++)
                    add_config(cfgs, &n, &modes[m], o->writers[w], o->policies[p],
                               o->layouts[l], named);
        }
    for (size_t m = 0; m < NMODES; m++)
        if (modes[m].also_unhinted && !o->no_unhinted && mode_selected(o, modes[m].name))
            add_config(cfgs, &n, &modes[m], 0, POLICY_SPREAD, FWDIO_LAYOUT_BLOCK, 0);
    return n;
}

static int max_configs(const struct bench_opts *o)
{
    return (int)NMODES * (o->nwriters * o->npolicies * o->nlayouts + 2);
}


/* ------------------------------------------------------------ one run */

/* Every rank checks the bytes it wrote to the shared file (and its size); returns the
 * first bad offset over all ranks. */
static uint64_t verify_shared(const struct bench_ctx *ctx, const char *path, uint64_t seed)
{
    uint64_t bad = NO_BAD_OFFSET;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size != ctx->opts->size)
        bad = fd < 0 ? 0 : (uint64_t)(fstat(fd, &st) == 0 ? st.st_size : 0);
    for (size_t e = 0; e < ctx->nextents && bad == NO_BAD_OFFSET; e++) {
        const struct extent *x = &ctx->extents[e];
        if (pattern_check_fd(fd, x->offset, x->len, seed, 0, &bad) == 0)
            bad = NO_BAD_OFFSET;
    }
    if (fd >= 0)
        close(fd);
    uint64_t first_bad;
    MPI_Allreduce(&bad, &first_bad, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    return first_bad;
}

/* File per process: the shared file is the ranks' files put back together piece by
 * piece; each rank checks that its file holds exactly its pieces, back to back, with
 * the bytes the shared file would have at their offsets. Returns the first bad offset
 * (in the shared file) over all ranks. */
static uint64_t verify_per_process(const struct bench_ctx *ctx, const char *path, uint64_t seed)
{
    char mine[PATH_MAX + 96];
    rank_file_path(mine, sizeof mine, path, ctx->rank);
    uint64_t bad = NO_BAD_OFFSET;
    const size_t cap = (size_t)4 << 20;
    unsigned char *got = malloc(cap), *want = malloc(cap);
    int fd = open(mine, O_RDONLY);
    struct stat st;
    if (!got || !want || fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size != ctx->nbytes)
        bad = ctx->nextents ? ctx->extents[0].offset : 0;
    uint64_t at = 0; /* position in this rank's file */
    for (size_t e = 0; e < ctx->nextents && bad == NO_BAD_OFFSET; e++) {
        const struct extent *x = &ctx->extents[e];
        for (uint64_t done = 0; done < x->len && bad == NO_BAD_OFFSET;) {
            size_t n = x->len - done < cap ? (size_t)(x->len - done) : cap;
            ssize_t r = pread(fd, got, n, (off_t)(at + done));
            pattern_fill(want, n, x->offset + done, seed);
            if (r != (ssize_t)n) {
                bad = x->offset + done;
            } else if (memcmp(got, want, n) != 0) {
                size_t i = 0;
                while (got[i] == want[i])
                    i++;
                bad = x->offset + done + i;
            }
            done += n;
        }
        at += x->len;
    }
    if (fd >= 0)
        close(fd);
    free(got);
    free(want);
    uint64_t first_bad;
    MPI_Allreduce(&bad, &first_bad, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    return first_bad;
}

static void remove_files(const struct bench_ctx *ctx, enum file_kind kind, const char *path)
{
    char name[PATH_MAX + 96];
    if (kind == FILES_PER_PROCESS)
        rank_file_path(name, sizeof name, path, ctx->rank);
    else if (ctx->rank == 0)
        snprintf(name, sizeof name, "%s", path);
    else
        return;
    if (unlink(name) != 0 && errno != ENOENT)
        fprintf(stderr, "fwdio-bench: cannot remove %s: %s\n", name, strerror(errno));
}

/*
 * A barrier that sleeps instead of spinning. With more ranks than cores, ranks
 * that finished a timed section and spin in MPI_Barrier take the CPU from the
 * ranks still inside it, and the spread of the timings grows several-fold.
 */
static void quiet_barrier(void)
{
    app_quiet_barrier(MPI_COMM_WORLD);
}

/* Fill this rank's bytes with the run's pattern (not timed). */
static void fill_data(struct bench_ctx *ctx, uint64_t seed)
{
    unsigned char *dst = ctx->data;
    for (size_t e = 0; e < ctx->nextents; e++) {
        pattern_fill(dst, (size_t)ctx->extents[e].len, ctx->extents[e].offset, seed);
        dst += ctx->extents[e].len;
    }
}

static void step_path(char *out, size_t cap, const struct bench_ctx *ctx, int run, int step)
{
    if (ctx->opts->steps == 1)
        snprintf(out, cap, "%s/run%04d.dat", ctx->dir, run);
    else
        snprintf(out, cap, "%s/run%04d.step%04d.dat", ctx->dir, run, step);
}

/*
 * Starts the fwdio runtime on first use (collective); returns 0 or -1 on every
 * rank alike. It then stays up for the rest of the invocation, as in an
 * application that initialises fwdio once and writes many steps: runs measure
 * the steady state, with warm staging buffers, not a cold start each time.
 */
static int start_fwdio(struct bench_ctx *ctx)
{
    if (ctx->rt)
        return 0;
    const struct bench_opts *o = ctx->opts;
    fwdio_config_t cfg = {.writer_buffer = (size_t)o->writer_buffer,
                          .staging_buffer = (size_t)o->staging_buffer,
                          .max_message_size = (size_t)o->max_message,
                          .combine_size = (size_t)o->combine_size,
                          .io_inline = o->io_inline,
                          .shared_buffer = (size_t)o->shared_buffer};
    /* lent: the buffer the application packs into must fit the area, with
     * room beside it for the messages' headers */
    const uint64_t lent_room = ctx->nbytes + ((uint64_t)16 << 20);
    const uint64_t staging = o->staging_buffer ? o->staging_buffer : FWDIO_DEFAULT_STAGING_BUFFER;
    if (o->shared_buffer == 0 && mode_selected(o, "lent")) {
        cfg.shared_buffer = (size_t)(lent_room + staging + ((uint64_t)8 << 20));
        /* and every rank's buffer must fit the node's budget (committed as
         * used: a cap, not a reservation) */
        cfg.node_buffer = cfg.shared_buffer * (size_t)ctx->nranks;
    }
    ctx->rt = NULL;
    int rc = fwdio_init(MPI_COMM_WORLD, &cfg, &ctx->rt);
    if (rc != FWDIO_OK)
        fprintf(stderr, "[rank %d] fwdio_init: %s\n", ctx->rank, fwdio_strerror(rc));
    int failed = rc != FWDIO_OK, nfailed;
    MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* Ranks that did start could only leave through a collective finalize that the
     * failed ones would never join. */
    if (nfailed > 0 && nfailed < ctx->nranks)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return nfailed ? -1 : 0;
}

/* --settle: rank 0 waits until the kernel has written back the dirty pages of
 * earlier runs (one page cache for every rank of this machine), so that their
 * writeback does not land in this run. Returns the seconds waited (0 without
 * --settle); the other ranks wait in the barrier that follows. */
static double settle_before_run(const struct bench_ctx *ctx)
{
    double waited = 0;
    if (ctx->opts->settle && ctx->rank == 0) {
        struct dirty_wait w;
        if (dirty_pages_wait(DIRTY_DEFAULT_LIMIT_KIB, DIRTY_DEFAULT_TIMEOUT_S, &w) != 0)
            fprintf(stderr, "fwdio-bench: --settle: cannot read /proc/meminfo\n");
        else if (w.timed_out)
            fprintf(stderr, "fwdio-bench: --settle: %" PRIu64 " KiB still dirty after %.0f s\n",
                    w.after_kib, w.waited_s);
        else
            waited = w.waited_s;
    }
    MPI_Bcast(&waited, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return waited;
}

/*
 * One run: --steps times (compute, then one output step), then whatever the mode
 * left in flight is waited for. The fwdio runtime is started by the first run that
 * uses it and kept (see start_fwdio); its memory peaks are those of the
 * invocation so far, and later runs of other modes run beside an idle runtime
 * (whose cost the idle mode measures).
 */
static void run_one(struct bench_ctx *ctx, struct config *cfgs, int config, int run, int rep,
                    struct run_result *res)
{
    struct config *cfg = &cfgs[config];
    const struct mode *mode = cfg->mode;
    const struct bench_opts *o = ctx->opts;
    /* A new seed per run: bytes left from an earlier run can never pass verification. */
    uint64_t seed = 0xB5EEDull + (uint64_t)run;
    char path[PATH_MAX + 64];
    fill_data(ctx, seed);

    struct run_local local = {.peak = -1};
    local.files = calloc((size_t)o->steps, sizeof *local.files);
    local.opened = calloc((size_t)o->steps, sizeof *local.opened);
    if (!local.files || !local.opened)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int runtime_failed = mode->uses_runtime && start_fwdio(ctx) != 0;
    if (!runtime_failed && mode->step == step_lent) {
        /* the application's packing, untimed like every mode's filling */
        int ok = ctx->lent || fwdio_alloc(ctx->rt, ctx->nbytes ? (size_t)ctx->nbytes : 1,
                                          (void **)&ctx->lent) == FWDIO_OK;
        if (ok)
            memcpy(ctx->lent, ctx->data, (size_t)ctx->nbytes);
        else
            runtime_failed = 1;
    }

    double settled = settle_before_run(ctx);
    quiet_barrier();
    double t0 = MPI_Wtime();
    double cpu0 = app_process_cpu_s();
    fwdio_runtime_stats_t rs0 = {0}, rs1 = {0};
    if (mode->uses_runtime && ctx->rt)
        fwdio_runtime_stats(ctx->rt, &rs0);
    for (int k = 0; k < o->steps && !runtime_failed; k++) {
        if (o->compute > 0)
            app_compute(ctx->rt, ctx->slice_iters, o->compute);
        step_path(path, sizeof path, ctx, run, k);
        mode->step(ctx, cfg, path, k, &local);
    }
    if (mode->finish && !runtime_failed)
        mode->finish(ctx, cfg, &local);
    local.tts = MPI_Wtime() - t0;
    double cpu = app_process_cpu_s() - cpu0, job_cpu = 0;
    if (mode->uses_runtime && ctx->rt)
        fwdio_runtime_stats(ctx->rt, &rs1);
    quiet_barrier();
    if (runtime_failed)
        local.status = -1;
    free(local.files);
    free(local.opened);

    double mine[4] = {local.blocked / o->steps, local.end_to_end / o->steps, local.drain,
                      local.tts}, most[4];
    MPI_Allreduce(mine, most, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int worst;
    MPI_Allreduce(&local.status, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int64_t peak;
    MPI_Allreduce(&local.peak, &peak, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    uint64_t peaks[2] = {local.peak_writer, local.peak_staging}, peaks_max[2];
    MPI_Allreduce(peaks, peaks_max, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&cpu, &job_cpu, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    uint64_t counts[3] = {local.copied + local.to_mpi + local.to_pwrite,
                          rs1.progress_wakeups - rs0.progress_wakeups,
                          rs1.io_wakeups - rs0.io_wakeups},
             counts_sum[3];
    MPI_Allreduce(counts, counts_sum, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    double threads[2] = {rs1.progress_cpu_time - rs0.progress_cpu_time,
                         rs1.io_cpu_time - rs0.io_cpu_time},
           threads_sum[2];
    MPI_Allreduce(threads, threads_sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double written = (double)o->size * o->steps;

    *res = (struct run_result){.run = run, .rep = rep, .config = config, .blocked = most[0],
                               .end_to_end = most[1],
                               .mib_per_s = most[1] > 0 ? (double)o->size / MIB / most[1] : 0,
                               .drain = most[2], .tts = most[3], .status = worst,
                               .verified = -1, .bad_offset = NO_BAD_OFFSET, .peak = peak,
                               .peak_writer = peaks_max[0], .peak_staging = peaks_max[1],
                               .cpu = job_cpu, .settle = settled,
                               .copies_per_byte = written > 0 ? (double)counts_sum[0] / written : 0,
                               .progress_cpu = threads_sum[0], .io_cpu = threads_sum[1],
                               .progress_wakeups = counts_sum[1], .io_wakeups = counts_sum[2]};
    if (ctx->rank == 0 && !cfg->plan[0])
        snprintf(cfg->plan, sizeof cfg->plan, "%s", local.plan);
    if (mode->files == FILES_NONE || worst == STATUS_SKIPPED)
        return;
    for (int k = 0; k < o->steps; k++) {
        step_path(path, sizeof path, ctx, run, k);
        uint64_t bad = mode->files == FILES_PER_PROCESS ? verify_per_process(ctx, path, seed)
                                                         : verify_shared(ctx, path, seed);
        if (bad != NO_BAD_OFFSET && res->bad_offset == NO_BAD_OFFSET)
            res->bad_offset = bad;
        remove_files(ctx, mode->files, path);
    }
    res->verified = res->bad_offset == NO_BAD_OFFSET;
    MPI_Barrier(MPI_COMM_WORLD); /* the next run starts with these files gone */
}
/* ------------------------------------------------------------- reporting */


/* Which field of a run a column shows. */
enum field { FIELD_BLOCKED, FIELD_END_TO_END, FIELD_MIBS, FIELD_TTS };

static double field_of(const struct run_result *r, enum field f)
{
    switch (f) {
    case FIELD_BLOCKED: return r->blocked;
    case FIELD_END_TO_END: return r->end_to_end;
    case FIELD_MIBS: return r->mib_per_s;
    case FIELD_TTS: return r->tts;
    }
    return 0.0;
}

/* Results are stored rep-major: results[rep * ncfg + config]. */
struct table {
    const struct run_result *results;
    const struct config *cfgs;
    int ncfg;
    int reps;
};

static const struct run_result *result_at(const struct table *t, int rep, int config)
{
    return &t->results[rep * t->ncfg + config];
}

static app_spread_t config_spread(const struct table *t, int config, enum field f, double scale)
{
    double *v = malloc(sizeof *v * (size_t)t->reps);
    if (!v)
        return (app_spread_t){0};
    int n = 0;
    for (int rep = 0; rep < t->reps; rep++) {
        const struct run_result *r = result_at(t, rep, config);
        if (r->status != STATUS_SKIPPED && (f != FIELD_MIBS || r->end_to_end > 0))
            v[n++] = field_of(r, f) * scale;
    }
    app_spread_t s = app_spread_of(v, n);
    free(v);
    return s;
}

/* field(config) / field(base), paired rep by rep: the runs were interleaved so that
 * both sides of each ratio saw the same machine state. */
static app_spread_t paired_ratio(const struct table *t, int config, int base, enum field f)
{
    double *v = malloc(sizeof *v * (size_t)t->reps);
    if (!v)
        return (app_spread_t){0};
    int n = 0;
    for (int rep = 0; rep < t->reps; rep++) {
        double den = field_of(result_at(t, rep, base), f);
        if (den > 0)
            v[n++] = field_of(result_at(t, rep, config), f) / den;
    }
    app_spread_t s = app_spread_of(v, n);
    free(v);
    return s;
}

static int find_config(const struct table *t, const char *mode, int writers)
{
    for (int c = 0; c < t->ncfg; c++)
        if (!strcmp(t->cfgs[c].mode->name, mode) && t->cfgs[c].writers == writers)
            return c;
    return -1;
}

static void format_spread(char *buf, size_t cap, app_spread_t s, int decimals)
{
    if (s.n == 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.*f [%.*f, %.*f]", decimals, s.median, decimals, s.min, decimals,
                 s.max);
}

/* "3/3" runs verified, or "-" for a mode that writes no file. */
static void format_verified(char *buf, size_t cap, const struct table *t, int config)
{
    if (t->cfgs[config].mode->files == FILES_NONE) {
        snprintf(buf, cap, "-");
        return;
    }
    int ok = 0, skipped = 0;
    for (int rep = 0; rep < t->reps; rep++) {
        ok += result_at(t, rep, config)->verified == 1 && result_at(t, rep, config)->status == 0;
        skipped += result_at(t, rep, config)->status == STATUS_SKIPPED;
    }
    if (skipped == t->reps)
        snprintf(buf, cap, "skipped");
    else
        snprintf(buf, cap, "%d/%d", ok, t->reps);
}

/* (time to solution / none) - 1 per rep, in percent: the overhead on time to solution. */
static app_spread_t overhead_spread(const struct table *t, int config, int none_cfg)
{
    app_spread_t s = paired_ratio(t, config, none_cfg, FIELD_TTS);
    return (app_spread_t){.median = 100.0 * (s.median - 1.0), .min = 100.0 * (s.min - 1.0),
                           .max = 100.0 * (s.max - 1.0), .n = s.n};
}

/* Median over reps of the peak bytes, in MiB, or "-" when the mode's memory is not visible. */
static void format_peak(char *buf, size_t cap, const struct table *t, int config)
{
    double v[64];
    int n = 0;
    for (int rep = 0; rep < t->reps && n < 64; rep++)
        if (result_at(t, rep, config)->peak >= 0)
            v[n++] = (double)result_at(t, rep, config)->peak / MIB;
    if (n == 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.1f", app_spread_of(v, n).median);
}

static void print_table_row(const struct table *t, int c, int memcpy_cfg, int none_cfg,
                            int width)
{
    char blocked[48], e2e[48], mibs[48], vs_memcpy[48], vs_mpiio[48], ok[16], tts[48],
        overhead[48], peak[24];
    format_spread(blocked, sizeof blocked, config_spread(t, c, FIELD_BLOCKED, 1e3), 2);
    format_spread(e2e, sizeof e2e, config_spread(t, c, FIELD_END_TO_END, 1e3), 1);
    format_spread(mibs, sizeof mibs, config_spread(t, c, FIELD_MIBS, 1.0), 0);
    app_spread_t none = {0};
    format_spread(vs_memcpy, sizeof vs_memcpy,
                  memcpy_cfg >= 0 && c != memcpy_cfg
                      ? paired_ratio(t, c, memcpy_cfg, FIELD_BLOCKED) : none, 1);
    int mpiio_cfg = t->cfgs[c].mode->step == step_fwdio && t->cfgs[c].writers
                        ? find_config(t, "mpiio", t->cfgs[c].writers) : -1;
    format_spread(vs_mpiio, sizeof vs_mpiio,
                  mpiio_cfg >= 0 ? paired_ratio(t, c, mpiio_cfg, FIELD_END_TO_END) : none, 2);
    format_verified(ok, sizeof ok, t, c);
    format_peak(peak, sizeof peak, t, c);
    if (none_cfg < 0) {
        printf("%-*s %-26s %-26s %-20s %-22s %-20s %-9s %s\n", width, t->cfgs[c].label, blocked,
               e2e, mibs, vs_memcpy, vs_mpiio, peak, ok);
        return;
    }
    format_spread(tts, sizeof tts, config_spread(t, c, FIELD_TTS, 1.0), 2);
    format_spread(overhead, sizeof overhead,
                  c != none_cfg ? overhead_spread(t, c, none_cfg) : none, 1);
    printf("%-*s %-26s %-26s %-20s %-22s %-20s %-9s %-22s %-22s %s\n", width, t->cfgs[c].label,
           blocked, e2e, mibs, vs_memcpy, vs_mpiio, peak, tts, overhead, ok);
}

static void print_header(const struct bench_opts *o, int nranks, const char *io)
{
    printf("\nfwdio-bench: pattern %s", o->pattern);
    if (!strcmp(o->pattern, "scattered"))
        printf(" (%" PRIu64 "-byte records)", o->record_size);
    printf(", S = %.1f MiB, P = %d ranks, %d reps, %d step%s", (double)o->size / MIB, nranks,
           o->reps, o->steps, o->steps > 1 ? "s" : "");
    if (o->compute > 0)
        printf(" after %.3f s compute each", o->compute);
    printf(", %s, MPI-IO component %s, fwdio policy",
           o->durable ? "durable (fdatasync / MPI_File_sync)" : "page cache", io);
    for (int p = 0; p < o->npolicies; p++)
        printf("%s%s", p ? "," : " ", policy_names[o->policies[p]]);
    printf(", layout");
    for (int l = 0; l < o->nlayouts; l++)
        printf("%s%s", l ? "," : " ", layout_names[o->layouts[l]]);
    if (o->targets)
        printf(", targets %d", o->targets);
    if (o->write_size)
        printf(", write_size %.2f MiB", (double)o->write_size / MIB);
    if (o->stripe_size)
        printf(", stripe_size %.2f MiB", (double)o->stripe_size / MIB);
    if (o->call_size >= MIB)
        printf(", %.2f MiB per fwdio_write", (double)o->call_size / MIB);
    else if (o->call_size)
        printf(", at most %" PRIu64 " bytes per fwdio_write", o->call_size);
    if (o->presize)
        printf(", MPI-IO files pre-sized");
    if (o->settle)
        printf(", dirty pages settled before every run");
    if (o->combine_size == 1)
        printf(", combining off");
    else if (o->combine_size)
        printf(", combine_size %" PRIu64 " KiB", o->combine_size >> 10);
    printf("\nmedian [min, max] over reps; ratios paired rep by rep; blocked and end-to-end "
           "per step; peak = max over ranks of bytes buffered (fwdio: writer + staging peaks)\n");
}

/* The fwdio configuration with this W, policy and layout, or -1. */
static int find_fwdio_config(const struct table *t, int writers, enum bench_policy policy,
                             fwdio_layout_t layout)
{
    for (int c = 0; c < t->ncfg; c++)
        if (t->cfgs[c].mode->step == step_fwdio && t->cfgs[c].writers == writers &&
            t->cfgs[c].policy == policy && t->cfgs[c].layout == layout)
            return c;
    return -1;
}

static void print_ratio_row(const struct table *t, int num, int den, const char *what, int w,
                            const char *fixed)
{
    char e2e[48], blocked[48];
    format_spread(e2e, sizeof e2e, paired_ratio(t, num, den, FIELD_END_TO_END), 2);
    format_spread(blocked, sizeof blocked, paired_ratio(t, num, den, FIELD_BLOCKED), 2);
    printf("%-22s W=%-4d %-16s %-26s %s\n", what, w, fixed, e2e, blocked);
}

/* Paired per-rep ratios between fwdio configurations of the same W: every other
 * policy over the first one listed (same layout), every other layout over the
 * first one listed (same policy). */
static void print_variant_ratios(const struct table *t, const struct bench_opts *o)
{
    if (o->npolicies < 2 && o->nlayouts < 2)
        return;
    printf("\npaired ratios between fwdio configurations (same W, same rep), median [min, max]\n");
    printf("%-22s %-6s %-16s %-26s %s\n", "ratio", "W", "with", "end-to-end", "blocked");
    char what[64];
    for (int p = 1; p < o->npolicies; p++)
        for (int l = 0; l < o->nlayouts; l++)
            for (int w = 0; w < o->nwriters; w++) {
                int num = find_fwdio_config(t, o->writers[w], o->policies[p], o->layouts[l]);
                int den = find_fwdio_config(t, o->writers[w], o->policies[0], o->layouts[l]);
                snprintf(what, sizeof what, "%s/%s", policy_names[o->policies[p]],
                         policy_names[o->policies[0]]);
                if (num >= 0 && den >= 0)
                    print_ratio_row(t, num, den, what, o->writers[w],
                                    layout_names[o->layouts[l]]);
            }
    for (int l = 1; l < o->nlayouts; l++)
        for (int p = 0; p < o->npolicies; p++)
            for (int w = 0; w < o->nwriters; w++) {
                int num = find_fwdio_config(t, o->writers[w], o->policies[p], o->layouts[l]);
                int den = find_fwdio_config(t, o->writers[w], o->policies[p], o->layouts[0]);
                snprintf(what, sizeof what, "%s/%s", layout_names[o->layouts[l]],
                         layout_names[o->layouts[0]]);
                if (num >= 0 && den >= 0)
                    print_ratio_row(t, num, den, what, o->writers[w],
                                    policy_names[o->policies[p]]);
            }
}

/* CPU seconds of the whole job per GiB written: the run's CPU, less that of the
 * compute-only run (none) of the same repetition when there is one. */
static double cpu_per_gib(const struct table *t, const struct run_result *r, int none_cfg,
                          const struct bench_opts *o)
{
    const struct run_result *base = none_cfg >= 0 ? result_at(t, r->rep, none_cfg) : NULL;
    double gib = (double)o->size * o->steps / (double)(1u << 30);
    return (r->cpu - (base ? base->cpu : 0.0)) / gib;
}

/* One line per file-writing configuration: CPU s per output GiB, median [min, max]. */
static void print_cpu_lines(const struct table *t, const struct bench_opts *o, int width)
{
    int none_cfg = find_config(t, "none", 0);
    printf("CPU s of the whole job per output GiB (every rank, all threads%s):\n",
           none_cfg >= 0 ? ", less the none run of the same rep" : "");
    for (int c = 0; c < t->ncfg; c++) {
        if (t->cfgs[c].mode->files == FILES_NONE)
            continue;
        double v[256];
        int n = 0;
        for (int rep = 0; rep < t->reps && n < 256; rep++) {
            const struct run_result *r = result_at(t, rep, c);
            if (r->status == 0)
                v[n++] = cpu_per_gib(t, r, none_cfg, o);
        }
        char cell[48];
        format_spread(cell, sizeof cell, n ? app_spread_of(v, n) : (app_spread_t){0}, 2);
        printf("  %-*s %s\n", width, t->cfgs[c].label, n ? cell : "-");
    }
}

/* fwdio's own costs per configuration that ran it: copies per output byte on
 * the CPU, and its threads' CPU seconds and wakeups per output GiB (every
 * rank), medians over the repetitions. */
static void print_fwdio_costs(const struct table *t, const struct bench_opts *o, int width)
{
    double gib = (double)o->size * o->steps / (double)(1u << 30);
    int header = 0;
    for (int c = 0; c < t->ncfg; c++) {
        if (!t->cfgs[c].mode->uses_runtime || t->cfgs[c].mode->files == FILES_NONE)
            continue;
        double v[5][256];
        int n = 0;
        for (int rep = 0; rep < t->reps && n < 256; rep++) {
            const struct run_result *r = result_at(t, rep, c);
            if (r->status != 0)
                continue;
            v[0][n] = r->copies_per_byte;
            v[1][n] = r->progress_cpu / gib;
            v[2][n] = r->io_cpu / gib;
            v[3][n] = (double)r->progress_wakeups / gib;
            v[4][n] = (double)r->io_wakeups / gib;
            n++;
        }
        if (!header) {
            printf("fwdio's costs, every rank, medians (copies per output byte = bytes copied "
                   "+ handed to MPI + handed to pwrite, over bytes written; per GiB written):\n"
                   "  %-*s %12s %14s %12s %16s %14s\n",
                   width, "config", "copies/byte", "progress cpu s", "io cpu s",
                   "progress wakeups", "io wakeups");
            header = 1;
        }
        if (n == 0) {
            printf("  %-*s -\n", width, t->cfgs[c].label);
            continue;
        }
        printf("  %-*s %12.2f %14.3f %12.3f %16.0f %14.0f\n", width, t->cfgs[c].label,
               app_spread_of(v[0], n).median, app_spread_of(v[1], n).median,
               app_spread_of(v[2], n).median, app_spread_of(v[3], n).median,
               app_spread_of(v[4], n).median);
    }
}

static void print_table(const struct table *t, const struct bench_opts *o, int nranks,
                        const char *io)
{
    print_header(o, nranks, io);
    int width = 14;
    for (int c = 0; c < t->ncfg; c++)
        width = (int)strlen(t->cfgs[c].label) > width ? (int)strlen(t->cfgs[c].label) : width;
    int memcpy_cfg = find_config(t, "memcpy", 0), none_cfg = find_config(t, "none", 0);
    if (none_cfg < 0)
        printf("%-*s %-26s %-26s %-20s %-22s %-20s %-9s %s\n", width, "config", "blocked ms",
               "end-to-end ms", "MiB/s", "blocked/memcpy", "e2e fwdio/mpiio", "peak MiB",
               "verified");
    else
        printf("%-*s %-26s %-26s %-20s %-22s %-20s %-9s %-22s %-22s %s\n", width, "config",
               "blocked ms", "end-to-end ms", "MiB/s", "blocked/memcpy", "e2e fwdio/mpiio",
               "peak MiB", "time to solution s", "overhead vs none %", "verified");
    for (int c = 0; c < t->ncfg; c++)
        print_table_row(t, c, memcpy_cfg, none_cfg, width);
    int idle_cfg = find_config(t, "idle", 0);
    if (idle_cfg >= 0 && none_cfg >= 0) {
        char idle[48];
        format_spread(idle, sizeof idle, overhead_spread(t, idle_cfg, none_cfg), 2);
        printf("idle cost: compute with an idle fwdio runtime vs none: %s %%\n", idle);
    }
    print_variant_ratios(t, o);
    print_cpu_lines(t, o, width);
    print_fwdio_costs(t, o, width);
    printf("plans:\n");
    for (int c = 0; c < t->ncfg; c++)
        printf("  %-*s %s\n", width, t->cfgs[c].label, t->cfgs[c].plan);
}

/* One row per run, every field, for plotting and later comparison. */
static int write_csv(const char *path, const struct table *t, const struct bench_opts *o,
                     int nranks, const char *io)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "fwdio-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "run,rep,config,mode,writers,pattern,layout,write_size,stripe_size,call_size,"
               "size,nranks,durable,blocked_s,end_to_end_s,mib_per_s,status,verified,"
               "bad_offset,policy,targets,io_component,steps,compute_s,time_to_solution_s,"
               "drain_s,overhead,peak_bytes,peak_writer_bytes,peak_staging_bytes,record_size,"
               "skipped,combine_size,cpu_s,cpu_s_per_gib,settle_s,copies_per_byte,progress_cpu_s,"
               "io_cpu_s,progress_wakeups,io_wakeups\n");
    int none_cfg = find_config(t, "none", 0);
    for (int i = 0; i < t->reps * t->ncfg; i++) {
        const struct run_result *r = &t->results[i];
        const struct config *c = &t->cfgs[r->config];
        fprintf(f, "%d,%d,%s,%s,%d,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                   ",%d,%d,%.9f,%.9f,%.3f,%d,%d,",
                r->run, r->rep, c->label, c->mode->name, c->writers, o->pattern,
                layout_names[c->layout], o->write_size,
                o->stripe_size, o->call_size, o->size, nranks, o->durable, r->blocked,
                r->end_to_end, r->mib_per_s, r->status, r->verified);
        if (r->bad_offset != NO_BAD_OFFSET)
            fprintf(f, "%" PRIu64, r->bad_offset);
        fprintf(f, ",%s,%d,%s,%d,%.6f,%.9f,%.9f,",
                c->mode->step == step_fwdio ? policy_names[c->policy] : "",
                c->mode->step == step_fwdio && c->layout == FWDIO_LAYOUT_TARGETS ? o->targets : 0,
                io, o->steps, o->compute, r->tts, r->drain);
        const struct run_result *base = none_cfg >= 0 ? result_at(t, r->rep, none_cfg) : NULL;
        if (base && base->tts > 0 && r->config != none_cfg)
            fprintf(f, "%.6f", r->tts / base->tts - 1.0);
        fprintf(f, ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%.4f,", r->peak,
                r->peak_writer, r->peak_staging, o->record_size, r->status == STATUS_SKIPPED,
                o->combine_size, r->cpu);
        if (c->mode->files != FILES_NONE)
            fprintf(f, "%.4f", cpu_per_gib(t, r, none_cfg, o));
        fprintf(f, ",%.4f,%.4f,%.4f,%.4f,%" PRIu64 ",%" PRIu64 "\n", r->settle,
                r->copies_per_byte, r->progress_cpu, r->io_cpu, r->progress_wakeups,
                r->io_wakeups);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "fwdio-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void print_progress(const struct run_result *r, const struct config *cfg, int total)
{
    printf("run %3d/%d rep %d %-24s blocked %9.2f ms  end-to-end %9.1f ms  %8.0f MiB/s  "
           "tts %8.3f s  %s\n",
           r->run + 1, total, r->rep, cfg->label, r->blocked * 1e3, r->end_to_end * 1e3,
           r->mib_per_s, r->tts,
           r->status == STATUS_SKIPPED ? "skipped" : r->status ? "FAILED"
           : r->verified == 0 ? "BAD BYTES" : r->verified == 1 ? "verified" : "");
    if (r->verified == 0)
        printf("    first bad offset %" PRIu64 "\n", r->bad_offset);
    fflush(stdout);
}

/* ---------------------------------------------------------------- set-up */

static int make_run_dir(struct bench_ctx *ctx)
{
    return app_make_run_dir(ctx->opts->dir, "fwdio-bench", ctx->dir, sizeof ctx->dir);
}

/* The rank's pieces as one hindexed element each (for the MPI-IO view), when every
 * rank's bytes fit the int counts of one call. */
static void setup_filetype(struct bench_ctx *ctx)
{
    int fits = ctx->nbytes <= INT_MAX, all_fit;
    MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ctx->view_ok = all_fit;
    ctx->filetype = MPI_DATATYPE_NULL;
    if (!all_fit || ctx->nextents == 0 || ctx->nextents > INT_MAX)
        return;
    int *lens = malloc(sizeof *lens * ctx->nextents);
    MPI_Aint *displs = malloc(sizeof *displs * ctx->nextents);
    if (lens && displs) {
        for (size_t e = 0; e < ctx->nextents; e++) {
            lens[e] = (int)ctx->extents[e].len;
            displs[e] = (MPI_Aint)ctx->extents[e].offset;
        }
        MPI_Type_create_hindexed((int)ctx->nextents, lens, displs, MPI_BYTE, &ctx->filetype);
        MPI_Type_commit(&ctx->filetype);
    }
    free(lens);
    free(displs);
}

/* This rank's extents and buffers; returns 0 when every rank has them. */
static int setup_data(struct bench_ctx *ctx)
{
    ctx->extents = pattern_extents(ctx->opts, ctx->rank, ctx->nranks, &ctx->nextents);
    unsigned long long n = ctx->nextents, most;
    MPI_Allreduce(&n, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    ctx->max_nextents = (size_t)most;
    ctx->nbytes = 0;
    for (size_t e = 0; ctx->extents && e < ctx->nextents; e++)
        ctx->nbytes += ctx->extents[e].len;
    size_t alloc = ctx->nbytes ? (size_t)ctx->nbytes : 1;
    ctx->data = malloc(alloc);
    ctx->scratch = malloc(alloc);
    int ok = ctx->extents && ctx->data && ctx->scratch, all_ok;
    if (ok)
        memset(ctx->scratch, 0xA5, alloc); /* pre-touch: the reference times a copy, not faults */
    if (ok && ctx->rank == 0 && mode_selected(ctx->opts, "gather") && build_gather_map(ctx) != 0) {
        fprintf(stderr, "fwdio-bench: gather needs S below 2 GiB and memory for its map\n");
        ok = 0;
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok)
        setup_filetype(ctx);
    return all_ok ? 0 : -1;
}

static void teardown(struct bench_ctx *ctx)
{
    if (ctx->rank == 0 && ctx->dir[0] && rmdir(ctx->dir) != 0)
        fprintf(stderr, "fwdio-bench: cannot remove %s: %s\n", ctx->dir, strerror(errno));
    if (ctx->filetype != MPI_DATATYPE_NULL)
        MPI_Type_free(&ctx->filetype);
    free_gather_map();
    free(ctx->extents);
    free(ctx->data);
    free(ctx->scratch);
}

/* Runs every configuration `reps` times, interleaved; returns 0 when all passed. */
static int run_all(struct bench_ctx *ctx, struct config *cfgs, int ncfg,
                   struct run_result *results)
{
    int failures = 0;
    for (int rep = 0; rep < ctx->opts->reps; rep++) {
        for (int c = 0; c < ncfg; c++) {
            int run = rep * ncfg + c;
            struct run_result *r = &results[run];
            run_one(ctx, cfgs, c, run, rep, r);
            failures += (r->status != 0 && r->status != STATUS_SKIPPED) || r->verified == 0;
            if (ctx->rank == 0)
                print_progress(r, &cfgs[c], ctx->opts->reps * ncfg);
        }
    }
    return failures ? -1 : 0;
}

/* Open MPI's io component as the environment selects it (mpirun --mca io X exports
 * OMPI_MCA_io=X to the ranks); "default" is Open MPI's own choice (ompio in 4.1). */
static const char *io_component(void)
{
    const char *io = getenv("OMPI_MCA_io");
    return io && *io ? io : "default";
}

static int bench_main(const struct bench_opts *opts)
{
    struct bench_ctx ctx = {.opts = opts, .filetype = MPI_DATATYPE_NULL, .io = io_component()};
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.nranks);
    if (setup_data(&ctx) != 0 || make_run_dir(&ctx) != 0) {
        if (ctx.rank == 0)
            fprintf(stderr, "fwdio-bench: set-up failed (memory or run directory)\n");
        teardown(&ctx);
        return 1;
    }
    if (opts->compute > 0)
        ctx.slice_iters = app_calibrate_slice();
    struct config *cfgs = calloc((size_t)max_configs(opts), sizeof *cfgs);
    int ncfg = cfgs ? build_configs(opts, cfgs) : 0;
    struct run_result *results = calloc((size_t)(opts->reps * (ncfg ? ncfg : 1)), sizeof *results);
    int failed = !cfgs || !results;
    if (!failed)
        failed = run_all(&ctx, cfgs, ncfg, results) != 0;
    if (ctx.rt) {
        if (ctx.lent)
            fwdio_release(ctx.rt, ctx.lent);
        fwdio_finalize(ctx.rt);
        ctx.rt = NULL;
    }

    if (ctx.rank == 0 && results && cfgs) {
        struct table t = {.results = results, .cfgs = cfgs, .ncfg = ncfg, .reps = opts->reps};
        print_table(&t, opts, ctx.nranks, ctx.io);
        if (opts->csv && write_csv(opts->csv, &t, opts, ctx.nranks, ctx.io) != 0)
            failed = 1;
    }
    free(results);
    free(cfgs);
    teardown(&ctx);
    int any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    struct bench_opts opts;
    int parsed = parse_args(argc, argv, &opts, rank);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    int rc = bench_main(&opts);
    MPI_Finalize();
    return rc;
}
