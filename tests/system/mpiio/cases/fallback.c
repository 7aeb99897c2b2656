/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: what the layer hands back to MPI-IO (shared file
 * pointers, atomic mode) and what it leaves alone (files it does not match,
 * an open on an intercommunicator); the bytes are right either way.
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
/* Fall-through cases: the layer hands the file back to MPI-IO                */
/* ------------------------------------------------------------------------- */

/* write_ordered and write_shared (shared file pointer) on a taken file. */
void case_shared(void)
{
    const char *name = "shared.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {0};
    MPI_Status st;
    int P = g_size, r = g_rank;
    /* through the layer first */
    for (int q = 0; q < P; q++)
        model_put(&m, 10000 + q * 500, 500, seed_of(1));
    {
        uint8_t *b = pattern_buf(10000 + r * 500, 500, seed_of(1));
        OK(MPI_File_write_at_all(fh, 10000 + r * 500, b, 500, MPI_BYTE, &st));
        free(b);
    }
    /* write_ordered from shared pointer 0: rank order */
    int64_t so = 0, mine = 0;
    for (int q = 0; q < P; q++) {
        if (q == r)
            mine = so;
        model_put(&m, so, 100 + 10 * q, seed_of(2));
        so += 100 + 10 * q;
    }
    {
        uint8_t *b = pattern_buf(mine, 100 + 10 * r, seed_of(2));
        if (OK(MPI_File_write_ordered(fh, b, 100 + 10 * r, MPI_BYTE, &st)))
            check_count("write_ordered", &st, MPI_BYTE, 100 + 10 * r);
        free(b);
    }
    expect_state(fh, "after write_ordered", ST_RELEASED);
    /* write_shared: 64 bytes per rank in some order after the ordered ones */
    const int L = 64;
    {
        uint8_t b[64];
        for (int i = 0; i < L; i++)
            b[i] = pattern_byte(seed_of(10 + r), (uint64_t)i);
        if (OK(MPI_File_write_shared(fh, b, L, MPI_BYTE, &st)))
            check_count("write_shared", &st, MPI_BYTE, L);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* more writes, now through MPI-IO */
    for (int q = 0; q < P; q++)
        model_put(&m, 20000 + q * 100, 100, seed_of(3));
    {
        uint8_t *b = pattern_buf(20000 + r * 100, 100, seed_of(3));
        OK(MPI_File_write_at_all(fh, 20000 + r * 100, b, 100, MPI_BYTE, &st));
        free(b);
        b = pattern_buf(30000 + r * 10, 10, seed_of(4));
        OK(MPI_File_write_at(fh, 30000 + r * 10, b, 10, MPI_BYTE, &st));
        free(b);
        for (int q = 0; q < P; q++)
            model_put(&m, 30000 + q * 10, 10, seed_of(4));
    }
    expect_state(fh, "before close", ST_RELEASED);
    close_file(&fh);
    /* the shared-pointer chunks: each slot holds one rank's chunk, each rank once */
    int64_t sbase = so;
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        char p[4200];
        path_of(p, sizeof p, name);
        int fd = open(p, O_RDONLY);
        uint8_t *slots = malloc((size_t)(P * L));
        int *seen = calloc((size_t)P, sizeof *seen);
        if (fd < 0 || pread(fd, slots, (size_t)(P * L), sbase) != (ssize_t)(P * L)) {
            fail("cannot read the write_shared region of %s", p);
        } else {
            for (int s = 0; s < P; s++) {
                int who = -1;
                for (int q = 0; q < P && who < 0; q++) {
                    int same = 1;
                    for (int i = 0; i < L && same; i++)
                        same = slots[s * L + i] == pattern_byte(seed_of(10 + q), (uint64_t)i);
                    if (same)
                        who = q;
                }
                if (who < 0)
                    fail("write_shared slot %d (offset %lld) holds no rank's chunk", s,
                         (long long)(sbase + s * L));
                else if (seen[who]++)
                    fail("write_shared: rank %d's chunk appears twice (slot %d)", who, s);
            }
        }
        if (fd >= 0)
            close(fd);
        /* put the slots' bytes into the model for the byte check */
        if (fd >= 0)
            for (int i = 0; i < P * L; i++)
                model_byte(&m, sbase + i, slots[i]);
        free(slots);
        free(seen);
    }
    check_file(name, &m);
    model_free(&m);
}

/* MPI_File_set_atomicity(fh, 1) on a taken file. */
void case_atomic(void)
{
    const char *name = "atomic.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {0};
    MPI_Status st;
    int P = g_size, r = g_rank;
    for (int q = 0; q < P; q++) {
        model_put(&m, q * 1000, 1000, seed_of(1));
        model_put(&m, 50000 + q * 100, 100, seed_of(2));
    }
    uint8_t *b = pattern_buf(r * 1000, 1000, seed_of(1));
    OK(MPI_File_write_at_all(fh, r * 1000, b, 1000, MPI_BYTE, &st));
    free(b);
    /* an independent write not followed by any collective call */
    b = pattern_buf(50000 + r * 100, 100, seed_of(2));
    OK(MPI_File_write_at(fh, 50000 + r * 100, b, 100, MPI_BYTE, &st));
    free(b);
    plain_settle(fh);
    OK(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "get_atomicity after set_atomicity(1): %d", flag);
    expect_state(fh, "after set_atomicity(1)", ST_RELEASED);
    uint8_t got[1000];
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, 50000 + r * 100, got, 100, MPI_BYTE, &st)))
        check_buf("read_at of its own write after set_atomicity", got, &m, 50000 + r * 100, 100);
    /* atomic mode: another rank's completed write is visible after a barrier */
    for (int q = 0; q < P; q++)
        model_put(&m, q * 1000 + 100, 300, seed_of(3));
    b = pattern_buf(r * 1000 + 100, 300, seed_of(3));
    OK(MPI_File_write_at(fh, r * 1000 + 100, b, 300, MPI_BYTE, &st));
    free(b);
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (r + 1) % P;
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, next * 1000, got, 1000, MPI_BYTE, &st)))
        check_buf("read_at of the next rank's piece in atomic mode", got, &m, next * 1000, 1000);
    expect_state(fh, "before close", ST_RELEASED);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: files the layer must leave alone                                     */
/* ------------------------------------------------------------------------- */

void case_not_taken(void)
{
    model_t m = {0};
    MPI_Status st;
    int P = g_size, r = g_rank;
    /* a name that does not match FWDIO_MPIIO */
    {
        const char *name = "other.plain";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "a file FWDIO_MPIIO does not match", ST_ABSENT);
        for (int q = 0; q < P; q++)
            model_put(&m, q * 777 + 3, 700, seed_of(1));
        uint8_t *b = pattern_buf(r * 777 + 3, 700, seed_of(1));
        OK(MPI_File_write_at_all(fh, r * 777 + 3, b, 700, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        check_file(name, &m);
    }
    /* a matching name opened read-only */
    {
        const char *name = "readonly.mpiio";
        model_set_size(&m, 0);
        model_put(&m, 0, 5000, seed_of(2));
        posix_create(name, &m);
        MPI_File fh = open_file(name, MPI_MODE_RDONLY);
        expect_state(fh, "opened MPI_MODE_RDONLY", ST_ABSENT);
        uint8_t *got = malloc(5000);
        memset(got, 0xEE, 5000);
        if (OK(MPI_File_read_at_all(fh, 0, got, 5000, MPI_BYTE, &st)))
            check_buf("read_at_all of a read-only file", got, &m, 0, 5000);
        free(got);
        close_file(&fh);
        check_file(name, &m);
    }
    /* a matching name with MPI_MODE_DELETE_ON_CLOSE */
    {
        const char *name = "delete_on_close.mpiio";
        remove_file(name);
        MPI_File fh =
            open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE);
        expect_state(fh, "opened with MPI_MODE_DELETE_ON_CLOSE", ST_ABSENT);
        uint8_t *b = pattern_buf(r * 100, 100, seed_of(3));
        OK(MPI_File_write_at_all(fh, r * 100, b, 100, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0)
            CHECK(!file_exists(name), "%s still exists after its close", name);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: fwdio refuses the stream on one rank only                            */
/* ------------------------------------------------------------------------- */

/* A matching file written by every rank, taken by the layer (ST_TAKEN) or,
   with `refuse_on_last`, while the last rank's environment holds a bad
   FWDIO_LAYOUT: fwdio_open refuses the stream there, at the call, and only
   there. The other ranks' streams then fail with that refusal (fwdio.h,
   "Refusals") instead of waiting for the last rank, so every rank's
   MPI_File_open returns MPI_SUCCESS alike and leaves the file to MPI-IO
   (ST_ABSENT). The bytes are right either way. */
static void refusal_file(const char *name, int refuse_on_last, int gen)
{
    remove_file(name);
    if (refuse_on_last && g_rank == g_size - 1)
        setenv("FWDIO_LAYOUT", "diagonal", 1);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    unsetenv("FWDIO_LAYOUT");
    expect_state(fh, refuse_on_last ? "refused by fwdio on the last rank" : "after open",
                 refuse_on_last ? ST_ABSENT : ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    write_rounds(fh, &m, 2, 30000, gen);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* The first file makes the layer's runtime (the refusal is then fwdio_open's,
   not fwdio_init's); the last one is taken again on every rank, so the
   refused stream kept its place in the runtime's open order. */
void case_refused_on_one(void)
{
    refusal_file("refused_before.mpiio", 0, 60);
    refusal_file("refused_on_one.mpiio", 1, 61);
    refusal_file("refused_after.mpiio", 0, 62);
}

/* ------------------------------------------------------------------------- */
/* Case: an open on an intercommunicator                                      */
/* ------------------------------------------------------------------------- */

/* MPI-IO opens files on intracommunicators only: the layer leaves such an
   open to MPI (its error, or its file, never taken), without a hang. */
void case_intercomm(void)
{
    if (g_size < 2) {
        if (g_rank == 0)
            note("skipped: an intercommunicator needs 2 ranks or more");
        return;
    }
    const char *name = "intercomm.mpiio";
    remove_file(name);
    int color = g_rank % 2;
    MPI_Comm half, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half));
    /* the leaders: world rank 0 (even half) and 1 (odd half) */
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &inter));
    /* Open MPI reports this open's error through the communicator's handler */
    OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    char p[4200];
    path_of(p, sizeof p, name);
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(inter, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
        expect_state(fh, "opened on an intercommunicator", ST_ABSENT);
        MPI_File_close(&fh);
    } else {
        CHECK(fh == MPI_FILE_NULL, "a failed open on an intercommunicator returned a handle");
        if (g_rank == 0)
            note("MPI_File_open on an intercommunicator: %s", err_text(rc));
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    remove_file(name);
}
