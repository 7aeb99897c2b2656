/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The storage model of the emulator: T targets, each a FIFO queue served by
 * one thread that sleeps for latency + bytes / bw per request; files striped
 * round-robin over the targets; optional per-client link bandwidth, write
 * lock conflicts between clients, durable syncs and write-behind. The model
 * only spends time and counts: the bytes themselves go to the backing files
 * (fs.c) before a request enters the model.
 *
 * Thread safety: every function may be called from any FUSE worker thread at
 * any time between pfs_model_create and pfs_model_destroy.
 */
#ifndef PFS_MODEL_H
#define PFS_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

typedef struct pfs_model pfs_model_t;
/** Model state of one backing file (by device and inode): its first
 *  target, known size, targets written since its last sync, and who last
 *  wrote each stripe. Owned by the model; lives until pfs_model_destroy. */
typedef struct pfs_file pfs_file_t;

/** Counters of one target since the last reset. */
typedef struct pfs_target_stats {
    uint64_t write_bytes, write_rpcs; /* rpcs: pieces of requests served */
    uint64_t read_bytes, read_rpcs;
    uint64_t syncs;          /* durable fsync requests served */
    uint64_t conflicts;      /* stripes written right after another client */
    int64_t busy_ns;         /* modelled service time, conflict penalties included */
    int64_t conflict_ns;     /* the part of busy_ns due to conflicts */
    unsigned queued;         /* requests waiting or in service now */
    unsigned max_queue;      /* the most at one time */
    unsigned clients;        /* distinct clients that wrote to it */
} pfs_target_stats_t;

/** Counters of one client (process or host) since the last reset. */
typedef struct pfs_client_stats {
    uint64_t id; /* process id, or network namespace inode; 0 = the kernel */
    uint64_t write_bytes, write_requests;
    uint64_t read_bytes, read_requests;
    uint64_t fsyncs;
    unsigned targets_written;
} pfs_client_stats_t;

typedef struct pfs_snapshot {
    pfs_config_t cfg;
    double uptime_s, since_reset_s;
    uint64_t write_requests, write_bytes, read_requests, read_bytes, fsyncs;
    uint64_t extending_writes; /* writes that ended beyond the file's size */
    uint64_t max_request;      /* largest read or write request seen */
    uint64_t clients_untracked; /* requests of clients beyond the table */
    pfs_target_stats_t *targets; /* cfg.targets entries */
    pfs_client_stats_t *clients;
    size_t nclients;
} pfs_snapshot_t;

/** Create the model and start one thread per target. Returns 0 or an errno. */
int pfs_model_create(const pfs_config_t *cfg, pfs_model_t **out);

/** Serve what is still queued (write-behind) and stop the target threads.
 *  Snapshots still work afterwards; requests must not come any more. */
void pfs_model_stop(pfs_model_t *m);

/** pfs_model_stop if not done, then free everything (NULL: nothing). */
void pfs_model_destroy(pfs_model_t *m);

/**
 * The model state of backing file (dev, ino) whose size is now `size`.
 * `created`: the file was just created through the mount, so it gets the
 * next first target (round robin, or --start-target) and forgets any state a
 * former file with the same inode number left. A file the model has not seen
 * that was not created through the mount starts at target ino mod T.
 * Returns NULL only when out of memory.
 */
pfs_file_t *pfs_model_file(pfs_model_t *m, uint64_t dev, uint64_t ino, uint64_t size,
                           int created);

/** Target of the file's stripe 0. */
unsigned pfs_file_start(pfs_file_t *f);

/** The file's size changed outside writes (truncate, fallocate). */
void pfs_file_set_size(pfs_file_t *f, uint64_t size);

/** Client of a request from thread `tid` (fuse_get_context()->pid). */
uint64_t pfs_model_client(pfs_model_t *m, pid_t tid);

/**
 * Account for and spend the time of `len` bytes at `off` of `f`, written
 * (`is_write`) or read by `client`: the client link (if capped), then one
 * request per target the bytes touch, queued in parallel; returns when they
 * are served (a write only until at most --write-behind bytes wait ahead of
 * it on each target). Returns 0 or ENOMEM.
 */
int pfs_model_io(pfs_model_t *m, pfs_file_t *f, uint64_t client, uint64_t off, uint64_t len,
                 int is_write);

/**
 * fsync/fdatasync of `f` by `client`. Durable mode: one sync request on each
 * target written since the file's last sync, behind everything queued there,
 * and wait for them. Otherwise counted and returns at once. Returns 0 or ENOMEM.
 */
int pfs_model_fsync(pfs_model_t *m, pfs_file_t *f, uint64_t client);

/** Copy the counters (allocates; free with pfs_snapshot_free). 0 or ENOMEM. */
int pfs_model_snapshot(pfs_model_t *m, pfs_snapshot_t *out);
void pfs_snapshot_free(pfs_snapshot_t *s);

/** Zero every counter; queued requests stay queued. */
void pfs_model_reset(pfs_model_t *m);

#endif
