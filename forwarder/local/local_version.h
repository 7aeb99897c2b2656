/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which version a local copy holds, and whether a restart may read it
 * instead of the target (node-local tier; local_restart.h reads it).
 *
 * Every writer's local file (local_index.h) carries the file's version id
 * in its index's `created` field: the largest CLOCK_REALTIME ns of the
 * ranks' fwdio_open, agreed at the open, so all writers of one version
 * carry the same id and two versions of a path (in one job or in two)
 * differ. Beside each local file, "<local file>.ver" is its version
 * record (128 bytes, little-endian):
 *
 *     0  magic "FWDIOLV1"
 *     8  u64 version id (the index's)
 *    16  u32 writer index, u32 flags (bit 0: drained)
 *    24  the target as this version found it at its seal (its
 *        predecessor): u64 exists, size, mtime ns, ctime ns, inode
 *    64  the target as the drain left it (drained only): the same fields
 *   104  zeros
 *   120  u64 FNV-1a of bytes 0..119
 *
 * written whole at the seal (after the index), rewritten once the drain is
 * agreed (instead of removing the local file, as the tier did before).
 *
 * The rule (fwdioi_local_version_usable): the target is looked at (stat)
 * when a restart opens the path; a local copy is the newest version only if
 * the target is exactly what the record says it was: the drained target
 * (then both hold this version) or, before the drain ended, the
 * predecessor (then the target is older, or absent). Anything else (a later
 * version written without the tier, a copy, a removed target after a
 * drain) means the target changed after this version: the target wins. No
 * clocks are compared.
 * Pure functions, any thread.
 */
#ifndef FWDIOI_LOCAL_VERSION_H
#define FWDIOI_LOCAL_VERSION_H

#include <stddef.h>
#include <stdint.h>

/** What identifies the bytes at a path: a stat's size, times, inode. */
typedef struct fwdioi_target_id {
    uint64_t exists, size, mtime_ns, ctime_ns, ino;
} fwdioi_target_id_t;

/** A local file's version record. */
typedef struct fwdioi_local_version {
    uint64_t version;
    uint32_t writer;
    int drained;
    fwdioi_target_id_t before, after; /* after: when drained */
} fwdioi_local_version_t;

enum { FWDIOI_LOCAL_VERSION_LEN = 128 };

/** Encode `v` into `out` (FWDIOI_LOCAL_VERSION_LEN bytes). */
void fwdioi_local_version_encode(const fwdioi_local_version_t *v, uint8_t *out);
/** Decode a record; 0, or -1 when the bytes are not a whole, intact one. */
int fwdioi_local_version_decode(const uint8_t *buf, size_t len, fwdioi_local_version_t *v);
/** Whether two looks at a target saw the same bytes (both absent, or the
 *  same size, times and inode). */
int fwdioi_target_id_same(const fwdioi_target_id_t *a, const fwdioi_target_id_t *b);
/** The rule: whether the local copy recorded in `v` is at least as new as
 *  the target now (`now`), so a restart may read it (1) or must read the
 *  target (0). */
int fwdioi_local_version_usable(const fwdioi_local_version_t *v, const fwdioi_target_id_t *now);

#endif
