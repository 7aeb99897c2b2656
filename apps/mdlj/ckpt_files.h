/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoint file names and their life cycle in the output modes other than
 * fwdio (the baselines: MPI-IO, serial, local-copy), whose checkpoints are
 * what a code hand-rolls; --output fwdio leaves naming, retention and the
 * newest-valid search to fwdio's checkpoint sets (out_fwdio.c, restart.c).
 * Checkpoint k of base path P is the file "P.<step>". A run keeps the two newest checkpoints that completed
 * (with their commit record) and removes older ones only after a newer one
 * completed, so there is always a valid checkpoint to go back to, even when
 * the newest one turns out damaged.
 */
#ifndef MDLJ_CKPT_FILES_H
#define MDLJ_CKPT_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Split base into its directory ("." when it has none) and its file name
 * (a pointer into base): a checkpoint set's dir and name. */
void ckpt_split_base(const char *base, char *dir, size_t cap, const char **name);

/* "<base>.<step>" into out; 0, or -1 when it does not fit. */
int ckpt_path(char *out, size_t cap, const char *base, int64_t step);

/*
 * Steps of the files named "<base>.<digits>" in base's directory, newest
 * first, into a malloc'd array (*steps, free it). Returns the count, or -1
 * when the directory cannot be read.
 */
long ckpt_list(const char *base, int64_t **steps);

/* Which checkpoints of this run are in flight and which completed. */
typedef struct md_ckpt_ledger {
    const char *base;
    int64_t newest[2];  /* the two newest completed steps, [0] newest; -1: none */
    int64_t *in_flight; /* steps started and not yet completed */
    size_t n_in_flight, cap_in_flight;
} md_ckpt_ledger_t;

/* `resumed_from`: the checkpoint a restart read (it counts as completed), or -1. */
void ledger_init(md_ckpt_ledger_t *l, const char *base, int64_t resumed_from);
void ledger_free(md_ckpt_ledger_t *l);

/* A checkpoint of `step` was started. 0, or -1 when out of memory. */
int ledger_started(md_ckpt_ledger_t *l, int64_t step);

/*
 * The checkpoint of `step` finished with `ok` (non-zero: complete and
 * committed). When `remove_old` (one rank), files of checkpoints older than
 * the two newest completed ones, and not in flight, are removed.
 */
void ledger_finished(md_ckpt_ledger_t *l, int64_t step, int ok, int remove_old);

#endif
