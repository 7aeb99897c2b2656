/* SPDX-License-Identifier: BSD-3-Clause */
#include "ranges.h"

#include <stdlib.h>
#include <string.h>

typedef struct fwdioi_range_node {
    uint64_t start, end;
    uint32_t left, right; /* slots; 0: none. A free slot's `left` links the free list. */
    uint32_t prio;
    uint32_t unused;
} node_t;

/* What malloc keeps beside a block (counted as the assembly counts it). */
enum { MALLOC_OVERHEAD = 16 };

/* xorshift32: the priorities need only be spread, not unpredictable. */
static uint32_t next_prio(fwdioi_ranges_t *set)
{
    uint32_t x = set->rng ? set->rng : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    set->rng = x;
    return x;
}

/* A slot for a new node (the pool may move), or 0 without memory. */
static uint32_t node_new(fwdioi_ranges_t *set)
{
    if (set->free_head) {
        uint32_t i = set->free_head;
        set->free_head = set->pool[i].left;
        return i;
    }
    if (set->used + 1 >= set->cap) {
        if (set->cap >= UINT32_MAX / 2)
            return 0;
        uint32_t cap = set->cap ? 2 * set->cap : 8;
        node_t *pool = realloc(set->pool, (size_t)cap * sizeof *pool);
        if (!pool)
            return 0;
        set->pool = pool;
        set->cap = cap;
    }
    return ++set->used; /* slot 0 is never handed out */
}

static void node_release(fwdioi_ranges_t *set, uint32_t i)
{
    set->pool[i].left = set->free_head;
    set->free_head = i;
}

/* Split tree t into l (starts < key) and r (starts >= key). */
static void split(node_t *p, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
    } else if (p[t].start < key) {
        split(p, p[t].right, key, &p[t].right, r);
        *l = t;
    } else {
        split(p, p[t].left, key, l, &p[t].left);
        *r = t;
    }
}

/* Join trees a and b, every start in a below every start in b. */
static uint32_t join(node_t *p, uint32_t a, uint32_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (p[a].prio > p[b].prio) {
        p[a].right = join(p, p[a].right, b);
        return a;
    }
    p[b].left = join(p, a, p[b].left);
    return b;
}

/* Take the node of the highest start out of t (non-empty): the new tree. */
static uint32_t pop_last(node_t *p, uint32_t t, uint32_t *last)
{
    if (!p[t].right) {
        *last = t;
        return p[t].left;
    }
    p[t].right = pop_last(p, p[t].right, last);
    return t;
}

/* Free every node of t; their bytes and count go, the highest end is kept. */
static void release_tree(fwdioi_ranges_t *set, uint32_t t, uint64_t *bytes, size_t *count,
                         uint64_t *max_end)
{
    while (t) {
        node_t *n = &set->pool[t];
        release_tree(set, n->left, bytes, count, max_end);
        uint32_t right = n->right;
        *bytes += n->end - n->start;
        (*count)++;
        if (n->end > *max_end)
            *max_end = n->end;
        node_release(set, t);
        t = right;
    }
}

/* The range of the lowest start among those ending after pos, or 0. */
static uint32_t first_ending_after(const fwdioi_ranges_t *set, uint64_t pos)
{
    uint32_t t = set->root, best = 0;
    while (t) {
        if (set->pool[t].end > pos) {
            best = t;
            t = set->pool[t].left;
        } else {
            t = set->pool[t].right;
        }
    }
    return best;
}

int fwdioi_ranges_touch(const fwdioi_ranges_t *set, uint64_t start, uint64_t end)
{
    uint32_t i = first_ending_after(set, start);
    return i && set->pool[i].start < end;
}

int fwdioi_ranges_neighbour(const fwdioi_ranges_t *set, uint64_t pos, fwdioi_range_t *out)
{
    uint32_t t = set->root, below = 0, lowest = 0;
    while (t) {
        if (set->pool[t].start <= pos) {
            below = t;
            t = set->pool[t].right;
        } else {
            lowest = t; /* the lowest start above pos seen so far */
            t = set->pool[t].left;
        }
    }
    uint32_t i = below ? below : lowest;
    if (!i)
        return 0;
    *out = (fwdioi_range_t){set->pool[i].start, set->pool[i].end};
    return 1;
}

int fwdioi_ranges_add(fwdioi_ranges_t *set, uint64_t start, uint64_t end, uint64_t *overlap_at)
{
    uint32_t i = first_ending_after(set, start);
    if (i && set->pool[i].start < end) {
        *overlap_at = set->pool[i].start > start ? set->pool[i].start : start;
        return FWDIOI_RANGES_OVERLAP;
    }
    uint64_t added;
    return fwdioi_ranges_merge(set, start, end, &added);
}

int fwdioi_ranges_merge(fwdioi_ranges_t *set, uint64_t start, uint64_t end, uint64_t *added)
{
    *added = 0;
    uint32_t fresh = node_new(set);
    if (!fresh)
        return FWDIOI_RANGES_NOMEM;
    node_t *p = set->pool;
    uint64_t lo = start, hi = end, absorbed = 0;
    size_t gone = 0;
    uint32_t before, rest, within, after;
    split(p, set->root, start, &before, &rest);
    if (before) { /* the range just before, if it reaches start, joins */
        uint32_t last = before;
        while (p[last].right)
            last = p[last].right;
        if (p[last].end >= start) {
            before = pop_last(p, before, &last);
            lo = p[last].start;
            hi = p[last].end > hi ? p[last].end : hi;
            absorbed += p[last].end - p[last].start;
            gone++;
            node_release(set, last);
        }
    }
    /* Every range starting at or before hi joins (they are disjoint: the
     * last of them ends before the first one left starts). */
    if (hi == UINT64_MAX) {
        within = rest;
        after = 0;
    } else {
        split(p, rest, hi + 1, &within, &after);
    }
    release_tree(set, within, &absorbed, &gone, &hi);
    p[fresh] = (node_t){.start = lo, .end = hi, .prio = next_prio(set)};
    set->root = join(p, join(p, before, fresh), after);
    set->n = set->n + 1 - gone;
    *added = (hi - lo) - absorbed;
    set->bytes += *added;
    return FWDIOI_RANGES_OK;
}

uint64_t fwdioi_ranges_bytes(const fwdioi_ranges_t *set)
{
    return set->bytes;
}

int fwdioi_ranges_covers(const fwdioi_ranges_t *set, uint64_t len)
{
    return set->n == 1 && set->pool[set->root].start == 0 && set->pool[set->root].end == len;
}

static void list_into(const node_t *p, uint32_t t, fwdioi_range_t *out, size_t *k)
{
    while (t) {
        list_into(p, p[t].left, out, k);
        out[(*k)++] = (fwdioi_range_t){p[t].start, p[t].end};
        t = p[t].right;
    }
}

fwdioi_range_t *fwdioi_ranges_list(const fwdioi_ranges_t *set)
{
    if (set->n == 0)
        return NULL;
    fwdioi_range_t *out = malloc(set->n * sizeof *out);
    size_t k = 0;
    if (out)
        list_into(set->pool, set->root, out, &k);
    return out;
}

static unsigned height(const node_t *p, uint32_t t)
{
    if (!t)
        return 0;
    unsigned l = height(p, p[t].left), r = height(p, p[t].right);
    return 1 + (l > r ? l : r);
}

unsigned fwdioi_ranges_height(const fwdioi_ranges_t *set)
{
    return height(set->pool, set->root);
}

uint64_t fwdioi_ranges_memory(const fwdioi_ranges_t *set)
{
    return set->cap ? (uint64_t)set->cap * sizeof(node_t) + MALLOC_OVERHEAD : 0;
}

void fwdioi_ranges_free(fwdioi_ranges_t *set)
{
    free(set->pool);
    memset(set, 0, sizeof *set);
}
