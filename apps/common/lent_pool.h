/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output buffers from fwdio_alloc that an application packs its bytes into
 * and lends to fwdio_write_lent: a writer on the same node then writes them
 * from where they were packed, with no copy. A buffer is free again once the
 * done callbacks of all its lent writes have run; a few of them rotate, so
 * the next output is packed while the last is still being written.
 */
#ifndef APP_LENT_POOL_H
#define APP_LENT_POOL_H

#include "fwdio.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Buffers in flight at most: the next output waits (polling) for the oldest. */
enum { APP_LENT_BUFS = 4 };

/* Smaller pieces are copied (fwdio_write) rather than lent: a lent write is a
 * message of its own, while copied ones of this size are combined, and a
 * rank's share of an MD snapshot is often thousands of runs of a few atoms
 * (mdlj: 2,100 runs of 36 bytes on average per rank and frame, 5x the CPU of
 * copying them). */
#define APP_LENT_MIN_BYTES ((size_t)64 << 10)

typedef struct app_lent_buf {
    unsigned char *mem;
    size_t cap;
    atomic_int lent; /* lent writes of it not yet done */
} app_lent_buf_t;

typedef struct app_lent_pool {
    fwdio_runtime_t *rt;
    app_lent_buf_t bufs[APP_LENT_BUFS];
} app_lent_pool_t;

void app_lent_pool_init(app_lent_pool_t *p, fwdio_runtime_t *rt);
/** A buffer none of whose writes is in flight, waiting (fwdio_poll runs the
 *  done callbacks) while every one is lent. */
app_lent_buf_t *app_lent_get(app_lent_pool_t *p);
/** Make b (free) hold at least `need` bytes: its bytes are lost. 0, or -1
 *  without memory (b is then empty). */
int app_lent_grow(app_lent_pool_t *p, app_lent_buf_t *b, size_t need);
/** fwdio_write_lent of `len` bytes at `at` (inside b) to `offset` of `file`,
 *  b counting the write until its done callback; fwdio_write (a copy) for
 *  fewer than APP_LENT_MIN_BYTES. The fwdio status. */
int app_lent_write(app_lent_buf_t *b, fwdio_file_t *file, const void *at, size_t len,
                   uint64_t offset);
/** app_lent_write to a version of a checkpoint set: fwdio_ckpt_write_lent
 *  (fwdio_ckpt_write for fewer than APP_LENT_MIN_BYTES), the bytes counted
 *  in the version's checksum. */
int app_lent_write_ckpt(app_lent_buf_t *b, fwdio_ckpt_t *ck, const void *at, size_t len,
                        uint64_t offset);
/** Release every buffer (their files complete, or freed). */
void app_lent_pool_free(app_lent_pool_t *p);

#endif
