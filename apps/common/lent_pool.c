/* SPDX-License-Identifier: BSD-3-Clause */
/* A few fwdio_alloc buffers lent in rotation (lent_pool.h). */
#define _POSIX_C_SOURCE 200809L
#include "lent_pool.h"

#include <string.h>
#include <time.h>

void app_lent_pool_init(app_lent_pool_t *p, fwdio_runtime_t *rt)
{
    memset(p, 0, sizeof *p);
    p->rt = rt;
}

app_lent_buf_t *app_lent_get(app_lent_pool_t *p)
{
    for (;;) {
        for (int i = 0; i < APP_LENT_BUFS; i++)
            if (atomic_load(&p->bufs[i].lent) == 0)
                return &p->bufs[i];
        if (fwdio_poll(p->rt) == 0)
            nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
    }
}

int app_lent_grow(app_lent_pool_t *p, app_lent_buf_t *b, size_t need)
{
    if (b->cap >= need)
        return 0;
    size_t cap = b->cap ? 2 * b->cap : (size_t)1 << 16;
    while (cap < need)
        cap *= 2;
    if (b->mem)
        fwdio_release(p->rt, b->mem);
    b->mem = NULL;
    b->cap = 0;
    if (fwdio_alloc(p->rt, cap, (void **)&b->mem) != FWDIO_OK)
        return -1;
    b->cap = cap;
    return 0;
}

static void lent_done(fwdio_file_t *file, const void *buf, int status, void *arg)
{
    (void)file;
    (void)buf;
    (void)status; /* the file's own status reports a failure */
    atomic_fetch_sub(&((app_lent_buf_t *)arg)->lent, 1);
}

/* Lend to `file`, or to the checkpoint version `ck` when not NULL. */
static int lend(app_lent_buf_t *b, fwdio_file_t *file, fwdio_ckpt_t *ck, const void *at,
                size_t len, uint64_t offset)
{
    if (len < APP_LENT_MIN_BYTES)
        return ck ? fwdio_ckpt_write(ck, at, len, offset) : fwdio_write(file, at, len, offset);
    atomic_fetch_add(&b->lent, 1);
    int rc = ck ? fwdio_ckpt_write_lent(ck, at, len, offset, lent_done, b)
                : fwdio_write_lent(file, at, len, offset, lent_done, b);
    if (rc != FWDIO_OK)
        atomic_fetch_sub(&b->lent, 1); /* refused: no callback */
    return rc;
}

int app_lent_write(app_lent_buf_t *b, fwdio_file_t *file, const void *at, size_t len,
                   uint64_t offset)
{
    return lend(b, file, NULL, at, len, offset);
}

int app_lent_write_ckpt(app_lent_buf_t *b, fwdio_ckpt_t *ck, const void *at, size_t len,
                        uint64_t offset)
{
    return lend(b, NULL, ck, at, len, offset);
}

void app_lent_pool_free(app_lent_pool_t *p)
{
    for (int i = 0; i < APP_LENT_BUFS; i++) {
        /* still lent (a file not complete): fwdio_finalize releases it */
        if (p->bufs[i].mem && atomic_load(&p->bufs[i].lent) == 0)
            fwdio_release(p->rt, p->bufs[i].mem);
        p->bufs[i].mem = NULL;
        p->bufs[i].cap = 0;
    }
}
