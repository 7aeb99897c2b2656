/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio cases: memory datatypes. Types whose bytes are listed out of
 * address order (written in typemap order), and a type of 2^31 bytes.
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

/* --- memory types listed out of address order ---------------------------- */

/*
 * Memory datatypes whose bytes cover one range of the buffer but are listed
 * out of address order: MPI writes them in typemap order (as MPI_Pack packs
 * them). A struct of two halves listed high half first written
 * independently, a permuted hindexed_block written collectively, and
 * MPI_INTs (used in place) beside them; each rank's three regions must hold
 * its bytes packed, read back with POSIX calls after the close.
 */
void case_memtype_order(void)
{
    enum { N = 96, PIECE = N * 4, REGION = 3 * PIECE };
    const char *name = "memtype_order.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    int buf[N];
    MPI_Aint rev[N];
    for (int i = 0; i < N; i++) {
        buf[i] = g_rank * 1000 + i;
        rev[i] = (MPI_Aint)(N - 1 - i) * 4;
    }
    MPI_Datatype perm, halves;
    OK(MPI_Type_create_hindexed_block(N, 4, rev, MPI_BYTE, &perm));
    OK(MPI_Type_commit(&perm));
    int hl[2] = {PIECE / 2, PIECE / 2};
    MPI_Aint hd[2] = {PIECE / 2, 0};
    MPI_Datatype ht[2] = {MPI_BYTE, MPI_BYTE};
    OK(MPI_Type_create_struct(2, hl, hd, ht, &halves));
    OK(MPI_Type_commit(&halves));
    MPI_Offset base = (MPI_Offset)g_rank * REGION;
    MPI_Status st;
    /* The independent write first, made visible (sync, barrier, sync)
     * before the collective ones: a collective write may read and write
     * back the gaps between its pieces (ompio does), which would race with
     * another rank's independent write there. */
    OK(MPI_File_write_at(fh, base + PIECE, buf, 1, halves, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_write_at_all(fh, base, buf, 1, perm, &st));
    OK(MPI_File_write_at_all(fh, base + 2 * PIECE, buf, N, MPI_INT, &st));
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);

    uint8_t want[REGION], got[REGION];
    int pos = 0;
    OK(MPI_Pack(buf, 1, perm, want, REGION, &pos, MPI_COMM_SELF));
    OK(MPI_Pack(buf, 1, halves, want, REGION, &pos, MPI_COMM_SELF));
    OK(MPI_Pack(buf, N, MPI_INT, want, REGION, &pos, MPI_COMM_SELF));
    CHECK(pos == REGION, "memtype_order: packed %d bytes, expected %d", pos, (int)REGION);
    char p[4200];
    path_of(p, sizeof p, name);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : pread(fd, got, REGION, (off_t)base);
    if (fd >= 0)
        close(fd);
    CHECK(n == REGION, "memtype_order: read %zd of my %d bytes of %s", n, (int)REGION, p);
    for (int i = 0; n == REGION && i < REGION; i++)
        if (got[i] != want[i]) {
            fail("memtype_order: byte %d of %s region %d is %u, typemap order says %u (%s)",
                 i % PIECE, i < PIECE ? "the permuted" : i < 2 * PIECE ? "the struct" : "the int",
                 g_rank, got[i], want[i], "written in address order instead?");
            break;
        }
    MPI_Type_free(&perm);
    MPI_Type_free(&halves);
}

/* --- a memory type of 2^31 bytes ------------------------------------------------ */

/*
 * A memory type whose size is 2^31 bytes (MPI_Type_size says MPI_UNDEFINED,
 * MPI_Type_size_x the size) over a 4 KiB buffer: 2^19 blocks of 4096 bytes,
 * all at displacement 0 (a type that repeats bytes is legal to write). Rank 0
 * writes it with write_at_all at offset 0 (the status counts 2^31 bytes),
 * every rank calls iwrite_at_all with it (count 0), and the last rank writes
 * 4096 bytes after it. Rank 0 checks the file: the block 2^19 + 1 times.
 */
void case_large_memtype(void)
{
    enum { BLOCK = 4096, NBLOCKS = 1 << 19 };
    const int64_t big = (int64_t)BLOCK * NBLOCKS;
    const char *name = "large_memtype.mpiio";
    remove_file(name);
    uint8_t *block = pattern_buf(0, BLOCK, seed_of(1));
    MPI_Aint *zeros = calloc(NBLOCKS, sizeof *zeros);
    MPI_Datatype t;
    OK(MPI_Type_create_hindexed_block(NBLOCKS, BLOCK, zeros, MPI_BYTE, &t));
    OK(MPI_Type_commit(&t));
    free(zeros);
    int size = 0;
    MPI_Count size_x = 0;
    MPI_Type_size(t, &size);
    MPI_Type_size_x(t, &size_x);
    CHECK(size == MPI_UNDEFINED && size_x == big,
          "large_memtype: MPI_Type_size %d, MPI_Type_size_x %lld", size, (long long)size_x);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    MPI_Status st;
    OK(MPI_File_write_at_all(fh, 0, block, g_rank == 0 ? 1 : 0, t, &st));
    if (g_rank == 0) {
        MPI_Count got = 0;
        MPI_Get_elements_x(&st, MPI_BYTE, &got);
        CHECK(got == big, "large_memtype: write_at_all's status counts %lld bytes",
              (long long)got);
    }
    /* the nonblocking collective form, then a plain piece after the big one */
    MPI_Request req;
    OK(MPI_File_iwrite_at_all(fh, 0, block, 0, t, &req));
    OK(MPI_Wait(&req, &st));
    int last = g_size - 1;
    if (g_rank == last)
        OK(MPI_File_write_at(fh, big, block, BLOCK, MPI_BYTE, &st));
    close_file(&fh);
    MPI_Type_free(&t);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        char p[4200];
        path_of(p, sizeof p, name);
        struct stat sb;
        CHECK(stat(p, &sb) == 0 && sb.st_size == big + BLOCK,
              "large_memtype: %s has %lld bytes, expected %lld", p, (long long)sb.st_size,
              (long long)(big + BLOCK));
        int fd = open(p, O_RDONLY);
        enum { CHUNK = 4 << 20 };
        uint8_t *got = malloc(CHUNK);
        for (int64_t at = 0; fd >= 0 && at < big + BLOCK; at += CHUNK) {
            ssize_t n = pread(fd, got, CHUNK, (off_t)at);
            int64_t want = big + BLOCK - at < CHUNK ? big + BLOCK - at : CHUNK;
            int bad = n != want;
            for (int64_t i = 0; !bad && i < n; i += BLOCK)
                bad = memcmp(got + i, block, BLOCK) != 0;
            if (bad) {
                fail("large_memtype: the 4 MiB at %lld are not the block repeated", (long long)at);
                break;
            }
        }
        free(got);
        if (fd >= 0)
            close(fd);
    }
    free(block);
}

/* --- MPI-4's large-count calls ------------------------------------------------ */

#if MPI_VERSION >= 4
/*
 * Memory datatypes made with MPI 4's MPI_Count constructors (MPICH refuses
 * the int-count MPI_Type_get_envelope for them, fatally under the default
 * error handler; MPICH 4.0's own MPI-IO does so too, so no filetype made
 * so is used here, and without the layer the part is skipped): a permuted hindexed_block_c (collective), a struct_c of
 * two halves high first (independent), and every other block of a buffer
 * as a resized_c hvector_c of contiguous_c blocks (collective). Every
 * rank's bytes must land in typemap order (as MPI_Pack orders them), read
 * back with POSIX calls after the close.
 */
static void large_count_types(void)
{
    enum { BLOCK = 100, NB = 4, N = 96, PIECE = N * 4, REGION = 2 * PIECE + NB * BLOCK };
    const char *name = "large_count_types.mpiio";
    if (!g_layer) { /* MPICH 4.0's own MPI-IO aborts in MPI_Type_get_envelope on them */
        if (g_rank == 0)
            note("large_count: memory types of MPI_Count constructors are checked through the "
                 "layer only");
        return;
    }
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_WRONLY | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    uint8_t mem[2 * NB * BLOCK];
    for (int i = 0; i < 2 * NB * BLOCK; i++)
        mem[i] = (uint8_t)(g_rank * 31 + i * 7 + 1);
    int buf[N];
    MPI_Count rev[N];
    for (int i = 0; i < N; i++) {
        buf[i] = g_rank * 1000 + i;
        rev[i] = (MPI_Count)(N - 1 - i) * 4;
    }
    MPI_Datatype block, blocks, every_other, perm, halves;
    OK(MPI_Type_contiguous_c(BLOCK, MPI_BYTE, &block));
    OK(MPI_Type_create_hvector_c(NB, 1, 2 * BLOCK, block, &blocks));
    OK(MPI_Type_create_resized_c(blocks, 0, 2 * NB * BLOCK, &every_other));
    OK(MPI_Type_commit(&every_other));
    OK(MPI_Type_create_hindexed_block_c(N, 4, rev, MPI_BYTE, &perm));
    OK(MPI_Type_commit(&perm));
    MPI_Count hl[2] = {PIECE / 2, PIECE / 2}, hd[2] = {PIECE / 2, 0};
    MPI_Datatype ht[2] = {MPI_BYTE, MPI_BYTE};
    OK(MPI_Type_create_struct_c(2, hl, hd, ht, &halves));
    OK(MPI_Type_commit(&halves));
    const int64_t mine = (int64_t)g_rank * REGION;
    MPI_Status st;
    /* the independent write first, made visible before the collective ones
     * (case_memtype_order says why) */
    OK(MPI_File_write_at(fh, mine + PIECE, buf, 1, halves, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_write_at_all(fh, mine, buf, 1, perm, &st));
    OK(MPI_File_write_at_all(fh, mine + 2 * PIECE, mem, 1, every_other, &st));
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);

    uint8_t want[REGION], got[REGION];
    int pos = 0;
    OK(MPI_Pack(buf, 1, perm, want, REGION, &pos, MPI_COMM_SELF));
    OK(MPI_Pack(buf, 1, halves, want, REGION, &pos, MPI_COMM_SELF));
    OK(MPI_Pack(mem, 1, every_other, want, REGION, &pos, MPI_COMM_SELF));
    CHECK(pos == REGION, "large_count types: packed %d bytes, expected %d", pos, (int)REGION);
    char p[4200];
    path_of(p, sizeof p, name);
    int fd = open(p, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : pread(fd, got, REGION, (off_t)mine);
    if (fd >= 0)
        close(fd);
    CHECK(n == REGION, "large_count types: read %zd of my %d bytes of %s", n, (int)REGION, p);
    for (int i = 0; n == REGION && i < REGION; i++)
        if (got[i] != want[i]) {
            fail("large_count types: byte %d of rank %d's region (%s) is %u, typemap order "
                 "says %u", i, g_rank,
                 i < PIECE ? "hindexed_block_c" : i < 2 * PIECE ? "struct_c" : "hvector_c",
                 got[i], want[i]);
            break;
        }
    MPI_Type_free(&block);
    MPI_Type_free(&blocks);
    MPI_Type_free(&every_other);
    MPI_Type_free(&perm);
    MPI_Type_free(&halves);
}
#endif

/*
 * MPI_File_write_at_c and the other MPI_Count calls (MPI 4; MPICH 4 has
 * them, Open MPI 4.1 does not: then the case only says so) on a taken file,
 * mixed with the int-count calls as a program built against either may mix
 * them: each rank writes its region with write_at_all (int), rewrites its
 * first half with write_at_c (independent, the same bytes again, a new
 * generation), reads that half back at once with read_at_c (its own unsynced
 * write: the layer's copy), then write_all_c at the individual pointer and
 * iwrite_at_c; after the close every byte must be the later generation's.
 * Through MPI-IO directly the _c write would land before the layer's
 * earlier write of the same bytes (which then wins), and the read would
 * miss them. Then the MPI_Count constructors' types (large_count_types).
 */
void case_large_count(void)
{
#if MPI_VERSION >= 4
    enum { REGION = 6000, HALF = REGION / 2, TAIL = 700 };
    const char *name = "large_count.mpiio";
    remove_file(name);
    MPI_File fh = open_file(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    expect_state(fh, "after open", ST_TAKEN);
    model_t m = {.holes_zero = g_layer};
    const int64_t base = (int64_t)g_rank * REGION;
    const int64_t tails = (int64_t)g_size * REGION;
    for (int q = 0; q < g_size; q++) {
        model_put(&m, (int64_t)q * REGION, REGION, seed_of(1));
        model_put(&m, (int64_t)q * REGION, HALF, seed_of(2));
        model_put(&m, tails + (int64_t)q * 2 * TAIL, TAIL, seed_of(3));
        model_put(&m, tails + (int64_t)q * 2 * TAIL + TAIL, TAIL, seed_of(4));
    }
    MPI_Status st;
    uint8_t *b = pattern_buf(base, REGION, seed_of(1));
    OK(MPI_File_write_at_all(fh, base, b, REGION, MPI_BYTE, &st));
    free(b);
    b = pattern_buf(base, HALF, seed_of(2));
    OK(MPI_File_write_at_c(fh, base, b, (MPI_Count)HALF, MPI_BYTE, &st));
    MPI_Count n = -1;
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    CHECK(n == HALF, "write_at_c: the status counts %lld bytes, expected %d", (long long)n,
          (int)HALF);
    free(b);
    uint8_t got[HALF];
    memset(got, 0xEE, sizeof got);
    if (OK(MPI_File_read_at_c(fh, base, got, (MPI_Count)HALF, MPI_BYTE, &st)))
        check_buf("read_at_c of its own unsynced write_at_c", got, &m, base, HALF);
    /* the pointer calls: this rank's first tail piece */
    OK(MPI_File_seek(fh, tails + (int64_t)g_rank * 2 * TAIL, MPI_SEEK_SET));
    b = pattern_buf(tails + (int64_t)g_rank * 2 * TAIL, TAIL, seed_of(3));
    OK(MPI_File_write_all_c(fh, b, (MPI_Count)TAIL, MPI_BYTE, &st));
    free(b);
    MPI_Offset at = -1;
    OK(MPI_File_get_position(fh, &at));
    CHECK(at == tails + (int64_t)g_rank * 2 * TAIL + TAIL,
          "write_all_c: the pointer is at %lld, expected %lld", (long long)at,
          (long long)(tails + (int64_t)g_rank * 2 * TAIL + TAIL));
    /* a nonblocking one: the second tail piece */
    int64_t o4 = tails + (int64_t)g_rank * 2 * TAIL + TAIL;
    b = pattern_buf(o4, TAIL, seed_of(4));
    MPI_Request rq;
    OK(MPI_File_iwrite_at_c(fh, o4, b, (MPI_Count)TAIL, MPI_BYTE, &rq));
    OK(MPI_Wait(&rq, &st));
    free(b);
    expect_state(fh, "before close", ST_TAKEN);
    close_file(&fh);
    check_file(name, &m);
    model_free(&m);
    large_count_types();
#else
    if (g_rank == 0)
        note("large_count: this MPI (version %d) has no MPI_Count calls: nothing to check",
             MPI_VERSION);
#endif
}
