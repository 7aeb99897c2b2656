/* SPDX-License-Identifier: BSD-3-Clause */
#include "pack.h"

#include <stdlib.h>
#include <string.h>

void pack_init(md_pack_t *p)
{
    memset(p, 0, sizeof *p);
}

void pack_free(md_pack_t *p)
{
    if (!p->external)
        free(p->buf);
    free(p->ext);
    pack_init(p);
}

void pack_reset(md_pack_t *p)
{
    p->len = 0;
    p->next = 0;
    p->need = 0;
}

void pack_use(md_pack_t *p, unsigned char *buf, size_t cap)
{
    if (!p->external)
        free(p->buf);
    p->buf = buf;
    p->cap = cap;
    p->external = 1;
    pack_reset(p);
}

void pack_own(md_pack_t *p)
{
    if (p->external) {
        p->buf = NULL;
        p->cap = 0;
        p->external = 0;
    }
    pack_reset(p);
}

void *pack_append(md_pack_t *p, uint64_t offset, size_t len)
{
    if (p->external && p->len + len > p->cap) {
        p->need = p->len + len;
        return NULL;
    }
    if (p->len + len > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->len + len)
            cap *= 2;
        unsigned char *buf = realloc(p->buf, cap);
        if (!buf)
            return NULL;
        p->buf = buf;
        p->cap = cap;
    }
    md_extent_t *last = p->next ? &p->ext[p->next - 1] : NULL;
    if (last && last->offset + last->len == offset) {
        last->len += len;
    } else {
        if (p->next == p->ext_cap) {
            size_t cap = p->ext_cap ? 2 * p->ext_cap : 64;
            md_extent_t *ext = realloc(p->ext, cap * sizeof *ext);
            if (!ext)
                return NULL;
            p->ext = ext;
            p->ext_cap = cap;
        }
        p->ext[p->next++] = (md_extent_t){offset, len};
    }
    void *at = p->buf + p->len;
    p->len += len;
    return at;
}
