/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio initialised and finalised many times in one process (--cycles N).
 *
 * Each cycle starts a runtime with a different configuration (callback
 * mode, inline I/O, budgets), on MPI_COMM_WORLD or on a duplicate freed right
 * after fwdio_init, opens two files, writes them (one copied, one with lent
 * buffers), and ends in one of three ways: close + wait + free + finalize;
 * close + free without waiting, then finalize; or finalize with both files
 * still open on this rank. Every file is verified byte for byte afterwards
 * and its callbacks must have run exactly once with FWDIO_OK.
 *
 * The point is what is left after the cycles: run under valgrind (ctest
 * init_cycles_np2_valgrind) or in the ASan build (LeakSanitizer), a runtime
 * or file that fwdio_finalize does not release shows up once per cycle.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

typedef struct cfile {
    char name[48], path[4096];
    uint64_t size, seed;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} cfile_t;

static atomic_int g_lent_back;

static void on_lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    (void)arg;
    if (status != FWDIO_OK)
        tc_fail("lent buffer handed back with %d (%s)", status, fwdio_strerror(status));
    free((void *)buf);
    atomic_fetch_add(&g_lent_back, 1);
}

static void open_file(fwdio_runtime_t *rt, cfile_t *c, int cycle, int which)
{
    snprintf(c->name, sizeof c->name, "cycle%d_%s.dat", cycle, which ? "lent" : "copied");
    tc_path(c->path, sizeof c->path, c->name);
    c->size = (uint64_t)(300 << 10) + (uint64_t)cycle * 4099 + (uint64_t)which * 77;
    c->seed = 9000 + (uint64_t)cycle * 2 + (uint64_t)which;
    tc_cb_init(&c->cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c->cb);
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.write_size = 16 << 10;
    o.stripe_size = 64 << 10;
    o.writers = 1 + (cycle + which) % 3;
    o.layout = (fwdio_layout_t)((cycle + which) % 3);
    tc_phase("cycle %d: open %s", cycle, c->name);
    int rc = fwdio_open(rt, c->path, c->size, &o, &cbs, &c->f);
    if (rc != FWDIO_OK || !c->f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", c->path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* This rank's slice, in pieces: copied, or lent (each piece its own buffer). */
static int write_slice(cfile_t *c, int lent)
{
    uint64_t lo = c->size * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t hi = c->size * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    if (!lent)
        return tc_write_pattern(c->f, lo, hi - lo, c->seed, 20000);
    int pieces = 0;
    for (uint64_t off = lo; off < hi; off += 30000) {
        size_t n = hi - off < 30000 ? (size_t)(hi - off) : 30000;
        uint8_t *buf = malloc(n);
        pattern_fill(buf, n, off, c->seed);
        int rc = fwdio_write_lent(c->f, buf, n, off, on_lent_done, NULL);
        if (rc != FWDIO_OK) {
            free(buf);
            return rc;
        }
        pieces++;
    }
    return pieces;
}

static void cycle(int k)
{
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.callback_mode = (fwdio_callback_mode_t)(k % 2);
    cfg.io_inline = (k / 2) % 2;
    cfg.staging_buffer = (k % 3 == 0) ? (size_t)64 << 10 : 0;
    cfg.writer_buffer = (k % 4 == 1) ? (size_t)256 << 10 : 0;
    tc_phase("cycle %d: fwdio_init", k);
    MPI_Comm comm = MPI_COMM_WORLD;
    if (k % 2)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    fwdio_runtime_t *rt = tc_start_runtime_with(comm, &cfg);
    if (k % 2)
        MPI_Comm_free(&comm); /* fwdio keeps its own duplicate */

    cfile_t c[2];
    open_file(rt, &c[0], k, 0);
    open_file(rt, &c[1], k, 1);
    atomic_store(&g_lent_back, 0);
    tc_phase("cycle %d: write", k);
    TC_EXPECT(write_slice(&c[0], 0), FWDIO_OK, "copied writes");
    int lent = write_slice(&c[1], 1);
    TC_CHECK(lent >= 0, "lent write returned %d (%s)", lent, fwdio_strerror(lent));

    int ending = k % 3;
    if (ending == 0) { /* close, wait, free, finalize */
        for (int i = 0; i < 2; i++) {
            TC_EXPECT(fwdio_close(c[i].f), FWDIO_OK, "fwdio_close");
            TC_EXPECT(fwdio_wait(c[i].f), FWDIO_OK, c[i].name);
        }
        for (int i = 0; i < 2; i++) {
            tc_cb_check(MPI_COMM_WORLD, &c[i].cb, c[i].name, FWDIO_OK, FWDIO_OK,
                        cfg.callback_mode, c[i].f);
            fwdio_file_free(c[i].f);
        }
    } else if (ending == 1) { /* close and free in flight: finalize drains */
        TC_EXPECT(fwdio_close(c[0].f), FWDIO_OK, "fwdio_close");
        fwdio_file_free(c[0].f);
        fwdio_file_free(c[1].f);
    } /* else: both still open on this rank; finalize closes and drains them */
    tc_phase("cycle %d: fwdio_finalize", k);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");

    TC_CHECK(atomic_load(&g_lent_back) == (lent > 0 ? lent : 0),
             "cycle %d: %d of %d lent buffers handed back by finalize", k,
             atomic_load(&g_lent_back), lent);
    for (int i = 0; i < 2; i++) {
        if (ending != 0)
            tc_cb_check(MPI_COMM_WORLD, &c[i].cb, c[i].name, FWDIO_OK, FWDIO_OK,
                        cfg.callback_mode, NULL);
        tc_phase("cycle %d: verify %s", k, c[i].name);
        tc_verify_full(MPI_COMM_WORLD, c[i].path, c[i].size, c[i].seed);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0)
        for (int i = 0; i < 2; i++)
            unlink(c[i].path);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    fwdio_callback_mode_t per_cycle = FWDIO_CALLBACKS_ON_POLL; /* --callback-mode: ignored */
    int cycles = 8;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
            cycles = (int)tc_parse_long(argv[++i]);
        else if (tc_common_option(argc, argv, &i, &timeout, &per_cycle))
            continue;
        else {
            fprintf(stderr, "usage: %s [--cycles N] [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    for (int k = 0; k < cycles; k++)
        cycle(k);
    if (tc_rank == 0)
        tc_note("%d init/finalize cycles", cycles);
    return tc_finish("test_init_cycles");
}
