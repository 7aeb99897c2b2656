/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_contract cases: versions of one path (versions, versions_atomic,
 * path_open) and jobs killed while replacing one (kill_versions,
 * kill_shared).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

#include "contract.h"
#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

/* ---- versions of one path ---- */

void case_versions(int atomic)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096], tmp[4096];
    tc_path(path, sizeof path, "ckpt");
    tc_path(tmp, sizeof tmp, ".ckpt.fwdio-tmp");
    const uint64_t size0 = SIZE + 3 * STRIPE, size1 = SIZE;
    const uint64_t block = 64;
    if (atomic)
        old_file(path, 2 * STRIPE, 90);
    fwdio_options_t o;
    options(&o);
    o.atomic_replace = atomic;
    fwdio_file_t *v0, *v1;
    tc_phase("v0");
    TC_EXPECT(fwdio_open(rt, path, size0, &o, NULL, &v0), FWDIO_OK, "open v0");
    write_share(v0, size0 - block, 10);
    if (tc_rank == tc_size - 1) { /* the commit block: the pattern's last bytes */
        uint8_t b[64];
        pattern_fill(b, block, size0 - block, 10);
        TC_EXPECT(fwdio_set_commit(v0, b, block, size0 - block), FWDIO_OK, "commit v0");
    }
    TC_EXPECT(fwdio_close(v0), FWDIO_OK, "close v0");
    /* v1 opens at once, while v0 is in flight */
    TC_EXPECT(fwdio_open(rt, path, size1, &o, NULL, &v1), FWDIO_OK, "open v1");
    if (!atomic) {
        write_share(v1, size1, 11);
        fwdio_close(v1);
    }
    tc_phase("wait v0");
    TC_EXPECT(fwdio_wait(v0), FWDIO_OK, "v0");
    if (atomic) { /* v1 cannot be renamed into place before it is closed */
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, size0, 10) == 0,
                 "after v0 completed, the target is not v0 whole");
        MPI_Barrier(MPI_COMM_WORLD);
        write_share(v1, size1 - block, 11);
        if (tc_rank == 0) {
            uint8_t b[64];
            pattern_fill(b, block, size1 - block, 11);
            TC_EXPECT(fwdio_set_commit(v1, b, block, size1 - block), FWDIO_OK, "commit v1");
        }
        fwdio_close(v1);
    }
    tc_phase("wait v1");
    TC_EXPECT(fwdio_wait(v1), FWDIO_OK, "v1");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, size1, 11) == 0, "the file is not v1 whole");
    TC_CHECK(!exists(tmp), "a temporary is left");
    fwdio_file_free(v0);
    fwdio_file_free(v1);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

void case_path_open(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096], same[4096];
    tc_path(path, sizeof path, "busy");
    /* the same file by another name */
    snprintf(same, sizeof same, "%s/./busy", tc_tmpdir());
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *v0, *v1;
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &v0), FWDIO_OK, "open v0");
    write_share(v0, SIZE, 12);
    TC_EXPECT(fwdio_open(rt, same, SIZE / 2, &o, NULL, &v1), FWDIO_OK, "open v1");
    g_writes_may_fail = 1;
    write_share(v1, SIZE / 2, 13);
    g_writes_may_fail = 0;
    fwdio_close(v1);
    tc_phase("wait v1");
    expect_status(v1, fwdio_wait(v1), FWDIO_EINVAL, "still open", "v1");
    fwdio_close(v0);
    tc_phase("wait v0");
    TC_EXPECT(fwdio_wait(v0), FWDIO_OK, "v0");
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 12) == 0, "v0 is not whole");
    fwdio_file_free(v0);
    fwdio_file_free(v1);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- a job killed between two versions ---- */

static const uint64_t OLD_SIZE = 2 * STRIPE + 5;

/* Rank 0: dir holds nothing but ckpt (no temporary left behind). */
static void check_only_ckpt(const char *dir)
{
    if (tc_rank != 0)
        return;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = ckpt", dir);
    TC_CHECK(system(cmd) == 0, "%s holds more than ckpt after the replacement", dir);
}

void kill_versions(const char *dir, int after)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    fwdio_options_t o;
    options(&o);
    o.atomic_replace = 1;
    fwdio_file_t *v0, *v1;
    if (!after) {
        old_file(path, OLD_SIZE, 90);
        TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &v0), FWDIO_OK, "open v0");
        write_share(v0, SIZE, 10);
        fwdio_close(v0);
        TC_EXPECT(fwdio_open(rt, path, SIZE + STRIPE, &o, NULL, &v1), FWDIO_OK, "open v1");
        write_share(v1, SIZE + STRIPE, 11);
        fwdio_poll(rt);
        /* die at a moment that differs from run to run: v0 may be anywhere
         * from in flight to renamed into place */
        usleep((useconds_t)(getpid() % 20) * 1000);
        _exit(3);
    }
    uint64_t bad = 0;
    int is_old = pattern_check_file(path, OLD_SIZE, 0, OLD_SIZE, 90, 0, &bad) == 0;
    int is_v0 = !is_old && pattern_check_file(path, SIZE, 0, SIZE, 10, 0, &bad) == 0;
    TC_CHECK(is_old || is_v0, "after the kill %s is neither the old file nor v0 whole", path);
    if (tc_rank == 0)
        tc_note("after the kill the target holds %s", is_old ? "the old file" : "v0");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &v0), FWDIO_OK, "open v2");
    write_share(v0, SIZE, 12);
    fwdio_close(v0);
    TC_EXPECT(fwdio_wait(v0), FWDIO_OK, "v2");
    fwdio_file_free(v0);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, 12) == 0, "v2");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    check_only_ckpt(dir);
}

void kill_shared(const char *dir, int after)
{
    char path[4096], pidfile[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    snprintf(pidfile, sizeof pidfile, "%s/killed.pid", dir);
    if (!after)
        setenv("FWDIO_FAULT", "pwrite:slow=200", 1); /* read by fwdio_init */
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    fwdio_options_t o;
    options(&o);
    o.atomic_replace = 1;
    const uint64_t size = (uint64_t)8 << 20;
    fwdio_file_t *f;
    if (!after) {
        old_file(path, OLD_SIZE, 91);
        if (tc_rank == 0) { /* the area's names start with local rank 0's pid */
            FILE *p = fopen(pidfile, "w");
            if (p) {
                fprintf(p, "%ld\n", (long)getpid());
                fclose(p);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "open");
        write_share(f, size, 15);
        fwdio_poll(rt);
        usleep(50000); /* the messages are with the slow writers now */
        fwdio_runtime_stats_t rs;
        fwdio_runtime_stats(rt, &rs);
        if (tc_size > 1 && (rs.shared_budget == 0 || rs.shared_peak == 0)) {
            /* the run after the kill reports it: this one's output is not kept */
            char note[4200];
            snprintf(note, sizeof note, "%s/no_shared.%d", dir, tc_rank);
            FILE *n = fopen(note, "w");
            if (n)
                fclose(n);
        }
        _exit(3);
    }
    char note[4200];
    snprintf(note, sizeof note, "%s/no_shared.%d", dir, tc_rank);
    TC_CHECK(access(note, F_OK) != 0,
             "in the killed run no message of rank %d went through the node-shared area",
             tc_rank);
    unlink(note);
    uint64_t bad = 0;
    TC_CHECK(pattern_check_file(path, OLD_SIZE, 0, OLD_SIZE, 91, 0, &bad) == 0,
             "after the kill %s is not the old file (first bad byte at %llu)", path,
             (unsigned long long)bad);
    if (tc_rank == 0) {
        long pid = 0;
        FILE *p = fopen(pidfile, "r");
        TC_CHECK(p && fscanf(p, "%ld", &pid) == 1, "no pid of the killed job in %s", pidfile);
        if (p)
            fclose(p);
        unlink(pidfile);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "ls /dev/shm 2>/dev/null | grep -q '^fwdio\\.%ld\\.'", pid);
        TC_CHECK(pid > 0 && system(cmd) != 0,
                 "/dev/shm still holds segments of the killed job (fwdio.%ld.*)", pid);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "open after the kill");
    write_share(f, size, 16);
    fwdio_close(f);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the replacement after the kill");
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, size, 16) == 0, "the replacement");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    check_only_ckpt(dir);
}
