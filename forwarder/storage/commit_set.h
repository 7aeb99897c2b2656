/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Commit blocks (fwdio_set_commit) as they wait to be written: one for a
 * file with a size, up to FWDIOI_MAX_COMMIT_BLOCKS per step of a stream (a
 * header and the last bytes of a frame, say), written by one COMMIT job in
 * the order they were set.
 */
#ifndef FWDIOI_COMMIT_SET_H
#define FWDIOI_COMMIT_SET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define FWDIOI_MAX_COMMIT_BLOCKS 8

typedef struct fwdioi_commit_block {
    uint8_t *buf; /* a copy (owned) */
    size_t len;
    uint64_t offset;
} fwdioi_commit_block_t;

typedef struct fwdioi_commit_set {
    int n;
    fwdioi_commit_block_t b[FWDIOI_MAX_COMMIT_BLOCKS];
} fwdioi_commit_set_t;

static inline void fwdioi_commit_set_free(fwdioi_commit_set_t *set)
{
    for (int i = 0; i < set->n; i++)
        free(set->b[i].buf);
    set->n = 0;
}

/** Hand every block of `from` to `to` (which must be empty); from is left empty. */
static inline void fwdioi_commit_set_move(fwdioi_commit_set_t *to, fwdioi_commit_set_t *from)
{
    *to = *from;
    from->n = 0;
}

#endif
