/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: writes. Contiguous write_at_all with random per-rank
 * sizes, independent writes read back, individual file pointers, nonblocking
 * writes, and writes of the same bytes by several ranks in one step.
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

/** memset, called so that the compiler cannot drop a store before free(). */
static void *(*volatile const scribble)(void *, int, size_t) = memset;

/* ------------------------------------------------------------------------- */
/* Case: contiguous write_at_all, random per-rank sizes, empty pieces, holes  */
/* ------------------------------------------------------------------------- */

void case_contig(void)
{
    const char *name = "contig.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    rng_t rng = {seed_of(99)};
    int64_t base = 0;
    int64_t *off = calloc((size_t)g_size, sizeof *off), *len = calloc((size_t)g_size, sizeof *len);
    int *perm = calloc((size_t)g_size, sizeof *perm);
    int64_t own_off[6] = {0}, own_len[6] = {0};
    for (int round = 0; round < 6; round++) {
        /* round 2: nobody writes; round 3: in MPI_INTs; round 5: each rank
           overwrites the first half of its own piece of round 0 */
        for (int r = 0; r < g_size; r++) {
            len[r] = rng_below(&rng, 5) == 0 ? 0 : (int64_t)rng_below(&rng, 150000 / g_size + 2000);
            if (round == 2)
                len[r] = 0;
            if (round == 3)
                len[r] &= ~(int64_t)3;
            perm[r] = r;
        }
        for (int r = g_size - 1; r > 0; r--) {
            int j = (int)rng_below(&rng, (uint64_t)r + 1), t = perm[r];
            perm[r] = perm[j];
            perm[j] = t;
        }
        for (int i = 0; i < g_size; i++) {
            int r = perm[i];
            base += rng_below(&rng, 3) == 0 ? 0 : (int64_t)rng_below(&rng, 5000);
            off[r] = base;
            base += len[r];
        }
        uint64_t seed = seed_of(round);
        for (int r = 0; r < g_size; r++) {
            int64_t o = off[r], l = len[r];
            if (round == 5) {
                o = 0;
                l = 0;
            }
            model_put(&m, o, l, seed);
        }
        if (round == 0) {
            own_off[0] = off[g_rank];
            own_len[0] = len[g_rank];
        }
        int64_t myoff = off[g_rank], mylen = len[g_rank];
        MPI_Datatype t = MPI_BYTE;
        int count = (int)mylen;
        if (round == 3) {
            t = MPI_INT;
            count = (int)(mylen / 4);
        }
        if (round == 5) {
            myoff = own_off[0];
            mylen = own_len[0] / 2;
            count = (int)mylen;
        }
        uint8_t *buf = pattern_buf(myoff, mylen, seed);
        if (getenv("MPIIO_TEST_TRACE"))
            note("round %d: write_at_all [%lld, %lld)", round, (long long)myoff,
                 (long long)(myoff + mylen));
        MPI_Status st;
        char what[64];
        snprintf(what, sizeof what, "write_at_all round %d", round);
        if (OK(MPI_File_write_at_all(fh, myoff, buf, count, t, &st)))
            check_count(what, &st, t, count);
        memset(buf, 0xAB, mylen > 0 ? (size_t)mylen : 1); /* reusable at once */
        free(buf);
        if (round == 5) {
            /* the model: every rank's half of its round-0 piece */
            int64_t all[2] = {own_off[0], own_len[0]};
            int64_t *gathered = malloc((size_t)g_size * 2 * sizeof *gathered);
            MPI_Allgather(all, 2, MPI_INT64_T, gathered, 2, MPI_INT64_T, MPI_COMM_WORLD);
            for (int r = 0; r < g_size; r++)
                model_put(&m, gathered[2 * r], gathered[2 * r + 1] / 2, seed);
            free(gathered);
        }
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    free(off);
    free(len);
    free(perm);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: independent write_at + sync/barrier/sync, read_at_all and read_at    */
/* ------------------------------------------------------------------------- */

void case_independent(void)
{
    const char *name = "independent.mpiio";
    remove_file(name);
    const int K = 5;
    const int64_t B = 1237;
    const int64_t total = K * g_size * B;
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    uint64_t s1 = seed_of(1), s2 = seed_of(2), s3 = seed_of(3);
    for (int k = 0; k < K; k++)
        for (int r = 0; r < g_size; r++)
            model_put(&m, (k * g_size + r) * B, B, s1);
    for (int k = K - 1; k >= 0; k--) { /* backwards, for a change */
        int64_t o = (k * g_size + g_rank) * B;
        uint8_t *buf = pattern_buf(o, B, s1);
        MPI_Status st;
        if (OK(MPI_File_write_at(fh, o, buf, (int)B, MPI_BYTE, &st)))
            check_count("write_at", &st, MPI_BYTE, (int)B);
        free(buf);
    }
    sync_barrier_sync(fh);
    check_size(fh, "after sync/barrier/sync", total);

    uint8_t *all = malloc((size_t)total);
    MPI_Status st;
    memset(all, 0xEE, (size_t)total);
    if (OK(MPI_File_read_at_all(fh, 0, all, (int)total, MPI_BYTE, &st))) {
        check_count("read_at_all", &st, MPI_BYTE, (int)total);
        check_buf("read_at_all of the whole file", all, &m, 0, total);
    }
    uint8_t *one = malloc((size_t)B);
    int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
    for (int k = 0; k < K; k++) {
        int64_t o = (k * g_size + next) * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, o, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at of the next rank's chunk", one, &m, o, B);
        o = (k * g_size + g_rank) * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, o, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at of its own synced chunk", one, &m, o, B);
    }

    /* a second generation of chunk 0, synced, read by the previous rank */
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the first generation */
    {
        int64_t o = g_rank * B;
        uint8_t *buf = pattern_buf(o, B, s2);
        OK(MPI_File_write_at(fh, o, buf, (int)B, MPI_BYTE, &st));
        free(buf);
        for (int r = 0; r < g_size; r++)
            model_put(&m, r * B, B, s2);
        sync_barrier_sync(fh);
        o = prev * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, o, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at of the previous rank's rewritten chunk", one, &m, o, B);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the second generation */
    /* a third generation of chunk 1, not synced: a collective read sees it */
    {
        int64_t o = (g_size + g_rank) * B;
        uint8_t *buf = pattern_buf(o, B, s3);
        OK(MPI_File_write_at(fh, o, buf, (int)B, MPI_BYTE, &st));
        free(buf);
        for (int r = 0; r < g_size; r++)
            model_put(&m, (g_size + r) * B, B, s3);
        plain_settle(fh);
        memset(all, 0xEE, (size_t)total);
        if (OK(MPI_File_read_at_all(fh, 0, all, (int)total, MPI_BYTE, &st)))
            check_buf("read_at_all after unsynced writes", all, &m, 0, total);
        /* read_all through the individual pointer */
        OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
        memset(all, 0xEE, (size_t)total);
        if (OK(MPI_File_read_all(fh, all, (int)total, MPI_BYTE, &st))) {
            check_count("read_all", &st, MPI_BYTE, (int)total);
            check_buf("read_all", all, &m, 0, total);
        }
        check_position(fh, "after read_all", total);
        /* after that collective, independent reads see every rank's writes */
        int64_t on = (g_size + next) * B;
        memset(one, 0xEE, (size_t)B);
        if (OK(MPI_File_read_at(fh, on, one, (int)B, MPI_BYTE, &st)))
            check_buf("read_at after a collective read", one, &m, on, B);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    free(all);
    free(one);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: individual file pointers with an MPI_INT etype                       */
/* ------------------------------------------------------------------------- */

enum { BI = 7 }; /* ints per rank per tile of the cyclic view */

/* Rank rr's cyclic view: BI ints at rr*BI in tiles of P*BI ints. */
static void cyclic_view(int rr, flat_t *f, MPI_Datatype *t)
{
    memset(f, 0, sizeof *f);
    flat_add(f, (int64_t)rr * BI * 4, BI * 4);
    f->extent = (int64_t)g_size * BI * 4;
    if (t) {
        MPI_Datatype idx;
        int bl = BI, dis = rr * BI;
        MPI_Type_indexed(1, &bl, &dis, MPI_INT, &idx);
        MPI_Type_create_resized(idx, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&idx);
    }
}

/* Write `n` ints at the current pointer (pos) of the cyclic view; model for every rank. */
static void ptr_write(MPI_File fh, model_t *m, int64_t disp, int64_t pos, int n, uint64_t seed,
                      int collective, const char *what)
{
    flat_t ff;
    for (int r = 0; r < g_size; r++) {
        cyclic_view(r, &ff, NULL);
        model_view_put(m, disp, &ff, pos * 4, (int64_t)n * 4, seed);
        flat_free(&ff);
    }
    cyclic_view(g_rank, &ff, NULL);
    uint8_t *mem = view_mem(disp, &ff, pos * 4, (int64_t)n * 4, NULL, seed, NULL);
    MPI_Status st;
    int rc = collective ? MPI_File_write_all(fh, mem, n, MPI_INT, &st)
                        : MPI_File_write(fh, mem, n, MPI_INT, &st);
    if (mpi_ok(rc, what, __LINE__))
        check_count(what, &st, MPI_INT, n);
    /* The call has returned: the buffer is the application's again. Scribble
     * over it (through a volatile pointer: a memset right before free is a
     * dead store the optimizer removes) so that bytes the layer had not
     * copied would show in the file. */
    scribble(mem, 0xCD, (size_t)n * 4);
    free(mem);
    flat_free(&ff);
    check_position(fh, what, pos + n);
}

void case_pointers(void)
{
    const char *name = "pointers.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    const int64_t D = 12;
    const int64_t tilebytes = (int64_t)g_size * BI * 4;
    flat_t ff;
    MPI_Datatype ft;
    cyclic_view(g_rank, &ff, &ft);
    OK(MPI_File_set_view(fh, D, MPI_INT, ft, "native", MPI_INFO_NULL));
    check_position(fh, "after set_view", 0);

    ptr_write(fh, &m, D, 0, 3 * BI, seed_of(1), 1, "write_all of 21 ints");
    plain_settle(fh);
    check_byte_offset(fh, "after write_all", 3 * BI, 4, D, &ff);
    check_byte_offset(fh, "after write_all", 5, 4, D, &ff);
    ptr_write(fh, &m, D, 3 * BI, 10, seed_of(1), 0, "write of 10 ints");
    OK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    check_position(fh, "after seek SET 5", 5);
    ptr_write(fh, &m, D, 5, 4, seed_of(2), 0, "write of 4 ints at 5");
    OK(MPI_File_seek(fh, 22, MPI_SEEK_CUR));
    check_position(fh, "after seek CUR +22", 31);
    ptr_write(fh, &m, D, 31, 11, seed_of(1), 0, "write of 11 ints at 31");
    /* every rank is at 42 = 6 whole tiles: the file ends at a tile boundary */
    ptr_write(fh, &m, D, 42, 0, seed_of(1), 1, "write_all of 0 ints");
    sync_barrier_sync(fh);
    check_size(fh, "after 6 tiles", D + 6 * tilebytes);
    if (g_layer) {
        OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
        check_position(fh, "after seek END 0", 42);
        OK(MPI_File_seek(fh, -2, MPI_SEEK_END));
        check_position(fh, "after seek END -2", 40);
    } else {
        /* Open MPI 4.1's OMPIO (the default MPI-IO) gets MPI_SEEK_END wrong
           with this view (position 7, not 42: it counts filetype extents,
           not etypes), so without the layer the same place is reached with
           MPI_SEEK_SET. */
        OK(MPI_File_seek(fh, 40, MPI_SEEK_SET));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has seen the end before any writes past it */
    ptr_write(fh, &m, D, 40, 5, seed_of(3), 0, "write of 5 ints at END-2");
    check_byte_offset(fh, "at the end", 45, 4, D, &ff);
    check_byte_offset(fh, "at the end", 0, 4, D, &ff);
    {
        MPI_Offset b = -1;
        OK(MPI_File_get_byte_offset(fh, 45, &b));
        CHECK(b == D + 6 * tilebytes + (int64_t)g_rank * BI * 4 + 3 * 4,
              "get_byte_offset(45) = %lld", (long long)b);
    }
    /* write_at does not move the pointer */
    {
        flat_t f2;
        for (int r = 0; r < g_size; r++) {
            cyclic_view(r, &f2, NULL);
            model_view_put(&m, D, &f2, 45 * 4, 2 * 4, seed_of(4));
            flat_free(&f2);
        }
        uint8_t *mem = view_mem(D, &ff, 45 * 4, 8, NULL, seed_of(4), NULL);
        MPI_Status st;
        OK(MPI_File_write_at_all(fh, 45, mem, 2, MPI_INT, &st));
        free(mem);
        check_position(fh, "after write_at_all", 45);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

/* ------------------------------------------------------------------------- */
/* Case: nonblocking writes                                                   */
/* ------------------------------------------------------------------------- */

static void nb_wait(MPI_Request *req, MPI_Status *st, const char *what)
{
    int flag = 0;
    if (!OK(MPI_Test(req, &flag, st)))
        return;
    if (g_layer && !flag)
        fail("%s: MPI_Test right after the call says not complete (the layer's requests "
             "are complete at once)",
             what);
    if (!flag)
        OK(MPI_Wait(req, st));
}

void case_nonblocking(void)
{
    const char *name = "nonblocking.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    /* four regions (one per call), rank r's piece S_r = 1000 + 12 r bytes */
    int64_t sum = 0, mine = 0;
    for (int r = 0; r < g_size; r++) {
        if (r == g_rank)
            mine = sum;
        sum += 1000 + 12 * r;
    }
    const int64_t S = 1000 + 12 * g_rank;
    int64_t region[4], o[4];
    for (int k = 0; k < 4; k++) {
        region[k] = k * (sum + 100);
        o[k] = region[k] + mine;
        int64_t p = 0;
        for (int r = 0; r < g_size; r++) {
            model_put(&m, region[k] + p, 1000 + 12 * r, seed_of(k));
            p += 1000 + 12 * r;
        }
    }
    uint8_t *b[4];
    for (int k = 0; k < 4; k++)
        b[k] = pattern_buf(o[k], S, seed_of(k));
    MPI_Request req[2];
    MPI_Status st[2];
    /* A: iwrite_at + MPI_Wait (after MPI_Test) */
    if (OK(MPI_File_iwrite_at(fh, o[0], b[0], (int)S, MPI_BYTE, &req[0]))) {
        nb_wait(&req[0], &st[0], "iwrite_at");
        check_count("iwrite_at", &st[0], MPI_BYTE, (int)S);
        memset(b[0], 0x11, (size_t)S);
    }
    /* B: iwrite_at_all in MPI_INTs */
    if (OK(MPI_File_iwrite_at_all(fh, o[1], b[1], (int)(S / 4), MPI_INT, &req[0]))) {
        nb_wait(&req[0], &st[0], "iwrite_at_all");
        check_count("iwrite_at_all", &st[0], MPI_INT, (int)(S / 4));
        memset(b[1], 0x22, (size_t)S);
    }
    /* C and D: iwrite and iwrite_all through the pointer, both outstanding */
    OK(MPI_File_seek(fh, o[2], MPI_SEEK_SET));
    int okc = OK(MPI_File_iwrite(fh, b[2], (int)S, MPI_BYTE, &req[0]));
    check_position(fh, "after iwrite", o[2] + S);
    OK(MPI_File_seek(fh, o[3], MPI_SEEK_SET));
    int okd = OK(MPI_File_iwrite_all(fh, b[3], (int)S, MPI_BYTE, &req[1]));
    check_position(fh, "after iwrite_all", o[3] + S);
    if (okc && okd) {
        if (g_layer) {
            int flag = 0;
            OK(MPI_Testall(2, req, &flag, st));
            CHECK(flag, "MPI_Testall of iwrite and iwrite_all: not complete");
            if (!flag)
                OK(MPI_Waitall(2, req, st));
        } else {
            OK(MPI_Waitall(2, req, st));
        }
        check_count("iwrite", &st[0], MPI_BYTE, (int)S);
        check_count("iwrite_all", &st[1], MPI_BYTE, (int)S);
    }
    memset(b[2], 0x33, (size_t)S);
    memset(b[3], 0x44, (size_t)S);
    for (int k = 0; k < 4; k++)
        free(b[k]);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* --- same-step overlaps ------------------------------------------------------ */

enum { OV_HEAD = 4096, OV_INTS = 20, OV_STRIDE = 40, OV_TAIL = 8192, OV_ORDERED = 100 };

/* Rank q's byte at `off` of the overlap cases (generation g). */
static uint8_t ov_byte(int q, int g, int64_t off)
{
    return pattern_byte(seed_of(10 * g + q), (uint64_t)off);
}

/*
 * Writes MPI allows without a sync between, though several ranks write the
 * same bytes: every rank writes OV_HEAD bytes at offset 0 with its
 * individual pointer and syncs; then every rank writes one int at offset 0
 * with write_at_all (the "every rank writes the header" pattern) and OV_INTS
 * ints at OV_HEAD + OV_STRIDE r independently (each overlapping the next
 * rank's), and syncs. Every call succeeds.
 */
static void overlap_writes(MPI_File fh)
{
    MPI_Status st;
    uint8_t *b = malloc(OV_HEAD);
    for (int64_t i = 0; i < OV_HEAD; i++)
        b[i] = ov_byte(g_rank, 1, i);
    OK(MPI_File_write(fh, b, OV_HEAD, MPI_BYTE, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    for (int64_t i = 0; i < 4; i++)
        b[i] = ov_byte(g_rank, 2, i);
    OK(MPI_File_write_at_all(fh, 0, b, 1, MPI_INT, &st));
    int64_t at = OV_HEAD + OV_STRIDE * g_rank;
    for (int64_t i = 0; i < 4 * OV_INTS; i++)
        b[i] = ov_byte(g_rank, 3, at + i);
    OK(MPI_File_write_at(fh, at, b, OV_INTS, MPI_INT, &st));
    OK(MPI_File_sync(fh));
    free(b);
}

/* Rank 0 reads the file: each byte of overlap_writes' range holds the byte
 * of one of the ranks that wrote it last; [OV_TAIL, end) is `tail` (may be
 * NULL); the size is `size`. */
static void overlap_check(const char *name, const uint8_t *tail, int64_t size)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank != 0)
        return;
    char p[4200];
    path_of(p, sizeof p, name);
    struct stat sb;
    CHECK(stat(p, &sb) == 0 && sb.st_size == size, "overlaps: %s has %lld bytes, expected %lld",
          p, (long long)(stat(p, &sb) == 0 ? sb.st_size : -1), (long long)size);
    uint8_t *got = calloc((size_t)size, 1);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : pread(fd, got, (size_t)size, 0);
    if (fd >= 0)
        close(fd);
    CHECK(n == size, "overlaps: read %zd of %lld bytes of %s", n, (long long)size, p);
    for (int64_t i = 0; n == size && i < OV_TAIL; i++) {
        int one_of = 0, writers = 0;
        for (int q = 0; q < g_size; q++) {
            int64_t lo = OV_HEAD + OV_STRIDE * q, hi = lo + 4 * OV_INTS;
            int g = i < 4 ? 2 : i < OV_HEAD ? 1 : (i >= lo && i < hi) ? 3 : 0;
            if (g) {
                writers++;
                one_of |= got[i] == ov_byte(q, g, i);
            }
        }
        if (writers ? !one_of : got[i] != 0) {
            fail("overlaps: byte %lld of %s is %u: no rank that wrote it wrote that (%d wrote "
                 "it)", (long long)i, p, got[i], writers);
            break;
        }
    }
    for (int64_t i = OV_TAIL; tail && n == size && i < size; i++)
        if (got[i] != tail[i - OV_TAIL]) {
            fail("overlaps: byte %lld of %s is %u, expected %u", (long long)i, p, got[i],
                 tail[i - OV_TAIL]);
            break;
        }
    free(got);
}

/*
 * Same-step overlaps are legal MPI: afterwards the shared pointer moves and
 * an ordered write lands there, after the header (file 1); atomic mode can be
 * set and holds (file 2).
 */
void case_overlaps(void)
{
    const char *name = "overlaps.mpiio", *name2 = "overlaps_atomic.mpiio";
    remove_file(name);
    remove_file(name2);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    overlap_writes(fh);
    expect_state(fh, "after the overlapping writes", ST_TAKEN);
    OK(MPI_File_seek_shared(fh, OV_TAIL, MPI_SEEK_SET));
    MPI_Offset shared = -1;
    OK(MPI_File_get_position_shared(fh, &shared));
    CHECK(shared == OV_TAIL, "overlaps: the shared pointer is at %lld after seek_shared(%d)",
          (long long)shared, OV_TAIL);
    MPI_Barrier(MPI_COMM_WORLD); /* no rank's ordered write moves it before all have looked */
    uint8_t mine[OV_ORDERED];
    for (int i = 0; i < OV_ORDERED; i++)
        mine[i] = ov_byte(g_rank, 4, i);
    MPI_Status st;
    OK(MPI_File_write_ordered(fh, mine, OV_ORDERED, MPI_BYTE, &st));
    close_file(&fh);
    uint8_t *tail = malloc((size_t)OV_ORDERED * (size_t)g_size);
    for (int q = 0; q < g_size; q++)
        for (int i = 0; i < OV_ORDERED; i++)
            tail[q * OV_ORDERED + i] = ov_byte(q, 4, i);
    overlap_check(name, tail, OV_TAIL + (int64_t)OV_ORDERED * g_size);

    fh = open_file(name2, MPI_MODE_RDWR | MPI_MODE_CREATE);
    overlap_writes(fh);
    OK(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "overlaps: get_atomicity after set_atomicity(1) is %d", flag);
    /* atomic mode: the next rank's write is there after a barrier */
    int64_t at = OV_TAIL + OV_ORDERED * g_rank;
    OK(MPI_File_write_at(fh, at, mine, OV_ORDERED, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (g_rank + 1) % g_size;
    uint8_t got[OV_ORDERED];
    OK(MPI_File_read_at(fh, OV_TAIL + OV_ORDERED * next, got, OV_ORDERED, MPI_BYTE, &st));
    for (int i = 0; i < OV_ORDERED; i++)
        if (got[i] != ov_byte(next, 4, i)) {
            fail("overlaps: atomic mode: rank %d's byte %d read as %u, written %u", next, i,
                 got[i], ov_byte(next, 4, i));
            break;
        }
    close_file(&fh);
    overlap_check(name2, tail, OV_TAIL + (int64_t)OV_ORDERED * g_size);
    free(tail);
}
