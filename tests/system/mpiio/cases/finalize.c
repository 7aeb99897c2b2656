/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: closes that return before the file is whole
 * (FWDIO_MPIIO_CLOSE=async), a file closed inside MPI_Finalize, and an
 * asynchronous close that fails; the driver checks the files MPI_Finalize
 * completes after it returns.
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
/* Case: FWDIO_MPIIO_CLOSE=async (also right with a synchronous close)        */
/* ------------------------------------------------------------------------- */

model_t g_after_finalize; /* the file checked after MPI_Finalize */
int g_check_after_finalize;
const char *const AFTER_FINALIZE_NAME = "async_3.mpiio";
const char *const DELETED_NAME = "async_2.mpiio";

void case_async_close(void)
{
    MPI_Status st;
    /* 1: closed, then opened read-only at once: every byte is there */
    {
        const char *name = "async_1.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        model_t m = {.holes_zero = g_layer};
        write_rounds(fh, &m, 3, 300000 / g_size + 17, 0);
        close_file(&fh);
        fh = open_file(name, MPI_MODE_RDONLY);
        expect_state(fh, "reopened read-only", ST_ABSENT);
        uint8_t *all = malloc((size_t)m.size);
        memset(all, 0xEE, (size_t)m.size);
        if (OK(MPI_File_read_at_all(fh, 0, all, (int)m.size, MPI_BYTE, &st)))
            check_buf("read_at_all after reopening read-only", all, &m, 0, m.size);
        check_size(fh, "reopened read-only", m.size);
        free(all);
        check_file(name, &m); /* POSIX, while the read-only handle is open */
        close_file(&fh);
        check_file(name, &m);
        model_free(&m);
    }
    /* 2: closed, then deleted: the file is gone and stays gone */
    {
        remove_file(DELETED_NAME);
        MPI_File fh = open_file(DELETED_NAME, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        model_t m = {.holes_zero = g_layer};
        write_rounds(fh, &m, 2, 200000 / g_size + 5, 10);
        close_file(&fh);
        if (g_rank == 0) {
            char p[4200];
            path_of(p, sizeof p, DELETED_NAME);
            OK(MPI_File_delete(p, MPI_INFO_NULL));
            CHECK(!file_exists(DELETED_NAME), "%s exists after MPI_File_delete", DELETED_NAME);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        model_free(&m);
    }
    /* 3: closed and left until MPI_Finalize (checked after it) */
    {
        remove_file(AFTER_FINALIZE_NAME);
        MPI_File fh = open_file(AFTER_FINALIZE_NAME, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        leave_to_finalize(AFTER_FINALIZE_NAME);
        model_free(&g_after_finalize);
        g_after_finalize.holes_zero = g_layer;
        write_rounds(fh, &g_after_finalize, 3, 250000 / g_size + 3, 20);
        close_file(&fh);
        g_check_after_finalize = 1;
    }
    /* 4: closed, opened again for writing: the new bytes after the old ones */
    {
        const char *name = "async_4.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        model_t m = {.holes_zero = g_layer};
        write_rounds(fh, &m, 2, 100000, 30);
        close_file(&fh);
        fh = open_file(name, MPI_MODE_WRONLY);
        expect_state(fh, "reopened for writing", ST_TAKEN);
        /* overwrite the middle of every rank's first piece */
        for (int q = 0; q < g_size; q++)
            model_put(&m, q * 100000 + 40000, 20000, seed_of(40));
        uint8_t *b = pattern_buf(g_rank * 100000 + 40000, 20000, seed_of(40));
        OK(MPI_File_write_at_all(fh, g_rank * 100000 + 40000, b, 20000, MPI_BYTE, &st));
        free(b);
        close_file(&fh);
        fh = open_file(name, MPI_MODE_RDONLY);
        close_file(&fh);
        check_file(name, &m);
        model_free(&m);
    }
}

/* ------------------------------------------------------------------------- */
/* Case: a file closed inside MPI_Finalize (parallel HDF5 does it so)          */
/* ------------------------------------------------------------------------- */

model_t g_self_closed; /* the file checked after MPI_Finalize */
int g_check_self_closed;
const char *const SELF_CLOSED_NAME = "finalize_close.mpiio";
static MPI_File g_self_closed_fh = MPI_FILE_NULL;
static uint8_t *g_self_closed_last; /* the callback's piece (made by the case) */

/* The delete callback of an attribute on MPI_COMM_SELF: MPI_Finalize runs it
 * first. It writes one more piece per rank, collectively, and closes. */
static int close_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)value;
    (void)extra;
    int64_t piece = 3000;
    int rc = MPI_File_write_at_all(g_self_closed_fh, ((int64_t)g_size + g_rank) * piece,
                                   g_self_closed_last, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE);
    free(g_self_closed_last);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_close(&g_self_closed_fh);
    if (rc != MPI_SUCCESS)
        fail("the close inside MPI_Finalize: %s", err_text(rc));
    MPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

void case_finalize_close(void)
{
    char p[4200];
    path_of(p, sizeof p, SELF_CLOSED_NAME);
    remove_file(SELF_CLOSED_NAME);
    /* not through open_comm: the file outlives the case (no removal at its end) */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                     &g_self_closed_fh));
    expect_state(g_self_closed_fh, "after open", ST_TAKEN);
    int64_t piece = 3000;
    model_free(&g_self_closed);
    g_self_closed.holes_zero = g_layer;
    for (int q = 0; q < g_size; q++) {
        model_put(&g_self_closed, q * piece, piece, seed_of(1));
        model_put(&g_self_closed, ((int64_t)g_size + q) * piece, piece, seed_of(2));
    }
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    OK(MPI_File_write_at(g_self_closed_fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                         MPI_STATUS_IGNORE));
    free(b);
    g_self_closed_last = pattern_buf(((int64_t)g_size + g_rank) * piece, piece, seed_of(2));
    int keyval;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_at_finalize, &keyval, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL));
    g_check_self_closed = 1;
    leave_to_finalize(SELF_CLOSED_NAME);
}

/* ------------------------------------------------------------------------- */
/* Case: an asynchronous close that fails (not in --all: FWDIO_FAULT and       */
/* FWDIO_MPIIO_CLOSE=async, ../CMakeLists.txt)                               */
/* ------------------------------------------------------------------------- */

/* Every pwrite of async_fault.mpiio fails. With FWDIO_MPIIO_CLOSE=async the
   close may return before the failure is known: then the next MPI_File_open
   of the path returns it, on every rank alike, and the open after that
   works. A second such file is left to MPI_Finalize, which returns the
   failure (checked by the driver). */
int g_expect_finalize_error;

void case_async_close_fault(void)
{
    if (!g_layer) {
        if (g_rank == 0)
            note("skipped: without the layer FWDIO_FAULT has no effect");
        return;
    }
    const char *name = "async_fault.mpiio";
    const int64_t piece = 65536;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    if (fh == MPI_FILE_NULL) {
        free(b);
        return;
    }
    int rc = MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
    int close_rc = MPI_File_close(&fh);
    int failed_by_close = rc != MPI_SUCCESS || close_rc != MPI_SUCCESS, all = 0;
    MPI_Allreduce(&failed_by_close, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == 0 || all == g_size, "the close reported the failure on %d of %d ranks", all,
          g_size);
    if (!failed_by_close) { /* the next open of the path reports it */
        char p[4200];
        path_of(p, sizeof p, name);
        fh = MPI_FILE_NULL;
        rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        expect_error(rc, "MPI_File_open after a failed asynchronous close", MPI_ERR_IO,
                     "asynchronous close failed");
        CHECK(fh == MPI_FILE_NULL, "a failed open returned a file handle");
        if (rc == MPI_SUCCESS && fh != MPI_FILE_NULL)
            MPI_File_close(&fh);
    } else if (g_rank == 0) {
        note("the failure came by the write or the close already");
    }
    fh = open_file(name, MPI_MODE_WRONLY); /* reported once: this one works */
    close_file(&fh);
    /* a second file, closed and left to MPI_Finalize */
    const char *name2 = "async_fault_final.mpiio";
    remove_file(name2);
    fh = open_file(name2, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    leave_to_finalize(name2);
    if (fh != MPI_FILE_NULL) {
        rc = MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
        close_rc = MPI_File_close(&fh);
        g_expect_finalize_error = rc == MPI_SUCCESS && close_rc == MPI_SUCCESS;
    }
    free(b);
}
