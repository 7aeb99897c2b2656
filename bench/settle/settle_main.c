/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-settle: waits until the kernel has written back its dirty pages, and
 * says how long that took. bench/testbed settle runs it before each measured
 * repetition (docs/benchmarks.md, "Honest figures").
 *
 *   fwdio-settle [--limit KIB] [--timeout SECONDS]
 *
 * Exit status: 0 settled, 1 still above the limit at the timeout (a run would
 * not be comparable), 2 bad usage or /proc/meminfo unreadable.
 */
#include "dirty_pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: fwdio-settle [--limit KIB] [--timeout SECONDS]\n"
                    "  waits (sync, then polling /proc/meminfo) until Dirty + Writeback <= KIB\n"
                    "  (default %u) or SECONDS pass (default %.0f)\n",
            DIRTY_DEFAULT_LIMIT_KIB, DIRTY_DEFAULT_TIMEOUT_S);
    return 2;
}

int main(int argc, char **argv)
{
    unsigned long long limit = DIRTY_DEFAULT_LIMIT_KIB;
    double timeout = DIRTY_DEFAULT_TIMEOUT_S;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            limit = strtoull(argv[++i], &end, 10);
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            timeout = strtod(argv[++i], &end);
        } else {
            return usage();
        }
        if (!end || *end || end == argv[i])
            return usage();
    }
    struct dirty_wait w;
    if (dirty_pages_wait(limit, timeout, &w) != 0) {
        fprintf(stderr, "fwdio-settle: cannot read /proc/meminfo\n");
        return 2;
    }
    printf("settle: %.3f s, dirty+writeback %llu KiB -> %llu KiB%s\n", w.waited_s,
           (unsigned long long)w.before_kib, (unsigned long long)w.after_kib,
           w.timed_out ? " (above the limit at the timeout)" : "");
    return w.timed_out ? 1 : 0;
}
