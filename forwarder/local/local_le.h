/* SPDX-License-Identifier: BSD-3-Clause */
/* Little-endian fields of the tier's on-disk records (the local file's
 * index, the version record). */
#ifndef FWDIOI_LOCAL_LE_H
#define FWDIOI_LOCAL_LE_H

#include <stdint.h>

static inline void fwdioi_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void fwdioi_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t fwdioi_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t fwdioi_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#endif
