/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Files in flight past fwdio_config_t.files_in_flight: each file holds an MPI
 * communicator from its open to its end, and MPI libraries have few (MPICH
 * 4.0: 2046 per process). Cases:
 *   bound   files_in_flight 3, --files files opened and written before any
 *           is closed: while none is closed, at most 3 are ready (the others
 *           wait for a communicator), then the files are closed in open
 *           order, all complete with FWDIO_OK and every byte is right;
 *   many    --many files at the default bound (1000) opened and written,
 *           held open for a moment, then closed and waited for: more files
 *           than MPICH has communicators, none may fail (without the bound
 *           MPICH's MPI_Comm_idup fails and its error ends the job);
 *   draining files_in_flight 1 and the node-local tier: a file complete in
 *           the local stores still drains on its communicator, so the next
 *           file is ready only once that drain is over; both drain right.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fwdio.h"
#include "test_common.h"

enum { PIECE = 64 };

/* Open n files of PIECE bytes per rank, write this rank's piece of each. */
static fwdio_file_t **open_written(fwdio_runtime_t *rt, const char *name, int n,
                                   tc_cbstate_t *cb)
{
    fwdio_file_t **f = calloc((size_t)n, sizeof *f);
    uint8_t piece[PIECE];
    for (int i = 0; i < n; i++) {
        char path[4096], leaf[64];
        snprintf(leaf, sizeof leaf, "%s-%d", name, i);
        tc_path(path, sizeof path, leaf);
        fwdio_callbacks_t cbs;
        if (cb) {
            tc_cb_init(&cb[i]);
            cbs = tc_cb_callbacks(&cb[i]);
        }
        TC_EXPECT(fwdio_open(rt, path, (uint64_t)PIECE * (uint64_t)tc_size, NULL,
                             cb ? &cbs : NULL, &f[i]),
                  FWDIO_OK, "fwdio_open");
        memset(piece, (i * 7 + tc_rank) & 0xff, sizeof piece);
        TC_EXPECT(fwdio_write(f[i], piece, sizeof piece, (uint64_t)tc_rank * PIECE), FWDIO_OK,
                  "fwdio_write");
    }
    return f;
}

/* Close in open order, wait for each, check every byte of every file. */
static void close_check(const char *name, fwdio_file_t **f, int n)
{
    for (int i = 0; i < n; i++)
        TC_EXPECT(fwdio_close(f[i]), FWDIO_OK, "fwdio_close");
    for (int i = 0; i < n; i++) {
        int rc = fwdio_wait(f[i]);
        TC_CHECK(rc == FWDIO_OK, "%s-%d: %s", name, i, fwdio_file_error(f[i]));
        fwdio_file_free(f[i]);
    }
    free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank != 0)
        return;
    uint8_t *got = malloc((size_t)PIECE * (size_t)tc_size + 1);
    for (int i = 0; i < n; i++) {
        char path[4096], leaf[64];
        snprintf(leaf, sizeof leaf, "%s-%d", name, i);
        tc_path(path, sizeof path, leaf);
        int fd = open(path, O_RDONLY);
        ssize_t len = fd < 0 ? -1 : pread(fd, got, (size_t)PIECE * (size_t)tc_size + 1, 0);
        if (fd >= 0)
            close(fd);
        int right = len == (ssize_t)PIECE * tc_size;
        for (ssize_t b = 0; right && b < len; b++)
            right = got[b] == (uint8_t)((i * 7 + b / PIECE) & 0xff);
        TC_CHECK(right, "%s: %zd bytes, or some not the ranks' (want %d)", path, len,
                 PIECE * tc_size);
        unlink(path);
    }
    free(got);
}

static void case_bound(int nfiles)
{
    tc_phase("bound: runtime with files_in_flight 3");
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.files_in_flight = 3;
    cfg.pinned |= FWDIO_PIN_FILES_IN_FLIGHT;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    tc_cbstate_t *cb = calloc((size_t)nfiles, sizeof *cb);
    tc_phase("bound: %d files opened and written", nfiles);
    fwdio_file_t **f = open_written(rt, "bound", nfiles, cb);
    /* the first three get their communicators; give them time to be ready */
    TC_EXPECT(fwdio_wait_ready(f[0]), FWDIO_OK, "fwdio_wait_ready of the first file");
    for (int k = 0; k < 50; k++) {
        fwdio_poll(rt);
        usleep(2000);
    }
    int ready = 0;
    for (int i = 0; i < nfiles; i++)
        ready += atomic_load(&cb[i].ready_count);
    TC_CHECK(ready >= 1 && ready <= 3,
             "%d of %d files ready before any was closed, with files_in_flight 3", ready,
             nfiles);
    tc_phase("bound: close in order, wait, check");
    close_check("bound", f, nfiles);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    free(cb);
}

static void case_draining(void)
{
    tc_phase("draining: runtime with files_in_flight 1");
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.files_in_flight = 1;
    cfg.pinned |= FWDIO_PIN_FILES_IN_FLIGHT;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    char local[4096];
    tc_path(local, sizeof local, "draining-local");
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.local_dir = local;
    o.drain_bandwidth = 256 << 10; /* 192 KiB per writer (2 of 3 ranks): 0.75 s of drain */
    enum { BYTES = 128 << 10 };
    uint8_t *piece = malloc(BYTES);
    fwdio_file_t *f[2];
    char path[2][4096];
    for (int i = 0; i < 2; i++) {
        tc_path(path[i], sizeof path[i], i ? "draining-b" : "draining-a");
        TC_EXPECT(fwdio_open(rt, path[i], (uint64_t)BYTES * (uint64_t)tc_size, &o, NULL, &f[i]),
                  FWDIO_OK, "fwdio_open");
        memset(piece, (i * 7 + tc_rank) & 0xff, BYTES);
        TC_EXPECT(fwdio_write(f[i], piece, BYTES, (uint64_t)tc_rank * BYTES), FWDIO_OK,
                  "fwdio_write");
        if (i == 0) {
            TC_EXPECT(fwdio_close(f[0]), FWDIO_OK, "fwdio_close");
            TC_EXPECT(fwdio_wait(f[0]), FWDIO_OK, "fwdio_wait (complete in the local stores)");
        }
    }
    /* b waits for a's communicator, which a's drain holds */
    int drained = 0;
    TC_EXPECT(fwdio_drain_test(f[0], &drained), FWDIO_OK, "fwdio_drain_test");
    TC_CHECK(!drained, "the first file drained at once: the case does not test the bound");
    TC_EXPECT(fwdio_wait_ready(f[1]), FWDIO_OK, "fwdio_wait_ready of the second file");
    TC_EXPECT(fwdio_drain_test(f[0], &drained), FWDIO_OK, "fwdio_drain_test");
    TC_CHECK(drained, "the second file was ready while the first still drained on its "
                      "communicator, with files_in_flight 1");
    TC_EXPECT(fwdio_close(f[1]), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f[1]), FWDIO_OK, "fwdio_wait");
    for (int i = 0; i < 2; i++) {
        TC_EXPECT(fwdio_drain_wait(f[i]), FWDIO_OK, "fwdio_drain_wait");
        fwdio_file_free(f[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; tc_rank == 0 && i < 2; i++) {
        int fd = open(path[i], O_RDONLY);
        for (int r = 0; r < tc_size; r++) {
            ssize_t len = fd < 0 ? -1 : pread(fd, piece, BYTES, (off_t)r * BYTES);
            int right = len == BYTES;
            for (ssize_t b = 0; right && b < len; b++)
                right = piece[b] == (uint8_t)((i * 7 + r) & 0xff);
            TC_CHECK(right, "%s: rank %d's bytes not at the target", path[i], r);
        }
        if (fd >= 0)
            close(fd);
    }
    free(piece);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static void case_many(int nfiles)
{
    tc_phase("many: %d files at the default bound", nfiles);
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, NULL);
    fwdio_file_t **f = open_written(rt, "many", nfiles, NULL);
    for (int k = 0; k < 100; k++) { /* the duplications run meanwhile */
        fwdio_poll(rt);
        usleep(5000);
    }
    tc_phase("many: close in order, wait, check");
    close_check("many", f, nfiles);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    int files = 12, many = 0, draining = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &mode))
            continue;
        if (!strcmp(argv[i], "--files") && i + 1 < argc)
            files = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--many") && i + 1 < argc)
            many = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--draining"))
            draining = 1;
        else {
            fprintf(stderr, "usage: %s [--files N] [--many N] [--draining]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (draining) {
        case_draining();
        return tc_finish("test_in_flight");
    }
    case_bound(files);
    if (many > 0)
        case_many(many);
    return tc_finish("test_in_flight");
}
