/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads cases: read files that fail on every rank. A missing file and a
 * directory (open_fail), pread faults injected with FWDIO_FAULT (fault), and
 * ranks that disagree (contract); each time the runtime's next file reads
 * right.
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

void case_open_fail(uint64_t seed)
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

void case_fault(uint64_t seed, int expect, int err, int fault_rank)
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

void case_contract(uint64_t seed)
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
