/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collective contract: what ranks that disagree, calls that cannot work
 * and MPI failures end in. Every case checks the status on every rank, the
 * error text, and the bytes on disk. `--case NAME` picks one:
 *
 *   mismatch_size     one rank opens with another size: FWDIO_EINVAL on every
 *                     rank naming "size"; the old file is untouched
 *   mismatch_order    rank 0 opens A then B, the others B then A: both fail
 *                     naming the path; both old files untouched
 *   mismatch_writers  one rank asks for another writer count
 *   mismatch_atomic   one rank asks for atomic_replace
 *   callback_open     a file opened from a poll-mode ready callback, at a
 *                     rank-local time: opens out of order fail, never cross
 *   versions          v1 of a path opened while v0 is in flight (no atomic
 *                     replace): both OK, the file holds exactly v1
 *   versions_atomic   the same with atomic replace and commit blocks: after
 *                     v0 completes the target is v0 whole, then v1 whole; no
 *                     temporary left
 *   path_open         v1 opened while v0 is not closed yet: v1 fails with
 *                     FWDIO_EINVAL on every rank, v0 completes whole
 *   refused_code      fwdio_open refused at the call on one rank (options
 *                     set in code there, a size no file can have), on every
 *                     rank, on one rank twice in a row: the refusing rank gets
 *                     the error at the call, the others' file fails with it
 *                     naming that rank, old files untouched; the files opened
 *                     after them are written whole; finalize returns
 *   refused_env       the same with a bad FWDIO_LAYOUT on one rank only
 *   huge              sizes and offsets past what a file can hold: ERANGE
 *   intercomm         fwdio_init on an intercommunicator: EINVAL
 *   after_finalize    fwdio_init after MPI_Finalize: EINVAL, no crash
 *   kill_versions     with --dir DIR and --kill: an old file at DIR/ckpt, then
 *                     v0 replaces it atomically and v1 is opened while v0 is
 *                     in flight; every rank dies before closing v1. With
 *                     --after-kill: DIR/ckpt is the old file or v0, whole,
 *                     never v1 or zeros; v2 then replaces it and verifies,
 *                     and DIR holds nothing else
 *   kill_shared       with --dir DIR and --kill: an old file at DIR/ckpt, then
 *                     a replacement whose writers are slow (every pwrite
 *                     0.2 s), so that the other ranks' messages sit in the
 *                     node-shared area; every rank dies before closing. With
 *                     --after-kill: DIR/ckpt is the old file, whole; /dev/shm
 *                     holds nothing of the killed job; a new replacement
 *                     completes and verifies, and DIR holds nothing else
 *   mpi_fault         with MPI_FAULTS_RULE set (tests/util/mpi_faults.h):
 *                     a first file ends with --expect1 (a status name, e.g.
 *                     EMPI) on every rank, its text naming --text; a second
 *                     file then ends with --expect2; finalize returns
 *   read_mpi_fault    the same for a file opened for reading: every read
 *                     ends (each OK one with the right bytes), the file ends
 *                     with --expect1 on every rank naming --text, a second
 *                     read file then reads right with --expect2
 *
 * This file is the driver; contract/ holds the cases, a file per family, and
 * the helpers they share (contract/contract.h says which is where).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "fwdio.h"
#include "test_common.h"

fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static int status_named(const char *name)
{
    for (int s = 0; s >= -64; s--) {
        char buf[64];
        snprintf(buf, sizeof buf, "%d", s);
        if (!strcmp(name, buf))
            return s;
    }
    if (!strcmp(name, "OK"))
        return FWDIO_OK;
    if (!strcmp(name, "EMPI"))
        return FWDIO_EMPI;
    if (!strcmp(name, "EINVAL"))
        return FWDIO_EINVAL;
    fprintf(stderr, "unknown status %s\n", name);
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    const char *which = NULL, *text = "MPI", *dir = NULL;
    int after_kill = 0;
    int expect1 = FWDIO_EMPI, expect2 = FWDIO_OK, fail_from = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            which = argv[++i];
        else if (!strcmp(argv[i], "--expect1") && i + 1 < argc)
            expect1 = status_named(argv[++i]);
        else if (!strcmp(argv[i], "--expect2") && i + 1 < argc)
            expect2 = status_named(argv[++i]);
        else if (!strcmp(argv[i], "--text") && i + 1 < argc)
            text = argv[++i];
        else if (!strcmp(argv[i], "--fail-from") && i + 1 < argc)
            fail_from = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--kill"))
            after_kill = 0;
        else if (!strcmp(argv[i], "--after-kill"))
            after_kill = 1;
        else {
            fprintf(stderr, "usage: %s --case NAME [--expect1 S --expect2 S --text T]\n", argv[0]);
            return 2;
        }
    }
    if (!which) {
        fprintf(stderr, "%s: --case is required\n", argv[0]);
        return 2;
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (!strcmp(which, "mismatch_size"))
        mismatch_case("mismatch_size", other_size, "size");
    else if (!strcmp(which, "mismatch_writers"))
        mismatch_case("mismatch_writers", other_writers, "writers");
    else if (!strcmp(which, "mismatch_atomic"))
        mismatch_case("mismatch_atomic", other_atomic, "atomic_replace");
    else if (!strcmp(which, "mismatch_order"))
        case_mismatch_order();
    else if (!strcmp(which, "callback_open"))
        case_callback_open();
    else if (!strcmp(which, "versions"))
        case_versions(0);
    else if (!strcmp(which, "versions_atomic"))
        case_versions(1);
    else if (!strcmp(which, "path_open"))
        case_path_open();
    else if (!strcmp(which, "refused_code"))
        case_refused_code();
    else if (!strcmp(which, "refused_env"))
        case_refused_env();
    else if (!strcmp(which, "huge"))
        case_huge();
    else if (!strcmp(which, "intercomm"))
        case_intercomm();
    else if (!strcmp(which, "kill_versions") && dir)
        kill_versions(dir, after_kill);
    else if (!strcmp(which, "kill_shared") && dir)
        kill_shared(dir, after_kill);
    else if (!strcmp(which, "mpi_fault"))
        case_mpi_fault(expect1, expect2, text);
    else if (!strcmp(which, "stream_mpi_fault"))
        case_stream_mpi_fault(fail_from, text);
    else if (!strcmp(which, "read_mpi_fault"))
        case_read_mpi_fault(expect1, expect2, text);
    else if (!strcmp(which, "after_finalize")) {
        int rc = tc_finish("test_contract after_finalize (before)");
        fwdio_runtime_t *rt = NULL;
        int got = fwdio_init(MPI_COMM_WORLD, NULL, &rt);
        if (got != FWDIO_EINVAL) {
            fprintf(stderr, "FAIL: fwdio_init after MPI_Finalize returned %d (%s)\n", got,
                    fwdio_strerror(got));
            return 1;
        }
        printf("PASS: fwdio_init after MPI_Finalize: %s\n", fwdio_strerror(got));
        return rc;
    } else {
        fprintf(stderr, "%s: unknown case %s\n", argv[0], which);
        return 2;
    }
    char name[128];
    snprintf(name, sizeof name, "test_contract %s", which);
    return tc_finish(name);
}
