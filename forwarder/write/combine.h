/* SPDX-License-Identifier: BSD-3-Clause */
/* Write combining (combine.c): small copied writes appended to one open
 * message per (file, writer); runtime lock held unless said otherwise. */
#ifndef FWDIOI_COMBINE_H
#define FWDIOI_COMBINE_H

#include "state.h"

/** One copy of a combined write: `len` bytes from `src` to `dst` in `msg`. */
typedef struct fwdioi_combine_copy {
    fwdioi_msg_t *msg;
    uint8_t *dst;
    const uint8_t *src;
    uint64_t len;
} fwdioi_combine_copy_t;

enum { FWDIOI_COMBINE_BATCH = 16 };

/** The copies one reservation leaves to make. */
typedef struct fwdioi_combine_batch {
    int n;
    fwdioi_combine_copy_t copy[FWDIOI_COMBINE_BATCH];
} fwdioi_combine_batch_t;

/**
 * Reserve room for the small write `buf` (len bytes at offset, staged
 * already) in the open messages of its writers, as up to
 * FWDIOI_COMBINE_BATCH copies into `b`; messages that fill up are sealed.
 * Returns the bytes reserved, fewer than `len` when the batch is full (call
 * again for the rest once the batch is finished) or memory ran out (*rc
 * FWDIO_ENOMEM). Then fwdioi_combine_copy without the lock, and
 * fwdioi_combine_finish_locked.
 */
uint64_t fwdioi_combine_reserve_locked(fwdio_file_t *f, const uint8_t *buf, uint64_t len,
                                       uint64_t offset, fwdioi_combine_batch_t *b, int *rc);
/** Make the copies of `b` (runtime lock not held). */
void fwdioi_combine_copy(const fwdioi_combine_batch_t *b);
/** The copies of `b` are made: messages sealed meanwhile go out. */
void fwdioi_combine_finish_locked(fwdio_file_t *f, fwdioi_combine_batch_t *b);
/** Queue every open message of the file for the progress thread. */
void fwdioi_combine_flush_file_locked(fwdio_file_t *f);
/** Queue every open message of every file of the runtime. */
void fwdioi_combine_flush_all_locked(struct fwdio_runtime *o);
/** Seal and queue the open messages of files whose oldest one got its first
 *  byte at least `age_ns` ago (progress thread), without the runtime lock
 *  held (it takes it); O(files sealed + 1); returns how many messages. *open_left: younger ones stay open (the thread must
 *  come back for them). */
int fwdioi_combine_flush_stale(struct fwdio_runtime *o, uint64_t age_ns, int *open_left);
/** Free the piece tables (the file is done; nothing is open). */
void fwdioi_combine_free(fwdio_file_t *f);

#endif
