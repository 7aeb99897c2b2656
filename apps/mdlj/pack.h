/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One rank's part of an output file: the bytes it writes, packed in file
 * order into one buffer, and the extents (file offset, length) they go to.
 * Pieces that touch in the file are merged into one extent, so each extent
 * is one fwdio_write call (or one block of an MPI-IO file view).
 */
#ifndef MDLJ_PACK_H
#define MDLJ_PACK_H

#include <stddef.h>
#include <stdint.h>

typedef struct md_extent {
    uint64_t offset; /* in the file */
    uint64_t len;
} md_extent_t;

typedef struct md_pack {
    unsigned char *buf; /* the extents' bytes, back to back in extent order */
    size_t len, cap;
    md_extent_t *ext;
    size_t next, ext_cap; /* next: number of extents */
    /* pack_use: buf is the caller's and never grows; a piece that does not fit
     * fails, and `need` says how many bytes would have */
    int external;
    size_t need;
} md_pack_t;

void pack_init(md_pack_t *p);
void pack_free(md_pack_t *p);
void pack_reset(md_pack_t *p);
/** Empty the pack and put the next pieces in the caller's `buf` of `cap`
 *  bytes (e.g. memory the output library hands out, written from where it is)
 *  until pack_own; the extents stay the pack's. */
void pack_use(md_pack_t *p, unsigned char *buf, size_t cap);
/** Back to a buffer of the pack's own (empty). */
void pack_own(md_pack_t *p);

/*
 * Room for `len` bytes that go to file offset `offset`, which must not lie
 * before the end of the previous piece. Returns where to put them, or NULL
 * when out of memory.
 */
void *pack_append(md_pack_t *p, uint64_t offset, size_t len);

#endif
