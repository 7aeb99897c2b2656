/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads cases: the readers' memory budget (budgets): large overlapping
 * reads within writer_buffer and one unit, each unit read about once.
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

/* ---- case budgets ----------------------------------------------------------- */

void case_budgets(uint64_t seed, uint64_t writer_buffer)
{
    const uint64_t unit = 65536;
    tc_rng_t shared, mine;
    tc_rng_seed(&shared, seed);
    tc_rng_seed(&mine, seed * 3 + (uint64_t)tc_rank + 1);
    group_t g;

    /* 1. a writer_buffer of 4 units (256 KiB, the smallest allowed) */
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.writer_buffer = writer_buffer ? writer_buffer : 4 * unit;
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime_with(MPI_COMM_WORLD, &cfg));
    model_t m;
    model_plan(&m, "budget", &shared, (6 << 20) + 4321, seed, 200000, g.size, 6, 10000);
    write_plain(g.comm, &m);
    opts_t o;
    opts_fixed(&o, unit, 2 * unit, g.size > 1 ? 2 : 1, FWDIO_LAYOUT_BLOCK);
    int n = 6;
    reader_t rs;
    char what[128];
    snprintf(what, sizeof what, "large reads through a budget of %" PRIu64 " units",
             (uint64_t)cfg.writer_buffer / unit);
    reader_init(&rs, &g, &m, &o, n, what);
    for (int i = 0; i < n; i++) {
        uint64_t len = (512 << 10) + tc_rng_below(&mine, 3 << 19);
        uint64_t off = tc_rng_below(&mine, m.size - len + 1);
        if (i == n - 1)
            off = m.size - len; /* to the end */
        rd_set(&rs, i, off, (size_t)len, i < 4 ? W_EARLY : W_LATER, 0);
    }
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    fwdio_file_stats_t fst;
    TC_EXPECT(fwdio_file_stats(atomic_load(&rs.f), &fst), FWDIO_OK, "fwdio_file_stats");
    fwdio_runtime_stats_t rst;
    TC_EXPECT(fwdio_runtime_stats(g.rt, &rst), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(rst.writer_budget == cfg.writer_buffer,
             "writer_budget %" PRIu64 ", configured %" PRIu64, rst.writer_budget,
             (uint64_t)cfg.writer_buffer);
    uint64_t bound = rst.writer_budget + unit;
    TC_CHECK(rst.writer_peak <= bound,
             "a reader held %" PRIu64 " bytes (writer_peak), more than the budget %" PRIu64
             " + one unit %" PRIu64,
             rst.writer_peak, rst.writer_budget, unit);
    TC_CHECK(fst.peak_writer_bytes <= bound,
             "a reader held %" PRIu64 " bytes of the file (peak_writer_bytes), more than the "
             "budget %" PRIu64 " + one unit %" PRIu64,
             fst.peak_writer_bytes, rst.writer_budget, unit);
    uint64_t peak = max_u64(g.comm, rst.writer_peak);
    uint64_t from_storage = sum_u64(g.comm, fst.bytes_from_storage);
    TC_CHECK(peak > 0, "no reader held any bytes (writer_peak 0 on every rank)");
    if (g.rank == 0)
        tc_note("budget %" PRIu64 ": largest writer_peak %" PRIu64 ", %" PRIu64
                " bytes pread for a file of %" PRIu64,
                rst.writer_budget, peak, from_storage, m.size);
    reads_free(&rs);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
    model_free(&m);

    /* 2. the default budget: every rank reads the whole file at once.
     * Each unit is pread once while it stays in its reader's memory. The
     * bound below assumes the whole file fits in every reader's budget (8 MiB
     * + a bit against the default 64 MiB: no unit is dropped to make room)
     * and that every rank's request reaches the readers while the units it
     * wants are still held: each rank issues its one read right after
     * fwdio_open_read, before ready, so all requests are normally in before
     * the first pread ends. 2x leaves room for a rank whose request comes
     * late on a loaded, oversubscribed machine (its units read again), and is
     * still well below the P x size of a file read once per rank (P >= 3). */
    group_set(&g, MPI_COMM_WORLD, tc_start_runtime(MPI_COMM_WORLD, g_mode));
    model_plan(&m, "once", &shared, (8 << 20) + 999, seed + 1, 300000, g.size, 8, 0);
    write_plain(g.comm, &m);
    opts_fixed(&o, unit, 4 * unit, 0, FWDIO_LAYOUT_BLOCK);
    reader_init(&rs, &g, &m, &o, 1, "every rank reads the whole file");
    rd_set(&rs, 0, 0, (size_t)m.size, W_EARLY, 0);
    reads_open(&rs);
    reads_run(&rs);
    reads_verify(&rs);
    reads_collective(&rs);
    TC_EXPECT(fwdio_file_stats(atomic_load(&rs.f), &fst), FWDIO_OK, "fwdio_file_stats");
    from_storage = sum_u64(g.comm, fst.bytes_from_storage);
    uint64_t units = sum_u64(g.comm, fst.pwrite_calls);
    uint64_t nunits = (m.size + unit - 1) / unit;
    TC_CHECK(from_storage >= m.size && from_storage <= 2 * m.size,
             "%d ranks each read the whole file of %" PRIu64 " bytes: the readers pread %" PRIu64
             " bytes (%.2fx), expected between 1x and 2x",
             g.size, m.size, from_storage, (double)from_storage / (double)m.size);
    TC_CHECK(units >= nunits && units <= 2 * nunits,
             "the readers pread %" PRIu64 " units of a file of %" PRIu64
             ", expected between 1x and 2x",
             units, nunits);
    if (g.rank == 0)
        tc_note("%d ranks read the whole file of %" PRIu64 " bytes: %" PRIu64
                " bytes pread (%.3fx) in %" PRIu64 " units (%" PRIu64 " in the file)",
                g.size, m.size, from_storage, (double)from_storage / (double)m.size, units,
                nunits);
    reads_free(&rs);
    model_free(&m);
    TC_EXPECT(fwdio_finalize(g.rt), FWDIO_OK, "fwdio_finalize");
}
