/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The FUSE side of the emulator: a low-level libfuse 3 file system that
 * passes every operation through to a backing directory and sends reads,
 * writes and fsyncs through the storage model (model.h). Three names in the
 * root are virtual: .pfs-stats (key=value statistics), .pfs-stats.json and
 * .pfs-reset (any write zeroes the counters).
 */
#ifndef PFS_FS_H
#define PFS_FS_H

#include "config.h"

typedef struct pfs_fs pfs_fs_t;

/**
 * Mount cfg->backing on cfg->mountpoint and start the model's target
 * threads. Returns 0, or -1 after printing why on stderr; either way *fs is
 * set (or NULL) and goes to pfs_fs_free. Nothing is served yet: requests to
 * the mount wait for pfs_fs_serve. Call it in the process that will serve.
 */
int pfs_fs_mount(const pfs_config_t *cfg, pfs_fs_t **fs);

/**
 * Serve requests on up to cfg->threads workers until the file system is
 * unmounted (fusermount3 -u) or the daemon gets SIGINT, SIGTERM or
 * SIGHUP; then unmount, let the model finish what is queued, and print the
 * final statistics on stderr. Returns 0, or -1 after printing why.
 */
int pfs_fs_serve(pfs_fs_t *fs);

/** Unmount if still mounted and free everything. */
void pfs_fs_free(pfs_fs_t *fs);

#endif
