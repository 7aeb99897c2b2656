/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A cache of message-sized buffers. Staging a write and receiving a message
 * both need buffers of up to max_message_size; taking them fresh from malloc
 * means mmap, first-touch page faults and munmap for every message, which on
 * cores shared with the application costs more than the copy itself. Buffers
 * of that class are kept for reuse, up to FWDIOI_BUFCACHE_MAX of them; smaller
 * ones come from malloc, which serves them from its arenas without faults.
 * Shared by application and progress threads, so guarded by its own lock.
 */
#include "engine_state.h"
#include "runtime.h"

#include <stdlib.h>

enum { FWDIOI_BUFCACHE_MAX = 8 };

/* Requests below this go to malloc directly. */
static size_t small_limit(const fwdioi_engine_t *rt) { return rt->cfg.max_message_size / 4; }

void *fwdioi_rt_buf_get(fwdioi_engine_t *rt, size_t len)
{
    if (len < small_limit(rt) || len > rt->buf_chunk)
        return malloc(len);
    void *p = NULL;
    pthread_mutex_lock(&rt->buf_lock);
    if (rt->buf_nfree > 0)
        p = rt->buf_free[--rt->buf_nfree];
    pthread_mutex_unlock(&rt->buf_lock);
    return p ? p : malloc(rt->buf_chunk);
}

void fwdioi_rt_buf_put(fwdioi_engine_t *rt, void *p, size_t len)
{
    if (!p)
        return;
    if (len >= small_limit(rt) && len <= rt->buf_chunk) {
        pthread_mutex_lock(&rt->buf_lock);
        if (rt->buf_nfree < FWDIOI_BUFCACHE_MAX) {
            rt->buf_free[rt->buf_nfree++] = p;
            p = NULL;
        }
        pthread_mutex_unlock(&rt->buf_lock);
    }
    free(p);
}

int fwdioi_bufcache_init(fwdioi_engine_t *rt, size_t chunk)
{
    rt->buf_chunk = chunk;
    rt->buf_nfree = 0;
    rt->buf_free = calloc(FWDIOI_BUFCACHE_MAX, sizeof *rt->buf_free);
    if (!rt->buf_free)
        return FWDIO_ENOMEM;
    pthread_mutex_init(&rt->buf_lock, NULL);
    return FWDIO_OK;
}

void fwdioi_bufcache_free(fwdioi_engine_t *rt)
{
    for (int i = 0; i < rt->buf_nfree; i++)
        free(rt->buf_free[i]);
    free(rt->buf_free);
    rt->buf_free = NULL;
    rt->buf_nfree = 0;
    pthread_mutex_destroy(&rt->buf_lock);
}
