#include "assembly.h"

#include <stdlib.h>
#include <string.h>

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

/* Hand the unit's buffer and pending extents to flush. */
static uint64_t flush_buffer(fwdioi_assembly_t *a, fwdioi_unit_t *u, uint64_t start)
{
    uint64_t size = unit_length(a->plan, start);
    fwdioi_range_t *extents = u->pending.r;
    size_t n = u->pending.n;
    u->pending = (fwdioi_ranges_t){0};
    a->hooks.flush(a->hooks.arg, u->buf, size, start, extents, n);
    u->buf = NULL;
    return size;
}

static void mark_complete(fwdioi_unit_t *u)
{
    u->complete = 1;
    fwdioi_ranges_free(&u->filled);
}

static int unit_untouched(const fwdioi_unit_t *u)
{
    return !u->complete && !u->buf && u->filled.n == 0;
}

/* Length of the run of whole, untouched units starting at `offset` (a unit
 * start) that [offset, offset + len) covers; marks them complete. */
static uint64_t take_whole_units(fwdioi_assembly_t *a, uint64_t offset, uint64_t len)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t run = 0;
    while (run < len) {
        uint64_t ulen = unit_length(p, offset + run);
        fwdioi_unit_t *u = &a->units[unit_index(a, offset + run)];
        if (ulen > len - run || !unit_untouched(u))
            break;
        mark_complete(u);
        run += ulen;
    }
    return run;
}

/* Take the part of a piece that falls in one unit. */
static int add_to_unit(fwdioi_assembly_t *a, uint64_t start, uint64_t offset, const uint8_t *data,
                       uint64_t take, uint64_t *bad_offset)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t ulen = unit_length(p, start);
    fwdioi_unit_t *u = &a->units[unit_index(a, offset)];
    if (u->complete) { /* every byte of a complete unit had arrived already */
        *bad_offset = offset;
        return FWDIO_EOVERLAP;
    }
    int rc = fwdioi_ranges_add(&u->filled, offset - start, offset - start + take, bad_offset);
    if (rc == FWDIOI_RANGES_OVERLAP) {
        *bad_offset += start;
        return FWDIO_EOVERLAP;
    }
    if (rc != FWDIOI_RANGES_OK)
        return FWDIO_ENOMEM;
    int whole = fwdioi_ranges_covers(&u->filled, ulen);

    if (!u->buf && a->hooks.reserve(a->hooks.arg, ulen)) {
        u->buf = malloc(ulen);
        if (!u->buf)
            a->hooks.unreserve(a->hooks.arg, ulen);
    }
    if (!u->buf) {
        /* No room for a buffer: write the piece from the message itself. */
        a->hooks.direct(a->hooks.arg, data, offset, take);
    } else {
        uint64_t ignored;
        if (fwdioi_ranges_add(&u->pending, offset - start, offset - start + take, &ignored) !=
            FWDIOI_RANGES_OK)
            return FWDIO_ENOMEM;
        memcpy(u->buf + (offset - start), data, take);
    }
    if (whole) {
        if (u->buf)
            flush_buffer(a, u, start);
        mark_complete(u);
    }
    return FWDIO_OK;
}

int fwdioi_assembly_add(fwdioi_assembly_t *a, uint64_t offset, const uint8_t *data,
                        uint64_t len, uint64_t *bad_offset)
{
    const fwdioi_plan_t *p = a->plan;
    if (!a->units && len > 0) {
        a->units = calloc(a->nunits, sizeof *a->units);
        if (!a->units)
            return FWDIO_ENOMEM;
    }
    while (len > 0) {
        uint64_t start = unit_start(p, offset);
        uint64_t run = start == offset ? take_whole_units(a, offset, len) : 0;
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

/* Index of the buffered unit with the most pending bytes, or UINT64_MAX. */
static uint64_t fullest(const fwdioi_assembly_t *a, uint64_t *pending_bytes)
{
    uint64_t best = UINT64_MAX, best_bytes = 0;
    for (uint64_t i = 0; a->units && i < a->nunits; i++) {
        const fwdioi_unit_t *u = &a->units[i];
        if (!u->buf)
            continue;
        uint64_t b = fwdioi_ranges_bytes(&u->pending);
        if (best == UINT64_MAX || b > best_bytes) {
            best = i;
            best_bytes = b;
        }
    }
    *pending_bytes = best_bytes;
    return best;
}

uint64_t fwdioi_assembly_fullest_pending(const fwdioi_assembly_t *a)
{
    uint64_t bytes;
    return fullest(a, &bytes) == UINT64_MAX ? 0 : bytes;
}

uint64_t fwdioi_assembly_flush_fullest(fwdioi_assembly_t *a, uint64_t *pending_bytes)
{
    uint64_t best = fullest(a, pending_bytes);
    if (best == UINT64_MAX)
        return 0;
    return flush_buffer(a, &a->units[best], local_unit_offset(a, best));
}

int fwdioi_assembly_flush_partial(fwdioi_assembly_t *a)
{
    int n = 0;
    for (uint64_t i = 0; a->units && i < a->nunits; i++) {
        fwdioi_unit_t *u = &a->units[i];
        if (u->buf) {
            flush_buffer(a, u, local_unit_offset(a, i));
            n++;
        }
    }
    return n;
}

void fwdioi_assembly_free(fwdioi_assembly_t *a)
{
    for (uint64_t i = 0; a->units && i < a->nunits; i++) {
        fwdioi_unit_t *u = &a->units[i];
        if (u->buf) {
            free(u->buf);
            a->hooks.unreserve(a->hooks.arg, unit_length(a->plan, local_unit_offset(a, i)));
        }
        fwdioi_ranges_free(&u->filled);
        fwdioi_ranges_free(&u->pending);
    }
    free(a->units);
    a->units = NULL;
}
