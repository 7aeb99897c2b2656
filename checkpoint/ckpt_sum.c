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

uint32_t fwdioi_ckpt_crc_zeros(uint64_t len)
{
    static const unsigned char zero = 0;
    uint32_t result = 0; /* crc32 of nothing */
    uint32_t power = (uint32_t)crc32(0L, &zero, 1); /* crc32 of 2^k zeros */
    uint64_t power_len = 1;
    while (len) {
        if (len & 1)
            result = combine(result, power, power_len);
        len >>= 1;
        if (len) {
            power = combine(power, power, power_len);
            power_len <<= 1;
        }
    }
    return result;
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
