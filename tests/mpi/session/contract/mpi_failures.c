/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_contract cases: MPI calls that fail (tests/util/mpi_faults.h) while a
 * file is written (mpi_fault), read (read_mpi_fault) or grown step by step
 * (stream_mpi_fault): every rank sees the failure, nothing waits forever, and
 * the runtime's next file is right.
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

/* ---- MPI failures ---- */

/* The next file of a runtime after a failure: written whole (seed 21) and
 * ending with `expect`. */
static void write_next_file(fwdio_runtime_t *rt, const fwdio_options_t *o, const char *name,
                            int expect)
{
    char path[4096];
    fwdio_file_t *f;
    tc_path(path, sizeof path, name);
    tc_phase("%s", name);
    TC_EXPECT(fwdio_open(rt, path, SIZE, o, NULL, &f), FWDIO_OK, name);
    write_share(f, SIZE, 21);
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), expect, NULL, name);
    fwdio_file_free(f);
    if (expect == FWDIO_OK)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 21) == 0, "%s", name);
}

void case_mpi_fault(int expect1, int expect2, const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    fwdio_options_t o;
    options(&o);
    o.writers = 1; /* rank 0 receives, the others send */
    g_writes_may_fail = 1;
    fwdio_file_t *f;
    tc_path(path, sizeof path, "first");
    tc_phase("first file");
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "open first");
    write_share(f, SIZE, 20);
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), expect1, expect1 != FWDIO_OK ? text : NULL, "first file");
    fwdio_file_free(f);
    if (expect1 == FWDIO_OK)
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 20) == 0, "first file");
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "the MPI fault fired %ld times, not once", tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    write_next_file(rt, &o, "second file", expect2);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* Reads of one read file: each rank reads READS pieces, all of them at once. */
enum { READS = 24 };

typedef struct read_slot {
    uint8_t *buf;
    uint64_t off, len, seed;
    atomic_int status; /* 1 until done */
} read_slot_t;

static void read_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    (void)f;
    (void)buf;
    read_slot_t *r = arg;
    atomic_store(&r->status, status);
}

/* Open `path` (SIZE bytes of pattern `seed`) for reading, read READS
 * overlapping pieces (every rank a different mix), close, and check: the
 * file's status is `expect` on every rank (its text naming `text`), every
 * read ended, those that ended OK hold the right bytes. */
static void read_file_case(fwdio_runtime_t *rt, const fwdio_options_t *o, const char *path,
                           uint64_t seed, int expect, const char *text, const char *what)
{
    read_slot_t slots[READS];
    fwdio_file_t *f;
    tc_phase("%s", what);
    TC_EXPECT(fwdio_open_read(rt, path, o, NULL, &f), FWDIO_OK, what);
    for (int i = 0; i < READS; i++) {
        read_slot_t *r = &slots[i];
        r->off = ((uint64_t)(i * 7 + tc_rank * 13) * 40009) % SIZE;
        r->len = (uint64_t)(i % 5) * 50021 + 17;
        if (r->len > SIZE - r->off)
            r->len = SIZE - r->off;
        r->seed = seed;
        r->buf = malloc(r->len);
        atomic_init(&r->status, 1);
        int rc = fwdio_read(f, r->buf, r->len, r->off, read_done, r);
        if (rc != FWDIO_OK) { /* the file failed already: refused, no callback */
            TC_CHECK(expect != FWDIO_OK && rc == FWDIO_EFAILED, "%s: read %d refused: %s", what,
                     i, fwdio_strerror(rc));
            atomic_store(&r->status, rc);
        }
    }
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), expect, expect != FWDIO_OK ? text : NULL, what);
    int ok = 0;
    for (int i = 0; i < READS; i++) {
        read_slot_t *r = &slots[i];
        int st = atomic_load(&r->status);
        TC_CHECK(st != 1, "%s: read %d never ended", what, i);
        if (st == FWDIO_OK) {
            uint8_t *want = malloc(r->len);
            pattern_fill(want, r->len, r->off, seed);
            TC_CHECK(memcmp(want, r->buf, r->len) == 0, "%s: read %d (%llu bytes at %llu) wrong",
                     what, i, (unsigned long long)r->len, (unsigned long long)r->off);
            free(want);
            ok++;
        }
        free(r->buf);
    }
    if (expect == FWDIO_OK)
        TC_CHECK(ok == READS, "%s: %d of %d reads OK", what, ok, READS);
    fwdio_file_free(f);
}

/* An MPI failure while a file is read: it fails on every rank, no read is
 * left waiting, and the next file reads right. */
void case_read_mpi_fault(int expect1, int expect2, const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    fwdio_options_t o;
    options(&o);
    o.writers = 1; /* rank 0 reads, every rank asks */
    tc_path(path, sizeof path, "read");
    old_file(path, SIZE, 30);
    read_file_case(rt, &o, path, 30, expect1, text, "first read file");
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) == 1,
             "the MPI fault fired %ld times, not once", tc_sum(MPI_COMM_WORLD, mpi_faults_fired()));
    read_file_case(rt, &o, path, 30, expect2, NULL, "second read file");
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* A stream of STREAM_STEPS steps with an MPI failure in one of its
 * agreements: the steps before it complete (and are whole), it and the later
 * ones fail with FWDIO_EMPI on every rank, so does the stream, and the next
 * file of the runtime is written normally. */
enum { STREAM_STEPS = 4, STREAM_STEP_BYTES = 100000 };

typedef struct stream_steps {
    int status[STREAM_STEPS];
    atomic_int seen;
} stream_steps_t;

static void stream_step_cb(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    (void)f;
    stream_steps_t *s = user;
    if (step < STREAM_STEPS)
        s->status[step] = status;
    atomic_fetch_add(&s->seen, 1);
}

void case_stream_mpi_fault(int fail_from, const char *text)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    fwdio_options_t o;
    options(&o);
    o.writers = 1;
    o.append_start = (uint64_t)STREAM_STEPS * STREAM_STEP_BYTES; /* appends after the steps */
    g_writes_may_fail = 1;
    stream_steps_t st = {0};
    fwdio_callbacks_t cbs = {.step = stream_step_cb, .user = &st};
    fwdio_file_t *f;
    tc_path(path, sizeof path, "stream");
    tc_phase("stream");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, &cbs, &f), FWDIO_OK, "open stream");
    const uint64_t share = STREAM_STEP_BYTES / (uint64_t)tc_size;
    uint8_t *buf = malloc(share);
    for (int k = 0; k < STREAM_STEPS; k++) {
        uint64_t at = (uint64_t)k * STREAM_STEP_BYTES + share * (uint64_t)tc_rank;
        pattern_fill(buf, share, at, 30);
        int rc = fwdio_write(f, buf, share, at);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "stream write: %s", fwdio_strerror(rc));
        uint8_t more = (uint8_t)k; /* and a byte appended after everything */
        rc = fwdio_append(f, &more, 1);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "stream append: %s", fwdio_strerror(rc));
        rc = fwdio_step_end(f);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "step end: %s", fwdio_strerror(rc));
    }
    free(buf);
    fwdio_close(f);
    expect_status(f, fwdio_wait(f), FWDIO_EMPI, text, "stream");
    TC_CHECK(atomic_load(&st.seen) == STREAM_STEPS, "%d step callbacks, want %d",
             atomic_load(&st.seen), STREAM_STEPS);
    for (int k = 0; k < STREAM_STEPS; k++) {
        int want = k < fail_from ? FWDIO_OK : FWDIO_EMPI;
        TC_CHECK(st.status[k] == want, "step %d: %s, want %s", k, fwdio_strerror(st.status[k]),
                 fwdio_strerror(want));
        TC_CHECK(tc_all_same(MPI_COMM_WORLD, st.status[k]), "step %d: ranks disagree", k);
    }
    fwdio_file_free(f);
    if (tc_rank == 0)
        for (int k = 0; k < fail_from; k++) {
            uint64_t bad = 0;
            int fd = open(path, O_RDONLY);
            TC_CHECK(fd >= 0 && pattern_check_fd(fd, (uint64_t)k * STREAM_STEP_BYTES,
                                                 share * (uint64_t)tc_size, 30, 0, &bad) == 0,
                     "stream step %d: byte %llu is wrong", k, (unsigned long long)bad);
            if (fd >= 0)
                close(fd);
        }
    o.append_start = 0;
    write_next_file(rt, &o, "the file after the stream", FWDIO_OK);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}
