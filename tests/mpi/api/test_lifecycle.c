/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runtime and file lifecycles.
 *
 *  1. fwdio_init / fwdio_finalize twice in one process (each time on a
 *     duplicate of MPI_COMM_WORLD that is freed right after fwdio_init), each
 *     runtime writing and verifying a file.
 *  2. fwdio_wait and fwdio_test before fwdio_close: FWDIO_ENOTCLOSED and
 *     done == 0, without changing anything; the file then completes normally.
 *  3. fwdio_file_free of an in-flight file, after fwdio_close and without it:
 *     the file still completes (its complete callback runs once, FWDIO_OK)
 *     and verifies.
 *  4. Two runtimes at once on disjoint halves of MPI_COMM_WORLD (2+ ranks),
 *     each writing its own file.
 *  5. fwdio_finalize with a file still open on this rank, a closed file not
 *     waited for and a released file not closed: finalize closes and drains
 *     them, their callbacks run exactly once with FWDIO_OK and every byte is
 *     in the files afterwards.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static fwdio_runtime_t *start(MPI_Comm comm)
{
    return tc_start_runtime(comm, g_mode);
}

typedef struct tfile {
    const char *name;
    char path[4096];
    uint64_t size, seed;
    tc_cbstate_t cb;
    fwdio_file_t *f;
    MPI_Comm comm;
} tfile_t;

static void topen(fwdio_runtime_t *rt, MPI_Comm comm, tfile_t *t, const char *name,
                  uint64_t size, uint64_t seed, int writers)
{
    t->name = name;
    t->size = size;
    t->seed = seed;
    t->comm = comm;
    t->f = NULL;
    tc_path(t->path, sizeof t->path, name);
    tc_cb_init(&t->cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&t->cb);
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.stripe_size = 64 << 10;
    o.write_size = 16 << 10;
    o.writers = writers;
    o.layout = (seed & 1) ? FWDIO_LAYOUT_CYCLIC : FWDIO_LAYOUT_BLOCK;
    tc_phase("open %s", name);
    int rc = fwdio_open(rt, t->path, size, &o, &cbs, &t->f);
    if (rc != FWDIO_OK || !t->f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", t->path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Write this rank's slice (of the file's communicator) in pieces. */
static void twrite(tfile_t *t)
{
    int r, n;
    MPI_Comm_rank(t->comm, &r);
    MPI_Comm_size(t->comm, &n);
    uint64_t lo = t->size * (uint64_t)r / (uint64_t)n;
    uint64_t hi = t->size * (uint64_t)(r + 1) / (uint64_t)n;
    tc_phase("write %s", t->name);
    TC_EXPECT(tc_write_pattern(t->f, lo, hi - lo, t->seed, 25000), FWDIO_OK, t->name);
}

static void tverify(tfile_t *t)
{
    tc_phase("verify %s", t->name);
    if (tc_verify_full(t->comm, t->path, t->size, t->seed) == 0 && tc_rank == 0)
        tc_note("%s verified", t->name);
}

/* The version the library reports is the one of the header it was built
 * with, before any runtime exists. */
static void section_version(void)
{
    const char *v = fwdio_version();
    TC_CHECK(v != NULL && strcmp(v, FWDIO_VERSION_STRING) == 0,
             "fwdio_version() \"%s\", header \"%s\"", v ? v : "(null)", FWDIO_VERSION_STRING);
    TC_CHECK(fwdio_version_number() == FWDIO_VERSION_NUMBER,
             "fwdio_version_number() %d, header %d", fwdio_version_number(),
             FWDIO_VERSION_NUMBER);
}

static void section_twice(void)
{
    for (int round = 0; round < 2; round++) {
        tc_phase("init #%d", round + 1);
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        fwdio_runtime_t *rt = start(dup);
        MPI_Comm_free(&dup); /* fwdio keeps its own duplicate */
        tfile_t t;
        topen(rt, MPI_COMM_WORLD, &t, round ? "twice_2.dat" : "twice_1.dat",
              (1 << 20) + 7 * (uint64_t)round, 800 + (uint64_t)round, 2);
        twrite(&t);
        TC_EXPECT(fwdio_close(t.f), FWDIO_OK, "close");
        TC_EXPECT(fwdio_wait(t.f), FWDIO_OK, t.name);
        tc_cb_check(MPI_COMM_WORLD, &t.cb, t.name, FWDIO_OK, FWDIO_OK, g_mode, t.f);
        tverify(&t);
        fwdio_file_free(t.f);
        tc_phase("finalize #%d", round + 1);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
}

static void section_not_closed(fwdio_runtime_t *rt)
{
    tfile_t t;
    topen(rt, MPI_COMM_WORLD, &t, "not_closed.dat", 600000, 811, 3);
    twrite(&t);
    tc_phase("wait before close");
    TC_EXPECT(fwdio_wait(t.f), FWDIO_ENOTCLOSED, "fwdio_wait before fwdio_close");
    int done = -1;
    TC_EXPECT(fwdio_test(t.f, &done), FWDIO_OK, "fwdio_test before fwdio_close");
    TC_CHECK(done == 0, "fwdio_test before fwdio_close set done=%d", done);
    TC_CHECK(atomic_load(&t.cb.complete_count) == 0,
             "complete callback ran before this rank closed the file");
    TC_EXPECT(fwdio_wait(t.f), FWDIO_ENOTCLOSED, "second fwdio_wait before fwdio_close");
    TC_EXPECT(fwdio_close(t.f), FWDIO_OK, "close after ENOTCLOSED");
    TC_EXPECT(fwdio_wait(t.f), FWDIO_OK, "fwdio_wait after close");
    tc_cb_check(MPI_COMM_WORLD, &t.cb, t.name, FWDIO_OK, FWDIO_OK, g_mode, t.f);
    tverify(&t);
    fwdio_file_free(t.f);
}

static void section_free_in_flight(fwdio_runtime_t *rt)
{
    tfile_t a, b;
    topen(rt, MPI_COMM_WORLD, &a, "freed_after_close.dat", (3 << 19) + 3, 821, 2);
    topen(rt, MPI_COMM_WORLD, &b, "freed_unclosed.dat", (1 << 20) + 1, 822, 0);
    twrite(&a);
    twrite(&b);
    TC_EXPECT(fwdio_close(a.f), FWDIO_OK, "close freed_after_close.dat");
    tc_phase("free in-flight files");
    fwdio_file_free(a.f);
    fwdio_file_free(b.f); /* closes it on this rank */
    a.f = b.f = NULL;
    tc_phase("polling for the freed files");
    tc_poll_until_complete(rt, &a.cb);
    tc_poll_until_complete(rt, &b.cb);
    tc_cb_check(MPI_COMM_WORLD, &a.cb, a.name, FWDIO_OK, FWDIO_OK, g_mode, NULL);
    tc_cb_check(MPI_COMM_WORLD, &b.cb, b.name, FWDIO_OK, FWDIO_OK, g_mode, NULL);
    tverify(&a);
    tverify(&b);
}

static void section_split(void)
{
    if (tc_size < 2)
        return;
    int color = tc_rank % 2;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, color, tc_rank, &half);
    tc_phase("runtime on half %d", color);
    fwdio_runtime_t *rt = start(half);
    tfile_t t;
    topen(rt, half, &t, color ? "half_odd.dat" : "half_even.dat", 500000 + 1000 * (uint64_t)color,
          830 + (uint64_t)color, 0);
    twrite(&t);
    TC_EXPECT(fwdio_close(t.f), FWDIO_OK, "close half file");
    TC_EXPECT(fwdio_wait(t.f), FWDIO_OK, t.name);
    tc_cb_check(half, &t.cb, t.name, FWDIO_OK, FWDIO_OK, g_mode, t.f);
    int nw = fwdio_file_writers(t.f, NULL, 0);
    int hs;
    MPI_Comm_size(half, &hs);
    TC_CHECK(nw >= 1 && nw <= hs, "%s: %d writers in a communicator of %d ranks", t.name, nw, hs);
    tverify(&t);
    fwdio_file_free(t.f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize of the half runtime");
    MPI_Comm_free(&half);
}

static void section_finalize_drains(fwdio_runtime_t *rt)
{
    tfile_t open_f, closed_f, freed_f;
    topen(rt, MPI_COMM_WORLD, &open_f, "left_open.dat", (2 << 20) + 11, 841, 3);
    topen(rt, MPI_COMM_WORLD, &closed_f, "left_unwaited.dat", 400003, 842, 1);
    topen(rt, MPI_COMM_WORLD, &freed_f, "left_freed.dat", 300001, 843, 2);
    twrite(&open_f);
    twrite(&closed_f);
    twrite(&freed_f);
    TC_EXPECT(fwdio_close(closed_f.f), FWDIO_OK, "close left_unwaited.dat");
    fwdio_file_free(freed_f.f);
    tc_phase("fwdio_finalize with files in flight");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize with files in flight");
    /* The handles of open_f and closed_f were released by finalize. */
    tc_phase("checking files drained by fwdio_finalize");
    tc_cb_check(MPI_COMM_WORLD, &open_f.cb, open_f.name, FWDIO_OK, FWDIO_OK, g_mode, NULL);
    tc_cb_check(MPI_COMM_WORLD, &closed_f.cb, closed_f.name, FWDIO_OK, FWDIO_OK, g_mode, NULL);
    tc_cb_check(MPI_COMM_WORLD, &freed_f.cb, freed_f.name, FWDIO_OK, FWDIO_OK, g_mode, NULL);
    tverify(&open_f);
    tverify(&closed_f);
    tverify(&freed_f);
}

/* Is `name` one of the comma-separated words of `list`? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (end ? 1 : 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        else {
            fprintf(stderr, "usage: %s [--callback-mode poll|progress] [--timeout SEC]\n"
                            "  [--only SECTION[,SECTION...]]  sections: version,twice,not-closed,free,split,finalize\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();

#define WANT(name) (!only || listed(only, (name)))
    if (only && !WANT("version") && !WANT("twice") && !WANT("not-closed") && !WANT("free") &&
        !WANT("split") && !WANT("finalize"))
        tc_fail("--only %s names no section", only);
    if (WANT("version"))
        section_version();
    if (WANT("twice"))
        section_twice();
    fwdio_runtime_t *rt = start(MPI_COMM_WORLD);
    if (WANT("not-closed"))
        section_not_closed(rt);
    if (WANT("free"))
        section_free_in_flight(rt);
    if (WANT("split"))
        section_split();
    if (WANT("finalize"))
        section_finalize_drains(rt);
    else
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
#undef WANT

    return tc_finish("test_lifecycle");
}
