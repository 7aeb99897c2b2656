/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test and benchmark helper: a reproducible byte pattern that is a function of
 * (seed, file offset), so any rank can produce or check any byte of a file
 * without knowing who wrote it. Not part of the installed library.
 */
#ifndef FWDIO_PATTERN_H
#define FWDIO_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/** The byte expected at `offset` of a file written with `seed` (any value 0..255;
 *  holes are checked against zeros separately). */
static inline uint8_t pattern_byte(uint64_t seed, uint64_t offset)
{
    uint64_t x = (offset >> 3) * 0x9E3779B97F4A7C15ull ^ seed * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (uint8_t)(x >> (8 * (offset & 7)));
}

/** Fill buf[0..len) with the pattern for file bytes [offset, offset + len). */
void pattern_fill(void *buf, size_t len, uint64_t offset, uint64_t seed);

/**
 * Check bytes [offset, offset + len) of the open file `fd` against the pattern
 * (expect_zero != 0: against zeros, for holes). Returns 0 if they match; else
 * -1 and sets *bad_offset to the first mismatching offset (or to the offset
 * where the file ended or a read failed).
 */
int pattern_check_fd(int fd, uint64_t offset, uint64_t len, uint64_t seed, int expect_zero,
                     uint64_t *bad_offset);

/** pattern_check_fd on a path; also fails if the file's size is not `file_size`. */
int pattern_check_file(const char *path, uint64_t file_size, uint64_t offset, uint64_t len,
                       uint64_t seed, int expect_zero, uint64_t *bad_offset);

#endif
