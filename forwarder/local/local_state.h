/* SPDX-License-Identifier: BSD-3-Clause */
/* The tier's state of one file, private to forwarder/local/. */
#ifndef FWDIOI_LOCAL_STATE_H
#define FWDIOI_LOCAL_STATE_H

#include "local/local_tier.h"
#include "session/agree.h"

struct fwdioi_local {
    /* fixed after fwdio_open */
    fwdio_file_t *file;
    char *pattern;   /* local_dir as given: what every rank must agree on */
    char *dir;       /* for this host */
    char *data_path; /* this rank's local file, if it writes; else NULL */
    uint64_t bandwidth; /* drain cap, bytes/s per writer; 0: none */
    uint64_t created_ns; /* CLOCK_REALTIME at fwdio_open: the index's `created` */
    /* progress thread: the drain (drain.c), started from a task so that
     * nothing of it, even a failure to start, comes before complete */
    fwdioi_task_t start_task;
    void (*path_free)(fwdio_file_t *f); /* the session's: the path is free */
    MPI_Comm comm; /* the file's, kept for the drain's agreements */
    int committer, committers; /* as the close agreed them */
    int in_fd, out_fd;
    uint8_t *buf;  /* one write unit */
    uint64_t next_stripe, next_off; /* the writer's next unit: its stripe
                                       (index among the writer's) and offset */
    uint64_t moved; /* bytes drained so far */
    double t0;      /* when the drain started */
    fwdioi_errinfo_t drain_local, drain_agreed, commit_local, commit_agreed;
    /* the agreement in flight (one at a time): its pairs (agree.h), where
     * its result goes and what runs then */
    fwdioi_agree_pair_t agree_in[FWDIOI_ERRINFO_PAIRS], agree_out[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_t *agree_result;
    fwdioi_req_cb_t agree_done;
};

/** Start the drain of `f` (local_tier.c hands over at the session's end)
 *  (progress thread). */
void fwdioi_drain_start(fwdio_file_t *f);

#endif
