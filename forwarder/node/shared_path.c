/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared path: messages to writers on this node by reference (shared_path.h). */
#include "node/shared_path.h"

#include "log.h"
#include "write/message.h"
#include "write/send_done.h"
#include "agreement/outcome.h"
#include "trace.h"
#include "write/writer.h"

#include <stdlib.h>
#include <string.h>

/* An entry that could not be handled yet: data for a file this writer has not
 * opened, or a release whose ring was full. */
typedef struct fwdioi_area_wait {
    fwdioi_area_entry_t e;
    int peer; /* data: the sender; release: the rank to tell */
} fwdioi_area_wait_t;

/* A peer's message a writer is taking: the hold that keeps it alive, whom to
 * give it back to, and a private copy of its piece table (the sender's memory
 * is not trusted to stay as it was checked). */
typedef struct shared_op {
    fwdioi_hold_t hold;
    const fwdioi_area_t *area;
    int from;
    uint64_t token;
    uint8_t table[];
} shared_op_t;

int fwdioi_shared_send(fwdio_file_t *f, fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_area_t *a = &f->owner->area;
    const uint8_t *seg = a->seg[a->local];
    fwdioi_area_entry_t e = {.kind = FWDIOI_AREA_DATA,
                             .writer = (uint32_t)m->writer,
                             .seq = f->seq,
                             .token = (uint64_t)((uint8_t *)m - seg),
                             .wire_off = (uint64_t)(m->wire - seg),
                             .wire_len = m->wire_len,
                             .data_off = UINT64_MAX,
                             .payload = m->payload};
    if (m->lent) {
        e.data_off = (uint64_t)(m->lent_base - seg);
        e.data_file_offset = m->lent_offset;
    }
    m->area_out = 1;
    if (fwdioi_area_push(a, m->area_to, &e) != 0) {
        m->area_out = 0;
        return -1;
    }
    return 0;
}

int fwdioi_shared_note(fwdio_file_t *f, const fwdioi_msg_t *m, int to)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_area_entry_t e = {.kind = FWDIOI_AREA_NOTE, .writer = (uint32_t)m->writer,
                             .seq = f->seq};
    return fwdioi_area_push(&f->owner->area, to, &e);
}

static int wait_add(struct fwdio_runtime *o, const fwdioi_area_entry_t *e, int peer)
{
    if (o->narea_waiting == o->area_waiting_cap) {
        int cap = o->area_waiting_cap ? 2 * o->area_waiting_cap : 16;
        fwdioi_area_wait_t *w = realloc(o->area_waiting, (size_t)cap * sizeof *w);
        if (!w)
            return -1;
        o->area_waiting = w;
        o->area_waiting_cap = cap;
    }
    o->area_waiting[o->narea_waiting++] = (fwdioi_area_wait_t){*e, peer};
    return 0;
}

/* Tell local rank `to` that its message `token` may be reused. */
static void give_back(struct fwdio_runtime *o, int to, uint64_t token)
{
    fwdioi_area_entry_t e = {.kind = FWDIOI_AREA_RELEASE, .token = token};
    if (fwdioi_area_push(&o->area, to, &e) == 0)
        return;
    if (wait_add(o, &e, to) != 0) /* the sender's file would wait for ever */
        fwdioi_report("rank %d: out of memory to give a message back to rank %d: its file "
                      "cannot complete",
                      fwdioi_rt_rank(o->engine), o->area.rank_of_local[to]);
}

void fwdioi_shared_release(struct fwdio_runtime *o, fwdioi_hold_t *h)
{
    FWDIOI_ASSERT_PROGRESS();
    shared_op_t *op = h->block;
    give_back(o, op->from, op->token);
    free(op);
}

static fwdio_file_t *active_file(struct fwdio_runtime *o, uint64_t seq)
{
    return fwdioi_outcome_active_file(o, seq); /* indexed: O(1) per entry */
}

/* The pieces of a peer's message, its table copied into a new op. NULL
 * without memory; a malformed message gets an op with a view whose table is
 * NULL (the writer reports it). */
/* A lent piece's bytes: only in chunks the lender committed. */
static int lent_readable(const void *ctx, const uint8_t *at, uint64_t len)
{
    const shared_op_t *op = ctx;
    return fwdioi_area_peer_committed(op->area, op->from, at, len);
}

static shared_op_t *view_of(const fwdioi_area_t *a, int from, const fwdioi_area_entry_t *e,
                            fwdioi_pieces_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->payload = e->payload;
    const uint8_t *wire = fwdioi_area_peer_bytes(a, from, e->wire_off, e->wire_len);
    fwdioi_wire_header_t h = {0, 0};
    if (wire && e->wire_len >= sizeof h)
        memcpy(&h, wire, sizeof h);
    v->step = h.step;
    int well_formed = wire && e->wire_len >= sizeof h &&
                      h.npieces <= (e->wire_len - sizeof h) / sizeof(fwdioi_piece_t);
    size_t table = well_formed ? (size_t)h.npieces * sizeof(fwdioi_piece_t) : 0;
    shared_op_t *op = malloc(sizeof *op + table);
    if (!op || !well_formed)
        return op;
    memcpy(op->table, wire + e->wire_len - table, table);
    v->npieces = h.npieces;
    v->table = op->table;
    if (e->data_off == UINT64_MAX) { /* a copy: the data is in the wire */
        v->packed = wire + sizeof h;
        v->payload = e->wire_len - sizeof h - table;
        return op;
    }
    /* lent from a fwdio_alloc buffer: the pieces lie in the sender's heap */
    if (!fwdioi_area_peer_bytes(a, from, e->data_off, 0)) {
        v->table = NULL;
        return op;
    }
    v->spread_base = a->seg[from] + e->data_off;
    v->spread_offset = e->data_file_offset;
    v->lo = a->seg[from] + a->heap_off;
    v->hi = a->seg[from] + a->seg_size;
    op->area = a;
    op->from = from;
    v->readable = lent_readable;
    v->readable_ctx = op;
    return op;
}

/* A message from local rank `from`: 1 taken (or given straight back), 0 its
 * file is not open here yet. */
static int take_data(struct fwdio_runtime *o, int from, const fwdioi_area_entry_t *e)
{
    fwdioi_area_t *a = &o->area;
    fwdio_file_t *f = active_file(o, e->seq);
    if (!f && e->seq >= o->opened_seq)
        return 0;
    int receiving = f && f->my_writer >= 0 && !f->s.outcome.aborted && !f->s.finishing &&
                    fwdioi_file_open_ok(f);
    if (f && !receiving && !f->s.outcome.aborted && fwdioi_file_before_open(f))
        return 0;
    int source = a->rank_of_local[from];
    if (!receiving) { /* a file that failed, ended, or is not this rank's to write: drop */
        if (!f || !f->s.outcome.aborted)
            fwdioi_log(FWDIOI_LOG_WARN, "rank %d: dropped a message from rank %d for file %llu%s",
                       fwdioi_rt_rank(o->engine), source, (unsigned long long)e->seq,
                       f ? " (not a writer of it, or it is complete here)" : " (not active here)");
        give_back(o, from, e->token);
        return 1;
    }
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_pieces_view_t v;
    shared_op_t *op = view_of(a, from, e, &v);
    if (!op) {
        fwdioi_outcome_nomem(f, 0);
        give_back(o, from, e->token);
        return 1;
    }
    op->hold = (fwdioi_hold_t){1, FWDIOI_HOLD_SHARED, op, 0, 0, fwdioi_shared_release};
    op->from = from;
    op->token = e->token;
    uint64_t payload = v.payload;
    fwdioi_writer_accept(f, &v, &op->hold, source);
    fwdioi_trace_end(t_trace, "take", (int64_t)f->seq, (int64_t)payload,
                     FWDIOI_TRACE_NONE, source);
    fwdioi_writer_check_drained(f);
    return 1;
}

/* A message from local rank `from` comes over MPI: 1 noted (or its file is
 * gone), 0 its file is not open here yet. */
static int take_note(struct fwdio_runtime *o, const fwdioi_area_entry_t *e)
{
    fwdio_file_t *f = active_file(o, e->seq);
    if (!f)
        return e->seq < o->opened_seq; /* gone: its data is dropped as it comes */
    if (!f->s.outcome.aborted && fwdioi_file_before_open(f))
        return 0;
    if (f->my_writer >= 0)
        fwdioi_writer_note_mpi(f);
    return 1;
}

/* One of this rank's messages given back by its writer. */
static void take_release(struct fwdio_runtime *o, int from, const fwdioi_area_entry_t *e)
{
    fwdioi_area_t *a = &o->area;
    fwdioi_msg_t *m = NULL;
    if (e->token >= a->heap_off && e->token % FWDIOI_HEAP_ALIGN == 0 &&
        e->token <= a->seg_size - sizeof *m)
        m = (fwdioi_msg_t *)(a->seg[a->local] + e->token);
    if (!m || m->area_magic != FWDIOI_MSG_AREA_MAGIC || !m->area_out) {
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: rank %d gave back a message this rank does not "
                   "have out (offset %llu); ignored",
                   fwdioi_rt_rank(o->engine), a->rank_of_local[from], (unsigned long long)e->token);
        return;
    }
    m->area_out = 0;
    fwdioi_send_done(m, MPI_SUCCESS);
}

/* Retry what waited; keep what still cannot go, in order. */
static int retry_waiting(struct fwdio_runtime *o)
{
    int handled = 0, kept = 0;
    int n = o->narea_waiting;
    for (int i = 0; i < n; i++) {
        fwdioi_area_wait_t w = o->area_waiting[i];
        int done = w.e.kind == FWDIOI_AREA_RELEASE ? fwdioi_area_push(&o->area, w.peer, &w.e) == 0
                   : w.e.kind == FWDIOI_AREA_NOTE  ? take_note(o, &w.e)
                                                    : take_data(o, w.peer, &w.e);
        if (done)
            handled++;
        else
            o->area_waiting[kept++] = w;
    }
    /* give_back may have added entries meanwhile, after index n */
    memmove(&o->area_waiting[kept], &o->area_waiting[n],
            (size_t)(o->narea_waiting - n) * sizeof *o->area_waiting);
    o->narea_waiting = kept + (o->narea_waiting - n);
    return handled;
}

int fwdioi_shared_poll(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_area_t *a = &o->area;
    if (!a->enabled)
        return 0;
    fwdioi_area_drain_bell(a); /* before the rings: a later push rings again */
    int handled = o->narea_waiting ? retry_waiting(o) : 0;
    for (int p = 0; p < a->nlocal; p++) {
        fwdioi_area_entry_t e;
        while (p != a->local && fwdioi_area_pop(a, p, &e)) {
            handled++;
            if (e.kind == FWDIOI_AREA_RELEASE)
                take_release(o, p, &e);
            else if (e.kind == FWDIOI_AREA_NOTE) {
                if (!take_note(o, &e) && wait_add(o, &e, p) != 0)
                    fwdioi_report("rank %d: out of memory to keep a notice from rank %d",
                                  fwdioi_rt_rank(o->engine), a->rank_of_local[p]);
            } else if (e.kind != FWDIOI_AREA_DATA)
                fwdioi_log(FWDIOI_LOG_WARN, "rank %d: an entry of unknown kind %u from rank %d",
                           fwdioi_rt_rank(o->engine), e.kind, a->rank_of_local[p]);
            else if (!take_data(o, p, &e) && wait_add(o, &e, p) != 0)
                fwdioi_report("rank %d: out of memory to keep a message from rank %d",
                              fwdioi_rt_rank(o->engine), a->rank_of_local[p]);
        }
    }
    return handled;
}

int fwdioi_shared_settle(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!o->area.enabled)
        return 0;
    o->area_idle_held = fwdioi_area_idle(&o->area);
    return o->narea_waiting > 0 || !STAILQ_EMPTY(&o->area_blocked);
}
