/* SPDX-License-Identifier: BSD-3-Clause */
#define _DEFAULT_SOURCE /* sync() */
#include "dirty_pages.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t dirty_pages_kib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    int64_t total = 0;
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kib;
        /* "Writeback:" only, not "WritebackTmp:" (FUSE's own temporary pages). */
        if (sscanf(line, "Dirty: %llu kB", &kib) == 1 ||
            sscanf(line, "Writeback: %llu kB", &kib) == 1) {
            total += (int64_t)kib;
            seen++;
        }
    }
    fclose(f);
    return seen == 2 ? total : -1;
}

int dirty_pages_wait(uint64_t limit_kib, double timeout_s, struct dirty_wait *out)
{
    memset(out, 0, sizeof *out);
    int64_t before = dirty_pages_kib();
    if (before < 0)
        return -1;
    out->before_kib = (uint64_t)before;
    double t0 = now_s();
    sync();
    int64_t now = dirty_pages_kib();
    while (now >= 0 && (uint64_t)now > limit_kib && now_s() - t0 < timeout_s) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        now = dirty_pages_kib();
    }
    if (now < 0)
        return -1;
    out->after_kib = (uint64_t)now;
    out->timed_out = (uint64_t)now > limit_kib;
    out->waited_s = now_s() - t0;
    return 0;
}
