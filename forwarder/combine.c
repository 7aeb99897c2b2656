/*
 * Write combining. A rank that writes its atoms one record at a time would pay
 * one message, one task hand-off and one MPI send per fwdio_write. Instead,
 * copied writes of at most combine_size bytes are appended to one open message
 * per (file, writer): the bytes go straight into the message buffer, the piece
 * table grows on the side (a piece that continues the previous one in the file
 * just extends it) and is put after the data when the message is sealed, which
 * is why the wire format (file.h) ends with the table.
 *
 * An open message is sealed and handed to the progress thread when the next
 * bytes do not fit, when the file is closed on this rank, when fwdio_poll,
 * fwdio_test or fwdio_wait runs, or when a write has to wait for staging room
 * (its bytes count as staged, so the room waited for could be its own). The
 * progress thread itself sends the open messages of a file once the oldest has
 * held bytes for poll_max_us; it checks on every poll tick, and ticks are at
 * most poll_max_us apart while a file is open, so no byte waits in an open
 * message longer than 2 x poll_max_us (once the progress thread has the CPU).
 *
 * Everything but fwdioi_combine_flush_stale runs under the runtime lock: an
 * append is one copy of a small write, and the lock also orders appends
 * against fwdio_close, which seals the file's messages before queuing the
 * close task.
 */
#include "combine.h"

#include "message.h"
#include "sender.h"
#include "staging.h"

#include <stdlib.h>
#include <string.h>

typedef struct chain {
    fwdioi_msg_t *first, *last;
} chain_t;

static void chain_add(chain_t *ch, fwdioi_msg_t *m)
{
    m->task.next = NULL;
    if (ch->last)
        ch->last->task.next = &m->task;
    else
        ch->first = m;
    ch->last = m;
}

static void chain_submit_locked(fwdioi_rt_t *rt, const chain_t *ch)
{
    if (ch->first)
        fwdioi_rt_submit_locked(rt, &ch->first->task, &ch->last->task);
}

/* Wire bytes of a message of `payload` data bytes in `npieces` pieces. */
static size_t wire_size(uint64_t payload, size_t npieces)
{
    return sizeof(fwdioi_wire_header_t) + (size_t)payload + npieces * sizeof(fwdioi_piece_t);
}

/* Finish the open message of `c`: header in front, piece table after the data. */
static fwdioi_msg_t *seal(fwdioi_combine_t *c)
{
    fwdioi_msg_t *m = c->open;
    fwdioi_wire_header_t h = {(uint32_t)c->npieces, 0};
    memcpy(m->wire, &h, sizeof h);
    memcpy(m->wire + sizeof h + m->payload, c->pieces, c->npieces * sizeof *c->pieces);
    m->wire_len = wire_size(m->payload, c->npieces);
    c->open = NULL;
    c->npieces = 0;
    return m;
}

/* Seal every open message of `f` into `ch`. */
static void seal_file_locked(fwdio_file_t *f, chain_t *ch)
{
    if (atomic_load_explicit(&f->combine_since, memory_order_relaxed) == 0)
        return;
    for (int w = 0; w < f->plan.nwriters; w++)
        if (f->combine[w].open)
            chain_add(ch, seal(&f->combine[w]));
    atomic_store_explicit(&f->combine_since, 0, memory_order_relaxed);
    f->owner->combining_files--;
}

static int open_message(fwdio_file_t *f, int writer, fwdioi_combine_t *c, size_t cap)
{
    fwdioi_msg_t *m = fwdioi_msg_new(f, writer, cap, 1);
    if (!m)
        return -1;
    c->open = m;
    if (atomic_load_explicit(&f->combine_since, memory_order_relaxed) == 0) {
        atomic_store_explicit(&f->combine_since, fwdioi_now_ns(), memory_order_relaxed);
        f->owner->combining_files++;
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

/* Append `len` bytes at file offset `off` (all of one writer's stripe) to the
 * writer's open message, sealing full ones into `ch`; *taken counts the bytes
 * appended. */
static int append(fwdio_file_t *f, int writer, const uint8_t *src, uint64_t off, uint64_t len,
                  chain_t *ch, uint64_t *taken)
{
    fwdioi_combine_t *c = &f->combine[writer];
    const size_t cap = fwdioi_rt_config(f->rt)->combine_size;
    while (len > 0) {
        if (!c->open && open_message(f, writer, c, cap) != 0)
            return FWDIO_ENOMEM;
        fwdioi_msg_t *m = c->open;
        fwdioi_piece_t *last = c->npieces ? &c->pieces[c->npieces - 1] : NULL;
        int extend = last && last->offset + last->len == off;
        size_t used = wire_size(m->payload, c->npieces + (extend ? 0 : 1));
        if (used >= cap) { /* not one more byte fits */
            chain_add(ch, seal(c));
            continue;
        }
        if (!extend && c->npieces == c->cap && grow_pieces(c) != 0)
            return FWDIO_ENOMEM;
        uint64_t take = len < cap - used ? len : cap - used;
        memcpy(m->wire + sizeof(fwdioi_wire_header_t) + m->payload, src, take);
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
            chain_add(ch, seal(c));
    }
    return FWDIO_OK;
}

int fwdioi_combine_write_locked(fwdio_file_t *f, const uint8_t *buf, uint64_t len,
                                uint64_t offset)
{
    const fwdioi_plan_t *p = &f->plan;
    const uint64_t end = offset + len;
    chain_t ch = {NULL, NULL};
    uint64_t taken = 0;
    int rc = FWDIO_OK;
    for (uint64_t a = offset; a < end && rc == FWDIO_OK;) {
        uint64_t s = a / p->stripe_size;
        uint64_t b = (s + 1) * p->stripe_size < end ? (s + 1) * p->stripe_size : end;
        rc = append(f, fwdioi_plan_stripe_writer(p, s), buf + (a - offset), a, b - a, &ch,
                    &taken);
        a = b;
    }
    chain_submit_locked(f->rt, &ch);
    if (taken < len) /* out of memory: what was appended stays and goes out */
        fwdioi_staging_release_locked(f, len - taken);
    return rc;
}

void fwdioi_combine_flush_file_locked(fwdio_file_t *f)
{
    chain_t ch = {NULL, NULL};
    seal_file_locked(f, &ch);
    chain_submit_locked(f->rt, &ch);
}

void fwdioi_combine_flush_all_locked(struct fwdio_runtime *o)
{
    if (o->combining_files == 0)
        return;
    chain_t ch = {NULL, NULL};
    for (fwdio_file_t *f = o->live; f && o->combining_files > 0; f = f->live_next)
        seal_file_locked(f, &ch);
    chain_submit_locked(o->rt, &ch);
}

int fwdioi_combine_flush_stale(struct fwdio_runtime *o, uint64_t age_ns)
{
    chain_t ch = {NULL, NULL};
    uint64_t now = 0;
    for (fwdio_file_t *f = o->active; f; f = f->s.next_active) {
        uint64_t since = atomic_load_explicit(&f->combine_since, memory_order_relaxed);
        if (since == 0)
            continue;
        if (now == 0)
            now = fwdioi_now_ns();
        if (now < since || now - since < age_ns)
            continue;
        fwdioi_rt_lock(o->rt);
        seal_file_locked(f, &ch);
        fwdioi_rt_unlock(o->rt);
    }
    /* On the progress thread already: no hand-off, straight to the session. The
     * file's close task, if queued, was queued after these were sealed and runs
     * after this poll. */
    int n = 0;
    fwdioi_msg_t *m = ch.first;
    while (m) {
        fwdioi_msg_t *next = (fwdioi_msg_t *)m->task.next;
        fwdioi_msg_task(&m->task);
        m = next;
        n++;
    }
    return n;
}

void fwdioi_combine_free(fwdio_file_t *f)
{
    for (int w = 0; f->combine && w < f->plan.nwriters; w++)
        free(f->combine[w].pieces);
    free(f->combine);
    f->combine = NULL;
}
