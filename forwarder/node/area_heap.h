/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A first-fit allocator over one range of memory: the heap of this rank's
 * segment of the node-shared area (node_area.h), from which messages for
 * writers on this node and fwdio_alloc buffers are cut. Blocks are
 * FWDIOI_HEAP_ALIGN-aligned; the free list is a sorted array of ranges that
 * merges neighbours, kept outside the range itself, so nothing another process
 * can write decides what is free. Any thread (its own lock).
 *
 * The range is address space, not memory. With a backing (node_area.c's:
 * fallocate into the segment under the node's budget), the heap commits the
 * chunks a block touches before it hands the block out, and a block whose
 * chunks cannot be committed is not handed out (the caller falls back, as when
 * the heap is full). A chunk no block touches any more is *idle*: the heap
 * keeps up to `keep_idle` bytes of idle chunks committed (a commit, the page
 * faults after it and a punch cost about ten copies of the chunk, so a rank
 * that sends message after message reuses its chunks) and gives the rest back
 * at once; fwdioi_heap_trim gives back every idle chunk (the runtime calls it
 * once its heap has been empty for a while, files active or not).
 * Without a backing the whole range is memory already (the unit tests).
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

/* Where the heap's memory comes from: chunks of `chunk` bytes (a power of two,
 * at least a page) at offsets from the heap's base. Called with the heap's
 * lock held. */
typedef struct fwdioi_heap_backing {
    /** Make [off, off + len) memory: 0, or -1 (no room: the node's budget is
     *  spent, or /dev/shm is full). */
    int (*commit)(void *ctx, uint64_t off, uint64_t len);
    /** Give [off, off + len) back (it holds nothing anyone reads). */
    void (*uncommit)(void *ctx, uint64_t off, uint64_t len);
    void *ctx;
    uint64_t chunk;
    uint64_t keep_idle; /* idle bytes kept committed (rounded down to chunks) */
} fwdioi_heap_backing_t;

typedef struct fwdioi_heap {
    pthread_mutex_t lock;
    uint8_t *base;
    uint64_t size;
    fwdioi_heap_range_t *free; /* sorted by offset, never adjacent */
    size_t nfree, cap;
    uint64_t used, peak; /* bytes handed out now, at most */
    /* with a backing: */
    fwdioi_heap_backing_t back;
    uint32_t *live;     /* [nchunks]: blocks that touch the chunk */
    uint8_t *committed; /* [nchunks]: the chunk is memory */
    uint64_t nchunks, nidle; /* chunks; committed chunks no block touches */
    uint64_t committed_bytes, committed_peak;
    uint64_t commits, uncommits, commit_failures; /* calls made; refusals */
} fwdioi_heap_t;

/** A heap over [base, base + size) (base aligned), with `back` (NULL: the range
 *  is memory already). 0, or -1 without memory. */
int fwdioi_heap_init(fwdioi_heap_t *h, void *base, uint64_t size,
                     const fwdioi_heap_backing_t *back);
/** Frees the heap's own records; commits nothing back (the segment goes). */
void fwdioi_heap_destroy(fwdioi_heap_t *h);
/** A block of at least `len` bytes (> 0), or NULL if no free range is that
 *  large or its memory cannot be committed. */
void *fwdioi_heap_alloc(fwdioi_heap_t *h, uint64_t len);
/** Give back a block from fwdioi_heap_alloc with the `len` it was asked for. */
void fwdioi_heap_free(fwdioi_heap_t *h, void *block, uint64_t len);
/** Give back every idle chunk; the bytes given back (any thread). */
uint64_t fwdioi_heap_trim(fwdioi_heap_t *h);
/** Whether [p, p + len) lies inside the heap's range. */
int fwdioi_heap_contains(const fwdioi_heap_t *h, const void *p, uint64_t len);
/** Bytes handed out now and at most (any thread). */
void fwdioi_heap_usage(fwdioi_heap_t *h, uint64_t *used, uint64_t *peak);

/** What the heap's memory costs (any thread). */
typedef struct fwdioi_heap_memory {
    uint64_t used, committed, committed_peak, idle;
    uint64_t commits, uncommits, commit_failures;
} fwdioi_heap_memory_t;
void fwdioi_heap_memory(fwdioi_heap_t *h, fwdioi_heap_memory_t *m);

#endif
