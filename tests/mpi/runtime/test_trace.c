/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timelines (FWDIO_TRACE): one small file written by every rank through two
 * writers, durable, verified byte for byte. tests/mpi/runtime/trace_check.py runs this
 * program with FWDIO_TRACE set and unset and checks the trace files it leaves
 * (or does not leave) behind; this program only makes sure the traced run does
 * real work: writes, sends to the other writer, receives, pwrite, fdatasync.
 *
 * Options: --timeout S (watchdog).
 */
#include "test_common.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned timeout = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = (unsigned)tc_parse_long(argv[++i]);
    }
    tc_mpi_init(&argc, &argv, timeout);
    tc_phase("init");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);

    /* 64 KiB stripes dealt cyclically to 2 writers: every rank's block reaches
     * both writers, so every rank sends and both writers receive. */
    const uint64_t per_rank = 256 << 10, seed = 5;
    const uint64_t size = per_rank * (uint64_t)tc_size;
    char path[4096];
    tc_path(path, sizeof path, "traced.dat");
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = tc_size > 1 ? 2 : 1;
    opts.stripe_size = 64 << 10;
    opts.write_size = 16 << 10;
    opts.layout = FWDIO_LAYOUT_CYCLIC;
    opts.durable = 1;
    tc_phase("write");
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, size, &opts, NULL, &f), FWDIO_OK, "fwdio_open");
    if (f) {
        TC_EXPECT(tc_write_pattern(f, per_rank * (uint64_t)tc_rank, per_rank, seed, 40000),
                  FWDIO_OK, "tc_write_pattern");
        TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
        TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
        fwdio_file_free(f);
    }
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    tc_phase("verify");
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
    return tc_finish("test_trace");
}
