/* SPDX-License-Identifier: BSD-3-Clause */
/* First-fit allocation over a fixed range (area_heap.h). */
#include "node/area_heap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rounded(uint64_t len)
{
    return (len + FWDIOI_HEAP_ALIGN - 1) & ~(uint64_t)(FWDIOI_HEAP_ALIGN - 1);
}

int fwdioi_heap_init(fwdioi_heap_t *h, void *base, uint64_t size,
                     const fwdioi_heap_backing_t *back)
{
    memset(h, 0, sizeof *h);
    h->base = base;
    h->size = size & ~(uint64_t)(FWDIOI_HEAP_ALIGN - 1);
    h->cap = 16;
    h->free = malloc(h->cap * sizeof *h->free);
    if (!h->free)
        return -1;
    if (back) {
        h->back = *back;
        h->nchunks = (h->size + back->chunk - 1) / back->chunk;
        h->live = calloc(h->nchunks ? h->nchunks : 1, sizeof *h->live);
        h->committed = calloc(h->nchunks ? h->nchunks : 1, 1);
        if (!h->live || !h->committed) {
            free(h->live);
            free(h->committed);
            free(h->free);
            h->free = NULL;
            return -1;
        }
    }
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
    free(h->live);
    free(h->committed);
    h->free = NULL;
    h->live = NULL;
    h->committed = NULL;
    pthread_mutex_destroy(&h->lock);
}

/* Commit chunks [c0, c1] that are not memory yet, in runs, one call per run.
 * 0; -1 with none of them committed (lock held). */
static int commit_chunks(fwdioi_heap_t *h, uint64_t c0, uint64_t c1)
{
    uint64_t c = c0;
    while (c <= c1) {
        if (h->committed[c]) {
            c++;
            continue;
        }
        uint64_t end = c;
        while (end + 1 <= c1 && !h->committed[end + 1])
            end++;
        uint64_t off = c * h->back.chunk;
        uint64_t len = (end + 1) * h->back.chunk - off;
        if (off + len > h->size)
            len = h->size - off;
        if (h->back.commit(h->back.ctx, off, len) != 0) {
            h->commit_failures++;
            /* undo this call's runs: nothing is in them */
            for (uint64_t u = c0; u < c; u++)
                if (h->committed[u] == 2) {
                    uint64_t uo = u * h->back.chunk;
                    uint64_t ul = uo + h->back.chunk > h->size ? h->size - uo : h->back.chunk;
                    h->back.uncommit(h->back.ctx, uo, ul);
                    h->uncommits++;
                    h->committed[u] = 0;
                    h->committed_bytes -= ul;
                }
            return -1;
        }
        h->commits++;
        h->committed_bytes += len;
        for (uint64_t u = c; u <= end; u++)
            h->committed[u] = 2; /* committed by this call */
        c = end + 1;
    }
    if (h->committed_bytes > h->committed_peak)
        h->committed_peak = h->committed_bytes;
    return 0;
}

/* Give back [c, end] (idle chunks; lock held). */
static uint64_t uncommit_run(fwdioi_heap_t *h, uint64_t c, uint64_t end)
{
    uint64_t off = c * h->back.chunk;
    uint64_t len = (end + 1) * h->back.chunk - off;
    if (off + len > h->size)
        len = h->size - off;
    for (uint64_t u = c; u <= end; u++)
        h->committed[u] = 0;
    h->nidle -= end + 1 - c;
    h->back.uncommit(h->back.ctx, off, len);
    h->uncommits++;
    h->committed_bytes -= len;
    return len;
}

/* Give back idle chunks among [c0, c1], in runs: every one (`all`), or the
 * highest ones while more than keep_idle bytes are idle (first fit cuts
 * blocks from the lowest offsets, so the low chunks are the ones reused;
 * lock held). */
static uint64_t uncommit_idle(fwdioi_heap_t *h, uint64_t c0, uint64_t c1, int all)
{
    uint64_t given = 0;
    uint64_t c = c1 + 1;
    while (c > c0 && (all || h->nidle * h->back.chunk > h->back.keep_idle)) {
        c--;
        if (!h->committed[c] || h->live[c] != 0)
            continue;
        uint64_t start = c; /* a run [start, c] of idle chunks, grown downwards */
        uint64_t over = all ? UINT64_MAX : h->nidle - h->back.keep_idle / h->back.chunk;
        while (start > c0 && c + 1 - start < over && h->committed[start - 1] &&
               h->live[start - 1] == 0)
            start--;
        given += uncommit_run(h, start, c);
        c = start;
    }
    return given;
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
        if (h->live) {
            uint64_t c0 = r->off / h->back.chunk, c1 = (r->off + len - 1) / h->back.chunk;
            if (commit_chunks(h, c0, c1) != 0)
                break; /* no room on the node: the caller falls back */
            for (uint64_t c = c0; c <= c1; c++) {
                if (h->committed[c] == 1 && h->live[c] == 0)
                    h->nidle--; /* an idle chunk in use again */
                h->committed[c] = 1;
                h->live[c]++;
            }
        }
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
    if (insert_range(h, lo, off, len) == 0) {
        h->used -= len;
        if (h->live) {
            uint64_t c0 = off / h->back.chunk, c1 = (off + len - 1) / h->back.chunk;
            for (uint64_t c = c0; c <= c1; c++)
                if (--h->live[c] == 0)
                    h->nidle++;
            if (h->nidle * h->back.chunk > h->back.keep_idle)
                uncommit_idle(h, c0, c1, 0);
        }
    }
    pthread_mutex_unlock(&h->lock);
}

uint64_t fwdioi_heap_trim(fwdioi_heap_t *h)
{
    if (!h->live)
        return 0;
    pthread_mutex_lock(&h->lock);
    uint64_t given = h->nidle ? uncommit_idle(h, 0, h->nchunks - 1, 1) : 0;
    pthread_mutex_unlock(&h->lock);
    return given;
}

int fwdioi_heap_contains(const fwdioi_heap_t *h, const void *p, uint64_t len)
{
    const uint8_t *b = p;
    return h->base && b >= h->base && b <= h->base + h->size &&
           len <= (uint64_t)(h->base + h->size - b);
}

void fwdioi_heap_memory(fwdioi_heap_t *h, fwdioi_heap_memory_t *m)
{
    memset(m, 0, sizeof *m);
    if (!h->free)
        return;
    pthread_mutex_lock(&h->lock);
    m->used = h->used;
    m->committed = h->live ? h->committed_bytes : h->size;
    m->committed_peak = h->live ? h->committed_peak : h->size;
    m->idle = h->nidle * h->back.chunk;
    m->commits = h->commits;
    m->uncommits = h->uncommits;
    m->commit_failures = h->commit_failures;
    pthread_mutex_unlock(&h->lock);
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
