/*
 * fwdio-bench: one output step written by every rank, through fwdio and
 * through MPI-IO, side by side, with a memcpy of the same bytes as the floor.
 *
 * The rules are those of /BENCHMARKS.md: every configuration runs on the same
 * data and ranks, runs are interleaved (rep by rep, every configuration in
 * order), every file is verified after its run (not timed) and then removed,
 * and the report gives median, min and max over reps plus the ratios
 * "blocked / memcpy" and "fwdio end-to-end / mpiio end-to-end (same W)".
 *
 * The pieces are tables so that new workloads and baselines slot in:
 *   patterns[]  which bytes of the file each rank writes;
 *   modes[]     how a configuration runs one output step;
 *   struct run_result, write_csv()  one record per run.
 * See bench/README.md for the options and the meaning of each column.
 */
#define _POSIX_C_SOURCE 200809L

#include "fwdio.h"
#include "pattern.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024.0 * 1024.0)
#define MAX_WRITER_COUNTS 32
#define MAX_LIST 1024
#define MAX_EXTENTS 64
#define NO_BAD_OFFSET UINT64_MAX
/* Largest count handed to one MPI-IO call: counts are ints. */
#define MPIIO_MAX_CALL ((uint64_t)1 << 30)

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
};

/* ----------------------------------------------------------------- patterns */

/* Bytes [offset, offset + len) of the file. */
struct extent {
    uint64_t offset;
    uint64_t len;
};

/* Fills out[0..max) with the extents rank `rank` writes, in file order; returns the count. */
typedef size_t (*pattern_fn)(uint64_t size, int rank, int nranks, struct extent *out,
                             size_t max);

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

static size_t pattern_block(uint64_t size, int rank, int nranks, struct extent *out, size_t max)
{
    if (max < 1)
        return 0;
    /* r*S/P boundaries: deliberately not aligned to stripes or write units. */
    uint64_t begin = scaled_boundary(size, rank, nranks);
    uint64_t end = scaled_boundary(size, rank + 1, nranks);
    out[0] = (struct extent){.offset = begin, .len = end - begin};
    return 1;
}

static const struct pattern patterns[] = {
    {"block", "each rank one contiguous block [r*S/P, (r+1)*S/P)", pattern_block},
};

static const struct pattern *find_pattern(const char *name)
{
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
        if (!strcmp(patterns[i].name, name))
            return &patterns[i];
    return NULL;
}

/* ------------------------------------------------------- runs and results */

struct config;

/* Everything a run needs that does not change between runs. */
struct bench_ctx {
    const struct bench_opts *opts;
    int rank, nranks;
    fwdio_runtime_t *rt;
    struct extent extents[MAX_EXTENTS];
    size_t nextents;
    uint64_t nbytes;        /* this rank's bytes: the sum of its extents */
    unsigned char *data;    /* this rank's bytes, extents back to back */
    unsigned char *scratch; /* pre-touched destination of the memcpy reference */
    char dir[PATH_MAX];     /* fresh directory holding this process's run files */
};

/* One rank's view of one run, before the ranks' numbers are combined. */
struct run_local {
    double blocked;    /* time in output calls before the rank may compute again */
    double end_to_end; /* first call to every byte in the file, on this rank */
    int status;        /* 0, or a negative fwdio/bench error */
    char plan[160];    /* what the configuration actually did (rank 0 reports it) */
};

/* One run as reported: the record written to CSV. */
struct run_result {
    int run;             /* index in execution order */
    int rep;
    int config;          /* index into the config list */
    double blocked;      /* max over ranks, seconds */
    double end_to_end;   /* max over ranks, seconds */
    double mib_per_s;    /* S / end_to_end */
    int status;          /* worst (lowest) status over ranks */
    int verified;        /* 1: every byte checked; 0: failed; -1: not a file mode */
    uint64_t bad_offset; /* first bad offset when verified == 0 */
};

/* How one configuration runs one output step on every rank. */
typedef void (*mode_fn)(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                        struct run_local *out);

struct mode {
    const char *name;
    mode_fn run;
    int writes_file;   /* 0: a reference that never touches storage */
    int per_writers;   /* one configuration per entry of --writers */
    int also_unhinted; /* plus one configuration with no writer count */
};

/* One line of the report: a mode with its parameters. */
struct config {
    const struct mode *mode;
    int writers; /* 0: the mode's own default */
    enum bench_policy policy; /* fwdio only */
    fwdio_layout_t layout;    /* fwdio only */
    char label[48];
    char plan[160];
};

/* -------------------------------------------------------------- the modes */

/* memcpy of the rank's bytes into a pre-touched buffer: no output path can block less. */
static void run_memcpy(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                       struct run_local *out)
{
    (void)cfg, (void)path;
    double t0 = MPI_Wtime();
    memcpy(ctx->scratch, ctx->data, (size_t)ctx->nbytes);
    out->blocked = out->end_to_end = MPI_Wtime() - t0;
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

static void run_fwdio(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                      struct run_local *out)
{
    const struct bench_opts *o = ctx->opts;
    fwdio_options_t fo;
    fwdio_options_init(&fo);
    fo.writers = cfg->writers;
    fo.layout = cfg->layout;
    fo.targets = cfg->layout == FWDIO_LAYOUT_TARGETS ? o->targets : 0;
    fo.durable = o->durable;
    int packed[MAX_LIST];
    switch (cfg->policy) {
    case POLICY_SPREAD:
        fo.placement = FWDIO_PLACEMENT_SPREAD;
        break;
    case POLICY_STRIDE:
        fo.placement = FWDIO_PLACEMENT_STRIDE;
        fo.first_writer = o->first_writer;
        fo.writer_stride = o->writer_stride;
        break;
    case POLICY_LIST: /* the first W ranks of --list (checked at start-up) */
        fo.placement = FWDIO_PLACEMENT_LIST;
        fo.writer_list = o->list;
        fo.writer_list_len = cfg->writers;
        break;
    case POLICY_PACKED: /* ranks 0 .. W-1: every writer on consecutive ranks */
        for (int w = 0; w < cfg->writers && w < MAX_LIST; w++)
            packed[w] = w;
        fo.placement = FWDIO_PLACEMENT_LIST;
        fo.writer_list = packed;
        fo.writer_list_len = cfg->writers;
        break;
    case NPOLICIES:
        break;
    }
    if (ctx->opts->write_size)
        fo.write_size = ctx->opts->write_size;
    if (ctx->opts->stripe_size)
        fo.stripe_size = ctx->opts->stripe_size;
    fwdio_file_t *file = NULL;

    double t0 = MPI_Wtime();
    int rc = fwdio_open(ctx->rt, path, ctx->opts->size, &fo, NULL, &file);
    if (rc == FWDIO_OK) {
        int wrc = fwdio_write_extents(ctx, file);
        int crc = fwdio_close(file);
        rc = wrc != FWDIO_OK ? wrc : crc;
    }
    out->blocked = MPI_Wtime() - t0;
    int status = file ? fwdio_wait(file) : rc;
    out->end_to_end = MPI_Wtime() - t0;

    out->status = rc != FWDIO_OK ? rc : status;
    if (out->status != FWDIO_OK)
        fprintf(stderr, "[rank %d] %s: %s\n", ctx->rank, cfg->label,
                file ? fwdio_file_error(file) : fwdio_strerror(out->status));
    if (file) {
        describe_fwdio_plan(file, out->plan, sizeof out->plan);
        fwdio_file_free(file);
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

/* Which aggregator count the MPI library says it kept from the cb_nodes hint. */
static void describe_mpiio_plan(MPI_File fh, const struct config *cfg, char *plan, size_t cap)
{
    MPI_Info used;
    char value[64] = "";
    int flag = 0;
    if (MPI_File_get_info(fh, &used) == MPI_SUCCESS) {
        MPI_Info_get(used, "cb_nodes", (int)sizeof value - 1, value, &flag);
        MPI_Info_free(&used);
    }
    char hint[16] = "none";
    if (cfg->writers)
        snprintf(hint, sizeof hint, "%d", cfg->writers);
    snprintf(plan, cap, "hint cb_nodes=%s; the file reports cb_nodes=%s", hint,
             flag ? value : "(not reported)");
}

static void run_mpiio(struct bench_ctx *ctx, const struct config *cfg, const char *path,
                      struct run_local *out)
{
    int calls = mpiio_call_count(ctx);
    MPI_Info info = MPI_INFO_NULL;
    if (cfg->writers) {
        char value[16];
        snprintf(value, sizeof value, "%d", cfg->writers);
        MPI_Info_create(&info);
        MPI_Info_set(info, "cb_nodes", value);
    }
    MPI_File fh;
    int failed = 0;

    double t0 = MPI_Wtime();
    int err = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    if (err != MPI_SUCCESS) {
        failed = report_mpi_error(ctx, "MPI_File_open", err);
    } else {
        failed |= mpiio_write_extents(ctx, fh, calls);
        if (ctx->opts->durable && (err = MPI_File_sync(fh)) != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_sync", err);
        describe_mpiio_plan(fh, cfg, out->plan, sizeof out->plan); /* a local query */
        if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
            failed = report_mpi_error(ctx, "MPI_File_close", err);
    }
    /* Blocking collective I/O: the application waits for all of it. */
    out->blocked = out->end_to_end = MPI_Wtime() - t0;
    out->status = failed ? -1 : 0;
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

static const struct mode modes[] = {
    {"memcpy", run_memcpy, 0, 0, 0},
    {"fwdio", run_fwdio, 1, 1, 0},
    {"mpiio", run_mpiio, 1, 1, 1},
};
#define NMODES (sizeof modes / sizeof modes[0])

/* ------------------------------------------------------- command line */

static int parse_size(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (*end != '\0' || (shift && value > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)value << shift;
    return 0;
}

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

static void print_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [options]\n"
            "  --size BYTES        file size S, K/M/G suffixes (default 256M)\n"
            "  --reps N            repetitions of every configuration (default 3)\n"
            "  --writers LIST      writer counts W, e.g. 1,2,4,8 (default 1,2,4,8)\n"
            "  --modes LIST        of memcpy,fwdio,mpiio (default all three)\n"
            "  --pattern NAME      which bytes each rank writes: block (default)\n"
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
            "  --call-size BYTES   bytes per fwdio_write call (default: one call per block)\n"
            "  --durable           fdatasync (fwdio) / MPI_File_sync (MPI-IO) before done\n"
            "  --dir DIR           where the run files go (default $TMPDIR or /tmp)\n"
            "  --csv FILE          also write one CSV row per run\n",
            prog);
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

/* A non-negative int option. */
static int parse_count(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
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

/* Handles one "--name value" option; returns 0, or -1 when the value is bad. */
static int parse_valued_option(struct bench_opts *o, const char *name, const char *val)
{
    char *end;
    if (!strcmp(name, "--size"))
        return parse_size(val, &o->size) || o->size == 0 ? -1 : 0;
    if (!strcmp(name, "--reps")) {
        long r = strtol(val, &end, 10);
        o->reps = (int)r;
        return *end || r < 1 || r > 10000 ? -1 : 0;
    }
    if (!strcmp(name, "--writers"))
        return (o->nwriters = parse_int_list(val, o->writers, MAX_WRITER_COUNTS)) < 0 ? -1 : 0;
    if (!strcmp(name, "--modes"))
        return o->modes = val, 0;
    if (!strcmp(name, "--pattern"))
        return o->pattern = val, find_pattern(val) ? 0 : -1;
    if (!strcmp(name, "--layout"))
        return parse_layouts(val, o);
    if (!strcmp(name, "--policy"))
        return parse_policies(val, o);
    if (!strcmp(name, "--targets"))
        return parse_count(val, &o->targets);
    if (!strcmp(name, "--first-writer"))
        return parse_count(val, &o->first_writer);
    if (!strcmp(name, "--stride"))
        return parse_count(val, &o->writer_stride);
    if (!strcmp(name, "--list"))
        return parse_rank_list(val, o);
    if (!strcmp(name, "--write-size"))
        return parse_size(val, &o->write_size);
    if (!strcmp(name, "--stripe-size"))
        return parse_size(val, &o->stripe_size);
    if (!strcmp(name, "--call-size"))
        return parse_size(val, &o->call_size);
    if (!strcmp(name, "--dir"))
        return o->dir = val, 0;
    if (!strcmp(name, "--csv"))
        return o->csv = val, 0;
    return -1;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
    *o = (struct bench_opts){.size = (uint64_t)256 << 20, .reps = 3, .pattern = "block",
                             .modes = "memcpy,fwdio,mpiio", .writers = {1, 2, 4, 8},
                             .nwriters = 4, .policies = {POLICY_SPREAD}, .npolicies = 1,
                             .layouts = {FWDIO_LAYOUT_BLOCK}, .nlayouts = 1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--durable")) {
            o->durable = 1;
            continue;
        }
        if (i + 1 >= argc || parse_valued_option(o, argv[i], argv[i + 1]) != 0)
            return -1;
        i++;
    }
    int uses_list = 0, max_w = 0;
    for (int p = 0; p < o->npolicies; p++)
        uses_list |= o->policies[p] == POLICY_LIST;
    for (int w = 0; w < o->nwriters; w++)
        max_w = o->writers[w] > max_w ? o->writers[w] : max_w;
    if (uses_list && o->list_len < max_w) {
        fprintf(stderr, "fwdio-bench: policy list needs --list with at least %d ranks\n", max_w);
        return -1;
    }
    if (max_w > MAX_LIST) {
        fprintf(stderr, "fwdio-bench: at most %d writers\n", MAX_LIST);
        return -1;
    }
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
        if (!modes[m].per_writers && list_has(o->modes, modes[m].name))
            add_config(cfgs, &n, &modes[m], 0, POLICY_SPREAD, FWDIO_LAYOUT_BLOCK, 0);
    for (int w = 0; w < o->nwriters; w++)
        for (size_t m = 0; m < NMODES; m++) {
            if (!modes[m].per_writers || !list_has(o->modes, modes[m].name))
                continue;
            if (modes[m].run != run_fwdio) {
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
        if (modes[m].also_unhinted && list_has(o->modes, modes[m].name))
            add_config(cfgs, &n, &modes[m], 0, POLICY_SPREAD, FWDIO_LAYOUT_BLOCK, 0);
    return n;
}

static int max_configs(const struct bench_opts *o)
{
    return (int)NMODES * (o->nwriters * o->npolicies * o->nlayouts + 2);
}

/* ------------------------------------------------------------ one run */

/* Every rank checks the bytes it wrote; returns the first bad offset over all ranks. */
static uint64_t verify_run(const struct bench_ctx *ctx, const char *path, uint64_t seed)
{
    uint64_t bad = NO_BAD_OFFSET;
    for (size_t e = 0; e < ctx->nextents && bad == NO_BAD_OFFSET; e++) {
        const struct extent *x = &ctx->extents[e];
        if (x->len &&
            pattern_check_file(path, ctx->opts->size, x->offset, x->len, seed, 0, &bad) == 0)
            bad = NO_BAD_OFFSET;
    }
    uint64_t first_bad;
    MPI_Allreduce(&bad, &first_bad, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    return first_bad;
}

/*
 * A barrier that sleeps instead of spinning. With more ranks than cores, ranks
 * that finished a timed section and spin in MPI_Barrier take the CPU from the
 * ranks still inside it, and the spread of the timings grows several-fold.
 */
static void quiet_barrier(void)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done;
         MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
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

static void run_one(struct bench_ctx *ctx, struct config *cfgs, int config, int run, int rep,
                    struct run_result *res)
{
    struct config *cfg = &cfgs[config];
    /* A new seed per run: bytes left from an earlier run can never pass verification. */
    uint64_t seed = 0xB5EEDull + (uint64_t)run;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/run%04d.dat", ctx->dir, run);
    fill_data(ctx, seed);

    struct run_local local = {0};
    quiet_barrier();
    cfg->mode->run(ctx, cfg, path, &local);
    quiet_barrier();
    double mine[2] = {local.blocked, local.end_to_end}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int worst;
    MPI_Allreduce(&local.status, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    *res = (struct run_result){.run = run, .rep = rep, .config = config, .blocked = most[0],
                               .end_to_end = most[1],
                               .mib_per_s = (double)ctx->opts->size / MIB / most[1],
                               .status = worst, .verified = -1, .bad_offset = NO_BAD_OFFSET};
    if (ctx->rank == 0 && !cfg->plan[0])
        snprintf(cfg->plan, sizeof cfg->plan, "%s", local.plan);
    if (!cfg->mode->writes_file)
        return;
    res->bad_offset = verify_run(ctx, path, seed);
    res->verified = res->bad_offset == NO_BAD_OFFSET;
    if (ctx->rank == 0 && unlink(path) != 0)
        fprintf(stderr, "fwdio-bench: cannot remove %s: %s\n", path, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD); /* the next run starts with this file gone */
}

/* ------------------------------------------------------------- reporting */

struct spread {
    double median, min, max;
    int n;
};

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static struct spread spread_of(double *v, int n)
{
    if (n == 0)
        return (struct spread){0};
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return (struct spread){.median = median, .min = v[0], .max = v[n - 1], .n = n};
}

/* Which field of a run a column shows. */
enum field { FIELD_BLOCKED, FIELD_END_TO_END, FIELD_MIBS };

static double field_of(const struct run_result *r, enum field f)
{
    switch (f) {
    case FIELD_BLOCKED: return r->blocked;
    case FIELD_END_TO_END: return r->end_to_end;
    case FIELD_MIBS: return r->mib_per_s;
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

static struct spread config_spread(const struct table *t, int config, enum field f, double scale)
{
    double *v = malloc(sizeof *v * (size_t)t->reps);
    if (!v)
        return (struct spread){0};
    for (int rep = 0; rep < t->reps; rep++)
        v[rep] = field_of(result_at(t, rep, config), f) * scale;
    struct spread s = spread_of(v, t->reps);
    free(v);
    return s;
}

/* field(config) / field(base), paired rep by rep: the runs were interleaved so that
 * both sides of each ratio saw the same machine state. */
static struct spread paired_ratio(const struct table *t, int config, int base, enum field f)
{
    double *v = malloc(sizeof *v * (size_t)t->reps);
    if (!v)
        return (struct spread){0};
    int n = 0;
    for (int rep = 0; rep < t->reps; rep++) {
        double den = field_of(result_at(t, rep, base), f);
        if (den > 0)
            v[n++] = field_of(result_at(t, rep, config), f) / den;
    }
    struct spread s = spread_of(v, n);
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

static void format_spread(char *buf, size_t cap, struct spread s, int decimals)
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
    if (!t->cfgs[config].mode->writes_file) {
        snprintf(buf, cap, "-");
        return;
    }
    int ok = 0;
    for (int rep = 0; rep < t->reps; rep++)
        ok += result_at(t, rep, config)->verified == 1 && result_at(t, rep, config)->status == 0;
    snprintf(buf, cap, "%d/%d", ok, t->reps);
}

static void print_table_row(const struct table *t, int c, int memcpy_cfg, int width)
{
    char blocked[48], e2e[48], mibs[48], vs_memcpy[48], vs_mpiio[48], ok[16];
    format_spread(blocked, sizeof blocked, config_spread(t, c, FIELD_BLOCKED, 1e3), 2);
    format_spread(e2e, sizeof e2e, config_spread(t, c, FIELD_END_TO_END, 1e3), 1);
    format_spread(mibs, sizeof mibs, config_spread(t, c, FIELD_MIBS, 1.0), 0);
    struct spread none = {0};
    format_spread(vs_memcpy, sizeof vs_memcpy,
                  memcpy_cfg >= 0 && c != memcpy_cfg
                      ? paired_ratio(t, c, memcpy_cfg, FIELD_BLOCKED) : none, 1);
    int mpiio_cfg = !strcmp(t->cfgs[c].mode->name, "fwdio") && t->cfgs[c].writers
                        ? find_config(t, "mpiio", t->cfgs[c].writers) : -1;
    format_spread(vs_mpiio, sizeof vs_mpiio,
                  mpiio_cfg >= 0 ? paired_ratio(t, c, mpiio_cfg, FIELD_END_TO_END) : none, 2);
    format_verified(ok, sizeof ok, t, c);
    printf("%-*s %-26s %-26s %-20s %-22s %-20s %s\n", width, t->cfgs[c].label, blocked, e2e,
           mibs, vs_memcpy, vs_mpiio, ok);
}

static void print_header(const struct bench_opts *o, int nranks)
{
    printf("\nfwdio-bench: pattern %s, S = %.1f MiB, P = %d ranks, %d reps, %s, fwdio policy",
           o->pattern, (double)o->size / MIB, nranks, o->reps,
           o->durable ? "durable (fdatasync / MPI_File_sync)" : "page cache");
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
    if (o->call_size)
        printf(", %.2f MiB per fwdio_write", (double)o->call_size / MIB);
    printf("\nmedian [min, max] over reps; ratios paired rep by rep\n");
}

/* The fwdio configuration with this W, policy and layout, or -1. */
static int find_fwdio_config(const struct table *t, int writers, enum bench_policy policy,
                             fwdio_layout_t layout)
{
    for (int c = 0; c < t->ncfg; c++)
        if (t->cfgs[c].mode->run == run_fwdio && t->cfgs[c].writers == writers &&
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

static void print_table(const struct table *t, const struct bench_opts *o, int nranks)
{
    print_header(o, nranks);
    int width = 14;
    for (int c = 0; c < t->ncfg; c++)
        width = (int)strlen(t->cfgs[c].label) > width ? (int)strlen(t->cfgs[c].label) : width;
    printf("%-*s %-26s %-26s %-20s %-22s %-20s %s\n", width, "config", "blocked ms",
           "end-to-end ms", "MiB/s", "blocked/memcpy", "e2e fwdio/mpiio", "verified");
    int memcpy_cfg = find_config(t, "memcpy", 0);
    for (int c = 0; c < t->ncfg; c++)
        print_table_row(t, c, memcpy_cfg, width);
    print_variant_ratios(t, o);
    printf("plans:\n");
    for (int c = 0; c < t->ncfg; c++)
        printf("  %-*s %s\n", width, t->cfgs[c].label, t->cfgs[c].plan);
}

/* One row per run, every field, for plotting and later comparison. */
static int write_csv(const char *path, const struct table *t, const struct bench_opts *o,
                     int nranks)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "fwdio-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "run,rep,config,mode,writers,pattern,layout,write_size,stripe_size,call_size,"
               "size,nranks,durable,blocked_s,end_to_end_s,mib_per_s,status,verified,"
               "bad_offset,policy,targets\n");
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
        fprintf(f, ",%s,%d\n", c->mode->run == run_fwdio ? policy_names[c->policy] : "",
                c->mode->run == run_fwdio && c->layout == FWDIO_LAYOUT_TARGETS ? o->targets : 0);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "fwdio-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void print_progress(const struct run_result *r, const struct config *cfg, int total)
{
    printf("run %3d/%d rep %d %-24s blocked %9.2f ms  end-to-end %9.1f ms  %8.0f MiB/s  %s\n",
           r->run + 1, total, r->rep, cfg->label, r->blocked * 1e3, r->end_to_end * 1e3,
           r->mib_per_s,
           r->status ? "FAILED" : r->verified == 0 ? "BAD BYTES" : r->verified == 1 ? "verified" : "");
    if (r->verified == 0)
        printf("    first bad offset %" PRIu64 "\n", r->bad_offset);
    fflush(stdout);
}

/* ---------------------------------------------------------------- set-up */

/* Rank 0 makes a fresh directory for this invocation's files; all ranks learn it. */
static int make_run_dir(struct bench_ctx *ctx)
{
    if (ctx->rank == 0) {
        const char *parent = ctx->opts->dir;
        if (!parent || !*parent)
            parent = getenv("TMPDIR");
        if (!parent || !*parent)
            parent = "/tmp";
        snprintf(ctx->dir, sizeof ctx->dir, "%s/fwdio-bench-XXXXXX", parent);
        if (!mkdtemp(ctx->dir)) {
            fprintf(stderr, "fwdio-bench: cannot create %s: %s\n", ctx->dir, strerror(errno));
            ctx->dir[0] = '\0';
        }
    }
    MPI_Bcast(ctx->dir, (int)sizeof ctx->dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    return ctx->dir[0] ? 0 : -1;
}

/* This rank's extents and buffers; returns 0 when every rank has them. */
static int setup_data(struct bench_ctx *ctx)
{
    const struct pattern *pat = find_pattern(ctx->opts->pattern);
    ctx->nextents = pat->extents(ctx->opts->size, ctx->rank, ctx->nranks, ctx->extents,
                                 MAX_EXTENTS);
    ctx->nbytes = 0;
    for (size_t e = 0; e < ctx->nextents; e++)
        ctx->nbytes += ctx->extents[e].len;
    size_t alloc = ctx->nbytes ? (size_t)ctx->nbytes : 1;
    ctx->data = malloc(alloc);
    ctx->scratch = malloc(alloc);
    int ok = ctx->data && ctx->scratch, all_ok;
    if (ok)
        memset(ctx->scratch, 0xA5, alloc); /* pre-touch: the reference times a copy, not faults */
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok ? 0 : -1;
}

static void teardown(struct bench_ctx *ctx)
{
    if (ctx->rank == 0 && ctx->dir[0] && rmdir(ctx->dir) != 0)
        fprintf(stderr, "fwdio-bench: cannot remove %s: %s\n", ctx->dir, strerror(errno));
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
            failures += r->status != 0 || r->verified == 0;
            if (ctx->rank == 0)
                print_progress(r, &cfgs[c], ctx->opts->reps * ncfg);
        }
    }
    return failures ? -1 : 0;
}

static int uses_mode(const struct bench_opts *o, const char *name)
{
    return list_has(o->modes, name);
}

/* Starts fwdio when a configuration needs it; returns 0 or -1 (on every rank alike). */
static int start_fwdio(struct bench_ctx *ctx)
{
    ctx->rt = NULL;
    if (!uses_mode(ctx->opts, "fwdio"))
        return 0;
    int rc = fwdio_init(MPI_COMM_WORLD, NULL, &ctx->rt);
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

static int bench_main(const struct bench_opts *opts)
{
    struct bench_ctx ctx = {.opts = opts};
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.nranks);
    if (setup_data(&ctx) != 0 || make_run_dir(&ctx) != 0) {
        if (ctx.rank == 0)
            fprintf(stderr, "fwdio-bench: set-up failed (memory or run directory)\n");
        teardown(&ctx);
        return 1;
    }
    if (start_fwdio(&ctx) != 0) {
        teardown(&ctx);
        return 1;
    }
    struct config *cfgs = calloc((size_t)max_configs(opts), sizeof *cfgs);
    int ncfg = cfgs ? build_configs(opts, cfgs) : 0;
    struct run_result *results = calloc((size_t)(opts->reps * (ncfg ? ncfg : 1)), sizeof *results);
    int failed = !cfgs || !results;
    if (!failed)
        failed = run_all(&ctx, cfgs, ncfg, results) != 0;

    if (ctx.rank == 0 && results && cfgs) {
        struct table t = {.results = results, .cfgs = cfgs, .ncfg = ncfg, .reps = opts->reps};
        print_table(&t, opts, ctx.nranks);
        if (opts->csv && write_csv(opts->csv, &t, opts, ctx.nranks) != 0)
            failed = 1;
    }
    if (ctx.rt)
        fwdio_finalize(ctx.rt);
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
    if (parse_args(argc, argv, &opts) != 0 || !modes_valid(opts.modes)) {
        if (rank == 0)
            print_usage(argv[0]);
        MPI_Finalize();
        return 2;
    }
    int rc = bench_main(&opts);
    MPI_Finalize();
    return rc;
}
