/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads: the reading engine (reads.h). A reader holds a plan of reads,
 * each issued at one of the moments a read may be issued (before ready, from
 * the ready callback, from a second thread, from another read's done, after
 * ready) into a buffer between guard bytes; it opens, runs and closes the
 * read file, then verifies every read's callback and bytes against the model
 * and, collectively, the callbacks and stats of every rank.
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
#include "reads.h"
#include "test_common.h"

/* ---- reading: the engine ------------------------------------------------- */

static const char *const when_names[] = {"before ready", "from the ready callback",
                                         "from a second thread", "from a read's callback",
                                         "after ready"};

static void read_done(fwdio_file_t *f, void *buf, int status, void *arg);

/* The done of reads that must be refused at the call. */
atomic_int g_never;
void never_done(fwdio_file_t *f, void *buf, int status, void *arg)
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

void reader_init(reader_t *rs, group_t *g, const model_t *m, const opts_t *ro, int n,
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
rd_t *rd_set(reader_t *rs, int i, uint64_t off, size_t len, int when, int null_buf)
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
void plan_random(reader_t *rs, tc_rng_t *shared, tc_rng_t *mine, size_t max_bytes)
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
void reads_open(reader_t *rs)
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
void reads_close(reader_t *rs)
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
int reads_wait(reader_t *rs)
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
int reads_run(reader_t *rs)
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
int reads_verify(reader_t *rs)
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
void reads_collective(reader_t *rs)
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

void reads_free(reader_t *rs)
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
void read_random(group_t *g, const model_t *m, const opts_t *ro, uint64_t seed, int nreads,
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
uint64_t pick_size(tc_rng_t *r)
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
