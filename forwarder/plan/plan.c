/* SPDX-License-Identifier: BSD-3-Clause */
#include "plan/plan.h"
#include "plan/placement.h"

#include "log.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Two writers per node up to FWDIO_DEFAULT_MAX_WRITERS, past that many
 * nodes one per node (ROMIO's default of an aggregator per node): a writer's
 * share stays about one node's ranks as the job grows. */
static int default_writers(int nnodes)
{
    long n = nnodes > 0 ? nnodes : 1, w = n * FWDIO_DEFAULT_WRITERS_PER_NODE;
    if (w > FWDIO_DEFAULT_MAX_WRITERS)
        w = n > FWDIO_DEFAULT_MAX_WRITERS ? n : FWDIO_DEFAULT_MAX_WRITERS;
    return (int)w;
}

int fwdio_default_writers(int nranks, int nnodes)
{
    if (nranks < 1 || nnodes < 1)
        return FWDIO_EINVAL;
    int w = default_writers(nnodes);
    return w < nranks ? w : nranks;
}

/* The checks of one field or pair of fields, each refusal with its reason. */
static int check_ranges(const fwdio_options_t *o, int nranks, fwdioi_origins_t *why)
{
    char a[FWDIOI_ORIGIN_LEN], b[FWDIOI_ORIGIN_LEN];
    const unsigned long long write = o->write_size, stripe = o->stripe_size;
    if (write > stripe)
        return fwdioi_refuse(why,
                             "write_size %llu%s is larger than stripe_size %llu%s: a stripe is a "
                             "whole number of write units",
                             write, fwdioi_origin(why, "write_size", a, sizeof a), stripe,
                             fwdioi_origin(why, "stripe_size", b, sizeof b));
    if (stripe % write != 0)
        return fwdioi_refuse(why,
                             "stripe_size %llu%s is not a multiple of write_size %llu%s: a stripe "
                             "is a whole number of write units",
                             stripe, fwdioi_origin(why, "stripe_size", a, sizeof a), write,
                             fwdioi_origin(why, "write_size", b, sizeof b));
    /* A write unit is one assembly buffer and one pwrite: keep it addressable. */
    if (write > ((uint64_t)1 << 31))
        return fwdioi_refuse(why,
                             "write_size %llu%s is too large: at most 2147483648 (2G), as one "
                             "write unit is one buffer and one pwrite",
                             write, fwdioi_origin(why, "write_size", a, sizeof a));
    if ((unsigned)o->layout > FWDIO_LAYOUT_TARGETS)
        return fwdioi_refuse(why,
                             "layout %d%s is not a layout: block (0), cyclic (1) or targets (2)",
                             (int)o->layout, fwdioi_origin(why, "layout", a, sizeof a));
    if ((unsigned)o->placement > FWDIO_PLACEMENT_LIST)
        return fwdioi_refuse(why,
                             "placement %d%s is not a placement: spread (0), stride (1) or "
                             "list (2)",
                             (int)o->placement, fwdioi_origin(why, "placement", a, sizeof a));
    const struct {
        const char *key;
        int value;
    } counts[] = {{"writers", o->writers},
                  {"writer_stride", o->writer_stride},
                  {"writers_per_node", o->writers_per_node},
                  {"targets", o->targets}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i].value < 0)
            return fwdioi_refuse(why, "%s %d%s is negative: 0 (the default) or more", counts[i].key,
                                 counts[i].value, fwdioi_origin(why, counts[i].key, a, sizeof a));
    if (o->first_writer < 0 || o->first_writer >= nranks)
        return fwdioi_refuse(why,
                             "first_writer %d%s is outside the communicator: a rank from 0 to %d",
                             o->first_writer, fwdioi_origin(why, "first_writer", a, sizeof a),
                             nranks - 1);
    if (o->local_copies < 0 || o->local_copies > 2)
        return fwdioi_refuse(why, "local_copies %d%s is not a number of copies: 1 or 2 (0: the "
                                  "default, 1)",
                             o->local_copies, fwdioi_origin(why, "local_copies", a, sizeof a));
    for (size_t i = 0; i < sizeof o->reserved / sizeof o->reserved[0]; i++)
        if (o->reserved[i])
            return fwdioi_refuse(why, "fwdio_options_t.reserved[%zu] is not 0: initialise the "
                                      "struct with fwdio_options_init() or zeros before setting "
                                      "fields",
                                 i);
    return FWDIO_OK;
}

/* Placement list: writer_list names 1..nranks distinct ranks of the
 * communicator. */
static int check_list(const fwdio_options_t *o, int nranks, fwdioi_origins_t *why)
{
    char a[FWDIOI_ORIGIN_LEN], b[FWDIOI_ORIGIN_LEN];
    if (!o->writer_list || o->writer_list_len <= 0)
        return fwdioi_refuse(why,
                             "placement list%s needs writer ranks: writer_list is %s%s and "
                             "writer_list_len %d",
                             fwdioi_origin(why, "placement", a, sizeof a),
                             o->writer_list ? "given" : "NULL",
                             fwdioi_origin(why, "writer_list", b, sizeof b), o->writer_list_len);
    if (o->writer_list_len > nranks)
        return fwdioi_refuse(why,
                             "writer_list_len %d%s is more than the %d ranks of the communicator",
                             o->writer_list_len, fwdioi_origin(why, "writer_list", a, sizeof a),
                             nranks);
    /* the first bad entry in list order: outside, or a repeat (found by
     * sorting a copy: O(W log W), not a table of every rank) */
    int repeat;
    if (fwdioi_list_first_repeat(o->writer_list, o->writer_list_len, &repeat) != 0)
        return FWDIO_ENOMEM;
    int end = repeat >= 0 ? repeat : o->writer_list_len;
    for (int i = 0; i < end; i++) {
        int r = o->writer_list[i];
        if (r < 0 || r >= nranks)
            return fwdioi_refuse(why,
                                 "writer_list[%d] = %d%s is outside the communicator: a rank from "
                                 "0 to %d",
                                 i, r, fwdioi_origin(why, "writer_list", a, sizeof a), nranks - 1);
    }
    if (repeat >= 0)
        return fwdioi_refuse(why, "writer_list[%d] = %d%s is listed twice: each writer once",
                             repeat, o->writer_list[repeat],
                             fwdioi_origin(why, "writer_list", a, sizeof a));
    return FWDIO_OK;
}

/* The smallest multiple of `unit` at or above `min` that divides `stripe`
 * (a multiple of unit), at most the stripe itself. The search stops at
 * 64 x min: a larger stripe without such a divisor keeps its unit. */
static uint64_t raise_unit(uint64_t unit, uint64_t stripe, uint64_t min)
{
    if (min >= stripe)
        return stripe;
    for (uint64_t u = (min + unit - 1) / unit * unit; u <= stripe && u <= 64 * min; u += unit)
        if (stripe % u == 0)
            return u;
    return unit;
}

/* Sizes too small for the budgets to hold are raised; the multiples keep
 * stripe_size a multiple of write_size. */
static void clamp_sizes(fwdio_options_t *o)
{
    if (o->stripe_size < FWDIOI_MIN_STRIPE_SIZE)
        o->stripe_size = (FWDIOI_MIN_STRIPE_SIZE + o->stripe_size - 1) / o->stripe_size *
                         o->stripe_size;
    if (o->write_size < FWDIOI_MIN_WRITE_SIZE && o->write_size < o->stripe_size)
        o->write_size = raise_unit(o->write_size, o->stripe_size, FWDIOI_MIN_WRITE_SIZE);
}

void fwdioi_options_report_clamps(const fwdio_options_t *in, const fwdio_options_t *resolved,
                                  fwdioi_origins_t *why)
{
    static atomic_int said_stripe, said_write;
    char from[FWDIOI_ORIGIN_LEN];
    int shared = why ? why->shared : 0; /* naming origins here is no refusal */
    if (in->stripe_size != 0 && resolved->stripe_size != in->stripe_size &&
        !atomic_exchange(&said_stripe, 1))
        fwdioi_report("stripe_size %llu%s raised to %llu: every stripe is a piece of its own in "
                      "messages and a pwrite of its own, which below %llu bytes cost more "
                      "than the stripe's bytes (said once)",
                      (unsigned long long)in->stripe_size,
                      fwdioi_origin(why, "stripe_size", from, sizeof from),
                      (unsigned long long)resolved->stripe_size,
                      (unsigned long long)FWDIOI_MIN_STRIPE_SIZE);
    if (in->write_size != 0 && resolved->write_size != in->write_size &&
        !atomic_exchange(&said_write, 1))
        fwdioi_report("write_size %llu%s raised to %llu: a unit being assembled takes ~200 bytes "
                      "of bookkeeping, which units under %llu bytes (or the stripe) do not "
                      "outweigh (said once)",
                      (unsigned long long)in->write_size,
                      fwdioi_origin(why, "write_size", from, sizeof from),
                      (unsigned long long)resolved->write_size,
                      (unsigned long long)FWDIOI_MIN_WRITE_SIZE);
    if (why)
        why->shared = shared;
}

int fwdioi_options_resolve(const fwdio_options_t *in, int nranks, int nnodes,
                           fwdio_options_t *out, fwdioi_origins_t *why)
{
    if (in)
        *out = *in;
    else
        memset(out, 0, sizeof *out);
    if (nranks < 1)
        return FWDIO_EINVAL;
    /* The default unit, unless a given stripe is no multiple of it: then one
     * unit per stripe. */
    if (out->write_size == 0)
        out->write_size = out->stripe_size % FWDIO_DEFAULT_WRITE_SIZE == 0
                              ? FWDIO_DEFAULT_WRITE_SIZE
                              : out->stripe_size;
    if (out->stripe_size == 0) {
        /* a small unit is raised first, so the default stripe follows it */
        if (out->write_size < FWDIOI_MIN_WRITE_SIZE)
            out->write_size = (FWDIOI_MIN_WRITE_SIZE + out->write_size - 1) / out->write_size *
                              out->write_size;
        out->stripe_size = out->write_size * FWDIO_DEFAULT_STRIPE_UNITS;
    }
    int rc = check_ranges(out, nranks, why);
    if (rc != FWDIO_OK)
        return rc;
    clamp_sizes(out);
    /* Giving a writer list, or a first writer or stride, asks for that
     * placement, unless the code pinned the placement. */
    if (out->placement == FWDIO_PLACEMENT_SPREAD && !(out->pinned & FWDIO_PIN_PLACEMENT)) {
        if (out->writer_list)
            out->placement = FWDIO_PLACEMENT_LIST;
        else if (out->first_writer || out->writer_stride)
            out->placement = FWDIO_PLACEMENT_STRIDE;
    }

    switch (out->placement) {
    case FWDIO_PLACEMENT_LIST:
        if ((rc = check_list(out, nranks, why)) != FWDIO_OK)
            return rc;
        out->writers = out->writer_list_len;
        break;
    case FWDIO_PLACEMENT_SPREAD:
        if (out->writers_per_node > 0)
            out->writers = out->writers_per_node * (nnodes > 0 ? nnodes : 1);
        else if (out->writers == 0)
            out->writers = default_writers(nnodes);
        if (out->writers > nranks)
            out->writers = nranks;
        break;
    case FWDIO_PLACEMENT_STRIDE: {
        if (out->writers == 0)
            out->writers = default_writers(nnodes);
        int room = nranks - out->first_writer;
        if (out->writers > room)
            out->writers = room;
        if (out->writer_stride == 0)
            out->writer_stride = room / out->writers > 1 ? room / out->writers : 1;
        /* Clamp to the writers that fit: first + (W - 1) * stride < nranks. */
        int fit = (room - 1) / out->writer_stride + 1;
        if (out->writers > fit)
            out->writers = fit;
        break;
    }
    }
    if (out->layout == FWDIO_LAYOUT_TARGETS && out->targets == 0)
        out->targets = out->writers;
    out->atomic_replace = out->atomic_replace != 0;
    out->rewrites = out->rewrites != 0;
    out->overlaps = out->overlaps != 0;
    out->keep_contents = out->keep_contents != 0;
    out->must_exist = out->must_exist != 0;
    out->durable = out->durable != 0 || out->atomic_replace; /* rename only durable data */
    return FWDIO_OK;
}

/* "q or q+1 each, the long ones last": how block stripes and target groups are
 * shared out. n items over W owners; owner w's first item and count. */
static uint64_t share_first(uint64_t q, uint64_t nlong, uint64_t W, uint64_t w)
{
    uint64_t nshort = W - nlong;
    return w * q + (w > nshort ? w - nshort : 0);
}

static uint64_t share_count(uint64_t q, uint64_t nlong, uint64_t W, uint64_t w)
{
    return q + (w >= W - nlong ? 1 : 0);
}

static uint64_t share_owner(uint64_t q, uint64_t nlong, uint64_t W, uint64_t item)
{
    uint64_t short_part = (W - nlong) * q;
    if (item < short_part)
        return item / q;
    return (W - nlong) + (item - short_part) / (q + 1);
}

void fwdioi_plan_init(fwdioi_plan_t *plan, uint64_t size, const fwdio_options_t *o, int nranks,
                      const int *writer_ranks, int nwriters)
{
    memset(plan, 0, sizeof *plan);
    plan->stripe_size = o->stripe_size;
    plan->write_size = o->write_size;
    plan->nranks = nranks;
    plan->nwriters = nwriters;
    plan->writer_ranks = writer_ranks;
    plan->layout = o->layout;
    fwdioi_plan_set_size(plan, size);
    plan->ntargets = (uint64_t)o->targets;
    if (plan->ntargets >= (uint64_t)nwriters) {
        plan->group_q = plan->ntargets / (uint64_t)nwriters;
        plan->group_long = plan->ntargets % (uint64_t)nwriters;
    }
}

void fwdioi_plan_set_size(fwdioi_plan_t *plan, uint64_t size)
{
    plan->size = size;
    plan->nstripes = (size + plan->stripe_size - 1) / plan->stripe_size;
    plan->block_q = plan->nstripes / (uint64_t)plan->nwriters;
    plan->block_long = plan->nstripes % (uint64_t)plan->nwriters;
}

int fwdioi_plan_writer_rank(const fwdioi_plan_t *plan, int w) { return plan->writer_ranks[w]; }

int fwdioi_plan_writer_of_rank(const fwdioi_plan_t *plan, int rank)
{
    for (int w = 0; w < plan->nwriters; w++)
        if (plan->writer_ranks[w] == rank)
            return w;
    return -1;
}

/* ---- the targets layout ---- */

static int targets_grouped(const fwdioi_plan_t *p) { return p->ntargets >= (uint64_t)p->nwriters; }

/* W > T: writer w serves target w mod T, as the (w / T)-th of c writers. */
static uint64_t shared_writers_of_target(const fwdioi_plan_t *p, uint64_t t)
{
    uint64_t W = (uint64_t)p->nwriters, T = p->ntargets;
    return W / T + (t < W % T ? 1 : 0);
}

/* Stripes that land on target t. */
static uint64_t stripes_on_target(const fwdioi_plan_t *p, uint64_t t)
{
    return p->nstripes / p->ntargets + (t < p->nstripes % p->ntargets ? 1 : 0);
}

static int targets_stripe_writer(const fwdioi_plan_t *p, uint64_t s)
{
    uint64_t T = p->ntargets, t = s % T, W = (uint64_t)p->nwriters;
    if (targets_grouped(p))
        return (int)share_owner(p->group_q, p->group_long, W, t);
    uint64_t c = shared_writers_of_target(p, t);
    return (int)(((s / T) % c) * T + t);
}

static uint64_t targets_writer_stripes(const fwdioi_plan_t *p, int w)
{
    uint64_t T = p->ntargets, W = (uint64_t)p->nwriters, uw = (uint64_t)w;
    if (targets_grouped(p)) {
        uint64_t a = share_first(p->group_q, p->group_long, W, uw);
        uint64_t m = share_count(p->group_q, p->group_long, W, uw);
        uint64_t rest = p->nstripes % T; /* targets [0, rest) have one more */
        uint64_t extra = rest > a ? (rest - a < m ? rest - a : m) : 0;
        return m * (p->nstripes / T) + extra;
    }
    uint64_t t = uw % T, r = uw / T, c = shared_writers_of_target(p, t);
    uint64_t k = stripes_on_target(p, t);
    return k / c + (r < k % c ? 1 : 0);
}

static uint64_t targets_local_stripe(const fwdioi_plan_t *p, uint64_t s)
{
    uint64_t T = p->ntargets, t = s % T, W = (uint64_t)p->nwriters;
    if (targets_grouped(p)) {
        uint64_t w = share_owner(p->group_q, p->group_long, W, t);
        uint64_t a = share_first(p->group_q, p->group_long, W, w);
        uint64_t m = share_count(p->group_q, p->group_long, W, w);
        return (s / T) * m + (t - a);
    }
    return (s / T) / shared_writers_of_target(p, t);
}

static uint64_t targets_stripe_at(const fwdioi_plan_t *p, int w, uint64_t i)
{
    uint64_t T = p->ntargets, W = (uint64_t)p->nwriters, uw = (uint64_t)w;
    if (targets_grouped(p)) {
        uint64_t a = share_first(p->group_q, p->group_long, W, uw);
        uint64_t m = share_count(p->group_q, p->group_long, W, uw);
        return (i / m) * T + a + i % m;
    }
    uint64_t t = uw % T, r = uw / T, c = shared_writers_of_target(p, t);
    return t + (i * c + r) * T;
}

static uint64_t targets_next_stripe(const fwdioi_plan_t *p, int w, uint64_t s)
{
    uint64_t T = p->ntargets, W = (uint64_t)p->nwriters, uw = (uint64_t)w;
    if (targets_grouped(p)) {
        uint64_t a = share_first(p->group_q, p->group_long, W, uw);
        uint64_t m = share_count(p->group_q, p->group_long, W, uw);
        uint64_t cycle = s / T, t = s % T;
        if (t < a)
            return cycle * T + a;
        if (t < a + m)
            return s;
        return (cycle + 1) * T + a;
    }
    uint64_t t = uw % T, r = uw / T, c = shared_writers_of_target(p, t);
    uint64_t k = s <= t ? 0 : (s - t + T - 1) / T; /* first stripe of t at or after s */
    k += (r + c - k % c) % c;                       /* ... that is writer w's turn */
    return t + k * T;
}

static void targets_writers_in_range(const fwdioi_plan_t *p, uint64_t s0, uint64_t s1,
                                     int *first, int *count)
{
    uint64_t T = p->ntargets, W = (uint64_t)p->nwriters;
    if (!targets_grouped(p) || s1 - s0 + 1 >= T) {
        *first = 0;
        *count = p->nwriters;
        return;
    }
    uint64_t g0 = share_owner(p->group_q, p->group_long, W, s0 % T);
    uint64_t g1 = share_owner(p->group_q, p->group_long, W, s1 % T);
    uint64_t n = s0 % T <= s1 % T ? g1 - g0 + 1 : (W - g0) + g1 + 1;
    *first = (int)g0;
    *count = (int)(n < W ? n : W);
}

/* ---- every layout ---- */

int fwdioi_plan_stripe_writer(const fwdioi_plan_t *plan, uint64_t s)
{
    uint64_t W = (uint64_t)plan->nwriters;
    switch (plan->layout) {
    case FWDIO_LAYOUT_CYCLIC:
        return (int)(s % W);
    case FWDIO_LAYOUT_TARGETS:
        return targets_stripe_writer(plan, s);
    default:
        return (int)share_owner(plan->block_q, plan->block_long, W, s);
    }
}

uint64_t fwdioi_plan_writer_stripes(const fwdioi_plan_t *plan, int w)
{
    uint64_t uw = (uint64_t)w, W = (uint64_t)plan->nwriters;
    switch (plan->layout) {
    case FWDIO_LAYOUT_CYCLIC:
        return plan->nstripes / W + (uw < plan->nstripes % W ? 1 : 0);
    case FWDIO_LAYOUT_TARGETS:
        return targets_writer_stripes(plan, w);
    default:
        return share_count(plan->block_q, plan->block_long, W, uw);
    }
}

uint64_t fwdioi_plan_local_stripe(const fwdioi_plan_t *plan, uint64_t s)
{
    uint64_t W = (uint64_t)plan->nwriters;
    switch (plan->layout) {
    case FWDIO_LAYOUT_CYCLIC:
        return s / W;
    case FWDIO_LAYOUT_TARGETS:
        return targets_local_stripe(plan, s);
    default:
        return s - share_first(plan->block_q, plan->block_long, W,
                               (uint64_t)fwdioi_plan_stripe_writer(plan, s));
    }
}

uint64_t fwdioi_plan_writer_stripe_at(const fwdioi_plan_t *plan, int w, uint64_t i)
{
    uint64_t W = (uint64_t)plan->nwriters;
    switch (plan->layout) {
    case FWDIO_LAYOUT_CYCLIC:
        return i * W + (uint64_t)w;
    case FWDIO_LAYOUT_TARGETS:
        return targets_stripe_at(plan, w, i);
    default:
        return share_first(plan->block_q, plan->block_long, W, (uint64_t)w) + i;
    }
}

uint64_t fwdioi_plan_next_stripe(const fwdioi_plan_t *plan, int w, uint64_t s)
{
    if (s >= plan->nstripes)
        return plan->nstripes;
    uint64_t W = (uint64_t)plan->nwriters, next;
    switch (plan->layout) {
    case FWDIO_LAYOUT_CYCLIC:
        next = s + ((uint64_t)w + W - s % W) % W;
        break;
    case FWDIO_LAYOUT_TARGETS:
        next = targets_next_stripe(plan, w, s);
        break;
    default: {
        uint64_t first = share_first(plan->block_q, plan->block_long, W, (uint64_t)w);
        uint64_t end = first + fwdioi_plan_writer_stripes(plan, w);
        next = s < first ? first : s;
        if (next >= end)
            return plan->nstripes;
    }
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

uint64_t fwdioi_plan_stripe_target(const fwdioi_plan_t *plan, uint64_t s)
{
    return plan->ntargets ? s % plan->ntargets : UINT64_MAX;
}

void fwdioi_plan_writers_in_range(const fwdioi_plan_t *plan, uint64_t s0, uint64_t s1,
                                  int *first, int *count)
{
    switch (plan->layout) {
    case FWDIO_LAYOUT_CYCLIC: {
        *first = fwdioi_plan_stripe_writer(plan, s0);
        uint64_t n = s1 - s0 + 1;
        *count = n < (uint64_t)plan->nwriters ? (int)n : plan->nwriters;
        return;
    }
    case FWDIO_LAYOUT_TARGETS:
        targets_writers_in_range(plan, s0, s1, first, count);
        return;
    default:
        *first = fwdioi_plan_stripe_writer(plan, s0);
        *count = fwdioi_plan_stripe_writer(plan, s1) - *first + 1;
    }
}

int fwdioi_plan_owns(const fwdioi_plan_t *plan, int w, uint64_t offset, uint64_t len)
{
    if (w < 0 || w >= plan->nwriters || offset > plan->size || len > plan->size - offset)
        return 0;
    if (len == 0)
        return 1;
    uint64_t s0 = offset / plan->stripe_size, s1 = (offset + len - 1) / plan->stripe_size;
    if (plan->nwriters == 1)
        return 1;
    if (plan->layout == FWDIO_LAYOUT_BLOCK) /* a writer's stripes are one run */
        return fwdioi_plan_stripe_writer(plan, s0) == w && fwdioi_plan_stripe_writer(plan, s1) == w;
    /* cyclic and targets: a writer owns at most ntargets stripes in a row
     * (one, unless targets are grouped), so this loop is short for any valid
     * piece and stops at the first stripe of another writer otherwise */
    for (uint64_t s = s0; s <= s1; s++)
        if (fwdioi_plan_stripe_writer(plan, s) != w)
            return 0;
    return 1;
}
