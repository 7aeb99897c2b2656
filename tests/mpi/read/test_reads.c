/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective, nonblocking reads: fwdio_open_read, fwdio_read, fwdio_file_size.
 *
 * Every read lands in a buffer the test filled with the complement of the
 * bytes it expects, between guard bytes, so a byte fwdio never delivered
 * cannot pass; after the file completes, every byte of every buffer is
 * compared with the file's model: pattern_byte(seed, offset) in the written
 * extents, zeros in the holes. A wrong byte is reported with the read, the
 * offset, what came, what was expected and what the file on disk holds there.
 * `--case NAME` picks one:
 *
 *   random       --rounds rounds, each: (a) a file written by fwdio (random
 *                writer count or writer list, layout block/cyclic/targets,
 *                4..64 KiB write units, stripes of 1..4 units, holes) and
 *                (b) a file written by plain pwrite on rank 0 (holes, a hole
 *                at the end made by ftruncate, a size that is no multiple of
 *                the unit); each is read with options drawn independently of
 *                the write's (the writers become readers): every rank issues
 *                --reads random reads (0 bytes with and without a buffer, tiny
 *                unaligned ones, ones across many stripes, ones ending exactly
 *                at the end of the file, the whole file, ones overlapping this
 *                rank's and other ranks' reads, reads without a callback),
 *                some right after fwdio_open_read, some from the ready
 *                callback, some from a second application thread, some from
 *                the done callback of an earlier read, the rest after ready.
 *                fwdio_wait is FWDIO_OK on every rank; every done ran once,
 *                on the thread the callback mode says, before complete, with
 *                its file, buffer and argument; fwdio_file_size is the size on
 *                disk; the stats count the reads, and the readers pread at
 *                least every byte some rank asked for. The seed is printed.
 *   ranks        a file written by a runtime on a sub-communicator (fewer
 *                ranks) is read by a runtime on every rank, and a file
 *                written on every rank is read by a runtime on a
 *                sub-communicator (the odd ranks).
 *   after_write  fwdio_open (write) over an old file of another size and
 *                content, writes with holes, fwdio_close without waiting, and
 *                at once fwdio_open_read of the same path: the reads see the
 *                new bytes (zeros in the holes) and size, and the read is
 *                ready only after the write completed. Then the other way
 *                round: a write of the path opened as soon as its read is
 *                closed leaves the read the bytes from before the write.
 *   multi        three files read at once (one of them a second time, opened
 *                once the first read of it is closed) beside a write of a
 *                fourth; opened, closed and waited for in different orders.
 *   still_open   fwdio_open_read of a path whose write is not closed on this
 *                rank: the read fails with FWDIO_EINVAL on every rank (as a
 *                second fwdio_open would, "One path, one file at a time"),
 *                the write completes whole.
 *   range        reads past the end: refused with FWDIO_ERANGE after ready
 *                (done not called), ended with FWDIO_ERANGE in done when
 *                issued before (the file stays FWDIO_OK); offsets and lengths
 *                whose sum overflows; an empty file.
 *   open_fail    a missing file and a directory: FWDIO_EOPEN on every rank
 *                (ready, wait, complete, the done of reads issued before
 *                ready, fwdio_file_size), errno ENOENT / EISDIR, the text
 *                naming the path; FWDIO_EFAILED for reads after ready; the
 *                runtime's next file reads fine.
 *   fault        with FWDIO_FAULT set (by ctest): --expect STATUS [--errno N]
 *                [--fault-rank R]. Readers are ranks 0 and P-1. The file ends
 *                with STATUS on every rank; for an error, fwdio_file_error
 *                names pread, the path, the rank and the errno, the error info
 *                is the same everywhere, some read of the failed unit ended
 *                with FWDIO_EREAD, every other read ended FWDIO_OK (right
 *                bytes) or FWDIO_EREAD; the next file reads fine.
 *   contract     ranks that disagree (one rank's stripe_size, one rank's
 *                writer count), and one rank opening the path with fwdio_open
 *                while the others read it: FWDIO_EINVAL on every rank, early
 *                reads end with it, later ones are FWDIO_EFAILED, the file on
 *                disk untouched; the runtime's next file reads fine.
 *   misuse       calls that cannot work are refused at the call (NULL
 *                arguments, fwdio_read on a file opened for writing or a
 *                stream, fwdio_write on a read file, fwdio_read after
 *                fwdio_close, fwdio_file_size before ready or on a stream,
 *                fwdio_wait from a read's callback), and done is then not
 *                called; a read from a read's callback works.
 *   budgets      a writer_buffer of 4 write units (--writer-buffer B to change
 *                it; random takes it too): large overlapping reads of
 *                every rank complete right, and no reader holds more than the
 *                budget and one unit (fwdio_runtime_stats.writer_peak); with
 *                the default budget, every rank reading the whole file at
 *                once makes the readers pread it between once and twice.
 *
 * Common options: --seed S, --timeout SEC, --callback-mode poll|progress.
 *
 * This file is the driver; reads/ holds the cases, a file per family, and
 * the reading engine they share (reads/reads.h says which is where).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwdio.h"
#include "reads/reads.h"
#include "test_common.h"

fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static int status_named(const char *s)
{
#define X_NAMED(name, value, text)                                                         \
    if (!strcmp(s, #name) || !strcmp(s, #name + 6))                                       \
        return value;
    FWDIO_STATUS_LIST(X_NAMED)
#undef X_NAMED
    fprintf(stderr, "unknown status name '%s'\n", s);
    exit(2);
}

/* ---- main ------------------------------------------------------------------ */

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --case random|ranks|after_write|multi|still_open|range|open_fail|fault|"
            "contract|misuse|budgets\n"
            "       [--seed S] [--rounds N] [--reads N] [--max-bytes B] [--writer-buffer B]\n"
            "       [--expect STATUS] [--errno N] [--fault-rank R]\n"
            "       [--timeout SEC] [--callback-mode poll|progress]\n",
            prog);
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    const char *which = NULL;
    uint64_t seed = 1;
    int rounds = 3, nreads = 80, expect = FWDIO_OK, err = 0, fault_rank = -1;
    size_t max_bytes = 8u << 20;
    uint64_t writer_buffer = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--reads") && i + 1 < argc)
            nreads = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc)
            max_bytes = (size_t)tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--writer-buffer") && i + 1 < argc)
            writer_buffer = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect = status_named(argv[++i]);
        else if (!strcmp(argv[i], "--errno") && i + 1 < argc)
            err = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--fault-rank") && i + 1 < argc)
            fault_rank = (int)tc_parse_long(argv[++i]);
        else
            usage(argv[0]);
    }
    if (!which)
        usage(argv[0]);
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir(); /* collective: before any sub-communicator */
    if (!strcmp(which, "random"))
        case_random(seed, rounds, nreads, max_bytes, writer_buffer);
    else if (!strcmp(which, "ranks"))
        case_ranks(seed, nreads);
    else if (!strcmp(which, "after_write"))
        case_after_write(seed, nreads);
    else if (!strcmp(which, "multi"))
        case_multi(seed, nreads);
    else if (!strcmp(which, "still_open"))
        case_still_open(seed);
    else if (!strcmp(which, "range"))
        case_range(seed);
    else if (!strcmp(which, "open_fail"))
        case_open_fail(seed);
    else if (!strcmp(which, "fault"))
        case_fault(seed, expect, err, fault_rank);
    else if (!strcmp(which, "contract"))
        case_contract(seed);
    else if (!strcmp(which, "misuse"))
        case_misuse(seed);
    else if (!strcmp(which, "budgets"))
        case_budgets(seed, writer_buffer);
    else
        usage(argv[0]);
    char name[128];
    snprintf(name, sizeof name, "test_reads --case %s --seed %" PRIu64 "%s", which, seed,
             g_mode == FWDIO_CALLBACKS_ON_PROGRESS ? " (progress)" : "");
    return tc_finish(name);
}
