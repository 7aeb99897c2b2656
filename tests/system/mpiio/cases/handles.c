/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: files opened on other communicators, two files at once,
 * two handles of one file, and the info of one open passed to the next.
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
/* Cases: other communicators, two files at once                              */
/* ------------------------------------------------------------------------- */

void case_comm_self(void)
{
    char name[64];
    snprintf(name, sizeof name, "self_%d.mpiio", g_rank);
    char p[4200];
    path_of(p, sizeof p, name);
    unlink(p);
    MPI_File fh = open_comm(MPI_COMM_SELF, name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "opened on MPI_COMM_SELF", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    for (int k = 0; k < 4; k++) {
        int64_t o = k * 10000 + g_rank * 13, n = 3000 + k * 1111;
        model_put(&m, o, n, seed_of(k));
        uint8_t *b = pattern_buf(o, n, seed_of(k));
        if (k % 2)
            OK(MPI_File_write_at(fh, o, b, (int)n, MPI_BYTE, &st));
        else
            OK(MPI_File_write_at_all(fh, o, b, (int)n, MPI_BYTE, &st));
        free(b);
    }
    close_file(&fh);
    settle_path(MPI_COMM_SELF, p);
    check_path_local(p, &m);
    model_free(&m);
    MPI_Barrier(MPI_COMM_WORLD);
}

void case_split(void)
{
    MPI_Comm half;
    int color = g_rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half);
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    char name[64];
    snprintf(name, sizeof name, "split_%d.mpiio", color);
    char p[4200];
    path_of(p, sizeof p, name);
    if (hr == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh = open_comm(half, name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "opened on half of the ranks", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    MPI_Status st;
    uint64_t seed = seed_of(color);
    for (int q = 0; q < hs; q++)
        model_put(&m, q * 4099, 4000 + color, seed);
    uint8_t *b = pattern_buf(hr * 4099, 4000 + color, seed);
    OK(MPI_File_write_at_all(fh, hr * 4099, b, 4000 + color, MPI_BYTE, &st));
    free(b);
    close_file(&fh);
    settle_path(half, p);
    MPI_Barrier(half);
    if (hr == 0)
        check_path_local(p, &m);
    MPI_Comm_free(&half);
    model_free(&m);
    MPI_Barrier(MPI_COMM_WORLD);
}

void case_two_files(void)
{
    const char *na = "two_a.mpiio", *nb = "two_b.fwd";
    remove_file(na);
    remove_file(nb);
    MPI_File fa = open_file(na, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    MPI_File fb = open_file(nb, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fa, "file a", ST_TAKEN);
    expect_state(fb, "file b (the second FWDIO_MPIIO pattern)", ST_TAKEN);
    model_t ma = {.holes_zero = g_layer}, mb = {.holes_zero = g_layer};
    MPI_Status st;
    int P = g_size, r = g_rank;
    for (int k = 0; k < 3; k++) {
        int64_t la = 20000 + k * 100, lb = 333 * (k + 1);
        for (int q = 0; q < P; q++) {
            model_put(&ma, (k * P + q) * la, la, seed_of(k));
            model_put(&mb, (q * 3 + k) * 1000, lb, seed_of(10 + k));
        }
        uint8_t *b = pattern_buf((k * P + r) * la, la, seed_of(k));
        OK(MPI_File_write_at_all(fa, (k * P + r) * la, b, (int)la, MPI_BYTE, &st));
        free(b);
        b = pattern_buf((r * 3 + k) * 1000, lb, seed_of(10 + k));
        OK(MPI_File_write_at(fb, (r * 3 + k) * 1000, b, (int)lb, MPI_BYTE, &st));
        free(b);
        OK(MPI_File_sync(fa));
    }
    close_file(&fb);
    close_file(&fa);
    check_file(na, &ma);
    check_file(nb, &mb);
    model_free(&ma);
    model_free(&mb);
}

/* --- reads through one handle of bytes written through another --------------- */

/* Whether len bytes at buf are pattern seed's bytes from file offset off. */
static int pattern_at(const uint8_t *buf, int64_t off, int64_t len, uint64_t seed)
{
    for (int64_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(seed, (uint64_t)(off + i)))
            return 0;
    return 1;
}

/*
 * A process reads, through one handle, bytes it wrote through another
 * handle of the same path with no sync between, as PnetCDF's independent
 * data mode does (its MPI_COMM_SELF handle writes, then its collective
 * handle reads and moves the data when the header grows); every MPI-IO over
 * POSIX shows them. Each rank writes its block through its MPI_COMM_SELF
 * handle, then reads it back through the collective one, with read_at_all
 * and with read_at. (A write_at_all read back through the other handle
 * without a sync is not shown by ompio itself: not checked.)
 */
void case_read_other_handle(void)
{
    const char *name = "read_other_handle.mpiio";
    enum { BLK = 4040 };
    remove_file(name);
    MPI_File fc = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_File fs = open_comm(MPI_COMM_SELF, name, MPI_MODE_RDWR);
    int64_t mine = 1024 + (int64_t)g_rank * BLK;
    uint8_t *b = pattern_buf(mine, BLK, seed_of(1));
    uint8_t *got = malloc(BLK);
    MPI_Status st;
    OK(MPI_File_write_at(fs, mine, b, BLK, MPI_BYTE, &st));
    memset(got, 0x7f, BLK);
    OK(MPI_File_read_at_all(fc, mine, got, BLK, MPI_BYTE, &st));
    CHECK(pattern_at(got, mine, BLK, seed_of(1)),
          "read_at_all through the collective handle missed this rank's write through "
          "its MPI_COMM_SELF handle");
    memset(got, 0x7f, BLK);
    OK(MPI_File_read_at(fc, mine, got, BLK, MPI_BYTE, &st));
    CHECK(pattern_at(got, mine, BLK, seed_of(1)),
          "read_at through the collective handle missed this rank's write through its "
          "MPI_COMM_SELF handle");
    free(b);
    free(got);
    close_file(&fs);
    close_file(&fc);
    model_t m = {.holes_zero = g_layer};
    for (int q = 0; q < g_size; q++)
        model_put(&m, 1024 + (int64_t)q * BLK, BLK, seed_of(1));
    check_file(name, &m);
    model_free(&m);
}

/* --- a small file renamed right after its close ----------------------------- */

/*
 * Every rank writes a small piece (an independent write), the file is
 * closed and rank 0 renames it at once, three times over. The new name
 * holds every byte, and the old one stays gone: the layer's stream of a
 * small file (every byte held, hold.c) finishes after the close, and its
 * writers must not make the path again when they open it late. The open of
 * the old path read-only waits for that stream first (a path's next open
 * does), and must fail as no file is there.
 */
void case_renamed(void)
{
    const char *na = "renamed_a.mpiio", *nb = "renamed_b.mpiio";
    char pa[4096], pb[4096];
    path_of(pa, sizeof pa, na);
    path_of(pb, sizeof pb, nb);
    remove_file(nb);
    enum { PIECE = 3000 };
    for (int k = 0; k < 3; k++) {
        remove_file(na);
        /* no MPI_File_get_info (expect_state) before the close: it would
         * wait for the stream's open, and the writers' open must be left to
         * come after the rename */
        MPI_File fh = open_file(na, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        model_t m = {.holes_zero = g_layer};
        for (int q = 0; q < g_size; q++)
            model_put(&m, (int64_t)q * PIECE, PIECE, seed_of(k));
        uint8_t *b = pattern_buf((int64_t)g_rank * PIECE, PIECE, seed_of(k));
        MPI_Status st;
        OK(MPI_File_write_at(fh, (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        if (g_rank == 0)
            CHECK(rename(pa, pb) == 0, "renaming %s: %s", pa, strerror(errno));
        MPI_Barrier(MPI_COMM_WORLD);
        check_file(nb, &m);
        model_free(&m);
        MPI_File again = MPI_FILE_NULL;
        int rc = MPI_File_open(MPI_COMM_WORLD, pa, MPI_MODE_RDONLY, MPI_INFO_NULL, &again);
        CHECK(rc != MPI_SUCCESS, "round %d: %s was made again after its close and rename", k,
              pa);
        if (rc == MPI_SUCCESS)
            MPI_File_close(&again);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    remove_file(nb);
}

/* --- many small files open at once -------------------------------------------- */

/*
 * Six files open at once, each rank writing 3.9 MB into each with independent
 * writes, closed in the reverse order. With FWDIO_MPIIO_HOLD=4M the first
 * files' bytes are held until the process holds its most (MPIIO_HOLD_TOTAL),
 * and the later ones go through their streams
 * (tests/system/mpiio/held_total.cmake checks which); every byte is checked.
 */
void case_many_open(void)
{
    enum { NFILES = 6, PIECE = 3900000 };
    char names[NFILES][64];
    MPI_File fh[NFILES];
    model_t m[NFILES];
    MPI_Status st;
    for (int i = 0; i < NFILES; i++) {
        snprintf(names[i], sizeof names[i], "many_%d.mpiio", i);
        remove_file(names[i]);
    }
    for (int i = 0; i < NFILES; i++) {
        fh[i] = open_file(names[i], MPI_MODE_WRONLY | MPI_MODE_CREATE);
        m[i] = (model_t){.holes_zero = g_layer};
        for (int q = 0; q < g_size; q++)
            model_put(&m[i], (int64_t)q * PIECE, PIECE, seed_of(i));
        uint8_t *b = pattern_buf((int64_t)g_rank * PIECE, PIECE, seed_of(i));
        OK(MPI_File_write_at(fh[i], (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st));
        free(b);
    }
    for (int i = NFILES - 1; i >= 0; i--)
        close_file(&fh[i]);
    for (int i = 0; i < NFILES; i++) {
        check_file(names[i], &m[i]);
        model_free(&m[i]);
    }
}

/*
 * Forty small files written and closed one after another (a code writing a
 * frame or a restart piece per file): every close of a held file leaves its
 * stream (which got no byte) to finish in the background, and past 16 such
 * streams the layer waits for the oldest (mpiio/state.c, MPIIO_PENDING_MAX).
 * Every byte is checked.
 */
void case_many_closed(void)
{
    enum { NFILES = 40, PIECE = 2000 };
    model_t m = {.holes_zero = g_layer};
    for (int q = 0; q < g_size; q++)
        model_put(&m, (int64_t)q * PIECE, PIECE, seed_of(7));
    uint8_t *b = pattern_buf((int64_t)g_rank * PIECE, PIECE, seed_of(7));
    char name[64];
    MPI_Status st;
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof name, "closed_%d.mpiio", i);
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        OK(MPI_File_write_at(fh, (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st));
        close_file(&fh);
    }
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof name, "closed_%d.mpiio", i);
        check_file(name, &m);
    }
    free(b);
    model_free(&m);
}

/*
 * A write-only file that every rank would hold (hold.c) opens its stream
 * dormant: nothing of fwdio's runs for it until a rank first needs the
 * stream. Here rank 0 alone does, writing 2 MiB three times (past the hold,
 * then past the 4 MiB the layer logs while the stream's open is pending, so
 * that its third write waits for that open), while every other rank waits in
 * MPI_Recv for rank 0's word, in no call of the file's: their fwdio must
 * hear rank 0's wake and join the open by itself, or rank 0 never sends the
 * word and the test ends at its timeout. Then every rank writes its piece
 * and closes; every byte is checked.
 */
void case_dormant_wake(void)
{
    enum { BIG = 2 << 20, PIECE = 3000 };
    const char *name = "dormant_wake.mpiio";
    remove_file(name);
    model_t m = {.holes_zero = g_layer};
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    MPI_Status st;
    const int64_t tail = 3 * (int64_t)BIG; /* the pieces after rank 0's run */
    if (g_rank == 0) {
        for (int k = 0; k < 3; k++) {
            uint8_t *b = pattern_buf((int64_t)k * BIG, BIG, seed_of(11));
            OK(MPI_File_write_at(fh, (MPI_Offset)k * BIG, b, BIG, MPI_BYTE, &st));
            free(b);
        }
        for (int q = 1; q < g_size; q++)
            MPI_Send(&q, 1, MPI_INT, q, 77, MPI_COMM_WORLD);
    } else {
        int word = 0;
        MPI_Recv(&word, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(word == g_rank, "dormant_wake: rank %d got %d from rank 0", g_rank, word);
    }
    model_put(&m, 0, 3 * (int64_t)BIG, seed_of(11));
    for (int q = 0; q < g_size; q++)
        model_put(&m, tail + (int64_t)q * PIECE, PIECE, seed_of(12));
    uint8_t *b = pattern_buf(tail + (int64_t)g_rank * PIECE, PIECE, seed_of(12));
    OK(MPI_File_write_at(fh, tail + (MPI_Offset)g_rank * PIECE, b, PIECE, MPI_BYTE, &st));
    free(b);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* --- communicators kept from file to file ------------------------------------- */

/* write_at_all of `len` pattern bytes per rank at generation `k`, modelled. */
static void put_all(MPI_File fh, model_t *m, int k, int64_t len)
{
    for (int q = 0; q < g_size; q++)
        model_put(m, (k * g_size + q) * len, len, seed_of(k));
    uint8_t *b = pattern_buf((k * g_size + g_rank) * len, len, seed_of(k));
    MPI_Status st;
    OK(MPI_File_write_at_all(fh, (k * g_size + g_rank) * len, b, (int)len, MPI_BYTE, &st));
    free(b);
}

/* The layer keeps a closed file's communicator for the group's next file:
 * a file taking a kept one while another file of the group is open on
 * another, their collective calls interleaved, and a kept one taken again
 * after that; every file's bytes as written. */
void case_kept_comms(void)
{
    const char *names[4] = {"kept_a.mpiio", "kept_b.mpiio", "kept_c.mpiio", "kept_d.mpiio"};
    model_t m[4];
    for (int i = 0; i < 4; i++) {
        remove_file(names[i]);
        m[i] = (model_t){.holes_zero = g_layer};
    }
    MPI_File fa = open_file(names[0], MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fa, "file a", ST_TAKEN);
    put_all(fa, &m[0], 0, 3000);
    close_file(&fa); /* its communicator kept */
    MPI_File fb = open_file(names[1], MPI_MODE_WRONLY | MPI_MODE_CREATE); /* takes a's */
    MPI_File fc = open_file(names[2], MPI_MODE_WRONLY | MPI_MODE_CREATE); /* a new one */
    expect_state(fb, "file b", ST_TAKEN);
    expect_state(fc, "file c", ST_TAKEN);
    for (int k = 0; k < 3; k++) {
        put_all(fb, &m[1], k, 1000 + 10 * k);
        put_all(fc, &m[2], k, 2000 + 10 * k);
        OK(MPI_File_sync(fc));
        OK(MPI_File_sync(fb));
    }
    close_file(&fb);
    MPI_File fd = open_file(names[3], MPI_MODE_WRONLY | MPI_MODE_CREATE); /* b's again */
    expect_state(fd, "file d", ST_TAKEN);
    for (int k = 3; k < 5; k++) {
        put_all(fc, &m[2], k, 2000 + 10 * k);
        put_all(fd, &m[3], k, 500 + k);
    }
    close_file(&fc);
    close_file(&fd);
    for (int i = 0; i < 4; i++) {
        check_file(names[i], &m[i]);
        model_free(&m[i]);
        remove_file(names[i]);
    }
}

/* --- two handles of one file --------------------------------------------------- */

/* write_at of pattern bytes of `seed`, modelled (by every rank, for the
 * writing rank `who`). */
static void put_at(MPI_File fh, model_t *m, int who, int64_t off, int64_t len, uint64_t seed)
{
    if (g_rank == who) {
        uint8_t *b = pattern_buf(off, len, seed);
        MPI_Status st;
        OK(MPI_File_write_at(fh, off, b, (int)len, MPI_BYTE, &st));
        free(b);
    }
    model_put(m, off, len, seed);
}

/*
 * One process writes the same bytes through two handles of one file, and the
 * later write is what the file holds, as in every MPI-IO. File 1, PnetCDF's
 * independent data mode: rank 0 writes the header through the collective
 * handle, every rank opens the path again on MPI_COMM_SELF and writes its data
 * there, rank 0 writes the record count into the header through that second
 * handle, then both are closed (the second first), with and without a sync
 * of the second before. File 2: independent writes through the collective
 * handle whose step a write_at_all ends (it may still be on its way), then
 * each rank writes part of its bytes again through its own handle; and the
 * other way round, a write through the MPI_COMM_SELF handle written again
 * through the collective one. File 3: the second handle is one the layer
 * does not take. (Bytes of a collective write written again
 * through another handle without a sync are not ordered by ompio.) On one
 * rank, where both handles belong to the same ranks, the layer hands both to
 * MPI-IO.
 */
void case_two_handles(void)
{
    const char *names[3] = {"two_handles.mpiio", "two_handles_sync.mpiio",
                            "two_handles_ended.mpiio"};
    for (int v = 0; v < 2; v++) {
        remove_file(names[v]);
        model_t m = {.holes_zero = g_layer};
        MPI_File fc = open_file(names[v], MPI_MODE_RDWR | MPI_MODE_CREATE);
        expect_state(fc, "the collective handle", ST_TAKEN);
        put_at(fc, &m, 0, 0, 232, seed_of(1)); /* the header */
        MPI_File fs = open_comm(MPI_COMM_SELF, names[v], MPI_MODE_RDWR);
        /* On one rank both handles belong to the same ranks: MPI-IO has both. */
        expect_state(fs, "the MPI_COMM_SELF handle", g_size > 1 ? ST_TAKEN : ST_ABSENT);
        expect_state(fc, "the collective handle after the second open",
                     g_size > 1 ? ST_TAKEN : ST_RELEASED);
        for (int q = 0; q < g_size; q++)
            put_at(fs, &m, q, 1000 + 500 * q, 500, seed_of(2));
        if (v == 1)
            OK(MPI_File_sync(fs));
        put_at(fs, &m, 0, 4, 8, seed_of(3)); /* the record count */
        close_file(&fs);
        close_file(&fc);
        check_file(names[v], &m);
        model_free(&m);
    }
    remove_file(names[2]);
    model_t m = {.holes_zero = g_layer};
    MPI_File fc = open_file(names[2], MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_File fs = open_comm(MPI_COMM_SELF, names[2], MPI_MODE_RDWR);
    for (int q = 0; q < g_size; q++)
        put_at(fc, &m, q, 100 * q, 100, seed_of(4));
    /* a collective write ends the step of those (it may still be on its way) */
    uint8_t *b = pattern_buf(3000 + 10 * g_rank, 10, seed_of(8));
    MPI_Status st;
    OK(MPI_File_write_at_all(fc, 3000 + 10 * g_rank, b, 10, MPI_BYTE, &st));
    free(b);
    for (int q = 0; q < g_size; q++)
        model_put(&m, 3000 + 10 * q, 10, seed_of(8));
    for (int q = 0; q < g_size; q++)
        put_at(fs, &m, q, 100 * q + 10, 20, seed_of(5)); /* over the step just ended */
    for (int q = 0; q < g_size; q++)
        put_at(fs, &m, q, 5000 + 50 * q, 50, seed_of(6));
    for (int q = 0; q < g_size; q++)
        put_at(fc, &m, q, 5000 + 50 * q + 5, 10, seed_of(7)); /* over the other handle's */
    close_file(&fc);
    close_file(&fs);
    check_file(names[2], &m);
    model_free(&m);

    /* File 3: a second handle the layer does not take (MPI_MODE_DELETE_ON_CLOSE)
     * writes over bytes of the taken one's current step; the bytes are
     * checked before that handle's close deletes the file. */
    const char *name3 = "two_handles_untaken.mpiio";
    remove_file(name3);
    m = (model_t){.holes_zero = g_layer};
    fc = open_file(name3, MPI_MODE_RDWR | MPI_MODE_CREATE);
    for (int q = 0; q < g_size; q++)
        put_at(fc, &m, q, 100 * q, 100, seed_of(9));
    fs = open_comm(MPI_COMM_SELF, name3, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE);
    expect_state(fs, "a MPI_MODE_DELETE_ON_CLOSE handle", ST_ABSENT);
    for (int q = 0; q < g_size; q++)
        put_at(fs, &m, q, 100 * q + 30, 40, seed_of(10));
    close_file(&fc);
    check_file(name3, &m);
    MPI_Barrier(MPI_COMM_WORLD);
    close_file(&fs);
    model_free(&m);
}

/* Write `len` pattern bytes of `seed` at `off`, independently, and model them on every rank. */
static void info_case_write(MPI_File fh, model_t *m, int64_t len, uint64_t seed)
{
    uint8_t *b = malloc((size_t)len);
    int64_t off = (int64_t)g_rank * len;
    for (int64_t i = 0; i < len; i++)
        b[i] = pattern_byte(seed, (uint64_t)(off + i));
    MPI_Status st;
    OK(MPI_File_write_at(fh, off, b, (int)len, MPI_BYTE, &st));
    free(b);
    for (int r = 0; r < g_size; r++)
        model_put(m, (int64_t)r * len, len, seed);
}

/*
 * Hints MPI-IO ignores do not keep the layer from taking a file: the info
 * MPI_File_get_info returns for a taken file (which holds the layer's own
 * key), passed on to the next open as PnetCDF does, with ROMIO's default
 * cb_config_list "*:*", and then with a cb_config_list of host names.
 */
void case_info_reuse(void)
{
    const char *name = "info_reuse.mpiio";
    char p[4200];
    path_of(p, sizeof p, name);
    remove_file(name);
    model_t m = {.holes_zero = g_layer};
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    info_case_write(fh, &m, 1000, seed_of(1));
    MPI_Info used = MPI_INFO_NULL;
    OK(MPI_File_get_info(fh, &used));
    close_file(&fh);
    /* Host names, which the layer ignores: this host's and another.
     * ROMIO (MPICH's MPI-IO) refuses the open when the list names no host
     * of the job ("No aggregators match"); OMPIO ignores the hint. */
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "localhost", hosts[MPI_MAX_PROCESSOR_NAME + 32];
    int host_len = 0;
    MPI_Get_processor_name(host, &host_len);
    snprintf(hosts, sizeof hosts, "%s:1,otherhost:2", host);
    const char *lists[] = {"*:*", hosts};
    for (int i = 0; i < 2; i++) {
        MPI_Info_set(used, "cb_config_list", lists[i]);
        fh = MPI_FILE_NULL;
        int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, used, &fh);
        if (rc != MPI_SUCCESS) {
            fail("MPI_File_open(%s) with the info of the first open: %s", p, err_text(rc));
            break;
        }
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        char what[MPI_MAX_PROCESSOR_NAME + 128];
        snprintf(what, sizeof what, "reopened with that info and cb_config_list \"%s\"", lists[i]);
        expect_state(fh, what, ST_TAKEN);
        info_case_write(fh, &m, 1000 + 300 * (int64_t)i, seed_of(2 + i));
        close_file(&fh);
    }
    /* The node-local tier's hints, which the layer honours: taken, written
     * through the tier (its local store made), what a rank wrote read back
     * right after a sync; the path's next open waits for the drain. */
    char local[4300], rm[4400];
    snprintf(local, sizeof local, "%s.local", p);
    snprintf(rm, sizeof rm, "rm -rf '%s'", local); /* an earlier run's */
    if (g_rank == 0 && system(rm) != 0)
        fail("%s: could not remove it", local);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_set(used, "fwdio_local_dir", local);
    MPI_Info_set(used, "fwdio_local_capacity", "64M");
    fh = MPI_FILE_NULL;
    if (OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, used, &fh))) {
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        expect_state(fh, "reopened with the node-local tier's hints", ST_TAKEN);
        info_case_write(fh, &m, 2000, seed_of(4));
        OK(MPI_File_sync(fh));
        uint8_t got[1000];
        MPI_Status st;
        if (OK(MPI_File_read_at(fh, (int64_t)g_rank * 2000, got, 1000, MPI_BYTE, &st)))
            check_buf("own bytes read back with the tier's hints", got, &m,
                      (int64_t)g_rank * 2000, 1000);
        close_file(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        struct stat sb;
        if (g_layer && stat(local, &sb) != 0)
            fail("%s: the layer made no node-local store for its file (the tier's hints)",
                 local);
    }
    MPI_Info_free(&used);
    MPI_File again = MPI_FILE_NULL; /* waits for the drain */
    if (OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &again)))
        OK(MPI_File_close(&again));
    check_file(name, &m);
    model_free(&m);
}
