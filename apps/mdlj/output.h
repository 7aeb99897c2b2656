/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdlj's output: a DCD trajectory frame every K steps and a checkpoint every
 * C steps, through one of the paths of md_output_mode_t, all producing the
 * same bytes. The step loop calls output_frame / output_checkpoint with its
 * snapshot and output_poll once per step; output_finish waits for whatever is
 * still in flight. The time spent inside these calls is what the output cost
 * the simulation.
 */
#ifndef MDLJ_OUTPUT_H
#define MDLJ_OUTPUT_H

#include "ckpt_format.h"
#include "dcd.h"
#include "options.h"
#include "snapshot.h"

#include "fwdio.h"

#include <mpi.h>

typedef struct md_output_params {
    md_output_mode_t mode;
    MPI_Comm comm;
    fwdio_runtime_t *rt;    /* MD_OUT_FWDIO only */
    const char *dcd_path;   /* NULL: no trajectory */
    dcd_info_t dcd;
    const char *ckpt_base;  /* NULL: no checkpoints */
    ckpt_info_t ckpt;       /* everything but the step */
    int64_t resumed_from;   /* step of the checkpoint a restart read, or -1 */
    const char *local_dir;  /* node-local directory ("%h": host name) of MD_OUT_LOCAL_COPY, and
                             * of MD_OUT_FWDIO's checkpoints (fwdio's local_dir); NULL: none */
    int writers;            /* writer / aggregator ranks (fwdio writers, MPI-IO cb_nodes); 0: default */
    int verify;
    int64_t crash_at;       /* -1: never */
} md_output_params_t;

typedef struct md_output_report {
    double blocked;          /* this rank: seconds inside output calls, final wait included */
    double final_wait;       /* this rank: seconds in output_finish */
    double verify_time;      /* this rank: seconds verifying (not in `blocked`) */
    double ckpt_local;       /* fwdio and local-copy: seconds from handing a checkpoint over to its
                              * completion (in the node-local directory with one), summed */
    double ckpt_copy;        /* ... and from there to its bytes at its path (copy, drain; 0
                              * for fwdio without a tier), summed */
    uint64_t frame_extents;  /* write calls (fwdio) / file-view blocks (MPI-IO) for frames, this rank */
    uint64_t ckpt_extents;   /* the same for checkpoints */
    uint64_t frame_messages; /* fwdio: data messages this rank sent for the trajectory */
    uint64_t ckpt_messages;  /* fwdio: the same for all checkpoints */
    int64_t frames;
    int64_t checkpoints;
    int64_t checkpoints_ok;  /* complete with their commit record */
    int failures;            /* outputs that failed; the same on every rank after output_finish */
    int verify_failures;     /* files that differ from the gathered state (same on every rank) */
} md_output_report_t;

typedef struct md_output md_output_t;

/*
 * Collective over p->comm: set up the output path and open the trajectory.
 * Returns 0, or -1 (message printed) when the mode cannot start.
 */
int output_create(md_output_t **out, const md_output_params_t *p);

/* Collective: write frame `frame` (0-based in this run's trajectory). */
void output_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame);

/* Collective: write the checkpoint of snap->step. */
void output_checkpoint(md_output_t *o, const md_snapshot_t *snap);

/* Not collective: let nonblocking output move on and handle what completed. */
void output_poll(md_output_t *o);

/* Collective: close the trajectory, wait for everything, fill `rep`. */
void output_finish(md_output_t *o, md_output_report_t *rep);

void output_destroy(md_output_t *o);

#endif
