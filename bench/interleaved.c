/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-interleaved: many small pieces of every rank interleaved in one file
 * (a parallel HDF5 point selection's pattern), the cost of their bookkeeping
 * at the writers (docs/results/mpiio-layer.md, "Interleaved small pieces").
 *
 * Rank r's piece i is --piece bytes at ((i * P) + r) * piece: every write
 * unit gets pieces of all ranks, each landing between two of another rank's.
 *
 *   --mode core    fwdio_open of the file, one fwdio_write per piece, close,
 *                  wait;
 *   --mode mpiio   MPI_File_open, a view of a vector type (one piece per
 *                  rank and stride), one MPI_File_write_at_all of all the
 *                  rank's pieces, close: run it plain, and with the MPI-IO
 *                  layer preloaded (FWDIO_MPIIO naming the file).
 *
 * Prints the seconds from the open to the close's return (max over ranks);
 * rank 0 checks every byte of the file.
 */
#include "cli.h"
#include "fwdio.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static uint8_t byte_of(uint64_t off)
{
    return (uint8_t)(off * 2654435761u >> 13);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpiexec -n N fwdio-interleaved [--mode core|mpiio] [--pieces N]\n"
            "                                    [--piece BYTES] [--file PATH]\n"
            "  --mode core|mpiio  through fwdio_write, or one MPI_File_write_at_all of a\n"
            "                     vector view (run it plain and with the layer) (core)\n"
            "  --pieces N         pieces per rank (100000)\n"
            "  --piece BYTES      bytes of each piece (16)\n"
            "  --file PATH        the file written, then checked by rank 0 (interleaved.out)\n"
            "  --help             this text\n" CLI_SIZE_GRAMMAR);
}

enum { OPT_FILE = 256, OPT_MODE, OPT_PIECES, OPT_PIECE };

static const struct option options[] = {
    {"file", required_argument, NULL, OPT_FILE},
    {"mode", required_argument, NULL, OPT_MODE},
    {"pieces", required_argument, NULL, OPT_PIECES},
    {"piece", required_argument, NULL, OPT_PIECE},
    CLI_HELP_OPTION,
    {0}};

static const char *const modes[] = {"core", "mpiio"};

struct opts {
    const char *path;
    int mode;
    int64_t pieces;
    uint64_t piece;
};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_FILE: o->path = c->arg; return 0;
    case OPT_MODE: return cli_choice(c, modes, 2, &o->mode);
    case OPT_PIECES: return cli_i64(c, 1, INT32_MAX, &o->pieces);
    case OPT_PIECE: return cli_size(c, 1, 1 << 20, &o->piece);
    default: return CLI_BAD;
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o = {"interleaved.out", 0, 100000, 16};
    cli_t cli;
    cli_begin(&cli, "fwdio-interleaved", argc, argv, options, rank != 0);
    int parsed = cli_parse(&cli, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    const char *path = o.path, *mode = modes[o.mode];
    const long pieces = (long)o.pieces, piece = (long)o.piece;
    const uint64_t stride = (uint64_t)piece * (uint64_t)nranks;
    const uint64_t size = stride * (uint64_t)pieces;
    uint8_t *mine = malloc((size_t)(piece * pieces));
    for (long i = 0; i < pieces; i++)
        for (long b = 0; b < piece; b++)
            mine[i * piece + b] = byte_of((uint64_t)i * stride + (uint64_t)rank * piece + b);
    if (rank == 0)
        remove(path);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = 0;
    /* the writers' pwrite calls, partial flushes and peak memory, summed */
    uint64_t wstats[3] = {0, 0, 0};
    if (!strcmp(mode, "core")) {
        fwdio_runtime_t *rt;
        fwdio_file_t *f;
        fwdio_init(MPI_COMM_WORLD, NULL, &rt);
        rc = fwdio_open(rt, path, size, NULL, NULL, &f);
        for (long i = 0; rc == FWDIO_OK && i < pieces; i++)
            rc = fwdio_write(f, mine + i * piece, (size_t)piece,
                             (uint64_t)i * stride + (uint64_t)rank * piece);
        fwdio_close(f);
        int st = fwdio_wait(f);
        rc = rc != FWDIO_OK ? rc : st;
        if (rc != FWDIO_OK)
            fprintf(stderr, "rank %d: %s\n", rank, fwdio_file_error(f));
        fwdio_file_stats_t fs;
        if (fwdio_file_stats(f, &fs) == FWDIO_OK) {
            wstats[0] = fs.pwrite_calls;
            wstats[1] = fs.partial_flushes;
            wstats[2] = fs.peak_writer_bytes;
        }
        fwdio_file_free(f);
        t0 = MPI_Wtime() - t0;
        fwdio_finalize(rt);
    } else {
        MPI_File fh;
        MPI_Datatype v;
        MPI_Type_vector((int)pieces, (int)piece, (int)stride, MPI_BYTE, &v);
        MPI_Type_commit(&v);
        rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                           MPI_INFO_NULL, &fh);
        if (rc == MPI_SUCCESS)
            rc = MPI_File_set_view(fh, (MPI_Offset)rank * piece, MPI_BYTE, v, "native",
                                   MPI_INFO_NULL);
        if (rc == MPI_SUCCESS)
            rc = MPI_File_write_at_all(fh, 0, mine, (int)(piece * pieces), MPI_BYTE,
                                       MPI_STATUS_IGNORE);
        int crc = MPI_File_close(&fh);
        rc = rc != MPI_SUCCESS ? rc : crc;
        t0 = MPI_Wtime() - t0;
        MPI_Type_free(&v);
    }
    double t = t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, wstats, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    long bad = 0;
    if (rank == 0) {
        FILE *fp = fopen(path, "rb");
        uint8_t *all = malloc(size);
        size_t n = fp ? fread(all, 1, size, fp) : 0;
        if (fp)
            fclose(fp);
        bad = n != size;
        for (uint64_t o = 0; !bad && o < size; o++)
            bad = all[o] != byte_of(o);
        free(all);
        printf("interleaved %s: %d ranks x %ld pieces of %ld bytes: %.4f s, %s\n", mode,
               nranks, pieces, piece, t, rc != 0 ? "FAILED" : bad ? "WRONG BYTES" : "bytes right");
        if (!strcmp(mode, "core"))
            printf("writers: %llu pwrite calls, %llu partial flushes, peak %.1f MB (summed)\n",
                   (unsigned long long)wstats[0], (unsigned long long)wstats[1], wstats[2] / 1e6);
    }
    free(mine);
    MPI_Finalize();
    return rc != 0 || bad;
}
