/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-demo: one checkpoint written through fwdio while the ranks compute.
 *
 * Every rank fills its contiguous share of a file with a reproducible pattern,
 * hands it to fwdio a few MiB at a time (as a simulation writes its arrays),
 * closes, computes while the writers put the bytes in the file, and waits.
 * Then all ranks verify the file byte for byte, and rank 0 prints the plan,
 * how long each rank was blocked in fwdio calls beside a memcpy of the same
 * bytes, the end-to-end time and the bandwidth, then fwdio's own statistics of
 * the file (per rank and per writer) and of its memory budgets. Last, a
 * restart: every rank reads the share of the next rank back through fwdio's
 * collective reads (fwdio_open_read, fwdio_read), checks every byte, and
 * rank 0 prints how long the ranks were blocked and waited for their data,
 * and how many bytes the readers took from storage.
 *
 *   mpirun -np 8 fwdio-demo [--size BYTES] [--writers W] [--path FILE]
 *                           [--durable] [--keep] [--compute SECONDS]
 */
#define _POSIX_C_SOURCE 200809L

#include "fwdio.h"
#include "app_util.h"
#include "cli.h"
#include "pattern.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEMO_SEED 0x5EEDu
#define CHUNK_BYTES ((size_t)4 << 20)  /* one fwdio_write call, like one array */
#define MIB (1024.0 * 1024.0)
#define NO_BAD_OFFSET UINT64_MAX

struct demo_args {
    uint64_t size;
    int writers;        /* 0: fwdio's default */
    const char *path;   /* NULL: a file in a fresh temporary directory */
    int durable;
    int keep;
    double compute_s;
};

/* The bytes [offset, offset + len) of the file that one rank writes and checks. */
/* The restart's read of this rank (read_back). */
struct read_back {
    int status;     /* 1 until its callback ran */
    double data_at; /* when it did */
};

struct share {
    uint64_t offset;
    uint64_t len;
};

/* What each rank measures; gathered to rank 0 for the report. */
struct rank_times {
    double blocked;     /* inside fwdio_open + fwdio_write + fwdio_close */
    double memcpy_ref;  /* one memcpy of the rank's bytes */
    double compute;     /* the compute phase, overlapped with output */
    double end_to_end;  /* first fwdio call to fwdio_wait returning */
    double complete_at; /* first fwdio call to the complete callback */
};

/* Written by the callbacks, which run on this thread inside fwdio_poll/wait. */
struct callback_log {
    int rank;
    double t0;
    double ready_at;
    double complete_at;
    int ready_status;
    int complete_status;
};

static int rank_of_world(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: fwdio-demo [--size BYTES] [--writers W] [--path FILE] [--durable] [--keep]\n"
            "                  [--compute SECONDS]\n"
            "  --size BYTES       checkpoint size (default 256M)\n"
            "  --writers W        writer ranks (default 2; 0 = fwdio's default)\n"
            "  --path FILE        file to write (default: a fresh temp dir under $TMPDIR or\n"
            "                     /tmp); a file given here is kept\n"
            "  --durable          fdatasync before the file counts as complete\n"
            "  --keep             keep the file\n"
            "  --compute SECONDS  computation overlapped with output (default 0.1)\n"
            "  --help             this text\n"
            CLI_SIZE_GRAMMAR);
}

enum { OPT_SIZE = 256, OPT_WRITERS, OPT_PATH, OPT_DURABLE, OPT_KEEP, OPT_COMPUTE };

static const struct option demo_options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"path", required_argument, NULL, OPT_PATH},
    {"durable", no_argument, NULL, OPT_DURABLE},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct demo_args *args = ctx;
    switch (key) {
    case OPT_DURABLE: args->durable = 1; return 0;
    case OPT_KEEP: args->keep = 1; return 0;
    case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &args->size);
    case OPT_WRITERS: return cli_int(c, 0, INT_MAX, &args->writers);
    case OPT_PATH: args->path = c->arg; return 0;
    case OPT_COMPUTE: return cli_double(c, 0, 1e9, &args->compute_s);
    default: return CLI_BAD;
    }
}

/* Rank 0 makes a fresh directory and every rank receives the file name in it.
 * Returns 0 on success; *dir is empty when the user gave the path. */
static int choose_path(const struct demo_args *args, char *path, size_t path_cap, char *dir,
                       size_t dir_cap)
{
    dir[0] = '\0';
    if (args->path) {
        if (strlen(args->path) >= path_cap)
            return -1;
        strcpy(path, args->path);
        return 0;
    }
    if (app_make_run_dir(NULL, "fwdio-demo", dir, dir_cap) != 0)
        return -1;
    snprintf(path, path_cap, "%s/checkpoint.dat", dir);
    return 0;
}

/* Rank r writes [r * (S/P), (r+1) * (S/P)); the last rank also takes the remainder. */
static struct share share_of_rank(uint64_t size, int rank, int nranks)
{
    uint64_t base = size / (uint64_t)nranks;
    struct share s = {.offset = base * (uint64_t)rank, .len = base};
    if (rank == nranks - 1)
        s.len = size - s.offset;
    return s;
}

static double time_memcpy_reference(const void *src, size_t len)
{
    char *dst = malloc(len ? len : 1);
    if (!dst)
        return -1.0;
    memset(dst, 1, len); /* touch every page first: we time the copy, not page faults */
    double t = MPI_Wtime();
    memcpy(dst, src, len);
    t = MPI_Wtime() - t;
    /* Read a byte back so the copy cannot be optimised away. */
    volatile char sink = len ? dst[len / 2] : 0;
    (void)sink;
    free(dst);
    return t;
}

static void on_ready(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    struct callback_log *log = user;
    log->ready_at = MPI_Wtime() - log->t0;
    log->ready_status = status;
    if (log->rank == 0)
        printf("[rank 0] ready callback: status %d (%s) at %.3f s\n", status,
               fwdio_strerror(status), log->ready_at);
}

static void on_complete(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    struct callback_log *log = user;
    log->complete_at = MPI_Wtime() - log->t0;
    log->complete_status = status;
    if (log->rank == 0)
        printf("[rank 0] complete callback: status %d (%s) at %.3f s\n", status,
               fwdio_strerror(status), log->complete_at);
}

/* Rank 0 prints which ranks write and how the file is cut. */
static void print_plan(const fwdio_file_t *file, const fwdio_options_t *opts, uint64_t size,
                       int nranks)
{
    int count = fwdio_file_writers(file, NULL, 0);
    if (count < 0) {
        printf("plan: fwdio_file_writers failed: %s\n", fwdio_strerror(count));
        return;
    }
    int *ranks = malloc(sizeof *ranks * (size_t)(count ? count : 1));
    if (!ranks)
        return;
    count = fwdio_file_writers(file, ranks, count);
    printf("plan: %" PRIu64 " bytes (%.1f MiB) from %d ranks; %d writer%s: ranks", size,
           (double)size / MIB, nranks, count, count == 1 ? "" : "s");
    for (int i = 0; i < count; i++)
        printf(" %d", ranks[i]);
    printf("; layout %s, write_size ", opts->layout == FWDIO_LAYOUT_CYCLIC ? "cyclic" : "block");
    if (opts->write_size)
        printf("%.1f MiB", (double)opts->write_size / MIB);
    else
        printf("default");
    printf(", %s\n", opts->durable ? "durable (fdatasync)" : "page cache");
    free(ranks);
}

/*
 * Open, write in chunks and close, timing only the calls. Returns FWDIO_OK or
 * the first error a call returned; *file is set when the open succeeded.
 */
static int write_checkpoint(fwdio_runtime_t *rt, const char *path, uint64_t size,
                            const fwdio_options_t *opts, const fwdio_callbacks_t *cbs,
                            const unsigned char *data, struct share share, fwdio_file_t **file,
                            double *blocked)
{
    double t = MPI_Wtime();
    int rc = fwdio_open(rt, path, size, opts, cbs, file);
    *blocked = MPI_Wtime() - t;
    if (rc != FWDIO_OK) {
        *file = NULL;
        return rc;
    }
    int first_error = FWDIO_OK;
    for (uint64_t done = 0; done < share.len && first_error == FWDIO_OK;) {
        size_t len = share.len - done < CHUNK_BYTES ? (size_t)(share.len - done) : CHUNK_BYTES;
        t = MPI_Wtime();
        rc = fwdio_write(*file, data + done, len, share.offset + done);
        *blocked += MPI_Wtime() - t;
        if (rc != FWDIO_OK)
            first_error = rc;
        done += len;
    }
    /* Close even after a failed write, so that the file (and every rank) can finish. */
    t = MPI_Wtime();
    rc = fwdio_close(*file);
    *blocked += MPI_Wtime() - t;
    return first_error != FWDIO_OK ? first_error : rc;
}

/* Every rank checks its share; returns the first bad offset of the file, or NO_BAD_OFFSET. */
static uint64_t verify_file(const char *path, uint64_t size, struct share share)
{
    uint64_t bad = NO_BAD_OFFSET;
    if (share.len && !pattern_check_file(path, size, share.offset, share.len, DEMO_SEED, 0, &bad))
        bad = NO_BAD_OFFSET;
    uint64_t first_bad;
    MPI_Allreduce(&bad, &first_bad, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    return first_bad;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One line per rank, or min/median/max when there are too many ranks to list. */
static void print_rank_table(const struct rank_times *all, int nranks)
{
    enum { MAX_LISTED = 16 };
    if (nranks <= MAX_LISTED) {
        printf("  rank  blocked ms  memcpy ms  blocked/memcpy  compute ms\n");
        for (int r = 0; r < nranks; r++)
            printf("  %4d  %10.2f  %9.2f  %14.2f  %10.1f\n", r, all[r].blocked * 1e3,
                   all[r].memcpy_ref * 1e3,
                   all[r].memcpy_ref > 0 ? all[r].blocked / all[r].memcpy_ref : 0.0,
                   all[r].compute * 1e3);
        return;
    }
    double *v = malloc(sizeof *v * (size_t)nranks);
    if (!v)
        return;
    for (int r = 0; r < nranks; r++)
        v[r] = all[r].blocked;
    qsort(v, (size_t)nranks, sizeof *v, compare_doubles);
    printf("  blocked ms over %d ranks: min %.2f  median %.2f  max %.2f\n", nranks, v[0] * 1e3,
           v[nranks / 2] * 1e3, v[nranks - 1] * 1e3);
    free(v);
}

static void print_report(const struct rank_times *all, int nranks, uint64_t size,
                         double compute_planned, uint64_t first_bad)
{
    double blocked_max = 0, memcpy_max = 0, e2e_max = 0, complete_max = 0, compute_max = 0;
    for (int r = 0; r < nranks; r++) {
        blocked_max = all[r].blocked > blocked_max ? all[r].blocked : blocked_max;
        memcpy_max = all[r].memcpy_ref > memcpy_max ? all[r].memcpy_ref : memcpy_max;
        e2e_max = all[r].end_to_end > e2e_max ? all[r].end_to_end : e2e_max;
        complete_max = all[r].complete_at > complete_max ? all[r].complete_at : complete_max;
        compute_max = all[r].compute > compute_max ? all[r].compute : compute_max;
    }
    printf("time blocked in fwdio_open + fwdio_write + fwdio_close, per rank:\n");
    print_rank_table(all, nranks);
    printf("blocked (max over ranks):   %8.2f ms   memcpy reference (max): %.2f ms   ratio %.1f\n",
           blocked_max * 1e3, memcpy_max * 1e3, memcpy_max > 0 ? blocked_max / memcpy_max : 0.0);
    printf("compute overlapped:         %8.2f ms   (max wall time for %.0f ms of CPU per rank)\n",
           compute_max * 1e3, compute_planned * 1e3);
    printf("complete callback (max):    %8.2f ms   %.1f MiB/s\n", complete_max * 1e3,
           complete_max > 0 ? (double)size / MIB / complete_max : 0.0);
    printf("end-to-end (max, to wait):  %8.2f ms   %.1f MiB/s\n", e2e_max * 1e3,
           e2e_max > 0 ? (double)size / MIB / e2e_max : 0.0);
    if (first_bad == NO_BAD_OFFSET)
        printf("verified: OK\n");
    else
        printf("verified: FAILED, first bad offset %" PRIu64 "\n", first_bad);
}

/* What fwdio counted on one rank, gathered to rank 0 after the file completed. */
struct rank_stats {
    fwdio_file_stats_t file;
    fwdio_runtime_stats_t runtime;
};

/* The file's writers and the bytes each was planned to receive (the same on every rank). */
struct writer_plan {
    int count;
    int *ranks;
    uint64_t *bytes;
};

/* Fills *plan from the file on this rank; count stays 0 when it cannot. */
static void collect_writer_plan(const fwdio_file_t *file, struct writer_plan *plan)
{
    *plan = (struct writer_plan){0};
    int count = file ? fwdio_file_writers(file, NULL, 0) : 0;
    if (count <= 0)
        return;
    plan->ranks = malloc(sizeof *plan->ranks * (size_t)count);
    plan->bytes = malloc(sizeof *plan->bytes * (size_t)count);
    if (plan->ranks && plan->bytes && fwdio_file_writers(file, plan->ranks, count) == count &&
        fwdio_file_writer_bytes(file, plan->bytes, count) == count)
        plan->count = count;
}

static void free_writer_plan(struct writer_plan *plan)
{
    free(plan->ranks);
    free(plan->bytes);
    *plan = (struct writer_plan){0};
}

/* Sender side of every rank: one line each, or totals when there are too many. */
static void print_sender_stats(const struct rank_stats *all, int nranks)
{
    enum { MAX_LISTED = 16 };
    printf("fwdio_file_stats per rank (times from fwdio_open):\n");
    if (nranks > MAX_LISTED) {
        uint64_t bytes = 0, calls = 0, msgs = 0;
        double ready = 0, complete = 0;
        for (int r = 0; r < nranks; r++) {
            bytes += all[r].file.bytes_written;
            calls += all[r].file.write_calls;
            msgs += all[r].file.messages_sent;
            ready = all[r].file.time_to_ready > ready ? all[r].file.time_to_ready : ready;
            complete = all[r].file.time_to_complete > complete ? all[r].file.time_to_complete
                                                               : complete;
        }
        printf("  %d ranks: %.1f MiB in %" PRIu64 " write calls, %" PRIu64
               " messages; ready (max) %.2f ms, complete (max) %.2f ms\n",
               nranks, (double)bytes / MIB, calls, msgs, ready * 1e3, complete * 1e3);
        return;
    }
    printf("  rank  written MiB  calls  msgs sent  ready ms  complete ms\n");
    for (int r = 0; r < nranks; r++) {
        const fwdio_file_stats_t *f = &all[r].file;
        printf("  %4d  %11.1f  %5" PRIu64 "  %9" PRIu64 "  %8.2f  %11.2f\n", r,
               (double)f->bytes_written / MIB, f->write_calls, f->messages_sent,
               f->time_to_ready * 1e3, f->time_to_complete * 1e3);
    }
}

/* Writer side: one line per writer rank, with the bytes planned for it. */
static void print_writer_stats(const struct rank_stats *all, int nranks,
                               const struct writer_plan *plan)
{
    printf("writers (fwdio_file_writer_bytes planned, fwdio_file_stats as seen by the writer):\n");
    printf("  rank  planned MiB  received MiB  msgs rcvd  pwrites  pwrite ms  sync ms  "
           "partial flushes  peak MiB\n");
    for (int w = 0; w < plan->count; w++) {
        int r = plan->ranks[w];
        if (r < 0 || r >= nranks)
            continue;
        const fwdio_file_stats_t *f = &all[r].file;
        printf("  %4d  %11.1f  %12.1f  %9" PRIu64 "  %7" PRIu64 "  %9.2f  %7.2f  %15" PRIu64
               "  %8.1f\n",
               r, (double)plan->bytes[w] / MIB, (double)f->writer_bytes / MIB,
               f->messages_received, f->pwrite_calls, f->pwrite_time * 1e3, f->sync_time * 1e3,
               f->partial_flushes, (double)f->peak_writer_bytes / MIB);
    }
}

/* Budgets and the largest peaks over all ranks, with the rank that reached them. */
static void print_memory_stats(const struct rank_stats *all, int nranks)
{
    int wr = 0, sr = 0;
    for (int r = 1; r < nranks; r++) {
        wr = all[r].runtime.writer_peak > all[wr].runtime.writer_peak ? r : wr;
        sr = all[r].runtime.staging_peak > all[sr].runtime.staging_peak ? r : sr;
    }
    printf("memory (fwdio_runtime_stats): writer budget %.1f MiB, peak %.1f MiB (rank %d); "
           "staging budget %.1f MiB, peak %.1f MiB (rank %d)\n",
           (double)all[wr].runtime.writer_budget / MIB,
           (double)all[wr].runtime.writer_peak / MIB, wr,
           (double)all[sr].runtime.staging_budget / MIB,
           (double)all[sr].runtime.staging_peak / MIB, sr);
}

/* Gathers every rank's statistics to rank 0, which prints them. Collective. */
static void report_stats(const struct rank_stats *mine, const struct writer_plan *plan,
                         int rank, int nranks)
{
    struct rank_stats *all = rank == 0 ? malloc(sizeof *all * (size_t)nranks) : NULL;
    MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    if (rank == 0 && all) {
        print_sender_stats(all, nranks);
        if (plan->count)
            print_writer_stats(all, nranks, plan);
        print_memory_stats(all, nranks);
    }
    free(all);
}

static void remove_output(const char *path, const char *dir)
{
    if (unlink(path) != 0 && errno != ENOENT)
        fprintf(stderr, "fwdio-demo: cannot remove %s: %s\n", path, strerror(errno));
    if (dir[0] && rmdir(dir) != 0)
        fprintf(stderr, "fwdio-demo: cannot remove %s: %s\n", dir, strerror(errno));
}

static void on_read_done(fwdio_file_t *file, void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    struct read_back *r = arg;
    r->status = status;
    r->data_at = MPI_Wtime();
}

/*
 * The restart: every rank reads the share of the rank after it (a restart
 * that puts the data elsewhere) back through fwdio and checks every byte.
 * Returns 0 when every rank read its share right, else 1.
 */
static int read_back(fwdio_runtime_t *rt, const struct demo_args *args, const char *path)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct share share = share_of_rank(args->size, (rank + 1) % nranks, nranks);
    unsigned char *buf = malloc(share.len ? (size_t)share.len : 1);
    unsigned char *want = malloc(share.len ? (size_t)share.len : 1);
    struct read_back r = {.status = 1};
    int fail = !buf || !want;
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = args->writers; /* the plan it was written with: here its readers */
    fwdio_file_t *file = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = fail ? FWDIO_ENOMEM : fwdio_open_read(rt, path, &opts, NULL, &file);
    if (rc == FWDIO_OK)
        rc = fwdio_read(file, buf, (size_t)share.len, share.offset, on_read_done, &r);
    if (file)
        fwdio_close(file);
    double blocked = MPI_Wtime() - t0; /* the calls above return at once */
    int status = file ? fwdio_wait(file) : rc;
    if (rc == FWDIO_OK && status == FWDIO_OK)
        status = r.status;
    double data = (status == FWDIO_OK ? r.data_at : MPI_Wtime()) - t0;
    fwdio_file_stats_t st = {0};
    if (file)
        fwdio_file_stats(file, &st);
    if (status != FWDIO_OK && rank == 0)
        fprintf(stderr, "[rank %d] restart read failed: %s\n", rank,
                file ? fwdio_file_error(file) : fwdio_strerror(rc));
    if (file)
        fwdio_file_free(file);
    if (status == FWDIO_OK) {
        pattern_fill(want, (size_t)share.len, share.offset, DEMO_SEED);
        fail = memcmp(want, buf, (size_t)share.len) != 0;
        if (fail)
            fprintf(stderr, "[rank %d] restart read: wrong bytes in %" PRIu64 " at %" PRIu64 "\n",
                    rank, share.len, share.offset);
    }
    fail = fail || status != FWDIO_OK;
    double max_blocked, max_data;
    uint64_t from_storage, any_fail = (uint64_t)fail, failed_ranks;
    MPI_Reduce(&blocked, &max_blocked, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&data, &max_data, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&st.bytes_from_storage, &from_storage, 1, MPI_UINT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    MPI_Allreduce(&any_fail, &failed_ranks, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("restart: every rank read the next rank's share back through fwdio: %s; blocked "
               "%.2f ms at most, all data in after %.1f ms; readers took %.1f MiB from storage "
               "for a %.1f MiB file\n",
               failed_ranks ? "FAILED" : "every byte right", max_blocked * 1e3, max_data * 1e3,
               (double)from_storage / (1 << 20), (double)args->size / (1 << 20));
    free(buf);
    free(want);
    return failed_ranks != 0;
}

/*
 * The checkpoint itself, run by every rank once fwdio is up. Returns 0 when the
 * file completed with FWDIO_OK and verified on every rank, else 1.
 */
static int run_checkpoint(fwdio_runtime_t *rt, const struct demo_args *args, const char *path)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct share share = share_of_rank(args->size, rank, nranks);

    unsigned char *data = malloc(share.len ? (size_t)share.len : 1);
    int local_fail = data == NULL;
    if (data)
        pattern_fill(data, (size_t)share.len, share.offset, DEMO_SEED);
    struct rank_times mine = {0};
    MPI_Barrier(MPI_COMM_WORLD); /* every rank copies at once, as every rank writes at once */
    mine.memcpy_ref = data ? time_memcpy_reference(data, (size_t)share.len) : -1.0;
    long slice_iters = app_calibrate_slice();

    int any_fail;
    MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_fail) {
        if (rank == 0)
            fprintf(stderr, "fwdio-demo: out of memory for the checkpoint data\n");
        free(data);
        return 1;
    }

    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = args->writers;
    opts.durable = args->durable;
    struct callback_log log = {.rank = rank, .ready_status = 1, .complete_status = 1};
    fwdio_callbacks_t cbs = {.ready = on_ready, .complete = on_complete, .user = &log};
    fwdio_file_t *file = NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    log.t0 = MPI_Wtime();
    int rc = write_checkpoint(rt, path, args->size, &opts, &cbs, data, share, &file,
                              &mine.blocked);
    if (rc != FWDIO_OK)
        fprintf(stderr, "[rank %d] fwdio call failed: %s\n", rank, fwdio_strerror(rc));
    if (file && rank == 0)
        print_plan(file, &opts, args->size, nranks);
    mine.compute = app_compute(rt, slice_iters, args->compute_s);
    int status = file ? fwdio_wait(file) : rc;
    mine.end_to_end = MPI_Wtime() - log.t0;
    mine.complete_at = log.complete_at;
    /* A file's failure is agreed on by every rank: one report is enough. */
    if (status != FWDIO_OK && (rank == 0 || !file))
        fprintf(stderr, "[rank %d] file failed: %s\n", rank,
                file ? fwdio_file_error(file) : fwdio_strerror(status));
    local_fail = rc != FWDIO_OK || status != FWDIO_OK;
    struct rank_stats stats = {0};
    struct writer_plan plan;
    collect_writer_plan(file, &plan);
    if (file)
        fwdio_file_stats(file, &stats.file);
    fwdio_runtime_stats(rt, &stats.runtime);
    if (file)
        fwdio_file_free(file);
    free(data);

    MPI_Barrier(MPI_COMM_WORLD); /* every rank is done before anyone reads the file back */
    uint64_t first_bad = verify_file(path, args->size, share);

    struct rank_times *all = rank == 0 ? malloc(sizeof *all * (size_t)nranks) : NULL;
    MPI_Gather(&mine, (int)(sizeof mine), MPI_BYTE, all, (int)(sizeof mine), MPI_BYTE, 0,
               MPI_COMM_WORLD);
    if (rank == 0 && all)
        print_report(all, nranks, args->size, args->compute_s, first_bad);
    free(all);
    report_stats(&stats, &plan, rank, nranks);
    free_writer_plan(&plan);

    MPI_Allreduce(&local_fail, &any_fail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any_fail || first_bad != NO_BAD_OFFSET;
}

/* Returns 0 when fwdio started on every rank, -1 when it failed on every rank. */
static int start_fwdio(fwdio_runtime_t **rt)
{
    int rc = fwdio_init(MPI_COMM_WORLD, NULL, rt);
    if (rc != FWDIO_OK)
        fprintf(stderr, "[rank %d] fwdio_init: %s\n", rank_of_world(), fwdio_strerror(rc));
    int failed = rc != FWDIO_OK, nfailed, nranks;
    MPI_Allreduce(&failed, &nfailed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* The ranks that did start could only leave through a collective finalize
     * that the failed ones would never join. */
    if (nfailed > 0 && nfailed < nranks)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return nfailed ? -1 : 0;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = rank_of_world();

    struct demo_args args = {.size = (uint64_t)256 << 20, .writers = 2, .compute_s = 0.1};
    cli_t c;
    cli_begin(&c, "fwdio-demo", argc, argv, demo_options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &args, print_usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    char path[PATH_MAX], dir[PATH_MAX];
    if (choose_path(&args, path, sizeof path, dir, sizeof dir) != 0) {
        if (rank == 0)
            fprintf(stderr, "fwdio-demo: no usable output path\n");
        MPI_Finalize();
        return 1;
    }

    fwdio_runtime_t *rt = NULL;
    if (start_fwdio(&rt) != 0) {
        MPI_Finalize();
        return 1;
    }
    int failed = run_checkpoint(rt, &args, path);
    if (!failed)
        failed = read_back(rt, &args, path);
    fwdio_finalize(rt);

    if (rank == 0) {
        /* A file the user named is theirs: it is never removed. */
        if (!args.keep && !args.path)
            remove_output(path, dir);
        else if (access(path, F_OK) == 0)
            printf("file kept: %s\n", path);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
