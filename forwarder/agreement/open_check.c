/* SPDX-License-Identifier: BSD-3-Clause */
#include "agreement/open_check.h"

#include <string.h>

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
