/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write combining. A rank that writes its atoms one record at a time would pay
 * one message, one task hand-off and one MPI send per fwdio_write. Instead,
 * copied writes of at most combine_size bytes are appended to one open message
 * per (file, writer): the bytes go straight into the message buffer, the piece
 * table grows on the side (a piece that continues the previous one in the file
 * just extends it) and is put after the data when the message is sealed, which
 * is why the wire format (state.h) ends with the table.
 *
 * An open message is sealed and handed to the progress thread when the next
 * bytes do not fit, when the file is closed on this rank, when fwdio_poll,
 * fwdio_test or fwdio_wait runs, or when a write has to wait for staging room
 * that the messages in flight cannot free (its bytes count as staged, so the
 * room waited for could be its own; sealing at every wait would shrink the
 * messages to one write each under backpressure). The
 * progress thread itself sends the open messages of a file once the oldest has
 * held bytes for poll_max_us; it checks on every poll tick, and ticks are at
 * most poll_max_us apart while a file is open, so no byte waits in an open
 * message longer than 2 x poll_max_us (once the progress thread has the CPU).
 *
 * The bookkeeping runs under the runtime lock, the copies do not: a write
 * reserves its room in the open messages (a batch of copies, each counted in
 * its message and its file), copies its bytes with the lock released, and
 * hands them over with the lock again. A message sealed meanwhile (full, or
 * flushed by another thread) goes out when its last copy is done, so no
 * thread ever waits for another's copy, except fwdio_close: it waits until
 * the file has no copy under way before it seals the file's messages and
 * queues the close task, so every byte accepted before the close is counted
 * in it.
 */
#include "write/combine.h"

#include "write/message.h"
#include "write/sender.h"
#include "write/staging.h"

#include <stdlib.h>
#include <string.h>

/* Hand `msgs` to the session: queued for the progress thread, in order with
 * the step records and close tasks queued under the same lock. */
static void submit(fwdioi_engine_t *engine, fwdioi_task_list_t *msgs)
{
    fwdioi_rt_submit_list(engine, msgs);
}

/* Wire bytes of a message of `payload` data bytes in `npieces` pieces. */
static size_t wire_size(uint64_t payload, size_t npieces)
{
    return sizeof(fwdioi_wire_header_t) + (size_t)payload + npieces * sizeof(fwdioi_piece_t);
}

/* Finish the open message of `c`: header in front, piece table after the data
 * (the data region is reserved: copies still under way write only there).
 * Into `out` when it can go; one with copies under way goes when the last of
 * them is done (fwdioi_combine_finish_locked). */
static void seal(fwdioi_combine_t *c, fwdioi_task_list_t *out)
{
    fwdioi_msg_t *m = c->open;
    fwdioi_wire_header_t h = {(uint32_t)c->npieces, 0};
    memcpy(m->wire, &h, sizeof h);
    memcpy(m->wire + sizeof h + m->payload, c->pieces, c->npieces * sizeof *c->pieces);
    m->wire_len = wire_size(m->payload, c->npieces);
    c->open = NULL;
    c->npieces = 0;
    if (m->copies > 0)
        m->sealed_waiting = 1;
    else
        STAILQ_INSERT_TAIL(out, &m->task, link);
}

/* Seal every open message of `f` into `out`. */
static void seal_file_locked(fwdio_file_t *f, fwdioi_task_list_t *out)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    if (atomic_load_explicit(&f->combine_since, memory_order_relaxed) == 0)
        return;
    for (int w = 0; w < f->plan.nwriters; w++)
        if (f->combine[w].open)
            seal(&f->combine[w], out);
    atomic_store_explicit(&f->combine_since, 0, memory_order_relaxed);
    TAILQ_REMOVE(&f->owner->combining, f, combine_link);
    f->owner->combining_files--;
}

static int open_message(fwdio_file_t *f, int writer, fwdioi_combine_t *c, size_t cap)
{
    fwdioi_msg_t *m = fwdioi_msg_new(f, writer, cap, 1, NULL, 0);
    if (!m)
        return -1;
    m->task.run = fwdioi_msg_task; /* the progress thread sends it */
    c->open = m;
    if (atomic_load_explicit(&f->combine_since, memory_order_relaxed) == 0) {
        /* under the lock, so the queue is in the order of these times */
        atomic_store_explicit(&f->combine_since, fwdioi_now_ns(), memory_order_relaxed);
        TAILQ_INSERT_TAIL(&f->owner->combining, f, combine_link);
        f->owner->combining_files++;
        /* the progress thread may be asleep: it must come back to send this
         * message once it is poll_max_us old */
        fwdioi_rt_kick(f->engine);
    }
    return 0;
}

static int grow_pieces(fwdioi_combine_t *c)
{
    size_t cap = c->cap ? 2 * c->cap : 64;
    fwdioi_piece_t *p = realloc(c->pieces, cap * sizeof *p);
    if (!p)
        return -1;
    c->pieces = p;
    c->cap = cap;
    return 0;
}

/* Reserve room for `len` bytes at file offset `off` (all of one writer's
 * stripe) from `src` in the writer's open message, sealing full ones into
 * `out`; each reserved run becomes a copy of the batch. Stops when the batch
 * is full; *taken counts the bytes reserved. */
static int reserve(fwdio_file_t *f, int writer, const uint8_t *src, uint64_t off, uint64_t len,
                   fwdioi_task_list_t *out, fwdioi_combine_batch_t *b, uint64_t *taken)
{
    fwdioi_combine_t *c = &f->combine[writer];
    const size_t cap = fwdioi_rt_config(f->engine)->combine_size;
    while (len > 0 && b->n < FWDIOI_COMBINE_BATCH) {
        if (!c->open && open_message(f, writer, c, cap) != 0)
            return FWDIO_ENOMEM;
        fwdioi_msg_t *m = c->open;
        fwdioi_piece_t *last = c->npieces ? &c->pieces[c->npieces - 1] : NULL;
        int extend = last && last->offset + last->len == off;
        size_t used = wire_size(m->payload, c->npieces + (extend ? 0 : 1));
        if (used >= cap) { /* not one more byte fits */
            seal(c, out);
            continue;
        }
        if (!extend && c->npieces == c->cap && grow_pieces(c) != 0)
            return FWDIO_ENOMEM;
        uint64_t take = len < cap - used ? len : cap - used;
        b->copy[b->n++] = (fwdioi_combine_copy_t){
            m, m->wire + sizeof(fwdioi_wire_header_t) + m->payload, src, take};
        m->copies++;
        f->combine_copies++;
        if (extend)
            c->pieces[c->npieces - 1].len += take;
        else
            c->pieces[c->npieces++] = (fwdioi_piece_t){off, take};
        m->payload += take;
        *taken += take;
        src += take;
        off += take;
        len -= take;
        if (wire_size(m->payload, c->npieces) == cap)
            seal(c, out);
    }
    return FWDIO_OK;
}

uint64_t fwdioi_combine_reserve_locked(fwdio_file_t *f, const uint8_t *buf, uint64_t len,
                                       uint64_t offset, fwdioi_combine_batch_t *b, int *rc)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    const fwdioi_plan_t *p = &f->plan;
    const uint64_t end = offset + len;
    fwdioi_task_list_t out = STAILQ_HEAD_INITIALIZER(out);
    uint64_t taken = 0;
    b->n = 0;
    *rc = FWDIO_OK;
    for (uint64_t a = offset; a < end && *rc == FWDIO_OK && b->n < FWDIOI_COMBINE_BATCH;) {
        uint64_t s = a / p->stripe_size;
        uint64_t e = (s + 1) * p->stripe_size < end ? (s + 1) * p->stripe_size : end;
        uint64_t before = taken;
        *rc = reserve(f, fwdioi_plan_stripe_writer(p, s), buf + (a - offset), a, e - a, &out, b,
                      &taken);
        a += taken - before;
    }
    submit(f->engine, &out);
    return taken;
}

void fwdioi_combine_copy(const fwdioi_combine_batch_t *b)
{
    for (int i = 0; i < b->n; i++)
        memcpy(b->copy[i].dst, b->copy[i].src, b->copy[i].len);
}

void fwdioi_combine_finish_locked(fwdio_file_t *f, fwdioi_combine_batch_t *b)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    fwdioi_task_list_t out = STAILQ_HEAD_INITIALIZER(out);
    for (int i = 0; i < b->n; i++) {
        fwdioi_msg_t *m = b->copy[i].msg;
        f->combine_copies--;
        if (--m->copies == 0 && m->sealed_waiting) {
            m->sealed_waiting = 0;
            STAILQ_INSERT_TAIL(&out, &m->task, link);
        }
    }
    b->n = 0;
    submit(f->engine, &out);
    if (f->combine_copies == 0)
        fwdioi_rt_broadcast(f->engine); /* a close may wait for the copies */
}

void fwdioi_combine_flush_file_locked(fwdio_file_t *f)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    fwdioi_task_list_t out = STAILQ_HEAD_INITIALIZER(out);
    seal_file_locked(f, &out);
    submit(f->engine, &out);
}

void fwdioi_combine_flush_all_locked(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_LOCKED(o->engine);
    if (o->combining_files == 0)
        return;
    fwdioi_task_list_t out = STAILQ_HEAD_INITIALIZER(out);
    while (!TAILQ_EMPTY(&o->combining))
        seal_file_locked(TAILQ_FIRST(&o->combining), &out);
    submit(o->engine, &out);
}

int fwdioi_combine_flush_stale(struct fwdio_runtime *o, uint64_t age_ns, int *open_left)
{
    FWDIOI_ASSERT_PROGRESS();
    int n = 0;
    /* The files with open messages wait in the order their oldest message
     * was opened: seal from the head while old enough, and stop at the
     * first that is not, so a tick costs the files it seals plus one however
     * many files have messages open. Sealed and queued under the lock, like
     * the application's own seals: the queue keeps them in order with the
     * step records and the close task the application queued (a message
     * run straight in here could pass a step record still queued, and be
     * counted, and written, in the step before its own). */
    fwdioi_task_list_t sealed = STAILQ_HEAD_INITIALIZER(sealed);
    fwdioi_rt_lock(o->engine);
    uint64_t now = TAILQ_EMPTY(&o->combining) ? 0 : fwdioi_now_ns();
    fwdio_file_t *f;
    while ((f = TAILQ_FIRST(&o->combining)) != NULL) {
        uint64_t since = atomic_load_explicit(&f->combine_since, memory_order_relaxed);
        if (now < since || now - since < age_ns)
            break;
        seal_file_locked(f, &sealed);
    }
    *open_left = !TAILQ_EMPTY(&o->combining);
    for (fwdioi_task_t *t = STAILQ_FIRST(&sealed); t; t = STAILQ_NEXT(t, link))
        n++;
    submit(o->engine, &sealed);
    fwdioi_rt_unlock(o->engine);
    return n;
}

void fwdioi_combine_free(fwdio_file_t *f)
{
    for (int w = 0; f->combine && w < f->plan.nwriters; w++)
        free(f->combine[w].pieces);
    free(f->combine);
    f->combine = NULL;
}
