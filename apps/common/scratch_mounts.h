/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small file systems for storage-fault tests and the fault benchmark: real
 * ENOSPC from a tiny tmpfs, real EROFS from a read-only bind mount (root
 * ignores permission bits, not a read-only mount). Both need the privilege to
 * mount; they return 0 or the errno of the step that failed (EPERM where
 * mounting is not allowed). Unmount with umount2(dir, MNT_DETACH).
 */
#ifndef FWDIO_SCRATCH_MOUNTS_H
#define FWDIO_SCRATCH_MOUNTS_H

#include <stdint.h>

/** Create `dir` (it may exist) and mount a tmpfs of `bytes` bytes on it. */
int scratch_mount_tmpfs(const char *dir, uint64_t bytes);

/** Create `dir` and "<dir>.src" (either may exist) and mount a read-only
 *  view of the latter on the former. */
int scratch_mount_read_only(const char *dir);

#endif
