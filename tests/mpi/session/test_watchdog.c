/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The watchdog's reports (config.watchdog = 1 s). Each rank sends its stderr
 * to a file while the case runs, and the reports are checked for what they
 * must say; the file itself must still complete and verify.
 *
 *   late_close   rank 1 calls fwdio_close 3 s after the others: rank 0 reports
 *                that not every rank has closed the file.
 *   late_close_rank0 (--late-close-rank0) rank 0 calls fwdio_close 3 s after
 *                the others: every other rank reports, with its rank, that
 *                not every rank has closed the file.
 *   late_open    (--late-open) rank 0 calls fwdio_open 3 s after the others,
 *                which open, write and close at once: they report that not
 *                every rank has opened the file yet.
 *   slow_writer  (FWDIO_FAULT: every pwrite takes 2.5 s; each of the two
 *                writers makes one) the file is closed everywhere but the
 *                writers are still busy: the second writer reports its
 *                storage job under way, and rank 0 reports too.
 *   full_writer  (every pwrite takes 0.15 s; one writer with a 1 MiB budget
 *                for a 4 MiB file) the writer stops receiving: it reports how
 *                many bytes it still waits for, from which ranks bytes came
 *                and which sent none yet, and the message waiting for memory.
 *   slow_reader  (every pread takes 1.5 s; one reader, 4 units) a file read
 *                by every rank at once and closed: the reader reports the
 *                requests it took and its preads under way, every rank the
 *                reads it still waits for; the bytes read are right.
 * The last three need a library built with fault injection.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

static const uint64_t FILE_SIZE = 4 << 20;

static fwdio_file_t *open_and_write(fwdio_runtime_t *rt, const char *name, uint64_t seed,
                                    int writers, uint64_t unit, char *path, size_t path_len)
{
    tc_path(path, path_len, name);
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = writers;
    opts.stripe_size = unit;
    opts.write_size = unit;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &opts, NULL, &f), FWDIO_OK, "fwdio_open");
    uint64_t share = FILE_SIZE / (uint64_t)tc_size;
    uint64_t off = share * (uint64_t)tc_rank;
    uint64_t len = tc_rank == tc_size - 1 ? FILE_SIZE - off : share;
    TC_EXPECT(tc_write_pattern(f, off, len, seed, 64 << 10), FWDIO_OK, "fwdio_write");
    return f;
}

enum { ON_TIME, LATE_OPEN, LATE_CLOSE };

/* One case: a file of `writers` writers and `unit`-byte units, opened and
 * written by every rank, closed and waited for with stderr captured, then
 * verified and freed; rank `late_rank` (if >= 0) opens it (LATE_OPEN) or
 * closes it (LATE_CLOSE) 3 s after the others. Returns what this rank printed
 * meanwhile; the writers' ranks go to writer_ranks. */
static char *run_case(fwdio_runtime_t *rt, const char *name, uint64_t seed, int writers,
                      uint64_t unit, int late_rank, int late, int *writer_ranks)
{
    tc_phase("%s", name);
    char path[4096];
    tc_capture_t cap;
    tc_capture_begin(&cap, name);
    if (tc_rank == late_rank && late == LATE_OPEN)
        sleep(3);
    fwdio_file_t *f = open_and_write(rt, name, seed, writers, unit, path, sizeof path);
    fwdio_file_writers(f, writer_ranks, writers);
    if (tc_rank == late_rank && late == LATE_CLOSE)
        sleep(3);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    char *text = tc_capture_end(&cap);
    TC_EXPECT(rc, FWDIO_OK, name);
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, seed);
    return text;
}

static int has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }

static void case_late_close(fwdio_runtime_t *rt)
{
    int writer;
    char *text = run_case(rt, "late_close", 201, 1, 64 << 10, 1, LATE_CLOSE, &writer);
    if (tc_rank == 0)
        TC_CHECK(text && strstr(text, "fwdio watchdog") && strstr(text, "not every rank has"),
                 "late_close: rank 0 did not report the missing close; it printed:\n%s",
                 text ? text : "");
    if (tc_rank == 0 && text)
        tc_note("late_close report:\n%s", text);
    free(text);
}

/* Rank 0 is the one that has not closed: the others say so, each naming
 * itself. */
static void case_late_close_rank0(fwdio_runtime_t *rt)
{
    int writer;
    char *text = run_case(rt, "late_close_rank0", 204, 1, 64 << 10, 0, LATE_CLOSE, &writer);
    char said[64];
    snprintf(said, sizeof said, "rank %d closed it", tc_rank);
    if (tc_rank != 0)
        TC_CHECK(has(text, "fwdio watchdog") && has(text, said) &&
                     has(text, "not every rank has: fwdio_close"),
                 "late_close_rank0: rank %d did not report the missing close; it printed:\n%s",
                 tc_rank, text);
    if (tc_rank == 1)
        tc_note("late_close_rank0 report of rank 1:\n%s", text);
    free(text);
}

/* Rank 0 opens the file late: the ranks that opened it say that not every
 * rank has. */
static void case_late_open(fwdio_runtime_t *rt)
{
    int writer;
    char *text = run_case(rt, "late_open", 205, 1, 64 << 10, 0, LATE_OPEN, &writer);
    if (tc_rank != 0)
        TC_CHECK(has(text, "fwdio watchdog") &&
                     has(text, "not every rank has opened it yet: fwdio_open must be called on "
                               "every rank, in the same order"),
                 "late_open: rank %d did not report the missing open; it printed:\n%s", tc_rank,
                 text);
    if (tc_rank == 1)
        tc_note("late_open report of rank 1:\n%s", text);
    free(text);
}

static void case_slow_writer(fwdio_runtime_t *rt)
{
    int writers[2];
    char *text = run_case(rt, "slow_writer", 202, 2, FILE_SIZE / 2, -1, ON_TIME, writers);
    if (tc_rank == writers[1]) {
        TC_CHECK(text && strstr(text, "closed on every rank") &&
                     (strstr(text, "waiting for") || strstr(text, "storage job")),
                 "slow_writer: the slow writer did not report what it waits for; it printed:\n%s",
                 text ? text : "");
        if (text)
            tc_note("slow_writer report of the writer:\n%s", text);
    }
    if (tc_rank == 0)
        TC_CHECK(text && strstr(text, "closed on every rank"),
                 "slow_writer: rank 0 did not report; it printed:\n%s", text ? text : "");
    free(text);
}

static void case_full_writer(fwdio_runtime_t *rt)
{
    int writer;
    char *text = run_case(rt, "full_writer", 203, 1, FILE_SIZE / 8, -1, ON_TIME, &writer);
    if (tc_rank == writer) {
        TC_CHECK(text && strstr(text, "waiting for") && strstr(text, "bytes came from ranks") &&
                     strstr(text, "waits for writer memory"),
                 "full_writer: the writer did not report what it waits for; it printed:\n%s",
                 text ? text : "");
        if (text)
            tc_note("full_writer report of the writer:\n%s", text);
    }
    free(text);
}

/* Every rank reads all of a file of one reader whose preads are slow. */
static void case_slow_reader(fwdio_runtime_t *rt)
{
    tc_phase("slow_reader");
    char path[4096];
    fwdio_file_t *w = open_and_write(rt, "slow_reader", 206, 1, FILE_SIZE / 4, path, sizeof path);
    TC_EXPECT(fwdio_close(w), FWDIO_OK, "fwdio_close (written)");
    TC_EXPECT(fwdio_wait(w), FWDIO_OK, "slow_reader written");
    fwdio_file_free(w);
    tc_capture_t cap;
    tc_capture_begin(&cap, "slow_reader");
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = 1;
    opts.stripe_size = opts.write_size = FILE_SIZE / 4;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open_read(rt, path, &opts, NULL, &f), FWDIO_OK, "fwdio_open_read");
    uint8_t *buf = malloc(FILE_SIZE);
    TC_EXPECT(fwdio_read(f, buf, FILE_SIZE, 0, NULL, NULL), FWDIO_OK, "fwdio_read");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    char *text = tc_capture_end(&cap);
    TC_EXPECT(rc, FWDIO_OK, "slow_reader");
    int reader = -1;
    fwdio_file_writers(f, &reader, 1);
    fwdio_file_free(f);
    uint8_t *want = malloc(FILE_SIZE);
    pattern_fill(want, FILE_SIZE, 0, 206);
    TC_CHECK(memcmp(want, buf, FILE_SIZE) == 0, "slow_reader: the bytes read are wrong");
    TC_CHECK(has(text, "closed on every rank") && has(text, "read(s) of this rank not ended"),
             "slow_reader: rank %d did not report its reads; it printed:\n%s", tc_rank,
             text ? text : "");
    if (tc_rank == reader) {
        TC_CHECK(has(text, "reader 0: took") && has(text, "pread(s) under way"),
                 "slow_reader: the reader did not report its work; it printed:\n%s",
                 text ? text : "");
        tc_note("slow_reader report of the reader:\n%s", text ? text : "");
    }
    free(want);
    free(buf);
    free(text);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    int slow_writer = 0, late = ON_TIME;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &mode))
            continue;
        if (!strcmp(argv[i], "--late-close-rank0"))
            late = LATE_CLOSE;
        else if (!strcmp(argv[i], "--late-open"))
            late = LATE_OPEN;
        else if (!strcmp(argv[i], "--slow-writer"))
            slow_writer = 1;
        else if (!strcmp(argv[i], "--full-writer"))
            slow_writer = 2;
        else if (!strcmp(argv[i], "--slow-reader"))
            slow_writer = 3;
        else {
            fprintf(stderr,
                    "usage: %s [--late-close-rank0|--late-open|--slow-writer|--full-writer|--slow-reader] "
                    "[--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    if (slow_writer) /* read by fwdio_init */
        setenv("FWDIO_FAULT",
               slow_writer == 1   ? "pwrite:slow=2500"
               : slow_writer == 2 ? "pwrite:slow=150"
                                  : "pread:slow=1500",
               1);
    tc_mpi_init(&argc, &argv, timeout);
    if (tc_size < 2) {
        if (tc_rank == 0)
            fprintf(stderr, "test_watchdog needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    (void)tc_tmpdir();
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.callback_mode = mode;
    cfg.watchdog = 1;
    if (slow_writer == 2)
        cfg.writer_buffer = 1 << 20;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    if (slow_writer == 3)
        case_slow_reader(rt);
    else if (slow_writer == 2)
        case_full_writer(rt);
    else if (slow_writer)
        case_slow_writer(rt);
    else if (late == LATE_CLOSE)
        case_late_close_rank0(rt);
    else if (late == LATE_OPEN)
        case_late_open(rt);
    else
        case_late_close(rt);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_watchdog");
}
