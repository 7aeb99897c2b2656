/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A local file that moves to its target (storage/failover.c): the bytes the
 * writer wrote locally land at the target at their offsets and only within
 * its runs (another writer's bytes there stay), never O_TRUNC, the length
 * set by writer 0, later writes go to the target, the end syncs it and
 * removes the local file and its record; a target that cannot be opened and
 * a local file that cannot be read back say so. A stream's writer: what it
 * claimed is what moves (the target's other bytes, below and between,
 * stay), room is taken for new bytes only, and a refusal asks for the move.
 */
#include "storage/failover.h"

#include "fwdio.h"
#include "storage/syscall.h"
#include "unit_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];

static void fill(const char *path, int flags, char c, off_t at, size_t len)
{
    char buf[512];
    memset(buf, c, sizeof buf);
    int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
    CHECK(fd >= 0 && len <= sizeof buf && pwrite(fd, buf, len, at) == (ssize_t)len);
    if (fd >= 0)
        close(fd);
}

static fwdioi_range_t *two_runs(void)
{
    fwdioi_range_t *r = malloc(2 * sizeof *r);
    r[0] = (fwdioi_range_t){0, 200};
    r[1] = (fwdioi_range_t){300, 400};
    return r;
}

static void test_move(void)
{
    char local[300], record[300], target[300];
    snprintf(local, sizeof local, "%s/a.w0.fwdio-local", g_dir);
    snprintf(record, sizeof record, "%s/a.w0.fwdio-local.ver", g_dir);
    snprintf(target, sizeof target, "%s/a.dat", g_dir);
    /* the writer's units written so far: [0, 100) and [300, 350) */
    fill(local, O_TRUNC, 'A', 0, 100);
    fill(local, 0, 'A', 300, 50);
    fill(record, O_TRUNC, 'r', 0, 10);
    /* another writer's bytes at the target already: 500 'x' */
    fill(target, O_TRUNC, 'x', 0, 500);
    fwdioi_failover_t *fo = fwdioi_failover_new(local, record, target, 1000, 1, two_runs(), 2);
    CHECK(fo != NULL);
    CHECK(fwdioi_failover_fd(fo, 7) == 7);
    errno = ENOSPC;
    CHECK(fwdioi_failover_move(fo, FWDIOI_CALL_PWRITE, 100) == 0);
    CHECK(fo->active && fo->cause_errno == ENOSPC && fo->cause_offset == 100);
    CHECK(fo->copied == 200 + 50); /* the runs as far as the local file reaches */
    CHECK(fwdioi_failover_move(fo, FWDIOI_CALL_PWRITE, 0) == -1); /* once */
    int fd = fwdioi_failover_fd(fo, 7);
    CHECK(fd == fo->target_fd && fd >= 0);
    char b[50];
    memset(b, 'B', sizeof b);
    CHECK(pwrite(fd, b, sizeof b, 350) == (ssize_t)sizeof b); /* a later job's unit */
    CHECK(fwdioi_failover_end(fo, 1) == 0);
    struct stat st;
    CHECK(stat(local, &st) != 0 && errno == ENOENT);
    CHECK(stat(record, &st) != 0 && errno == ENOENT);
    CHECK(stat(target, &st) == 0 && st.st_size == 1000);
    unsigned char got[1000];
    fd = open(target, O_RDONLY);
    CHECK(fd >= 0 && read(fd, got, sizeof got) == (ssize_t)sizeof got);
    if (fd >= 0)
        close(fd);
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        int want = i < 100 ? 'A' : i < 200 ? 0 : i < 300 ? 'x' : i < 350 ? 'A' : i < 400 ? 'B'
                 : i < 500 ? 'x' : 0;
        bad += got[i] != want;
    }
    CHECK(bad == 0);
    fwdioi_failover_free(fo);
}

static void test_failures(void)
{
    char local[300], target[300];
    snprintf(local, sizeof local, "%s/b.w1.fwdio-local", g_dir);
    fill(local, O_TRUNC, 'A', 0, 10);
    /* the target's directory does not exist: the target's open fails */
    snprintf(target, sizeof target, "%s/missing/b.dat", g_dir);
    fwdioi_failover_t *fo = fwdioi_failover_new(local, NULL, target, 100, 0, two_runs(), 2);
    errno = EIO;
    CHECK(fwdioi_failover_move(fo, FWDIOI_CALL_FDATASYNC, 0) == -1);
    CHECK(fo->active && fo->fail_call == FWDIOI_CALL_OPEN && fo->fail_errno == ENOENT &&
          !fo->fail_local && fwdioi_failover_status(fo) == FWDIO_EOPEN);
    CHECK(fwdioi_failover_end(fo, 1) == 0); /* nothing open: nothing to sync */
    fwdioi_failover_free(fo);
    /* the local file is gone: reading it back fails, said as a read */
    snprintf(target, sizeof target, "%s/c.dat", g_dir);
    snprintf(local, sizeof local, "%s/gone.fwdio-local", g_dir);
    fo = fwdioi_failover_new(local, NULL, target, 100, 0, two_runs(), 2);
    CHECK(fwdioi_failover_move(fo, FWDIOI_CALL_PWRITE, 0) == -1);
    CHECK(fo->fail_local && fo->fail_call == FWDIOI_CALL_OPEN &&
          fwdioi_failover_status(fo) == FWDIO_EREAD);
    struct stat st;
    CHECK(stat(target, &st) == 0 && st.st_size == 0); /* made, not sized: writer 0 does */
    fwdioi_failover_free(fo); /* closes the target */
    CHECK(fwdioi_failover_move(NULL, FWDIOI_CALL_PWRITE, 0) == -1);
    CHECK(fwdioi_failover_fd(NULL, 5) == 5);
}

/* Room for 120 new bytes in all. */
static uint64_t g_room;
static int take_room(void *arg, uint64_t bytes)
{
    CHECK(arg == &g_room);
    if (bytes > g_room)
        return -1;
    g_room -= bytes;
    return 0;
}

static void test_stream(void)
{
    char local[300], target[300];
    snprintf(local, sizeof local, "%s/s.w0.fwdio-local", g_dir);
    snprintf(target, sizeof target, "%s/s.dat", g_dir);
    /* the target's kept bytes: 600 'k' (a stream that keeps its contents) */
    fill(target, O_TRUNC, 'k', 0, 300);
    fill(target, 0, 'k', 300, 300);
    g_room = 120;
    fwdioi_failover_t *fo = fwdioi_failover_new_stream(local, target, take_room, &g_room);
    CHECK(fo != NULL && fo->grows && fo->nruns == 0);
    /* steps write [100, 150) and [400, 450) locally, then [120, 160) again
     * (a rewrite: 10 new bytes) */
    CHECK(fwdioi_failover_claim(fo, 100, 50) == 0);
    fill(local, O_TRUNC, 'S', 100, 50);
    CHECK(fwdioi_failover_claim(fo, 400, 50) == 0);
    fill(local, 0, 'S', 400, 50);
    CHECK(fwdioi_failover_claim(fo, 120, 40) == 0);
    fill(local, 0, 'T', 120, 40);
    CHECK(fo->room_taken == 110 && g_room == 10);
    CHECK(fwdioi_ranges_bytes(&fo->written) == 110 && fo->written.n == 2);
    /* 50 more bytes do not fit: recorded, and the caller moves */
    CHECK(fwdioi_failover_claim(fo, 500, 50) == 1);
    CHECK(fo->room_taken == 110 && g_room == 10);
    errno = ENOSPC;
    CHECK(fwdioi_failover_move(fo, FWDIOI_CALL_PWRITE, 500) == 0);
    CHECK(fo->copied == 110); /* as far as the local file reaches: not [500, 550) */
    CHECK(fwdioi_failover_claim(fo, 560, 10) == 0 && fo->room_taken == 110); /* moved */
    char u[50];
    memset(u, 'U', sizeof u);
    CHECK(pwrite(fo->target_fd, u, sizeof u, 500) == (ssize_t)sizeof u); /* the job's bytes */
    CHECK(fwdioi_failover_end(fo, 0) == 0);
    struct stat st;
    CHECK(stat(local, &st) != 0 && errno == ENOENT);
    unsigned char got[600];
    int fd = open(target, O_RDONLY);
    CHECK(fd >= 0 && read(fd, got, sizeof got) == (ssize_t)sizeof got);
    if (fd >= 0)
        close(fd);
    int bad = 0;
    for (int i = 0; i < 600; i++) {
        int want = i < 100 ? 'k' : i < 120 ? 'S' : i < 160 ? 'T' : i < 400 ? 'k' : i < 450 ? 'S'
                 : i < 500 ? 'k' : i < 550 ? 'U' : 'k';
        bad += got[i] != want;
    }
    CHECK(bad == 0);
    fwdioi_failover_free(fo);
    /* a failover that is not a stream's records nothing */
    fo = fwdioi_failover_new(local, NULL, target, 100, 0, two_runs(), 2);
    CHECK(fwdioi_failover_claim(fo, 0, 10) == 0 && fo->written.n == 0);
    fwdioi_failover_free(fo);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/fwdio-failover-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_move();
    test_failures();
    test_stream();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return unit_result("test_failover");
}
