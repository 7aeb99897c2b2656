/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fuzz test of tests/mpi/api/test_fuzz.c (which describes what it checks):
 * its state, and the parts in tests/mpi/api/fuzz/: shared plans (plans.c), bad
 * calls and refusals (bad_calls.c), and the checks at the end of a round
 * (checks.c).
 */
#ifndef FWDIO_TEST_FUZZ_H
#define FWDIO_TEST_FUZZ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fwdio.h"
#include "test_common.h"

enum { MAX_FILES = 24, MAX_LIST = 8, NO_ALT = 1 /* never a status code */ };

typedef enum {
    KIND_GOOD,
    KIND_OVERLAP,     /* one rank rewrites bytes of an extent */
    KIND_BADPATH,     /* in a missing directory */
    KIND_TWO_COMMITS, /* two ranks set a commit block */
    KIND_RENAME_FAILS /* atomic replace of a non-empty directory */
} kind_t;

/* A piece of the file this rank must write, written from its start. */
typedef struct job {
    size_t ext; /* index in the plan, or SIZE_MAX for the overlapping rewrite */
    uint64_t offset, len, done;
} job_t;

/* One fwdio_write_lent buffer, kept until the end of the round. */
typedef struct lent {
    struct lent *next;
    uint8_t *buf;
    size_t len;
    int file;
    atomic_int calls;
    atomic_int status;
} lent_t;

typedef struct ffile {
    char name[48], path[4096];
    kind_t kind;
    uint64_t size, seed;
    fwdio_options_t opts;
    int list[MAX_LIST];
    tc_extent_t *ext; /* the shared plan: owner -1 is a hole */
    size_t n_ext;
    int deadline; /* last epoch in which a rank may still write or close it */
    job_t *jobs;  /* this rank's; [0, pending) not finished yet */
    size_t n_jobs, pending;
    int may_skip; /* this rank may close before writing everything */
    int committer[2];  /* ranks that set a commit block, or -1 */
    uint64_t commit_off, commit_len;
    int commit_pending; /* this rank still has to set its block */
    int commit_set;     /* this rank has set it */
    uint64_t accepted_bytes, accepted_calls;
    tc_cbstate_t cb;
    fwdio_file_t *f; /* NULL once freed here or released by fwdio_finalize */
    int closed;
    int have_status, status; /* from fwdio_wait / fwdio_test */
} ffile_t;

/* Counts of what this rank did, for the summary. */
typedef struct counts {
    long calls, refused, writes, lent, try_eagain, waits, tests, frees, early_closes, commits;
} counts_t;

typedef struct fuzz {
    uint64_t seed;
    int force_mode; /* -1: random callback mode per runtime */
    fwdio_runtime_t *rt;
    fwdio_callback_mode_t mode;
    uint64_t staging_budget;
    ffile_t files[MAX_FILES];
    int nfiles;
    lent_t *lents;
    tc_rng_t shared, mine;
    counts_t n;
    int round, epoch;
    atomic_int context_checks; /* callbacks that tried the forbidden calls */
} fuzz_t;

static inline int want(fuzz_t *z, uint64_t one_in)
{
    return tc_rng_below(&z->mine, one_in) == 0;
}

/* The same, drawn alike on every rank. */
static inline int want_shared(fuzz_t *z, uint64_t one_in)
{
    return tc_rng_below(&z->shared, one_in) == 0;
}

/* plans.c: what every rank does alike, drawn from z->shared. */
void fuzz_random_config(fuzz_t *z, fwdio_config_t *c);
/** Plan, open (collectively) and register the next file of the round. */
void fuzz_open_file(fuzz_t *z, int epoch, int epochs);

/* bad_calls.c */
/** got must be want_rc, or alt (NO_ALT: none) when the file fails anyway. */
void fuzz_check_rc(const ffile_t *m, const char *call, int got, int want_rc, int alt);
/** A call that must be refused: its code, and (m non-NULL) no state change. */
void fuzz_refused(fuzz_t *z, ffile_t *m, const char *call, int got, int want_rc, int alt);
/** One random bad call on the file m. */
void fuzz_bad_write(fuzz_t *z, ffile_t *m);
/** Bad calls that need no file: NULL handles, junk codes, an open without a
 *  runtime, bad init. */
void fuzz_junk_calls(fuzz_t *z);
/** Refused fwdio_open calls, each taking its place in the open order: every
 *  rank calls this at the same point (shared generator). */
void fuzz_bad_open(fuzz_t *z);
/** Hook of the ready callback: the calls a callback may not make. */
void fuzz_calls_from_callback(tc_cbstate_t *st, fwdio_file_t *f, int status);

/* checks.c (collective) */
void fuzz_check_files(fuzz_t *z);
void fuzz_check_lents(fuzz_t *z);
int fuzz_exists(const char *path);

/* test_fuzz.c */
void fuzz_on_lent_done(fwdio_file_t *f, const void *buf, int status, void *arg);

#endif
