/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_format.h"

#include <string.h>
#include <xxhash.h>

/* Version 2: the hashes are xxHash's XXH64 (version 1 mixed words with the
 * RNG's own mixer); a version-1 file is refused as not a checkpoint. */
static const char header_magic[8] = {'M', 'D', 'L', 'J', 'C', 'K', 'P', '2'};
static const char commit_magic[8] = {'M', 'D', 'L', 'J', 'D', 'O', 'N', 'E'};

/* Header field offsets. */
enum {
    H_MAGIC = 0,
    H_HEADER_BYTES = 8,  /* uint32 */
    H_ATOM_BYTES = 12,   /* uint32 */
    H_STEP = 16,
    H_NATOMS = 24,
    H_BOX = 32,
    H_DT = 40,
    H_CUTOFF = 48,
    H_SEED = 56,
    H_NRANKS = 64,       /* uint32, then 4 zero bytes */
    H_DATA_OFFSET = 72,
    H_COMMIT_OFFSET = 80,
    H_FILE_BYTES = 88,
    H_HASH = 120         /* hash of bytes [0, 120) */
};

/* Commit record field offsets. */
enum { C_MAGIC = 0, C_STEP = 8, C_NATOMS = 16, C_CHECKSUM = 24, C_HEADER_HASH = 32, C_HASH = 56 };

/* The hash of `len` bytes under `seed`: xxHash's XXH64. */
static uint64_t hash_bytes(const unsigned char *p, size_t len, uint64_t seed)
{
    return (uint64_t)XXH64(p, len, (XXH64_hash_t)seed);
}

static void put_u64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void put_f64(unsigned char *p, double v)
{
    memcpy(p, &v, 8);
}

static double get_f64(const unsigned char *p)
{
    double v;
    memcpy(&v, p, 8);
    return v;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

uint64_t ckpt_commit_offset(int64_t natoms)
{
    return CKPT_HEADER_BYTES + CKPT_ATOM_BYTES * (uint64_t)natoms;
}

uint64_t ckpt_file_bytes(int64_t natoms)
{
    return ckpt_commit_offset(natoms) + CKPT_COMMIT_BYTES;
}

uint64_t ckpt_header_hash(const unsigned char header[CKPT_HEADER_BYTES])
{
    return hash_bytes(header, H_HASH, 0x4D444C4A48445231ull);
}

void ckpt_header(unsigned char out[CKPT_HEADER_BYTES], const ckpt_info_t *info)
{
    memset(out, 0, CKPT_HEADER_BYTES);
    memcpy(out + H_MAGIC, header_magic, 8);
    put_u32(out + H_HEADER_BYTES, CKPT_HEADER_BYTES);
    put_u32(out + H_ATOM_BYTES, CKPT_ATOM_BYTES);
    put_u64(out + H_STEP, (uint64_t)info->step);
    put_u64(out + H_NATOMS, (uint64_t)info->natoms);
    put_f64(out + H_BOX, info->box);
    put_f64(out + H_DT, info->dt);
    put_f64(out + H_CUTOFF, info->cutoff);
    put_u64(out + H_SEED, info->seed);
    put_u32(out + H_NRANKS, info->nranks);
    put_u64(out + H_DATA_OFFSET, CKPT_HEADER_BYTES);
    put_u64(out + H_COMMIT_OFFSET, ckpt_commit_offset(info->natoms));
    put_u64(out + H_FILE_BYTES, ckpt_file_bytes(info->natoms));
    put_u64(out + H_HASH, ckpt_header_hash(out));
}

int ckpt_parse_header(const unsigned char in[CKPT_HEADER_BYTES], ckpt_info_t *info,
                      const char **why)
{
    if (memcmp(in + H_MAGIC, header_magic, 8) != 0) {
        *why = "no checkpoint header (bad magic)";
        return -1;
    }
    if (get_u32(in + H_HEADER_BYTES) != CKPT_HEADER_BYTES || get_u32(in + H_ATOM_BYTES) != CKPT_ATOM_BYTES) {
        *why = "header from another byte order or format version";
        return -1;
    }
    if (get_u64(in + H_HASH) != ckpt_header_hash(in)) {
        *why = "header damaged (hash mismatch)";
        return -1;
    }
    info->step = (int64_t)get_u64(in + H_STEP);
    info->natoms = (int64_t)get_u64(in + H_NATOMS);
    info->box = get_f64(in + H_BOX);
    info->dt = get_f64(in + H_DT);
    info->cutoff = get_f64(in + H_CUTOFF);
    info->seed = get_u64(in + H_SEED);
    info->nranks = get_u32(in + H_NRANKS);
    if (info->natoms <= 0 || get_u64(in + H_FILE_BYTES) != ckpt_file_bytes(info->natoms) ||
        get_u64(in + H_COMMIT_OFFSET) != ckpt_commit_offset(info->natoms) ||
        get_u64(in + H_DATA_OFFSET) != CKPT_HEADER_BYTES) {
        *why = "header sizes inconsistent";
        return -1;
    }
    return 0;
}

uint64_t ckpt_atom_term(int64_t id, const double x[3], const double v[3])
{
    unsigned char rec[CKPT_ATOM_BYTES];
    memcpy(rec, x, 24);
    memcpy(rec + 24, v, 24);
    return hash_bytes(rec, sizeof rec, (uint64_t)id);
}

uint64_t ckpt_partial_checksum(const md_snapshot_t *snap)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < snap->n; i++)
        sum += ckpt_atom_term(snap->id[i], snap->x + 3 * i, snap->v + 3 * i);
    return sum;
}

static uint64_t commit_hash(const unsigned char rec[CKPT_COMMIT_BYTES])
{
    return hash_bytes(rec, C_HASH, 0x4D444C4A434D5431ull);
}

void ckpt_commit_record(unsigned char out[CKPT_COMMIT_BYTES], const ckpt_info_t *info,
                        uint64_t checksum, const unsigned char header[CKPT_HEADER_BYTES])
{
    memset(out, 0, CKPT_COMMIT_BYTES);
    memcpy(out + C_MAGIC, commit_magic, 8);
    put_u64(out + C_STEP, (uint64_t)info->step);
    put_u64(out + C_NATOMS, (uint64_t)info->natoms);
    put_u64(out + C_CHECKSUM, checksum);
    put_u64(out + C_HEADER_HASH, ckpt_header_hash(header));
    put_u64(out + C_HASH, commit_hash(out));
}

int ckpt_parse_commit(const unsigned char in[CKPT_COMMIT_BYTES], ckpt_commit_t *commit,
                      const char **why)
{
    if (memcmp(in + C_MAGIC, commit_magic, 8) != 0) {
        *why = "no commit record (the checkpoint was interrupted)";
        return -1;
    }
    if (get_u64(in + C_HASH) != commit_hash(in)) {
        *why = "commit record damaged (hash mismatch)";
        return -1;
    }
    commit->step = (int64_t)get_u64(in + C_STEP);
    commit->natoms = (int64_t)get_u64(in + C_NATOMS);
    commit->checksum = get_u64(in + C_CHECKSUM);
    commit->header_hash = get_u64(in + C_HEADER_HASH);
    return 0;
}

static void put_atom(unsigned char *p, const double *x, const double *v)
{
    memcpy(p, x, 24);
    memcpy(p + 24, v, 24);
}

int ckpt_pack(md_pack_t *pack, const md_snapshot_t *snap, const unsigned char *header)
{
    if (header) {
        unsigned char *p = pack_append(pack, 0, CKPT_HEADER_BYTES);
        if (!p)
            return -1;
        memcpy(p, header, CKPT_HEADER_BYTES);
    }
    size_t i = 0;
    while (i < snap->n) {
        size_t run = 1;
        while (i + run < snap->n && snap->id[i + run] == snap->id[i] + (int64_t)run)
            run++;
        unsigned char *p = pack_append(
            pack, CKPT_HEADER_BYTES + CKPT_ATOM_BYTES * (uint64_t)snap->id[i], CKPT_ATOM_BYTES * run);
        if (!p)
            return -1;
        for (size_t k = 0; k < run; k++)
            put_atom(p + CKPT_ATOM_BYTES * k, snap->x + 3 * (i + k), snap->v + 3 * (i + k));
        i += run;
    }
    return 0;
}

void ckpt_image(unsigned char *out, const ckpt_info_t *info, const int64_t *id, const double *x,
                const double *v, size_t n)
{
    ckpt_header(out, info);
    uint64_t checksum = 0;
    for (size_t i = 0; i < n; i++) {
        put_atom(out + CKPT_HEADER_BYTES + CKPT_ATOM_BYTES * (size_t)id[i], x + 3 * i, v + 3 * i);
        checksum += ckpt_atom_term(id[i], x + 3 * i, v + 3 * i);
    }
    ckpt_commit_record(out + ckpt_commit_offset(info->natoms), info, checksum, out);
}
