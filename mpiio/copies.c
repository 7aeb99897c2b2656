/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies of bytes with their file offsets, in call order (copies.h). */
#include "copies.h"

#include <stdlib.h>
#include <string.h>

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int mpiio_copies_fit(const mpiio_copies_t *k, int64_t len, int64_t limit)
{
    return len >= 0 && len <= limit - (int64_t)k->used;
}

int mpiio_copies_keep(mpiio_copies_t *k, const char *data, int64_t len, int64_t off,
                      int64_t limit)
{
    if (!mpiio_copies_fit(k, len, limit) ||
        grow((void **)&k->data, &k->data_cap, k->used + (size_t)len, 1) != 0 ||
        grow((void **)&k->c, &k->cap, k->n + 1, sizeof(*k->c)) != 0)
        return -1;
    memcpy(k->data + k->used, data, (size_t)len);
    k->c[k->n++] = (mpiio_copy_t){.off = off, .len = len, .at = k->used};
    k->used += (size_t)len;
    return 0;
}

void mpiio_copies_clear(mpiio_copies_t *k)
{
    k->used = 0;
    k->n = 0;
}

void mpiio_copies_free(mpiio_copies_t *k)
{
    free(k->data);
    free(k->c);
    *k = (mpiio_copies_t){0};
}
