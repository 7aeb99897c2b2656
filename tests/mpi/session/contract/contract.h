/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_contract (../test_contract.c, which describes every case): the helpers
 * its cases share (common.c) and the cases, one file per family:
 *
 *   agreement.c     ranks that disagree; calls that cannot work
 *   refusals.c      fwdio_open refused on some ranks only
 *   versions.c      versions of one path; jobs killed while replacing one
 *   mpi_failures.c  MPI calls that fail while a file is written, read or
 *                   grown step by step
 */
#ifndef FWDIO_TEST_CONTRACT_H
#define FWDIO_TEST_CONTRACT_H

#include <stdint.h>

#include "fwdio.h"

enum { STRIPE = 64 << 10, UNIT = 16 << 10 };
extern const uint64_t SIZE;

/* --callback-mode (test_contract.c) */
extern fwdio_callback_mode_t g_mode;

/* The options of the cases' files: STRIPE, UNIT, two writers (one on one rank). */
void options(fwdio_options_t *o);
/* Rank 0 writes `path` with the pattern of `seed` by plain I/O (an old file). */
void old_file(const char *path, uint64_t size, uint64_t seed);
/* Writes to a file that is known to have failed are refused (EFAILED):
 * expected where an MPI failure is injected. */
extern int g_writes_may_fail;
/* This rank's share of [0, size): stripe-sized pieces round robin. */
void write_share(fwdio_file_t *f, uint64_t size, uint64_t seed);
/* Every rank: the file's status is `want` and its text holds `text`. */
void expect_status(fwdio_file_t *f, int status, int want, const char *text,
                   const char *what);
int exists(const char *path);

/* agreement.c */
/* One file opened with `size` (rank `odd_rank` opens with odd_size, or
 * another change made by `tweak`), written, closed, waited for. */
void mismatch_case(const char *what, void (*tweak)(fwdio_options_t *, uint64_t *),
                   const char *text);
void other_size(fwdio_options_t *o, uint64_t *size);
void other_writers(fwdio_options_t *o, uint64_t *size);
void other_atomic(fwdio_options_t *o, uint64_t *size);
void case_mismatch_order(void);
void case_callback_open(void);
void case_huge(void);
void case_intercomm(void);
/* versions.c */
void case_versions(int atomic);
void case_path_open(void);
void kill_versions(const char *dir, int after);
void kill_shared(const char *dir, int after);
/* refusals.c */
void case_refused_code(void);
void case_refused_env(void);
/* mpi_failures.c */
void case_mpi_fault(int expect1, int expect2, const char *text);
void case_read_mpi_fault(int expect1, int expect2, const char *text);
void case_stream_mpi_fault(int fail_from, const char *text);

#endif
