/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: a file's size (set_size, preallocate, get_size) and files
 * that exist before the open (no truncation, MPI_MODE_APPEND, set_size 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "test_mpiio.h"

/* ------------------------------------------------------------------------- */
/* Case: set_size, preallocate, get_size                                      */
/* ------------------------------------------------------------------------- */

/* The layer's get_size includes this rank's own writes (lo: their end) and at
   most what every rank has written (hi). MPI-IO itself promises neither
   without a sync, so this is checked only with the layer. */
static void check_size_own(MPI_File fh, const char *what, int64_t lo, int64_t hi)
{
    if (!g_layer)
        return;
    MPI_Offset sz = -1;
    if (OK(MPI_File_get_size(fh, &sz)))
        CHECK(sz >= lo && sz <= hi, "%s: %lld, expected in [%lld, %lld]", what, (long long)sz,
              (long long)lo, (long long)hi);
}

void case_sizes(void)
{
    const char *name = "sizes.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank;
    check_size(fh, "a new file", 0);
    /* collective writes of 1000 bytes each */
    for (int q = 0; q < P; q++)
        model_put(&m, q * 1000, 1000, seed_of(1));
    {
        uint8_t *b = pattern_buf(r * 1000, 1000, seed_of(1));
        OK(MPI_File_write_at_all(fh, r * 1000, b, 1000, MPI_BYTE, &st));
        free(b);
    }
    /* others may be writing further already (below) */
    check_size_own(fh, "get_size after write_at_all", (r + 1) * 1000, 10000 + (P - 1) * 100 + 50);
    /* an independent write past the end: get_size includes it at once */
    for (int q = 0; q < P; q++)
        model_put(&m, 10000 + q * 100, 50, seed_of(2));
    {
        uint8_t *b = pattern_buf(10000 + r * 100, 50, seed_of(2));
        OK(MPI_File_write_at(fh, 10000 + r * 100, b, 50, MPI_BYTE, &st));
        free(b);
        check_size_own(fh, "get_size after its own write_at", 10000 + r * 100 + 50, m.size);
    }
    sync_barrier_sync(fh);
    check_size(fh, "after sync/barrier/sync", m.size);
    /* (set_size is a write, get_size a read: every rank checks before any changes) */
    MPI_Barrier(MPI_COMM_WORLD);
    /* grow */
    int64_t grown = m.size + 7000;
    OK(MPI_File_set_size(fh, grown));
    model_grow_undefined(&m, grown);
    check_size(fh, "after set_size (grow)", grown);
    MPI_Barrier(MPI_COMM_WORLD);
    /* writes, then shrink below some of them */
    for (int q = 0; q < P; q++) {
        model_put(&m, 15000 + q * 100, 30, seed_of(3));
        model_put(&m, 12300 + q * 10, 10, seed_of(3));
    }
    {
        uint8_t *b = pattern_buf(15000 + r * 100, 30, seed_of(3));
        OK(MPI_File_write_at(fh, 15000 + r * 100, b, 30, MPI_BYTE, &st));
        free(b);
        b = pattern_buf(12300 + r * 10, 10, seed_of(3));
        OK(MPI_File_write_at(fh, 12300 + r * 10, b, 10, MPI_BYTE, &st));
        free(b);
    }
    OK(MPI_File_set_size(fh, 12345));
    model_set_size(&m, 12345);
    check_size(fh, "after set_size (shrink)", 12345);
    /* the bytes read back after the shrink (a collective read) */
    {
        uint8_t *all = malloc(12345);
        memset(all, 0xEE, 12345);
        if (OK(MPI_File_read_at_all(fh, 0, all, 12345, MPI_BYTE, &st)))
            check_buf("read_at_all after the shrink", all, &m, 0, 12345);
        int n = -1;
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == 12345, "read_at_all after the shrink: count %d, expected 12345", n);
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* preallocate grows, never shrinks. It is a write and get_size a read
       (MPI's consistency rules): the file is settled before each check.
       Open MPI 4.1's OMPIO (the default MPI-IO here) gets preallocate wrong
       even so: its rank 0 still writes when the others return, the next
       preallocate fails with MPI_ERR_OTHER on some ranks or the job hangs
       (8 ranks). So without the layer set_size stands in for it; the layer
       must do it right. */
    if (g_layer) {
        OK(MPI_File_preallocate(fh, 20000));
        sync_barrier_sync(fh);
        check_size(fh, "after preallocate(20000)", 20000);
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_File_preallocate(fh, 100));
        sync_barrier_sync(fh);
        check_size(fh, "after preallocate(100)", 20000);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        OK(MPI_File_set_size(fh, 20000));
        sync_barrier_sync(fh);
    }
    model_grow_undefined(&m, 20000);
    /* collective writes across the end */
    for (int q = 0; q < P; q++)
        model_put(&m, 19990 + q * 5, 5, seed_of(4));
    {
        uint8_t *b = pattern_buf(19990 + r * 5, 5, seed_of(4));
        OK(MPI_File_write_at_all(fh, 19990 + r * 5, b, 5, MPI_BYTE, &st));
        free(b);
    }
    check_size_own(fh, "get_size after the last writes",
                   19990 + r * 5 + 5 > 20000 ? 19990 + r * 5 + 5 : 20000, m.size);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: an existing file, no truncation at open; MPI_MODE_APPEND; set_size 0 */
/* ------------------------------------------------------------------------- */

void case_reopen(void)
{
    const char *name = "reopen.mpiio";
    model_t m = {.holes_zero = g_layer};
    int P = g_size, r = g_rank;
    MPI_Status st;
    model_put(&m, 0, 40000, seed_of(0));
    posix_create(name, &m);

    /* a: new bytes over parts of the old ones, and past their end */
    MPI_File fh = open_file(name, MPI_MODE_WRONLY);
    expect_state(fh, "existing file opened WRONLY", ST_TAKEN);
    check_size(fh, "the existing file", 40000);
    for (int q = 0; q < P; q++)
        model_put(&m, q * 3000 + 500, 1000, seed_of(1));
    model_put(&m, 39000, 6000, seed_of(1));
    {
        uint8_t *b = pattern_buf(r * 3000 + 500, 1000, seed_of(1));
        OK(MPI_File_write_at_all(fh, r * 3000 + 500, b, 1000, MPI_BYTE, &st));
        free(b);
        if (r == P - 1) {
            b = pattern_buf(39000, 6000, seed_of(1));
            OK(MPI_File_write_at(fh, 39000, b, 6000, MPI_BYTE, &st));
            free(b);
        }
    }
    close_file(&fh);
    check_file(name, &m);

    /* b: MPI_MODE_APPEND starts the pointer at the end of the file */
    fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_APPEND);
    expect_state(fh, "opened with APPEND", ST_TAKEN);
    int64_t end = m.size;
    check_position(fh, "after open with APPEND", end);
    OK(MPI_File_seek(fh, (MPI_Offset)r * 777, MPI_SEEK_CUR));
    for (int q = 0; q < P; q++)
        model_put(&m, end + q * 777, 700, seed_of(2));
    {
        uint8_t *b = pattern_buf(end + r * 777, 700, seed_of(2));
        if (OK(MPI_File_write_all(fh, b, 700, MPI_BYTE, &st)))
            check_count("write_all in append mode", &st, MPI_BYTE, 700);
        free(b);
    }
    check_position(fh, "after write_all in append mode", end + r * 777 + 700);
    close_file(&fh);
    check_file(name, &m);

    /* c: opened without truncation, cut to 0 with set_size, rewritten shorter */
    fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "existing file opened WRONLY|CREATE", ST_TAKEN);
    OK(MPI_File_set_size(fh, 0));
    check_size(fh, "after set_size(0)", 0);
    model_set_size(&m, 0);
    for (int q = 0; q < P; q++)
        model_put(&m, q * 500, 500, seed_of(3));
    {
        uint8_t *b = pattern_buf(r * 500, 500, seed_of(3));
        OK(MPI_File_write_at_all(fh, r * 500, b, 500, MPI_BYTE, &st));
        free(b);
    }
    close_file(&fh);
    check_file(name, &m);

    /* d: opened RDWR and only read (every rank reads the next rank's piece,
       so no byte goes to fwdio and the close leaves its stream to finish in
       the background), then at once opened again with the last rank alone
       writing, independently, past the end (that close must go through
       fwdio: not every rank left its stream untouched), then read back. */
    for (int round = 0; round < 2; round++) {
        fh = open_file(name, MPI_MODE_RDWR);
        expect_state(fh, "existing file opened RDWR", ST_TAKEN);
        int64_t at = ((r + 1) % P) * 500;
        uint8_t got[500];
        if (OK(MPI_File_read_at(fh, at, got, 500, MPI_BYTE, &st)))
            check_buf("read back, nothing written", got, &m, at, 500);
        if (round == 1 && r == P - 1) {
            uint8_t *b = pattern_buf(P * 500 + 100, 300, seed_of(4));
            OK(MPI_File_write_at(fh, P * 500 + 100, b, 300, MPI_BYTE, &st));
            free(b);
        }
        close_file(&fh);
        if (round == 1)
            model_put(&m, P * 500 + 100, 300, seed_of(4));
        check_file(name, &m);
    }

    /* e: errors of MPI_File_open stay MPI's */
    {
        char p[4200];
        path_of(p, sizeof p, name);
        MPI_File f2 = MPI_FILE_NULL;
        int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                               MPI_INFO_NULL, &f2);
        CHECK(rc != MPI_SUCCESS, "MPI_File_open with MPI_MODE_EXCL of an existing file succeeded");
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f2);
        path_of(p, sizeof p, "no/such/dir/x.mpiio");
        rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                           &f2);
        CHECK(rc != MPI_SUCCESS, "MPI_File_open in a missing directory succeeded");
        if (rc == MPI_SUCCESS)
            MPI_File_close(&f2);
    }
    check_file(name, &m); /* untouched by the failed opens */
    model_free(&m);
}
