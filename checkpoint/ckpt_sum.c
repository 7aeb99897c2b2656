/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_sum.h"

#include <zlib.h>

/* crc32_combine(a, b, n) = crc32 of A||B when a = crc32(A), b = crc32(B),
 * n = |B|; it is a multiplication of a by x^(8n), XORed with b, which is what
 * both helpers below use. Lengths are z_off_t: 64 bits where fwdio builds. */
_Static_assert(sizeof(z_off_t) >= 8, "zlib's z_off_t must hold a file size");
static uint32_t combine(uint32_t a, uint32_t b, uint64_t len_b)
{
    return (uint32_t)crc32_combine(a, b, (z_off_t)len_b);
}

/* crc32 pre- and post-inverts: crc32(M) = x^(8|M|) ~0 ^ R(M) ^ ~0 with R
 * linear and R(zeros) = 0, so crc32 of n zeros is x^(8n) ~0 ^ ~0, which is
 * combine(~0, ~0, n): one step, not one per bit of n (a term per write made
 * a checkpoint of 2,000 small pieces per rank spend milliseconds here). */
uint32_t fwdioi_ckpt_crc_zeros(uint64_t len)
{
    return combine(0xffffffffu, 0xffffffffu, len);
}

uint32_t fwdioi_ckpt_sum_term(uint32_t crc, uint64_t len, uint64_t offset, uint64_t size)
{
    /* L(piece) = crc ^ crc32(zeros of len); leading zeros leave L as it is,
     * trailing ones multiply it by x^(8 * trailing): combine with b = 0. */
    if (offset > size || len > size - offset)
        return 0; /* outside the file: callers never pass it (fwdio_write refused it) */
    uint32_t linear = crc ^ fwdioi_ckpt_crc_zeros(len);
    return combine(linear, 0, size - offset - len);
}

uint32_t fwdioi_ckpt_sum_bytes(const void *buf, size_t len, uint64_t offset, uint64_t size)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    const unsigned char *p = buf;
    size_t left = len;
    while (left) { /* zlib's crc32 takes a uInt length */
        uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;
        crc = crc32(crc, p, n);
        p += n;
        left -= n;
    }
    return fwdioi_ckpt_sum_term((uint32_t)crc, len, offset, size);
}

uint32_t fwdioi_ckpt_sum_final(uint32_t terms, uint64_t size)
{
    return terms ^ fwdioi_ckpt_crc_zeros(size);
}
