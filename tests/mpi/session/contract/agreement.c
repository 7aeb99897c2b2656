/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_contract cases: ranks that disagree (mismatch_size, mismatch_order,
 * mismatch_writers, mismatch_atomic, callback_open) and calls that cannot
 * work (huge, intercomm).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "contract.h"
#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

/* One file opened with `size` (rank `odd_rank` opens with odd_size, or
 * another change made by `tweak`), written, closed, waited for. */
void mismatch_case(const char *what, void (*tweak)(fwdio_options_t *, uint64_t *),
                   const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    tc_path(path, sizeof path, what);
    old_file(path, 3 * STRIPE + 17, 99);
    fwdio_options_t o;
    options(&o);
    uint64_t size = SIZE;
    if (tc_rank == tc_size - 1)
        tweak(&o, &size);
    fwdio_file_t *f;
    tc_phase("open %s", what);
    TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    g_writes_may_fail = 1; /* refused once the failed check is known */
    write_share(f, SIZE < size ? SIZE : size, 1);
    g_writes_may_fail = 0;
    fwdio_close(f);
    tc_phase("wait %s", what);
    expect_status(f, fwdio_wait(f), FWDIO_EINVAL, text, what);
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, 3 * STRIPE + 17, 99) == 0,
             "%s: the old file was touched", what);
    /* the runtime goes on: the next file is written whole */
    tc_path(path, sizeof path, "after");
    options(&o);
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "fwdio_open after");
    write_share(f, SIZE, 2);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the file after");
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 2) == 0, "the file after");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

void other_size(fwdio_options_t *o, uint64_t *size)
{
    (void)o;
    *size += 4096;
}
void other_writers(fwdio_options_t *o, uint64_t *size)
{
    (void)size;
    o->writers = 1;
}
void other_atomic(fwdio_options_t *o, uint64_t *size)
{
    (void)size;
    o->atomic_replace = 1;
}

void case_mismatch_order(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char a[4096], b[4096];
    tc_path(a, sizeof a, "A");
    tc_path(b, sizeof b, "B");
    old_file(a, 2 * STRIPE, 98);
    old_file(b, 2 * STRIPE + 1, 97);
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *fa, *fb;
    if (tc_rank == 0) {
        TC_EXPECT(fwdio_open(rt, a, SIZE, &o, NULL, &fa), FWDIO_OK, "open A");
        TC_EXPECT(fwdio_open(rt, b, SIZE, &o, NULL, &fb), FWDIO_OK, "open B");
    } else {
        TC_EXPECT(fwdio_open(rt, b, SIZE, &o, NULL, &fb), FWDIO_OK, "open B");
        TC_EXPECT(fwdio_open(rt, a, SIZE, &o, NULL, &fa), FWDIO_OK, "open A");
    }
    g_writes_may_fail = tc_size > 1;
    write_share(fa, SIZE, 3);
    write_share(fb, SIZE, 4);
    g_writes_may_fail = 0;
    fwdio_close(fa);
    fwdio_close(fb);
    tc_phase("wait A and B");
    int sa = fwdio_wait(fa), sb = fwdio_wait(fb);
    if (tc_size > 1) {
        expect_status(fa, sa, FWDIO_EINVAL, "path", "A");
        expect_status(fb, sb, FWDIO_EINVAL, "path", "B");
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, a, 2 * STRIPE, 98) == 0, "old A was touched");
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, b, 2 * STRIPE + 1, 97) == 0, "old B was touched");
    }
    fwdio_file_free(fa);
    fwdio_file_free(fb);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- callback_open ---- */

static fwdio_runtime_t *g_rt;
static fwdio_file_t *g_from_callback;
static char g_cb_path[4096];

static void open_from_ready(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)st;
    (void)f;
    (void)status;
    fwdio_options_t o;
    options(&o);
    TC_EXPECT(fwdio_open(g_rt, g_cb_path, SIZE, &o, NULL, &g_from_callback), FWDIO_OK,
              "open from a callback");
    g_writes_may_fail = tc_size > 1;
    write_share(g_from_callback, SIZE, 6);
    g_writes_may_fail = 0;
    fwdio_close(g_from_callback);
}

void case_callback_open(void)
{
    g_rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    char a[4096], c[4096];
    tc_path(a, sizeof a, "first");
    tc_path(g_cb_path, sizeof g_cb_path, "from_callback");
    tc_path(c, sizeof c, "from_main");
    fwdio_options_t o;
    options(&o);
    tc_cbstate_t cb;
    tc_cb_init(&cb);
    cb.on_ready = open_from_ready;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&cb);
    fwdio_file_t *fa, *fc;
    TC_EXPECT(fwdio_open(g_rt, a, SIZE, &o, &cbs, &fa), FWDIO_OK, "open first");
    write_share(fa, SIZE, 5);
    fwdio_close(fa);
    /* rank 0 runs the callback (and so opens from_callback) before it opens
     * from_main; the others the other way round */
    if (tc_rank == 0)
        TC_EXPECT(fwdio_wait(fa), FWDIO_OK, "first");
    TC_EXPECT(fwdio_open(g_rt, c, SIZE, &o, NULL, &fc), FWDIO_OK, "open from_main");
    g_writes_may_fail = tc_size > 1;
    write_share(fc, SIZE, 7);
    g_writes_may_fail = 0;
    fwdio_close(fc);
    if (tc_rank != 0)
        TC_EXPECT(fwdio_wait(fa), FWDIO_OK, "first");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, a, SIZE, 5) == 0, "first");
    int sb = fwdio_wait(g_from_callback), sc = fwdio_wait(fc);
    int want = tc_size > 1 ? FWDIO_EINVAL : FWDIO_OK;
    expect_status(g_from_callback, sb, want, tc_size > 1 ? "path" : NULL, "from_callback");
    expect_status(fc, sc, want, tc_size > 1 ? "path" : NULL, "from_main");
    if (tc_size > 1) /* no bytes were written for either */
        TC_CHECK(!exists(g_cb_path) && !exists(c), "a file that failed its check was created");
    fwdio_file_free(fa);
    fwdio_file_free(fc);
    fwdio_file_free(g_from_callback);
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
}

void case_huge(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    tc_path(path, sizeof path, "huge");
    /* (UINT64_MAX is FWDIO_SIZE_GROWS: a stream, test_streams) */
    const uint64_t sizes[] = {UINT64_MAX - 1, (uint64_t)INT64_MAX,
                              (uint64_t)INT64_MAX + 1, (uint64_t)INT64_MAX - 100};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fwdio_file_t *f = NULL;
        TC_EXPECT(fwdio_open(rt, path, sizes[i], NULL, NULL, &f), FWDIO_ERANGE, "huge size");
    }
    TC_CHECK(!exists(path), "a refused open created the file");
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *f;
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "open");
    uint8_t b[16] = {0};
    TC_EXPECT(fwdio_write(f, b, sizeof b, UINT64_MAX - 8), FWDIO_ERANGE, "offset near the end");
    TC_EXPECT(fwdio_write(f, b, sizeof b, SIZE - 8), FWDIO_ERANGE, "past the size");
    TC_EXPECT(fwdio_set_commit(f, b, sizeof b, UINT64_MAX - 4), FWDIO_ERANGE, "huge commit");
    write_share(f, SIZE, 14);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the file");
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 14) == 0, "the file");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

void case_intercomm(void)
{
    fwdio_runtime_t *rt = NULL;
    TC_EXPECT(fwdio_init(MPI_COMM_NULL, NULL, &rt), FWDIO_EINVAL, "MPI_COMM_NULL");
    if (tc_size < 2)
        return;
    MPI_Comm half, inter;
    int color = tc_rank < tc_size / 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, tc_rank, &half);
    int remote_leader = color ? tc_size / 2 : 0;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 7, &inter);
    TC_EXPECT(fwdio_init(inter, NULL, &rt), FWDIO_EINVAL, "intercommunicator");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}
