/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A map from 64-bit keys to non-NULL pointers: open addressing with linear
 * probing, deletion by backward shift (no tombstones, so a map that sees
 * millions of inserts and removals keeps short probes). Find, insert and
 * remove cost O(1) expected; the table doubles at 1/2 load and never
 * shrinks. Keys are mixed before use, so sequence numbers (consecutive) and
 * hashes spread alike. A zeroed struct is an empty map. No locking: the
 * owner of the map serialises its calls.
 */
#ifndef FWDIOI_U64MAP_H
#define FWDIOI_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct fwdioi_u64map_slot;

typedef struct fwdioi_u64map {
    struct fwdioi_u64map_slot *slots; /* [cap], cap a power of two or 0 */
    size_t cap, n;
} fwdioi_u64map_t;

/* The value of `key`, or NULL. */
void *fwdioi_u64map_get(const fwdioi_u64map_t *m, uint64_t key);

/* Set `key` to `value` (not NULL), replacing any value it had. 0, or -1 when
 * the table could not grow (the map is unchanged). */
int fwdioi_u64map_put(fwdioi_u64map_t *m, uint64_t key, void *value);

/* Make room for `n` keys in all, so that the puts up to them cannot fail.
 * 0, or -1 without memory. */
int fwdioi_u64map_reserve(fwdioi_u64map_t *m, size_t n);

/* Remove `key`; its value, or NULL when it was absent. */
void *fwdioi_u64map_remove(fwdioi_u64map_t *m, uint64_t key);

/* Visit the entries in no particular order: start with *pos 0; each call
 * gives the next key and value and returns 1, or returns 0 after the last.
 * The map must not change between the calls. */
int fwdioi_u64map_next(const fwdioi_u64map_t *m, size_t *pos, uint64_t *key, void **value);

/* Bytes the map's table takes (16 per slot; 0 while empty). */
size_t fwdioi_u64map_bytes(const fwdioi_u64map_t *m);

/* Free the table (not the values); the map is empty again. */
void fwdioi_u64map_free(fwdioi_u64map_t *m);

#endif
