/* SPDX-License-Identifier: BSD-3-Clause */
/* Ordered appends of a stream (appends.h). */
#include "stream/appends.h"

#include "log.h"
#include "write/message.h"
#include "write/route.h"
#include "write/staging.h"

#include <stdlib.h>
#include <string.h>

void fwdioi_append_list_init(fwdioi_append_list_t *l)
{
    l->head = NULL;
    l->tail = &l->head;
    l->bytes = 0;
}

void fwdioi_append_list_move(fwdioi_append_list_t *to, fwdioi_append_list_t *from)
{
    if (!from->head)
        return;
    *to->tail = from->head;
    to->tail = from->tail;
    to->bytes += from->bytes;
    fwdioi_append_list_init(from);
}

/* Free one append's copy (no lock needed: nobody else holds it). */
static void append_free(fwdio_file_t *f, fwdioi_append_t *a)
{
    if (a->in_area)
        fwdioi_heap_free(&f->owner->area.heap, a->data, a->lent.len);
    else
        free(a->data);
    free(a);
}

/* The last message of an append is done: the copy and its staging go back. */
static void append_release(fwdioi_lent_t *lent)
{
    fwdioi_append_t *a = (fwdioi_append_t *)lent;
    fwdio_file_t *f = lent->file;
    fwdioi_staging_release(f, lent->len);
    append_free(f, a);
}

/* Bytes appended since the last step end, over the runtime's streams. */
static uint64_t open_step_appends_locked(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_LOCKED(o->engine);
    uint64_t n = 0;
    for (const fwdio_file_t *g = LIST_FIRST(&o->live); g; g = LIST_NEXT(g, live_link))
        n += g->appends.bytes;
    return n;
}

int fwdioi_append(fwdio_file_t *f, const void *buf, size_t len)
{
    struct fwdio_runtime *o = f->owner;
    const uint64_t budget = fwdioi_rt_config(f->engine)->staging_buffer;
    const int may_wait = !fwdioi_rt_on_progress_thread();
    fwdioi_rt_lock(f->engine);
    int rc = fwdioi_write_refusal_locked(f);
    if (rc == FWDIO_OK && len > 0) {
        /* Held appends come back only at a step end: half the budget stays
         * for everything else, so no write waits for them. Those of steps
         * not ended yet can only leave by a step end of the application's:
         * past half the budget, refused. Those of ended steps leave once
         * every rank ended them: waited for. */
        if (open_step_appends_locked(o) + len > budget / 2) {
            fwdioi_log(FWDIOI_LOG_WARN,
                       "fwdio_append of %s: %zu bytes would take the appends of the steps not "
                       "ended yet past half the staging budget (%llu bytes): end the step "
                       "(fwdio_step_end) first, or raise staging_buffer",
                       f->path, len, (unsigned long long)budget);
            rc = FWDIO_ETOOBIG;
        }
        while (rc == FWDIO_OK && o->append_held + len > budget / 2) {
            if (!may_wait) {
                rc = FWDIO_EAGAIN;
                break;
            }
            fwdioi_rt_sleep_locked(f->engine); /* fwdioi_appends_route broadcasts */
            rc = fwdioi_write_refusal_locked(f);
        }
        if (rc == FWDIO_OK) {
            rc = fwdioi_staging_reserve_locked(f, len, may_wait);
            if (rc == FWDIO_OK)
                o->append_held += len;
        }
    }
    fwdioi_rt_unlock(f->engine);
    if (rc != FWDIO_OK || len == 0)
        return rc;
    fwdioi_append_t *a = calloc(1, sizeof *a);
    /* In the node-shared area when it has room: writers of this node take
     * the bytes from there, with no copy but pwrite's. */
    if (a && o->area.enabled && (a->data = fwdioi_heap_alloc(&o->area.heap, len)) != NULL)
        a->in_area = 1;
    else if (a)
        a->data = malloc(len);
    if (a && a->data)
        memcpy(a->data, buf, len);
    fwdioi_rt_lock(f->engine);
    rc = !a || !a->data ? FWDIO_ENOMEM : fwdioi_write_refusal_locked(f);
    if (rc == FWDIO_OK) {
        a->lent.file = f;
        a->lent.buf = a->data;
        a->lent.len = len;
        a->lent.status = FWDIO_OK;
        a->lent.release = append_release;
        *f->appends.tail = a;
        f->appends.tail = &a->next;
        f->appends.bytes += len;
        f->stats.bytes_written += len;
        f->stats.bytes_copied += len;
        f->stats.write_calls++;
    } else {
        o->append_held -= len;
        fwdioi_staging_release_locked(f, len);
    }
    fwdioi_rt_unlock(f->engine);
    if (rc != FWDIO_OK && a) {
        a->lent.len = len;
        if (a->data)
            append_free(f, a);
        else
            free(a);
    }
    return rc;
}

void fwdioi_appends_route(fwdio_file_t *f, fwdioi_append_list_t *list, uint64_t offset,
                          uint64_t step, uint64_t *sums, fwdioi_task_list_t *msgs)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_rt_lock(f->engine);
    f->owner->append_held -= list->bytes; /* on their way now: a send frees them */
    fwdioi_rt_broadcast(f->engine);            /* appends waiting for room */
    fwdioi_rt_unlock(f->engine);
    fwdioi_append_t *a = list->head;
    fwdioi_append_list_init(list);
    while (a) {
        fwdioi_append_t *next = a->next;
        uint64_t len = a->lent.len;
        fwdioi_task_list_t routed;
        if (f->s.outcome.aborted) { /* the step is over (and `sums` with it) */
            append_release(&a->lent);
        } else if (offset > f->size || len > f->size - offset) { /* past the largest stream */
            fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ERANGE, f->rank, 0, offset);
            append_release(&a->lent);
        } else if (fwdioi_route_write(f, a->data, len, offset, &a->lent, &routed) != FWDIO_OK) {
            fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ENOMEM, f->rank, 0, offset);
            append_release(&a->lent);
        } else {
            fwdioi_task_t *t;
            STAILQ_FOREACH(t, &routed, link) {
                fwdioi_msg_t *m = (fwdioi_msg_t *)t;
                fwdioi_msg_set_step(m, step);
                if (sums)
                    sums[m->writer] += m->payload;
            }
            STAILQ_CONCAT(msgs, &routed);
        }
        offset += len;
        a = next;
    }
}

void fwdioi_appends_drop(fwdio_file_t *f, fwdioi_append_list_t *list)
{
    if (!list->head)
        return;
    fwdioi_rt_lock(f->engine);
    f->owner->append_held -= list->bytes;
    fwdioi_staging_release_locked(f, list->bytes);
    fwdioi_rt_broadcast(f->engine);
    fwdioi_rt_unlock(f->engine);
    for (fwdioi_append_t *a = list->head, *next; a; a = next) {
        next = a->next;
        append_free(f, a);
    }
    fwdioi_append_list_init(list);
}
