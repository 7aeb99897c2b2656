#include "plan.h"

#include <string.h>

int fwdioi_options_resolve(const fwdio_options_t *in, int nranks, int nnodes,
                           fwdio_options_t *out)
{
    if (in)
        *out = *in;
    else
        memset(out, 0, sizeof *out);
    if (nranks < 1)
        return FWDIO_EINVAL;
    if (out->write_size == 0)
        out->write_size = FWDIO_DEFAULT_WRITE_SIZE;
    if (out->stripe_size == 0)
        out->stripe_size = out->write_size * FWDIO_DEFAULT_STRIPE_UNITS;
    if (out->stripe_size % out->write_size != 0)
        return FWDIO_EINVAL;
    /* A write unit is one assembly buffer and one pwrite: keep it addressable. */
    if (out->write_size > ((uint64_t)1 << 31))
        return FWDIO_EINVAL;
    if (out->layout != FWDIO_LAYOUT_BLOCK && out->layout != FWDIO_LAYOUT_CYCLIC)
        return FWDIO_EINVAL;
    if (out->writers < 0 || out->writer_stride < 0)
        return FWDIO_EINVAL;
    if (out->first_writer < 0 || out->first_writer >= nranks)
        return FWDIO_EINVAL;
    if (out->writers == 0) {
        long w = (long)(nnodes > 0 ? nnodes : 1) * FWDIO_DEFAULT_WRITERS_PER_NODE;
        if (w > FWDIO_DEFAULT_MAX_WRITERS)
            w = FWDIO_DEFAULT_MAX_WRITERS;
        out->writers = (int)w;
    }
    int room = nranks - out->first_writer;
    if (out->writers > room)
        out->writers = room;
    if (out->writer_stride == 0) {
        out->writer_stride = room / out->writers;
        if (out->writer_stride < 1)
            out->writer_stride = 1;
    }
    /* Clamp to the writers that fit: first + (W - 1) * stride < nranks. */
    int fit = (room - 1) / out->writer_stride + 1;
    if (out->writers > fit)
        out->writers = fit;
    out->durable = out->durable != 0;
    return FWDIO_OK;
}

void fwdioi_plan_init(fwdioi_plan_t *plan, uint64_t size, const fwdio_options_t *o, int nranks)
{
    memset(plan, 0, sizeof *plan);
    plan->size = size;
    plan->stripe_size = o->stripe_size;
    plan->write_size = o->write_size;
    plan->nstripes = (size + o->stripe_size - 1) / o->stripe_size;
    plan->nranks = nranks;
    plan->nwriters = o->writers;
    plan->first_writer = o->first_writer;
    plan->writer_stride = o->writer_stride;
    plan->layout = o->layout;
    plan->block_q = plan->nstripes / (uint64_t)plan->nwriters;
    plan->block_long = plan->nstripes % (uint64_t)plan->nwriters;
}

int fwdioi_plan_writer_rank(const fwdioi_plan_t *plan, int w)
{
    return plan->first_writer + w * plan->writer_stride;
}

int fwdioi_plan_writer_of_rank(const fwdioi_plan_t *plan, int rank)
{
    int d = rank - plan->first_writer;
    if (d < 0 || d % plan->writer_stride != 0)
        return -1;
    int w = d / plan->writer_stride;
    return w < plan->nwriters ? w : -1;
}

/*
 * Block layout: W - r writers own q stripes, then r writers own q + 1. The long
 * runs go last so that the file's short final stripe lands on a long run: no
 * two writers differ by more than one stripe of bytes.
 */
static uint64_t block_short_writers(const fwdioi_plan_t *plan)
{
    return (uint64_t)plan->nwriters - plan->block_long;
}

static uint64_t block_first_stripe(const fwdioi_plan_t *plan, int w)
{
    uint64_t uw = (uint64_t)w, nshort = block_short_writers(plan);
    return uw * plan->block_q + (uw > nshort ? uw - nshort : 0);
}

int fwdioi_plan_stripe_writer(const fwdioi_plan_t *plan, uint64_t s)
{
    if (plan->layout == FWDIO_LAYOUT_CYCLIC)
        return (int)(s % (uint64_t)plan->nwriters);
    uint64_t nshort = block_short_writers(plan);
    uint64_t short_part = nshort * plan->block_q;
    if (s < short_part)
        return (int)(s / plan->block_q);
    return (int)(nshort + (s - short_part) / (plan->block_q + 1));
}

uint64_t fwdioi_plan_writer_stripes(const fwdioi_plan_t *plan, int w)
{
    uint64_t uw = (uint64_t)w, W = (uint64_t)plan->nwriters;
    if (plan->layout == FWDIO_LAYOUT_CYCLIC)
        return plan->nstripes / W + (uw < plan->nstripes % W ? 1 : 0);
    return plan->block_q + (uw >= block_short_writers(plan) ? 1 : 0);
}

uint64_t fwdioi_plan_local_stripe(const fwdioi_plan_t *plan, uint64_t s)
{
    if (plan->layout == FWDIO_LAYOUT_CYCLIC)
        return s / (uint64_t)plan->nwriters;
    return s - block_first_stripe(plan, fwdioi_plan_stripe_writer(plan, s));
}

uint64_t fwdioi_plan_next_stripe(const fwdioi_plan_t *plan, int w, uint64_t s)
{
    if (s >= plan->nstripes)
        return plan->nstripes;
    uint64_t next;
    if (plan->layout == FWDIO_LAYOUT_CYCLIC) {
        uint64_t W = (uint64_t)plan->nwriters;
        next = s + ((uint64_t)w + W - s % W) % W;
    } else {
        uint64_t first = block_first_stripe(plan, w);
        uint64_t end = first + fwdioi_plan_writer_stripes(plan, w);
        next = s < first ? first : s;
        if (next >= end)
            return plan->nstripes;
    }
    return next < plan->nstripes ? next : plan->nstripes;
}

uint64_t fwdioi_plan_writer_bytes(const fwdioi_plan_t *plan, int w)
{
    uint64_t n = fwdioi_plan_writer_stripes(plan, w);
    if (n == 0)
        return 0;
    uint64_t bytes = n * plan->stripe_size;
    /* The last stripe of the file may be short. */
    if (fwdioi_plan_stripe_writer(plan, plan->nstripes - 1) == w)
        bytes -= plan->nstripes * plan->stripe_size - plan->size;
    return bytes;
}

void fwdioi_plan_writers_in_range(const fwdioi_plan_t *plan, uint64_t s0, uint64_t s1,
                                  int *first, int *count)
{
    *first = fwdioi_plan_stripe_writer(plan, s0);
    if (plan->layout == FWDIO_LAYOUT_CYCLIC) {
        uint64_t n = s1 - s0 + 1;
        *count = n < (uint64_t)plan->nwriters ? (int)n : plan->nwriters;
    } else {
        *count = fwdioi_plan_stripe_writer(plan, s1) - *first + 1;
    }
}
