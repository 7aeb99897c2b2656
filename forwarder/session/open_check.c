/* SPDX-License-Identifier: BSD-3-Clause */
#include "session/open_check.h"

#include <string.h>

static const char *const field_names[FWDIOI_OPEN_FIELDS] = {
    [FWDIOI_FIELD_PATH] = "path",
    [FWDIOI_FIELD_ACCESS] = "access (0: fwdio_open, 1: fwdio_open_read)",
    [FWDIOI_FIELD_SIZE] = "size",
    [FWDIOI_FIELD_WRITE_SIZE] = "write_size",
    [FWDIOI_FIELD_STRIPE_SIZE] = "stripe_size",
    [FWDIOI_FIELD_WRITERS] = "number of writers",
    [FWDIOI_FIELD_WRITER_RANKS] = "writer ranks",
    [FWDIOI_FIELD_LAYOUT] = "layout",
    [FWDIOI_FIELD_TARGETS] = "targets",
    [FWDIOI_FIELD_DURABLE] = "durable",
    [FWDIOI_FIELD_ATOMIC_REPLACE] = "atomic_replace",
    [FWDIOI_FIELD_APPEND_START] = "append_start",
    [FWDIOI_FIELD_REWRITES] = "rewrites",
    [FWDIOI_FIELD_OVERLAPS] = "overlaps",
    [FWDIOI_FIELD_KEEP_CONTENTS] = "keep_contents",
    [FWDIOI_FIELD_OFFSETS_ONLY] = "offsets_only",
    [FWDIOI_FIELD_LOCAL_DIR] = "local_dir",
    [FWDIOI_FIELD_LOCAL_CAPACITY] = "local_capacity",
};

const char *fwdioi_open_field_name(int field)
{
    return field >= 0 && field < FWDIOI_OPEN_FIELDS ? field_names[field] : "an option";
}

int fwdioi_open_field_hashed(int field)
{
    return field == FWDIOI_FIELD_PATH || field == FWDIOI_FIELD_WRITER_RANKS ||
           field == FWDIOI_FIELD_LOCAL_DIR;
}

uint64_t fwdioi_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void fwdioi_open_check_pack(fwdioi_agree_pair_t out[FWDIOI_OPEN_CHECK_PAIRS], int rank,
                            const int64_t fields[FWDIOI_OPEN_FIELDS],
                            const fwdioi_errinfo_t *local)
{
    fwdioi_errinfo_pack(local, rank, out);
    fwdioi_agree_pair_t *q = out + FWDIOI_ERRINFO_PAIRS;
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++, q += 2) {
        q[0] = (fwdioi_agree_pair_t){(long)fields[i], rank};
        q[1] = (fwdioi_agree_pair_t){~(long)fields[i], rank};
    }
}

void fwdioi_open_check_result(const fwdioi_agree_pair_t agreed[FWDIOI_OPEN_CHECK_PAIRS],
                              fwdioi_errinfo_t *out)
{
    fwdioi_errinfo_unpack(agreed, out);
    if (out->status != FWDIO_OK)
        return;
    const fwdioi_agree_pair_t *q = agreed + FWDIOI_ERRINFO_PAIRS;
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++, q += 2) {
        int64_t least = q[0].key, most = ~(int64_t)q[1].key;
        if (least == most)
            continue;
        *out = (fwdioi_errinfo_t){FWDIO_EINVAL, q[0].val, 0, least, FWDIOI_REASON_MISMATCH + i,
                                  q[1].val, most};
        return;
    }
}
