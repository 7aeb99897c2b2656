/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write combining on its own (forwarder/write/combine.h), on two ranks so that a
 * file has two writers (cyclic layout, 4 KiB stripes: writer s mod 2) and
 * each rank's writes reach one writer on its own rank and one on the other.
 * combine_size is 1024 bytes, so a message of one piece holds 1000 data
 * bytes (8 bytes of header, 16 of piece table).
 *
 * Each rank writes its own half of the file through
 * fwdioi_combine_reserve_locked/copy/finish_locked (ft_combine_write_locked), its bytes reserved first as fwdio_write does,
 * and inspects the open messages with the runtime lock held (which also keeps
 * the progress thread from flushing them meanwhile):
 *
 *   append     small writes land in the open message of the writer owning
 *              their stripe, copied (the source is overwritten after the
 *              call); a write that continues the last piece extends it, one
 *              that does not starts a new piece, one across a stripe
 *              boundary goes to both writers; everything counts as staged
 *   fill       a message is sealed and queued the moment it is full, header
 *              and piece table included: 2500 contiguous bytes make two
 *              sealed messages and 500 open bytes, 500 more seal the third
 *              with nothing left open; nine 100-byte pieces with
 *              gaps fill one message with 8 pieces and 72 bytes of the ninth,
 *              its other 28 bytes opening the next
 *   flush      flush_file seals one file's open messages only, flush_all
 *              every file's; sealed messages stay staged until sent, and
 *              the staging comes back once they are
 *   stale      without any fwdio call, the progress thread sends an open
 *              message once its first byte is poll_max_us old, not before
 *   close      fwdio_close seals the file's open messages before its close
 *              task, so they are counted and written
 *
 * In the end every rank's half of each file is read back byte for byte, and
 * each rank's fwdio_file_stats().messages_sent must be exactly the number of
 * messages the steps above made (every step seals or flushes in one critical
 * section, so no flush by age can split a message differently).
 */
#include "forwarder_test.h"

#include "write/combine.h"
#include "pattern.h"
#include "write/staging.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { COMBINE = 1024, STRIPE = 4096, UNIT = 1024, HALF = 8 * STRIPE };
static const uint64_t SIZE = 2 * HALF + 100;
/* A flush by age happens poll_max_us after the first byte, checked by the
 * `stale` step; the other steps hold the lock and never wait that long. */
static const unsigned POLL_MAX_US = 1000000;
static const uint64_t PIECE = sizeof(fwdioi_piece_t), HEADER = sizeof(fwdioi_wire_header_t);

/* One file as this rank writes it: the bytes expected in its half, and how
 * many messages it should have sent. */
typedef struct tfile {
    fwdio_file_t *f;
    char path[4096];
    uint64_t seed;
    uint64_t region; /* this rank's half: [region, region + region_len) */
    uint64_t region_len;
    uint8_t *expect;
    uint64_t messages;
} tfile_t;

static fwdio_runtime_t *g_rt;

static void tfile_open(tfile_t *t, const char *name, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    tc_path(t->path, sizeof t->path, name);
    t->seed = seed;
    t->region = (uint64_t)tc_rank * HALF;
    t->region_len = tc_rank == tc_size - 1 ? SIZE - t->region : HALF;
    t->expect = calloc(t->region_len, 1);
    fwdio_options_t o = ft_options(STRIPE, UNIT, 2, FWDIO_LAYOUT_CYCLIC);
    TC_EXPECT(fwdio_open(g_rt, t->path, SIZE, &o, NULL, &t->f), FWDIO_OK, "fwdio_open");
    if (!t->f)
        MPI_Abort(MPI_COMM_WORLD, 1);
    TC_CHECK(t->f->plan.nwriters == 2, "%s has %d writers, not 2", name, t->f->plan.nwriters);
}

/* Offset of the k-th stripe of this rank's half (its writer is k mod 2). */
static uint64_t stripe_at(const tfile_t *t, int k) { return t->region + (uint64_t)k * STRIPE; }

/* What fwdio_write does for a small write, the runtime lock held: reserve,
 * then combine. The source buffer is overwritten afterwards: the open
 * messages must hold copies. */
static uint8_t g_src[COMBINE]; /* the caller's buffer, overwritten after each write */

static void cwrite_locked(tfile_t *t, uint64_t offset, uint64_t len)
{
    uint8_t *buf = g_src;
    if (len > sizeof g_src || offset < t->region || offset + len > t->region + t->region_len) {
        tc_fail("bad test write [%llu, +%llu)", (unsigned long long)offset,
                (unsigned long long)len);
        return;
    }
    pattern_fill(buf, len, offset, t->seed);
    int rc = fwdioi_staging_reserve_locked(t->f, len, 0);
    if (rc == FWDIO_OK)
        rc = ft_combine_write_locked(t->f, buf, len, offset);
    TC_EXPECT(rc, FWDIO_OK, "reserve + combine");
    memset(buf, 0xa5, len);
    pattern_fill(t->expect + (offset - t->region), len, offset, t->seed);
}

/* The open message of writer w holds exactly `n` pieces `want` (offset,
 * len), whose bytes are the file's pattern, in that order. */
typedef struct span {
    uint64_t offset, len;
} span_t;

static void expect_open(const tfile_t *t, int w, const span_t *want, size_t n, const char *what)
{
    const fwdioi_combine_t *c = &t->f->combine[w];
    if (n == 0) {
        TC_CHECK(c->open == NULL, "%s: writer %d has an open message of %llu bytes", what, w,
                 c->open ? (unsigned long long)c->open->payload : 0ull);
        return;
    }
    if (!c->open) {
        tc_fail("%s: writer %d has no open message", what, w);
        return;
    }
    const fwdioi_msg_t *m = c->open;
    uint64_t payload = 0;
    for (size_t i = 0; i < n; i++)
        payload += want[i].len;
    TC_CHECK(m->writer == w && m->file == t->f && m->staged && !m->lent,
             "%s: writer %d's open message: writer %d, staged %d", what, w, m->writer, m->staged);
    TC_CHECK(c->npieces == n && m->payload == payload,
             "%s: writer %d's open message has %zu pieces and %llu bytes, not %zu and %llu", what,
             w, c->npieces, (unsigned long long)m->payload, n, (unsigned long long)payload);
    TC_CHECK(HEADER + m->payload + c->npieces * PIECE < COMBINE,
             "%s: writer %d's open message is full (%llu wire bytes) but not sealed", what, w,
             (unsigned long long)(HEADER + m->payload + c->npieces * PIECE));
    const uint8_t *data = m->wire + HEADER;
    for (size_t i = 0; i < n && i < c->npieces; i++) {
        TC_CHECK(c->pieces[i].offset == want[i].offset && c->pieces[i].len == want[i].len,
                 "%s: writer %d piece %zu is [%llu, +%llu), not [%llu, +%llu)", what, w, i,
                 (unsigned long long)c->pieces[i].offset, (unsigned long long)c->pieces[i].len,
                 (unsigned long long)want[i].offset, (unsigned long long)want[i].len);
        for (uint64_t j = 0; j < want[i].len && j < c->pieces[i].len; j++) {
            if (data[j] != pattern_byte(t->seed, want[i].offset + j)) {
                tc_fail("%s: writer %d: byte %llu in the open message is wrong", what, w,
                        (unsigned long long)(want[i].offset + j));
                break;
            }
        }
        data += c->pieces[i].len;
    }
}

static uint64_t combining_files(void) { return (uint64_t)g_rt->combining_files; }

/* ---- the steps ---- */

static void step_append(tfile_t *a)
{
    tc_phase("append");
    const uint64_t base = stripe_at(a, 0); /* writer 0's stripe; writer 1's follows */
    fwdioi_rt_lock(g_rt->engine);
    const uint64_t staged0 = g_rt->staged, files0 = combining_files();
    TC_CHECK(atomic_load(&a->f->combine_since) == 0 && a->f->combine[0].open == NULL,
             "a new file has open messages");
    cwrite_locked(a, base, 10);
    expect_open(a, 0, (span_t[]){{base, 10}}, 1, "first write");
    expect_open(a, 1, NULL, 0, "first write");
    TC_CHECK(atomic_load(&a->f->combine_since) != 0 && combining_files() == files0 + 1,
             "after the first write the file is not combining (since %llu, %llu files)",
             (unsigned long long)atomic_load(&a->f->combine_since),
             (unsigned long long)combining_files());
    cwrite_locked(a, base + 10, 20); /* continues the piece */
    expect_open(a, 0, (span_t[]){{base, 30}}, 1, "adjacent write");
    cwrite_locked(a, base + 100, 5); /* after a gap: a piece of its own */
    expect_open(a, 0, (span_t[]){{base, 30}, {base + 100, 5}}, 2, "write after a gap");
    cwrite_locked(a, base + STRIPE - 20, 40); /* across the boundary: both writers */
    expect_open(a, 0, (span_t[]){{base, 30}, {base + 100, 5}, {base + STRIPE - 20, 20}}, 3,
                "write across a stripe boundary");
    expect_open(a, 1, (span_t[]){{base + STRIPE, 20}}, 1, "write across a stripe boundary");
    TC_CHECK(g_rt->staged == staged0 + 75 && a->f->staged_file == 75 &&
                 a->f->stats.peak_staged_bytes >= 75,
             "append: %llu bytes staged (%llu before), %llu for the file; 75 written",
             (unsigned long long)g_rt->staged, (unsigned long long)staged0,
             (unsigned long long)a->f->staged_file);
    TC_CHECK(combining_files() == files0 + 1, "a file with two open messages counts %llu times",
             (unsigned long long)(combining_files() - files0));

    fwdioi_combine_flush_file_locked(a->f);
    expect_open(a, 0, NULL, 0, "flush_file");
    expect_open(a, 1, NULL, 0, "flush_file");
    TC_CHECK(atomic_load(&a->f->combine_since) == 0 && combining_files() == files0,
             "flush_file left the file combining");
    TC_CHECK(g_rt->staged == staged0 + 75,
             "sealed messages are not staged until sent (%llu staged, %llu expected)",
             (unsigned long long)g_rt->staged, (unsigned long long)(staged0 + 75));
    fwdioi_rt_unlock(g_rt->engine);
    a->messages += 2;
    /* queued for the progress thread: sent, and their staging given back */
    TC_CHECK(ft_wait_staged(g_rt, staged0, 60) == 0,
             "the flushed messages were not sent: %llu bytes still staged",
             (unsigned long long)ft_staged(g_rt));
}

static void step_fill(tfile_t *a)
{
    tc_phase("fill");
    const uint64_t data1 = COMBINE - HEADER - PIECE; /* 1000 bytes in a one-piece message */
    const uint64_t base = stripe_at(a, 2);           /* writer 0 */
    const uint64_t gaps = stripe_at(a, 3);           /* writer 1 */
    fwdioi_rt_lock(g_rt->engine);
    const uint64_t staged0 = g_rt->staged;
    /* 2500 contiguous bytes in writes of 300: messages of 1000, 1000, 500 */
    for (uint64_t off = 0; off < 2500; off += 300) {
        cwrite_locked(a, base + off, off + 300 <= 2500 ? 300 : 2500 - off);
        if (off == 900) /* 100 bytes completed the first message, 200 opened the second */
            expect_open(a, 0, (span_t[]){{base + data1, 200}}, 1, "fill: a write across a seal");
    }
    expect_open(a, 0, (span_t[]){{base + 2 * data1, 500}}, 1, "fill: 2500 contiguous bytes");
    cwrite_locked(a, base + 2500, 500); /* exactly full: sealed at once, nothing left open */
    expect_open(a, 0, NULL, 0, "fill: a write that fills a message exactly");
    /* nine 100-byte pieces with gaps of 100: eight take 936 wire bytes, the
     * ninth fits 72 bytes (1024 exactly) and the other 28 open a message */
    for (int i = 0; i < 9; i++)
        cwrite_locked(a, gaps + 200 * (uint64_t)i, 100);
    expect_open(a, 1, (span_t[]){{gaps + 1600 + 72, 28}}, 1, "fill: nine pieces with gaps");
    TC_CHECK(g_rt->staged == staged0 + 3000 + 900, "fill: %llu bytes staged, %llu expected",
             (unsigned long long)g_rt->staged, (unsigned long long)(staged0 + 3900));
    /* flush_all seals the rest of every file (one message, here) */
    fwdioi_combine_flush_all_locked(g_rt);
    expect_open(a, 0, NULL, 0, "flush_all");
    expect_open(a, 1, NULL, 0, "flush_all");
    TC_CHECK(combining_files() == 0 && atomic_load(&a->f->combine_since) == 0,
             "flush_all left %llu files combining", (unsigned long long)combining_files());
    fwdioi_rt_unlock(g_rt->engine);
    a->messages += 3 + 2; /* writer 0: three full; writer 1: one full, one flushed */
    TC_CHECK(ft_wait_staged(g_rt, staged0, 60) == 0,
             "fill: the sealed messages were not sent: %llu bytes still staged",
             (unsigned long long)ft_staged(g_rt));
}

static void step_two_files(tfile_t *a, tfile_t *b)
{
    tc_phase("flush one file, then all");
    fwdioi_rt_lock(g_rt->engine);
    const uint64_t staged0 = g_rt->staged;
    cwrite_locked(a, stripe_at(a, 4), 64);
    cwrite_locked(b, stripe_at(b, 1), 64);
    TC_CHECK(combining_files() == 2, "two files with open messages, %llu counted",
             (unsigned long long)combining_files());
    fwdioi_combine_flush_file_locked(a->f); /* a only */
    expect_open(a, 0, NULL, 0, "flush_file of another file");
    expect_open(b, 1, (span_t[]){{stripe_at(b, 1), 64}}, 1, "flush_file of another file");
    TC_CHECK(combining_files() == 1, "after flush_file %llu files combine, not 1",
             (unsigned long long)combining_files());
    cwrite_locked(a, stripe_at(a, 4) + 64, 64); /* a new message: the old one is sealed */
    expect_open(a, 0, (span_t[]){{stripe_at(a, 4) + 64, 64}}, 1, "a write after flush_file");
    fwdioi_combine_flush_all_locked(g_rt);
    expect_open(a, 0, NULL, 0, "flush_all of two files");
    expect_open(b, 1, NULL, 0, "flush_all of two files");
    TC_CHECK(combining_files() == 0, "flush_all left %llu files combining",
             (unsigned long long)combining_files());
    fwdioi_combine_flush_all_locked(g_rt); /* nothing open: nothing happens */
    TC_CHECK(combining_files() == 0 && g_rt->staged == staged0 + 192,
             "flush_all with nothing open changed something");
    fwdioi_rt_unlock(g_rt->engine);
    a->messages += 2;
    b->messages += 1;
    TC_CHECK(ft_wait_staged(g_rt, staged0, 60) == 0,
             "two files: the sealed messages were not sent: %llu bytes still staged",
             (unsigned long long)ft_staged(g_rt));
}

static void step_stale(tfile_t *a)
{
    tc_phase("stale");
    /* a stripe of the other rank's writer: the message goes through MPI */
    const uint64_t off = stripe_at(a, tc_rank == 0 ? 5 : 6) + 100;
    const int w = (int)((off / STRIPE) % 2);
    fwdioi_rt_lock(g_rt->engine);
    const uint64_t staged0 = g_rt->staged;
    cwrite_locked(a, off, 50);
    const uint64_t since = atomic_load(&a->f->combine_since);
    fwdioi_rt_unlock(g_rt->engine);
    a->messages += 1;

    /* No fwdio call from here on (fwdio_poll, _test and _wait flush): only
     * the progress thread can send the message. Not before its age... */
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    fwdioi_rt_lock(g_rt->engine);
    int sealed = a->f->combine[w].open == NULL;
    uint64_t age_ns = fwdioi_now_ns() - since;
    fwdioi_rt_unlock(g_rt->engine);
    TC_CHECK(!sealed || age_ns >= (uint64_t)POLL_MAX_US * 1000,
             "an open message was sent after %.3f s, before its age of %.3f s", age_ns * 1e-9,
             POLL_MAX_US * 1e-6);
    /* ... and at its age, by the progress thread alone */
    TC_CHECK(ft_wait_staged(g_rt, staged0, 60) == 0,
             "an open message was never sent by age: %llu bytes still staged",
             (unsigned long long)ft_staged(g_rt));
    fwdioi_rt_lock(g_rt->engine);
    expect_open(a, w, NULL, 0, "stale");
    TC_CHECK(atomic_load(&a->f->combine_since) == 0 && combining_files() == 0,
             "the file still counts as combining after its flush by age");
    fwdioi_rt_unlock(g_rt->engine);
}

static void step_close(tfile_t *a)
{
    tc_phase("close");
    fwdioi_rt_lock(g_rt->engine);
    cwrite_locked(a, stripe_at(a, 6) + STRIPE - 8, 16); /* writers 0 and 1 */
    fwdioi_rt_unlock(g_rt->engine);
    a->messages += 2;
    TC_EXPECT(fwdio_close(a->f), FWDIO_OK, "fwdio_close");
    fwdioi_rt_lock(g_rt->engine);
    expect_open(a, 0, NULL, 0, "after fwdio_close");
    expect_open(a, 1, NULL, 0, "after fwdio_close");
    fwdioi_rt_unlock(g_rt->engine);
}

/* Wait for the file and check this rank's half of it and its message count. */
static void finish_file(tfile_t *t, int do_close)
{
    tc_phase("finish %s", t->path);
    if (do_close)
        TC_EXPECT(fwdio_close(t->f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(t->f), FWDIO_OK, t->path);
    fwdio_file_stats_t st;
    fwdio_file_stats(t->f, &st);
    TC_CHECK(st.messages_sent == t->messages,
             "%s: this rank sent %llu messages, the steps made %llu", t->path,
             (unsigned long long)st.messages_sent, (unsigned long long)t->messages);
    fwdioi_rt_lock(g_rt->engine);
    TC_CHECK(t->f->staged_file == 0, "%s: %llu bytes still staged for the completed file",
             t->path, (unsigned long long)t->f->staged_file);
    fwdioi_rt_unlock(g_rt->engine);
    fwdio_file_free(t->f);
    /* every rank's half: the file is complete everywhere once wait returns */
    int fd = open(t->path, O_RDONLY);
    uint8_t *got = malloc(t->region_len);
    ssize_t n = fd >= 0 ? pread(fd, got, t->region_len, (off_t)t->region) : -1;
    if (n != (ssize_t)t->region_len) {
        tc_fail("%s: cannot read [%llu, +%llu): %s", t->path, (unsigned long long)t->region,
                (unsigned long long)t->region_len, fd < 0 || n < 0 ? strerror(errno) : "short");
    } else {
        for (uint64_t i = 0; i < t->region_len; i++) {
            if (got[i] != t->expect[i]) {
                tc_fail("%s: byte %llu is %u, expected %u", t->path,
                        (unsigned long long)(t->region + i), got[i], t->expect[i]);
                break;
            }
        }
    }
    if (fd >= 0)
        close(fd);
    free(got);
    free(t->expect);
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    for (int i = 1; i < argc; i++) {
        if (!tc_common_option(argc, argv, &i, &timeout, &mode)) {
            fprintf(stderr, "usage: %s [--timeout SEC] [--callback-mode poll|progress]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (tc_size != 2) {
        if (tc_rank == 0)
            fprintf(stderr, "test_combine runs on two ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.combine_size = COMBINE;
    cfg.max_message_size = 4096;
    cfg.staging_buffer = 1 << 20;
    cfg.poll_max_us = POLL_MAX_US;
    cfg.callback_mode = mode;
    g_rt = ft_runtime(&cfg);
    TC_CHECK(fwdioi_rt_config(g_rt->engine)->combine_size == COMBINE, "combine_size %zu in force",
             fwdioi_rt_config(g_rt->engine)->combine_size);

    tfile_t a, b;
    tfile_open(&a, "combine-a", 11);
    step_append(&a);
    step_fill(&a);
    tfile_open(&b, "combine-b", 12);
    step_two_files(&a, &b);
    finish_file(&b, 1);
    step_stale(&a);
    step_close(&a);
    finish_file(&a, 0);

    TC_CHECK(ft_staged(g_rt) == 0, "%llu bytes staged at the end",
             (unsigned long long)ft_staged(g_rt));
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_combine");
}
