/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-faults: what each storage fault looks like to the application, and
 * how long it takes to be reported.
 *
 * For every fault case (FWDIO_FAULT rules, and real faults where this machine
 * allows: a file-size limit, a small tmpfs, a read-only bind mount) a fresh
 * runtime writes one file: every rank its contiguous share in --chunk calls,
 * then fwdio_close and fwdio_wait. The writers are ranks 0 and P-1; the fault
 * hits P-1. Rank 0 prints one markdown row per case: the status, what the
 * ranks saw (writer rank, errno, offset; "all P" when every rank saw the same),
 * and, as medians over --reps, when the faulting call failed (ms after open),
 * from it to the last rank's fwdio_close and to the complete callback on the
 * slowest rank, and from the last close to that complete (fwdio's own tail).
 *
 * The time of the faulting call is the file's time_to_failure
 * (fwdio_file_stats: from fwdio_open to the first failed file-system call
 * of the rank that reported it), after this rank's fwdio_open. All times are
 * CLOCK_MONOTONIC, comparable between ranks of one node only; the program
 * says so when the ranks span several nodes. See docs/results/storage-faults.md ("Storage
 * faults".
 */
#define _GNU_SOURCE

#include "app_util.h"
#include "cli.h"
#include "fwdio.h"
#include "pattern.h"
#include "scratch_mounts.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MS 1e3

typedef enum { REAL_NONE, REAL_EFBIG, REAL_ENOSPC, REAL_EROFS } real_t;

typedef struct fault_case {
    const char *id;
    const char *what;  /* for the table */
    const char *fault; /* FWDIO_FAULT; {R}: the faulty writer's rank, {LAST}: its last unit */
    real_t real;
    int durable;
    int atomic; /* options.atomic_replace */
    int commit; /* rank 1 sets a commit block (the last 4 KiB) */
} fault_case_t;

#define COMMIT_LEN 4096

static const fault_case_t cases[] = {
    {.id = "none", .what = "no fault"},
    {.id = "eio-first", .what = "EIO on the writer's 1st pwrite", .fault = "pwrite:eio:nth=1:rank={R}"},
    {.id = "eio-last", .what = "EIO on the writer's last pwrite",
     .fault = "pwrite:eio:nth={LAST}:rank={R}"},
    {.id = "enospc", .what = "ENOSPC on the 1st pwrite", .fault = "pwrite:enospc:nth=1:rank={R}"},
    {.id = "stall", .what = "pwrite writes nothing (1st)", .fault = "pwrite:stall:nth=1:rank={R}"},
    {.id = "short", .what = "every pwrite short (half)", .fault = "pwrite:short"},
    {.id = "slow", .what = "every pwrite +50 ms", .fault = "pwrite:slow=50:rank={R}"},
    {.id = "slow-eio", .what = "+50 ms per pwrite, EIO on the 3rd",
     .fault = "pwrite:slow=50:rank={R};pwrite:eio:nth=3:rank={R}"},
    {.id = "fdatasync", .what = "fdatasync EIO (durable)", .fault = "fdatasync:eio:rank={R}",
     .durable = 1},
    {.id = "close", .what = "close EIO", .fault = "close:eio:rank={R}"},
    {.id = "open", .what = "open EROFS", .fault = "open:erofs:rank={R}"},
    {.id = "ftruncate", .what = "ftruncate EFBIG (writer 0)", .fault = "ftruncate:efbig"},
    {.id = "rename", .what = "rename EIO (atomic replace)", .fault = "rename:eio", .atomic = 1},
    {.id = "fsync-dir", .what = "directory fsync EIO (atomic replace)", .fault = "fsync_dir:eio",
     .atomic = 1},
    {.id = "commit-block", .what = "commit block pwrite EIO (rank 1)", .fault = "pwrite:eio:rank=1",
     .commit = 1},
    {.id = "real-efbig", .what = "real EFBIG: RLIMIT_FSIZE on the writer", .real = REAL_EFBIG},
    {.id = "real-enospc", .what = "real ENOSPC: tmpfs of size/4", .real = REAL_ENOSPC},
    {.id = "real-erofs", .what = "real EROFS: read-only bind mount", .real = REAL_EROFS},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

typedef struct opts {
    uint64_t size, chunk;
    int reps;
    const char *dir;
    const char *only; /* comma-separated case ids, or NULL for all */
} opts_t;

static int g_rank, g_size;
static int g_writers[2], g_nwriters;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ setup */

static fwdio_options_t file_options(const fault_case_t *c)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writer_list = g_writers;
    o.writer_list_len = g_nwriters;
    o.layout = FWDIO_LAYOUT_BLOCK;
    o.durable = c->durable;
    o.atomic_replace = c->atomic;
    return o;
}

/* Bytes [lo, hi) of the faulty writer (the last of the list) under the block
 * layout with the default unit and stripe sizes. */
static void faulty_region(uint64_t size, uint64_t *lo, uint64_t *hi)
{
    uint64_t stripe = FWDIO_DEFAULT_WRITE_SIZE * FWDIO_DEFAULT_STRIPE_UNITS;
    uint64_t stripes = (size + stripe - 1) / stripe;
    int k = g_nwriters - 1;
    *lo = stripes * (uint64_t)k / (uint64_t)g_nwriters * stripe;
    *hi = stripes * (uint64_t)(k + 1) / (uint64_t)g_nwriters * stripe;
    if (*hi > size)
        *hi = size;
}

/* The case's FWDIO_FAULT with {R} and {LAST} filled in. */
static void expand(const char *spec, uint64_t size, char *out, size_t cap)
{
    uint64_t lo, hi;
    faulty_region(size, &lo, &hi);
    uint64_t last = (hi - lo + FWDIO_DEFAULT_WRITE_SIZE - 1) / FWDIO_DEFAULT_WRITE_SIZE;
    size_t n = 0;
    for (const char *p = spec; *p && n + 24 < cap; p++) {
        if (!strncmp(p, "{R}", 3)) {
            n += (size_t)snprintf(out + n, cap - n, "%d", g_writers[g_nwriters - 1]);
            p += 2;
        } else if (!strncmp(p, "{LAST}", 6)) {
            n += (size_t)snprintf(out + n, cap - n, "%" PRIu64, last ? last : 1);
            p += 5;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

/* ------------------------------------------------------------------ one run */

typedef struct seen {
    double status, rank, err, offset; /* what this rank was told */
    double t_fault;                   /* the reporting writer's failed call (0: none) */
    double t_open, t_close, t_complete;
} seen_t;

static _Atomic double g_t_complete;

static void on_complete(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    (void)status;
    (void)user;
    atomic_store(&g_t_complete, now());
}

/* One file through a fresh runtime with the case's fault. Returns 0, or -1
 * when the case cannot run here (every rank agrees). */
static int run_once(const fault_case_t *c, const opts_t *o, const char *victim_dir, seen_t *out,
                    char *text, size_t text_cap)
{
    char spec[512] = "";
    if (c->fault) {
        expand(c->fault, o->size, spec, sizeof spec);
        setenv("FWDIO_FAULT", spec, 1);
    }
    fwdio_runtime_t *rt = NULL;
    int rc = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
    unsetenv("FWDIO_FAULT");
    int all_ok = 0;
    MPI_Allreduce(&(int){rc == FWDIO_OK}, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rt)
            fwdio_finalize(rt);
        return -1;
    }

    struct rlimit saved;
    int limited = 0;
    if (c->real == REAL_EFBIG && g_rank == g_writers[g_nwriters - 1]) {
        uint64_t lo, hi;
        faulty_region(o->size, &lo, &hi);
        struct rlimit lim;
        signal(SIGXFSZ, SIG_IGN); /* fwdio leaves signal dispositions alone */
        getrlimit(RLIMIT_FSIZE, &saved);
        lim = saved;
        lim.rlim_cur = (rlim_t)(lo + 2 * FWDIO_DEFAULT_WRITE_SIZE + FWDIO_DEFAULT_WRITE_SIZE / 2);
        limited = setrlimit(RLIMIT_FSIZE, &lim) == 0;
    }

    char path[4300];
    snprintf(path, sizeof path, "%s/victim.dat", victim_dir);
    uint64_t lo = o->size * (uint64_t)g_rank / (uint64_t)g_size;
    uint64_t hi = o->size * (uint64_t)(g_rank + 1) / (uint64_t)g_size;
    uint8_t *buf = malloc(o->chunk);
    if (!buf) {
        fprintf(stderr, "rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fwdio_options_t fo = file_options(c);
    fwdio_callbacks_t cbs = {.complete = on_complete};
    atomic_store(&g_t_complete, 0.0);
    app_quiet_barrier(MPI_COMM_WORLD);
    out->t_open = now();
    fwdio_file_t *f = NULL;
    rc = fwdio_open(rt, path, o->size, &fo, &cbs, &f);
    if (rc != FWDIO_OK) {
        fprintf(stderr, "rank %d: fwdio_open: %s\n", g_rank, fwdio_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (c->commit && g_rank == 1 % g_size) {
        uint8_t block[COMMIT_LEN];
        pattern_fill(block, COMMIT_LEN, o->size - COMMIT_LEN, 1);
        fwdio_set_commit(f, block, COMMIT_LEN, o->size - COMMIT_LEN);
    }
    for (uint64_t off = lo; off < hi; off += o->chunk) {
        uint64_t len = hi - off < o->chunk ? hi - off : o->chunk;
        pattern_fill(buf, (size_t)len, off, 1);
        rc = fwdio_write(f, buf, (size_t)len, off);
        if (rc != FWDIO_OK && rc != FWDIO_EFAILED)
            fprintf(stderr, "rank %d: fwdio_write: %s\n", g_rank, fwdio_strerror(rc));
    }
    fwdio_close(f);
    out->t_close = now();
    fwdio_wait(f);
    out->t_complete = atomic_load(&g_t_complete);
    fwdio_error_info_t info;
    fwdio_file_error_info(f, &info);
    out->status = info.status;
    out->rank = info.rank;
    out->err = info.sys_errno;
    out->offset = (double)info.offset;
    if (g_rank == 0)
        snprintf(text, text_cap, "%s", fwdio_file_error(f));
    /* The writer that reported it says when its call failed. */
    fwdio_file_stats_t st;
    double t_fault = 0;
    if (fwdio_file_stats(f, &st) == FWDIO_OK && st.time_to_failure > 0)
        t_fault = out->t_open + st.time_to_failure;
    int from = info.status != FWDIO_OK && info.rank >= 0 ? info.rank : 0;
    MPI_Bcast(&t_fault, 1, MPI_DOUBLE, from, MPI_COMM_WORLD);
    out->t_fault = info.status != FWDIO_OK ? t_fault : 0.0;
    fwdio_file_free(f);
    fwdio_finalize(rt);
    if (limited)
        setrlimit(RLIMIT_FSIZE, &saved);
    free(buf);
    if (g_rank == 0)
        unlink(path);
    return 0;
}

/* ------------------------------------------------------------------ report */

static const char *status_name(int s)
{
#define NAME(name, value, text) \
    if (s == (value))           \
        return #name + 6;
    FWDIO_STATUS_LIST(NAME)
#undef NAME
    return "?";
}

static void print_row(const fault_case_t *c, const char *spec, seen_t *all, int reps)
{
    /* What the ranks saw, from the last rep. */
    const seen_t *last = &all[(size_t)(reps - 1) * (size_t)g_size];
    int same = 1;
    for (int r = 1; r < g_size; r++)
        same &= last[r].status == last[0].status && last[r].rank == last[0].rank &&
                last[r].err == last[0].err && last[r].offset == last[0].offset;
    char saw[256];
    if (last[0].status == FWDIO_OK)
        snprintf(saw, sizeof saw, "%s %d: OK", same ? "all" : "not all", g_size);
    else
        snprintf(saw, sizeof saw, "%s %d: rank %.0f, errno %.0f, offset %.0f",
                 same ? "all" : "NOT all", g_size, last[0].rank, last[0].err, last[0].offset);

    double *fault_at = calloc((size_t)reps, sizeof(double));
    double *to_close = calloc((size_t)reps, sizeof(double));
    double *to_complete = calloc((size_t)reps, sizeof(double));
    double *tail = calloc((size_t)reps, sizeof(double));
    int have_fault = 1;
    for (int k = 0; k < reps; k++) {
        const seen_t *s = &all[(size_t)k * (size_t)g_size];
        double open = s[0].t_open, close = 0, complete = 0;
        for (int r = 0; r < g_size; r++) {
            close = s[r].t_close > close ? s[r].t_close : close;
            complete = s[r].t_complete > complete ? s[r].t_complete : complete;
            open = s[r].t_open < open ? s[r].t_open : open;
        }
        double fault = s[0].t_fault;
        have_fault &= fault > 0;
        fault_at[k] = (fault > 0 ? fault - open : complete - open) * MS;
        to_close[k] = (close - fault) * MS;
        to_complete[k] = (complete - fault) * MS;
        tail[k] = (complete - close) * MS;
    }
    app_spread_t at = app_spread_of(fault_at, reps), cl = app_spread_of(to_close, reps),
                 co = app_spread_of(to_complete, reps), ta = app_spread_of(tail, reps);
    char spec_cell[600];
    snprintf(spec_cell, sizeof spec_cell, c->fault ? "`%s`" : "%s", spec);
    if (have_fault)
        printf("| %s | %s | %s | %s | %.1f | %.1f | %.1f (%.1f-%.1f) | %.1f |\n", c->what,
               spec_cell, status_name((int)last[0].status), saw, at.median, cl.median, co.median,
               co.min, co.max, ta.median);
    else
        printf("| %s | %s | %s | %s | - (complete at %.1f) | - | - | %.1f |\n", c->what,
               spec_cell, status_name((int)last[0].status), saw, at.median, ta.median);
    fflush(stdout);
    free(fault_at);
    free(to_close);
    free(to_complete);
    free(tail);
}

static int selected(const opts_t *o, const char *id)
{
    if (!o->only)
        return 1;
    size_t n = strlen(id);
    for (const char *p = o->only; (p = strstr(p, id)); p += n)
        if ((p == o->only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* fwdio_file_error of each case's last run (rank 0), printed under the table. */
static char g_texts[NCASES][512];

static void run_case(const fault_case_t *c, const opts_t *o, const char *run_dir)
{
    char victim_dir[4200], spec[512];
    snprintf(victim_dir, sizeof victim_dir, "%s", run_dir);
    if (c->fault)
        expand(c->fault, o->size, spec, sizeof spec);
    else
        snprintf(spec, sizeof spec, "%s", c->real == REAL_NONE ? "-" : "real");
    int mounted = c->real == REAL_ENOSPC || c->real == REAL_EROFS;
    if (mounted) {
        snprintf(victim_dir, sizeof victim_dir, "%s/%s", run_dir,
                 c->real == REAL_ENOSPC ? "tmpfs" : "read-only");
        int err = 0;
        if (g_rank == 0)
            err = c->real == REAL_ENOSPC ? scratch_mount_tmpfs(victim_dir, o->size / 4)
                                         : scratch_mount_read_only(victim_dir);
        MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (err) {
            if (g_rank == 0)
                printf("| %s | real | not run: mount: %s | | | | | |\n", c->what, strerror(err));
            return;
        }
    }
    seen_t *mine = calloc((size_t)o->reps, sizeof *mine);
    seen_t *all = g_rank == 0 ? calloc((size_t)o->reps * (size_t)g_size, sizeof *all) : NULL;
    int ran = 1;
    for (int k = 0; k < o->reps && ran; k++)
        ran = run_once(c, o, victim_dir, &mine[k], g_texts[c - cases], sizeof g_texts[0]) == 0;
    if (ran) {
        for (int k = 0; k < o->reps; k++)
            MPI_Gather(&mine[k], sizeof(seen_t) / sizeof(double), MPI_DOUBLE,
                       g_rank == 0 ? &all[(size_t)k * (size_t)g_size] : NULL,
                       sizeof(seen_t) / sizeof(double), MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (g_rank == 0)
            print_row(c, spec, all, o->reps);
    } else if (g_rank == 0) {
        printf("| %s | %s | not run: fwdio_init refused FWDIO_FAULT (built without fault "
               "injection?) | | | | | |\n",
               c->what, spec);
    }
    free(mine);
    free(all);
    if (mounted) {
        app_quiet_barrier(MPI_COMM_WORLD);
        if (g_rank == 0) {
            umount2(victim_dir, MNT_DETACH);
            rmdir(victim_dir);
            if (c->real == REAL_EROFS) {
                char src[4300];
                snprintf(src, sizeof src, "%s.src", victim_dir);
                rmdir(src);
            }
        }
    }
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fwdio-faults [--size BYTES] [--chunk BYTES] [--reps N] [--dir DIR]\n"
            "                    [--cases ID,ID,...]\n"
            "  --size BYTES   file size (default 256M), written by all ranks in equal shares\n"
            "  --chunk BYTES  bytes per fwdio_write call (default 1M)\n"
            "  --reps N       runs per case; times are medians (default 3)\n"
            "  --dir DIR      where the run directory is made (default $TMPDIR or /tmp)\n"
            "  --cases LIST   which cases, separated by commas (default all):");
    for (int i = 0; i < NCASES; i++)
        fprintf(out, " %s", cases[i].id);
    fprintf(out, "\n"
                 "  --help         this text\n"
                 CLI_SIZE_GRAMMAR);
}

/* Every id of the comma-separated list names a case. */
static int known_cases(const char *list)
{
    for (const char *p = list;; p++) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < NCASES && !found; i++)
            found = strlen(cases[i].id) == n && !strncmp(p, cases[i].id, n);
        if (!found)
            return 0;
        p += n;
        if (!*p)
            return 1;
    }
}

enum { OPT_SIZE = 256, OPT_CHUNK, OPT_REPS, OPT_DIR, OPT_CASES };

static const struct option options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"reps", required_argument, NULL, OPT_REPS},
    {"dir", required_argument, NULL, OPT_DIR},
    {"cases", required_argument, NULL, OPT_CASES},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    opts_t *o = ctx;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &o->size);
    case OPT_CHUNK: return cli_size(c, 1, UINT64_MAX, &o->chunk);
    case OPT_REPS: return cli_int(c, 1, 1 << 20, &o->reps);
    case OPT_DIR: o->dir = c->arg; return 0;
    case OPT_CASES:
        o->only = c->arg;
        return known_cases(c->arg) ? 0
                                   : cli_bad_value(c, "case ids (--help lists them) separated "
                                                      "by commas");
    default: return CLI_BAD;
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    opts_t o = {(uint64_t)256 << 20, (uint64_t)1 << 20, 3, NULL, NULL};
    cli_t c;
    cli_begin(&c, "fwdio-faults", argc, argv, options, g_rank != 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    g_writers[0] = 0;
    g_writers[1] = g_size - 1;
    g_nwriters = g_size > 1 ? 2 : 1;

    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    char run_dir[4096];
    if (app_make_run_dir(o.dir, "fwdio-faults", run_dir, sizeof run_dir) != 0) {
        MPI_Finalize();
        return 1;
    }
    if (g_rank == 0) {
        printf("fwdio-faults: %d ranks, writers %d and %d, fault on rank %d, %" PRIu64
               " MiB file, %" PRIu64 " KiB per fwdio_write, %d rep(s), in %s\n",
               g_size, g_writers[0], g_writers[g_nwriters - 1], g_writers[g_nwriters - 1],
               o.size >> 20, o.chunk >> 10, o.reps, run_dir);
        if (node_size != g_size)
            printf("warning: ranks on several nodes: times between ranks are not comparable\n");
        printf("\n| fault | FWDIO_FAULT | status | ranks saw | fault at (ms after open) | "
               "fault -> last close (ms) | fault -> complete, slowest rank (ms, min-max) | "
               "last close -> complete (ms) |\n");
        printf("| --- | --- | --- | --- | ---: | ---: | ---: | ---: |\n");
    }
    for (int i = 0; i < NCASES; i++)
        if (selected(&o, cases[i].id))
            run_case(&cases[i], &o, run_dir);
    if (g_rank == 0) {
        printf("\nfwdio_file_error, last run of each case:\n\n");
        for (int i = 0; i < NCASES; i++)
            if (g_texts[i][0])
                printf("- %s: `%s`\n", cases[i].id, g_texts[i]);
        rmdir(run_dir);
    }
    MPI_Finalize();
    return 0;
}
