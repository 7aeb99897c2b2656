/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copies counted: every rank writes one aligned share of a file with one
 * writer, copied (fwdio_write), lent from ordinary memory, or lent from a
 * fwdio_alloc buffer, and the file stats must say exactly where the bytes
 * went. Summed over ranks: fwdio_write copies each byte once, a lent write
 * none (whole write units are written straight from the message, so the
 * writer copies nothing); the writer hands every byte to pwrite once; every
 * byte of a rank that is not the writer goes through the node-shared area when
 * it is on here and the bytes are in it (copies, and lent fwdio_alloc
 * buffers), else to MPI. All ranks run on one node, so with the area on
 * (the default; FWDIO_SHARED_BUFFER=off turns it off) nothing goes to MPI but
 * lent ordinary memory. The file is checked byte for byte, and the runtime
 * stats show the progress thread ran and used CPU.
 */
#define _GNU_SOURCE
#include "test_common.h"

#include "pattern.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static fwdio_runtime_t *g_rt;

static atomic_int g_lent_done;

static void on_lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    (void)buf;
    (void)arg;
    if (status != FWDIO_OK)
        tc_fail("lent write done with %s", fwdio_strerror(status));
    atomic_fetch_add(&g_lent_done, 1);
}

enum { SHARE = 1 << 20, UNIT = 64 << 10 };

enum how { COPIED, LENT, LENT_ALLOC };

static int area_on(void)
{
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(g_rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    return rs.shared_budget > 0;
}

static void section_counted(enum how how, uint64_t seed)
{
    static const char *const names[] = {"copied", "lent", "lent from fwdio_alloc"};
    tc_phase("copies counted: %s writes", names[how]);
    const int lent = how != COPIED;
    char path[4096];
    char name[64];
    snprintf(name, sizeof name, "copies_%d.dat", (int)how);
    tc_path(path, sizeof path, name);
    const uint64_t size = (uint64_t)tc_size * SHARE;
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = 1;
    o.write_size = UNIT;
    o.stripe_size = UNIT;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(g_rt, path, size, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    if (!f)
        return;
    const uint64_t offset = (uint64_t)tc_rank * SHARE;
    void *mem = NULL;
    if (how == LENT_ALLOC)
        TC_EXPECT(fwdio_alloc(g_rt, SHARE, &mem), FWDIO_OK, "fwdio_alloc");
    else
        mem = malloc(SHARE);
    uint8_t *buf = mem;
    if (!buf) {
        tc_fail("out of memory");
        return;
    }
    pattern_fill(buf, SHARE, offset, seed);
    atomic_store(&g_lent_done, 0);
    if (lent)
        TC_EXPECT(fwdio_write_lent(f, buf, SHARE, offset, on_lent_done, NULL), FWDIO_OK,
                  "fwdio_write_lent");
    else
        TC_EXPECT(fwdio_write(f, buf, SHARE, offset), FWDIO_OK, "fwdio_write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    if (lent)
        TC_CHECK(atomic_load(&g_lent_done) == 1, "lent done ran %d times",
                 atomic_load(&g_lent_done));
    if (how == LENT_ALLOC)
        TC_EXPECT(fwdio_release(g_rt, buf), FWDIO_OK, "fwdio_release");
    else
        free(buf);

    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    int writer = -1;
    TC_EXPECT(fwdio_file_writers(f, &writer, 1), 1, "fwdio_file_writers");
    long copied = tc_sum(MPI_COMM_WORLD, (long)st.bytes_copied);
    long to_mpi = tc_sum(MPI_COMM_WORLD, (long)st.bytes_to_mpi);
    long to_pwrite = tc_sum(MPI_COMM_WORLD, (long)st.bytes_to_pwrite);
    long shared = tc_sum(MPI_COMM_WORLD, (long)st.bytes_shared);
    /* what the writer's peers send goes through the area or over MPI */
    const uint64_t peers = size - SHARE;
    const int through_area = area_on() && how != LENT;
    TC_CHECK(copied == (lent ? 0 : (long)size), "bytes copied %ld, want %ld", copied,
             lent ? 0L : (long)size);
    TC_CHECK(to_pwrite == (long)size, "bytes to pwrite %ld, want %llu", to_pwrite,
             (unsigned long long)size);
    TC_CHECK(to_mpi == (long)(through_area ? 0 : peers), "bytes to MPI %ld, want %llu", to_mpi,
             (unsigned long long)(through_area ? 0 : peers));
    TC_CHECK(shared == (long)(through_area ? peers : 0),
             "bytes through the node-shared area %ld, want %llu", shared,
             (unsigned long long)(through_area ? peers : 0));
    TC_CHECK(st.bytes_to_pwrite == (tc_rank == writer ? size : 0),
             "rank %d pwrote %llu bytes (writer is rank %d)", tc_rank,
             (unsigned long long)st.bytes_to_pwrite, writer);
    TC_CHECK(st.bytes_to_mpi + st.bytes_shared == (tc_rank == writer ? 0 : SHARE),
             "rank %d handed %llu bytes to MPI and %llu to the area (writer is rank %d)",
             tc_rank, (unsigned long long)st.bytes_to_mpi, (unsigned long long)st.bytes_shared,
             writer);
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
}

static void section_thread_costs(void)
{
    tc_phase("runtime stats: the threads' costs");
    fwdio_runtime_stats_t rs;
    memset(&rs, 0xff, sizeof rs);
    TC_EXPECT(fwdio_runtime_stats(g_rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(rs.progress_wakeups > 0, "the progress thread never woke");
    TC_CHECK(rs.progress_cpu_time > 0 && rs.progress_cpu_time < 3600,
             "progress thread CPU %g s", rs.progress_cpu_time);
    TC_CHECK(rs.io_cpu_time >= 0 && rs.io_cpu_time < 3600, "I/O thread CPU %g s",
             rs.io_cpu_time);
    /* the fields taken from the reserved tail are filled in */
    TC_CHECK(rs.node_committed != UINT64_MAX && rs.node_peak != UINT64_MAX &&
                 rs.node_committed <= rs.node_peak,
             "node memory %llu now, %llu at most", (unsigned long long)rs.node_committed,
             (unsigned long long)rs.node_peak);
    TC_EXPECT(fwdio_runtime_stats(NULL, &rs), FWDIO_EINVAL, "fwdio_runtime_stats(NULL)");
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    for (int i = 1; i < argc; i++) {
        if (!tc_common_option(argc, argv, &i, &timeout, &g_mode)) {
            fprintf(stderr, "usage: %s [--callback-mode poll|progress] [--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    g_rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (tc_rank == 0)
        tc_note("node-shared area %s", area_on() ? "on" : "off");
    section_counted(COPIED, 501);
    section_counted(LENT, 502);
    section_counted(LENT_ALLOC, 503);
    section_thread_costs();
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_copies");
}
