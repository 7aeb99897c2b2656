/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams: files opened with FWDIO_SIZE_GROWS that grow step by step
 * (fwdio_step_end), with per-step completion.
 *
 * The file is a run of steps; step k's bytes are [base_k, base_k + len_k),
 * drawn from the seed (some steps are empty), cut into random pieces owned
 * by random ranks, so most steps are empty on some ranks. Each rank writes
 * its pieces with fwdio_write or, at random, fwdio_write_lent, then ends the
 * step without waiting. Every step's callback checks it runs once, in order,
 * with FWDIO_OK, and that the step's bytes are in the file already. Cases:
 *   random       the above, over --steps steps; at the end the file's size
 *                is the end of the last byte written and every byte matches;
 *                fwdio_step_test / fwdio_step_wait agree with the callbacks;
 *   commit       rank 0 sets a header (commit block at offset 0: the number
 *                of steps) in every step; after each step completes the
 *                header counts at least the steps complete and at most those
 *                ended, and every step it counts is whole;
 *   fault        a durable stream on one writer whose 4th fdatasync fails
 *                (FWDIO_FAULT): steps 0-2 complete and stay intact, step 3
 *                and the later ones fail with FWDIO_ESYNC on every rank,
 *                later writes are FWDIO_EFAILED, the file completes with
 *                FWDIO_ESYNC;
 *   append       every rank appends (fwdio_append) 0 to 3 pieces of random
 *                length per step after a header below options.append_start,
 *                whose first half an existing file holds (kept; its bytes
 *                past append_start are cut) and whose second half the ranks
 *                write at explicit offsets; the file is every
 *                step's appends in rank order, each rank's in call order,
 *                checked after every step and at the end, with its size;
 *                appends after the last step end land at the close;
 *   ahead        a staging budget of 64 KiB; rank 0 appends 12 KiB per step
 *                and ends its steps at once, the other ranks 4 KiB each after
 *                a nap, so rank 0 is steps ahead with more than half the
 *                budget appended in ended steps: its appends wait (they are
 *                not refused), one larger than half the budget in one step
 *                is FWDIO_ETOOBIG, and the file is every step's appends in
 *                rank order;
 *   keep         options.keep_contents: an existing file longer than
 *                append_start, which another process extends while the
 *                stream is open, keeps every byte (nothing cut at the open);
 *                the ranks' writes land over it; ranks that disagree on the
 *                option: FWDIO_EINVAL naming "keep_contents";
 *   must_exist   options.must_exist: a missing path's stream fails with
 *                FWDIO_EOPEN and nothing is made there; an existing one
 *                takes the bytes; refused with local_dir; ranks that
 *                disagree: FWDIO_EINVAL naming "must_exist";
 *   offsets      the random case on a stream opened with offsets_only (no
 *                appends' round at a step's end or the close);
 *   offsets_only fwdio_append refused on such a stream, before and after a
 *                step end, its writes land; ranks that disagree on the
 *                option: FWDIO_EINVAL naming "offsets_only";
 *   mismatch     rank 0 ends one step more than the others: FWDIO_EINVAL on
 *                every rank, its extra step's callback reports it;
 *   args         misuse is refused at the call.
 * With --kill DIR the program writes a stream with a header per step into
 * DIR and every rank dies (SIGKILL) at a moment drawn from --seed; with
 * --after-kill DIR it checks what the kill left (tests/mpi/stream/stream_kill.cmake).
 *
 * This file is the driver; streams/ holds the cases, a file per family, and
 * the helpers they share (streams/streams.h says which is where).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "fwdio.h"
#include "streams/streams.h"
#include "test_common.h"

fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    int nsteps = 24, writers = 2;
    uint64_t seed = 1, max_piece = 30000;
    fwdio_layout_t layout = FWDIO_LAYOUT_CYCLIC;
    const char *kill_dir = NULL, *after_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            nsteps = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--writers") && i + 1 < argc)
            writers = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--max-piece") && i + 1 < argc)
            max_piece = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
            const char *l = argv[++i];
            layout = !strcmp(l, "targets") ? FWDIO_LAYOUT_TARGETS
                     : !strcmp(l, "block") ? FWDIO_LAYOUT_BLOCK
                                           : FWDIO_LAYOUT_CYCLIC;
        } else if (!strcmp(argv[i], "--kill") && i + 1 < argc)
            kill_dir = argv[++i];
        else if (!strcmp(argv[i], "--after-kill") && i + 1 < argc)
            after_dir = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--steps N] [--seed S] [--writers W] [--max-piece B] "
                            "[--layout cyclic|targets|block] [--kill DIR | --after-kill DIR]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (after_dir) {
        after_kill(after_dir, seed);
        return tc_finish("test_streams --after-kill");
    }
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (kill_dir)
        killed_run(rt, kill_dir, seed);
    case_args(rt);
    case_random(rt, nsteps, seed, writers, layout, max_piece, 0, 0);
    case_random(rt, nsteps, seed + 1, writers, layout, max_piece, 1, 0);
    case_random(rt, nsteps, seed + 7, writers, layout, max_piece, 0, 1);
    case_append(rt, nsteps, seed + 4, writers, layout);
    case_mismatch(rt, seed + 2);
    case_keep(rt, seed + 6);
    case_offsets_only(rt);
    case_must_exist(rt);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    case_fault(7, seed + 3);
    case_ahead(seed + 5);
    return tc_finish("test_streams");
}
