/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio case: the node-local tier through the layer (FWDIO_LOCAL_DIR
 * set for the run; without it, or without the layer, the case checks only
 * the bytes). Each rank writes its region collectively; MPI_File_sync makes
 * it durable in the local stores, where the writers' local files are while
 * the file is open; after sync-barrier-sync every rank reads the next
 * rank's region with an independent read (the layer waits for the step's
 * drain to the path); a second write lands after it; after the close the
 * file's next open waits for the rest of the drain (check_file), every byte
 * is at the path and no local file is left. Then a file removed with
 * unlink(2) right after its close (as MPICH's simple_collective test does)
 * is not made again by the drain: an exclusive open of the path succeeds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_mpiio.h"

/* Rank 0: the writers' local files (*.fwdio-local) in `dir`. */
static int local_files(const char *dir)
{
    int n = 0;
    if (g_rank == 0) {
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            n += len >= 12 && !strcmp(e->d_name + len - 12, ".fwdio-local");
        }
        if (d)
            closedir(d);
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return n;
}

void case_tier(void)
{
    enum { REGION = 300000, TAIL = 5000 };
    const char *name = "tier.mpiio";
    const char *dir = getenv("FWDIO_LOCAL_DIR");
    int tier = g_layer && dir && *dir && !strchr(dir, '%');
    if (g_rank == 0 && !tier)
        note("tier: no FWDIO_LOCAL_DIR (or not through the layer): the bytes only");
    remove_file(name);
    int before = tier ? local_files(dir) : 0; /* an earlier run's, killed */
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    const int64_t tails = (int64_t)g_size * REGION;
    for (int q = 0; q < g_size; q++) {
        model_put(&m, (int64_t)q * REGION, REGION, seed_of(1));
        model_put(&m, tails + (int64_t)q * TAIL, TAIL, seed_of(2));
    }
    MPI_Status st;
    int64_t mine = (int64_t)g_rank * REGION;
    uint8_t *b = pattern_buf(mine, REGION, seed_of(1));
    OK(MPI_File_write_at_all(fh, mine, b, REGION, MPI_BYTE, &st));
    free(b);
    OK(MPI_File_sync(fh)); /* durable in the local stores */
    if (tier) {
        int n = local_files(dir);
        CHECK(n > before, "tier: no local file in %s after MPI_File_sync: the file is not in "
                          "the node-local tier", dir);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    int next = (g_rank + 1) % g_size;
    int64_t at = (int64_t)next * REGION;
    uint8_t *got = malloc(REGION);
    memset(got, 0xEE, REGION);
    if (OK(MPI_File_read_at(fh, at, got, REGION, MPI_BYTE, &st)))
        check_buf("tier: read_at of the next rank's synced region", got, &m, at, REGION);
    free(got);
    int64_t t = tails + (int64_t)g_rank * TAIL;
    b = pattern_buf(t, TAIL, seed_of(2));
    OK(MPI_File_write_at(fh, t, b, TAIL, MPI_BYTE, &st));
    free(b);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m); /* its open waits for the drain */
    if (tier) {
        int n = local_files(dir);
        CHECK(n == before, "tier: %d local files left in %s after the drain", n - before, dir);
    }
    model_free(&m);

    /* 1 MiB per rank drained at 8 MB/s per writer: the unlink comes while
     * the drain runs */
    enum { PIECE = 1 << 20 };
    const char *gone = "tier_unlinked.mpiio";
    char p[4200];
    path_of(p, sizeof p, gone);
    remove_file(gone);
    MPI_Info slow;
    MPI_Info_create(&slow);
    MPI_Info_set(slow, "fwdio_drain_bandwidth", "8M");
    uint8_t *piece = malloc(PIECE);
    memset(piece, g_rank + 1, PIECE);
    for (int round = 0; round < 2; round++) {
        MPI_File g = MPI_FILE_NULL;
        if (!OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL,
                              slow, &g)))
            break; /* the second round: the file came back after the unlink */
        MPI_File_set_errhandler(g, MPI_ERRORS_RETURN);
        OK(MPI_File_write_at_all(g, (MPI_Offset)g_rank * PIECE, piece, PIECE, MPI_BYTE, &st));
        OK(MPI_File_close(&g));
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0 && unlink(p) != 0)
            fail("tier: unlink(%s) after the close failed", p);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(piece);
    MPI_Info_free(&slow);
}

/* Every rank: `rc` failed on every rank or on none (the same outcome from the
 * same call everywhere); returns whether it failed. */
static int failed_alike(int rc, const char *what)
{
    int mine = rc != MPI_SUCCESS, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == 0 || all == g_size, "tier_fault: %s failed on %d of %d ranks", what, all,
          g_size);
    return mine;
}

/* Every rank: `rc` is the drain's failure (MPI_ERR_IO, a text naming the
 * drain), on every rank alike; `what` names the call. */
static void expect_drain_failed(int rc, const char *what)
{
    if (failed_alike(rc, what))
        expect_error(rc, what, MPI_ERR_IO, "drain");
    else
        fail("tier_fault: %s succeeded after a failed drain", what);
}

/*
 * The drain to the path failing (FWDIO_FAULT fails every pwrite on the
 * test's own directory, so the local stores work and the drains fail):
 * - a read that needs a synced step at the path returns the drain's failure
 *   on every rank (MPI_ERR_IO), and so does the close after it;
 * - a file closed before its drain failed: the close returns success (the
 *   file is complete in the local stores), the path's next MPI_File_open
 *   returns the failure on every rank and no handle, and the open after that
 *   (read-only, so MPI-IO's own) works;
 * - a second such file is left to MPI_Finalize, which returns the failure
 *   (checked by the driver).
 */
void case_tier_fault(void)
{
    const char *dir = getenv("FWDIO_LOCAL_DIR");
    if (!g_layer || !dir || !*dir || !getenv("FWDIO_FAULT")) {
        if (g_rank == 0)
            note("skipped: needs the layer, FWDIO_LOCAL_DIR and a FWDIO_FAULT rule");
        return;
    }
    enum { PIECE = 65536 };
    uint8_t *b = pattern_buf((int64_t)g_rank * PIECE, PIECE, seed_of(1));
    MPI_Status st;

    /* a read after sync-barrier-sync needs the step at the path */
    const char *read_name = "tier_fault_read.mpiio";
    remove_file(read_name);
    MPI_File fh = open_file(read_name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    if (fh != MPI_FILE_NULL) {
        OK(MPI_File_write_at_all(fh, (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st));
        OK(MPI_File_sync(fh)); /* durable in the local stores: no drain needed */
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_File_sync(fh));
        uint8_t *got = malloc(PIECE);
        int64_t at = (int64_t)((g_rank + 1) % g_size) * PIECE;
        int rc = MPI_File_read_at(fh, at, got, PIECE, MPI_BYTE, &st);
        free(got);
        expect_drain_failed(rc, "read_at of a step whose drain failed");
        rc = MPI_File_close(&fh);
        expect_drain_failed(rc, "the close of a file whose step drain failed");
        CHECK(fh == MPI_FILE_NULL, "tier_fault: a close left the handle");
    }

    /* closed before the drain's failure is known: the next open says it */
    const char *name = "tier_fault.mpiio";
    char p[4200];
    path_of(p, sizeof p, name);
    remove_file(name);
    fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    if (fh != MPI_FILE_NULL) {
        int rc = MPI_File_write_at_all(fh, (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st);
        failed_alike(rc, "write_at_all");
        rc = MPI_File_close(&fh);
        if (!failed_alike(rc, "the close")) {
            fh = MPI_FILE_NULL;
            rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
            expect_drain_failed(rc, "MPI_File_open after a failed drain");
            CHECK(fh == MPI_FILE_NULL, "tier_fault: a failed open returned a file handle");
            if (rc == MPI_SUCCESS && fh != MPI_FILE_NULL)
                MPI_File_close(&fh);
        } else if (g_rank == 0) {
            note("tier_fault: the failure came by the close already");
        }
        fh = open_file(name, MPI_MODE_RDONLY); /* reported once: this one works */
        close_file(&fh);
    }

    /* a second file, closed and left to MPI_Finalize */
    const char *last = "tier_fault_final.mpiio";
    remove_file(last);
    fh = open_file(last, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    leave_to_finalize(last);
    if (fh != MPI_FILE_NULL) {
        int rc = MPI_File_write_at_all(fh, (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st);
        int close_rc = MPI_File_close(&fh);
        g_expect_finalize_error = rc == MPI_SUCCESS && close_rc == MPI_SUCCESS;
    }
    free(b);
}
