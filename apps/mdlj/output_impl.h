/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside mdlj's output: what the output paths (out_fwdio.c, out_mpiio.c,
 * out_mpiio_async.c, out_serial.c, out_local_copy.c) share with output.c.
 */
#ifndef MDLJ_OUTPUT_IMPL_H
#define MDLJ_OUTPUT_IMPL_H

#include "ckpt_files.h"
#include "output.h"
#include "pack.h"
#include "verify.h"

/* One output path. Functions marked collective are called on every rank. */
typedef struct md_backend {
    /* Collective: set up, open the trajectory when o->p.dcd_path; 0 or -1. */
    int (*open)(md_output_t *o);
    /* Collective: frame `frame` of the trajectory. */
    void (*frame)(md_output_t *o, const md_snapshot_t *snap, int64_t frame);
    /* Collective: the checkpoint described by `info` into `path`; calls
     * output_checkpoint_finished when it is done (now or from poll/finish). */
    void (*checkpoint)(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                       const char *path);
    /* Not collective; may be NULL. */
    void (*poll)(md_output_t *o);
    /* Collective: trajectory closed and every checkpoint finished. */
    void (*finish)(md_output_t *o);
    void (*destroy)(md_output_t *o);
    /* The path of the checkpoint of `step` (0, or -1 when it does not fit);
     * NULL: "<base>.<step>" (ckpt_path). */
    int (*ckpt_path)(md_output_t *o, int64_t step, char *out, size_t cap);
    /* Non-zero: the backend's checkpoints are kept and removed by fwdio's
     * checkpoint sets, not by the ledger. */
    int keeps_own;
} md_backend_t;

extern const md_backend_t md_backend_fwdio;
extern const md_backend_t md_backend_mpiio;
extern const md_backend_t md_backend_serial;
extern const md_backend_t md_backend_mpiio_async;
extern const md_backend_t md_backend_local_copy;

struct md_output {
    md_output_params_t p;
    int rank, nranks;
    const md_backend_t *be;
    void *state;                  /* the backend's */
    md_pack_t pack;               /* this rank's part of the current output */
    unsigned char dcd_header[DCD_HEADER_BYTES];
    md_ckpt_ledger_t ledger;
    md_verify_t *verify;          /* NULL without --verify */
    md_output_report_t rep;
    int traj_failed;              /* the trajectory failed on this rank: no more frames */
};

/*
 * The backend reports that the checkpoint of `step` in `path` finished on
 * this rank, `ok` non-zero when it completed with its commit record. Called
 * on every rank with the same `ok`, not necessarily at the same time.
 */
void output_checkpoint_finished(md_output_t *o, int64_t step, const char *path, int ok);

/*
 * Collective: the checkpoint's commit record, with the checksum summed over
 * all ranks. `failed` says whether this rank could not hand over its part;
 * returns non-zero on every rank when any rank failed, and the checkpoint
 * must then not be committed.
 */
int output_commit_record(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                         const unsigned char header[CKPT_HEADER_BYTES], int failed,
                         unsigned char out[CKPT_COMMIT_BYTES]);

/* Where a crash between a checkpoint's data and its commit is simulated (--crash-at). */
void output_crash_point(md_output_t *o, int64_t step);

/* Seconds on a monotonic clock, from any thread (fwdio's callbacks, a copy thread). */
double output_now(void);

/* Write all `len` bytes at `offset` (retrying short writes and EINTR); 0 or -1 (errno). */
int output_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset);

#endif
