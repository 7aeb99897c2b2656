/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: independent reads of a rank's own bytes of the current
 * step, and of more of them than the layer keeps (FWDIO_MPIIO_READBACK).
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
/* Case: an independent read of this rank's own unsynced write                */
/* ------------------------------------------------------------------------- */

void case_own_read(void)
{
    const char *name = "own_read.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank, next = (r + 1) % P;
    const int64_t R1 = 0, R2 = 2000 * (int64_t)P, R3 = 4000 * (int64_t)P + 64;
    for (int q = 0; q < P; q++) {
        model_put(&m, R1 + q * 2000, 2000, seed_of(1));
        model_put(&m, R2 + q * 2000, 2000, seed_of(2));
        model_put(&m, R3 + q * 600, 500, seed_of(3)); /* 100-byte holes between */
    }
    uint8_t *b = pattern_buf(R1 + r * 2000, 2000, seed_of(1));
    OK(MPI_File_write_at_all(fh, R1 + r * 2000, b, 2000, MPI_BYTE, &st));
    free(b);
    b = pattern_buf(R2 + r * 2000, 2000, seed_of(2));
    OK(MPI_File_write_at_all(fh, R2 + r * 2000, b, 2000, MPI_BYTE, &st));
    free(b);
    plain_settle(fh);
    /* region 1 was written before the last collective call: independent reads see it */
    uint8_t got[2000];
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, R1 + next * 2000, got, 2000, MPI_BYTE, &st)))
        check_buf("read_at of the next rank's region 1", got, &m, R1 + next * 2000, 2000);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, R1 + r * 2000, got, 2000, MPI_BYTE, &st)))
        check_buf("read_at of its own region 1", got, &m, R1 + r * 2000, 2000);

    /* an independent write, then independent reads of it: they see it (the
     * layer lays its copy over what MPI-IO reads) */
    int64_t o3 = R3 + r * 600;
    b = pattern_buf(o3, 500, seed_of(3));
    OK(MPI_File_write_at(fh, o3, b, 500, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3, got, 500, MPI_BYTE, &st))) {
        check_buf("read_at of its own unsynced write", got, &m, o3, 500);
        check_count("read_at of its own unsynced write", &st, MPI_BYTE, 500);
    }
    /* with the hole before it (zeros, or another rank's bytes) */
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3 - 10, got, 20, MPI_BYTE, &st)))
        check_buf("read_at overlapping its own unsynced write", got, &m, o3 - 10, 20);
    OK(MPI_File_seek(fh, o3 + 100, MPI_SEEK_SET));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read(fh, got, 100, MPI_BYTE, &st))) {
        check_buf("read (individual pointer) of its own unsynced write", got, &m, o3 + 100, 100);
        MPI_Offset at = -1;
        OK(MPI_File_get_position(fh, &at));
        CHECK(at == o3 + 200, "the pointer is at %lld after the read; expected %lld",
              (long long)at, (long long)(o3 + 200));
    }
    {
        MPI_Request req;
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_iread_at(fh, o3 + 200, got, 100, MPI_BYTE, &req)) &&
            OK(MPI_Wait(&req, &st))) {
            check_buf("iread_at (+ MPI_Wait) of its own unsynced write", got, &m, o3 + 200, 100);
            check_count("iread_at of its own unsynced write", &st, MPI_BYTE, 100);
        }
    }
    /* the last rank's bytes end the file: a read past them counts only them */
    if (r == P - 1) {
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at(fh, o3 + 400, got, 300, MPI_BYTE, &st))) {
            check_buf("read_at past the end of its own unsynced write", got, &m, o3 + 400, 100);
            check_count("read_at past the end of the file", &st, MPI_BYTE, 100);
        }
    }
    /* into a memory type with gaps: the gaps are left alone */
    {
        MPI_Datatype gaps;
        MPI_Type_vector(50, 2, 3, MPI_BYTE, &gaps);
        MPI_Type_commit(&gaps);
        uint8_t mem[150], want[150];
        memset(mem, 0xEE, sizeof mem);
        memset(want, 0xEE, sizeof want);
        for (int i = 0; i < 100; i++)
            want[(i / 2) * 3 + i % 2] = pattern_byte(seed_of(3), (uint64_t)(o3 + 300 + i));
        if (OK(MPI_File_read_at(fh, o3 + 300, mem, 1, gaps, &st)))
            CHECK(memcmp(mem, want, sizeof mem) == 0,
                  "read_at of its own unsynced write into a vector memory type: wrong bytes");
        MPI_Type_free(&gaps);
    }
    /* the same bytes written again in the step: the later write is read */
    b = pattern_buf(o3 + 50, 100, seed_of(6));
    OK(MPI_File_write_at(fh, o3 + 50, b, 100, MPI_BYTE, &st));
    free(b);
    model_put(&m, o3 + 50, 100, seed_of(6));
    for (int q = 0; q < P; q++)
        if (q != r)
            model_put(&m, R3 + q * 600 + 50, 100, seed_of(6));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3, got, 500, MPI_BYTE, &st)))
        check_buf("read_at of its own write written twice", got, &m, o3, 500);
    /* other bytes remain readable meanwhile */
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, R2 + next * 2000, got, 2000, MPI_BYTE, &st)))
        check_buf("read_at of the next rank's region 2 beside an unsynced write", got, &m,
                  R2 + next * 2000, 2000);
    /* a collective read sees it; after that collective, so does an independent read */
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_all(fh, o3, got, 500, MPI_BYTE, &st)))
        check_buf("read_at_all of its own write", got, &m, o3, 500);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, o3, got, 500, MPI_BYTE, &st)))
        check_buf("read_at of its own write after read_at_all", got, &m, o3, 500);
    /* through a view of 8-byte blocks, one in P for each rank: the read's data
     * positions meet the kept bytes block by block */
    {
        const int64_t R4 = R3 + 600 * (int64_t)P + 64;
        MPI_Datatype block, ft;
        MPI_Type_contiguous(8, MPI_BYTE, &block);
        MPI_Type_create_resized(block, 0, 8 * P, &ft);
        MPI_Type_commit(&ft);
        OK(MPI_File_set_view(fh, R4 + 8 * r, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        uint8_t mine[200];
        for (int q = 0; q < P; q++)
            for (int i = 0; i < 200; i++) {
                int64_t off = R4 + 8 * q + (i / 8) * 8 * (int64_t)P + i % 8;
                uint8_t v = pattern_byte(seed_of(7), (uint64_t)off);
                model_byte(&m, off, v);
                if (q == r)
                    mine[i] = v;
            }
        OK(MPI_File_write_at(fh, 0, mine, 200, MPI_BYTE, &st));
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at(fh, 0, got, 200, MPI_BYTE, &st)))
            CHECK(memcmp(got, mine, 200) == 0, "read_at through a view of blocks: wrong bytes");
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at(fh, 4, got, 17, MPI_BYTE, &st)))
            CHECK(memcmp(got, mine + 4, 17) == 0,
                  "read_at through a view of blocks, across blocks: wrong bytes");
        OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&ft);
        MPI_Type_free(&block);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* With FWDIO_MPIIO_READBACK=1000 (the layer keeps at most 1000 bytes of a
 * rank's writes of one step for its reads, and writes the step's independent
 * writes past them at once): reads of the step's bytes, kept or not, see
 * them, before and after a collective call. */
void case_own_read_limit(void)
{
    const char *name = "own_read_limit.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank;
    const int64_t A = 0, B = 600 * (int64_t)P, C = 1200 * (int64_t)P;
    for (int q = 0; q < P; q++)
        for (int k = 0; k < 3; k++)
            model_put(&m, k * 600 * (int64_t)P + q * 600, 600, seed_of(k));
    uint8_t got[600];
    uint8_t *b = pattern_buf(A + r * 600, 600, seed_of(0));
    OK(MPI_File_write_at(fh, A + r * 600, b, 600, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, A + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of 600 bytes kept", got, &m, A + r * 600, 600);
    b = pattern_buf(B + r * 600, 600, seed_of(1));
    OK(MPI_File_write_at(fh, B + r * 600, b, 600, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, A + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of kept bytes after the step wrote past FWDIO_MPIIO_READBACK", got,
                  &m, A + r * 600, 600);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, B + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of bytes past FWDIO_MPIIO_READBACK", got, &m, B + r * 600, 600);
    /* one read over both */
    uint8_t both[600 * 2];
    memset(both, 0xEE, sizeof both);
    MPI_Datatype two;
    int lens[2] = {600, 600};
    MPI_Aint disps[2] = {0, 600};
    OK(MPI_Type_create_hindexed(2, lens, disps, MPI_BYTE, &two));
    OK(MPI_Type_commit(&two));
    MPI_Datatype pair;
    int blens[2] = {1, 1};
    MPI_Aint fdisps[2] = {A + r * 600, B + r * 600};
    MPI_Datatype bytes600;
    OK(MPI_Type_contiguous(600, MPI_BYTE, &bytes600));
    MPI_Datatype ts[2] = {bytes600, bytes600};
    OK(MPI_Type_create_struct(2, blens, fdisps, ts, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, pair, "native", MPI_INFO_NULL));
    if (OK(MPI_File_read_at(fh, 0, both, 1, two, &st))) {
        check_buf("one read of kept and written bytes (kept part)", both, &m, A + r * 600, 600);
        check_buf("one read of kept and written bytes (written part)", both + 600, &m,
                  B + r * 600, 600);
    }
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&two);
    MPI_Type_free(&pair);
    MPI_Type_free(&bytes600);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, B + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at after MPI_File_sync", got, &m, B + r * 600, 600);
    /* a new step keeps bytes again */
    b = pattern_buf(C + r * 600, 600, seed_of(2));
    OK(MPI_File_write_at(fh, C + r * 600, b, 600, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at(fh, C + r * 600, got, 600, MPI_BYTE, &st)))
        check_buf("read_at of the next step's 600 bytes", got, &m, C + r * 600, 600);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);

    /* One rank writes much more than is kept, in writes at its individual
     * pointer, seeks back and reads all of it (the others write nothing). */
    const char *name2 = "own_read_limit_all.mpiio";
    remove_file(name2);
    enum { PIECE = 256 << 10, PIECES = 24 };
    fh = open_file(name2, MPI_MODE_RDWR | MPI_MODE_CREATE);
    m = (model_t){.holes_zero = g_layer};
    for (int k = 0; k < PIECES; k++)
        model_put(&m, (int64_t)k * PIECE, PIECE, seed_of(3));
    if (r == 0) {
        for (int k = 0; k < PIECES; k++) {
            b = pattern_buf((int64_t)k * PIECE, PIECE, seed_of(3));
            OK(MPI_File_write(fh, b, PIECE, MPI_BYTE, &st));
            free(b);
        }
        OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        uint8_t *all = malloc((size_t)PIECE * PIECES);
        memset(all, 0xEE, (size_t)PIECE * PIECES);
        if (OK(MPI_File_read(fh, all, PIECE * PIECES, MPI_BYTE, &st)))
            check_buf("read of everything one rank wrote in the step", all, &m, 0,
                      (int64_t)PIECE * PIECES);
        free(all);
    }
    close_file(&fh);
    check_file(name2, &m);
    model_free(&m);
}

/*
 * Many small pieces read back (HDF5's point selections): every rank writes
 * 3000 16-byte pieces interleaved with the other ranks' (independent
 * writes, no collective call), then reads each back, then some of them
 * again after writing them over (the overlay), and the file is checked at
 * the close. Past MPIIO_PATCH_MAX kept copies the layer writes them to the
 * file before a read instead of laying each over it (readback.c).
 */
void case_own_read_many(void)
{
    const char *name = "own_read_many.mpiio";
    enum { PIECES = 3000, LEN = 16 };
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    uint8_t got[LEN];
    for (int i = 0; i < PIECES; i++) {
        int64_t off = ((int64_t)i * g_size + g_rank) * 2 * LEN;
        uint8_t *b = pattern_buf(off, LEN, seed_of(1));
        OK(MPI_File_write_at(fh, off, b, LEN, MPI_BYTE, &st));
        free(b);
        for (int q = 0; q < g_size; q++)
            model_put(&m, ((int64_t)i * g_size + q) * 2 * LEN, LEN, seed_of(1));
    }
    int wrong = 0;
    for (int i = 0; i < PIECES && wrong < 3; i++) {
        int64_t off = ((int64_t)i * g_size + g_rank) * 2 * LEN;
        memset(got, 0x7f, LEN);
        OK(MPI_File_read_at(fh, off, got, LEN, MPI_BYTE, &st));
        for (int j = 0; j < LEN; j++)
            if (got[j] != pattern_byte(seed_of(1), (uint64_t)(off + j))) {
                fail("piece %d at %lld read back wrong (byte %d)", i, (long long)off, j);
                wrong++;
                break;
            }
    }
    for (int i = 0; i < PIECES; i += 100) { /* written over, then read back */
        int64_t off = ((int64_t)i * g_size + g_rank) * 2 * LEN;
        uint8_t *b = pattern_buf(off, LEN, seed_of(2));
        OK(MPI_File_write_at(fh, off, b, LEN, MPI_BYTE, &st));
        free(b);
        memset(got, 0x7f, LEN);
        OK(MPI_File_read_at(fh, off, got, LEN, MPI_BYTE, &st));
        int same = 1;
        for (int j = 0; j < LEN; j++)
            same = same && got[j] == pattern_byte(seed_of(2), (uint64_t)(off + j));
        CHECK(same, "piece %d at %lld written over: read back other bytes", i, (long long)off);
        for (int q = 0; q < g_size; q++)
            model_put(&m, ((int64_t)i * g_size + q) * 2 * LEN, LEN, seed_of(2));
    }
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: collective reads where no rank, or one rank, wrote since the last    */
/* collective call                                                            */
/* ------------------------------------------------------------------------- */

/* A collective read ends a step only where some rank wrote since the last
 * collective call on the file, and every rank must decide alike (a rank
 * that ended a step alone would part from the others' steps). Reads of a
 * rank's own bytes, with nothing written since, with one rank's
 * independent write only, after a sync with nothing to sync, and after
 * sync-barrier-sync: each sees what MPI says it must. */
void case_read_all_steps(void)
{
    const char *name = "read_all_steps.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank, last = P - 1;
    const int64_t A = 1000 * (int64_t)r, B = 1000 * (int64_t)P;
    uint8_t got[1000];
    for (int q = 0; q < P; q++)
        model_put(&m, 1000 * (int64_t)q, 1000, seed_of(1));
    uint8_t *b = pattern_buf(A, 1000, seed_of(1));
    OK(MPI_File_write_at_all(fh, A, b, 1000, MPI_BYTE, &st));
    free(b);
    /* nothing written since the collective write, twice over */
    for (int k = 0; k < 2; k++) {
        memset(got, 0xEE, sizeof got);
        if (OK(MPI_File_read_at_all(fh, A, got, 1000, MPI_BYTE, &st)))
            check_buf("read_at_all of its own collective write", got, &m, A, 1000);
    }
    /* one rank's independent write, then a collective read: that rank reads
     * it, the others their own bytes */
    model_put(&m, B, 1000, seed_of(2));
    if (r == last) {
        b = pattern_buf(B, 1000, seed_of(2));
        OK(MPI_File_write_at(fh, B, b, 1000, MPI_BYTE, &st));
        free(b);
    }
    int64_t at = r == last ? B : A;
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_all(fh, at, got, 1000, MPI_BYTE, &st)))
        check_buf("read_at_all after one rank's independent write", got, &m, at, 1000);
    /* a sync with nothing written since; then every rank reads that write */
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_all(fh, B, got, 1000, MPI_BYTE, &st)))
        check_buf("read_at_all of the last rank's write after sync-barrier-sync", got, &m, B,
                  1000);
    /* rank 0 writes its bytes again: its collective read sees the new ones */
    model_put(&m, 0, 1000, seed_of(3));
    if (r == 0) {
        b = pattern_buf(0, 1000, seed_of(3));
        OK(MPI_File_write_at(fh, 0, b, 1000, MPI_BYTE, &st));
        free(b);
    }
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_all(fh, A, got, 1000, MPI_BYTE, &st)))
        check_buf("read_at_all of its bytes after rank 0 wrote its own again", got, &m, A, 1000);
    /* a smaller size cuts written bytes: they are in the file first */
    OK(MPI_File_set_size(fh, B + 500));
    model_set_size(&m, B + 500);
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_all(fh, A, got, 1000, MPI_BYTE, &st)))
        check_buf("read_at_all after MPI_File_set_size", got, &m, A, 1000);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: independent reads while a collective write's step is on its way     */
/* ------------------------------------------------------------------------- */

/* An independent read right after a collective write waits for that write's
 * step only where it touches the bytes some rank wrote in it (the bounds the
 * write agreed on, mpiio/inflight.c); elsewhere it reads the file at once.
 * Run with every pwrite of the file slowed (FWDIO_FAULT=pwrite:slow=MS), so
 * that a step stays on its way while the ranks read: each rank reads the
 * next rank's piece right after every rank rewrote its own (within the
 * step's bounds: it must see the new bytes, not the old), then, after a
 * step in which rank 0 alone wrote far past the pieces, the next rank's
 * piece again (outside that step's bounds: the bytes of the step before)
 * and rank 0's far bytes (inside: the new ones). These reads of other
 * ranks' bytes without a sync are the layer's promise (README.md, "MPI's
 * consistency rules"), not MPI's: without the layer only the file is
 * checked. */
void case_read_in_flight(void)
{
    enum { PIECE = 65536 };
    const char *name = "read_in_flight.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    const int P = g_size, next = (g_rank + 1) % P;
    const int64_t mine = (int64_t)g_rank * PIECE, theirs = (int64_t)next * PIECE;
    const int64_t far = (int64_t)(P + 16) * PIECE;
    uint8_t *got = malloc(PIECE);
    for (int k = 1; k <= 2; k++) { /* k 1: first bytes; k 2: every piece again */
        for (int q = 0; q < P; q++)
            model_put(&m, (int64_t)q * PIECE, PIECE, seed_of(20 + k));
        uint8_t *b = pattern_buf(mine, PIECE, seed_of(20 + k));
        OK(MPI_File_write_at_all(fh, mine, b, PIECE, MPI_BYTE, &st));
        free(b);
        memset(got, 0xEE, PIECE);
        if (OK(MPI_File_read_at(fh, theirs, got, PIECE, MPI_BYTE, &st)) && g_layer)
            check_buf("read_at of the next rank's piece right after write_at_all", got, &m,
                      theirs, PIECE);
    }
    /* rank 0 alone writes far past the pieces: a step whose bounds exclude them */
    model_put(&m, far, PIECE, seed_of(23));
    uint8_t *b = pattern_buf(far, PIECE, seed_of(23));
    OK(MPI_File_write_at_all(fh, far, b, g_rank == 0 ? PIECE : 0, MPI_BYTE, &st));
    free(b);
    memset(got, 0xEE, PIECE);
    if (OK(MPI_File_read_at(fh, theirs, got, PIECE, MPI_BYTE, &st)) && g_layer)
        check_buf("read_at outside the step on its way", got, &m, theirs, PIECE);
    memset(got, 0xEE, PIECE);
    if (OK(MPI_File_read_at(fh, far, got, PIECE, MPI_BYTE, &st)) && g_layer)
        check_buf("read_at of rank 0's bytes of the step on its way", got, &m, far, PIECE);
    free(got);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* Another rank's independent writes read without a sync (issue 28's D1):
 * every rank writes its piece collectively (a step on its way: the pwrites
 * are slowed where the test says so), then rank 0 writes, independently,
 * over part of its own piece (a process's later write wins; another rank's
 * collective bytes written again without a sync would be MPI's undefined
 * case, and ROMIO's aggregators may land them last) and past every piece
 * (MPI_File_write_at, then MPI_File_write at its file pointer); after an
 * MPI_Barrier (no
 * MPI_File_sync) every rank reads both. MPI-IO over a POSIX file system
 * returns rank 0's bytes, and the layer does with FWDIO_MPIIO_READBACK=0
 * (every independent write written at once, after the steps before it):
 * checked without the layer and with that setting. With the layer's
 * default the reads may return what the file held before (README.md, "MPI's
 * consistency rules"): then only the file is checked, and FWDIO_VERBOSE
 * names the reads at the collective write that ends the step. */
void case_others_unsynced(void)
{
    enum { PIECE = 32768 };
    const char *name = "others_unsynced.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    const char *readback = getenv("FWDIO_MPIIO_READBACK");
    const int promised = !g_layer || (readback && !strcmp(readback, "0"));
    const int P = g_size;
    const int64_t mine = (int64_t)g_rank * PIECE, over = 0; /* rank 0's piece */
    const int64_t past = (int64_t)(P + 3) * PIECE;
    for (int q = 0; q < P; q++)
        model_put(&m, (int64_t)q * PIECE, PIECE, seed_of(31));
    uint8_t *b = pattern_buf(mine, PIECE, seed_of(31));
    OK(MPI_File_write_at_all(fh, mine, b, PIECE, MPI_BYTE, &st));
    free(b);
    /* rank 0 alone: half of its piece, at an offset, then past every piece
     * at its individual file pointer */
    model_put(&m, over + 100, PIECE / 2, seed_of(32));
    model_put(&m, past, PIECE, seed_of(33));
    if (g_rank == 0) {
        b = pattern_buf(over + 100, PIECE / 2, seed_of(32));
        OK(MPI_File_write_at(fh, over + 100, b, PIECE / 2, MPI_BYTE, &st));
        free(b);
        b = pattern_buf(past, PIECE, seed_of(33));
        OK(MPI_File_seek(fh, past, MPI_SEEK_SET));
        OK(MPI_File_write(fh, b, PIECE, MPI_BYTE, &st));
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint8_t *got = malloc(PIECE);
    memset(got, 0xEE, PIECE);
    if (OK(MPI_File_read_at(fh, over, got, PIECE, MPI_BYTE, &st)) && promised)
        check_buf("read_at of rank 0's unsynced write over a piece of a step on its way", got,
                  &m, over, PIECE);
    memset(got, 0xEE, PIECE);
    if (OK(MPI_File_read_at(fh, past, got, PIECE, MPI_BYTE, &st)) && promised)
        check_buf("read_at of rank 0's unsynced write at its file pointer", got, &m, past, PIECE);
    free(got);
    /* a collective call that ends the step (with FWDIO_VERBOSE the layer
     * names the reads above there: unsynced_note.cmake) */
    OK(MPI_File_write_at_all(fh, 0, NULL, 0, MPI_BYTE, &st));
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* The same through a second handle: every rank but 0 also opens the path on
 * MPI_COMM_SELF; rank 0 writes independently through the collective handle
 * (it has no other, so its bytes go to fwdio), a barrier, the other ranks
 * read them through their second handle, and a collective write on the
 * first ends its step (with FWDIO_VERBOSE the readers are named there:
 * unsynced_note.cmake). Checked as others_unsynced is. */
void case_others_unsynced_alias(void)
{
    enum { PIECE = 16384 };
    const char *name = "others_alias.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_File self = MPI_FILE_NULL;
    if (g_rank != 0)
        self = open_comm(MPI_COMM_SELF, name, MPI_MODE_RDWR);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    const char *readback = getenv("FWDIO_MPIIO_READBACK");
    const int promised = !g_layer || (readback && !strcmp(readback, "0"));
    model_put(&m, 4096, PIECE, seed_of(34));
    if (g_rank == 0) {
        uint8_t *b = pattern_buf(4096, PIECE, seed_of(34));
        OK(MPI_File_write_at(fh, 4096, b, PIECE, MPI_BYTE, &st));
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank != 0) {
        uint8_t *got = malloc(PIECE);
        memset(got, 0xEE, PIECE);
        if (OK(MPI_File_read_at(self, 4096, got, PIECE, MPI_BYTE, &st)) && promised)
            check_buf("read_at through a second handle of rank 0's unsynced write", got, &m,
                      4096, PIECE);
        free(got);
    }
    OK(MPI_File_write_at_all(fh, 0, NULL, 0, MPI_BYTE, &st));
    if (g_rank != 0)
        close_file(&self);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}
