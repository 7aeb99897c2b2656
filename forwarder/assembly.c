#include "assembly.h"

#include <stdlib.h>
#include <string.h>

void fwdioi_assembly_init(fwdioi_assembly_t *a, const fwdioi_plan_t *plan, int writer,
                          fwdioi_flush_fn flush, fwdioi_direct_fn direct, void *flush_arg)
{
    memset(a, 0, sizeof *a);
    a->plan = plan;
    a->writer = writer;
    a->units_per_stripe = plan->stripe_size / plan->write_size;
    a->nunits = fwdioi_plan_writer_stripes(plan, writer) * a->units_per_stripe;
    a->flush = flush;
    a->direct = direct;
    a->flush_arg = flush_arg;
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

static void flush_unit(fwdioi_assembly_t *a, fwdioi_unit_t *u, uint64_t start)
{
    fwdioi_range_t *extents = u->filled.r;
    size_t n = u->filled.n;
    u->filled = (fwdioi_ranges_t){0};
    a->flush(a->flush_arg, u->buf, start, extents, n);
    u->buf = NULL;
    u->flushed = 1;
}

static int unit_untouched(const fwdioi_unit_t *u)
{
    return !u->flushed && !u->buf && u->filled.n == 0;
}

/* Length of the run of whole, untouched units starting at `offset` (a unit
 * start) that [offset, offset + len) covers; marks them flushed. */
static uint64_t take_direct_run(fwdioi_assembly_t *a, uint64_t offset, uint64_t len)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t run = 0;
    while (run < len) {
        uint64_t ulen = unit_length(p, offset + run);
        fwdioi_unit_t *u = &a->units[unit_index(a, offset + run)];
        if (ulen > len - run || !unit_untouched(u))
            break;
        u->flushed = 1;
        run += ulen;
    }
    return run;
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
        if (a->direct && start == offset) {
            uint64_t run = take_direct_run(a, offset, len);
            if (run > 0) {
                a->direct(a->flush_arg, data, offset, run);
                offset += run;
                data += run;
                len -= run;
                continue;
            }
        }
        uint64_t ulen = unit_length(p, start);
        uint64_t take = start + ulen - offset < len ? start + ulen - offset : len;
        fwdioi_unit_t *u = &a->units[unit_index(a, offset)];
        if (u->flushed) { /* every byte of a flushed unit had arrived already */
            *bad_offset = offset;
            return FWDIO_EOVERLAP;
        }
        if (!u->buf && !(u->buf = malloc(ulen)))
            return FWDIO_ENOMEM;
        int rc = fwdioi_ranges_add(&u->filled, offset - start, offset - start + take, bad_offset);
        if (rc == FWDIOI_RANGES_OVERLAP) {
            *bad_offset += start;
            return FWDIO_EOVERLAP;
        }
        if (rc != FWDIOI_RANGES_OK)
            return FWDIO_ENOMEM;
        memcpy(u->buf + (offset - start), data, take);
        if (fwdioi_ranges_covers(&u->filled, ulen))
            flush_unit(a, u, start);
        offset += take;
        data += take;
        len -= take;
    }
    return FWDIO_OK;
}

/* File offset of local unit `i` of this writer. */
static uint64_t local_unit_offset(const fwdioi_assembly_t *a, uint64_t i)
{
    const fwdioi_plan_t *p = a->plan;
    uint64_t local_stripe = i / a->units_per_stripe;
    uint64_t s;
    if (p->layout == FWDIO_LAYOUT_CYCLIC)
        s = local_stripe * (uint64_t)p->nwriters + (uint64_t)a->writer;
    else
        s = fwdioi_plan_next_stripe(p, a->writer, 0) + local_stripe;
    return s * p->stripe_size + (i % a->units_per_stripe) * p->write_size;
}

int fwdioi_assembly_flush_partial(fwdioi_assembly_t *a)
{
    int n = 0;
    for (uint64_t i = 0; a->units && i < a->nunits; i++) {
        fwdioi_unit_t *u = &a->units[i];
        if (u->buf && u->filled.n > 0) {
            flush_unit(a, u, local_unit_offset(a, i));
            n++;
        }
    }
    return n;
}

void fwdioi_assembly_free(fwdioi_assembly_t *a)
{
    for (uint64_t i = 0; a->units && i < a->nunits; i++) {
        free(a->units[i].buf);
        fwdioi_ranges_free(&a->units[i].filled);
    }
    free(a->units);
    a->units = NULL;
}
