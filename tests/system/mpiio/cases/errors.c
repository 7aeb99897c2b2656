/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: failures the layer reports as MPI errors. Injected pwrite
 * faults (FWDIO_FAULT), the layer's own writes failing (RLIMIT_FSIZE), and an
 * error's text under a long path.
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
/* Case: injected pwrite faults (FWDIO_FAULT, see ../CMakeLists.txt)         */
/* ------------------------------------------------------------------------- */

/* A handler of the application's own: it counts its calls, and returns. */
static int g_handler_calls;
static MPI_File g_handler_file;

static void counting_handler(MPI_File *fh, int *code, ...)
{
    (void)code;
    g_handler_calls++;
    CHECK(fh && *fh == g_handler_file, "the file's error handler was called for another handle");
}

/* Every call that returns an error has called a handler of the
 * application's once (none returns one without it). */
static void check_handler(int rc, const char *call, int *seen)
{
    if (g_handler_file == MPI_FILE_NULL)
        return;
    int want = *seen + (rc != MPI_SUCCESS);
    CHECK(g_handler_calls == want, "%s returned %s after %d calls of the file's error handler, "
          "expected %d", call, rc == MPI_SUCCESS ? "success" : "an error",
          g_handler_calls - *seen, want - *seen);
    *seen = g_handler_calls;
}

/* own_handler: the file has a handler of the application's (it must see the
 * failure with the handle still open) instead of MPI_ERRORS_RETURN (where the
 * layer's close overlaps MPI-IO's own close with fwdio's wait). */
static void fault_file(const char *name, int want_class, const char *class_name, int own_handler)
{
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Errhandler counting = MPI_ERRHANDLER_NULL;
    int seen = g_handler_calls;
    g_handler_file = MPI_FILE_NULL;
    if (own_handler) {
        OK(MPI_File_create_errhandler(counting_handler, &counting));
        OK(MPI_File_set_errhandler(fh, counting));
        g_handler_file = fh;
    } else {
        OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    }
    int64_t piece = 65536;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    int first = MPI_SUCCESS;
    const char *where = "";
    int rc = MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE);
    check_handler(rc, "the first write_at_all", &seen);
    if (rc != MPI_SUCCESS) {
        fail("the first write_at_all failed already: %s", err_text(rc));
        first = rc;
        where = "the first write";
    }
    /* Independent writes while the failure becomes known, sooner on some
     * ranks than on others: none returns it (it comes from a call that
     * waits for the steps, the same one on every rank). */
    for (int k = 0; k < 20 && first == MPI_SUCCESS; k++) {
        int64_t ok = (int64_t)(2 + k) * g_size * piece + g_rank * 64;
        rc = MPI_File_write_at(fh, ok, b, 64, MPI_BYTE, MPI_STATUS_IGNORE);
        check_handler(rc, "an independent write", &seen);
        CHECK(rc == MPI_SUCCESS, "independent write %d after the failing step returned %s", k,
              err_text(rc));
        usleep(10000);
    }
    /* the error of the first write may come with this second write */
    int64_t o2 = (int64_t)g_size * piece + g_rank * piece;
    rc = MPI_File_write_at_all(fh, o2, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE);
    check_handler(rc, "the second write_at_all", &seen);
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS) {
        first = rc;
        where = "the second write_at_all";
    }
    rc = MPI_File_sync(fh);
    check_handler(rc, "MPI_File_sync", &seen);
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS) {
        first = rc;
        where = "MPI_File_sync";
    }
    /* With FWDIO_MPIIO_SYNC=async the sync returns before the bytes are
       written: the error comes by the close at the latest. */
    const char *sync_mode = getenv("FWDIO_MPIIO_SYNC");
    int sync_async = sync_mode && strcmp(sync_mode, "async") == 0;
    if (first == MPI_SUCCESS && !sync_async)
        fail("%s: no error from the writes or MPI_File_sync, though every pwrite fails", name);
    rc = MPI_File_close(&fh);
    check_handler(rc, "MPI_File_close", &seen);
    g_handler_file = MPI_FILE_NULL;
    if (counting != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&counting);
    if (first == MPI_SUCCESS && rc != MPI_SUCCESS) {
        first = rc;
        where = "MPI_File_close";
    }
    if (first == MPI_SUCCESS && sync_async)
        fail("%s: no error from the writes, MPI_File_sync or MPI_File_close, though every "
             "pwrite fails", name);
    /* the failure comes back from the same call on every rank */
    int at = !strcmp(where, "the first write")           ? 0
             : !strcmp(where, "the second write_at_all") ? 1
             : !strcmp(where, "MPI_File_sync")           ? 2
             : !strcmp(where, "MPI_File_close")          ? 3
                                                         : 4;
    int lo = at, hi = at;
    MPI_Allreduce(&at, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&at, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "%s: the failure came back from different calls on different ranks "
                    "(this rank: %s)", name, where[0] ? where : "none");
    free(b);
    if (first != MPI_SUCCESS) {
        int cls = -1, len = 0;
        char s[MPI_MAX_ERROR_STRING];
        s[0] = 0;
        MPI_Error_class(first, &cls);
        MPI_Error_string(first, s, &len);
        CHECK(cls == want_class, "%s: error from %s has class %d (%s), expected %s (%d)", name,
              where, cls, s, class_name, want_class);
        CHECK(!g_code_text || strstr(s, "fwdio") != NULL,
              "%s: the error string from %s (\"%s\") lacks \"fwdio\"",
              name, where, s);
        if (g_rank == 0)
            note("%s: %s returned %s", name, where, err_text(first));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* fault_eio: every pwrite of fault_eio.mpiio fails with EIO (FWDIO_FAULT=
   pwrite:eio:path=fault_eio.mpiio); fault_nospc: with ENOSPC. Then a file without
   faults comes out right. */
static void fault_case(const char *name, int want_class, const char *class_name)
{
    if (!g_layer) {
        if (g_rank == 0)
            note("skipped: without the layer FWDIO_FAULT has no effect");
        return;
    }
    fault_file(name, want_class, class_name, 0);
    fault_file(name, want_class, class_name, 1);
    const char *after = "fault_after.mpiio";
    remove_file(after);
    MPI_File fh = open_file(after, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    write_rounds(fh, &m, 2, 50000, 50);
    close_file(&fh);
    check_file(after, &m);
    model_free(&m);
}

void case_fault_eio(void) { fault_case("fault_eio.mpiio", MPI_ERR_IO, "MPI_ERR_IO"); }

void case_fault_nospc(void)
{
    fault_case("fault_nospc.mpiio", MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE");
}

/* ------------------------------------------------------------------------- */
/* Case: the layer's own writes failing (not in --all: it lowers RLIMIT_FSIZE) */
/* ------------------------------------------------------------------------- */

void set_file_limit(rlim_t bytes)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
        return;
    rl.rlim_cur = bytes; /* the soft limit only: it can be raised again */
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        fail("setrlimit(RLIMIT_FSIZE): %s", strerror(errno));
}

/* The writes the layer makes itself are the second copy of bytes a rank
   writes twice in one step, MPI_File_preallocate's allocation, a held small
   file's bytes at its close, an independent write while another handle of
   the path is open, and a rank's many kept pieces before it reads. A file
   size limit (RLIMIT_FSIZE) makes them fail with EFBIG on one rank: the last
   rank's limit is below the bytes it writes twice, rank 0's (which
   allocates) below the size preallocated. The collective call in which it
   fails, every rank's MPI_File_close and every rank's preallocate must
   return that failure, not success. */
void case_own_failures(void)
{
    if (!g_layer || g_size < 2) {
        if (g_rank == 0)
            note("skipped: needs the layer and 2 ranks or more");
        return;
    }
    const int last = g_size - 1;
    const int64_t at = 512 << 10, len = 4096;
    const char *too_large = strerror(EFBIG);
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
    if (g_rank == last)
        set_file_limit(256 << 10);
    else if (g_rank == 0)
        set_file_limit(1 << 20);
    /* 1: the second copy of bytes written twice in one step */
    {
        const char *name = "own_overlay.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        if (fh != MPI_FILE_NULL) {
            if (g_rank == last) {
                uint8_t *a = pattern_buf(at, len, seed_of(1));
                uint8_t *b = pattern_buf(at, len, seed_of(2));
                OK(MPI_File_write_at(fh, at, a, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
                OK(MPI_File_write_at(fh, at, b, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
                free(a);
                free(b);
            }
            /* the collective call ends the step; the layer then writes b, and
             * the call returns the failure on every rank */
            int rc = MPI_File_write_at_all(fh, 0, NULL, 0, MPI_BYTE, MPI_STATUS_IGNORE);
            expect_error(rc, "write_at_all after bytes written twice (on every rank)",
                         MPI_ERR_IO, too_large);
            expect_error(MPI_File_close(&fh), "MPI_File_close after the layer's write failed",
                         MPI_ERR_IO, too_large);
        }
    }
    /* 2: MPI_File_preallocate past rank 0's limit: every rank's call fails */
    {
        const char *name = "own_prealloc.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        if (fh != MPI_FILE_NULL) {
            expect_error(MPI_File_preallocate(fh, 2 << 20), "MPI_File_preallocate past the limit",
                         MPI_ERR_IO, too_large);
            close_file(&fh);
        }
    }
    /* 3: a small file every rank still holds at the close (hold.c): each
     * rank writes its own bytes there, the last rank's past its limit; every
     * rank's close returns that failure */
    {
        const char *name = "own_held.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        if (fh != MPI_FILE_NULL) {
            const int64_t piece = 3000, off = g_rank == last ? 300 << 10 : g_rank * piece;
            uint8_t *a = pattern_buf(off, piece, seed_of(3));
            OK(MPI_File_write_at(fh, off, a, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE));
            free(a);
            expect_error(MPI_File_close(&fh), "MPI_File_close of a held file, a write failing",
                         MPI_ERR_IO, "writing the held bytes");
        }
    }
    /* 4: another handle of the path open (aliases.c): the last rank's
     * independent write through its own MPI_COMM_SELF handle is written by
     * the layer at once, past the limit: that call fails, and so does the
     * close of that handle; the collective handle closes well */
    {
        const char *name = "own_alias.mpiio";
        remove_file(name);
        MPI_File world = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
        MPI_File self = open_comm(MPI_COMM_SELF, name, MPI_MODE_RDWR);
        if (world != MPI_FILE_NULL && self != MPI_FILE_NULL) {
            const int64_t off = g_rank == last ? 300 << 10 : g_rank * len;
            uint8_t *a = pattern_buf(off, len, seed_of(4));
            int rc = MPI_File_write_at(self, off, a, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
            free(a);
            if (g_rank == last) {
                expect_error(rc, "write_at through a second handle, past the limit", MPI_ERR_IO,
                             too_large);
                expect_error(MPI_File_close(&self), "the close of that handle", MPI_ERR_IO,
                             too_large);
            } else {
                OK(rc);
                close_file(&self);
            }
            close_file(&world);
        } else {
            close_file(&self);
            close_file(&world);
        }
    }
    /* 5: a rank's read back of its own bytes past MPIIO_PATCH_MAX kept
     * pieces (readback.c) writes the pieces to the file first, here past the
     * last rank's limit: its read fails, and the close on every rank */
    {
        const char *name = "own_flush.mpiio";
        remove_file(name);
        MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
        expect_state(fh, "after open", ST_TAKEN);
        if (fh != MPI_FILE_NULL) {
            int rc = MPI_SUCCESS;
            if (g_rank == last) {
                uint8_t b[16], got[16];
                for (int i = 0; i < 300 && rc == MPI_SUCCESS; i++) {
                    memset(b, i, sizeof b);
                    rc = MPI_File_write_at(fh, (300 << 10) + 32 * i, b, 16, MPI_BYTE,
                                           MPI_STATUS_IGNORE);
                }
                OK(rc);
                rc = MPI_File_read_at(fh, 300 << 10, got, 16, MPI_BYTE, MPI_STATUS_IGNORE);
                expect_error(rc, "read_at of its own 300 pieces, their writes failing",
                             MPI_ERR_IO, too_large);
            }
            expect_error(MPI_File_close(&fh), "MPI_File_close after the pieces' writes failed",
                         MPI_ERR_IO, too_large);
        }
    }
    if (g_rank == last || g_rank == 0)
        set_file_limit(RLIM_INFINITY);
    signal(SIGXFSZ, SIG_DFL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* --- an error's text under a long path ----------------------------------------- */

/* A refusal on a file whose path is long (225 bytes: longer ones crash Open
 * MPI 4.1's own open, whose shared-pointer component has a fixed buffer):
 * MPI_Error_string still gives the message whole (it comes first; the path
 * gives way, keeping its end). */
void case_long_path(void)
{
    char sub[200];
    long sublen = 225 - (long)strlen(g_dir) - 1 - (long)strlen("/long_path.mpiio");
    sublen = sublen < 1 ? 1 : sublen > 199 ? 199 : sublen;
    memset(sub, 'd', (size_t)sublen);
    sub[sublen] = '\0';
    char dir[4400], p[4500];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, sub);
    snprintf(p, sizeof p, "%s/long_path.mpiio", dir);
    if (g_rank == 0 && mkdir(dir, 0755) != 0 && errno != EEXIST)
        fail("long_path: mkdir %s: %s", dir, strerror(errno));
    if (g_rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh = MPI_FILE_NULL;
    if (!OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                          &fh)))
        return;
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    expect_state(fh, "after open", ST_TAKEN);
    uint8_t b[16] = {0};
    MPI_Status st;
    if (g_layer) {
        int rc = MPI_File_write_at(fh, -5, b, 16, MPI_BYTE, &st);
        char s[MPI_MAX_ERROR_STRING];
        int len = 0;
        s[0] = '\0';
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, s, &len);
        CHECK(rc != MPI_SUCCESS && (!g_code_text || (strstr(s, "MPI_File_write_at: a negative offset") &&
                                                     strstr(s, "long_path.mpiio)"))),
              "long_path: a negative offset gave %s", err_text(rc));
    }
    OK(MPI_File_write_at(fh, 16 * g_rank, b, 16, MPI_BYTE, &st));
    close_file(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0 && !g_keep_files) {
        unlink(p);
        rmdir(dir);
    }
}

/* ------------------------------------------------------------------------- */
/* Case: the layer's own agreement fails on one rank                         */
/* ------------------------------------------------------------------------- */

#if MPIIO_TEST_LAYER
#include <dlfcn.h>

/* Set on one rank just before a collective call: that rank's next
 * PMPI_Allreduce (the layer's agreements; fwdio's own collectives and this
 * program's MPI_Allreduce do not come here) completes with the others and
 * then returns MPI_ERR_OTHER, as an MPI whose collective failed after the
 * exchange would. The layer is linked ahead of libmpi and calls
 * PMPI_Allreduce; this definition in the program comes first. */
static volatile int fail_next_allreduce;

/* Exported whatever visibility mpi.h declares it with (MPICH's: hidden). */
__attribute__((visibility("default"))) int PMPI_Allreduce(const void *sendbuf, void *recvbuf,
                                                          int count, MPI_Datatype datatype,
                                                          MPI_Op op, MPI_Comm comm)
{
    typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    static allreduce_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "PMPI_Allreduce");
    int rc = real(sendbuf, recvbuf, count, datatype, op, comm);
    if (rc == MPI_SUCCESS && fail_next_allreduce) {
        fail_next_allreduce = 0;
        return MPI_ERR_OTHER;
    }
    return rc;
}

/* Set on one rank just before a close: that rank's next PMPI_Wait (the
 * close's second agreement, an MPI_Iallreduce finished after MPI-IO's
 * close) completes and then returns MPI_ERR_OTHER. */
static volatile int fail_next_wait;

__attribute__((visibility("default"))) int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    typedef int (*wait_fn)(MPI_Request *, MPI_Status *);
    static wait_fn real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "PMPI_Wait");
    int rc = real(request, status);
    if (rc == MPI_SUCCESS && fail_next_wait) {
        fail_next_wait = 0;
        return MPI_ERR_OTHER;
    }
    return rc;
}

/* The close's second agreement fails on rank 1 (after its exchange): rank
 * 1's close returns the failure, naming the agreement, no rank waits for
 * ever, and a rank told its close succeeded has every byte in the file. */
static void agree_fault_second(const char *name)
{
    remove_file(name);
    model_t m = {.holes_zero = 1};
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    if (fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN)); /* the close's nonblocking way */
    const int64_t piece = 4096;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(4));
    OK(MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
    for (int q = 0; q < g_size; q++)
        model_put(&m, q * piece, piece, seed_of(4));
    fail_next_wait = g_rank == 1;
    int rc = MPI_File_close(&fh);
    int failed_to_inject = fail_next_wait;
    fail_next_wait = 0;
    CHECK(!failed_to_inject, "%s: the close made no nonblocking agreement on rank 1", name);
    if (g_rank == 1) {
        CHECK(rc != MPI_SUCCESS, "%s: rank 1's close returned MPI_SUCCESS although its "
                                 "second agreement failed", name);
        CHECK(rc == MPI_SUCCESS || strstr(err_text(rc), "MPI_Iallreduce") || !g_code_text,
              "%s: rank 1's close error does not name the agreement: %s", name, err_text(rc));
    }
    int ok = rc == MPI_SUCCESS, any_ok = 0;
    MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_ok)
        check_file(name, &m);
    model_free(&m);
}

/* MPI_File_set_view's agreement (an MPI_Iallreduce beside MPI-IO's own
 * set_view, finished by a PMPI_Wait) fails on rank 1 after its exchange:
 * rank 1's set_view returns the failure, naming the agreement, the others'
 * succeed, nobody waits for ever, and since every rank could map its view
 * (rank 1 keeps its own choice) the writes through the new view land where
 * MPI says: each rank's 256-byte blocks r, r + n, r + 2n, r + 3n. */
static void agree_fault_view(const char *name)
{
    remove_file(name);
    model_t m = {.holes_zero = 1};
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    if (fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    const int block = 256, blocks = 4;
    MPI_Datatype run, ft;
    OK(MPI_Type_contiguous(block, MPI_BYTE, &run));
    OK(MPI_Type_create_resized(run, 0, (MPI_Aint)block * g_size, &ft));
    OK(MPI_Type_commit(&ft));
    fail_next_wait = g_rank == 1;
    int rc = MPI_File_set_view(fh, (MPI_Offset)g_rank * block, MPI_BYTE, ft, "native",
                               MPI_INFO_NULL);
    int failed_to_inject = fail_next_wait;
    fail_next_wait = 0;
    CHECK(!failed_to_inject, "%s: set_view made no nonblocking agreement on rank 1", name);
    if (g_rank == 1)
        CHECK(rc != MPI_SUCCESS && (strstr(err_text(rc), "MPI_Iallreduce") || !g_code_text),
              "%s: rank 1's set_view did not report its failed agreement: %s", name,
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : err_text(rc));
    else
        CHECK(rc == MPI_SUCCESS, "%s: set_view failed on rank %d: %s", name, g_rank,
              err_text(rc));
    uint8_t *b = malloc((size_t)block * blocks);
    for (int k = 0; k < blocks; k++) {
        int64_t off = ((int64_t)k * g_size + g_rank) * block;
        uint8_t *p = pattern_buf(off, block, seed_of(5));
        memcpy(b + (size_t)k * block, p, (size_t)block);
        free(p);
    }
    OK(MPI_File_write_at_all(fh, 0, b, block * blocks, MPI_BYTE, MPI_STATUS_IGNORE));
    free(b);
    for (int q = 0; q < g_size; q++)
        for (int k = 0; k < blocks; k++)
            model_put(&m, ((int64_t)k * g_size + q) * block, block, seed_of(5));
    OK(MPI_File_close(&fh));
    OK(MPI_Type_free(&ft));
    OK(MPI_Type_free(&run));
    check_file(name, &m);
    model_free(&m);
}

/* One file: every rank writes its piece (collectively; or, with AF_OVERLAY,
 * independently, rank 0 then writing over its own piece through a second
 * handle, so that the others agree on a last step at the close; or, with
 * AF_HELD, independently through a write-only handle, so that every rank
 * still holds its bytes at the close, hold.c, and rank 1, whose agreement
 * takes every flag as set, goes the stream's way alone); rank 1's agreement
 * at the close fails. Rank 1's close must fail, no rank may wait for ever,
 * and every rank's close reports the failure (the second agreement of the
 * close tells them). */
enum { AF_COLLECTIVE, AF_OVERLAY, AF_HELD };
static void agree_fault_file(const char *name, int how)
{
    const int overlay = how == AF_OVERLAY;
    remove_file(name);
    model_t m = {.holes_zero = 1};
    MPI_File fh = open_file(name, how == AF_HELD ? MPI_MODE_WRONLY | MPI_MODE_CREATE
                                                 : MPI_MODE_RDWR | MPI_MODE_CREATE);
    if (fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    const int64_t piece = 4096;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(1));
    if (how != AF_COLLECTIVE)
        OK(MPI_File_write_at(fh, g_rank * piece, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE));
    else
        OK(MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
    free(b);
    for (int q = 0; q < g_size; q++)
        model_put(&m, q * piece, piece, seed_of(1));
    if (overlay) {
        MPI_File fs = open_comm(MPI_COMM_SELF, name, MPI_MODE_RDWR);
        if (g_rank == 0 && fs != MPI_FILE_NULL) {
            uint8_t *o = pattern_buf(100, 200, seed_of(2));
            OK(MPI_File_write_at(fs, 100, o, 200, MPI_BYTE, MPI_STATUS_IGNORE));
            free(o);
        }
        model_put(&m, 100, 200, seed_of(2));
        close_file(&fs);
    }
    fail_next_allreduce = g_rank == 1;
    int rc = MPI_File_close(&fh);
    int failed_to_inject = fail_next_allreduce;
    fail_next_allreduce = 0;
    CHECK(!failed_to_inject, "%s: the close made no agreement on rank 1", name);
    if (g_rank == 1) {
        CHECK(rc != MPI_SUCCESS, "%s: rank 1's close returned MPI_SUCCESS although its "
                                 "agreement failed", name);
        CHECK(rc == MPI_SUCCESS || strstr(err_text(rc), "MPI_Allreduce") ||
                  !g_code_text, "%s: rank 1's close error does not name the agreement: %s",
              name, err_text(rc));
    }
    /* Every rank's close says the same: it failed. */
    int ok = rc == MPI_SUCCESS, any_ok = 0;
    MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(!any_ok, "%s: the close succeeded on some ranks (here: %s) although rank 1's "
                   "agreement failed", name, ok ? "succeeded" : err_text(rc));
    /* A rank told the close succeeded may rely on the bytes. */
    if (any_ok)
        check_file(name, &m);
    model_free(&m);
}

/* A collective read whose first agreement (has any rank written since the
 * last collective call?) fails on rank 1, after every rank wrote
 * independently (`wrote`) or after a collective write only: rank 1 cannot
 * know what the others chose and takes "written" as set. No rank may wait
 * for ever, in the read or the close; every rank's read fails (the failure
 * is agreed), and every rank's close says the same. */
static void agree_fault_read(const char *name, int wrote)
{
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    if (fh == MPI_FILE_NULL)
        return;
    OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    const int64_t piece = 4096;
    uint8_t *b = pattern_buf(g_rank * piece, piece, seed_of(3));
    if (wrote)
        OK(MPI_File_write_at(fh, g_rank * piece, b, (int)piece, MPI_BYTE, MPI_STATUS_IGNORE));
    else
        OK(MPI_File_write_at_all(fh, g_rank * piece, b, (int)piece, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
    free(b);
    uint8_t got[64];
    fail_next_allreduce = g_rank == 1;
    int rc = MPI_File_read_at_all(fh, g_rank * piece, got, (int)sizeof got, MPI_BYTE,
                                  MPI_STATUS_IGNORE);
    int failed_to_inject = fail_next_allreduce;
    fail_next_allreduce = 0;
    CHECK(!failed_to_inject, "%s: the collective read made no agreement on rank 1", name);
    int ok = rc == MPI_SUCCESS, any_ok = 0;
    MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(!any_ok, "%s: the collective read succeeded on some ranks (here: %s) although "
                   "rank 1's agreement failed", name, ok ? "succeeded" : err_text(rc));
    rc = MPI_File_close(&fh);
    int closed_ok = rc == MPI_SUCCESS, closes[2] = {closed_ok, !closed_ok}, all[2] = {0, 0};
    MPI_Allreduce(closes, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(!(all[0] && all[1]), "%s: the close succeeded on some ranks and failed on others",
          name);
}
#endif

void case_agree_fault(void)
{
#if MPIIO_TEST_LAYER
    if (g_size < 2) {
        note("agree_fault needs 2 ranks or more");
        return;
    }
    agree_fault_file("agree_fault.mpiio", AF_COLLECTIVE);
    agree_fault_file("agree_fault_overlay.mpiio", AF_OVERLAY);
    agree_fault_file("agree_fault_held.mpiio", AF_HELD);
    agree_fault_read("agree_fault_read.mpiio", 1);
    agree_fault_read("agree_fault_read_none.mpiio", 0);
    agree_fault_second("agree_fault_second.mpiio");
    agree_fault_view("agree_fault_view.mpiio");
#else
    note("agree_fault tests the layer's own agreement: nothing to do without it");
#endif
}
