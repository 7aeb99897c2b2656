/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_streams (../test_streams.c, which describes every case): the helpers
 * its cases share (common.c) and the cases, one file per family:
 *
 *   steps.c    random steps, commit headers, a failing step, ranks that end
 *              different numbers of steps, misuse
 *   appends.c  ordered appends, a rank steps ahead, kept contents
 *   killed.c   a job killed while it writes a stream, and what it left
 */
#ifndef FWDIO_TEST_STREAMS_H
#define FWDIO_TEST_STREAMS_H

#include <stdatomic.h>
#include <stdint.h>

#include "fwdio.h"
#include "test_common.h"

enum { HEADER = 64 };
extern const char MAGIC[8];

typedef struct stream_case {
    char path[4096];
    uint64_t seed;
    int nsteps;
    uint64_t *base, *len; /* [nsteps] each step's bytes */
    int commit;           /* rank 0 sets a header commit block each step */
    fwdio_file_t *f;
    atomic_int steps_seen; /* step callbacks run */
    atomic_int step_order_bad;
    atomic_int steps_ok;   /* of them with FWDIO_OK */
    int want_from_fail;    /* steps from this one on must fail with want_fail */
    int want_fail;
    tc_cbstate_t cb;
} stream_case_t;

/* --callback-mode (test_streams.c) */
extern fwdio_callback_mode_t g_mode;

/* Steps of random sizes after the header; one in five is empty. */
void plan_steps(stream_case_t *c, int nsteps, uint64_t max_step);
uint64_t data_end(const stream_case_t *c, int steps);
/* Step k's bytes are in the file (a rank that did not write them checks). */
int step_in_file(const stream_case_t *c, int k);
void check_header(const stream_case_t *c, uint64_t complete, uint64_t ended);
void open_stream(fwdio_runtime_t *rt, stream_case_t *c, const char *name, uint64_t seed,
                 const fwdio_options_t *opts);
/* This rank's pieces of step k, written or lent at random. */
void write_step(stream_case_t *c, int k, uint64_t max_piece, tc_rng_t *mine);
void finish_stream(fwdio_runtime_t *rt, stream_case_t *c, int want, int ended);
fwdio_options_t stream_options(int writers, fwdio_layout_t layout);

/* steps.c */
void case_random(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                 fwdio_layout_t layout, uint64_t max_piece, int commit, int offsets_only);
void case_fault(int nsteps, uint64_t seed);
void case_mismatch(fwdio_runtime_t *rt, uint64_t seed);
void case_args(fwdio_runtime_t *rt);
/* appends.c */
void case_ahead(uint64_t seed);
void case_append(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                 fwdio_layout_t layout);
void case_keep(fwdio_runtime_t *rt, uint64_t seed);
void case_offsets_only(fwdio_runtime_t *rt);
void case_must_exist(fwdio_runtime_t *rt);
/* killed.c */
void killed_run(fwdio_runtime_t *rt, const char *dir, uint64_t seed);
void after_kill(const char *dir, uint64_t seed);

#endif
