/* SPDX-License-Identifier: BSD-3-Clause */
/* First-fit allocation over a fixed range (area_heap.h). */
#include "node/area_heap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rounded(uint64_t len)
{
    return (len + FWDIOI_HEAP_ALIGN - 1) & ~(uint64_t)(FWDIOI_HEAP_ALIGN - 1);
}

int fwdioi_heap_init(fwdioi_heap_t *h, void *base, uint64_t size)
{
    memset(h, 0, sizeof *h);
    h->base = base;
    h->size = size & ~(uint64_t)(FWDIOI_HEAP_ALIGN - 1);
    h->cap = 16;
    h->free = malloc(h->cap * sizeof *h->free);
    if (!h->free)
        return -1;
    h->free[0] = (fwdioi_heap_range_t){0, h->size};
    h->nfree = h->size > 0;
    pthread_mutex_init(&h->lock, NULL);
    return 0;
}

void fwdioi_heap_destroy(fwdioi_heap_t *h)
{
    if (!h->free)
        return;
    free(h->free);
    h->free = NULL;
    pthread_mutex_destroy(&h->lock);
}

void *fwdioi_heap_alloc(fwdioi_heap_t *h, uint64_t len)
{
    if (len == 0 || len > h->size)
        return NULL;
    len = rounded(len);
    void *block = NULL;
    pthread_mutex_lock(&h->lock);
    for (size_t i = 0; i < h->nfree; i++) {
        fwdioi_heap_range_t *r = &h->free[i];
        if (r->len < len)
            continue;
        block = h->base + r->off;
        r->off += len;
        r->len -= len;
        if (r->len == 0) {
            memmove(r, r + 1, (h->nfree - i - 1) * sizeof *r);
            h->nfree--;
        }
        h->used += len;
        if (h->used > h->peak)
            h->peak = h->used;
        break;
    }
    pthread_mutex_unlock(&h->lock);
    return block;
}

/* Insert [off, off + len) at index i (free[i - 1] ends before, free[i] starts
 * after), merging with either neighbour. 0, or -1 without memory. */
static int insert_range(fwdioi_heap_t *h, size_t i, uint64_t off, uint64_t len)
{
    int joins_left = i > 0 && h->free[i - 1].off + h->free[i - 1].len == off;
    int joins_right = i < h->nfree && off + len == h->free[i].off;
    if (joins_left && joins_right) {
        h->free[i - 1].len += len + h->free[i].len;
        memmove(&h->free[i], &h->free[i + 1], (h->nfree - i - 1) * sizeof *h->free);
        h->nfree--;
        return 0;
    }
    if (joins_left) {
        h->free[i - 1].len += len;
        return 0;
    }
    if (joins_right) {
        h->free[i].off = off;
        h->free[i].len += len;
        return 0;
    }
    if (h->nfree == h->cap) {
        fwdioi_heap_range_t *grown = realloc(h->free, 2 * h->cap * sizeof *grown);
        if (!grown)
            return -1;
        h->free = grown;
        h->cap *= 2;
    }
    memmove(&h->free[i + 1], &h->free[i], (h->nfree - i) * sizeof *h->free);
    h->free[i] = (fwdioi_heap_range_t){off, len};
    h->nfree++;
    return 0;
}

void fwdioi_heap_free(fwdioi_heap_t *h, void *block, uint64_t len)
{
    if (!block)
        return;
    len = rounded(len);
    uint64_t off = (uint64_t)((uint8_t *)block - h->base);
    pthread_mutex_lock(&h->lock);
    size_t lo = 0, hi = h->nfree; /* first range starting after off */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Without memory for a new range the block is lost to the heap (not to
     * the process): later allocations fall back to ordinary memory. */
    if (insert_range(h, lo, off, len) == 0)
        h->used -= len;
    pthread_mutex_unlock(&h->lock);
}

int fwdioi_heap_contains(const fwdioi_heap_t *h, const void *p, uint64_t len)
{
    const uint8_t *b = p;
    return h->base && b >= h->base && b <= h->base + h->size &&
           len <= (uint64_t)(h->base + h->size - b);
}

void fwdioi_heap_usage(fwdioi_heap_t *h, uint64_t *used, uint64_t *peak)
{
    if (!h->free) {
        *used = *peak = 0;
        return;
    }
    pthread_mutex_lock(&h->lock);
    *used = h->used;
    *peak = h->peak;
    pthread_mutex_unlock(&h->lock);
}
