/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --verify: at every output, gather the same snapshot to rank 0, format the
 * bytes the file must hold there atom by atom (dcd_frame_image, ckpt_image:
 * not the run-by-run packing the parallel paths use), and compare them with
 * the file once it is complete. Rank 0 keeps the expected trajectory frames
 * until the end (12 bytes per atom per frame) and each checkpoint's image
 * until that checkpoint completes.
 */
#ifndef MDLJ_VERIFY_H
#define MDLJ_VERIFY_H

#include "ckpt_format.h"
#include "dcd.h"
#include "snapshot.h"

#include <mpi.h>

typedef struct md_verify md_verify_t;

/* `dcd`: the trajectory's layout, or NULL without a trajectory. */
md_verify_t *verify_create(MPI_Comm comm, const dcd_info_t *dcd);
void verify_destroy(md_verify_t *v);

/* Collective: remember what frame `frame` must hold. */
void verify_expect_frame(md_verify_t *v, const md_snapshot_t *snap, int64_t frame);

/* Collective: remember what the checkpoint `info` must hold. */
void verify_expect_checkpoint(md_verify_t *v, const md_snapshot_t *snap, const ckpt_info_t *info);

/* Rank 0 (others return): compare the completed checkpoint of `step` in `path`. */
void verify_checkpoint_file(md_verify_t *v, int64_t step, const char *path);

/* Rank 0: forget the checkpoint of `step` (it failed, nothing to compare). */
void verify_drop_checkpoint(md_verify_t *v, int64_t step);

/* Rank 0: compare the completed trajectory in `path` (header and all frames). */
void verify_trajectory_file(md_verify_t *v, const char *path,
                            const unsigned char header[DCD_HEADER_BYTES]);

/*
 * Collective: files that differed (or could not be checked), the same on every
 * rank, and the frames and checkpoints compared, on rank 0.
 */
int verify_result(md_verify_t *v, int64_t *frames_checked, int64_t *checkpoints_checked);

#endif
