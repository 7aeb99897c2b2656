/* SPDX-License-Identifier: BSD-3-Clause */
/* fwdio_alloc and fwdio_release, and the registry of live buffers (user_buffers.h). */
#include "node/user_buffers.h"

#include "log.h"

#include <stdlib.h>
#include <string.h>

typedef struct user_buffer {
    uint8_t *p;
    uint64_t len;
    int in_area; /* cut from the area's heap (else posix_memalign) */
    int lent;    /* lent writes of it in flight */
} user_buffer_t;

struct fwdioi_user_buffers {
    pthread_mutex_t lock;
    user_buffer_t *v; /* sorted by address */
    size_t n, cap;
    uint64_t in_area, other;
};

int fwdioi_buffers_create(struct fwdio_runtime *o)
{
    struct fwdioi_user_buffers *b = calloc(1, sizeof *b);
    if (!b)
        return -1;
    pthread_mutex_init(&b->lock, NULL);
    o->buffers = b;
    return 0;
}

static void free_buffer(struct fwdio_runtime *o, const user_buffer_t *u)
{
    if (u->in_area)
        fwdioi_heap_free(&o->area.heap, u->p, u->len);
    else
        free(u->p);
}

void fwdioi_buffers_destroy(struct fwdio_runtime *o)
{
    struct fwdioi_user_buffers *b = o->buffers;
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        free_buffer(o, &b->v[i]);
    free(b->v);
    pthread_mutex_destroy(&b->lock);
    free(b);
    o->buffers = NULL;
}

/* Index of the first buffer that starts after p (lock held). */
static size_t upper(const struct fwdioi_user_buffers *b, const uint8_t *p)
{
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->v[mid].p <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The live buffer holding p, or NULL (lock held). */
static user_buffer_t *containing(struct fwdioi_user_buffers *b, const uint8_t *p)
{
    size_t i = upper(b, p);
    if (i == 0)
        return NULL;
    user_buffer_t *u = &b->v[i - 1];
    return p < u->p + u->len ? u : NULL;
}

int fwdio_alloc(fwdio_runtime_t *rt, size_t len, void **buf)
{
    if (buf)
        *buf = NULL;
    if (!rt || !buf || len == 0) {
        fwdioi_report("fwdio_alloc: %s", !rt    ? "no runtime"
                                         : !buf ? "no place for the pointer (buf is NULL)"
                                                : "a buffer of 0 bytes");
        return FWDIO_EINVAL;
    }
    struct fwdioi_user_buffers *b = rt->buffers;
    user_buffer_t u = {NULL, len, 1, 0};
    if (rt->area.enabled)
        u.p = fwdioi_heap_alloc(&rt->area.heap, len);
    if (!u.p) { /* no area here, or no room left in it */
        void *p = NULL;
        u.in_area = 0;
        if (posix_memalign(&p, FWDIOI_HEAP_ALIGN, len) != 0)
            return FWDIO_ENOMEM;
        u.p = p;
    }
    pthread_mutex_lock(&b->lock);
    int rc = FWDIO_OK;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        user_buffer_t *v = realloc(b->v, cap * sizeof *v);
        if (v) {
            b->v = v;
            b->cap = cap;
        } else {
            rc = FWDIO_ENOMEM;
        }
    }
    if (rc == FWDIO_OK) {
        size_t i = upper(b, u.p);
        memmove(&b->v[i + 1], &b->v[i], (b->n - i) * sizeof *b->v);
        b->v[i] = u;
        b->n++;
        *(u.in_area ? &b->in_area : &b->other) += len;
    }
    pthread_mutex_unlock(&b->lock);
    if (rc != FWDIO_OK) {
        free_buffer(rt, &u);
        return rc;
    }
    *buf = u.p;
    return FWDIO_OK;
}

int fwdio_release(fwdio_runtime_t *rt, void *buf)
{
    if (!rt || !buf) {
        fwdioi_report("fwdio_release: %s", !rt ? "no runtime" : "a NULL buffer");
        return FWDIO_EINVAL;
    }
    struct fwdioi_user_buffers *b = rt->buffers;
    pthread_mutex_lock(&b->lock);
    user_buffer_t *u = containing(b, buf);
    int rc = FWDIO_OK;
    user_buffer_t gone = {0};
    if (!u || u->p != buf) {
        rc = FWDIO_EINVAL;
    } else if (u->lent > 0) {
        rc = FWDIO_EBUSY;
    } else {
        gone = *u;
        *(gone.in_area ? &b->in_area : &b->other) -= gone.len;
        size_t i = (size_t)(u - b->v);
        memmove(&b->v[i], &b->v[i + 1], (b->n - i - 1) * sizeof *b->v);
        b->n--;
    }
    int lent = u ? u->lent : 0;
    int inside = u && u->p != buf;
    pthread_mutex_unlock(&b->lock);
    if (rc == FWDIO_EINVAL)
        fwdioi_report("fwdio_release(%p): %s", buf,
                      inside ? "points inside a buffer from fwdio_alloc, not at its start"
                             : "not a buffer from fwdio_alloc of this runtime, or released "
                               "already");
    else if (rc == FWDIO_EBUSY)
        fwdioi_report("fwdio_release(%p): %d lent write(s) of it are still in flight; release "
                      "it after their done callbacks",
                      buf, lent);
    else
        free_buffer(rt, &gone);
    return rc;
}

int fwdioi_buffers_lend(struct fwdio_runtime *o, const void *buf, uint64_t len, void **start)
{
    struct fwdioi_user_buffers *b = o->buffers;
    *start = NULL;
    pthread_mutex_lock(&b->lock);
    user_buffer_t *u = b->n ? containing(b, buf) : NULL;
    int rc = FWDIO_OK;
    if (u && len > (uint64_t)(u->p + u->len - (const uint8_t *)buf))
        rc = FWDIO_EINVAL;
    else if (u) {
        u->lent++;
        *start = u->p;
    }
    uint64_t room = u ? (uint64_t)(u->p + u->len - (const uint8_t *)buf) : 0;
    pthread_mutex_unlock(&b->lock);
    if (rc != FWDIO_OK)
        fwdioi_report("fwdio_write_lent: %llu bytes from %p run past the end of their "
                      "fwdio_alloc buffer (%llu bytes left in it)",
                      (unsigned long long)len, buf, (unsigned long long)room);
    return rc;
}

void fwdioi_buffers_unlend(struct fwdio_runtime *o, void *start)
{
    struct fwdioi_user_buffers *b = o->buffers;
    pthread_mutex_lock(&b->lock);
    user_buffer_t *u = containing(b, start);
    if (u && u->lent > 0)
        u->lent--;
    pthread_mutex_unlock(&b->lock);
}

void fwdioi_buffers_usage(struct fwdio_runtime *o, uint64_t *in_area, uint64_t *other)
{
    struct fwdioi_user_buffers *b = o->buffers;
    pthread_mutex_lock(&b->lock);
    *in_area = b->in_area;
    *other = b->other;
    pthread_mutex_unlock(&b->lock);
}
