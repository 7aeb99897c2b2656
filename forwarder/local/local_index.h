/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The index of a writer's local file (node-local tier). A writer's local
 * file holds its units at their target offsets (a sparse file: only the
 * writer's stripes take room), followed by this index at
 * fwdioi_local_index_offset(size):
 *
 *   offset  field (little-endian)
 *    0      magic "FWDIOLX1"
 *    8      u32 format (1), u32 writer index
 *   16      u32 writer count, u32 path length with its NUL
 *   24      u64 target size, stripe_size, write_size
 *   48      u64 version (the file's sequence number in its runtime),
 *           u64 created: the version id, the largest CLOCK_REALTIME ns of
 *           the writers' opens, agreed at the open, the same in every
 *           writer's index (local_version.h)
 *   64      u64 runs, u64 FNV-1a hash of the whole index (this field as 0)
 *   80      the target path, NUL-terminated, padded to 8 bytes
 *           runs: u64 target offset, u64 length (the target bytes the file
 *           holds, in order)
 *   end-16  u64 length of the index, magic "FWDIOLXE"
 *
 * so a reader finds the index from the end of the file. It is written after
 * the data is durable and made durable itself before the local completion
 * is reported: a file without a valid index is not a complete local copy.
 * Pure functions, any thread.
 */
#ifndef FWDIOI_LOCAL_INDEX_H
#define FWDIOI_LOCAL_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct fwdioi_local_run {
    uint64_t offset, len;
} fwdioi_local_run_t;

typedef struct fwdioi_local_index {
    uint64_t size, stripe_size, write_size;
    uint32_t writer, nwriters;
    uint64_t version, created_ns;
    const char *path;
    size_t nruns;
    fwdioi_local_run_t *runs;
} fwdioi_local_index_t;

/** Where the index of a local file for a target of `size` bytes starts:
 *  the size rounded up to 4 KiB. */
uint64_t fwdioi_local_index_offset(uint64_t size);
/** Bytes the encoded index of `ix` takes, footer included. */
size_t fwdioi_local_index_len(const fwdioi_local_index_t *ix);
/** Encode `ix` into `out` (fwdioi_local_index_len bytes). */
void fwdioi_local_index_encode(const fwdioi_local_index_t *ix, uint8_t *out);
/**
 * Decode the index that ends `buf` (`len` bytes: the tail of a local file,
 * at least the whole index). On success returns 0 and fills `ix` (its path
 * points into buf, its runs are allocated: fwdioi_local_index_free); -1 when
 * the bytes are no complete, intact index (wrong magic or format, lengths
 * that do not fit, a hash that does not match, runs out of order or past
 * the size).
 */
int fwdioi_local_index_decode(const uint8_t *buf, size_t len, fwdioi_local_index_t *ix);
/** Free what fwdioi_local_index_decode allocated. */
void fwdioi_local_index_free(fwdioi_local_index_t *ix);

#endif
