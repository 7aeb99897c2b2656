/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The open check: a file is a collective object, so before anything touches
 * storage every rank's view of it is compared. Each rank contributes the
 * fields below (the path and the writer ranks as hashes) and anything it
 * found wrong locally; one MPI_Iallreduce keeps, per field, the smallest and
 * largest value and a rank that passed each, so a mismatch names the first
 * field that differs and two ranks that disagree.
 */
#ifndef FWDIOI_OPEN_CHECK_H
#define FWDIOI_OPEN_CHECK_H

#include "agreement/agree.h"
#include "agreement/open_fields.h"

/* Pairs reduced with MPI_MINLOC (agree.h): an errinfo, then per field
 * (value, rank) and (~value, rank), whose minima are the smallest and the
 * largest value with the lowest rank that passed each. */
#define FWDIOI_OPEN_CHECK_PAIRS (FWDIOI_ERRINFO_PAIRS + 2 * FWDIOI_OPEN_FIELDS)

/** 64-bit FNV-1a of `len` bytes, continuing from `h` (start: FWDIOI_HASH_INIT). */
#define FWDIOI_HASH_INIT 0xcbf29ce484222325ull
uint64_t fwdioi_hash(uint64_t h, const void *data, size_t len);

/** Fill the reduction input from this rank's fields and local error. */
void fwdioi_open_check_pack(fwdioi_agree_pair_t out[FWDIOI_OPEN_CHECK_PAIRS], int rank,
                            const int64_t fields[FWDIOI_OPEN_FIELDS],
                            const fwdioi_errinfo_t *local);

/** The agreed outcome of a reduced check: a local error (lowest rank's),
 *  else the first field that differs as FWDIO_EINVAL, else OK. */
void fwdioi_open_check_result(const fwdioi_agree_pair_t agreed[FWDIOI_OPEN_CHECK_PAIRS],
                              fwdioi_errinfo_t *out);

#endif
