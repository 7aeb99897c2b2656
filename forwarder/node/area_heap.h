/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A first-fit allocator over one fixed range of memory: the heap of this
 * rank's segment of the node-shared area (node_area.h), from which messages
 * for writers on this node and fwdio_alloc buffers are cut. Blocks are
 * FWDIOI_HEAP_ALIGN-aligned; the free list is a sorted array of ranges that
 * merges neighbours, kept outside the range itself, so nothing another process
 * can write decides what is free. Any thread (its own lock).
 */
#ifndef FWDIOI_AREA_HEAP_H
#define FWDIOI_AREA_HEAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define FWDIOI_HEAP_ALIGN ((size_t)64)

typedef struct fwdioi_heap_range {
    uint64_t off, len;
} fwdioi_heap_range_t;

typedef struct fwdioi_heap {
    pthread_mutex_t lock;
    uint8_t *base;
    uint64_t size;
    fwdioi_heap_range_t *free; /* sorted by offset, never adjacent */
    size_t nfree, cap;
    uint64_t used, peak; /* bytes handed out now, at most */
} fwdioi_heap_t;

/** A heap over [base, base + size) (base aligned); 0, or -1 without memory. */
int fwdioi_heap_init(fwdioi_heap_t *h, void *base, uint64_t size);
void fwdioi_heap_destroy(fwdioi_heap_t *h);
/** A block of at least `len` bytes (> 0), or NULL if no free range is that large. */
void *fwdioi_heap_alloc(fwdioi_heap_t *h, uint64_t len);
/** Give back a block from fwdioi_heap_alloc with the `len` it was asked for. */
void fwdioi_heap_free(fwdioi_heap_t *h, void *block, uint64_t len);
/** Whether [p, p + len) lies inside the heap's range. */
int fwdioi_heap_contains(const fwdioi_heap_t *h, const void *p, uint64_t len);
/** Bytes handed out now and at most (any thread). */
void fwdioi_heap_usage(fwdioi_heap_t *h, uint64_t *used, uint64_t *peak);

#endif
