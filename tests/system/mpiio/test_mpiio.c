/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio: the MPI-IO layer (libfwdio-mpiio, mpiio/) seen from an
 * ordinary MPI-IO program.
 *
 * Each scenario (--case NAME, or --all for every ordinary one in sequence)
 * creates its own files under --dir, makes MPI-IO calls on them, closes them
 * and then checks every byte of the result with plain POSIX reads on rank 0
 * against a model that every rank builds of what every rank wrote (the bytes
 * are pattern_byte(seed, offset) of apps/common/pattern.h, a different seed
 * for each generation of writes; holes are zeros), and the file's size.
 *
 * The program is built twice (tests/system/mpiio/CMakeLists.txt): linked
 * with the layer (MPIIO_TEST_LAYER=1), where it also asserts with
 * MPI_File_get_info that the files the layer should take were taken
 * ("fwdio_mpiio" = "taken"), handed back ("released: ...") or left alone (no
 * key); and without it (MPIIO_TEST_LAYER=0), where only the bytes are
 * checked. --layer yes|no overrides the built-in choice (for the plain
 * program run with the layer preloaded). Files meant for the layer end in
 * ".mpiio" or ".fwd" (the tests set FWDIO_MPIIO=*.mpiio,*.fwd); the others in
 * ".plain".
 *
 * Failures are printed with the case, rank, offset and expected and actual
 * byte; the exit status is non-zero if any rank failed.
 *
 * This file is the driver (options, the table of cases, the checks after
 * MPI_Finalize); the cases are in cases/, a file per family of what they
 * exercise, with the helpers they share (cases/test_mpiio.h says which).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cases/test_mpiio.h"

#if MPIIO_TEST_LAYER
#include <dlfcn.h>
#include <stdatomic.h>

/* The MPI_Op_create calls made from fwdio's libraries (the layer and the
 * library under it): none is expected. Their reductions use MPI's predefined
 * operations only, because Open MPI 4.1 retains a user-defined operation of
 * a nonblocking collective after starting it, and when another thread's MPI
 * progress completes the collective in between (here: the application
 * thread in MPI while fwdio's progress thread starts an agreement) the
 * operation is never released and outlives MPI_Op_free, which LeakSanitizer
 * reported now and then as a leak from MPI_Op_create. This definition in the
 * program comes before libmpi's. */
static atomic_int fwdio_ops_created;

__attribute__((visibility("default"))) int MPI_Op_create(MPI_User_function *fn, int commute,
                                                         MPI_Op *op)
{
    Dl_info where;
    if (dladdr(__builtin_return_address(0), &where) && where.dli_fname &&
        strstr(where.dli_fname, "libfwdio"))
        atomic_fetch_add(&fwdio_ops_created, 1);
    return PMPI_Op_create(fn, commute, op);
}
#endif

/* ------------------------------------------------------------------------- */
/* Driver                                                                     */
/* ------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*fn)(void);
    int in_all; /* run by --all */
} case_t;

static const case_t cases[] = {
    {"contig", case_contig, 1},
    {"independent", case_independent, 1},
    {"pointers", case_pointers, 1},
    {"view_subarray", case_view_subarray, 1},
    {"view_vector", case_view_vector, 1},
    {"view_hindexed", case_view_hindexed, 1},
    {"view_struct", case_view_struct, 1},
    {"view_sequence", case_view_sequence, 1},
    /* not in --all: each rank flattens 2^22 runs (and so does ompio) */
    {"view_many_runs", case_view_many_runs, 0},
    {"nonblocking", case_nonblocking, 1},
    {"sizes", case_sizes, 1},
    {"reopen", case_reopen, 1},
    {"shared", case_shared, 1},
    {"atomic", case_atomic, 1},
    {"darray", case_darray, 1},
    {"not_taken", case_not_taken, 1},
    {"refused_on_one", case_refused_on_one, 1},
    {"own_read", case_own_read, 1},
    {"own_read_many", case_own_read_many, 1},
    {"read_all_steps", case_read_all_steps, 1},
    {"read_in_flight", case_read_in_flight, 1},
    {"others_unsynced", case_others_unsynced, 1},
    {"others_unsynced_alias", case_others_unsynced_alias, 1},
    {"comm_self", case_comm_self, 1},
    {"split", case_split, 1},
    {"two_files", case_two_files, 1},
    {"renamed", case_renamed, 1},
    {"read_other_handle", case_read_other_handle, 1},
    {"many_open", case_many_open, 0},
    {"many_closed", case_many_closed, 1},
    {"dormant_wake", case_dormant_wake, 1},
    {"kept_comms", case_kept_comms, 1},
    {"async_close", case_async_close, 1},
    {"intercomm", case_intercomm, 1},
    {"memtype_order", case_memtype_order, 1},
    {"info_reuse", case_info_reuse, 1},
    {"overlaps", case_overlaps, 1},
    {"two_handles", case_two_handles, 1},
    {"finalize_close", case_finalize_close, 1},
    {"large_memtype", case_large_memtype, 0},
    {"large_count", case_large_count, 1},
    {"tier", case_tier, 1},
    {"tier_fault", case_tier_fault, 0},
    {"long_path", case_long_path, 1},
    {"fault_eio", case_fault_eio, 0},
    {"fault_nospc", case_fault_nospc, 0},
    {"own_failures", case_own_failures, 0},
    {"own_read_limit", case_own_read_limit, 0},
    {"async_close_fault", case_async_close_fault, 0},
    {"agree_fault", case_agree_fault, 0},
    {"late_refusal", case_late_refusal, 1},
    {"late_refusal_fault", case_late_refusal_fault, 0},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static void usage(void)
{
    fprintf(stderr,
            "usage: test_mpiio (--case NAME ... | --all) [--dir DIR] [--seed N] [--timeout S]\n"
            "                  [--layer yes|no] [--init plain|thread-single|thread-multiple]\n"
            "                  [--keep]\ncases:");
    for (int i = 0; i < NCASES; i++)
        fprintf(stderr, " %s%s", cases[i].name, cases[i].in_all ? "" : "(not in --all)");
    fprintf(stderr, "\n");
}

/* Every rank removes the files it opened in a case that passed. */
static void remove_case_files(void)
{
    if (!g_keep_files)
        for (int i = 0; i < g_ntrack; i++)
            unlink(g_track[i]);
    g_ntrack = 0;
}

int main(int argc, char **argv)
{
    const char *selected[NCASES + 1];
    int nsel = 0, all = 0;
    unsigned timeout = 0;
    const char *init = "plain";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--keep") == 0) {
            g_keep_files = 1;
        } else if (v && strcmp(a, "--case") == 0) {
            if (nsel < NCASES)
                selected[nsel++] = v;
            i++;
        } else if (v && strcmp(a, "--dir") == 0) {
            snprintf(g_dir, sizeof g_dir, "%s", v);
            i++;
        } else if (v && strcmp(a, "--seed") == 0) {
            g_seed = strtoull(v, NULL, 10);
            i++;
        } else if (v && strcmp(a, "--timeout") == 0) {
            timeout = (unsigned)strtoul(v, NULL, 10);
            i++;
        } else if (v && strcmp(a, "--layer") == 0) {
            g_layer = strcmp(v, "yes") == 0;
            i++;
        } else if (v && strcmp(a, "--init") == 0) {
            init = v;
            i++;
        } else {
            usage();
            return 2;
        }
    }
    if (!all && nsel == 0) {
        usage();
        return 2;
    }
    for (int s = 0; s < nsel; s++) {
        int found = 0;
        for (int i = 0; i < NCASES; i++)
            found |= strcmp(cases[i].name, selected[s]) == 0;
        if (!found) {
            fprintf(stderr, "test_mpiio: unknown case %s\n", selected[s]);
            usage();
            return 2;
        }
    }
    {
        /* in the node-local tier a closed file is at its path once drained,
         * which its next open waits for, as after an asynchronous close */
        const char *c = getenv("FWDIO_MPIIO_CLOSE"), *l = getenv("FWDIO_LOCAL_DIR");
        g_async_close = (c && strcmp(c, "async") == 0) || (l && *l);
    }
    if (timeout) {
        signal(SIGALRM, on_alarm);
        alarm(timeout);
    }

    int provided = -1;
    if (strcmp(init, "thread-single") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    else if (strcmp(init, "thread-multiple") == 0)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    /* the same on every rank, also where the ranks' environments differ
     * (FWDIO_LOCAL_DIR on some ranks only): check_file's open is collective */
    MPI_Allreduce(MPI_IN_PLACE, &g_async_close, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_code_text = mpi_keeps_code_text();
    if (!g_code_text && g_rank == 0)
        note("this MPI's MPI_Error_string ignores MPI_Add_error_string on codes of "
             "predefined classes: the classes of errors are checked, not their text");
    if (g_layer) {
        /* the layer asks MPI for MPI_THREAD_MULTIPLE when FWDIO_MPIIO is set */
        int level = -1;
        MPI_Query_thread(&level);
        CHECK(level == MPI_THREAD_MULTIPLE,
              "MPI_Query_thread after MPI_Init%s with the layer: %d, expected "
              "MPI_THREAD_MULTIPLE (%d)",
              strcmp(init, "plain") == 0 ? "" : "_thread", level, MPI_THREAD_MULTIPLE);
    }
    if (g_rank == 0) {
        if (mkdir(g_dir, 0755) != 0 && errno != EEXIST)
            fail("cannot create --dir %s: %s", g_dir, strerror(errno));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int case_failed = 0, ran = 0;
    for (int i = 0; i < NCASES; i++) {
        int run = all && cases[i].in_all;
        for (int s = 0; s < nsel; s++)
            run |= strcmp(cases[i].name, selected[s]) == 0;
        if (!run)
            continue;
        g_case = cases[i].name;
        g_case_failures = 0;
        if (g_rank == 0) {
            printf("test_mpiio: case %s on %d rank%s (%s)\n", g_case, g_size,
                   g_size > 1 ? "s" : "", g_layer ? "layer asserted" : "bytes only");
            fflush(stdout);
        }
        cases[i].fn();
        int mine = g_case_failures, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        ran++;
        if (sum) {
            case_failed++;
            if (g_rank == 0)
                printf("test_mpiio: case %s FAILED (%d failures over all ranks; files kept in %s)\n",
                       g_case, sum, g_dir);
        } else {
            remove_case_files();
            if (g_rank == 0)
                printf("test_mpiio: case %s passed\n", g_case);
        }
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    g_case = "finalize";
    int mine = g_failures, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int finalize_rc = MPI_Finalize();
    int before_checks = g_failures;
    /* a failed asynchronous close left to MPI_Finalize is its error */
    if (g_expect_finalize_error) {
        g_case = "async_close_fault (MPI_Finalize)";
        CHECK(finalize_rc != MPI_SUCCESS,
              "MPI_Finalize returned success after an asynchronous close that failed");
    }

    /* after MPI_Finalize: a file closed asynchronously is complete */
    if (g_check_after_finalize && g_rank == 0) {
        g_case = "async_close (after MPI_Finalize)";
        char p[4200];
        path_of(p, sizeof p, AFTER_FINALIZE_NAME);
        check_path_local(p, &g_after_finalize);
        CHECK(!file_exists(DELETED_NAME), "%s came back after MPI_Finalize", DELETED_NAME);
    }
    /* after MPI_Finalize: the file closed inside it is complete */
    if (g_check_self_closed && g_rank == 0) {
        g_case = "finalize_close (after MPI_Finalize)";
        char p[4200];
        path_of(p, sizeof p, SELF_CLOSED_NAME);
        check_path_local(p, &g_self_closed);
    }
    /* the files left to MPI_Finalize, once it has reported on them */
    if (g_rank == 0 && !g_failures && !g_keep_files)
        for (int i = 0; i < g_nleft; i++)
            unlink(g_left[i]);
#if MPIIO_TEST_LAYER
    g_case = "MPI_Op_create (after MPI_Finalize)";
    CHECK(atomic_load(&fwdio_ops_created) == 0,
          "fwdio made %d MPI_Op(s) with MPI_Op_create: its reductions must use MPI's "
          "predefined operations (see MPI_Op_create in this file)",
          atomic_load(&fwdio_ops_created));
#endif
    total += g_failures - before_checks;
    model_free(&g_after_finalize);
    model_free(&g_self_closed);
    if (g_rank == 0)
        printf("test_mpiio: %d case%s run, %d failed; %s\n", ran, ran == 1 ? "" : "s",
               case_failed, total ? "FAILED" : "all passed");
    return total ? 1 : 0;
}
