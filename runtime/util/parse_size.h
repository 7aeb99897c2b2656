/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one grammar of sizes: the library's (FWDIO_* variables, the
 * FWDIO_CONFIG file, MPI_Info hints), and the command lines of the apps,
 * benchmarks and tests, which compile parse_size.c too (it is hidden in
 * libfwdio).
 */
#ifndef FWDIOI_PARSE_SIZE_H
#define FWDIOI_PARSE_SIZE_H

#include <stdint.h>

/**
 * Parse a size in bytes: decimal digits, then optionally a unit K, M, G or T
 * (powers of 1024, either case) with an optional i after it, then an optional
 * B; blanks around are ignored. "123", "64K", "8M", "2GiB", "1tb", "512B".
 * Returns 0 and sets *out, or -1 (bad text, or more than UINT64_MAX bytes).
 */
int fwdioi_parse_size(const char *text, uint64_t *out);

#endif
