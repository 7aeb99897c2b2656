/* SPDX-License-Identifier: BSD-3-Clause */
/* Data messages: made by routing and combining, freed by the session. */
#include "write/message.h"

#include "write/staging.h"

#include <string.h>

/* The local index of the writer's rank when it is another rank of this node
 * with the area on, else -1. */
static int local_writer(const fwdio_file_t *f, int writer)
{
    int rank = fwdioi_plan_writer_rank(&f->plan, writer);
    if (rank == f->rank)
        return -1; /* this rank's own writer takes its messages without any transfer */
    return fwdioi_area_local_index(&f->owner->area, rank);
}

fwdioi_msg_t *fwdioi_msg_new(fwdio_file_t *f, int writer, size_t wire_cap, int staged,
                             const void *lent_buf, uint64_t lent_len)
{
    fwdioi_area_t *area = &f->owner->area;
    size_t len = sizeof(fwdioi_msg_t) + wire_cap;
    int to = local_writer(f, writer);
    fwdioi_msg_t *m = NULL;
    if (to >= 0 && (!lent_buf || fwdioi_area_own_offset(area, lent_buf, lent_len) != UINT64_MAX))
        m = fwdioi_heap_alloc(&area->heap, len);
    if (!m) {
        to = -1;
        m = fwdioi_rt_buf_get(f->engine, len);
    }
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->file = f;
    m->writer = writer;
    m->staged = staged;
    m->area_to = to;
    m->area_magic = to >= 0 ? FWDIOI_MSG_AREA_MAGIC : 0;
    m->alloc_len = len;
    return m;
}

void fwdioi_msg_set_step(fwdioi_msg_t *m, uint64_t step)
{
    m->step = step;
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    h.step = (uint32_t)step;
    memcpy(m->wire, &h, sizeof h);
}

const uint8_t *fwdioi_msg_piece_data(const fwdioi_msg_t *m, const fwdioi_piece_t *p,
                                     const uint8_t *packed)
{
    return m->lent ? m->lent_base + (p->offset - m->lent_offset) : packed;
}

void fwdioi_wire_view(const uint8_t *wire, size_t len, fwdioi_pieces_view_t *v)
{
    fwdioi_wire_header_t h;
    memset(v, 0, sizeof *v);
    v->payload = len > sizeof h ? len - sizeof h : 0;
    if (len < sizeof h)
        return;
    memcpy(&h, wire, sizeof h);
    v->step = h.step;
    if (h.npieces > (len - sizeof h) / sizeof(fwdioi_piece_t))
        return;
    size_t table = (size_t)h.npieces * sizeof(fwdioi_piece_t);
    v->npieces = h.npieces;
    v->payload = len - sizeof h - table;
    v->packed = wire + sizeof h;
    v->table = wire + len - table; /* the table ends the message */
}

void fwdioi_msg_view(const fwdioi_msg_t *m, fwdioi_pieces_view_t *v)
{
    fwdioi_wire_view(m->wire, m->wire_len, v);
    if (!m->lent)
        return;
    /* the wire holds the header and the table; the data stays lent */
    v->packed = NULL;
    v->spread_base = m->lent_base;
    v->spread_offset = m->lent_offset;
    v->payload = m->payload;
}

void fwdioi_msg_free(fwdioi_engine_t *engine, fwdioi_msg_t *m)
{
    if (m->staged)
        fwdioi_staging_release_msg(m->file, m);
    fwdioi_lent_t *lent = m->lent;
    if (m->area_to >= 0) {
        m->area_magic = 0; /* a late or forged release finds no message here */
        fwdioi_heap_free(&m->file->owner->area.heap, m, m->alloc_len);
    } else {
        fwdioi_rt_buf_put(engine, m, m->alloc_len);
    }
    /* The last message of a lent write gives the buffer back. refs is 0 when
     * the call itself failed before submitting: then there is no callback. */
    if (lent && lent->refs > 0 && --lent->refs == 0) {
        if (lent->release)
            lent->release(lent);
        else
            fwdioi_rt_deliver(engine, &lent->call);
    }
}

void fwdioi_msgs_free(fwdioi_engine_t *engine, fwdioi_task_list_t *msgs)
{
    while (!STAILQ_EMPTY(msgs)) {
        fwdioi_msg_t *m = (fwdioi_msg_t *)STAILQ_FIRST(msgs);
        STAILQ_REMOVE_HEAD(msgs, link);
        fwdioi_msg_free(engine, m);
    }
}
