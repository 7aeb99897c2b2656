/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads cases: reading what a run wrote. A file written on some ranks
 * read on others (ranks), a read opened right after the write of its path
 * and a write opened right after its read (after_write), and a read of a
 * path whose write is still open (still_open).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "reads.h"
#include "test_common.h"

/* ---- case ranks: written on N ranks, read on M ------------------------------ */

void case_ranks(uint64_t seed, int nreads)
{
    char what[160], d1[256], d2[256];
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed + 17 + (uint64_t)tc_rank);
    /* 1. written by the first half of the ranks, read by all */
    int nsub = (tc_size + 1) / 2;
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, tc_rank < nsub ? 0 : MPI_UNDEFINED, tc_rank, &sub);
    model_t m;
    uint64_t size = (2 << 20) + 1 + tc_rng_below(&shared, 1 << 20);
    model_plan(&m, "ranks-1", &shared, size, seed + 1, 1 + tc_rng_below(&shared, 100000), nsub, 6,
               tc_rng_below(&shared, 50000));
    opts_t wo, ro;
    opts_random(&wo, &shared, nsub);
    opts_random(&ro, &shared, tc_size);
    if (tc_rank == 0)
        tc_note("seed %" PRIu64 ": %" PRIu64 " bytes written on %d of %d ranks with %s, read on "
                "%d with %s",
                seed, size, nsub, tc_size, describe(&wo, d1, sizeof d1), tc_size,
                describe(&ro, d2, sizeof d2));
    if (sub != MPI_COMM_NULL) {
        group_t gs;
        group_set(&gs, sub, tc_start_runtime(sub, g_mode));
        write_fwdio(&gs, &m, &wo, &mine);
        TC_EXPECT(fwdio_finalize(gs.rt), FWDIO_OK, "fwdio_finalize (sub-communicator)");
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    snprintf(what, sizeof what, "seed %" PRIu64 " written on %d ranks, read on %d", seed, nsub,
             tc_size);
    read_random(&g, &m, &ro, seed + 2, nreads, 8u << 20, what);
    model_free(&m);

    /* 2. written by all, read by the odd ranks */
    size = (1 << 20) + 1 + tc_rng_below(&shared, 2 << 20);
    model_plan(&m, "ranks-2", &shared, size, seed + 3, 1 + tc_rng_below(&shared, 100000),
               tc_size, 6, tc_rng_below(&shared, 50000));
    int nodd = tc_size / 2;
    opts_random(&wo, &shared, tc_size);
    opts_random(&ro, &shared, nodd > 0 ? nodd : 1);
    if (tc_rank == 0)
        tc_note("seed %" PRIu64 ": %" PRIu64 " bytes written on %d ranks with %s, read on the "
                "%d odd ranks with %s",
                seed, size, tc_size, describe(&wo, d1, sizeof d1), nodd,
                describe(&ro, d2, sizeof d2));
    write_fwdio(&g, &m, &wo, &mine);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize (world)");
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, tc_rank % 2 ? 0 : MPI_UNDEFINED, tc_rank, &odd);
    if (odd != MPI_COMM_NULL) {
        group_t go;
        group_set(&go, odd, tc_start_runtime(odd, g_mode));
        snprintf(what, sizeof what, "seed %" PRIu64 " written on %d ranks, read on %d", seed,
                 tc_size, nodd);
        read_random(&go, &m, &ro, seed + 4, nreads, 8u << 20, what);
        TC_EXPECT(fwdio_finalize(go.rt), FWDIO_OK, "fwdio_finalize (odd ranks)");
        MPI_Comm_free(&odd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    model_free(&m);
}

/* ---- case after_write: a read opened right after the write of its path ---- */

void case_after_write(uint64_t seed, int nreads)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    for (int round = 0; round < 3; round++) {
        tc_rng_t shared, mine;
        tc_rng_seed(&shared, seed * 10 + (uint64_t)round);
        tc_rng_seed(&mine, seed * 10 + (uint64_t)round + 1000u * (uint64_t)(tc_rank + 1));
        char name[64], what[160], d1[256], d2[256];
        snprintf(name, sizeof name, "after-write-%d", round);
        /* the old file: other bytes, and larger or smaller */
        model_t old, m;
        uint64_t size = (1 << 20) + 1 + tc_rng_below(&shared, 3 << 20);
        uint64_t old_size = round == 1 ? size / 2 + 3 : size + 300000;
        model_plan(&old, name, &shared, old_size, seed + 900, 50000, g.size, 0, 0);
        write_plain(g.comm, &old);
        model_plan(&m, name, &shared, size, seed + 10 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 120000), g.size, 4, tc_rng_below(&shared, 70000));
        opts_t wo, ro;
        opts_random(&wo, &shared, g.size);
        if (round == 2)
            opts_copy(&ro, &wo);
        else
            opts_random(&ro, &shared, g.size);
        if (g.rank == 0)
            tc_note("seed %" PRIu64 " round %d: %" PRIu64 " bytes (old file: %" PRIu64
                    ") written with %s, read at once with %s",
                    seed, round, size, old_size, describe(&wo, d1, sizeof d1),
                    describe(&ro, d2, sizeof d2));
        tc_cbstate_t wcb;
        fwdio_file_t *wf = write_fwdio_start(&g, &m, &wo, &mine, &wcb);
        /* at once: reads of the path must wait for the write */
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d: read after write", seed, round);
        reader_t rs;
        reader_init(&rs, &g, &m, &ro, nreads, what);
        tc_rng_t rshared, rmine;
        tc_rng_seed(&rshared, seed + 77 + (uint64_t)round);
        tc_rng_seed(&rmine, seed + 99 + (uint64_t)round * 1000 + (uint64_t)g.rank);
        plan_random(&rs, &rshared, &rmine, 8u << 20);
        /* half of the reads before ready */
        for (int i = 0; i < rs.n; i++)
            if (rs.r[i].when == W_LATER && i % 2)
                rs.r[i].when = W_EARLY;
        rs.must_be_complete = &wcb.complete_count;
        reads_open(&rs);
        reads_run(&rs);
        reads_verify(&rs);
        reads_collective(&rs);
        reads_free(&rs);
        write_fwdio_end(&g, wf, &wcb, "the write before the read");

        /* the other way round: a write of the path opened right after its
         * read is closed waits for the read, which sees the bytes before it */
        model_t m2;
        snprintf(name, sizeof name, "after-write-%d", round); /* the same path */
        uint64_t size2 = (1 << 20) + 1 + tc_rng_below(&shared, 2 << 20);
        model_plan(&m2, name, &shared, size2, seed + 40 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 120000), g.size, 4, 0);
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d: read before a write", seed,
                 round);
        reader_init(&rs, &g, &m, &ro, nreads, what);
        tc_rng_seed(&rshared, seed + 177 + (uint64_t)round);
        tc_rng_seed(&rmine, seed + 199 + (uint64_t)round * 1000 + (uint64_t)g.rank);
        plan_random(&rs, &rshared, &rmine, 8u << 20);
        reads_open(&rs);
        reads_close(&rs);
        wf = write_fwdio_start(&g, &m2, &wo, &mine, &wcb);
        reads_wait(&rs);
        reads_verify(&rs);
        reads_collective(&rs);
        reads_free(&rs);
        write_fwdio_end(&g, wf, &wcb, "the write after the read");
        TC_CHECK(disk_matches(g.comm, &m2), "the write after the read is not whole");
        model_free(&m2);
        model_free(&m);
        model_free(&old);
    }
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case still_open: a read of a path whose write is not closed ---------- */

void case_still_open(uint64_t seed)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank + 1);
    model_t m;
    model_plan(&m, "still-open", &shared, (1 << 20) + 555, seed, 60000, g.size, 0, 0);
    opts_t o;
    opts_fixed(&o, 16384, 65536, g.size > 1 ? 2 : 1, FWDIO_LAYOUT_CYCLIC);
    tc_cbstate_t wcb;
    tc_cb_init(&wcb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&wcb);
    fwdio_file_t *wf = NULL;
    TC_EXPECT(fwdio_open(g.rt, m.path, m.size, &o.o, &cbs, &wf), FWDIO_OK, "fwdio_open (write)");
    /* the write is open on this rank: the read of its path cannot follow it */
    reader_t rs;
    reader_init(&rs, &g, &m, &o, 2, "a read of a path still open for writing");
    rd_set(&rs, 0, 0, 1000, W_EARLY, 0);
    rd_set(&rs, 1, m.size - 10, 10, W_EARLY, 0);
    for (int i = 0; i < 2; i++) {
        rs.r[i].expect = rs.r[i].alt = FWDIO_EINVAL;
        rs.r[i].rc_alt = FWDIO_EFAILED;
    }
    rs.want_ready = rs.want_complete = FWDIO_EINVAL;
    reads_open(&rs);
    for (size_t i = 0; i < m.n; i++)
        if (m.ext[i].owner == g.rank)
            TC_EXPECT(tc_write_pattern(wf, m.ext[i].offset, m.ext[i].len, m.seed, 0), FWDIO_OK,
                      "fwdio_write");
    TC_EXPECT(fwdio_close(wf), FWDIO_OK, "fwdio_close (write)");
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    const char *text = fwdio_file_error(atomic_load(&rs.f));
    TC_CHECK(text && *text && strcmp(text, "success") != 0, "the failed read has no error text");
    if (g.rank == 0)
        tc_note("read of a path still open for writing: %s", text);
    reads_free(&rs);
    write_fwdio_end(&g, wf, &wcb, "the write the read could not follow");
    TC_CHECK(disk_matches(g.comm, &m), "the write was not whole");
    /* and now it is closed and complete: the read works */
    read_random(&g, &m, &o, seed + 5, 40, 4u << 20, "the read after the write completed");
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}
