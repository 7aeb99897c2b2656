/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiting for the kernel's dirty pages: before a measured repetition the bench
 * lets the page cache's writeback of earlier runs finish, so that it does not
 * land in (and slow down) the next run. See docs/benchmarks.md, "Honest figures".
 */
#ifndef FWDIO_BENCH_DIRTY_PAGES_H
#define FWDIO_BENCH_DIRTY_PAGES_H

#include <stdint.h>

/* What one wait did. */
struct dirty_wait {
    double waited_s;     /* sync() plus polling, seconds */
    uint64_t before_kib; /* Dirty + Writeback of /proc/meminfo before the wait */
    uint64_t after_kib;  /* ... and when it returned */
    int timed_out;       /* 1: still above the limit after the timeout */
};

/* Default limit: a machine never reaches zero (logs, journals), but a few MiB
 * cannot slow a run down the way hundreds of MiB of earlier output do. */
#define DIRTY_DEFAULT_LIMIT_KIB (8u * 1024u)
#define DIRTY_DEFAULT_TIMEOUT_S 120.0

/* Dirty + Writeback now, in KiB; -1 when /proc/meminfo cannot be read. */
int64_t dirty_pages_kib(void);

/*
 * Calls sync() and then polls every 20 ms until Dirty + Writeback is at most
 * limit_kib or timeout_s has passed. Returns 0 (out filled, out->timed_out says
 * whether the limit was reached) or -1 when /proc/meminfo cannot be read.
 */
int dirty_pages_wait(uint64_t limit_kib, double timeout_s, struct dirty_wait *out);

#endif
