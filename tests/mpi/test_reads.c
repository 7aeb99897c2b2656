/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective, nonblocking reads: fwdio_open_read, fwdio_read, fwdio_file_size.
 *
 * Every read lands in a buffer the test filled with the complement of the
 * bytes it expects, between guard bytes, so a byte fwdio never delivered
 * cannot pass; after the file completes, every byte of every buffer is
 * compared with the file's model: pattern_byte(seed, offset) in the written
 * extents, zeros in the holes. A wrong byte is reported with the read, the
 * offset, what came, what was expected and what the file on disk holds there.
 * `--case NAME` picks one:
 *
 *   random       --rounds rounds, each: (a) a file written by fwdio (random
 *                writer count or writer list, layout block/cyclic/targets,
 *                4..64 KiB write units, stripes of 1..4 units, holes) and
 *                (b) a file written by plain pwrite on rank 0 (holes, a hole
 *                at the end made by ftruncate, a size that is no multiple of
 *                the unit); each is read with options drawn independently of
 *                the write's (the writers become readers): every rank issues
 *                --reads random reads (0 bytes with and without a buffer, tiny
 *                unaligned ones, ones across many stripes, ones ending exactly
 *                at the end of the file, the whole file, ones overlapping this
 *                rank's and other ranks' reads, reads without a callback),
 *                some right after fwdio_open_read, some from the ready
 *                callback, some from a second application thread, some from
 *                the done callback of an earlier read, the rest after ready.
 *                fwdio_wait is FWDIO_OK on every rank; every done ran once,
 *                on the thread the callback mode says, before complete, with
 *                its file, buffer and argument; fwdio_file_size is the size on
 *                disk; the stats count the reads, and the readers pread at
 *                least every byte some rank asked for. The seed is printed.
 *   ranks        a file written by a runtime on a sub-communicator (fewer
 *                ranks) is read by a runtime on every rank, and a file
 *                written on every rank is read by a runtime on a
 *                sub-communicator (the odd ranks).
 *   after_write  fwdio_open (write) over an old file of another size and
 *                content, writes with holes, fwdio_close without waiting, and
 *                at once fwdio_open_read of the same path: the reads see the
 *                new bytes (zeros in the holes) and size, and the read is
 *                ready only after the write completed. Then the other way
 *                round: a write of the path opened as soon as its read is
 *                closed leaves the read the bytes from before the write.
 *   multi        three files read at once (one of them a second time, opened
 *                once the first read of it is closed) beside a write of a
 *                fourth; opened, closed and waited for in different orders.
 *   still_open   fwdio_open_read of a path whose write is not closed on this
 *                rank: the read fails with FWDIO_EINVAL on every rank (as a
 *                second fwdio_open would, "One path, one file at a time"),
 *                the write completes whole.
 *   range        reads past the end: refused with FWDIO_ERANGE after ready
 *                (done not called), ended with FWDIO_ERANGE in done when
 *                issued before (the file stays FWDIO_OK); offsets and lengths
 *                whose sum overflows; an empty file.
 *   open_fail    a missing file and a directory: FWDIO_EOPEN on every rank
 *                (ready, wait, complete, the done of reads issued before
 *                ready, fwdio_file_size), errno ENOENT / EISDIR, the text
 *                naming the path; FWDIO_EFAILED for reads after ready; the
 *                runtime's next file reads fine.
 *   fault        with FWDIO_FAULT set (by ctest): --expect STATUS [--errno N]
 *                [--fault-rank R]. Readers are ranks 0 and P-1. The file ends
 *                with STATUS on every rank; for an error, fwdio_file_error
 *                names pread, the path, the rank and the errno, the error info
 *                is the same everywhere, some read of the failed unit ended
 *                with FWDIO_EREAD, every other read ended FWDIO_OK (right
 *                bytes) or FWDIO_EREAD; the next file reads fine.
 *   contract     ranks that disagree (one rank's stripe_size, one rank's
 *                writer count), and one rank opening the path with fwdio_open
 *                while the others read it: FWDIO_EINVAL on every rank, early
 *                reads end with it, later ones are FWDIO_EFAILED, the file on
 *                disk untouched; the runtime's next file reads fine.
 *   misuse       calls that cannot work are refused at the call (NULL
 *                arguments, fwdio_read on a file opened for writing or a
 *                stream, fwdio_write on a read file, fwdio_read after
 *                fwdio_close, fwdio_file_size before ready or on a stream,
 *                fwdio_wait from a read's callback), and done is then not
 *                called; a read from a read's callback works.
 *   budgets      a writer_buffer of 4 write units (--writer-buffer B to change
 *                it; random takes it too): large overlapping reads of
 *                every rank complete right, and no reader holds more than the
 *                budget and one unit (fwdio_runtime_stats.writer_peak); with
 *                the default budget, every rank reading the whole file at
 *                once makes the readers pread it between once and twice.
 *
 * Common options: --seed S, --timeout SEC, --callback-mode poll|progress.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

enum { GUARD = 16 };
#define GUARD_BYTE 0x5A
/* call_rc of a read that was never issued (its parent failed, or ready did). */
#define RC_NOT_CALLED 1000
/* Most wrong reads reported per file (the count of the rest is given). */
#define MAX_REPORTS 12

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "FAIL [rank %d]: out of memory (%zu bytes)\n", tc_rank, n);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t sum_u64(MPI_Comm comm, uint64_t v)
{
    uint64_t s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, comm);
    return s;
}

static uint64_t max_u64(MPI_Comm comm, uint64_t v)
{
    uint64_t s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_MAX, comm);
    return s;
}

static int status_named(const char *s)
{
#define X_NAMED(name, value, text)                                                         \
    if (!strcmp(s, #name) || !strcmp(s, #name + 6))                                       \
        return value;
    FWDIO_STATUS_LIST(X_NAMED)
#undef X_NAMED
    fprintf(stderr, "unknown status name '%s'\n", s);
    exit(2);
}

/* ---- ranks that run a runtime together ---------------------------------- */

typedef struct group {
    MPI_Comm comm;
    int rank, size;
    fwdio_runtime_t *rt;
} group_t;

static void group_set(group_t *g, MPI_Comm comm, fwdio_runtime_t *rt)
{
    g->comm = comm;
    MPI_Comm_rank(comm, &g->rank);
    MPI_Comm_size(comm, &g->size);
    g->rt = rt;
}

/* ---- the file's model: extents written with the pattern, or holes -------- */

typedef struct model {
    char path[4096];
    uint64_t size, seed;
    tc_extent_t *ext; /* sorted, tiling [0, size); owner -1: a hole */
    size_t n, cap;
} model_t;

static void model_push(model_t *m, uint64_t off, uint64_t len, int owner)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        tc_extent_t *grown = realloc(m->ext, m->cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "FAIL [rank %d]: out of memory for extents\n", tc_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        m->ext = grown;
    }
    m->ext[m->n++] = (tc_extent_t){off, len, owner};
}

/* [0, size - tail_hole) cut into extents of 1..max_len bytes owned by one of
 * `nranks` ranks or (1 in hole_one_in) holes, then a hole of tail_hole bytes.
 * Drawn from `r` only: ranks that seed it alike get the same model. */
static void model_plan(model_t *m, const char *name, tc_rng_t *r, uint64_t size, uint64_t seed,
                       uint64_t max_len, int nranks, unsigned hole_one_in, uint64_t tail_hole)
{
    memset(m, 0, sizeof *m);
    tc_path(m->path, sizeof m->path, name);
    m->size = size;
    m->seed = seed;
    if (tail_hole > size)
        tail_hole = size;
    uint64_t end = size - tail_hole;
    for (uint64_t off = 0; off < end;) {
        uint64_t len = 1 + tc_rng_below(r, max_len);
        if (len > end - off)
            len = end - off;
        int owner = (int)tc_rng_below(r, (uint64_t)nranks);
        if (hole_one_in && tc_rng_below(r, hole_one_in) == 0)
            owner = -1;
        model_push(m, off, len, owner);
        off += len;
    }
    if (tail_hole)
        model_push(m, end, tail_hole, -1);
}

static void model_free(model_t *m)
{
    free(m->ext);
    m->ext = NULL;
    m->n = m->cap = 0;
}

/* The bytes [off, off + len) of the model into out (zeros past its end). */
static void expected_fill(const model_t *m, uint64_t off, size_t len, uint8_t *out)
{
    size_t i = 0;
    if (m->n) {
        size_t lo = 0, hi = m->n;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->ext[mid].offset <= off)
                lo = mid;
            else
                hi = mid;
        }
        i = lo;
    }
    while (len > 0) {
        if (off >= m->size || i >= m->n) {
            memset(out, 0, len);
            return;
        }
        const tc_extent_t *e = &m->ext[i];
        uint64_t end = e->offset + e->len;
        if (off >= end) {
            i++;
            continue;
        }
        size_t k = (size_t)min_u64(end - off, len);
        if (e->owner < 0)
            memset(out, 0, k);
        else
            pattern_fill(out, k, off, m->seed);
        out += k;
        off += k;
        len -= k;
    }
}

static int in_hole(const model_t *m, uint64_t off)
{
    for (size_t i = 0; i < m->n; i++)
        if (off >= m->ext[i].offset && off < m->ext[i].offset + m->ext[i].len)
            return m->ext[i].owner < 0;
    return 1; /* past the end */
}

static uint64_t model_holes(const model_t *m)
{
    uint64_t h = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->ext[i].owner < 0)
            h += m->ext[i].len;
    return h;
}

/* Rank 0 of comm writes the model with plain pwrite, last extent first (the
 * holes between are never written), then ftruncate makes the hole at the end. */
static void write_plain(MPI_Comm comm, const model_t *m)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        tc_phase("pwrite %s", m->path);
        int fd = open(m->path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) {
            tc_fail("cannot create %s: %s", m->path, strerror(errno));
        } else {
            for (size_t k = m->n; k-- > 0;) {
                const tc_extent_t *e = &m->ext[k];
                if (e->owner < 0)
                    continue;
                uint8_t *buf = xmalloc(e->len);
                pattern_fill(buf, e->len, e->offset, m->seed);
                for (uint64_t done = 0; done < e->len;) {
                    ssize_t w = pwrite(fd, buf + done, e->len - done, (off_t)(e->offset + done));
                    if (w <= 0) {
                        tc_fail("pwrite %s: %s", m->path, strerror(errno));
                        break;
                    }
                    done += (uint64_t)w;
                }
                free(buf);
            }
            if (ftruncate(fd, (off_t)m->size) != 0)
                tc_fail("ftruncate %s: %s", m->path, strerror(errno));
            close(fd);
        }
    }
    MPI_Barrier(comm);
}

/* The file on disk is the model (collective over comm). */
static int disk_matches(MPI_Comm comm, const model_t *m)
{
    tc_extent_t *ext = xmalloc(m->n * sizeof *ext);
    for (size_t i = 0; i < m->n; i++) {
        ext[i] = m->ext[i];
        if (ext[i].owner >= 0)
            ext[i].owner = 0;
    }
    int bad = tc_verify_extents(comm, m->path, m->size, m->seed, ext, m->n);
    free(ext);
    return bad == 0;
}

static int64_t stat_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* ---- options ------------------------------------------------------------ */

typedef struct opts {
    fwdio_options_t o;
    int list[64];
} opts_t;

static void opts_copy(opts_t *dst, const opts_t *src)
{
    *dst = *src;
    if (src->o.writer_list == src->list)
        dst->o.writer_list = dst->list;
}

static void opts_fixed(opts_t *p, uint64_t write_size, uint64_t stripe, int writers,
                       fwdio_layout_t layout)
{
    memset(p, 0, sizeof *p);
    fwdio_options_init(&p->o);
    p->o.write_size = write_size;
    p->o.stripe_size = stripe;
    p->o.writers = writers;
    p->o.layout = layout;
}

/* Options drawn from `r` (the same on ranks that seed it alike): 4..64 KiB
 * units, stripes of 1..4 units, any layout, a writer count, the default, or
 * a list of writer ranks. */
static void opts_random(opts_t *p, tc_rng_t *r, int nranks)
{
    static const uint64_t units[] = {4096, 8192, 16384, 32768, 65536};
    memset(p, 0, sizeof *p);
    fwdio_options_init(&p->o);
    p->o.write_size = units[tc_rng_below(r, 5)];
    p->o.stripe_size = p->o.write_size * (1 + tc_rng_below(r, 4));
    p->o.layout = (fwdio_layout_t)tc_rng_below(r, 3);
    if (p->o.layout == FWDIO_LAYOUT_TARGETS)
        p->o.targets = 1 + (int)tc_rng_below(r, (uint64_t)nranks + 2);
    switch (tc_rng_below(r, 4)) {
    case 0: { /* a list of distinct ranks, in a random order */
        int all[64];
        int n = nranks < 64 ? nranks : 64;
        for (int i = 0; i < n; i++)
            all[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)tc_rng_below(r, (uint64_t)i + 1), t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        int k = 1 + (int)tc_rng_below(r, (uint64_t)n);
        memcpy(p->list, all, (size_t)k * sizeof *all);
        p->o.writer_list = p->list;
        p->o.writer_list_len = k;
        break;
    }
    case 1:
        p->o.writers = 0; /* the default count */
        break;
    default:
        p->o.writers = 1 + (int)tc_rng_below(r, (uint64_t)nranks);
    }
}

static const char *describe(const opts_t *p, char *out, size_t n)
{
    static const char *const layouts[] = {"block", "cyclic", "targets"};
    const fwdio_options_t *o = &p->o;
    int k = snprintf(out, n, "write_size %" PRIu64 ", stripe %" PRIu64 ", %s", o->write_size,
                     o->stripe_size, layouts[o->layout % 3]);
    if (o->layout == FWDIO_LAYOUT_TARGETS && k > 0 && (size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, " (%d targets)", o->targets);
    if (o->writer_list_len > 0) {
        if (k > 0 && (size_t)k < n)
            k += snprintf(out + k, n - (size_t)k, ", writer list");
        for (int i = 0; i < o->writer_list_len && k > 0 && (size_t)k < n; i++)
            k += snprintf(out + k, n - (size_t)k, "%s%d", i ? "," : " ", o->writer_list[i]);
    } else if (k > 0 && (size_t)k < n) {
        snprintf(out + k, n - (size_t)k, ", writers %d%s", o->writers,
                 o->writers ? "" : " (default)");
    }
    return out;
}

/* ---- writing with fwdio ------------------------------------------------- */

/* Open `m->path` for writing, write this rank's extents, close; not waited for. */
static fwdio_file_t *write_fwdio_start(group_t *g, const model_t *m, const opts_t *p,
                                       tc_rng_t *mine, tc_cbstate_t *cb)
{
    tc_cb_init(cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(cb);
    fwdio_file_t *f = NULL;
    tc_phase("fwdio_open %s for writing", m->path);
    int rc = fwdio_open(g->rt, m->path, m->size, &p->o, &cbs, &f);
    TC_EXPECT(rc, FWDIO_OK, "fwdio_open (write)");
    if (rc != FWDIO_OK || !f) {
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    tc_phase("fwdio_write %s", m->path);
    for (size_t i = 0; i < m->n; i++) {
        if (m->ext[i].owner != g->rank)
            continue;
        size_t piece = tc_rng_below(mine, 3) == 0 ? 0 : 1 + (size_t)tc_rng_below(mine, 20000);
        int w = tc_write_pattern(f, m->ext[i].offset, m->ext[i].len, m->seed, piece);
        TC_EXPECT(w, FWDIO_OK, "fwdio_write");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (write)");
    return f;
}

static void write_fwdio_end(group_t *g, fwdio_file_t *f, tc_cbstate_t *cb, const char *what)
{
    tc_phase("fwdio_wait %s", what);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, what);
    tc_cb_check(g->comm, cb, what, FWDIO_OK, FWDIO_OK, g_mode, f);
    fwdio_file_free(f);
}

static void write_fwdio(group_t *g, const model_t *m, const opts_t *p, tc_rng_t *mine)
{
    tc_cbstate_t cb;
    fwdio_file_t *f = write_fwdio_start(g, m, p, mine, &cb);
    write_fwdio_end(g, f, &cb, "the write");
}

/* ---- reading: the engine ------------------------------------------------- */

/* When a read is issued. */
enum {
    W_EARLY,    /* right after fwdio_open_read */
    W_READY_CB, /* from the ready callback */
    W_THREAD,   /* from a second application thread, from the open on */
    W_CHILD,    /* from the done callback of another read */
    W_LATER     /* after ready, on the main thread */
};
static const char *const when_names[] = {"before ready", "from the ready callback",
                                         "from a second thread", "from a read's callback",
                                         "after ready"};

typedef struct reader reader_t;

typedef struct rd {
    reader_t *rs;
    uint64_t off;
    size_t len;
    uint8_t *base; /* GUARD + len + GUARD bytes; NULL: buf is NULL (a 0-byte read) */
    uint8_t *buf;
    int when;
    int parent;  /* W_CHILD: the read whose done issues this one */
    int child;   /* the read this one's done issues, or -1 */
    int no_cb;   /* issued with done NULL */
    int expect;  /* the status done must give ... */
    int alt;     /* ... or this one (an OK read must hold the right bytes) */
    int rc_alt;  /* fwdio_read may return this instead of FWDIO_OK (done then not called) */
    int call_rc; /* what fwdio_read returned, or RC_NOT_CALLED */
    atomic_int done_count;
    atomic_int status;
    atomic_int bad_cb; /* 1 wrong file, 2 wrong buffer, 4 wrong thread, 8 after complete */
} rd_t;

struct reader {
    group_t *g;
    const model_t *m;
    char what[160];
    opts_t ro;
    _Atomic(fwdio_file_t *) f;
    rd_t *r;
    int n;
    atomic_int issued;             /* reads issued, or given up */
    atomic_int ended;              /* done callbacks run */
    atomic_int *must_be_complete;  /* ready must come after this count reached 1 */
    atomic_int order_bad;
    int want_ready, want_complete; /* statuses the file must give */
    pthread_t main;
    pthread_t thread;
    int has_thread;
    tc_cbstate_t cb;
};

static void read_done(fwdio_file_t *f, void *buf, int status, void *arg);

/* The done of reads that must be refused at the call. */
static atomic_int g_never;
static void never_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    (void)f;
    (void)buf;
    (void)arg;
    atomic_fetch_add(&g_never, 1);
    tc_fail("a done callback ran for a read that was refused (status %d, %s)", status,
            fwdio_strerror(status));
}


static void give_up(reader_t *rs, rd_t *r)
{
    r->call_rc = RC_NOT_CALLED;
    atomic_fetch_add(&rs->issued, 1);
    if (r->child >= 0)
        give_up(rs, &rs->r[r->child]);
}

static void issue(reader_t *rs, fwdio_file_t *f, rd_t *r)
{
    if (r->base) {
        /* the complement of what must come: a byte never written cannot pass */
        memset(r->base, GUARD_BYTE, GUARD);
        memset(r->buf + r->len, GUARD_BYTE, GUARD);
        expected_fill(rs->m, r->off, r->len, r->buf);
        for (size_t i = 0; i < r->len; i++)
            r->buf[i] ^= 0xFF;
    }
    int rc = fwdio_read(f, r->buf, r->len, r->off, r->no_cb ? NULL : read_done, r);
    r->call_rc = rc;
    atomic_fetch_add(&rs->issued, 1);
    if (rc != FWDIO_OK && r->child >= 0)
        give_up(rs, &rs->r[r->child]); /* its done will not run */
}

static void read_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    rd_t *r = arg;
    reader_t *rs = r->rs;
    int bad = 0;
    if (f != atomic_load(&rs->f))
        bad |= 1;
    if (buf != (void *)r->buf)
        bad |= 2;
    int on_main = pthread_equal(pthread_self(), rs->main) != 0;
    if (g_mode == FWDIO_CALLBACKS_ON_POLL ? !on_main : on_main)
        bad |= 4;
    if (atomic_load(&rs->cb.complete_count) != 0 || atomic_load(&rs->cb.complete_seq) != 0)
        bad |= 8;
    atomic_fetch_or(&r->bad_cb, bad);
    atomic_store(&r->status, status);
    if (r->child >= 0)
        issue(rs, f, &rs->r[r->child]);
    atomic_fetch_add(&r->done_count, 1);
    atomic_fetch_add(&rs->ended, 1);
}

static void set_file(reader_t *rs, fwdio_file_t *f)
{
    fwdio_file_t *none = NULL;
    atomic_compare_exchange_strong(&rs->f, &none, f);
}

static void on_ready_issue(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    reader_t *rs = st->user;
    set_file(rs, f);
    if (rs->must_be_complete && atomic_load(rs->must_be_complete) < 1)
        atomic_fetch_add(&rs->order_bad, 1);
    for (int i = 0; i < rs->n; i++) {
        if (rs->r[i].when != W_READY_CB)
            continue;
        if (status == FWDIO_OK)
            issue(rs, f, &rs->r[i]);
        else
            give_up(rs, &rs->r[i]);
    }
}

static void *thread_main(void *arg)
{
    reader_t *rs = arg;
    fwdio_file_t *f = atomic_load(&rs->f);
    struct timespec ts = {0, 100 * 1000};
    for (int i = 0; i < rs->n; i++) {
        if (rs->r[i].when != W_THREAD)
            continue;
        issue(rs, f, &rs->r[i]);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void reader_init(reader_t *rs, group_t *g, const model_t *m, const opts_t *ro, int n,
                        const char *what)
{
    memset(rs, 0, sizeof *rs);
    rs->g = g;
    rs->m = m;
    snprintf(rs->what, sizeof rs->what, "%s", what);
    opts_copy(&rs->ro, ro);
    atomic_init(&rs->f, NULL);
    rs->n = n;
    rs->r = calloc((size_t)(n ? n : 1), sizeof *rs->r);
    if (!rs->r) {
        fprintf(stderr, "FAIL [rank %d]: out of memory\n", tc_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    atomic_init(&rs->issued, 0);
    atomic_init(&rs->ended, 0);
    atomic_init(&rs->order_bad, 0);
    rs->want_ready = FWDIO_OK;
    rs->want_complete = FWDIO_OK;
    rs->main = pthread_self();
}

/* Read i: [off, off + len), issued `when`; buffer allocated (NULL for a 0-byte
 * read when null_buf). Expected to end FWDIO_OK. */
static rd_t *rd_set(reader_t *rs, int i, uint64_t off, size_t len, int when, int null_buf)
{
    rd_t *r = &rs->r[i];
    r->rs = rs;
    r->off = off;
    r->len = len;
    r->when = when;
    r->parent = -1;
    r->child = -1;
    r->expect = r->alt = FWDIO_OK;
    r->rc_alt = FWDIO_OK;
    r->call_rc = RC_NOT_CALLED;
    atomic_init(&r->done_count, 0);
    atomic_init(&r->status, 1);
    atomic_init(&r->bad_cb, 0);
    if (len == 0 && null_buf) {
        r->base = r->buf = NULL;
    } else {
        r->base = xmalloc(len + 2 * GUARD);
        r->buf = r->base + GUARD;
    }
    return r;
}

/* Make read c the child of read p (issued from p's done callback). */
static void rd_chain(reader_t *rs, int p, int c)
{
    rs->r[p].child = c;
    rs->r[c].parent = p;
    rs->r[c].when = W_CHILD;
}

/* The random read plan of this rank: `n` reads of at most max_bytes in all.
 * `shared` (seeded alike on every rank) gives hot ranges that several ranks
 * read; `mine` the rest. */
static void plan_random(reader_t *rs, tc_rng_t *shared, tc_rng_t *mine, size_t max_bytes)
{
    uint64_t size = rs->m->size;
    uint64_t stripe = rs->ro.o.stripe_size ? rs->ro.o.stripe_size : 65536;
    enum { NHOT = 6 };
    uint64_t hot_off[NHOT], hot_len[NHOT];
    for (int h = 0; h < NHOT; h++) {
        hot_len[h] = size ? 1 + tc_rng_below(shared, min_u64(size, 4 * stripe)) : 0;
        hot_off[h] = tc_rng_below(shared, size - hot_len[h] + 1);
    }
    size_t left = max_bytes;
    for (int i = 0; i < rs->n; i++) {
        uint64_t off = 0, len = 0;
        unsigned k = (unsigned)tc_rng_below(mine, 100);
        int null_buf = 0;
        if (size == 0 || k < 6) { /* 0 bytes, anywhere up to the end */
            off = tc_rng_below(mine, size + 1);
            null_buf = (int)tc_rng_below(mine, 2);
        } else if (k < 28) { /* tiny and unaligned */
            len = 1 + tc_rng_below(mine, min_u64(size, 300));
            off = tc_rng_below(mine, size - len + 1);
        } else if (k < 52) { /* up to two stripes */
            len = 1 + tc_rng_below(mine, min_u64(size, 2 * stripe));
            off = tc_rng_below(mine, size - len + 1);
        } else if (k < 66) { /* across many stripes */
            len = 1 + tc_rng_below(mine, min_u64(size, 24 * stripe));
            off = tc_rng_below(mine, size - len + 1);
        } else if (k < 76) { /* exactly to the end of the file */
            off = tc_rng_below(mine, size);
            len = size - off;
        } else if (k < 79) { /* the whole file */
            len = size;
        } else if (k < 89 && i > 0) { /* overlapping one of this rank's reads */
            const rd_t *o = &rs->r[tc_rng_below(mine, (uint64_t)i)];
            off = o->off + tc_rng_below(mine, o->len + 1);
            off = off >= 7 ? off - tc_rng_below(mine, 8) : off;
            if (off > size)
                off = size;
            len = min_u64(1 + tc_rng_below(mine, o->len + 2 * stripe), size - off);
        } else { /* a hot range, shifted a little: other ranks read it too */
            int h = (int)tc_rng_below(mine, NHOT);
            uint64_t shift = tc_rng_below(mine, 64);
            off = hot_off[h] >= shift ? hot_off[h] - shift : 0;
            len = min_u64(hot_len[h] + tc_rng_below(mine, 128), size - off);
        }
        /* the memory budget: no read takes more than a fifth of it, and 300
         * bytes stay for each later read; a read to the end stays one */
        uint64_t reserve = (uint64_t)(rs->n - i - 1) * 300;
        uint64_t allow = min_u64(max_bytes / 5, left > reserve ? left - reserve : 0);
        if (len > allow) {
            if (off + len == size)
                off = size - allow;
            len = allow;
        }
        left -= (size_t)len;
        unsigned w = (unsigned)tc_rng_below(mine, 20);
        int when = w < 5 ? W_EARLY : w < 7 ? W_READY_CB : w < 9 ? W_THREAD : W_LATER;
        rd_t *r = rd_set(rs, i, off, (size_t)len, when, null_buf);
        r->no_cb = tc_rng_below(mine, 20) == 0;
        if (w >= 9 && w < 13 && i > 0) { /* from the callback of an earlier read */
            for (int tries = 0; tries < 8; tries++) {
                int p = (int)tc_rng_below(mine, (uint64_t)i);
                if (rs->r[p].child < 0 && !rs->r[p].no_cb) {
                    r->no_cb = 0;
                    rd_chain(rs, p, i);
                    break;
                }
            }
        }
    }
}

/* Open for reading, issue the early reads, start the second thread. */
static void reads_open(reader_t *rs)
{
    tc_cb_init(&rs->cb);
    rs->cb.user = rs;
    rs->cb.on_ready = on_ready_issue;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&rs->cb);
    fwdio_file_t *f = NULL;
    tc_phase("fwdio_open_read %s (%s)", rs->m->path, rs->what);
    int rc = fwdio_open_read(rs->g->rt, rs->m->path, &rs->ro.o, &cbs, &f);
    TC_EXPECT(rc, FWDIO_OK, "fwdio_open_read");
    if (rc != FWDIO_OK || !f) {
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    set_file(rs, f);
    TC_CHECK(atomic_load(&rs->f) == f, "%s: the ready callback got another handle", rs->what);
    tc_phase("early reads of %s", rs->what);
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i].when == W_EARLY)
            issue(rs, f, &rs->r[i]);
    for (int i = 0; i < rs->n && !rs->has_thread; i++) {
        if (rs->r[i].when != W_THREAD)
            continue;
        if (pthread_create(&rs->thread, NULL, thread_main, rs) != 0) {
            tc_fail("cannot start a thread");
            for (int j = 0; j < rs->n; j++)
                if (rs->r[j].when == W_THREAD)
                    rs->r[j].when = W_LATER;
        } else {
            rs->has_thread = 1;
        }
    }
}

/* Wait for ready, check the size, issue the later reads, close. */
static void reads_close(reader_t *rs)
{
    fwdio_file_t *f = atomic_load(&rs->f);
    const model_t *m = rs->m;
    tc_phase("wait for ready of %s", rs->what);
    tc_poll_until_count(rs->g->rt, &rs->cb.ready_count, 1);
    uint64_t size = 0;
    int src = fwdio_file_size(f, &size);
    if (rs->want_ready == FWDIO_OK) {
        TC_EXPECT(src, FWDIO_OK, "fwdio_file_size after ready");
        int64_t on_disk = stat_size(m->path);
        TC_CHECK(src != FWDIO_OK || (size == m->size && (int64_t)size == on_disk),
                 "%s: fwdio_file_size says %" PRIu64 ", the file has %" PRId64
                 " bytes, expected %" PRIu64,
                 rs->what, size, on_disk, m->size);
    } else {
        TC_CHECK(src == rs->want_ready, "%s: fwdio_file_size of a file whose open failed "
                 "returned %d (%s), expected the open status %s", rs->what, src,
                 fwdio_strerror(src), fwdio_strerror(rs->want_ready));
        /* a failed open: later reads are refused */
        static uint8_t one[8];
        int rc = fwdio_read(f, one, 1, 0, never_done, NULL);
        TC_CHECK(rc == FWDIO_EFAILED, "%s: fwdio_read after a failed open returned %d (%s), "
                 "expected FWDIO_EFAILED", rs->what, rc, fwdio_strerror(rc));
    }
    tc_phase("later reads of %s", rs->what);
    int k = 0;
    for (int i = 0; i < rs->n; i++) {
        if (rs->r[i].when != W_LATER)
            continue;
        if (rs->want_ready == FWDIO_OK)
            issue(rs, f, &rs->r[i]);
        else
            give_up(rs, &rs->r[i]);
        if (++k % 4 == 0) {
            int pr = fwdio_poll(rs->g->rt);
            TC_CHECK(pr >= 0, "fwdio_poll returned %d (%s)", pr, fwdio_strerror(pr));
        }
    }
    if (rs->has_thread) {
        pthread_join(rs->thread, NULL);
        rs->has_thread = 0;
    }
    tc_phase("issue the reads of %s from callbacks", rs->what);
    tc_poll_until_count(rs->g->rt, &rs->issued, rs->n);
    tc_phase("fwdio_close %s", rs->what);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (read)");
}

/* fwdio_wait: the status the file must end with. */
static int reads_wait(reader_t *rs)
{
    fwdio_file_t *f = atomic_load(&rs->f);
    tc_phase("fwdio_wait %s", rs->what);
    int st = fwdio_wait(f);
    TC_CHECK(st == rs->want_complete, "%s: fwdio_wait returned %d (%s), expected %s", rs->what,
             st, fwdio_strerror(st), fwdio_strerror(rs->want_complete));
    return st;
}

/* Wait for ready, check the size, issue the later reads, close, wait.
 * Returns fwdio_wait's status. */
static int reads_run(reader_t *rs)
{
    reads_close(rs);
    return reads_wait(rs);
}

/* One wrong buffer: where, what came, what should have, what the disk holds. */
static void report_bytes(reader_t *rs, int i, const uint8_t *want, size_t nbad, size_t first)
{
    const rd_t *r = &rs->r[i];
    uint64_t at = r->off + first;
    char disk[48] = "?";
    int fd = open(rs->m->path, O_RDONLY);
    unsigned char b = 0;
    if (fd >= 0) {
        ssize_t n = pread(fd, &b, 1, (off_t)at);
        if (n == 1)
            snprintf(disk, sizeof disk, "0x%02x", b);
        else
            snprintf(disk, sizeof disk, "end of file");
        close(fd);
    }
    uint8_t untouched = (uint8_t)(0xFFu - want[first]); /* what issue() put there */
    tc_fail("%s: read %d [%" PRIu64 ", +%zu) %s ended OK but %zu of its bytes are wrong; first "
            "at file offset %" PRIu64 ": got 0x%02x, expected 0x%02x (%s), the file on disk "
            "holds %s%s",
            rs->what, i, r->off, r->len, when_names[r->when], nbad, at, r->buf[first],
            want[first], in_hole(rs->m, at) ? "a hole" : "written", disk,
            r->buf[first] == untouched ? "; the byte was never written" : "");
}

/* Every read: called and ended as it should, and an OK read holds every byte
 * of the model. Returns the number of reads that ended with FWDIO_EREAD. */
static int reads_verify(reader_t *rs)
{
    tc_phase("verify the reads of %s", rs->what);
    size_t longest = 0;
    for (int i = 0; i < rs->n; i++)
        longest = rs->r[i].len > longest ? rs->r[i].len : longest;
    uint8_t *want = xmalloc(longest);
    int reports = 0, more = 0, eread = 0;
#define REPORT(...)                                                                        \
    do {                                                                                   \
        if (reports++ < MAX_REPORTS)                                                       \
            tc_fail(__VA_ARGS__);                                                          \
        else                                                                               \
            more++;                                                                        \
    } while (0)
    for (int i = 0; i < rs->n; i++) {
        rd_t *r = &rs->r[i];
        int done = atomic_load(&r->done_count);
        int status = atomic_load(&r->status);
        if (r->call_rc == RC_NOT_CALLED) {
            if (rs->want_ready == FWDIO_OK)
                REPORT("%s: read %d was never issued (%s)", rs->what, i, when_names[r->when]);
            continue;
        }
        if (r->call_rc != FWDIO_OK) {
            if (r->call_rc != r->rc_alt)
                REPORT("%s: fwdio_read(offset %" PRIu64 ", len %zu) %s returned %d (%s)",
                       rs->what, r->off, r->len, when_names[r->when], r->call_rc,
                       fwdio_strerror(r->call_rc));
            if (done)
                REPORT("%s: read %d was refused (%s) but its done ran %d time(s)", rs->what, i,
                       fwdio_strerror(r->call_rc), done);
            continue;
        }
        if (r->no_cb) {
            status = FWDIO_OK; /* nothing tells: its bytes must be there */
        } else {
            if (done != 1) {
                REPORT("%s: the done callback of read %d [%" PRIu64 ", +%zu) %s ran %d times",
                       rs->what, i, r->off, r->len, when_names[r->when], done);
                continue;
            }
            int bad = atomic_load(&r->bad_cb);
            if (bad)
                REPORT("%s: read %d's done callback:%s%s%s%s", rs->what, i,
                       bad & 1 ? " another file handle" : "", bad & 2 ? " another buffer" : "",
                       bad & 4 ? (g_mode == FWDIO_CALLBACKS_ON_POLL
                                      ? " ran off the application thread (poll mode)"
                                      : " ran on the application thread (progress mode)")
                               : "",
                       bad & 8 ? " ran after the file's complete callback" : "");
            if (status != r->expect && status != r->alt) {
                REPORT("%s: read %d [%" PRIu64 ", +%zu) %s ended with %d (%s), expected %s",
                       rs->what, i, r->off, r->len, when_names[r->when], status,
                       fwdio_strerror(status), fwdio_strerror(r->expect));
                continue;
            }
            if (status == FWDIO_EREAD)
                eread++;
        }
        if (status != FWDIO_OK || !r->base)
            continue;
        for (size_t g = 0; g < GUARD; g++) {
            if (r->base[g] != GUARD_BYTE || r->buf[r->len + g] != GUARD_BYTE) {
                REPORT("%s: read %d [%" PRIu64 ", +%zu) wrote outside its buffer (%s guard)",
                       rs->what, i, r->off, r->len,
                       r->base[g] != GUARD_BYTE ? "front" : "back");
                break;
            }
        }
        expected_fill(rs->m, r->off, r->len, want);
        if (memcmp(want, r->buf, r->len) != 0) {
            size_t nbad = 0, first = SIZE_MAX;
            for (size_t b = 0; b < r->len; b++) {
                if (want[b] != r->buf[b]) {
                    nbad++;
                    if (first == SIZE_MAX)
                        first = b;
                }
            }
            if (reports++ < MAX_REPORTS)
                report_bytes(rs, i, want, nbad, first);
            else
                more++;
        }
    }
    if (more)
        tc_fail("%s: %d more wrong read(s) not shown", rs->what, more);
#undef REPORT
    free(want);
    if (atomic_load(&rs->order_bad))
        tc_fail("%s: the read was ready before the write of its path completed", rs->what);
    return eread;
}

/* Collective over the group: callbacks, stats, and the readers pread at least
 * every byte some rank asked for. */
static void reads_collective(reader_t *rs)
{
    group_t *g = rs->g;
    fwdio_file_t *f = atomic_load(&rs->f);
    tc_phase("check %s", rs->what);
    tc_cb_check(g->comm, &rs->cb, rs->what, rs->want_ready, rs->want_complete, g_mode, f);
    if (rs->want_complete != FWDIO_OK)
        return;
    fwdio_file_stats_t st;
    memset(&st, 0xff, sizeof st);
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    /* accepted at the call; of them, those that did not end OK (past the end,
     * found only at ready) may or may not be counted */
    uint64_t calls = 0, bytes = 0, calls_ok = 0, bytes_ok = 0;
    size_t nbm = (size_t)(rs->m->size + 7) / 8;
    uint8_t *bm = calloc(nbm ? nbm : 1, 1);
    if (!bm) {
        fprintf(stderr, "FAIL [rank %d]: out of memory\n", tc_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < rs->n; i++) {
        const rd_t *r = &rs->r[i];
        if (r->call_rc != FWDIO_OK)
            continue;
        calls++;
        bytes += r->len;
        if (!r->no_cb && atomic_load(&r->status) != FWDIO_OK)
            continue;
        calls_ok++;
        bytes_ok += r->len;
        uint64_t end = min_u64(r->off + r->len, rs->m->size);
        for (uint64_t b = r->off; b < end;) {
            if (b % 8 == 0 && b + 8 <= end) {
                uint64_t whole = (end - b) / 8;
                memset(bm + b / 8, 0xff, (size_t)whole);
                b += whole * 8;
            } else {
                bm[b / 8] |= (uint8_t)(1u << (b % 8));
                b++;
            }
        }
    }
    TC_CHECK(st.read_calls == calls || st.read_calls == calls_ok,
             "%s: stats.read_calls %" PRIu64 ", this rank issued %" PRIu64 " (%" PRIu64
             " ended OK)",
             rs->what, st.read_calls, calls, calls_ok);
    TC_CHECK(st.bytes_read == bytes || st.bytes_read == bytes_ok,
             "%s: stats.bytes_read %" PRIu64 ", this rank asked for %" PRIu64 " (%" PRIu64
             " in reads that ended OK)",
             rs->what, st.bytes_read, bytes, bytes_ok);
    TC_CHECK(st.bytes_written == 0 && st.write_calls == 0,
             "%s: a read file counts %" PRIu64 " bytes written in %" PRIu64 " calls", rs->what,
             st.bytes_written, st.write_calls);
    if (nbm)
        MPI_Allreduce(MPI_IN_PLACE, bm, (int)nbm, MPI_UNSIGNED_CHAR, MPI_BOR, g->comm);
    uint64_t asked = 0;
    for (size_t i = 0; i < nbm; i++)
        asked += (uint64_t)__builtin_popcount(bm[i]);
    free(bm);
    uint64_t from_storage = sum_u64(g->comm, st.bytes_from_storage);
    uint64_t units = sum_u64(g->comm, st.pwrite_calls);
    TC_CHECK(from_storage >= asked,
             "%s: the readers pread %" PRIu64 " bytes in all, but the ranks asked for %" PRIu64
             " distinct bytes",
             rs->what, from_storage, asked);
    TC_CHECK(asked == 0 || units > 0, "%s: %" PRIu64 " bytes asked for and no unit pread",
             rs->what, asked);
    if (g->rank == 0)
        tc_note("%s: %" PRIu64 " distinct bytes asked for, %" PRIu64 " pread in %" PRIu64
                " units (%.2fx)",
                rs->what, asked, from_storage, units,
                asked ? (double)from_storage / (double)asked : 0.0);
}

static void reads_free(reader_t *rs)
{
    fwdio_file_t *f = atomic_load(&rs->f);
    if (f)
        fwdio_file_free(f);
    for (int i = 0; i < rs->n; i++)
        free(rs->r[i].base);
    free(rs->r);
    rs->r = NULL;
    rs->n = 0;
}

/* A whole random read of model m with options ro: plan, open, run, verify. */
static void read_random(group_t *g, const model_t *m, const opts_t *ro, uint64_t seed, int nreads,
                        size_t max_bytes, const char *what)
{
    reader_t rs;
    reader_init(&rs, g, m, ro, nreads, what);
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed * 31 + (uint64_t)g->rank * 7919 + 1);
    plan_random(&rs, &shared, &mine, max_bytes);
    if (g->rank == 0) {
        int count[5] = {0}, empty = 0, no_cb = 0;
        uint64_t bytes = 0;
        for (int i = 0; i < rs.n; i++) {
            count[rs.r[i].when]++;
            empty += rs.r[i].len == 0;
            no_cb += rs.r[i].no_cb;
            bytes += rs.r[i].len;
        }
        tc_note("%s: rank 0 reads %" PRIu64 " bytes in %d reads: %d before ready, %d from the "
                "ready callback, %d from a second thread, %d from a read's callback, %d after "
                "ready; %d of 0 bytes, %d without a callback",
                what, bytes, rs.n, count[W_EARLY], count[W_READY_CB], count[W_THREAD],
                count[W_CHILD], count[W_LATER], empty, no_cb);
    }
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    reads_free(&rs);
}

/* A file size: mostly 64 KiB .. 3 MiB, sometimes below a unit; never a
 * multiple of 4 KiB (so of no unit). */
static uint64_t pick_size(tc_rng_t *r)
{
    uint64_t size;
    switch (tc_rng_below(r, 8)) {
    case 0: size = 1 + tc_rng_below(r, 5000); break;
    case 1: size = 4096 * (1 + tc_rng_below(r, 40)); break;
    default: size = 65536 + tc_rng_below(r, 3 << 20);
    }
    if (size % 4096 == 0)
        size += 1 + tc_rng_below(r, 4095);
    return size;
}

/* ---- case random ---------------------------------------------------------- */

static void case_random(uint64_t seed, int rounds, int nreads, size_t max_bytes,
                        uint64_t writer_buffer)
{
    group_t g;
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.writer_buffer = (size_t)writer_buffer; /* 0: the default */
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime_with(MPI_COMM_WORLD, &cfg));
    if (g.rank == 0)
        tc_note("random reads: seed %" PRIu64 ", %d rounds, %d reads per rank, %s, writer_buffer "
                "%" PRIu64 "%s", seed, rounds, nreads,
                g_mode == FWDIO_CALLBACKS_ON_POLL ? "callbacks on poll" : "callbacks on progress",
                writer_buffer, writer_buffer ? "" : " (default)");
    for (int round = 0; round < rounds; round++) {
        tc_rng_t shared, mine;
        tc_rng_seed(&shared, seed * 1000003u + (uint64_t)round);
        tc_rng_seed(&mine, seed * 7777u + (uint64_t)round * 131u + (uint64_t)tc_rank);
        char name[64], what[160], d1[256], d2[256];

        /* (a) written by fwdio, read with other options */
        model_t m;
        snprintf(name, sizeof name, "fwdio-%d", round);
        uint64_t size = pick_size(&shared);
        model_plan(&m, name, &shared, size, seed * 100 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 150000), g.size, 5,
                   tc_rng_below(&shared, 2) ? tc_rng_below(&shared, size / 8 + 1) : 0);
        opts_t wo, ro;
        opts_random(&wo, &shared, g.size);
        if (tc_rng_below(&shared, 4) == 0)
            opts_copy(&ro, &wo);
        else
            opts_random(&ro, &shared, g.size);
        if (g.rank == 0)
            tc_note("seed %" PRIu64 " round %d (a): %" PRIu64 " bytes (%" PRIu64
                    " in holes) written by fwdio with %s; read with %s",
                    seed, round, m.size, model_holes(&m), describe(&wo, d1, sizeof d1),
                    describe(&ro, d2, sizeof d2));
        write_fwdio(&g, &m, &wo, &mine);
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d (a) %s", seed, round, name);
        read_random(&g, &m, &ro, seed * 5 + (uint64_t)round, nreads, max_bytes, what);
        model_free(&m);

        /* (b) written by plain pwrite on rank 0: holes, a hole at the end */
        snprintf(name, sizeof name, "plain-%d", round);
        size = pick_size(&shared);
        model_plan(&m, name, &shared, size, seed * 100 + 50 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 100000), g.size, 3,
                   1 + tc_rng_below(&shared, size / 4 + 1));
        opts_random(&ro, &shared, g.size);
        if (g.rank == 0)
            tc_note("seed %" PRIu64 " round %d (b): %" PRIu64 " bytes (%" PRIu64
                    " in holes) written by pwrite; read with %s",
                    seed, round, m.size, model_holes(&m), describe(&ro, d2, sizeof d2));
        write_plain(g.comm, &m);
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d (b) %s", seed, round, name);
        read_random(&g, &m, &ro, seed * 5 + 3 + (uint64_t)round, nreads, max_bytes, what);
        model_free(&m);
    }
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case ranks: written on N ranks, read on M ------------------------------ */

static void case_ranks(uint64_t seed, int nreads)
{
    char what[160], d1[256], d2[256];
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed + 17 + (uint64_t)tc_rank);
    /* 1. written by the first half of the ranks, read by all */
    int nsub = (tc_size + 1) / 2;
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, tc_rank < nsub ? 0 : MPI_UNDEFINED, tc_rank, &sub);
    model_t m;
    uint64_t size = (2 << 20) + 1 + tc_rng_below(&shared, 1 << 20);
    model_plan(&m, "ranks-1", &shared, size, seed + 1, 1 + tc_rng_below(&shared, 100000), nsub, 6,
               tc_rng_below(&shared, 50000));
    opts_t wo, ro;
    opts_random(&wo, &shared, nsub);
    opts_random(&ro, &shared, tc_size);
    if (tc_rank == 0)
        tc_note("seed %" PRIu64 ": %" PRIu64 " bytes written on %d of %d ranks with %s, read on "
                "%d with %s",
                seed, size, nsub, tc_size, describe(&wo, d1, sizeof d1), tc_size,
                describe(&ro, d2, sizeof d2));
    if (sub != MPI_COMM_NULL) {
        group_t gs;
        group_set(&gs, sub, tc_start_runtime(sub, g_mode));
        write_fwdio(&gs, &m, &wo, &mine);
        TC_EXPECT(fwdio_finalize(gs.rt), FWDIO_OK, "fwdio_finalize (sub-communicator)");
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    snprintf(what, sizeof what, "seed %" PRIu64 " written on %d ranks, read on %d", seed, nsub,
             tc_size);
    read_random(&g, &m, &ro, seed + 2, nreads, 8u << 20, what);
    model_free(&m);

    /* 2. written by all, read by the odd ranks */
    size = (1 << 20) + 1 + tc_rng_below(&shared, 2 << 20);
    model_plan(&m, "ranks-2", &shared, size, seed + 3, 1 + tc_rng_below(&shared, 100000),
               tc_size, 6, tc_rng_below(&shared, 50000));
    int nodd = tc_size / 2;
    opts_random(&wo, &shared, tc_size);
    opts_random(&ro, &shared, nodd > 0 ? nodd : 1);
    if (tc_rank == 0)
        tc_note("seed %" PRIu64 ": %" PRIu64 " bytes written on %d ranks with %s, read on the "
                "%d odd ranks with %s",
                seed, size, tc_size, describe(&wo, d1, sizeof d1), nodd,
                describe(&ro, d2, sizeof d2));
    write_fwdio(&g, &m, &wo, &mine);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize (world)");
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, tc_rank % 2 ? 0 : MPI_UNDEFINED, tc_rank, &odd);
    if (odd != MPI_COMM_NULL) {
        group_t go;
        group_set(&go, odd, tc_start_runtime(odd, g_mode));
        snprintf(what, sizeof what, "seed %" PRIu64 " written on %d ranks, read on %d", seed,
                 tc_size, nodd);
        read_random(&go, &m, &ro, seed + 4, nreads, 8u << 20, what);
        TC_EXPECT(fwdio_finalize(go.rt), FWDIO_OK, "fwdio_finalize (odd ranks)");
        MPI_Comm_free(&odd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    model_free(&m);
}

/* ---- case after_write: a read opened right after the write of its path ---- */

static void case_after_write(uint64_t seed, int nreads)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    for (int round = 0; round < 3; round++) {
        tc_rng_t shared, mine;
        tc_rng_seed(&shared, seed * 10 + (uint64_t)round);
        tc_rng_seed(&mine, seed * 10 + (uint64_t)round + 1000u * (uint64_t)(tc_rank + 1));
        char name[64], what[160], d1[256], d2[256];
        snprintf(name, sizeof name, "after-write-%d", round);
        /* the old file: other bytes, and larger or smaller */
        model_t old, m;
        uint64_t size = (1 << 20) + 1 + tc_rng_below(&shared, 3 << 20);
        uint64_t old_size = round == 1 ? size / 2 + 3 : size + 300000;
        model_plan(&old, name, &shared, old_size, seed + 900, 50000, g.size, 0, 0);
        write_plain(g.comm, &old);
        model_plan(&m, name, &shared, size, seed + 10 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 120000), g.size, 4, tc_rng_below(&shared, 70000));
        opts_t wo, ro;
        opts_random(&wo, &shared, g.size);
        if (round == 2)
            opts_copy(&ro, &wo);
        else
            opts_random(&ro, &shared, g.size);
        if (g.rank == 0)
            tc_note("seed %" PRIu64 " round %d: %" PRIu64 " bytes (old file: %" PRIu64
                    ") written with %s, read at once with %s",
                    seed, round, size, old_size, describe(&wo, d1, sizeof d1),
                    describe(&ro, d2, sizeof d2));
        tc_cbstate_t wcb;
        fwdio_file_t *wf = write_fwdio_start(&g, &m, &wo, &mine, &wcb);
        /* at once: reads of the path must wait for the write */
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d: read after write", seed, round);
        reader_t rs;
        reader_init(&rs, &g, &m, &ro, nreads, what);
        tc_rng_t rshared, rmine;
        tc_rng_seed(&rshared, seed + 77 + (uint64_t)round);
        tc_rng_seed(&rmine, seed + 99 + (uint64_t)round * 1000 + (uint64_t)g.rank);
        plan_random(&rs, &rshared, &rmine, 8u << 20);
        /* half of the reads before ready */
        for (int i = 0; i < rs.n; i++)
            if (rs.r[i].when == W_LATER && i % 2)
                rs.r[i].when = W_EARLY;
        rs.must_be_complete = &wcb.complete_count;
        reads_open(&rs);
        reads_run(&rs);
        reads_verify(&rs);
        reads_collective(&rs);
        reads_free(&rs);
        write_fwdio_end(&g, wf, &wcb, "the write before the read");

        /* the other way round: a write of the path opened right after its
         * read is closed waits for the read, which sees the bytes before it */
        model_t m2;
        snprintf(name, sizeof name, "after-write-%d", round); /* the same path */
        uint64_t size2 = (1 << 20) + 1 + tc_rng_below(&shared, 2 << 20);
        model_plan(&m2, name, &shared, size2, seed + 40 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 120000), g.size, 4, 0);
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d: read before a write", seed,
                 round);
        reader_init(&rs, &g, &m, &ro, nreads, what);
        tc_rng_seed(&rshared, seed + 177 + (uint64_t)round);
        tc_rng_seed(&rmine, seed + 199 + (uint64_t)round * 1000 + (uint64_t)g.rank);
        plan_random(&rs, &rshared, &rmine, 8u << 20);
        reads_open(&rs);
        reads_close(&rs);
        wf = write_fwdio_start(&g, &m2, &wo, &mine, &wcb);
        reads_wait(&rs);
        reads_verify(&rs);
        reads_collective(&rs);
        reads_free(&rs);
        write_fwdio_end(&g, wf, &wcb, "the write after the read");
        TC_CHECK(disk_matches(g.comm, &m2), "the write after the read is not whole");
        model_free(&m2);
        model_free(&m);
        model_free(&old);
    }
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case multi: several files at once ---------------------------------------- */

static void case_multi(uint64_t seed, int nreads)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed * 13 + (uint64_t)tc_rank + 1);
    model_t a, b, c, w;
    opts_t oa, ob, oc, ow;
    model_plan(&a, "multi-a", &shared, pick_size(&shared), seed + 1, 70000, g.size, 4, 999);
    model_plan(&b, "multi-b", &shared, pick_size(&shared), seed + 2, 70000, g.size, 4, 0);
    model_plan(&c, "multi-c", &shared, pick_size(&shared), seed + 3, 70000, g.size, 4, 1);
    model_plan(&w, "multi-w", &shared, pick_size(&shared), seed + 4, 70000, g.size, 4, 0);
    opts_random(&oa, &shared, g.size);
    opts_random(&ob, &shared, g.size);
    opts_random(&oc, &shared, g.size);
    opts_random(&ow, &shared, g.size);
    write_plain(g.comm, &a);
    write_fwdio(&g, &b, &ob, &mine);
    write_plain(g.comm, &c);
    if (g.rank == 0)
        tc_note("seed %" PRIu64 ": reads of 3 files (%" PRIu64 ", %" PRIu64 ", %" PRIu64
                " bytes), a second read of the first, and a write of a fourth, all at once",
                seed, a.size, b.size, c.size);
    reader_t ra, ra2, rb, rc;
    reader_t *all[4] = {&ra, &ra2, &rb, &rc};
    const char *names[4] = {"multi: file a", "multi: file a again", "multi: file b",
                            "multi: file c"};
    const model_t *models[4] = {&a, &a, &b, &c};
    const opts_t *opts[4] = {&oa, &ob, &ob, &oc};
    for (int k = 0; k < 4; k++) {
        reader_init(all[k], &g, models[k], opts[k], nreads, names[k]);
        tc_rng_t rshared, rmine;
        tc_rng_seed(&rshared, seed * 50 + (uint64_t)k);
        tc_rng_seed(&rmine, seed * 60 + (uint64_t)k * 1000 + (uint64_t)g.rank);
        plan_random(all[k], &rshared, &rmine, 3u << 20);
    }
    reads_open(&ra);
    reads_open(&rb);
    tc_cbstate_t wcb;
    fwdio_file_t *wf = write_fwdio_start(&g, &w, &ow, &mine, &wcb);
    reads_open(&rc);
    reads_close(&ra);
    reads_open(&ra2); /* the same path again, once the first read is closed */
    reads_close(&rc);
    reads_close(&rb);
    reads_close(&ra2);
    reads_wait(&rc);
    reads_wait(&ra2);
    reads_wait(&ra);
    reads_wait(&rb);
    for (int k = 0; k < 4; k++) {
        reads_verify(all[k]);
        reads_collective(all[k]);
        reads_free(all[k]);
    }
    write_fwdio_end(&g, wf, &wcb, "multi: the write beside the reads");
    TC_CHECK(disk_matches(g.comm, &w), "multi: the write beside the reads is not whole");
    model_free(&a);
    model_free(&b);
    model_free(&c);
    model_free(&w);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case still_open: a read of a path whose write is not closed ---------- */

static void case_still_open(uint64_t seed)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank + 1);
    model_t m;
    model_plan(&m, "still-open", &shared, (1 << 20) + 555, seed, 60000, g.size, 0, 0);
    opts_t o;
    opts_fixed(&o, 16384, 65536, g.size > 1 ? 2 : 1, FWDIO_LAYOUT_CYCLIC);
    tc_cbstate_t wcb;
    tc_cb_init(&wcb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&wcb);
    fwdio_file_t *wf = NULL;
    TC_EXPECT(fwdio_open(g.rt, m.path, m.size, &o.o, &cbs, &wf), FWDIO_OK, "fwdio_open (write)");
    /* the write is open on this rank: the read of its path cannot follow it */
    reader_t rs;
    reader_init(&rs, &g, &m, &o, 2, "a read of a path still open for writing");
    rd_set(&rs, 0, 0, 1000, W_EARLY, 0);
    rd_set(&rs, 1, m.size - 10, 10, W_EARLY, 0);
    for (int i = 0; i < 2; i++) {
        rs.r[i].expect = rs.r[i].alt = FWDIO_EINVAL;
        rs.r[i].rc_alt = FWDIO_EFAILED;
    }
    rs.want_ready = rs.want_complete = FWDIO_EINVAL;
    reads_open(&rs);
    for (size_t i = 0; i < m.n; i++)
        if (m.ext[i].owner == g.rank)
            TC_EXPECT(tc_write_pattern(wf, m.ext[i].offset, m.ext[i].len, m.seed, 0), FWDIO_OK,
                      "fwdio_write");
    TC_EXPECT(fwdio_close(wf), FWDIO_OK, "fwdio_close (write)");
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    const char *text = fwdio_file_error(atomic_load(&rs.f));
    TC_CHECK(text && *text && strcmp(text, "success") != 0, "the failed read has no error text");
    if (g.rank == 0)
        tc_note("read of a path still open for writing: %s", text);
    reads_free(&rs);
    write_fwdio_end(&g, wf, &wcb, "the write the read could not follow");
    TC_CHECK(disk_matches(g.comm, &m), "the write was not whole");
    /* and now it is closed and complete: the read works */
    read_random(&g, &m, &o, seed + 5, 40, 4u << 20, "the read after the write completed");
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case range: past the end --------------------------------------------- */

static void case_range(uint64_t seed)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared;
    tc_rng_seed(&shared, seed);
    model_t m;
    uint64_t size = (1 << 20) + 123;
    model_plan(&m, "range", &shared, size, seed, 30000, g.size, 4, 5000);
    write_plain(g.comm, &m);
    opts_t o;
    opts_fixed(&o, 16384, 65536, g.size > 1 ? 2 : 1, FWDIO_LAYOUT_BLOCK);

    reader_t rs;
    reader_init(&rs, &g, &m, &o, 9, "reads past the end");
    rd_t *r;
    uint64_t S = size;
    int k = 0;
    /* before ready: past the end ends with ERANGE in done (or, if the file
     * happens to be ready already, is refused with it at the call) */
    uint64_t past[3][2] = {{S - 100, 200}, {S + 5000, 10}, {S, 1}};
    for (int i = 0; i < 3; i++) {
        r = rd_set(&rs, k++, past[i][0], (size_t)past[i][1], W_EARLY, 0);
        r->expect = r->alt = FWDIO_ERANGE;
        r->rc_alt = FWDIO_ERANGE;
    }
    rd_set(&rs, k++, S - 100, 100, W_EARLY, 0);                 /* exactly to the end */
    rd_set(&rs, k++, S, 0, W_EARLY, 0);                         /* 0 bytes at the end */
    rd_set(&rs, k++, 0, (size_t)S, W_EARLY, 0);                 /* the whole file */
    rd_set(&rs, k++, S - 1 - (uint64_t)g.rank, 1 + (size_t)g.rank, W_LATER, 0);
    rd_set(&rs, k++, S - 4096 * 3 - 7, 4096 * 3 + 7, W_READY_CB, 0);
    rd_set(&rs, k++, 12345, 0, W_LATER, 1);
    reads_open(&rs);
    fwdio_file_t *f = atomic_load(&rs.f);
    tc_poll_until_count(g.rt, &rs.cb.ready_count, 1);
    int early_refused = 0;
    for (int i = 0; i < 3; i++)
        early_refused += rs.r[i].call_rc == FWDIO_ERANGE;
    if (early_refused)
        tc_note("%d read(s) past the end were refused at the call: the file was ready already",
                early_refused);
    /* after ready: refused at the call, done never called */
    uint8_t *buf = xmalloc((size_t)S + 64);
    atomic_init(&g_never, 0);
    struct {
        uint64_t off;
        size_t len;
        const char *what;
    } bad[] = {
        {S - 1, 2, "one byte past the end"},
        {S, 1, "at the end"},
        {S + 1, 0, "0 bytes past the end"},
        {UINT64_MAX, 1, "offset UINT64_MAX"},
        {UINT64_MAX - 5, 10, "offset + len wrapping around"},
        {1, SIZE_MAX, "len SIZE_MAX (offset + len wraps)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = fwdio_read(f, buf, bad[i].len, bad[i].off, never_done, NULL);
        TC_CHECK(rc == FWDIO_ERANGE, "fwdio_read %s (offset %" PRIu64 ", len %zu) after ready "
                 "returned %d (%s), expected FWDIO_ERANGE",
                 bad[i].what, bad[i].off, bad[i].len, rc, fwdio_strerror(rc));
    }
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    TC_CHECK(atomic_load(&g_never) == 0, "done ran for refused reads");
    reads_free(&rs);
    free(buf);
    model_free(&m);

    /* an empty file */
    model_t e;
    model_plan(&e, "empty", &shared, 0, seed, 1, g.size, 0, 0);
    write_plain(g.comm, &e);
    reader_init(&rs, &g, &e, &o, 3, "an empty file");
    rd_set(&rs, 0, 0, 0, W_EARLY, 0);
    rd_set(&rs, 1, 0, 0, W_LATER, 1);
    r = rd_set(&rs, 2, 0, 1, W_EARLY, 0);
    r->expect = r->alt = r->rc_alt = FWDIO_ERANGE;
    reads_open(&rs);
    tc_poll_until_count(g.rt, &rs.cb.ready_count, 1);
    uint8_t one[1];
    int rc = fwdio_read(atomic_load(&rs.f), one, 1, 0, never_done, NULL);
    TC_CHECK(rc == FWDIO_ERANGE, "fwdio_read of 1 byte of an empty file returned %d (%s)", rc,
             fwdio_strerror(rc));
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    reads_free(&rs);
    model_free(&e);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case open_fail -------------------------------------------------------- */

/* Every rank: the file failed with `status`, errno `err`, the text naming
 * the path and the errno, the same info everywhere. */
static void check_error(MPI_Comm comm, fwdio_file_t *f, int status, int err, const char *path,
                        const char *call, int by_rank, const char *what)
{
    fwdio_error_info_t info;
    memset(&info, 0xff, sizeof info);
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.status == status, "%s: error info status %d (%s), expected %s", what,
             info.status, fwdio_strerror(info.status), fwdio_strerror(status));
    if (err >= 0)
        TC_CHECK(info.sys_errno == err, "%s: error info errno %d (%s), expected %d (%s)", what,
                 info.sys_errno, strerror(info.sys_errno), err, strerror(err));
    TC_CHECK(info.rank >= 0 && info.rank < tc_size, "%s: error info rank %d", what, info.rank);
    if (by_rank >= 0)
        TC_CHECK(info.rank == by_rank, "%s: reported by rank %d, expected rank %d", what,
                 info.rank, by_rank);
    if (!tc_all_same(comm, info.status) || !tc_all_same(comm, info.rank) ||
        !tc_all_same(comm, info.sys_errno) || !tc_all_same(comm, (long)info.offset))
        tc_fail("%s: the error info differs between ranks (here: status %d, rank %d, errno %d, "
                "offset %" PRIu64 ")",
                what, info.status, info.rank, info.sys_errno, info.offset);
    const char *text = fwdio_file_error(f);
    TC_CHECK(text && *text && strcmp(text, "success") != 0, "%s: no error text ('%s')", what,
             text ? text : "(null)");
    if (!text)
        return;
    if (path)
        TC_CHECK(strstr(text, path) != NULL, "%s: '%s' does not name the path %s", what, text,
                 path);
    if (call)
        TC_CHECK(strstr(text, call) != NULL, "%s: '%s' does not name %s", what, text, call);
    char want[64];
    if (err > 0) {
        snprintf(want, sizeof want, "(errno %d)", err);
        TC_CHECK(strstr(text, want) != NULL, "%s: '%s' does not give '%s'", what, text, want);
    }
    if (info.rank >= 0) {
        snprintf(want, sizeof want, "rank %d", info.rank);
        TC_CHECK(strstr(text, want) != NULL, "%s: '%s' does not say '%s'", what, text, want);
    }
    if (tc_rank == 0)
        tc_note("%s: %s", what, text);
}

static void open_fail_one(group_t *g, const char *name, int is_dir, int err)
{
    model_t m;
    memset(&m, 0, sizeof m);
    tc_path(m.path, sizeof m.path, name);
    if (is_dir && g->rank == 0 && mkdir(m.path, 0755) != 0)
        tc_fail("mkdir %s: %s", m.path, strerror(errno));
    MPI_Barrier(g->comm);
    opts_t o;
    opts_fixed(&o, 16384, 65536, g->size > 1 ? 2 : 1, FWDIO_LAYOUT_CYCLIC);
    char what[128];
    snprintf(what, sizeof what, "open_read of %s", is_dir ? "a directory" : "a missing file");
    reader_t rs;
    reader_init(&rs, g, &m, &o, 3, what);
    rd_set(&rs, 0, 0, 100, W_EARLY, 0);
    rd_set(&rs, 1, 5000, 70000, W_EARLY, 0);
    rd_set(&rs, 2, 7, 1, W_READY_CB, 0); /* given up: ready fails */
    for (int i = 0; i < 2; i++) {
        rs.r[i].expect = rs.r[i].alt = FWDIO_EOPEN;
        rs.r[i].rc_alt = FWDIO_EFAILED;
    }
    rs.want_ready = rs.want_complete = FWDIO_EOPEN;
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    fwdio_file_t *f = atomic_load(&rs.f);
    check_error(g->comm, f, FWDIO_EOPEN, err, m.path, NULL, -1, what);
    int ranks[64];
    int nw = fwdio_file_writers(f, ranks, 64);
    if (nw > 0) {
        fwdio_error_info_t info;
        memset(&info, 0, sizeof info);
        fwdio_file_error_info(f, &info);
        int found = 0;
        for (int i = 0; i < nw && i < 64; i++)
            found |= ranks[i] == info.rank;
        TC_CHECK(found, "%s: reported by rank %d, which is not a reader of the file", what,
                 info.rank);
    }
    TC_CHECK(stat_size(m.path) < 0 || is_dir, "%s: the missing file was created", what);
    reads_free(&rs);
}

static void case_open_fail(uint64_t seed)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    open_fail_one(&g, "missing", 0, ENOENT);
    open_fail_one(&g, "a-directory", 1, EISDIR);
    /* the runtime goes on */
    tc_rng_t shared;
    tc_rng_seed(&shared, seed);
    model_t m;
    model_plan(&m, "after-failed-opens", &shared, (1 << 20) + 99, seed, 40000, g.size, 5, 1000);
    write_plain(g.comm, &m);
    opts_t o;
    opts_fixed(&o, 16384, 65536, g.size > 1 ? 2 : 1, FWDIO_LAYOUT_CYCLIC);
    read_random(&g, &m, &o, seed + 1, 40, 4u << 20, "the file after the failed opens");
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case fault: FWDIO_FAULT on pread --------------------------------------- */

static void case_fault(uint64_t seed, int expect, int err, int fault_rank)
{
    const char *spec = getenv("FWDIO_FAULT");
    if (tc_rank == 0)
        tc_note("FWDIO_FAULT=%s; expecting %s", spec ? spec : "(unset)", fwdio_strerror(expect));
    if (!spec || !*spec)
        tc_fail("FWDIO_FAULT is not set: this case is run with it");
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared;
    tc_rng_seed(&shared, seed);
    model_t m;
    const uint64_t unit = 65536;
    model_plan(&m, "pread-fault", &shared, (2 << 20) + 777, seed, 50000, g.size, 6, 3000);
    write_plain(g.comm, &m);
    opts_t o;
    opts_fixed(&o, unit, 2 * unit, 0, FWDIO_LAYOUT_CYCLIC);
    o.list[0] = 0;
    o.list[1] = g.size - 1;
    o.o.writer_list = o.list;
    o.o.writer_list_len = g.size > 1 ? 2 : 1;
    /* every rank reads the whole file in pieces of 40000 bytes, shifted by
     * rank: most before ready, the rest after */
    uint64_t piece = 40000, shift = (uint64_t)g.rank * 1000 % piece;
    int n = (int)((m.size + shift + piece - 1) / piece);
    reader_t rs;
    reader_init(&rs, &g, &m, &o, n, "the file whose preads fail");
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        uint64_t len = i == 0 ? piece - shift : piece;
        if (len > m.size - off)
            len = m.size - off;
        rd_t *r = rd_set(&rs, i, off, (size_t)len, i % 5 == 4 ? W_LATER : W_EARLY, 0);
        if (expect != FWDIO_OK) {
            r->alt = FWDIO_EREAD;
            r->rc_alt = FWDIO_EFAILED; /* once the failure is known */
        }
        off += len;
    }
    rs.want_complete = expect;
    reads_open(&rs);
    reads_run(&rs);
    int eread = reads_verify(&rs);
    reads_collective(&rs);
    fwdio_file_t *f = atomic_load(&rs.f);
    long all_eread = tc_sum(g.comm, eread);
    if (g.rank == 0)
        tc_note("%ld read(s) ended with FWDIO_EREAD", all_eread);
    if (expect != FWDIO_OK) {
        TC_CHECK(all_eread > 0, "the file failed with %s but no read ended with FWDIO_EREAD",
                 fwdio_strerror(expect));
        check_error(g.comm, f, expect, err, m.path, "pread", fault_rank, "pread fault");
        fwdio_error_info_t info;
        memset(&info, 0, sizeof info);
        fwdio_file_error_info(f, &info);
        TC_CHECK(info.offset % unit == 0 && info.offset < m.size,
                 "the failed pread's offset %" PRIu64 " is no unit start of the file", info.offset);
        TC_CHECK(info.rank == 0 || info.rank == g.size - 1,
                 "the failed pread is reported by rank %d, not a reader", info.rank);
        /* the read that asked for the failed unit did not end OK */
        int of_unit = 0;
        for (int i = 0; i < rs.n; i++) {
            const rd_t *r = &rs.r[i];
            if (r->call_rc == FWDIO_OK && r->off < info.offset + unit &&
                r->off + r->len > info.offset && atomic_load(&r->status) == FWDIO_EREAD)
                of_unit++;
        }
        TC_CHECK(tc_sum(g.comm, of_unit) > 0,
                 "no read of the failed unit [%" PRIu64 ", +%" PRIu64 ") ended with FWDIO_EREAD",
                 info.offset, unit);
    }
    reads_free(&rs);
    /* the next file of the runtime reads fine (the rules fired already) */
    if (expect != FWDIO_OK)
        read_random(&g, &m, &o, seed + 1, 40, 4u << 20, "the file after the failed one");
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case contract ------------------------------------------------------------ */

/* All ranks open_read with `o` (rank P-1 with `odd`): FWDIO_EINVAL everywhere,
 * the text naming `field`. */
static void mismatch(group_t *g, const model_t *m, const opts_t *o, const opts_t *odd,
                     const char *field, const char *what)
{
    reader_t rs;
    reader_init(&rs, g, m, g->rank == g->size - 1 ? odd : o, 3, what);
    rd_set(&rs, 0, 0, 5000, W_EARLY, 0);
    rd_set(&rs, 1, m->size / 2, 100000, W_EARLY, 0);
    rd_set(&rs, 2, 1, 1, W_READY_CB, 0);
    for (int i = 0; i < 2; i++) {
        rs.r[i].expect = rs.r[i].alt = FWDIO_EINVAL;
        rs.r[i].rc_alt = FWDIO_EFAILED;
    }
    rs.want_ready = rs.want_complete = FWDIO_EINVAL;
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    const char *text = fwdio_file_error(atomic_load(&rs.f));
    TC_CHECK(text && strstr(text, field), "%s: '%s' does not name %s", what, text ? text : "",
             field);
    if (g->rank == 0)
        tc_note("%s: %s", what, text ? text : "");
    reads_free(&rs);
}

static void case_contract(uint64_t seed)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    if (g.size < 2) {
        tc_note("the contract needs 2 ranks or more: nothing to disagree on");
        TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
        return;
    }
    tc_rng_t shared;
    tc_rng_seed(&shared, seed);
    model_t m;
    model_plan(&m, "contract", &shared, (1 << 20) + 4321, seed, 40000, g.size, 5, 777);
    write_plain(g.comm, &m);
    opts_t o, odd;
    opts_fixed(&o, 65536, 131072, 2, FWDIO_LAYOUT_BLOCK);
    opts_copy(&odd, &o);
    odd.o.stripe_size = 262144;
    mismatch(&g, &m, &o, &odd, "stripe_size", "one rank's stripe_size");
    opts_copy(&odd, &o);
    odd.o.writers = 1;
    mismatch(&g, &m, &o, &odd, "writers", "one rank's writer count");

    /* rank P-1 opens the path for writing, the others for reading */
    const char *what = "one rank writes the path the others read";
    tc_cbstate_t wcb;
    reader_t rs;
    memset(&rs, 0, sizeof rs);
    int writer = g.rank == g.size - 1;
    fwdio_file_t *wf = NULL;
    if (writer) {
        tc_cb_init(&wcb);
        fwdio_callbacks_t cbs = tc_cb_callbacks(&wcb);
        TC_EXPECT(fwdio_open(g.rt, m.path, m.size, &o.o, &cbs, &wf), FWDIO_OK,
                  "fwdio_open (write) among reads");
        uint8_t junk[4096];
        memset(junk, 0xEE, sizeof junk);
        for (uint64_t at = 0; at + sizeof junk <= m.size; at += 65536) {
            int rc = fwdio_write(wf, junk, sizeof junk, at);
            TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED,
                     "%s: fwdio_write returned %d (%s)", what, rc, fwdio_strerror(rc));
        }
        TC_EXPECT(fwdio_close(wf), FWDIO_OK, "fwdio_close (write)");
        int st = fwdio_wait(wf);
        TC_CHECK(st == FWDIO_EINVAL, "%s: the writing rank's fwdio_wait returned %d (%s), "
                 "expected FWDIO_EINVAL", what, st, fwdio_strerror(st));
    } else {
        reader_init(&rs, &g, &m, &o, 2, what);
        rd_set(&rs, 0, 0, (size_t)m.size, W_EARLY, 0);
        rd_set(&rs, 1, 4096, 4096, W_LATER, 0);
        rs.r[0].expect = rs.r[0].alt = FWDIO_EINVAL;
        rs.r[0].rc_alt = FWDIO_EFAILED;
        rs.want_ready = rs.want_complete = FWDIO_EINVAL;
        reads_open(&rs);
        reads_run(&rs);
        reads_verify(&rs);
    }
    fwdio_file_t *f = writer ? wf : atomic_load(&rs.f);
    tc_cb_check(g.comm, writer ? &wcb : &rs.cb, what, FWDIO_EINVAL, FWDIO_EINVAL, g_mode, f);
    const char *text = fwdio_file_error(f);
    TC_CHECK(text && *text && strcmp(text, "success") != 0, "%s: no error text", what);
    if (g.rank == 0)
        tc_note("%s: %s", what, text ? text : "");
    if (writer)
        fwdio_file_free(wf);
    else
        reads_free(&rs);
    TC_CHECK(disk_matches(g.comm, &m), "%s: the file on disk was changed", what);

    /* the runtime goes on */
    read_random(&g, &m, &o, seed + 1, 40, 4u << 20, "the file after the disagreements");
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case misuse -------------------------------------------------------------- */

typedef struct misuse_ctx {
    fwdio_runtime_t *rt;
    const model_t *m;
    uint8_t *nested_buf;
    atomic_int nested_rc;
    atomic_int nested_done;
    atomic_int wait_rc;
    atomic_int open_rc;
    atomic_int outer_done;
    atomic_int outer_status;
    atomic_int nested_status;
} misuse_ctx_t;

static void nested_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    (void)f;
    (void)buf;
    misuse_ctx_t *c = arg;
    atomic_store(&c->nested_status, status);
    atomic_fetch_add(&c->nested_done, 1);
}

/* done of a read: fwdio_wait is refused here, a read is not */
static void outer_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    (void)buf;
    misuse_ctx_t *c = arg;
    atomic_store(&c->outer_status, status);
    atomic_store(&c->wait_rc, fwdio_wait(f));
    if (g_mode == FWDIO_CALLBACKS_ON_PROGRESS) {
        fwdio_file_t *other = NULL;
        atomic_store(&c->open_rc, fwdio_open_read(c->rt, c->m->path, NULL, NULL, &other));
    }
    atomic_store(&c->nested_rc,
                 fwdio_read(f, c->nested_buf, 100000, 5, nested_done, c));
    atomic_fetch_add(&c->outer_done, 1);
}

static void case_misuse(uint64_t seed)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared;
    tc_rng_seed(&shared, seed);
    model_t m;
    model_plan(&m, "misuse", &shared, (16 << 20) + 17, seed, 300000, g.size, 8, 0);
    write_plain(g.comm, &m);
    uint8_t small[64];
    uint64_t sz = 0;
    fwdio_file_t *f = NULL;

    tc_phase("misuse: NULL arguments");
    TC_EXPECT(fwdio_open_read(NULL, m.path, NULL, NULL, &f), FWDIO_EINVAL, "open_read(NULL rt)");
    TC_EXPECT(fwdio_open_read(g.rt, NULL, NULL, NULL, &f), FWDIO_EINVAL, "open_read(NULL path)");
    TC_EXPECT(fwdio_open_read(g.rt, m.path, NULL, NULL, NULL), FWDIO_EINVAL,
              "open_read(NULL handle)");
    TC_EXPECT(fwdio_read(NULL, small, 1, 0, never_done, NULL), FWDIO_EINVAL, "read(NULL file)");
    TC_EXPECT(fwdio_file_size(NULL, &sz), FWDIO_EINVAL, "file_size(NULL file)");

    /* a read file: refusals at the call, and reads from a read's callback */
    tc_phase("misuse: a read file");
    tc_cbstate_t cb;
    tc_cb_init(&cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&cb);
    TC_EXPECT(fwdio_open_read(g.rt, m.path, NULL, &cbs, &f), FWDIO_OK, "fwdio_open_read");
    int rc = fwdio_file_size(f, &sz);
    if (rc == FWDIO_OK) {
        TC_CHECK(sz == m.size, "fwdio_file_size right after the open: %" PRIu64 ", expected %" PRIu64,
                 sz, m.size);
        tc_note("fwdio_file_size right after the open: ready already");
    } else {
        TC_CHECK(rc == FWDIO_EAGAIN, "fwdio_file_size before ready returned %d (%s), expected "
                 "FWDIO_EAGAIN", rc, fwdio_strerror(rc));
    }
    TC_EXPECT(fwdio_file_size(f, NULL), FWDIO_EINVAL, "file_size(NULL size)");
    atomic_init(&g_never, 0);
    TC_EXPECT(fwdio_read(f, NULL, 10, 0, never_done, NULL), FWDIO_EINVAL, "read(NULL buf, 10)");
    TC_EXPECT(fwdio_write(f, small, sizeof small, 0), FWDIO_EINVAL, "fwdio_write on a read file");
    misuse_ctx_t c;
    memset(&c, 0, sizeof c);
    c.rt = g.rt;
    c.m = &m;
    uint8_t *outer = xmalloc(300000);
    c.nested_buf = xmalloc(100000);
    atomic_init(&c.nested_rc, 1);
    atomic_init(&c.nested_done, 0);
    atomic_init(&c.wait_rc, 1);
    atomic_init(&c.open_rc, 1);
    atomic_init(&c.outer_done, 0);
    atomic_init(&c.outer_status, 1);
    atomic_init(&c.nested_status, 1);
    uint64_t outer_off = (uint64_t)g.rank * 1000003 % (m.size - 300000);
    TC_EXPECT(fwdio_read(f, outer, 300000, outer_off, outer_done, &c), FWDIO_OK, "fwdio_read");
    tc_poll_until_count(g.rt, &cb.ready_count, 1);
    TC_EXPECT(fwdio_file_size(f, &sz), FWDIO_OK, "fwdio_file_size after ready");
    TC_CHECK(sz == m.size, "fwdio_file_size %" PRIu64 ", expected %" PRIu64, sz, m.size);
    tc_poll_until_count(g.rt, &c.outer_done, 1);
    TC_CHECK(atomic_load(&c.wait_rc) == FWDIO_ECONTEXT,
             "fwdio_wait from a read's callback returned %d (%s), expected FWDIO_ECONTEXT",
             atomic_load(&c.wait_rc), fwdio_strerror(atomic_load(&c.wait_rc)));
    if (g_mode == FWDIO_CALLBACKS_ON_PROGRESS)
        TC_CHECK(atomic_load(&c.open_rc) == FWDIO_ECONTEXT,
                 "fwdio_open_read from a callback on the progress thread returned %d (%s), "
                 "expected FWDIO_ECONTEXT",
                 atomic_load(&c.open_rc), fwdio_strerror(atomic_load(&c.open_rc)));
    TC_CHECK(atomic_load(&c.nested_rc) == FWDIO_OK,
             "fwdio_read from a read's callback returned %d (%s)", atomic_load(&c.nested_rc),
             fwdio_strerror(atomic_load(&c.nested_rc)));
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_close(f), FWDIO_ECLOSED, "fwdio_close twice");
    TC_EXPECT(fwdio_read(f, small, 10, 0, never_done, NULL), FWDIO_ECLOSED,
              "fwdio_read after fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    tc_cb_check(g.comm, &cb, "the read file", FWDIO_OK, FWDIO_OK, g_mode, f);
    TC_CHECK(atomic_load(&c.nested_done) == (atomic_load(&c.nested_rc) == FWDIO_OK ? 1 : 0),
             "the nested read's done ran %d times", atomic_load(&c.nested_done));
    TC_CHECK(atomic_load(&c.outer_status) == FWDIO_OK, "a read ended with %d (%s)",
             atomic_load(&c.outer_status), fwdio_strerror(atomic_load(&c.outer_status)));
    uint8_t *want = xmalloc(300000);
    expected_fill(&m, outer_off, 300000, want);
    TC_CHECK(memcmp(want, outer, 300000) == 0, "the read's bytes are wrong");
    expected_fill(&m, 5, 100000, want);
    if (atomic_load(&c.nested_rc) == FWDIO_OK) {
        TC_CHECK(atomic_load(&c.nested_status) == FWDIO_OK,
                 "the read from a callback ended with %d (%s)", atomic_load(&c.nested_status),
                 fwdio_strerror(atomic_load(&c.nested_status)));
        TC_CHECK(memcmp(want, c.nested_buf, 100000) == 0,
                 "the bytes of the read from a callback are wrong");
    }
    fwdio_file_free(f);
    free(want);
    free(outer);
    free(c.nested_buf);

    /* a file opened for writing: no reads; its size is the one given */
    tc_phase("misuse: a write file");
    char wpath[4096];
    tc_path(wpath, sizeof wpath, "misuse-write");
    tc_cb_init(&cb);
    cbs = tc_cb_callbacks(&cb);
    fwdio_file_t *wf = NULL;
    TC_EXPECT(fwdio_open(g.rt, wpath, 100000, NULL, &cbs, &wf), FWDIO_OK, "fwdio_open");
    TC_EXPECT(fwdio_read(wf, small, 10, 0, never_done, NULL), FWDIO_EINVAL,
              "fwdio_read on a file opened for writing");
    rc = fwdio_file_size(wf, &sz);
    TC_CHECK(rc == FWDIO_EAGAIN || (rc == FWDIO_OK && sz == 100000),
             "fwdio_file_size of a write file right after the open: %d (%s), size %" PRIu64, rc,
             fwdio_strerror(rc), sz);
    if (g.rank == 0)
        TC_EXPECT(tc_write_pattern(wf, 0, 100000, 5, 0), FWDIO_OK, "fwdio_write");
    tc_poll_until_count(g.rt, &cb.ready_count, 1);
    sz = 0;
    TC_EXPECT(fwdio_file_size(wf, &sz), FWDIO_OK, "fwdio_file_size of a write file");
    TC_CHECK(sz == 100000, "fwdio_file_size of a write file of 100000 bytes: %" PRIu64, sz);
    TC_EXPECT(fwdio_close(wf), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(wf), FWDIO_OK, "fwdio_wait (write)");
    fwdio_file_free(wf);
    TC_CHECK(tc_verify_full(g.comm, wpath, 100000, 5) == 0, "the write file");

    /* a stream: no size, no reads */
    tc_phase("misuse: a stream");
    tc_path(wpath, sizeof wpath, "misuse-stream");
    TC_EXPECT(fwdio_open(g.rt, wpath, FWDIO_SIZE_GROWS, NULL, NULL, &wf), FWDIO_OK,
              "fwdio_open (stream)");
    TC_EXPECT(fwdio_file_size(wf, &sz), FWDIO_EINVAL, "fwdio_file_size of a stream");
    TC_EXPECT(fwdio_read(wf, small, 10, 0, never_done, NULL), FWDIO_EINVAL,
              "fwdio_read on a stream");
    TC_EXPECT(fwdio_close(wf), FWDIO_OK, "fwdio_close (stream)");
    TC_EXPECT(fwdio_wait(wf), FWDIO_OK, "fwdio_wait (stream)");
    fwdio_file_free(wf);
    TC_CHECK(atomic_load(&g_never) == 0, "done ran for refused reads");
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case budgets ----------------------------------------------------------- */

static void case_budgets(uint64_t seed, uint64_t writer_buffer)
{
    const uint64_t unit = 65536;
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed * 3 + (uint64_t)tc_rank + 1);
    group_t g;

    /* 1. a writer_buffer of 4 units (256 KiB, the smallest allowed) */
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.writer_buffer = writer_buffer ? writer_buffer : 4 * unit;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime_with(MPI_COMM_WORLD, &cfg));
    model_t m;
    model_plan(&m, "budget", &shared, (6 << 20) + 4321, seed, 200000, g.size, 6, 10000);
    write_plain(g.comm, &m);
    opts_t o;
    opts_fixed(&o, unit, 2 * unit, g.size > 1 ? 2 : 1, FWDIO_LAYOUT_BLOCK);
    int n = 6;
    reader_t rs;
    char what[128];
    snprintf(what, sizeof what, "large reads through a budget of %" PRIu64 " units",
             (uint64_t)cfg.writer_buffer / unit);
    reader_init(&rs, &g, &m, &o, n, what);
    for (int i = 0; i < n; i++) {
        uint64_t len = (512 << 10) + tc_rng_below(&mine, 3 << 19);
        uint64_t off = tc_rng_below(&mine, m.size - len + 1);
        if (i == n - 1)
            off = m.size - len; /* to the end */
        rd_set(&rs, i, off, (size_t)len, i < 4 ? W_EARLY : W_LATER, 0);
    }
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    fwdio_file_stats_t fst;
    TC_EXPECT(fwdio_file_stats(atomic_load(&rs.f), &fst), FWDIO_OK, "fwdio_file_stats");
    fwdio_runtime_stats_t rst;
    TC_EXPECT(fwdio_runtime_stats(g.rt, &rst), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(rst.writer_budget == cfg.writer_buffer,
             "writer_budget %" PRIu64 ", configured %" PRIu64, rst.writer_budget,
             (uint64_t)cfg.writer_buffer);
    uint64_t bound = rst.writer_budget + unit;
    TC_CHECK(rst.writer_peak <= bound,
             "a reader held %" PRIu64 " bytes (writer_peak), more than the budget %" PRIu64
             " + one unit %" PRIu64,
             rst.writer_peak, rst.writer_budget, unit);
    TC_CHECK(fst.peak_writer_bytes <= bound,
             "a reader held %" PRIu64 " bytes of the file (peak_writer_bytes), more than the "
             "budget %" PRIu64 " + one unit %" PRIu64,
             fst.peak_writer_bytes, rst.writer_budget, unit);
    uint64_t peak = max_u64(g.comm, rst.writer_peak);
    uint64_t from_storage = sum_u64(g.comm, fst.bytes_from_storage);
    TC_CHECK(peak > 0, "no reader held any bytes (writer_peak 0 on every rank)");
    if (g.rank == 0)
        tc_note("budget %" PRIu64 ": largest writer_peak %" PRIu64 ", %" PRIu64
                " bytes pread for a file of %" PRIu64,
                rst.writer_budget, peak, from_storage, m.size);
    reads_free(&rs);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
    model_free(&m);

    /* 2. the default budget: every rank reads the whole file at once.
     * Each unit is pread once while it stays in its reader's memory. The
     * bound below assumes the whole file fits in every reader's budget (8 MiB
     * + a bit against the default 64 MiB: no unit is dropped to make room)
     * and that every rank's request reaches the readers while the units it
     * wants are still held: each rank issues its one read right after
     * fwdio_open_read, before ready, so all requests are normally in before
     * the first pread ends. 2x leaves room for a rank whose request comes
     * late on a loaded, oversubscribed machine (its units read again), and is
     * still well below the P x size of a file read once per rank (P >= 3). */
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    model_plan(&m, "once", &shared, (8 << 20) + 999, seed + 1, 300000, g.size, 8, 0);
    write_plain(g.comm, &m);
    opts_fixed(&o, unit, 4 * unit, 0, FWDIO_LAYOUT_BLOCK);
    reader_init(&rs, &g, &m, &o, 1, "every rank reads the whole file");
    rd_set(&rs, 0, 0, (size_t)m.size, W_EARLY, 0);
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    TC_EXPECT(fwdio_file_stats(atomic_load(&rs.f), &fst), FWDIO_OK, "fwdio_file_stats");
    from_storage = sum_u64(g.comm, fst.bytes_from_storage);
    uint64_t units = sum_u64(g.comm, fst.pwrite_calls);
    uint64_t nunits = (m.size + unit - 1) / unit;
    TC_CHECK(from_storage >= m.size && from_storage <= 2 * m.size,
             "%d ranks each read the whole file of %" PRIu64 " bytes: the readers pread %" PRIu64
             " bytes (%.2fx), expected between 1x and 2x",
             g.size, m.size, from_storage, (double)from_storage / (double)m.size);
    TC_CHECK(units >= nunits && units <= 2 * nunits,
             "the readers pread %" PRIu64 " units of a file of %" PRIu64
             ", expected between 1x and 2x",
             units, nunits);
    if (g.rank == 0)
        tc_note("%d ranks read the whole file of %" PRIu64 " bytes: %" PRIu64
                " bytes pread (%.3fx) in %" PRIu64 " units (%" PRIu64 " in the file)",
                g.size, m.size, from_storage, (double)from_storage / (double)m.size, units,
                nunits);
    reads_free(&rs);
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- main ------------------------------------------------------------------ */

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --case random|ranks|after_write|multi|still_open|range|open_fail|fault|"
            "contract|misuse|budgets\n"
            "       [--seed S] [--rounds N] [--reads N] [--max-bytes B] [--writer-buffer B]\n"
            "       [--expect STATUS] [--errno N] [--fault-rank R]\n"
            "       [--timeout SEC] [--callback-mode poll|progress]\n",
            prog);
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *which = NULL;
    uint64_t seed = 1;
    int rounds = 3, nreads = 80, expect = FWDIO_OK, err = 0, fault_rank = -1;
    size_t max_bytes = 8u << 20;
    uint64_t writer_buffer = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--reads") && i + 1 < argc)
            nreads = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
            max_bytes = (size_t)tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--writer-buffer") && i + 1 < argc)
            writer_buffer = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect = status_named(argv[++i]);
        else if (!strcmp(argv[i], "--errno") && i + 1 < argc)
            err = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--fault-rank") && i + 1 < argc)
            fault_rank = (int)tc_parse_long(argv[++i]);
        else
            usage(argv[0]);
    }
    if (!which)
        usage(argv[0]);
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir(); /* collective: before any sub-communicator */
    if (!strcmp(which, "random"))
        case_random(seed, rounds, nreads, max_bytes, writer_buffer);
    else if (!strcmp(which, "ranks"))
        case_ranks(seed, nreads);
    else if (!strcmp(which, "after_write"))
        case_after_write(seed, nreads);
    else if (!strcmp(which, "multi"))
        case_multi(seed, nreads);
    else if (!strcmp(which, "still_open"))
        case_still_open(seed);
    else if (!strcmp(which, "range"))
        case_range(seed);
    else if (!strcmp(which, "open_fail"))
        case_open_fail(seed);
    else if (!strcmp(which, "fault"))
        case_fault(seed, expect, err, fault_rank);
    else if (!strcmp(which, "contract"))
        case_contract(seed);
    else if (!strcmp(which, "misuse"))
        case_misuse(seed);
    else if (!strcmp(which, "budgets"))
        case_budgets(seed, writer_buffer);
    else
        usage(argv[0]);
    char name[128];
    snprintf(name, sizeof name, "test_reads --case %s --seed %" PRIu64 "%s", which, seed,
             g_mode == FWDIO_CALLBACKS_ON_PROGRESS ? " (progress)" : "");
    return tc_finish(name);
}
