/* SPDX-License-Identifier: BSD-3-Clause */
/* The cost model of one file and one step (cost_model.h, docs/scaling.md).
 * Each formula names the code it follows. */
#include "cost_model.h"

#include <string.h>

void cost_model_defaults(cost_input_t *in)
{
    if (!in->write_size)
        in->write_size = (uint64_t)4 << 20;
    if (!in->stripe_size)
        in->stripe_size = 4 * in->write_size;
    if (!in->writer_buffer)
        in->writer_buffer = (uint64_t)64 << 20;
    if (!in->max_message) {
        /* 8 MiB, lowered to writer_buffer / 4 but not below 64 KiB (fwdio.h) */
        in->max_message = (uint64_t)8 << 20;
        if (in->max_message > in->writer_buffer / 4)
            in->max_message = in->writer_buffer / 4 > (64u << 10) ? in->writer_buffer / 4
                                                                   : (64u << 10);
    }
    if (!in->combine_size)
        in->combine_size = (uint64_t)256 << 10;
    if (in->nodes < 1)
        in->nodes = 1;
    if (!in->staging) {
        /* fwdio.h: the node's staging (512 MiB on a node of 16 GiB or more)
         * shared by the node's ranks, at most 64 MiB, at least 1 MiB each */
        uint64_t per_node = in->ranks > 0 ? ((uint64_t)in->ranks + (uint64_t)in->nodes - 1) /
                                                (uint64_t)in->nodes
                                          : 1;
        in->staging = ((uint64_t)512 << 20) / per_node;
        if (in->staging > ((uint64_t)64 << 20))
            in->staging = (uint64_t)64 << 20;
        if (in->staging < ((uint64_t)1 << 20))
            in->staging = (uint64_t)1 << 20;
    }
    if (in->writers < 1)
        in->writers = 1;
}

static int stride_of(const cost_input_t *in)
{
    int s = in->ranks / in->writers;
    return s > 1 ? s : 1;
}

int cost_model_writer_of(const cost_input_t *in, int r)
{
    int s = stride_of(in);
    return r % s == 0 && r / s < in->writers ? r / s : -1;
}

static int node_of(const cost_input_t *in, int r)
{
    int per = (in->ranks + in->nodes - 1) / in->nodes;
    return r / per;
}

/* Rank q's block: [*start, *end). */
static void block_of(const cost_input_t *in, int q, uint64_t *start, uint64_t *end)
{
    uint64_t b = in->size / (uint64_t)in->ranks;
    *start = (uint64_t)q * b;
    *end = q == in->ranks - 1 ? in->size : *start + b;
}

/* Writer w's stripes as a sequence first + k * step (k < count), the plan's
 * block layout ("q or q+1 each, the long ones last", plan.c share_first) or
 * cyclic (stripe s to writer s mod W). */
static void writer_stripes(const cost_input_t *in, int w, uint64_t *first, uint64_t *step,
                           uint64_t *count)
{
    uint64_t W = (uint64_t)in->writers;
    uint64_t nstripes = (in->size + in->stripe_size - 1) / in->stripe_size;
    if (in->cyclic || in->stream) {
        *first = (uint64_t)w;
        *step = W;
        *count = nstripes > (uint64_t)w ? (nstripes - (uint64_t)w + W - 1) / W : 0;
        return;
    }
    uint64_t q = nstripes / W, nlong = nstripes % W, nshort = W - nlong;
    *first = (uint64_t)w * q + ((uint64_t)w > nshort ? (uint64_t)w - nshort : 0);
    *step = 1;
    *count = q + ((uint64_t)w >= nshort ? 1 : 0);
}

/* Bytes of [a, b) in writer w's stripes, and the runs of adjacent stripes
 * they make (route.c piece_list_add merges adjacent stripes of a writer). */
static void bytes_to(const cost_input_t *in, int w, uint64_t a, uint64_t b, uint64_t *bytes,
                     uint64_t *runs)
{
    *bytes = *runs = 0;
    if (a >= b)
        return;
    uint64_t first, step, count;
    writer_stripes(in, w, &first, &step, &count);
    if (count == 0)
        return;
    uint64_t S = in->stripe_size, s0 = a / S, s1 = (b - 1) / S;
    uint64_t last = first + (count - 1) * step;
    if (s1 < first || s0 > last)
        return;
    uint64_t k0 = s0 <= first ? 0 : (s0 - first + step - 1) / step;
    uint64_t prev = UINT64_MAX;
    for (uint64_t k = k0; k < count; k++) {
        uint64_t s = first + k * step;
        if (s > s1)
            break;
        uint64_t lo = s * S > a ? s * S : a, hi = (s + 1) * S < b ? (s + 1) * S : b;
        *bytes += hi - lo;
        if (prev == UINT64_MAX || s != prev + 1)
            (*runs)++;
        prev = s;
    }
}

/* Messages and wire bytes from sender q to writer w. */
static void messages_to(const cost_input_t *in, int q, int w, uint64_t *msgs, uint64_t *wire,
                        uint64_t *data)
{
    uint64_t start, end;
    block_of(in, q, &start, &end);
    *msgs = *wire = *data = 0;
    uint64_t len = end - start;
    if (len == 0)
        return;
    if (in->combine_size > 1 && len <= in->combine_size) {
        /* combine.c: one open message per writer, sealed when header, data
         * and table fill combine_size; adjacent pieces merge */
        uint64_t b, n;
        bytes_to(in, w, start, end, &b, &n);
        if (!b)
            return;
        uint64_t room = in->combine_size - COST_WIRE_HEADER;
        uint64_t m = (b + COST_WIRE_PIECE * n + room - 1) / room;
        *msgs = m;
        *data = b;
        *wire = COST_WIRE_HEADER * m + b + COST_WIRE_PIECE * (n + m - 1);
        return;
    }
    /* api.c: a larger write goes in chunks of at most the staging budget;
     * route.c: each chunk, per writer, in messages of at most max_message
     * data bytes */
    for (uint64_t a = start; a < end; a += in->staging) {
        uint64_t b_end = end - a > in->staging ? a + in->staging : end;
        uint64_t b, n;
        bytes_to(in, w, a, b_end, &b, &n);
        if (!b)
            continue;
        uint64_t m = (b + in->max_message - 1) / in->max_message;
        *msgs += m;
        *data += b;
        *wire += COST_WIRE_HEADER * m + b + COST_WIRE_PIECE * (n + m - 1);
    }
}

typedef enum { PATH_SELF, PATH_AREA, PATH_MPI } path_t;

static path_t path_of(const cost_input_t *in, int q, int wrank)
{
    if (q == wrank)
        return PATH_SELF; /* sender.c: straight to the writer code */
    if (in->area && node_of(in, q) == node_of(in, wrank))
        return PATH_AREA; /* shared_path.c: by reference, if the heap has room */
    return PATH_MPI;
}

/* Writer w's first and last sender (inclusive), from the span of its stripes. */
static void senders_of(const cost_input_t *in, int w, int *q0, int *q1)
{
    uint64_t first, step, count;
    writer_stripes(in, w, &first, &step, &count);
    *q0 = 0;
    *q1 = -1;
    if (count == 0 || in->size == 0)
        return;
    uint64_t lo = first * in->stripe_size;
    uint64_t hi = (first + (count - 1) * step + 1) * in->stripe_size;
    if (hi > in->size)
        hi = in->size;
    uint64_t b = in->size / (uint64_t)in->ranks;
    if (b == 0) {
        *q0 = *q1 = in->ranks - 1;
        return;
    }
    uint64_t a0 = lo / b, a1 = (hi - 1) / b;
    *q0 = a0 < (uint64_t)in->ranks ? (int)a0 : in->ranks - 1;
    *q1 = a1 < (uint64_t)in->ranks ? (int)a1 : in->ranks - 1;
}

void cost_model_rank(const cost_input_t *in_, int r, cost_rank_t *out)
{
    cost_input_t in = *in_;
    cost_model_defaults(&in);
    memset(out, 0, sizeof *out);
    const uint64_t W = (uint64_t)in.writers, P = (uint64_t)in.ranks;
    const int stride = stride_of(&in);

    /* sender side */
    uint64_t start, end;
    block_of(&in, r, &start, &end);
    out->data_bytes = end - start;
    for (int w = 0; w < in.writers; w++) {
        uint64_t m, wire, data;
        messages_to(&in, r, w, &m, &wire, &data);
        if (!m)
            continue;
        out->writers_touched++;
        switch (path_of(&in, r, w * stride)) {
        case PATH_SELF:
            out->self_msgs += m;
            break;
        case PATH_AREA:
            out->area_msgs += m;
            out->area_data += data;
            break;
        default:
            out->mpi_msgs += m;
            out->mpi_bytes += wire;
            out->mpi_data += data;
        }
    }

    /* writer side */
    int w = cost_model_writer_of(&in, r);
    if (w >= 0) {
        out->is_writer = 1;
        int q0, q1;
        senders_of(&in, w, &q0, &q1);
        for (int q = q0; q <= q1; q++) {
            uint64_t m, wire, data;
            messages_to(&in, q, w, &m, &wire, &data);
            if (!m)
                continue;
            out->senders++;
            out->recv_bytes += data;
            out->recv_msgs += m;
            switch (path_of(&in, q, r)) {
            case PATH_SELF:
                break;
            case PATH_AREA:
                out->recv_area_msgs += m;
                break;
            default:
                out->recv_mpi_msgs += m;
                out->recv_mpi_bytes += wire;
            }
        }
    }

    /* collectives: session.c (DUP, CHECKING, OPENING, CLOSING, SYNCING,
     * COMMITTING), steps.c (scan, counts, final, commit) */
    const uint64_t errinfo = COST_ERRINFO_PAIRS * COST_PAIR_BYTES;
    const uint64_t counts = (W + COST_CLOSE_EXTRA) * 8;
    /* The file's communicator is chosen by one MPI_Iallreduce of 8 bytes on
     * the runtime's (the pool's idle slots, session/comm_pool.h), the next
     * file's chosen ahead when this one takes its own: a runtime's first file
     * finds nothing kept, so both its own and the next are duplicated; a
     * later file, opened after the one before it ended, takes a kept one. */
    out->idup.calls = in.first_file ? 2 : 0;
    out->iallreduce.calls = 4 + (in.first_file ? 2 : 1);
    out->iallreduce.bytes = (in.first_file ? 2 : 1) * 8 /* the choices */
                            + (COST_ERRINFO_PAIRS + 2 * COST_OPEN_FIELDS) * COST_PAIR_BYTES
                            /* the open check */
                            + errinfo /* open status */
                            + counts  /* close: per writer */
                            + errinfo; /* final status */
    if (in.commit) {
        out->iallreduce.calls++;
        out->iallreduce.bytes += errinfo;
    }
    if (in.stream) {
        out->iexscan.calls = 2; /* the step's appends, and those after the last step */
        out->iexscan.bytes = 2 * 8;
        out->iallreduce.calls += 2; /* the step's counts and status */
        out->iallreduce.bytes += counts + errinfo;
        if (in.commit) {
            out->iallreduce.calls++;
            out->iallreduce.bytes += errinfo;
        }
    }

    /* memory (api.c fwdio_open; writer.c fwdioi_writer_open; topology.c) */
    out->mem_file = 4 * W                                  /* writer_ranks */
                    + 2 * (W + COST_CLOSE_EXTRA) * 8        /* sent_bytes, expected_bytes */
                    + 8 * W                                 /* writer_bytes_agreed */
                    + 32 * W;                               /* combine[]: fwdioi_combine_t */
    if (in.stream)
        out->mem_file += 8 * W                                    /* step_sent */
                         + 2 * (2 * (W + COST_CLOSE_EXTRA) + 2) * 8 /* step_slots */
                         + (W + COST_CLOSE_EXTRA) * 8;            /* a step record's sums */
    if (out->is_writer && out->senders > 0) {
        /* writer.c `senders`, for the watchdog's report: a u64map of the
         * ranks that sent data, 16 bytes a slot, at least 16 slots, doubled
         * while more than half full (runtime/util/u64map.c) */
        uint64_t slots = 16;
        while ((uint64_t)out->senders > slots / 2)
            slots *= 2;
        out->mem_writer = 16 * slots;
    }
    /* topology (topology.h): per node its info (28 bytes), its runs of ranks
     * (one per node when ranks are placed node by node: 12 + 4 bytes) and
     * its first candidates (16 bytes each, when its ranks are bound) */
    {
        const uint64_t N = (uint64_t)(in.nodes > 0 ? in.nodes : 1);
        const uint64_t per = (P + N - 1) / N;
        const uint64_t cands = per < COST_TOPOLOGY_CANDIDATES ? per : COST_TOPOLOGY_CANDIDATES;
        out->mem_runtime = N * (28 + 16 + 16 * cands);
    }
    /* spread placement: cap and count per node, the nodes waiting for an
     * extra writer (8 N each; placement.c place_ranks_spread, give_extras),
     * only when the runtime places: its first file, or options unlike the
     * last spread placement's (placement_cache.c); a later file copies the
     * kept writer ranks */
    out->mem_open_temp = in.first_file ? 16 * (uint64_t)in.nodes : 0;
}
