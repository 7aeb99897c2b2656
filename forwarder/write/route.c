/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routing: a write is cut at stripe boundaries and the pieces for each writer
 * are copied into one message (several if larger than max_message_size, or if
 * its piece table would not fit in FWDIOI_MESSAGE_HEADROOM), so the caller's
 * buffer is free once fwdio_write returns.
 */
#include "write/route.h"

#include "write/message.h"
#include "write/sender.h"

#include <stdlib.h>
#include <string.h>

/* Most pieces in one message: its header and piece table fit in the headroom
 * left beside max_message_size bytes of data, so a message is never much
 * larger than max_message_size, whatever the stripe size (with small stripes
 * of several writers, every stripe is a piece). */
#define MAX_PIECES                                                                         \
    ((FWDIOI_MESSAGE_HEADROOM - sizeof(fwdioi_wire_header_t)) / sizeof(fwdioi_piece_t))

/* Pieces of one message being built. Most writes give a few pieces: those stay
 * in `local`, so fwdio_write mallocs nothing for them. */
typedef struct piece_list {
    fwdioi_piece_t *p;
    size_t n, cap;
    uint64_t payload;
    fwdioi_piece_t local[8];
} piece_list_t;

static int piece_list_add(piece_list_t *l, uint64_t offset, uint64_t len)
{
    if (l->n > 0 && l->p[l->n - 1].offset + l->p[l->n - 1].len == offset) {
        l->p[l->n - 1].len += len; /* contiguous stripes of one writer: one piece */
        l->payload += len;
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = 2 * l->cap;
        fwdioi_piece_t *p = malloc(cap * sizeof *p);
        if (!p)
            return -1;
        memcpy(p, l->p, l->n * sizeof *p);
        if (l->p != l->local)
            free(l->p);
        l->p = p;
        l->cap = cap;
    }
    l->p[l->n++] = (fwdioi_piece_t){offset, len};
    l->payload += len;
    return 0;
}

/* Turn the collected pieces into a message; `base` is the caller's buffer
 * holding file bytes from `base_offset`. */
static fwdioi_msg_t *emit(fwdio_file_t *f, int writer, piece_list_t *l, const uint8_t *base,
                          uint64_t base_offset, fwdioi_lent_t *lent)
{
    size_t data_len = lent ? 0 : (size_t)l->payload;
    size_t wire_len = sizeof(fwdioi_wire_header_t) + data_len + l->n * sizeof(fwdioi_piece_t);
    fwdioi_msg_t *m = fwdioi_msg_new(f, writer, wire_len, !lent, lent ? lent->buf : NULL,
                                     lent ? lent->len : 0);
    if (!m)
        return NULL;
    m->task.run = fwdioi_msg_task; /* the progress thread sends it */
    m->lent = lent;
    m->lent_base = base;
    m->lent_offset = base_offset;
    m->payload = l->payload;
    m->wire_len = wire_len;
    fwdioi_wire_header_t h = {(uint32_t)l->n, 0};
    memcpy(m->wire, &h, sizeof h);
    uint8_t *data = m->wire + sizeof h;
    for (size_t i = 0; !lent && i < l->n; i++) {
        memcpy(data, base + (l->p[i].offset - base_offset), l->p[i].len);
        data += l->p[i].len;
    }
    memcpy(data, l->p, l->n * sizeof(fwdioi_piece_t));
    if (lent)
        lent->refs++;
    l->n = 0;
    l->payload = 0;
    return m;
}

int fwdioi_route_write(fwdio_file_t *f, const uint8_t *buf, uint64_t len, uint64_t offset,
                       fwdioi_lent_t *lent, fwdioi_task_list_t *msgs)
{
    const fwdioi_plan_t *p = &f->plan;
    const uint64_t cap = fwdioi_rt_config(f->engine)->max_message_size;
    const uint64_t end = offset + len;
    const uint64_t s0 = offset / p->stripe_size, s1 = (end - 1) / p->stripe_size;
    int w0, nw;
    fwdioi_plan_writers_in_range(p, s0, s1, &w0, &nw);

    STAILQ_INIT(msgs);
    piece_list_t l;
    l.p = l.local;
    l.n = 0;
    l.cap = sizeof l.local / sizeof l.local[0];
    l.payload = 0;
    int rc = FWDIO_OK;
    for (int i = 0; i < nw && rc == FWDIO_OK; i++) {
        int w = (w0 + i) % p->nwriters;
        for (uint64_t s = fwdioi_plan_next_stripe(p, w, s0); s <= s1 && rc == FWDIO_OK;
             s = fwdioi_plan_next_stripe(p, w, s + 1)) {
            uint64_t a = s * p->stripe_size > offset ? s * p->stripe_size : offset;
            uint64_t b = (s + 1) * p->stripe_size < end ? (s + 1) * p->stripe_size : end;
            while (a < b) {
                uint64_t take = b - a < cap - l.payload ? b - a : cap - l.payload;
                if (piece_list_add(&l, a, take) != 0) {
                    rc = FWDIO_ENOMEM;
                    break;
                }
                a += take;
                if (l.payload == cap || l.n == MAX_PIECES) {
                    fwdioi_msg_t *m = emit(f, w, &l, buf, offset, lent);
                    if (!m) {
                        rc = FWDIO_ENOMEM;
                        break;
                    }
                    STAILQ_INSERT_TAIL(msgs, &m->task, link);
                }
            }
        }
        if (rc == FWDIO_OK && l.n > 0) {
            fwdioi_msg_t *m = emit(f, w, &l, buf, offset, lent);
            if (m)
                STAILQ_INSERT_TAIL(msgs, &m->task, link);
            else
                rc = FWDIO_ENOMEM;
        }
    }
    if (l.p != l.local)
        free(l.p);
    if (rc != FWDIO_OK) {
        if (lent)
            lent->refs = 0; /* the call fails: no callback */
        /* the caller gives the whole write's staging back, not the messages */
        fwdioi_task_t *t;
        STAILQ_FOREACH(t, msgs, link)
            ((fwdioi_msg_t *)t)->staged = 0;
        fwdioi_msgs_free(f->engine, msgs);
    }
    return rc;
}
