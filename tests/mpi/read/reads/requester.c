/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads cases: what the requesting rank is refused or told. Reads past
 * the end of the file (range), and calls that cannot work, refused at the
 * call (misuse).
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

/* ---- case range: past the end --------------------------------------------- */

void case_range(uint64_t seed)
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

void case_misuse(uint64_t seed)
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
