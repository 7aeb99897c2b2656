/* SPDX-License-Identifier: BSD-3-Clause */
#include "write/assembly.h"

#include <stdlib.h>
#include <string.h>

/* Units per page of the touched-units bitmap: 4 KiB of bits. */
enum { PAGE_UNITS = 32768, PAGE_WORDS = PAGE_UNITS / 64 };
/* What malloc keeps beside each block; counted with the bookkeeping so that
 * the count stays near what the process really holds. */
enum { MALLOC_OVERHEAD = 16 };
/* Bytes of one allocated bitmap page. */
#define PAGE_BYTES ((uint64_t)PAGE_WORDS * sizeof(uint64_t) + MALLOC_OVERHEAD)
/* Smallest hash table; it grows at half full and shrinks at an eighth. */
enum { MIN_SLOTS = 16 };

/* Stands for the bits of a page whose units are all touched; never read. */
static uint64_t page_full_marker;
#define PAGE_FULL (&page_full_marker)

void fwdioi_assembly_init(fwdioi_assembly_t *a, const fwdioi_plan_t *plan, int writer,
                          const fwdioi_assembly_hooks_t *hooks)
{
    memset(a, 0, sizeof *a);
    a->plan = plan;
    a->writer = writer;
    a->units_per_stripe = plan->stripe_size / plan->write_size;
    a->nunits = fwdioi_plan_writer_stripes(plan, writer) * a->units_per_stripe;
    a->hooks = *hooks;
}

/* ---- the plan's geometry ---- */

/* File offset of the unit holding `offset`, and its length (the file's last unit
 * may be short). */
static uint64_t unit_start(const fwdioi_plan_t *p, uint64_t offset)
{
    return offset - offset % p->write_size;
}

static uint64_t unit_length(const fwdioi_plan_t *p, uint64_t start)
{
    return p->size - start < p->write_size ? p->size - start : p->write_size;
}

static uint64_t unit_index(const fwdioi_assembly_t *a, uint64_t offset)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t s = offset / p->stripe_size;
    return fwdioi_plan_local_stripe(p, s) * a->units_per_stripe +
           (offset % p->stripe_size) / p->write_size;
}

/* File offset of local unit `i` of this writer. */
static uint64_t local_unit_offset(const fwdioi_assembly_t *a, uint64_t i)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t s = fwdioi_plan_writer_stripe_at(p, a->writer, i / a->units_per_stripe);
    return s * p->stripe_size + (i % a->units_per_stripe) * p->write_size;
}

/* ---- bookkeeping bytes ---- */

/* Add [start, end) to a unit's set (of its `ulen` bytes), counting the
 * set's memory: strictly (an overlap is refused) or, where the file allows
 * overlaps, as a union (*added: the bytes new to the set). */
static int set_add_counted(fwdioi_assembly_t *a, fwdioi_byteset_t *set, uint64_t ulen,
                           uint64_t start, uint64_t end, int strict, uint64_t *overlap_at,
                           uint64_t *added)
{
    uint64_t before = fwdioi_byteset_memory(set);
    int rc = fwdioi_byteset_add(set, ulen, start, end, strict, overlap_at, added);
    a->meta = a->meta - before + fwdioi_byteset_memory(set); /* a bitmap may be smaller */
    return rc;
}

static void set_free_counted(fwdioi_assembly_t *a, fwdioi_byteset_t *set)
{
    a->meta -= fwdioi_byteset_memory(set);
    fwdioi_byteset_free(set);
}

/* Tell the caller how the bookkeeping changed since the last call. */
static void report_meta(fwdioi_assembly_t *a)
{
    if (a->meta == a->meta_reported)
        return;
    int64_t delta = a->meta > a->meta_reported ? (int64_t)(a->meta - a->meta_reported)
                                               : -(int64_t)(a->meta_reported - a->meta);
    a->meta_reported = a->meta;
    if (a->hooks.meta)
        a->hooks.meta(a->hooks.arg, delta);
}

/* ---- the bitmap of touched units ---- */

static uint64_t page_units(const fwdioi_assembly_t *a, uint64_t page)
{
    uint64_t first = page * PAGE_UNITS;
    return a->nunits - first < PAGE_UNITS ? a->nunits - first : PAGE_UNITS;
}

/* The page directory covers the pages up to the highest unit touched, and
 * grows (doubling) as higher units are: a stream's plan reaches 2^62 bytes,
 * and a file written front to back needs only the pages it has reached.
 * Units beyond the directory are untouched. */
static int pages_cover(fwdioi_assembly_t *a, uint64_t last_unit)
{
    uint64_t need = last_unit / PAGE_UNITS + 1;
    if (need <= a->npages)
        return 0;
    uint64_t total = (a->nunits + PAGE_UNITS - 1) / PAGE_UNITS;
    uint64_t n = 2 * a->npages > need ? 2 * a->npages : need;
    if (n > total)
        n = total > need ? total : need;
    fwdioi_unit_page_t *pages = realloc(a->pages, n * sizeof *pages);
    if (!pages)
        return -1;
    memset(pages + a->npages, 0, (n - a->npages) * sizeof *pages);
    a->meta += (n - a->npages) * sizeof *pages + (a->npages == 0 ? MALLOC_OVERHEAD : 0);
    a->pages = pages;
    a->npages = n;
    return 0;
}

static int is_touched(const fwdioi_assembly_t *a, uint64_t i)
{
    if (i / PAGE_UNITS >= a->npages)
        return 0;
    const fwdioi_unit_page_t *pg = &a->pages[i / PAGE_UNITS];
    if (!pg->bits || pg->bits == PAGE_FULL)
        return pg->bits != NULL;
    uint64_t b = i % PAGE_UNITS;
    return (int)((pg->bits[b / 64] >> (b % 64)) & 1);
}

/* Untouched units from `i` on, at most n: whole pages are skipped at once. */
static uint64_t untouched_run(const fwdioi_assembly_t *a, uint64_t i, uint64_t n)
{
    uint64_t run = 0;
    while (run < n) {
        if ((i + run) / PAGE_UNITS >= a->npages)
            return n; /* beyond the directory: untouched */
        const fwdioi_unit_page_t *pg = &a->pages[(i + run) / PAGE_UNITS];
        uint64_t b = (i + run) % PAGE_UNITS;
        uint64_t end = PAGE_UNITS - b < n - run ? PAGE_UNITS : b + (n - run);
        if (!pg->bits) {
            run += end - b;
            continue;
        }
        if (pg->bits == PAGE_FULL)
            return run;
        while (b < end) {
            uint64_t k = 64 - b % 64 < end - b ? 64 - b % 64 : end - b;
            uint64_t w = pg->bits[b / 64] >> (b % 64);
            if (k < 64)
                w &= ((uint64_t)1 << k) - 1;
            if (w)
                return run + (uint64_t)__builtin_ctzll(w);
            run += k;
            b += k;
        }
    }
    return run;
}

static void set_bits(uint64_t *bits, uint64_t b, uint64_t n)
{
    while (n > 0) {
        uint64_t k = 64 - b % 64 < n ? 64 - b % 64 : n;
        bits[b / 64] |= (k == 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1) << (b % 64);
        b += k;
        n -= k;
    }
}

/* Mark units [i, i + n), all untouched, as touched. A page that fills up
 * gives its bits back for the marker. */
static int mark_run(fwdioi_assembly_t *a, uint64_t i, uint64_t n)
{
    while (n > 0) {
        uint64_t page = i / PAGE_UNITS, b = i % PAGE_UNITS, total = page_units(a, page);
        uint64_t take = total - b < n ? total - b : n;
        fwdioi_unit_page_t *pg = &a->pages[page];
        if (pg->set + take == total) {
            if (pg->bits) {
                free(pg->bits);
                a->meta -= PAGE_BYTES;
            }
            pg->bits = PAGE_FULL;
        } else {
            if (!pg->bits) {
                pg->bits = calloc(PAGE_WORDS, sizeof *pg->bits);
                if (!pg->bits)
                    return -1;
                a->meta += PAGE_BYTES;
            }
            set_bits(pg->bits, b, take);
        }
        pg->set += (uint32_t)take;
        i += take;
        n -= take;
    }
    return 0;
}

/* ---- the table of units in progress (open addressing, linear probing) ---- */

static size_t home_slot(const fwdioi_assembly_t *a, uint64_t index)
{
    return (size_t)((index * 0x9E3779B97F4A7C15ull) >> a->shift);
}

static fwdioi_unit_t *table_find(fwdioi_assembly_t *a, uint64_t index)
{
    if (a->count == 0)
        return NULL;
    for (size_t s = home_slot(a, index);; s = (s + 1) & (a->cap - 1)) {
        if (a->slots[s].index == index)
            return &a->slots[s];
        if (a->slots[s].index == FWDIOI_UNIT_NONE)
            return NULL;
    }
}

/* Rehash into `cap` slots (a power of two, above the count); 0 frees it. */
static int table_resize(fwdioi_assembly_t *a, size_t cap)
{
    fwdioi_unit_t *old = a->slots, *slots = NULL;
    size_t old_cap = a->cap;
    if (cap > 0) {
        slots = malloc(cap * sizeof *slots);
        if (!slots)
            return -1;
        for (size_t s = 0; s < cap; s++)
            slots[s].index = FWDIOI_UNIT_NONE;
    }
    a->slots = slots;
    a->cap = cap;
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap)
        bits++;
    a->shift = 64 - bits;
    for (size_t s = 0; s < old_cap; s++) {
        if (old[s].index == FWDIOI_UNIT_NONE)
            continue;
        size_t t = home_slot(a, old[s].index);
        while (slots[t].index != FWDIOI_UNIT_NONE)
            t = (t + 1) & (cap - 1);
        slots[t] = old[s];
    }
    free(old);
    if (old_cap)
        a->meta -= old_cap * sizeof *slots + MALLOC_OVERHEAD;
    if (cap)
        a->meta += cap * sizeof *slots + MALLOC_OVERHEAD;
    return 0;
}

static fwdioi_unit_t *table_insert(fwdioi_assembly_t *a, uint64_t index)
{
    if (2 * (a->count + 1) > a->cap &&
        table_resize(a, a->cap ? 2 * a->cap : (size_t)MIN_SLOTS) != 0)
        return NULL;
    size_t s = home_slot(a, index);
    while (a->slots[s].index != FWDIOI_UNIT_NONE)
        s = (s + 1) & (a->cap - 1);
    fwdioi_unit_t *u = &a->slots[s];
    memset(u, 0, sizeof *u);
    u->index = index;
    a->count++;
    return u;
}

/* Remove `u` (its buffer and ranges already gone). Entries after it move back
 * into the hole unless that would put them before their home slot. */
static void table_remove(fwdioi_assembly_t *a, fwdioi_unit_t *u)
{
    const size_t mask = a->cap - 1;
    size_t hole = (size_t)(u - a->slots);
    for (size_t s = (hole + 1) & mask; a->slots[s].index != FWDIOI_UNIT_NONE; s = (s + 1) & mask) {
        size_t home = home_slot(a, a->slots[s].index);
        if (((s - home) & mask) >= ((s - hole) & mask)) {
            a->slots[hole] = a->slots[s];
            hole = s;
        }
    }
    a->slots[hole].index = FWDIOI_UNIT_NONE;
    a->count--;
    /* Keep the table near its contents; a failed shrink keeps the old one. */
    if (a->count == 0)
        table_resize(a, 0);
    else if (a->cap > MIN_SLOTS && 8 * a->count < a->cap)
        table_resize(a, a->cap / 2);
}

/* ---- assembling ---- */

/* Hand the unit's buffer and pending extents to flush (the extents NULL
 * when there was no memory to list them: flush fails the unit). */
static uint64_t flush_buffer(fwdioi_assembly_t *a, fwdioi_unit_t *u, uint64_t start)
{
    uint64_t size = unit_length(a->plan, start);
    size_t n;
    fwdioi_range_t *extents = fwdioi_byteset_list(&u->pending, &n);
    uint8_t *buf = u->buf;
    set_free_counted(a, &u->pending);
    u->pending_bytes = 0;
    u->buf = NULL;
    a->nbuffered--;
    a->hooks.flush(a->hooks.arg, buf, size, start, extents, n);
    return size;
}

/* Bytes of the run of whole, untouched units starting at `offset` (a unit
 * start) that [offset, offset + len) covers; marks them touched, which with
 * no table entry means complete. */
static int take_whole_units(fwdioi_assembly_t *a, uint64_t offset, uint64_t len, uint64_t *bytes)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t n = len / p->write_size;
    if (offset + len == p->size && len % p->write_size != 0)
        n++; /* the file's short last unit */
    *bytes = 0;
    if (n == 0)
        return FWDIO_OK;
    uint64_t i = unit_index(a, offset);
    uint64_t run = untouched_run(a, i, n);
    if (run == 0)
        return FWDIO_OK;
    if (mark_run(a, i, run) != 0)
        return FWDIO_ENOMEM;
    *bytes = run * p->write_size < p->size - offset ? run * p->write_size : p->size - offset;
    return FWDIO_OK;
}

/* Take the part of a piece that falls in one unit. */
static int add_to_unit(fwdioi_assembly_t *a, uint64_t start, uint64_t offset, const uint8_t *data,
                       uint64_t take, uint64_t *bad_offset)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t ulen = unit_length(p, start);
    uint64_t i = unit_index(a, offset);
    fwdioi_unit_t *u;
    if (is_touched(a, i)) {
        u = table_find(a, i);
        if (!u) { /* every byte of a complete unit had arrived already */
            if (!a->overlaps) {
                *bad_offset = offset;
                return FWDIO_EOVERLAP;
            }
            /* overlaps allowed: these bytes are one of the copies that land */
            a->hooks.direct(a->hooks.arg, data, offset, take);
            return FWDIO_OK;
        }
    } else {
        u = table_insert(a, i);
        if (!u)
            return FWDIO_ENOMEM;
        if (mark_run(a, i, 1) != 0) {
            table_remove(a, u);
            return FWDIO_ENOMEM;
        }
    }
    uint64_t added;
    int rc = set_add_counted(a, &u->filled, ulen, offset - start, offset - start + take,
                             !a->overlaps, bad_offset, &added);
    if (rc == FWDIOI_RANGES_OVERLAP) {
        *bad_offset += start;
        return FWDIO_EOVERLAP;
    }
    if (rc != FWDIOI_RANGES_OK)
        return FWDIO_ENOMEM;
    int whole = fwdioi_byteset_covers(&u->filled, ulen);

    /* A piece that completes a unit without a buffer goes direct: a buffer
     * would only be copied into and flushed at once. */
    if (!u->buf && !whole && a->hooks.reserve(a->hooks.arg, ulen)) {
        u->buf = malloc(ulen);
        if (u->buf)
            a->nbuffered++;
        else
            a->hooks.unreserve(a->hooks.arg, ulen);
    }
    if (!u->buf) {
        /* No room for a buffer: write the piece from the message itself. */
        a->hooks.direct(a->hooks.arg, data, offset, take);
        if (a->overlaps && !whole && !fwdioi_byteset_counting(&u->filled)) {
            a->meta -= fwdioi_byteset_memory(&u->filled); /* see fwdioi_unit_t */
            fwdioi_byteset_count_only(&u->filled);
        }
    } else {
        /* Pending bytes are a union: with overlaps allowed, a later copy of
         * a byte that is still in the buffer replaces it there. */
        uint64_t ignored, fresh;
        if (set_add_counted(a, &u->pending, ulen, offset - start, offset - start + take, 0,
                            &ignored, &fresh) != FWDIOI_RANGES_OK)
            return FWDIO_ENOMEM;
        memcpy(u->buf + (offset - start), data, take);
        a->copied += take;
        u->pending_bytes += fresh;
    }
    if (whole) { /* complete: touched and out of the table */
        if (u->buf)
            flush_buffer(a, u, start);
        set_free_counted(a, &u->filled);
        table_remove(a, u);
    }
    return FWDIO_OK;
}

static int add_pieces(fwdioi_assembly_t *a, uint64_t offset, const uint8_t *data, uint64_t len,
                      uint64_t *bad_offset)
{
    const fwdioi_plan_t *p = a->plan;
    if (pages_cover(a, unit_index(a, offset + len - 1)) != 0)
        return FWDIO_ENOMEM;
    while (len > 0) {
        uint64_t start = unit_start(p, offset), run = 0;
        if (start == offset) {
            int rc = take_whole_units(a, offset, len, &run);
            if (rc != FWDIO_OK)
                return rc;
        }
        if (run > 0) { /* whole empty units: no copy at all */
            a->hooks.direct(a->hooks.arg, data, offset, run);
        } else {
            uint64_t end = start + unit_length(p, start);
            run = end - offset < len ? end - offset : len;
            int rc = add_to_unit(a, start, offset, data, run, bad_offset);
            if (rc != FWDIO_OK)
                return rc;
        }
        offset += run;
        data += run;
        len -= run;
    }
    return FWDIO_OK;
}

int fwdioi_assembly_add(fwdioi_assembly_t *a, uint64_t offset, const uint8_t *data,
                        uint64_t len, uint64_t *bad_offset)
{
    if (len == 0)
        return FWDIO_OK;
    /* The writer checked the piece already (writer.c); the bitmap runs rely
     * on it: the piece's units then have consecutive local indices. */
    if (!fwdioi_plan_owns(a->plan, a->writer, offset, len)) {
        *bad_offset = offset;
        return FWDIO_EINVAL;
    }
    int rc = add_pieces(a, offset, data, len, bad_offset);
    report_meta(a);
    return rc;
}

int fwdioi_assembly_unit_buffered(fwdioi_assembly_t *a, uint64_t offset)
{
    uint64_t i = unit_index(a, offset);
    if (!is_touched(a, i))
        return 0;
    const fwdioi_unit_t *u = table_find(a, i);
    return !u || u->buf != NULL;
}

/* The buffered unit with the most pending bytes, or NULL. */
static fwdioi_unit_t *fullest(const fwdioi_assembly_t *a)
{
    fwdioi_unit_t *best = NULL;
    for (size_t s = 0; a->nbuffered > 0 && s < a->cap; s++) {
        fwdioi_unit_t *u = &a->slots[s];
        if (u->index != FWDIOI_UNIT_NONE && u->buf &&
            (!best || u->pending_bytes > best->pending_bytes))
            best = u;
    }
    return best;
}

uint64_t fwdioi_assembly_fullest_pending(const fwdioi_assembly_t *a)
{
    const fwdioi_unit_t *u = fullest(a);
    return u ? u->pending_bytes : 0;
}

uint64_t fwdioi_assembly_flush_fullest(fwdioi_assembly_t *a, uint64_t *pending_bytes)
{
    fwdioi_unit_t *u = fullest(a);
    *pending_bytes = u ? u->pending_bytes : 0;
    if (!u)
        return 0;
    uint64_t size = flush_buffer(a, u, local_unit_offset(a, u->index));
    report_meta(a);
    return size;
}

int fwdioi_assembly_flush_partial(fwdioi_assembly_t *a)
{
    int n = 0;
    for (size_t s = 0; a->nbuffered > 0 && s < a->cap; s++) {
        fwdioi_unit_t *u = &a->slots[s];
        if (u->index != FWDIOI_UNIT_NONE && u->buf) {
            flush_buffer(a, u, local_unit_offset(a, u->index));
            n++;
        }
    }
    report_meta(a);
    return n;
}

size_t fwdioi_assembly_units_in_progress(const fwdioi_assembly_t *a) { return a->count; }

uint64_t fwdioi_assembly_meta_bytes(const fwdioi_assembly_t *a) { return a->meta_reported; }

void fwdioi_assembly_forget(fwdioi_assembly_t *a)
{
    fwdioi_assembly_flush_partial(a); /* none, when the caller keeps the rule */
    fwdioi_assembly_free(a);
}

void fwdioi_assembly_free(fwdioi_assembly_t *a)
{
    for (size_t s = 0; s < a->cap; s++) {
        fwdioi_unit_t *u = &a->slots[s];
        if (u->index == FWDIOI_UNIT_NONE)
            continue;
        if (u->buf) {
            free(u->buf);
            a->hooks.unreserve(a->hooks.arg, unit_length(a->plan, local_unit_offset(a, u->index)));
        }
        fwdioi_byteset_free(&u->filled);
        fwdioi_byteset_free(&u->pending);
    }
    free(a->slots);
    a->slots = NULL;
    a->cap = a->count = a->nbuffered = 0;
    for (uint64_t i = 0; a->pages && i < a->npages; i++)
        if (a->pages[i].bits != PAGE_FULL)
            free(a->pages[i].bits);
    free(a->pages);
    a->pages = NULL;
    a->npages = 0;
    a->meta = 0;
    report_meta(a);
}
