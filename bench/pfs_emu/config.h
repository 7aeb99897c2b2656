/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Settings of the parallel file system emulator (bench/pfs, see
 * docs/benchmarks.md "Parallel file system emulator") and the parsers of its
 * command line values.
 */
#ifndef PFS_CONFIG_H
#define PFS_CONFIG_H

#include <limits.h>
#include <stdio.h>
#include <stdint.h>

/** Most storage targets an emulated file system can have. */
#define PFS_MAX_TARGETS 1024
/** Smallest stripe: keeps the per-stripe lock table of a file bounded. */
#define PFS_MIN_STRIPE 4096
/** Largest FUSE request libfuse 3 accepts (its buffer is 256 pages). */
#define PFS_MAX_REQUEST ((uint64_t)1 << 20)

/** How requests are attributed to clients. */
typedef enum pfs_client_kind {
    PFS_CLIENT_PROCESS = 0, /**< the calling process (thread group) */
    PFS_CLIENT_HOST = 1     /**< its network namespace: a simulated host */
} pfs_client_kind_t;

typedef struct pfs_config {
    unsigned targets;         /**< storage targets T */
    uint64_t stripe;          /**< stripe size S in bytes */
    uint64_t bw;              /**< bytes/s of one target; 0: no transfer time */
    int64_t latency_ns;       /**< per request on a target */
    uint64_t client_bw;       /**< bytes/s of one client's link; 0: unlimited */
    pfs_client_kind_t client_kind;
    int64_t conflict_ns;      /**< penalty of a write to a stripe another client wrote */
    int64_t conflict_window_ns; /**< ... within this time */
    int durable;              /**< fsync/fdatasync wait for the file's target work */
    int64_t sync_ns;          /**< extra cost of a sync on each target (durable) */
    uint64_t write_behind;    /**< bytes a target may hold queued before a write waits */
    int start_target;         /**< target of every file's stripe 0; -1: round robin */
    unsigned threads;         /**< most FUSE worker threads */
    char mountpoint[PATH_MAX];
    char backing[PATH_MAX];
    int backing_owned;        /**< a fresh backing directory, removed at unmount */
    char log[PATH_MAX];       /**< daemon's stderr (final statistics); "" = /dev/null */
    int foreground;
} pfs_config_t;

/** Parse a non-negative number of milliseconds ("0.5", "20") into
 *  nanoseconds; at most one hour. Returns 0 or -1. */
int pfs_parse_ms(const char *text, int64_t *out_ns);

/**
 * Parse the options of `bench/pfs up DIR ...` (argv[0] is DIR; sizes in
 * fwdio's size grammar, apps/common/cli.h). Prints what is wrong in one line
 * on stderr and returns -1; 1 for --help; 0 on success. The paths are taken
 * as given; `up` makes them absolute and checks them before mounting.
 */
int pfs_config_parse(int argc, char **argv, pfs_config_t *cfg);

/** Usage text of every subcommand. */
void pfs_usage(FILE *out);

#endif
