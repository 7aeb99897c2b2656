/* SPDX-License-Identifier: BSD-3-Clause */
#include "local/local_index.h"
#include "local/local_le.h"

#include <stdlib.h>
#include <string.h>

enum { HEAD = 80, FOOT = 16, FORMAT = 1, HASH_AT = 72 };
static const char magic_head[8] = {'F', 'W', 'D', 'I', 'O', 'L', 'X', '1'};
static const char magic_foot[8] = {'F', 'W', 'D', 'I', 'O', 'L', 'X', 'E'};

/* FNV-1a of the index with its hash field taken as zeros. */
static uint64_t index_hash(const uint8_t *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (i >= HASH_AT && i < HASH_AT + 8 ? 0 : p[i])) * 0x100000001b3ull;
    return h;
}

static size_t path_room(size_t path_len_nul)
{
    return (path_len_nul + 7) / 8 * 8;
}

uint64_t fwdioi_local_index_offset(uint64_t size)
{
    return (size + 4095) / 4096 * 4096;
}

size_t fwdioi_local_index_len(const fwdioi_local_index_t *ix)
{
    return HEAD + path_room(strlen(ix->path) + 1) + ix->nruns * 16 + FOOT;
}

void fwdioi_local_index_encode(const fwdioi_local_index_t *ix, uint8_t *out)
{
    size_t len = fwdioi_local_index_len(ix);
    size_t plen = strlen(ix->path) + 1;
    memset(out, 0, len);
    memcpy(out, magic_head, 8);
    fwdioi_put32(out + 8, FORMAT);
    fwdioi_put32(out + 12, ix->writer);
    fwdioi_put32(out + 16, ix->nwriters);
    fwdioi_put32(out + 20, (uint32_t)plen);
    fwdioi_put64(out + 24, ix->size);
    fwdioi_put64(out + 32, ix->stripe_size);
    fwdioi_put64(out + 40, ix->write_size);
    fwdioi_put64(out + 48, ix->version);
    fwdioi_put64(out + 56, ix->created_ns);
    fwdioi_put64(out + 64, ix->nruns);
    memcpy(out + HEAD, ix->path, plen);
    uint8_t *r = out + HEAD + path_room(plen);
    for (size_t i = 0; i < ix->nruns; i++, r += 16) {
        fwdioi_put64(r, ix->runs[i].offset);
        fwdioi_put64(r + 8, ix->runs[i].len);
    }
    fwdioi_put64(out + len - FOOT, len);
    memcpy(out + len - 8, magic_foot, 8);
    fwdioi_put64(out + HASH_AT, index_hash(out, len));
}

int fwdioi_local_index_decode(const uint8_t *buf, size_t len, fwdioi_local_index_t *ix)
{
    memset(ix, 0, sizeof *ix);
    if (len < HEAD + FOOT || memcmp(buf + len - 8, magic_foot, 8))
        return -1;
    uint64_t ilen = fwdioi_get64(buf + len - FOOT);
    if (ilen < HEAD + FOOT || ilen > len)
        return -1;
    const uint8_t *p = buf + (len - ilen);
    if (memcmp(p, magic_head, 8) || fwdioi_get32(p + 8) != FORMAT)
        return -1;
    uint32_t plen = fwdioi_get32(p + 20);
    uint64_t nruns = fwdioi_get64(p + 64);
    if (plen == 0 || plen > ilen || nruns > ilen / 16 ||
        HEAD + path_room(plen) + nruns * 16 + FOOT != ilen || p[HEAD + plen - 1] != '\0' ||
        strlen((const char *)p + HEAD) + 1 != plen || index_hash(p, ilen) != fwdioi_get64(p + HASH_AT))
        return -1;
    ix->writer = fwdioi_get32(p + 12);
    ix->nwriters = fwdioi_get32(p + 16);
    ix->size = fwdioi_get64(p + 24);
    ix->stripe_size = fwdioi_get64(p + 32);
    ix->write_size = fwdioi_get64(p + 40);
    ix->version = fwdioi_get64(p + 48);
    ix->created_ns = fwdioi_get64(p + 56);
    ix->path = (const char *)p + HEAD;
    ix->nruns = (size_t)nruns;
    if (ix->writer >= ix->nwriters)
        return -1;
    ix->runs = nruns ? malloc((size_t)nruns * sizeof *ix->runs) : NULL;
    if (nruns && !ix->runs)
        return -1;
    const uint8_t *r = p + HEAD + path_room(plen);
    uint64_t end = 0;
    for (size_t i = 0; i < ix->nruns; i++, r += 16) {
        ix->runs[i].offset = fwdioi_get64(r);
        ix->runs[i].len = fwdioi_get64(r + 8);
        /* in order, not overlapping, within the target */
        if (ix->runs[i].offset < end || ix->runs[i].offset > ix->size || ix->runs[i].len == 0 ||
            ix->runs[i].len > ix->size - ix->runs[i].offset) {
            fwdioi_local_index_free(ix);
            return -1;
        }
        end = ix->runs[i].offset + ix->runs[i].len;
    }
    return 0;
}

void fwdioi_local_index_free(fwdioi_local_index_t *ix)
{
    free(ix->runs);
    ix->runs = NULL;
    ix->nruns = 0;
}
