/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads cases: random read plans over random files (random), and
 * several files read at once beside a write (multi).
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

/* ---- case random ---------------------------------------------------------- */

void case_random(uint64_t seed, int rounds, int nreads, size_t max_bytes,
                 uint64_t writer_buffer)
{
    group_t g;
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.writer_buffer = (size_t)writer_buffer; /* 0: the default */
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime_with(MPI_COMM_WORLD, &cfg));
    if (g.rank == 0)
        tc_note("random reads: seed %" PRIu64 ", %d rounds, %d reads per rank, %s, writer_buffer "
                "%" PRIu64 "%s", seed, rounds, nreads,
                g_mode == FWDIO_CALLBACKS_ON_POLL ? "callbacks on poll" : "callbacks on progress",
                writer_buffer, writer_buffer ? "" : " (default)");
    for (int round = 0; round < rounds; round++) {
        tc_rng_t shared, mine;
        tc_rng_seed(&shared, seed * 1000003u + (uint64_t)round);
        tc_rng_seed(&mine, seed * 7777u + (uint64_t)round * 131u + (uint64_t)tc_rank);
        char name[64], what[160], d1[256], d2[256];

        /* (a) written by fwdio, read with other options */
        model_t m;
        snprintf(name, sizeof name, "fwdio-%d", round);
        uint64_t size = pick_size(&shared);
        model_plan(&m, name, &shared, size, seed * 100 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 150000), g.size, 5,
                   tc_rng_below(&shared, 2) ? tc_rng_below(&shared, size / 8 + 1) : 0);
        opts_t wo, ro;
        opts_random(&wo, &shared, g.size);
        if (tc_rng_below(&shared, 4) == 0)
            opts_copy(&ro, &wo);
        else
            opts_random(&ro, &shared, g.size);
        if (g.rank == 0)
            tc_note("seed %" PRIu64 " round %d (a): %" PRIu64 " bytes (%" PRIu64
                    " in holes) written by fwdio with %s; read with %s",
                    seed, round, m.size, model_holes(&m), describe(&wo, d1, sizeof d1),
                    describe(&ro, d2, sizeof d2));
        write_fwdio(&g, &m, &wo, &mine);
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d (a) %s", seed, round, name);
        read_random(&g, &m, &ro, seed * 5 + (uint64_t)round, nreads, max_bytes, what);
        model_free(&m);

        /* (b) written by plain pwrite on rank 0: holes, a hole at the end */
        snprintf(name, sizeof name, "plain-%d", round);
        size = pick_size(&shared);
        model_plan(&m, name, &shared, size, seed * 100 + 50 + (uint64_t)round,
                   1 + tc_rng_below(&shared, 100000), g.size, 3,
                   1 + tc_rng_below(&shared, size / 4 + 1));
        opts_random(&ro, &shared, g.size);
        if (g.rank == 0)
            tc_note("seed %" PRIu64 " round %d (b): %" PRIu64 " bytes (%" PRIu64
                    " in holes) written by pwrite; read with %s",
                    seed, round, m.size, model_holes(&m), describe(&ro, d2, sizeof d2));
        write_plain(g.comm, &m);
        snprintf(what, sizeof what, "seed %" PRIu64 " round %d (b) %s", seed, round, name);
        read_random(&g, &m, &ro, seed * 5 + 3 + (uint64_t)round, nreads, max_bytes, what);
        model_free(&m);
    }
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- case multi: several files at once ---------------------------------------- */

void case_multi(uint64_t seed, int nreads)
{
    group_t g;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed * 13 + (uint64_t)tc_rank + 1);
    model_t a, b, c, w;
    opts_t oa, ob, oc, ow;
    model_plan(&a, "multi-a", &shared, pick_size(&shared), seed + 1, 70000, g.size, 4, 999);
    model_plan(&b, "multi-b", &shared, pick_size(&shared), seed + 2, 70000, g.size, 4, 0);
    model_plan(&c, "multi-c", &shared, pick_size(&shared), seed + 3, 70000, g.size, 4, 1);
    model_plan(&w, "multi-w", &shared, pick_size(&shared), seed + 4, 70000, g.size, 4, 0);
    opts_random(&oa, &shared, g.size);
    opts_random(&ob, &shared, g.size);
    opts_random(&oc, &shared, g.size);
    opts_random(&ow, &shared, g.size);
    write_plain(g.comm, &a);
    write_fwdio(&g, &b, &ob, &mine);
    write_plain(g.comm, &c);
    if (g.rank == 0)
        tc_note("seed %" PRIu64 ": reads of 3 files (%" PRIu64 ", %" PRIu64 ", %" PRIu64
                " bytes), a second read of the first, and a write of a fourth, all at once",
                seed, a.size, b.size, c.size);
    reader_t ra, ra2, rb, rc;
    reader_t *all[4] = {&ra, &ra2, &rb, &rc};
    const char *names[4] = {"multi: file a", "multi: file a again", "multi: file b",
                            "multi: file c"};
    const model_t *models[4] = {&a, &a, &b, &c};
    const opts_t *opts[4] = {&oa, &ob, &ob, &oc};
    for (int k = 0; k < 4; k++) {
        reader_init(all[k], &g, models[k], opts[k], nreads, names[k]);
        tc_rng_t rshared, rmine;
        tc_rng_seed(&rshared, seed * 50 + (uint64_t)k);
        tc_rng_seed(&rmine, seed * 60 + (uint64_t)k * 1000 + (uint64_t)g.rank);
        plan_random(all[k], &rshared, &rmine, 3u << 20);
    }
    reads_open(&ra);
    reads_open(&rb);
    tc_cbstate_t wcb;
    fwdio_file_t *wf = write_fwdio_start(&g, &w, &ow, &mine, &wcb);
    reads_open(&rc);
    reads_close(&ra);
    reads_open(&ra2); /* the same path again, once the first read is closed */
    reads_close(&rc);
    reads_close(&rb);
    reads_close(&ra2);
    reads_wait(&rc);
    reads_wait(&ra2);
    reads_wait(&ra);
    reads_wait(&rb);
    for (int k = 0; k < 4; k++) {
        reads_verify(all[k]);
        reads_collective(all[k]);
        reads_free(all[k]);
    }
    write_fwdio_end(&g, wf, &wcb, "multi: the write beside the reads");
    TC_CHECK(disk_matches(g.comm, &w), "multi: the write beside the reads is not whole");
    model_free(&a);
    model_free(&b);
    model_free(&c);
    model_free(&w);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}
