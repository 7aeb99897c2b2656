/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: file views, each flattened by hand beside the MPI type it
 * stands for: subarray, vector, hindexed, struct, a sequence of views of one
 * file, and a darray view, which the layer hands back to MPI-IO.
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
/* Case: file views                                                           */
/* ------------------------------------------------------------------------- */

/* A view-building function: rank rr's filetype (t may be NULL: only the flat) and displacement. */
typedef void (*view_fn)(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp);

/* 2-D subarray, uneven block decomposition over MPI_Dims_create's grid. */
enum { G0 = 75, G1 = 53 };
static void subarray_block(int rr, int dims[2], int sub[2], int start[2])
{
    int d[2] = {0, 0};
    MPI_Dims_create(g_size, 2, d);
    int c0 = rr / d[1], c1 = rr % d[1];
    int G[2] = {G0, G1}, c[2] = {c0, c1};
    for (int i = 0; i < 2; i++) {
        int q = G[i] / d[i], rem = G[i] % d[i];
        sub[i] = q + (c[i] < rem);
        start[i] = c[i] * q + (c[i] < rem ? c[i] : rem);
        dims[i] = d[i];
    }
}

static void view_subarray(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int dims[2], sub[2], start[2];
    subarray_block(rr, dims, sub, start);
    memset(f, 0, sizeof *f);
    for (int i = start[0]; i < start[0] + sub[0]; i++)
        flat_add(f, ((int64_t)i * G1 + start[1]) * 8, (int64_t)sub[1] * 8);
    f->extent = (int64_t)G0 * G1 * 8;
    *disp = 100;
    if (t) {
        int sizes[2] = {G0, G1};
        MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, t);
        MPI_Type_commit(t);
    }
}

static void view_vector(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 4; i++)
        flat_add(f, (int64_t)i * 3 * g_size * 4, 12);
    f->extent = 4 * 3 * (int64_t)g_size * 4;
    *disp = 3 + (int64_t)rr * 12;
    if (t) {
        MPI_Datatype v;
        MPI_Type_vector(4, 3, 3 * g_size, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&v);
    }
}

enum { NSEG = 6 };
static const int seg_len[NSEG] = {5, 0, 17, 1, 300, 64};
static void view_hindexed(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int bl[NSEG];
    MPI_Aint dis[NSEG];
    int64_t s = 0;
    memset(f, 0, sizeof *f);
    for (int k = 0; k < NSEG; k++) {
        bl[k] = seg_len[k];
        dis[k] = s + (int64_t)rr * seg_len[k];
        flat_add(f, dis[k], seg_len[k]);
        s += (int64_t)g_size * seg_len[k] + 3; /* 3-byte holes between segments */
    }
    f->extent = s;
    *disp = 7;
    if (t) {
        MPI_Datatype h;
        MPI_Type_create_hindexed(NSEG, bl, dis, MPI_BYTE, &h);
        MPI_Type_create_resized(h, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&h);
    }
}

/* A record of 36 bytes per rank: int at 0, two int pairs at 8, int at 28. */
static void view_struct(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    memset(f, 0, sizeof *f);
    flat_add(f, 0, 4);
    flat_add(f, 8, 16);
    flat_add(f, 28, 4);
    f->extent = 36 * (int64_t)g_size;
    *disp = 5 + (int64_t)rr * 36;
    if (t) {
        MPI_Datatype pair, s;
        MPI_Type_contiguous(2, MPI_INT, &pair);
        int bl[3] = {1, 2, 1};
        MPI_Aint dis[3] = {0, 8, 28};
        MPI_Datatype types[3] = {MPI_INT, pair, MPI_INT};
        MPI_Type_create_struct(3, bl, dis, types, &s);
        MPI_Type_create_resized(s, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&s);
        MPI_Type_free(&pair);
    }
}

/* Write `nbytes` of data from data byte k0 (a multiple of the etype size)
   through `call` with the memory layout (mt, mcount, mf); model for every rank.
   nbytes < 0: -nbytes whole tiles of each rank's view (ranks' tiles differ). */
enum { W_AT_ALL, W_AT, W_ALL, W_IND };
static void view_write(MPI_File fh, model_t *m, view_fn vf, int64_t esize, int64_t k0,
                       int64_t nbytes, MPI_Datatype mt, int mcount, const flat_t *mf,
                       uint64_t seed, int call, const char *what)
{
    flat_t ff;
    int64_t disp;
    for (int r = 0; r < g_size; r++) {
        vf(r, &ff, NULL, &disp);
        model_view_put(m, disp, &ff, k0, nbytes < 0 ? -nbytes * ff.bytes : nbytes, seed);
        flat_free(&ff);
    }
    vf(g_rank, &ff, NULL, &disp);
    if (nbytes < 0)
        nbytes = -nbytes * ff.bytes;
    uint8_t *mem = view_mem(disp, &ff, k0, nbytes, mf, seed, NULL);
    MPI_Status st;
    int rc;
    switch (call) {
    case W_AT_ALL: rc = MPI_File_write_at_all(fh, k0 / esize, mem, mcount, mt, &st); break;
    case W_AT: rc = MPI_File_write_at(fh, k0 / esize, mem, mcount, mt, &st); break;
    case W_ALL: rc = MPI_File_write_all(fh, mem, mcount, mt, &st); break;
    default: rc = MPI_File_write(fh, mem, mcount, mt, &st); break;
    }
    if (mpi_ok(rc, what, __LINE__))
        check_count(what, &st, mt, mcount);
    free(mem);
    flat_free(&ff);
}

static void set_view_of(MPI_File fh, view_fn vf, MPI_Datatype etype, flat_t *ff,
                        MPI_Datatype *ft, int64_t *disp)
{
    vf(g_rank, ff, ft, disp);
    OK(MPI_File_set_view(fh, *disp, etype, *ft, "native", MPI_INFO_NULL));
    check_position(fh, "after set_view", 0);
}

void case_view_subarray(void)
{
    const char *name = "view_subarray.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    /* a 100-byte header by rank 0, through the default view */
    model_put(&m, 0, 100, seed_of(0));
    if (g_rank == 0) {
        uint8_t *h = pattern_buf(0, 100, seed_of(0));
        OK(MPI_File_write_at(fh, 0, h, 100, MPI_BYTE, MPI_STATUS_IGNORE));
        free(h);
    }
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_subarray, MPI_DOUBLE, &ff, &ft, &disp);
    /* memory: the local block inside a ghost layer of 1 (a subarray too) */
    int dims[2], sub[2], start[2];
    subarray_block(g_rank, dims, sub, start);
    int msizes[2] = {sub[0] + 2, sub[1] + 2}, mstart[2] = {1, 1};
    MPI_Datatype mt;
    MPI_Type_create_subarray(2, msizes, sub, mstart, MPI_ORDER_C, MPI_DOUBLE, &mt);
    MPI_Type_commit(&mt);
    flat_t mf = {0};
    for (int i = 0; i < sub[0]; i++)
        flat_add(&mf, ((int64_t)(i + 1) * msizes[1] + 1) * 8, (int64_t)sub[1] * 8);
    mf.extent = (int64_t)msizes[0] * msizes[1] * 8;
    view_write(fh, &m, view_subarray, 8, 0, -1, mt, 1, &mf, seed_of(1), W_ALL,
               "write_all of the block (subarray view, ghost-cell memory)");
    check_position(fh, "after write_all", ff.bytes / 8);
    check_byte_offset(fh, "subarray", 0, 8, disp, &ff);
    check_byte_offset(fh, "subarray", sub[1], 8, disp, &ff); /* the second row */
    MPI_Type_free(&mt);
    flat_free(&mf);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

void case_view_vector(void)
{
    const char *name = "view_vector.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_vector, MPI_INT, &ff, &ft, &disp);
    /* 19 ints from memory every other int (a vector), at view offset 0 */
    MPI_Datatype mv;
    MPI_Type_vector(19, 1, 2, MPI_INT, &mv);
    MPI_Type_commit(&mv);
    flat_t mf = {0};
    for (int i = 0; i < 19; i++)
        flat_add(&mf, (int64_t)i * 8, 4);
    mf.extent = 19 * 8;
    view_write(fh, &m, view_vector, 4, 0, 19 * 4, mv, 1, &mf, seed_of(1), W_AT_ALL,
               "write_at_all of a memory vector");
    check_position(fh, "write_at_all leaves the pointer", 0);
    MPI_Type_free(&mv);
    flat_free(&mf);
    /* 25 ints from a resized memory int (extent 8), through the pointer from 19 */
    OK(MPI_File_seek(fh, 19, MPI_SEEK_SET));
    MPI_Datatype mr;
    MPI_Type_create_resized(MPI_INT, 0, 8, &mr);
    MPI_Type_commit(&mr);
    flat_t mf2 = {0};
    flat_add(&mf2, 0, 4);
    mf2.extent = 8;
    view_write(fh, &m, view_vector, 4, 19 * 4, 25 * 4, mr, 25, &mf2, seed_of(2), W_ALL,
               "write_all of 25 resized memory ints");
    check_position(fh, "after write_all", 44);
    check_byte_offset(fh, "vector", 44, 4, disp, &ff);
    check_byte_offset(fh, "vector", 13, 4, disp, &ff);
    MPI_Type_free(&mr);
    flat_free(&mf2);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

void case_view_hindexed(void)
{
    const char *name = "view_hindexed.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_hindexed, MPI_BYTE, &ff, &ft, &disp);
    int64_t n1 = 2 * ff.bytes + 10;
    view_write(fh, &m, view_hindexed, 1, 0, n1, MPI_BYTE, (int)n1, NULL, seed_of(1), W_ALL,
               "write_all (hindexed view)");
    plain_settle(fh);
    check_position(fh, "after write_all", n1);
    view_write(fh, &m, view_hindexed, 1, n1, 50, MPI_BYTE, 50, NULL, seed_of(2), W_IND,
               "write (hindexed view)");
    check_position(fh, "after write", n1 + 50);
    check_byte_offset(fh, "hindexed", n1 + 50, 1, disp, &ff);
    check_byte_offset(fh, "hindexed", 23, 1, disp, &ff);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

void case_view_struct(void)
{
    const char *name = "view_struct.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    set_view_of(fh, view_struct, MPI_INT, &ff, &ft, &disp);
    view_write(fh, &m, view_struct, 4, 0, 30 * 4, MPI_INT, 30, NULL, seed_of(1), W_AT_ALL,
               "write_at_all of 30 ints (struct view)");
    plain_settle(fh);
    view_write(fh, &m, view_struct, 4, 33 * 4, 7 * 4, MPI_INT, 7, NULL, seed_of(2), W_AT,
               "write_at of 7 ints at 33 (struct view)");
    check_byte_offset(fh, "struct", 40, 4, disp, &ff);
    check_byte_offset(fh, "struct", 5, 4, disp, &ff);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

/* Several views of one file in turn: resized, indexed, indexed_block. */
static int64_t rv_d1(void) { return 16; }
static int64_t rv_d2(void) { return rv_d1() + 200 * (int64_t)g_size + 8; }
static int64_t rv_d3(void) { return rv_d2() + 144 * (int64_t)g_size + 4; }

static void view_resized(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    memset(f, 0, sizeof *f);
    flat_add(f, 0, 4);
    f->extent = 4 * (int64_t)g_size;
    *disp = rv_d1() + (int64_t)rr * 4;
    if (t) {
        MPI_Type_create_resized(MPI_INT, 0, f->extent, t);
        MPI_Type_commit(t);
    }
}

static void view_indexed(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int bl[3] = {2, 5, 1}, dis[3] = {0, 3, 10};
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 3; i++)
        flat_add(f, (int64_t)dis[i] * 4, (int64_t)bl[i] * 4);
    f->extent = 48 * (int64_t)g_size;
    *disp = rv_d2() + (int64_t)rr * 48;
    if (t) {
        MPI_Datatype x;
        MPI_Type_indexed(3, bl, dis, MPI_INT, &x);
        MPI_Type_create_resized(x, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&x);
    }
}

static void view_indexed_block(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int dis[3] = {1, 4, 7};
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 3; i++)
        flat_add(f, (int64_t)dis[i] * 4, 8);
    f->extent = 40 * (int64_t)g_size;
    *disp = rv_d3() + (int64_t)rr * 40;
    if (t) {
        MPI_Datatype x;
        MPI_Type_create_indexed_block(3, 2, dis, MPI_INT, &x);
        MPI_Type_create_resized(x, 0, f->extent, t);
        MPI_Type_commit(t);
        MPI_Type_free(&x);
    }
}

void case_view_sequence(void)
{
    const char *name = "view_sequence.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;

    set_view_of(fh, view_resized, MPI_INT, &ff, &ft, &disp);
    view_write(fh, &m, view_resized, 4, 0, 50 * 4, MPI_INT, 50, NULL, seed_of(1), W_ALL,
               "write_all of 50 ints (resized view)");
    check_position(fh, "after write_all", 50);
    check_byte_offset(fh, "resized", 50, 4, disp, &ff);
    MPI_Type_free(&ft);
    flat_free(&ff);

    set_view_of(fh, view_indexed, MPI_INT, &ff, &ft, &disp); /* resets the pointer */
    view_write(fh, &m, view_indexed, 4, 0, 20 * 4, MPI_INT, 20, NULL, seed_of(2), W_ALL,
               "write_all of 20 ints (indexed view)");
    plain_settle(fh);
    check_position(fh, "after write_all", 20);
    check_byte_offset(fh, "indexed", 19, 4, disp, &ff);
    MPI_Type_free(&ft);
    flat_free(&ff);

    set_view_of(fh, view_indexed_block, MPI_INT, &ff, &ft, &disp);
    view_write(fh, &m, view_indexed_block, 4, 0, 13 * 4, MPI_INT, 13, NULL, seed_of(3), W_IND,
               "write of 13 ints (indexed_block view)");
    check_position(fh, "after write", 13);
    view_write(fh, &m, view_indexed_block, 4, 13 * 4, 7 * 4, MPI_INT, 7, NULL, seed_of(4),
               W_AT_ALL, "write_at_all of 7 ints at 13 (indexed_block view)");
    plain_settle(fh);
    check_position(fh, "after write_at_all", 13);
    check_byte_offset(fh, "indexed_block", 20, 4, disp, &ff);
    MPI_Type_free(&ft);
    flat_free(&ff);

    /* back to bytes: a 16-byte header by rank 0 */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    model_put(&m, 0, 16, seed_of(5));
    if (g_rank == 0) {
        uint8_t *h = pattern_buf(0, 16, seed_of(5));
        OK(MPI_File_write(fh, h, 16, MPI_BYTE, MPI_STATUS_IGNORE));
        free(h);
    }
    /* the whole file through a collective read */
    plain_settle(fh);
    {
        int64_t n = m.size;
        uint8_t *all = malloc((size_t)n);
        memset(all, 0xEE, (size_t)n);
        if (OK(MPI_File_read_at_all(fh, 0, all, (int)n, MPI_BYTE, MPI_STATUS_IGNORE)))
            check_buf("read_at_all of the whole file", all, &m, 0, n);
        free(all);
    }
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
}

/* A view the layer cannot flatten: MPI_Type_create_darray. */
static void darray_block(int rr, int sub[2], int start[2], int dims[2])
{
    int d[2] = {0, 0};
    MPI_Dims_create(g_size, 2, d);
    int c[2] = {rr / d[1], rr % d[1]}, G[2] = {G0, G1};
    for (int i = 0; i < 2; i++) {
        int bs = (G[i] + d[i] - 1) / d[i];
        start[i] = c[i] * bs;
        sub[i] = G[i] - start[i] < bs ? G[i] - start[i] : bs;
        if (sub[i] < 0)
            sub[i] = 0;
        dims[i] = d[i];
    }
}

static void view_darray(int rr, flat_t *f, MPI_Datatype *t, int64_t *disp)
{
    int sub[2], start[2], dims[2];
    darray_block(rr, sub, start, dims);
    memset(f, 0, sizeof *f);
    for (int i = start[0]; i < start[0] + sub[0]; i++)
        flat_add(f, ((int64_t)i * G1 + start[1]) * 8, (int64_t)sub[1] * 8);
    f->extent = (int64_t)G0 * G1 * 8;
    *disp = 64;
    if (t) {
        int gs[2] = {G0, G1};
        int distrib[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
        int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
        MPI_Type_create_darray(g_size, rr, 2, gs, distrib, dargs, dims, MPI_ORDER_C, MPI_DOUBLE,
                               t);
        MPI_Type_commit(t);
    }
}

void case_darray(void)
{
    const char *name = "darray.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {0};
    model_put(&m, 0, 64, seed_of(0));
    if (g_rank == 0) {
        uint8_t *h = pattern_buf(0, 64, seed_of(0));
        OK(MPI_File_write_at(fh, 0, h, 64, MPI_BYTE, MPI_STATUS_IGNORE));
        free(h);
    }
    flat_t ff;
    MPI_Datatype ft;
    int64_t disp;
    view_darray(g_rank, &ff, &ft, &disp);
    OK(MPI_File_set_view(fh, disp, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    expect_state(fh, "after set_view with a darray", ST_RELEASED);
    view_write(fh, &m, view_darray, 8, 0, -1, MPI_DOUBLE, (int)(ff.bytes / 8), NULL,
               seed_of(1), W_ALL, "write_all (darray view)");
    close_file(&fh);
    MPI_Type_free(&ft);
    flat_free(&ff);
    check_file(name, &m);
    model_free(&m);
}

/*
 * A filetype of more runs than the layer once flattened (2^22 + 3 one-byte
 * blocks, each rank's bytes interleaved with the others'), kept as one
 * entry at its stride, so the file stays taken: a collective write at the
 * view's start and an independent one across the end of the first tile
 * into the second land where MPI puts them, and the byte offset of a data
 * byte in the second tile is MPI's.
 */
void case_view_many_runs(void)
{
    const char *name = "view_many_runs.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    const int64_t blocks = ((int64_t)1 << 22) + 3, tile = blocks * g_size;
    MPI_Datatype v, ft;
    MPI_Type_vector((int)blocks, 1, g_size, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, tile, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&v);
    OK(MPI_File_set_view(fh, g_rank, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    expect_state(fh, "after set_view", ST_TAKEN);
    const struct {
        int64_t k0;
        uint64_t seed;
        int collective;
    } w[2] = {{0, seed_of(1), 1}, {blocks - 2, seed_of(2), 0}};
    enum { N = 100 };
    for (int i = 0; i < 2; i++) {
        uint8_t mem[N];
        for (int r = 0; r < g_size; r++)
            for (int64_t j = 0; j < N; j++) {
                int64_t k = w[i].k0 + j;
                int64_t o = r + (k / blocks) * tile + (k % blocks) * g_size;
                uint8_t b = pattern_byte(w[i].seed, (uint64_t)o);
                model_byte(&m, o, b);
                if (r == g_rank)
                    mem[j] = b;
            }
        MPI_Status st;
        int rc = w[i].collective ? MPI_File_write_at_all(fh, w[i].k0, mem, N, MPI_BYTE, &st)
                                 : MPI_File_write_at(fh, w[i].k0, mem, N, MPI_BYTE, &st);
        if (mpi_ok(rc, w[i].collective ? "write_at_all" : "write_at", __LINE__))
            check_count("a write through the view", &st, MPI_BYTE, N);
    }
    MPI_Offset off = -1;
    OK(MPI_File_get_byte_offset(fh, blocks + 5, &off));
    if (off != g_rank + tile + 5 * g_size)
        fail("view_many_runs: byte offset of data byte %lld: %lld, not %lld",
                (long long)(blocks + 5), (long long)off, (long long)(g_rank + tile + 5 * g_size));
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    MPI_Type_free(&ft);
    check_file(name, &m);
    model_free(&m);
}
