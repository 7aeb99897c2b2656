/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: fwdio's open of a taken file failing after the layer's
 * MPI_File_open returned. The layer does not wait for fwdio's ready status
 * at the open (mpiio/opening.c): writes go to the stream at once while the
 * layer keeps a copy of them, and a call that needs the outcome (a read,
 * get_info, a collective call, a write past the copy's bound, the close)
 * learns it. Ranks opening with different fwdio hints (fwdio_durable on rank
 * 0 only; MPI-IO ignores the key) make fwdio's open check fail on every rank
 * after the open returned; the file must then hold every byte, and every
 * call return, as without the layer (the plain build runs the same program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "test_mpiio.h"

/* Every rank opens name, rank 0 with the hint fwdio_durable=1. */
static MPI_File open_disagreeing(const char *name)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (g_rank == 0)
        MPI_Info_set(info, "fwdio_durable", "1");
    remove_file(name);
    MPI_File fh = open_comm_info(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE, info);
    MPI_Info_free(&info);
    return fh;
}

/* This rank's write of len pattern bytes at off (or at its pointer, there). */
static void put(MPI_File fh, int64_t off, int64_t len, int gen, int at_pointer)
{
    uint8_t *b = pattern_buf(off, len, seed_of(gen));
    if (at_pointer)
        OK(MPI_File_write(fh, b, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
    else
        OK(MPI_File_write_at(fh, off, b, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
}

/* Every rank's pieces in the model (each rank writes the same pattern). */
static void model_all(model_t *m, int64_t base, int64_t stride, int64_t at, int64_t len, int gen)
{
    for (int q = 0; q < g_size; q++)
        model_put(m, base + q * stride + at, len, seed_of(gen));
}

/* Read [off, off + len) on this rank and compare it with the model. */
static void read_check(MPI_File fh, const char *what, const model_t *m, int64_t off, int64_t len,
                       int collective)
{
    uint8_t *got = malloc((size_t)len);
    memset(got, 0xEE, (size_t)len);
    int rc = collective ? MPI_File_read_at_all(fh, off, got, (int)len, MPI_BYTE, MPI_STATUS_IGNORE)
                        : MPI_File_read_at(fh, off, got, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (OK(rc))
        check_buf(what, got, m, off, len);
    free(got);
}

/* 1: independent writes (one over the rank's own bytes, one at the
   individual pointer), then an independent read learns the outcome; a
   collective write, sync-barrier-sync and a collective read follow. */
static void late_independent(void)
{
    const char *name = "late_indep.mpiio";
    const int64_t piece = 3000, P = g_size, r = g_rank;
    model_t m = {0};
    MPI_File fh = open_disagreeing(name);
    if (fh == MPI_FILE_NULL)
        return;
    put(fh, r * piece, piece, 1, 0);
    put(fh, r * piece + 1000, 500, 2, 0); /* over its own bytes: the later wins */
    OK(MPI_File_seek(fh, P * piece + r * piece, MPI_SEEK_SET));
    put(fh, P * piece + r * piece, piece, 3, 1);
    model_all(&m, 0, piece, 0, piece, 1);
    model_all(&m, 0, piece, 1000, 500, 2);
    model_all(&m, P * piece, piece, 0, piece, 3);
    check_position(fh, "after writes before the open is known", P * piece + r * piece + piece);
    read_check(fh, "a rank's own bytes read back", &m, r * piece, piece, 0);
    expect_state(fh, "after fwdio's open failed", ST_RELEASED);
    check_position(fh, "after the file went back to MPI-IO", P * piece + r * piece + piece);
    uint8_t *b = pattern_buf(2 * P * piece + r * piece, piece, seed_of(4));
    OK(MPI_File_write_at_all(fh, 2 * P * piece + r * piece, b, (int)piece, MPI_BYTE,
                             MPI_STATUS_IGNORE));
    free(b);
    model_all(&m, 2 * P * piece, piece, 0, piece, 4);
    sync_barrier_sync(fh);
    check_size(fh, "after sync-barrier-sync", 3 * P * piece);
    read_check(fh, "every rank's bytes, read collectively", &m, 0, 3 * P * piece, 1);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* 2: independent writes, then a collective call (a new view) learns the
   outcome before the view changes; writes through the new view follow. */
static void late_collective(void)
{
    const char *name = "late_view.mpiio";
    const int64_t piece = 2048, P = g_size, r = g_rank;
    model_t m = {0};
    MPI_File fh = open_disagreeing(name);
    if (fh == MPI_FILE_NULL)
        return;
    put(fh, r * piece, piece, 5, 0);
    model_all(&m, 0, piece, 0, piece, 5);
    /* the view starts past every rank's bytes; each rank writes its piece */
    OK(MPI_File_set_view(fh, P * piece, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    expect_state(fh, "after a new view", ST_RELEASED);
    OK(MPI_File_seek(fh, r * piece, MPI_SEEK_SET));
    uint8_t *b = pattern_buf(P * piece + r * piece, piece, seed_of(6));
    OK(MPI_File_write_all(fh, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
    model_all(&m, P * piece, piece, 0, piece, 6);
    check_position(fh, "after write_all in the new view", r * piece + piece);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    sync_barrier_sync(fh);
    read_check(fh, "every rank's bytes", &m, 0, 2 * P * piece, 0);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* 3: more bytes than the layer keeps for an open not known yet (4 MiB a
   rank): the write past them learns the outcome first. */
static void late_past_log(void)
{
    const char *name = "late_log.mpiio";
    const int64_t piece = 3 << 19, per_rank = 3 * piece, r = g_rank;
    model_t m = {0};
    MPI_File fh = open_disagreeing(name);
    if (fh == MPI_FILE_NULL)
        return;
    for (int k = 0; k < 3; k++) {
        put(fh, r * per_rank + k * piece, piece, 7 + k, 0);
        model_all(&m, 0, per_rank, k * piece, piece, 7 + k);
    }
    expect_state(fh, "after writes past the log", ST_RELEASED);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* 4: open, a nonblocking write, close: the close learns the outcome. */
static void late_at_close(void)
{
    const char *name = "late_close.mpiio";
    const int64_t piece = 65536, r = g_rank;
    model_t m = {0};
    MPI_File fh = open_disagreeing(name);
    if (fh == MPI_FILE_NULL)
        return;
    uint8_t *b = pattern_buf(r * piece, piece, seed_of(10));
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    if (OK(MPI_File_iwrite_at(fh, r * piece, b, (int)piece, MPI_BYTE, &req))) {
        OK(MPI_Wait(&req, &st));
        check_count("iwrite_at before the open is known", &st, MPI_BYTE, (int)piece);
    }
    free(b);
    model_all(&m, 0, piece, 0, piece, 10);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* 5: the close as the first call that needs the outcome, where ranks stand
   differently: rank 0 read its bytes (and so gave the file back) before,
   the last rank wrote its bytes twice (kept for after the step); the
   others know nothing yet. */
static void late_mixed_close(void)
{
    const char *name = "late_mixed.mpiio";
    const int64_t piece = 5000, r = g_rank, last = g_size - 1;
    model_t m = {0};
    MPI_File fh = open_disagreeing(name);
    if (fh == MPI_FILE_NULL)
        return;
    put(fh, r * piece, piece, 11, 0);
    model_all(&m, 0, piece, 0, piece, 11);
    if (r == last)
        put(fh, r * piece + 100, 300, 12, 0);
    model_put(&m, last * piece + 100, 300, seed_of(12));
    if (r == 0) {
        model_t mine = {0};
        model_put(&mine, 0, piece, seed_of(11));
        read_check(fh, "rank 0's own bytes", &mine, 0, piece, 0);
        expect_state(fh, "rank 0 after its read", ST_RELEASED);
        model_free(&mine);
    }
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

void case_late_refusal(void)
{
    if (g_size < 2) {
        if (g_rank == 0)
            note("skipped: ranks disagree on the hints with 2 ranks or more");
        return;
    }
    late_independent();
    late_collective();
    late_past_log();
    late_at_close();
    late_mixed_close();
}

/* The layer's own writes of the logged bytes failing on the last rank (a
   file size limit below them, EFBIG; not in --all: it lowers RLIMIT_FSIZE):
   the collective call that learns the outcome returns the failure on every
   rank, and so does the close; a close that learns it itself does too. */
void case_late_refusal_fault(void)
{
    if (!g_layer || g_size < 2) {
        if (g_rank == 0)
            note("skipped: needs the layer and 2 ranks or more");
        return;
    }
    const int last = g_size - 1;
    const int64_t at = 512 << 10, len = 4096;
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
    if (g_rank == last)
        set_file_limit(256 << 10);
    MPI_File fh = open_disagreeing("late_fault.mpiio");
    if (fh != MPI_FILE_NULL) {
        if (g_rank == last) {
            uint8_t *a = pattern_buf(at, len, seed_of(1));
            OK(MPI_File_write_at(fh, at, a, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
            free(a);
        }
        expect_error(MPI_File_sync(fh), "MPI_File_sync after the layer's replay failed",
                     MPI_ERR_IO, strerror(EFBIG));
        expect_error(MPI_File_close(&fh), "MPI_File_close after the layer's replay failed",
                     MPI_ERR_IO, strerror(EFBIG));
    }
    /* the close as the first call that needs the outcome: it learns it after
       MPI-IO's own close, and still fails on every rank */
    fh = open_disagreeing("late_fault_close.mpiio");
    if (fh != MPI_FILE_NULL) {
        if (g_rank == last) {
            uint8_t *a = pattern_buf(at, len, seed_of(2));
            OK(MPI_File_write_at(fh, at, a, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
            free(a);
        }
        expect_error(MPI_File_close(&fh), "MPI_File_close when the layer's replay failed there",
                     MPI_ERR_IO, strerror(EFBIG));
    }
    if (g_rank == last)
        set_file_limit(RLIM_INFINITY);
    signal(SIGXFSZ, SIG_DFL);
    MPI_Barrier(MPI_COMM_WORLD);
}
