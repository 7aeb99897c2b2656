/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lammps-fwdio-bin2txt-mpi: lammps-fwdio-bin2txt on any number of MPI ranks.
 * The binary dump is read back through fwdio's collective reads and the text
 * dump written through a fwdio stream; the text is byte for byte the serial
 * converter's, whatever the rank count.
 *
 *   mpirun -np P lammps-fwdio-bin2txt-mpi [--precision P] [--writers W] BINARY TEXT
 *
 * How. Every rank reads the first header (fwdio reads the unit once for all
 * of them): it gives the atom count N, so every snapshot's place in the file
 * (they all have 88 + 32 N bytes) and the text format. Each snapshot is one
 * step of the text stream (fwdio_step_end): its atoms are cut into blocks of
 * consecutive ids, block r for rank r; rank 0 appends the snapshot's header,
 * every rank the lines of its block (fwdio_append), and the step places the
 * appends in rank order, so the text comes out in id order with no lengths
 * exchanged. A snapshot whose share per rank would not fit a step's room in
 * the staging budget takes several steps, "slabs", each with a block per
 * rank. The reads run ahead of the formatting: a rank keeps up to
 * READ_AHEAD_BYTES of its next blocks (in reads of at most CHUNK_RECORDS
 * records) in flight while it formats the oldest, and rank 0 reads each
 * snapshot's header the same way. --writers W sets the number of fwdio's
 * readers of the binary dump and writers of the text.
 *
 * Errors are the serial converter's (convert.c), and the one reported is the
 * one the serial converter would meet first: every problem a rank finds is
 * keyed by its offset in the file, the ranks agree on the lowest, and the
 * rank that found it prints it, once. A rank that finds one stops reading
 * and formatting; the ranks learn of it through a nonblocking reduction per
 * step, used AGREE_LAG steps later, so they all stop after the same step
 * and end the same number of steps. Every rank exits with the same status:
 * 0, 1 (a message on stderr) or 2 (usage). After a failure TEXT holds the
 * text up to where the ranks stopped.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "convert.h"
#include "dump_binary.h"
#include "dump_text.h"
#include "fwdio.h"

#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PROG "lammps-fwdio-bin2txt-mpi"

enum {
    CHUNK_RECORDS = 32768, /* records per read at most: 1 MiB */
    MAX_READS = 256,       /* reads in flight per rank at most */
    AGREE_LAG = 2,         /* steps from starting an error reduction to using it */
    HELD_STEPS = 1024      /* ended steps with appends, not yet known complete, at most */
};
/* Bytes of reads a rank keeps in flight (it may pass this by one read). */
#define READ_AHEAD_BYTES ((uint64_t)16 << 20)

/* Problems that are not in the data, keyed below every file offset so that
 * they win over the data's, the first of them first. A file that failed
 * (fwdio's agreed status, the same on every rank) comes before what a rank
 * saw of it: the data a failed read left is not to be trusted. */
enum {
    KEY_ARGS = -7,        /* BINARY and TEXT are one file */
    KEY_INPUT_FILE = -6,  /* the binary dump's fwdio file failed (open, pread) */
    KEY_OUTPUT_FILE = -5, /* the text dump's fwdio file failed (open, pwrite, ...) */
    KEY_INPUT = -4,       /* fwdio refused to open or read the binary dump */
    KEY_OUTPUT = -3,      /* fwdio refused to open the text dump */
    KEY_APPEND = -2,      /* a fwdio_append or fwdio_step_end refused */
    KEY_NONE = LONG_MAX
};

/* One read: a snapshot's header (first_id 0) or the records of atoms
 * first_id .. first_id + count - 1. */
typedef struct task {
    uint64_t step;
    int64_t snapshot;
    int64_t first_id;
    int64_t count;
    uint64_t offset;
    size_t len;
    unsigned char *buf;
    atomic_int done; /* set (release) by read_done once buf is filled or failed */
    int status;
} task_t;

/* Where this rank's next read comes from: step `step`, its header still to
 * read or not, and its block's ids [next, end). */
typedef struct cursor {
    uint64_t step;
    int header;
    int64_t next, end;
} cursor_t;

typedef struct conv {
    int rank, nranks;
    MPI_Comm comm; /* our own agreements */
    fwdio_runtime_t *rt;
    fwdio_file_t *in, *out;
    const char *in_path, *out_path;
    int precision, writers;

    uint64_t size;           /* bytes of the binary dump */
    lfw_bin_header_t first;  /* its first header */
    lfw_text_format_t fmt;
    uint64_t snap_size;      /* bytes of one snapshot */
    int64_t whole;           /* whole snapshots */
    int64_t snapshots;       /* snapshots with a header: whole, and one cut short */
    int64_t cut_atoms;       /* whole records of the snapshot cut short */
    uint64_t slabs;          /* steps per snapshot */
    uint64_t steps;          /* steps of the stream: snapshots * slabs */

    task_t ring[MAX_READS];  /* reads in flight, oldest at head */
    unsigned head, n;
    uint64_t inflight;       /* their bytes */
    cursor_t cursor;

    char *text;              /* formatted lines of one read */
    size_t text_cap;

    /* The appends a rank holds wait in its staging memory until their step's
     * place in the file is known, and fwdio refuses those that would take
     * past half the budget: a rank that runs steps ahead of the others waits
     * for its oldest steps to complete first. */
    uint64_t append_limit;        /* half the staging budget */
    uint64_t held;                /* bytes of the steps below */
    uint64_t step_bytes;          /* appended in the current step */
    uint64_t held_step[HELD_STEPS], held_len[HELD_STEPS];
    unsigned held_head, held_n;

    int failed;              /* this rank found a problem: it reads and formats no more */
    long key;                /* the lowest problem's key (KEY_NONE: none) */
    char why[LFW_CONV_WHY_MAX + 512];

    atomic_int out_ready;    /* the stream's ready callback ran */
    int out_status;

    uint64_t reads, most_inflight, bytes_read;
} conv_t;

static void problem(conv_t *c, long key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(conv_t *c, long key, const char *fmt, ...)
{
    c->failed = 1;
    if (key >= c->key)
        return;
    c->key = key;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

/* Sleep a little, longer each time nothing happens (up to 1 ms): with more
 * ranks than cores a spinning rank takes the CPU from the ones working. */
static void nap(unsigned *us)
{
    struct timespec ts = {0, (long)*us * 1000};
    nanosleep(&ts, NULL);
    if (*us < 1000)
        *us *= 2;
}

/* Complete an MPI request quietly, running fwdio's callbacks meanwhile. */
static void quiet_wait(conv_t *c, MPI_Request *req)
{
    unsigned us = 10;
    for (;;) {
        int flag = 0;
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return;
        if (fwdio_poll(c->rt) <= 0)
            nap(&us);
    }
}

/* Collective: the ranks agree on the lowest problem; with `print`, the rank
 * that found it prints it. Returns 1 (on every rank) when some rank had one. */
static int agree(conv_t *c, int print)
{
    struct {
        long key;
        int rank;
    } mine = {c->key, c->rank}, low;
    MPI_Request req;
    MPI_Iallreduce(&mine, &low, 1, MPI_LONG_INT, MPI_MINLOC, c->comm, &req);
    quiet_wait(c, &req);
    if (low.key == KEY_NONE)
        return 0;
    if (print && low.rank == c->rank) {
        fprintf(stderr, PROG ": %s\n", c->why);
        fflush(stderr);
    }
    return 1;
}

/* fwdio's account of a file's failure as " (...)", or "" while it has not
 * failed, into buf[0 .. cap). */
static const char *failure_of(const fwdio_file_t *f, char *buf, size_t cap)
{
    fwdio_error_info_t info;
    memset(&info, 0, sizeof info);
    buf[0] = '\0';
    if (fwdio_file_error_info(f, &info) == FWDIO_OK && info.status != FWDIO_OK)
        snprintf(buf, cap, " (%s)", fwdio_file_error(f));
    return buf;
}

static void read_done(fwdio_file_t *file, void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    task_t *t = arg;
    t->status = status;
    atomic_store_explicit(&t->done, 1, memory_order_release);
}

static void out_ready(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    conv_t *c = user;
    c->out_status = status;
    atomic_store_explicit(&c->out_ready, 1, memory_order_release);
}

/* Wait for `flag`, running fwdio's callbacks (they set it). */
static void wait_flag(conv_t *c, atomic_int *flag)
{
    unsigned us = 10;
    while (!atomic_load_explicit(flag, memory_order_acquire))
        if (fwdio_poll(c->rt) <= 0)
            nap(&us);
}

/* Start a read into a fresh buffer; on a refusal the task is marked done
 * with the refusal's status. */
static void start_read(conv_t *c, task_t *t)
{
    atomic_store_explicit(&t->done, 0, memory_order_relaxed);
    t->status = FWDIO_OK;
    t->buf = malloc(t->len);
    int rc = t->buf ? fwdio_read(c->in, t->buf, t->len, t->offset, read_done, t) : FWDIO_ENOMEM;
    if (rc != FWDIO_OK) {
        t->status = rc;
        atomic_store_explicit(&t->done, 1, memory_order_release);
    }
    c->reads++;
    c->bytes_read += t->len;
}

/* Load the cursor with step u->step: block b = slab * nranks + rank of its
 * snapshot, the ids N b / B + 1 .. N (b + 1) / B of the B blocks, as far as
 * the snapshot's records are whole; rank 0 reads the header of slab 0. */
static void cursor_load(const conv_t *c, cursor_t *u)
{
    if (u->step >= c->steps)
        return;
    uint64_t k = u->step / c->slabs, slab = u->step % c->slabs;
    uint64_t blocks = c->slabs * (uint64_t)c->nranks;
    uint64_t b = slab * (uint64_t)c->nranks + (uint64_t)c->rank;
    uint64_t n = (uint64_t)c->first.natoms;
    int64_t lo = (int64_t)(n * b / blocks) + 1, hi = (int64_t)(n * (b + 1) / blocks) + 1;
    int64_t avail = (int64_t)k < c->whole ? c->first.natoms : c->cut_atoms;
    if (hi > avail + 1)
        hi = avail + 1;
    if (lo > hi)
        lo = hi;
    u->header = c->rank == 0 && slab == 0;
    u->next = lo;
    u->end = hi;
}

/* The next read of this rank in step order into *t; 0 when there is none. */
static int cursor_next(const conv_t *c, cursor_t *u, task_t *t)
{
    while (u->step < c->steps) {
        int64_t k = (int64_t)(u->step / c->slabs);
        uint64_t base = (uint64_t)k * c->snap_size;
        t->step = u->step;
        t->snapshot = k;
        if (u->header) {
            u->header = 0;
            t->first_id = 0;
            t->count = 0;
            t->offset = base;
            t->len = LFW_BIN_HEADER_SIZE;
            return 1;
        }
        if (u->next < u->end) {
            int64_t count = u->end - u->next < CHUNK_RECORDS ? u->end - u->next : CHUNK_RECORDS;
            t->first_id = u->next;
            t->count = count;
            t->offset = base + LFW_BIN_HEADER_SIZE + (uint64_t)(u->next - 1) * LFW_BIN_RECORD_SIZE;
            t->len = (size_t)count * LFW_BIN_RECORD_SIZE;
            u->next += count;
            return 1;
        }
        u->step++;
        cursor_load(c, u);
    }
    return 0;
}

/* Keep the reads of the next blocks in flight, up to the read-ahead. */
static void issue(conv_t *c)
{
    while (!c->failed && c->n < MAX_READS && c->inflight < READ_AHEAD_BYTES) {
        task_t *t = &c->ring[(c->head + c->n) % MAX_READS];
        if (!cursor_next(c, &c->cursor, t))
            return;
        start_read(c, t);
        c->n++;
        c->inflight += t->len;
        if (c->n > c->most_inflight)
            c->most_inflight = c->n;
    }
}

/* Forget the oldest ended step once it is complete (wait: until it is);
 * 1 when it was. A step that failed fails the stream: this rank stops (the
 * stream's error is reported at the end). */
static int retire_step(conv_t *c, int wait)
{
    unsigned us = 10;
    int done = 0;
    for (;;) {
        int st = fwdio_step_test(c->out, c->held_step[c->held_head], &done);
        if (done || st != FWDIO_OK) {
            if (st != FWDIO_OK)
                c->failed = 1;
            break;
        }
        if (!wait)
            return 0;
        nap(&us);
    }
    c->held -= c->held_len[c->held_head];
    c->held_head = (c->held_head + 1) % HELD_STEPS;
    c->held_n--;
    return 1;
}

static void append(conv_t *c, const char *text, size_t len)
{
    while (c->held_n > 0 && c->held + c->step_bytes + len > c->append_limit)
        retire_step(c, 1);
    int rc = fwdio_append(c->out, text, len);
    if (rc == FWDIO_EFAILED) /* the stream failed: reported at the end */
        c->failed = 1;
    else if (rc != FWDIO_OK)
        problem(c, KEY_APPEND, "%s: fwdio_append of %zu bytes: %s", c->out_path, len,
                fwdio_strerror(rc));
    else
        c->step_bytes += len;
}

/* End this rank's step s of the stream. */
static void end_step(conv_t *c, uint64_t s)
{
    int rc = fwdio_step_end(c->out);
    if (rc == FWDIO_EFAILED) /* the stream failed: reported at the end */
        c->failed = 1;
    else if (rc != FWDIO_OK)
        problem(c, KEY_APPEND, "%s: fwdio_step_end: %s", c->out_path, fwdio_strerror(rc));
    if (c->step_bytes > 0) {
        if (c->held_n == HELD_STEPS)
            retire_step(c, 1);
        unsigned i = (c->held_head + c->held_n) % HELD_STEPS;
        c->held_step[i] = s;
        c->held_len[i] = c->step_bytes;
        c->held_n++;
        c->held += c->step_bytes;
        c->step_bytes = 0;
    }
    while (c->held_n > 0 && retire_step(c, 0))
        ;
}

/* Check and format one read that has ended, and append its text. */
static void convert(conv_t *c, task_t *t)
{
    char why[LFW_CONV_WHY_MAX];
    if (c->failed)
        return;
    if (t->status != FWDIO_OK) {
        char detail[LFW_CONV_WHY_MAX];
        problem(c, (long)t->offset, "%s: reading %zu bytes at offset %" PRIu64 ": %s%s",
                c->in_path, t->len, t->offset, fwdio_strerror(t->status),
                failure_of(c->in, detail, sizeof detail));
        return;
    }
    if (t->first_id == 0) {
        lfw_bin_header_t h;
        char header[LFW_TEXT_HEADER_MAX];
        if (lfw_conv_header(t->buf, t->snapshot, &c->first, &h, why, sizeof why)) {
            problem(c, (long)t->offset, "%s", why);
            return;
        }
        append(c, header, lfw_text_header(header, sizeof header, h.step, h.natoms, &h.box));
        return;
    }
    size_t L = c->fmt.line_len, need = (size_t)t->count * L + 1;
    if (need > c->text_cap) {
        char *p = realloc(c->text, need);
        if (!p) {
            problem(c, (long)t->offset, "out of memory for %zu bytes of text", need);
            return;
        }
        c->text = p;
        c->text_cap = need;
    }
    for (int64_t i = 0; i < t->count; i++)
        if (lfw_conv_record(&c->fmt, t->buf + (size_t)i * LFW_BIN_RECORD_SIZE, t->first_id + i,
                            t->snapshot, c->text + (size_t)i * L, why, sizeof why)) {
            problem(c, (long)(t->offset + (uint64_t)i * LFW_BIN_RECORD_SIZE), "%s", why);
            return;
        }
    append(c, c->text, (size_t)t->count * L);
}

/* Wait for the oldest read, convert it and let it go. */
static void take_oldest(conv_t *c)
{
    task_t *t = &c->ring[c->head];
    wait_flag(c, &t->done);
    convert(c, t);
    free(t->buf);
    t->buf = NULL;
    c->inflight -= t->len;
    c->head = (c->head + 1) % MAX_READS;
    c->n--;
}

/* The stream: one step per block of every snapshot, in order. */
static void run(conv_t *c)
{
    MPI_Request req[AGREE_LAG];
    int pending[AGREE_LAG] = {0}, mine[AGREE_LAG], any[AGREE_LAG];
    cursor_load(c, &c->cursor);
    for (uint64_t s = 0; s < c->steps; s++) {
        int slot = (int)(s % AGREE_LAG);
        if (pending[slot]) {
            quiet_wait(c, &req[slot]);
            pending[slot] = 0;
            if (any[slot])
                break; /* every rank stops before the same step */
        }
        issue(c);
        while (c->n > 0 && c->ring[c->head].step == s) {
            take_oldest(c);
            issue(c);
        }
        end_step(c, s);
        mine[slot] = c->failed;
        MPI_Iallreduce(&mine[slot], &any[slot], 1, MPI_INT, MPI_MAX, c->comm, &req[slot]);
        pending[slot] = 1;
    }
    for (int i = 0; i < AGREE_LAG; i++)
        if (pending[i])
            quiet_wait(c, &req[i]);
}

/* Open the binary dump, take its size and first header; 0, or 1 on every
 * rank with the problem printed. */
static int open_input(conv_t *c)
{
    if (c->rank == 0) {
        struct stat a, b;
        if (!strcmp(c->in_path, c->out_path) ||
            (!stat(c->in_path, &a) && !stat(c->out_path, &b) && a.st_dev == b.st_dev &&
             a.st_ino == b.st_ino))
            problem(c, KEY_ARGS, "%s and %s are the same file", c->in_path, c->out_path);
    }
    if (agree(c, 0))
        return 1;

    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = c->writers;
    int rc = fwdio_open_read(c->rt, c->in_path, &opts, NULL, &c->in);
    if (rc != FWDIO_OK) {
        c->in = NULL;
        problem(c, KEY_INPUT, "%s: fwdio_open_read: %s", c->in_path, fwdio_strerror(rc));
    } else {
        unsigned us = 10;
        while ((rc = fwdio_file_size(c->in, &c->size)) == FWDIO_EAGAIN)
            if (fwdio_poll(c->rt) <= 0)
                nap(&us);
        if (rc != FWDIO_OK)
            problem(c, KEY_INPUT_FILE, "cannot read the binary dump: %s",
                    fwdio_file_error(c->in));
    }
    if (agree(c, 0))
        return 1;

    char why[LFW_CONV_WHY_MAX];
    if (c->size < LFW_BIN_HEADER_SIZE) {
        lfw_conv_stray(c->size, 0, why, sizeof why);
        problem(c, 0, "%s", why);
        return agree(c, 0);
    }
    task_t t = {.first_id = 0, .offset = 0, .len = LFW_BIN_HEADER_SIZE};
    start_read(c, &t);
    wait_flag(c, &t.done);
    if (t.status != FWDIO_OK)
        problem(c, KEY_INPUT, "%s: reading the first header: %s%s", c->in_path,
                fwdio_strerror(t.status), failure_of(c->in, why, sizeof why));
    else if (lfw_conv_header(t.buf, 0, NULL, &c->first, why, sizeof why) ||
             lfw_conv_format(&c->fmt, &c->first, c->precision, why, sizeof why))
        problem(c, 0, "%s", why);
    free(t.buf);
    return agree(c, 0);
}

/* Where the snapshots are, and how many steps each takes. */
static void plan(conv_t *c)
{
    c->snap_size = lfw_conv_snapshot_size(c->first.natoms);
    c->whole = (int64_t)(c->size / c->snap_size);
    uint64_t rest = c->size % c->snap_size;
    c->snapshots = c->whole + (rest >= LFW_BIN_HEADER_SIZE);
    c->cut_atoms = rest >= LFW_BIN_HEADER_SIZE
                       ? (int64_t)((rest - LFW_BIN_HEADER_SIZE) / LFW_BIN_RECORD_SIZE)
                       : 0;
    /* A step's appends may take half the staging budget: give a rank's block
     * at most a quarter (so the next step's appends find room while the last
     * one's are sent), header included. */
    fwdio_runtime_stats_t rs;
    memset(&rs, 0, sizeof rs);
    fwdio_runtime_stats(c->rt, &rs);
    c->append_limit = rs.staging_budget / 2;
    uint64_t room = rs.staging_budget / 4, per_rank = 1;
    if (room > LFW_TEXT_HEADER_MAX + c->fmt.line_len)
        per_rank = (room - LFW_TEXT_HEADER_MAX) / c->fmt.line_len;
    uint64_t per_slab = per_rank * (uint64_t)c->nranks, n = (uint64_t)c->first.natoms;
    c->slabs = (n + per_slab - 1) / per_slab;
    c->steps = (uint64_t)c->snapshots * c->slabs;
}

static int open_output(conv_t *c)
{
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = c->writers;
    fwdio_callbacks_t cbs;
    memset(&cbs, 0, sizeof cbs);
    cbs.ready = out_ready;
    cbs.user = c;
    int rc = fwdio_open(c->rt, c->out_path, FWDIO_SIZE_GROWS, &opts, &cbs, &c->out);
    if (rc != FWDIO_OK) {
        c->out = NULL;
        problem(c, KEY_OUTPUT, "%s: fwdio_open: %s", c->out_path, fwdio_strerror(rc));
    } else {
        wait_flag(c, &c->out_ready);
        if (c->out_status != FWDIO_OK)
            problem(c, KEY_OUTPUT_FILE, "cannot write the text dump: %s",
                    fwdio_file_error(c->out));
    }
    return agree(c, 0);
}

/* Close both files, wait for them and free what the reads still held. */
static void close_files(conv_t *c, int *st_in, int *st_out)
{
    *st_in = *st_out = FWDIO_OK;
    if (c->in)
        fwdio_close(c->in);
    if (c->out)
        fwdio_close(c->out);
    if (c->in)
        *st_in = fwdio_wait(c->in);
    for (; c->n > 0; c->n--, c->head = (c->head + 1) % MAX_READS) { /* stopped early */
        free(c->ring[c->head].buf);
        c->ring[c->head].buf = NULL;
    }
    if (c->out)
        *st_out = fwdio_wait(c->out);
}

static void summary(conv_t *c, double seconds)
{
    fwdio_file_stats_t st;
    memset(&st, 0, sizeof st);
    fwdio_file_stats(c->in, &st);
    unsigned long long mine[3] = {c->reads, c->bytes_read, st.bytes_from_storage}, sum[3];
    unsigned long long most = c->most_inflight, most_all = 0;
    MPI_Reduce(mine, sum, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, c->comm);
    MPI_Reduce(&most, &most_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, c->comm);
    if (c->rank != 0)
        return;
    fprintf(stderr, PROG ": %" PRId64 " snapshots of %" PRId64 " atoms, \"%s\"\n", c->snapshots,
            c->first.natoms, c->fmt.line);
    fprintf(stderr,
            PROG ": %d rank%s, %" PRIu64 " steps (%" PRIu64 " per snapshot), %llu reads of "
                 "%llu bytes in all (at most %llu in flight on a rank), %llu bytes pread by "
                 "the readers, %.3f s\n",
            c->nranks, c->nranks == 1 ? "" : "s", c->steps, c->slabs, sum[0], sum[1], most_all,
            sum[2], seconds);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpirun -np P " PROG " [--precision P] [--writers W] BINARY TEXT\n"
            "lammps-fwdio-bin2txt on any number of ranks: the binary dump is read through\n"
            "fwdio's collective reads, the text written through a fwdio stream.\n"
            "  --precision P  decimals of the coordinates, %d..%d, as the run's (6)\n"
            "  --writers W    fwdio's readers of BINARY and writers of TEXT (0: fwdio's\n"
            "                 default)\n"
            "  --help         this text\n"
            "Exit status: 0, 1 (a damaged dump or an I/O error, with a message), 2 (usage).\n",
            LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX);
}

enum { OPT_PRECISION = 256, OPT_WRITERS };

static const struct option options[] = {
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"writers", required_argument, NULL, OPT_WRITERS},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *cl, int key, void *ctx)
{
    conv_t *c = ctx;
    switch (key) {
    case OPT_PRECISION:
        return cli_int(cl, LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX, &c->precision);
    case OPT_WRITERS: return cli_int(cl, 0, INT_MAX, &c->writers);
    default: return CLI_BAD;
    }
}

/* The command line; 0 to run, 1 after --help (printed by rank 0), CLI_BAD
 * (the message printed by rank 0). */
static int parse(conv_t *c, int argc, char **argv)
{
    c->precision = 6;
    cli_t cl;
    cli_begin(&cl, PROG, argc, argv, options, c->rank != 0);
    int parsed = cli_parse(&cl, parse_option, c, usage, 1);
    if (parsed != 0)
        return parsed;
    int i = cli_operand_index(&cl);
    if (argc - i != 2)
        return cli_error(&cl, "takes two arguments, BINARY and TEXT (%d given)", argc - i);
    c->in_path = argv[i];
    c->out_path = argv[i + 1];
    return 0;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    static conv_t conv;
    conv_t *c = &conv;
    c->key = KEY_NONE;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->nranks);
    int rc = parse(c, argc, argv);
    if (rc != 0) {
        MPI_Finalize();
        return cli_status(rc);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    double t0 = MPI_Wtime();
    int frc = fwdio_init(MPI_COMM_WORLD, NULL, &c->rt);
    if (frc != FWDIO_OK) {
        if (c->rank == 0)
            fprintf(stderr, PROG ": fwdio_init: %s\n", fwdio_strerror(frc));
        MPI_Comm_free(&c->comm);
        MPI_Finalize();
        return 1;
    }

    /* Each phase ends with the ranks agreeing whether to go on; the problem
     * is printed at the end, once the files' own statuses are known. */
    int stopped = open_input(c);
    if (!stopped) {
        plan(c);
        stopped = open_output(c);
    }
    if (!stopped) {
        run(c);
        /* A file that ends inside a snapshot: rank 0 says so, unless a rank
         * found a problem before that point. */
        uint64_t rest = c->size % c->snap_size;
        if (c->rank == 0 && rest != 0) {
            char why[LFW_CONV_WHY_MAX];
            uint64_t at = (uint64_t)c->whole * c->snap_size;
            if (rest < LFW_BIN_HEADER_SIZE) {
                lfw_conv_stray(rest, c->whole, why, sizeof why);
            } else {
                lfw_conv_truncated(c->whole, c->cut_atoms + 1, why, sizeof why);
                at += LFW_BIN_HEADER_SIZE + (uint64_t)c->cut_atoms * LFW_BIN_RECORD_SIZE;
            }
            problem(c, (long)at, "%s", why);
        }
    }
    int st_in, st_out;
    close_files(c, &st_in, &st_out);
    if (st_in != FWDIO_OK)
        problem(c, KEY_INPUT_FILE, "cannot read the binary dump: %s", fwdio_file_error(c->in));
    if (st_out != FWDIO_OK)
        problem(c, KEY_OUTPUT_FILE, "cannot write the text dump: %s", fwdio_file_error(c->out));
    rc = agree(c, 1);
    if (rc == 0)
        summary(c, MPI_Wtime() - t0);
    if (c->in)
        fwdio_file_free(c->in);
    if (c->out)
        fwdio_file_free(c->out);
    free(c->text);
    fwdio_finalize(c->rt);
    MPI_Comm_free(&c->comm);
    MPI_Finalize();
    return rc;
}
