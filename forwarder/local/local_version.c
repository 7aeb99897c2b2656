/* SPDX-License-Identifier: BSD-3-Clause */
#include "local/local_version.h"
#include "local/local_le.h"

#include <string.h>

enum { AT_VERSION = 8, AT_WRITER = 16, AT_BEFORE = 24, AT_AFTER = 64,
       AT_HASH = 120, FLAG_DRAINED = 1 };
static const char magic[8] = {'F', 'W', 'D', 'I', 'O', 'L', 'V', '1'};

static uint64_t hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void put_id(uint8_t *p, const fwdioi_target_id_t *id)
{
    fwdioi_put64(p, id->exists);
    fwdioi_put64(p + 8, id->size);
    fwdioi_put64(p + 16, id->mtime_ns);
    fwdioi_put64(p + 24, id->ctime_ns);
    fwdioi_put64(p + 32, id->ino);
}

static void get_id(const uint8_t *p, fwdioi_target_id_t *id)
{
    id->exists = fwdioi_get64(p);
    id->size = fwdioi_get64(p + 8);
    id->mtime_ns = fwdioi_get64(p + 16);
    id->ctime_ns = fwdioi_get64(p + 24);
    id->ino = fwdioi_get64(p + 32);
}

void fwdioi_local_version_encode(const fwdioi_local_version_t *v, uint8_t *out)
{
    memset(out, 0, FWDIOI_LOCAL_VERSION_LEN);
    memcpy(out, magic, 8);
    fwdioi_put64(out + AT_VERSION, v->version);
    fwdioi_put64(out + AT_WRITER, (uint64_t)v->writer | (uint64_t)(v->drained ? FLAG_DRAINED : 0) << 32);
    put_id(out + AT_BEFORE, &v->before);
    if (v->drained)
        put_id(out + AT_AFTER, &v->after);
    fwdioi_put64(out + AT_HASH, hash(out, AT_HASH));
}

int fwdioi_local_version_decode(const uint8_t *buf, size_t len, fwdioi_local_version_t *v)
{
    memset(v, 0, sizeof *v);
    if (len != FWDIOI_LOCAL_VERSION_LEN || memcmp(buf, magic, 8) ||
        fwdioi_get64(buf + AT_HASH) != hash(buf, AT_HASH))
        return -1;
    uint64_t wf = fwdioi_get64(buf + AT_WRITER);
    if ((wf >> 32) & ~(uint64_t)FLAG_DRAINED)
        return -1; /* a flag this format does not know */
    v->version = fwdioi_get64(buf + AT_VERSION);
    v->writer = (uint32_t)wf;
    v->drained = (int)((wf >> 32) & FLAG_DRAINED);
    get_id(buf + AT_BEFORE, &v->before);
    if (v->drained)
        get_id(buf + AT_AFTER, &v->after);
    return 0;
}

int fwdioi_target_id_same(const fwdioi_target_id_t *a, const fwdioi_target_id_t *b)
{
    if (!a->exists || !b->exists)
        return !a->exists && !b->exists;
    return a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns &&
           a->ino == b->ino;
}

int fwdioi_local_version_usable(const fwdioi_local_version_t *v, const fwdioi_target_id_t *now)
{
    /* Drained: the target holds this version while it is what the drain
     * left. Not drained (a killed job, or a drain that failed): the target
     * is older while it is still the predecessor the version found. */
    return fwdioi_target_id_same(v->drained ? &v->after : &v->before, now);
}
