/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A set of disjoint byte ranges [start, end), kept merged (no two touch):
 * which bytes of a write unit have arrived, which bytes a read got. Finds
 * overlapping writes, or takes their union where overlaps are allowed.
 *
 * A treap (a search tree by start, balanced by random priorities) in one
 * array of nodes: adding a range costs O(log n) expected plus the ranges it
 * absorbs, whatever order the ranges come in (many small pieces of several
 * ranks interleaved cost no more than one rank's in order). A zeroed struct
 * is an empty set.
 */
#ifndef FWDIOI_RANGES_H
#define FWDIOI_RANGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct fwdioi_range {
    uint64_t start, end;
} fwdioi_range_t;

struct fwdioi_range_node;

typedef struct fwdioi_ranges {
    struct fwdioi_range_node *pool; /* [cap]; slot 0 stands for "none" */
    uint32_t cap, used;             /* slots allocated, slots ever handed out */
    uint32_t free_head, root;       /* freed slots (a list), the tree */
    uint32_t rng;                   /* state of the priorities' generator */
    size_t n;                       /* ranges */
    uint64_t bytes;                 /* bytes covered */
} fwdioi_ranges_t;

enum { FWDIOI_RANGES_OK = 0, FWDIOI_RANGES_OVERLAP = -1, FWDIOI_RANGES_NOMEM = -2 };

/**
 * Add [start, end) (start < end), which must not overlap the set. On overlap
 * nothing is added and *overlap_at is set to the first byte already present.
 * Returns a FWDIOI_RANGES_* code.
 */
int fwdioi_ranges_add(fwdioi_ranges_t *set, uint64_t start, uint64_t end, uint64_t *overlap_at);
/** Add [start, end) (start < end) whether or not it overlaps the set (the
 *  union); *added: the bytes that were not covered before. OK or NOMEM
 *  (nothing added). */
int fwdioi_ranges_merge(fwdioi_ranges_t *set, uint64_t start, uint64_t end, uint64_t *added);
/** Does [start, end) share a byte with the set? */
int fwdioi_ranges_touch(const fwdioi_ranges_t *set, uint64_t start, uint64_t end);
/** The range whose start is the highest at or below `pos`, else (none is)
 *  the lowest one: into *out, and 1; 0 when the set is empty. */
int fwdioi_ranges_neighbour(const fwdioi_ranges_t *set, uint64_t pos, fwdioi_range_t *out);
/** Bytes covered. */
uint64_t fwdioi_ranges_bytes(const fwdioi_ranges_t *set);
/** True when the set is exactly [0, len). */
int fwdioi_ranges_covers(const fwdioi_ranges_t *set, uint64_t len);
/** The ranges in increasing order, in a new array of set->n entries (the
 *  caller frees it), or NULL when the set is empty or there is no memory. */
fwdioi_range_t *fwdioi_ranges_list(const fwdioi_ranges_t *set);
/** The tree's height (0: empty): about 2-3 log2(n) whatever the order the
 *  ranges came in (for tests). */
unsigned fwdioi_ranges_height(const fwdioi_ranges_t *set);
/** Bytes of memory the set holds (for budgets). */
uint64_t fwdioi_ranges_memory(const fwdioi_ranges_t *set);
/** Empty the set and give its memory back. */
void fwdioi_ranges_free(fwdioi_ranges_t *set);

#endif
