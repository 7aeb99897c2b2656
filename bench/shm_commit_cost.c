/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What committing node-shared memory costs, per chunk size: posix_fallocate
 * of a range of a /dev/shm file, MADV_POPULATE_WRITE of it (as the area
 * does), the first copy into it, and the punch (FALLOC_FL_PUNCH_HOLE) that
 * gives it back; beside the copy into memory already committed and mapped,
 * which is what a message costs when its chunks are reused. The figures
 * behind the node-shared area's chunk size and its keeping of idle chunks
 * (forwarder/node/node_area.h; docs/results/node-memory.md). Built and run by
 * bench/runs/2026-11-29-node-memory.sh (step commit-cost):
 *   cc -O2 -o shm_commit_cost bench/shm_commit_cost.c && ./shm_commit_cost
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    const size_t sizes[] = {64 << 10, 256 << 10, 1 << 20, 8 << 20};
    const int iters = 100;
    char name[64];
    snprintf(name, sizeof name, "/fwdio-commit-cost.%d", (int)getpid());
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || shm_unlink(name) != 0 || ftruncate(fd, 8 << 20) != 0) {
        perror("shm");
        return 1;
    }
    char *p = mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    char *src = malloc(8 << 20);
    if (p == MAP_FAILED || !src)
        return 1;
    memset(src, 1, 8 << 20);
    printf("%-8s %12s %12s %12s %12s %12s %8s\n", "chunk", "fallocate_us", "populate_us",
           "first_copy_us", "punch_us", "reuse_copy_us", "ratio");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t len = sizes[s];
        double tf = 0, tp = 0, tc = 0, tu = 0, tr = 0;
        for (int i = 0; i < iters; i++) {
            double a = now();
            if (posix_fallocate(fd, 0, (off_t)len) != 0)
                return 1;
            double b = now();
#ifdef MADV_POPULATE_WRITE
            (void)madvise(p, len, MADV_POPULATE_WRITE);
#endif
            double c = now();
            memcpy(p, src, len);
            double d = now();
            if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)len) != 0)
                return 1;
            double e = now();
            tf += b - a;
            tp += c - b;
            tc += d - c;
            tu += e - d;
        }
        if (posix_fallocate(fd, 0, (off_t)len) != 0)
            return 1;
        memcpy(p, src, len);
        for (int i = 0; i < iters; i++) {
            double a = now();
            memcpy(p, src, len);
            tr += now() - a;
        }
        if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)len) != 0)
            return 1;
        double k = 1e6 / iters;
        printf("%-8zu %12.1f %12.1f %12.1f %12.1f %12.1f %8.1f\n", len >> 10, tf * k, tp * k,
               tc * k, tu * k, tr * k, (tf + tp + tc + tu) / tr);
    }
    close(fd);
    return 0;
}
