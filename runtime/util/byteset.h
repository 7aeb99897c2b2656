/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which bytes of [0, limit) are in a set, in bounded memory: a range set
 * (ranges.h) while the ranges are few, a bitmap of `limit` bits once the
 * ranges would take more memory than that (limit / 8 bytes). So whatever
 * order and size the pieces come in, the set never takes much more than an
 * eighth of the bytes it describes (a writer's record of which bytes of a
 * unit arrived: 8-byte pieces of several ranks interleaved left a range per
 * piece, 64 bytes of tree for 16 bytes of data).
 *
 * A set whose adds may overlap can also give up knowing which bytes it
 * holds and only count them (fwdioi_byteset_count_only: no memory at all).
 *
 * `limit` is given at the first add and kept (a zeroed struct is an empty
 * set); every range must lie in [0, limit). The struct is kept small (a
 * writer has one or two per write unit in progress): the three forms share
 * their storage, and the form is kept in the top bits of the limit.
 */
#ifndef FWDIOI_BYTESET_H
#define FWDIOI_BYTESET_H

#include <stddef.h>
#include <stdint.h>

#include "ranges.h"

typedef struct fwdioi_byteset {
    union {
        fwdioi_ranges_t tree; /* the ranges (the form at first) */
        struct {
            uint64_t *bits; /* [ceil(limit / 64)] */
            uint64_t bytes; /* bits set */
        } map;              /* once the tree grew past the bitmap */
        uint64_t counted;   /* counting only: the bytes added */
    } u;
    uint64_t limit_form; /* the limit (0: not yet known), the form in bits 62-63 */
} fwdioi_byteset_t;

/**
 * Add [start, end) (start < end <= limit). Strict (`strict` non-zero): it
 * must not overlap the set; on overlap nothing is added and *overlap_at is
 * the first byte of [start, end) already present. Otherwise the union is
 * taken. *added: the bytes new to the set (counting only: end - start, and
 * nothing is refused). Returns a FWDIOI_RANGES_* code (NOMEM: nothing
 * added).
 */
int fwdioi_byteset_add(fwdioi_byteset_t *set, uint64_t limit, uint64_t start, uint64_t end,
                       int strict, uint64_t *overlap_at, uint64_t *added);
/** Forget which bytes the set holds and give its memory back, keeping their
 *  count: from now on adds are counted (overlapping bytes twice), never
 *  refused, and fwdioi_byteset_covers says whether the count reached len.
 *  For sets whose adds may overlap. */
void fwdioi_byteset_count_only(fwdioi_byteset_t *set);
/** Whether the set only counts (fwdioi_byteset_count_only). */
int fwdioi_byteset_counting(const fwdioi_byteset_t *set);
/** Bytes in the set (counting only: bytes added). */
uint64_t fwdioi_byteset_bytes(const fwdioi_byteset_t *set);
/** True when the set is exactly [0, len) (counting only: when len bytes or
 *  more were added). */
int fwdioi_byteset_covers(const fwdioi_byteset_t *set, uint64_t len);
/** The set's ranges in increasing order (merged: no two touch), in a new
 *  array the caller frees, their number in *n; NULL with *n = 0 when the set
 *  is empty or only counts, NULL with *n > 0 without memory. */
fwdioi_range_t *fwdioi_byteset_list(const fwdioi_byteset_t *set, size_t *n);
/** Whether the set is a bitmap now (for tests). */
int fwdioi_byteset_is_bitmap(const fwdioi_byteset_t *set);
/** Bytes of memory the set holds (for budgets). */
uint64_t fwdioi_byteset_memory(const fwdioi_byteset_t *set);
/** Empty the set and give its memory back. */
void fwdioi_byteset_free(fwdioi_byteset_t *set);

#endif
