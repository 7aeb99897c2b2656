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
    uint64_t capacity;  /* local_capacity, bytes per node; 0: none */
    /* progress thread (reserved: also the file's release): this writer
     * writes the file straight to the target (no room in the local store);
     * the bytes it took from the node's count (local_tier.c) */
    int direct;
    uint64_t reserved;
    uint64_t created_ns; /* CLOCK_REALTIME at fwdio_open: the index's `created` */
    /* progress thread: the drain (drain.c), started from a task so that
     * nothing of it, even a failure to start, comes before complete */
    fwdioi_task_t start_task;
    void (*path_free)(fwdio_file_t *f); /* the session's: the path is free */
    /* the session's: tell the other ranks this rank's drain failed in MPI */
    void (*announce)(fwdio_file_t *f, const fwdioi_errinfo_t *why);
    MPI_Comm comm; /* the file's, kept for the drain's agreements */
    int committer, committers; /* as the close agreed them */
    int in_fd, out_fd;
    uint8_t *buf;  /* one write unit */
    uint64_t next_stripe, next_off; /* the writer's next unit: its stripe
                                       (index among the writer's) and offset */
    uint64_t moved; /* bytes drained so far */
    double t0;      /* when the drain started */
    fwdioi_errinfo_t drain_local, drain_agreed, commit_local, commit_agreed;
    /* what is in flight, so an abort (drain.c, "aborts") waits for it or
     * gives it up: the start task has run; a job (drain or commit); an
     * agreement; the drain is over here (drain_finish ran); the committer
     * ran its commit (rename, commit block) or its discard */
    int started, busy, agreeing, over, committed;
    int aborted; /* an MPI call of the drain failed, here or on another rank */
    int abandoned; /* an agreement was given up: the communicator is not freed */
    fwdioi_errinfo_t abort_info;
    /* the agreement in flight (one at a time): its pairs (agree.h), where
     * its result goes and what runs then */
    fwdioi_agree_pair_t agree_in[FWDIOI_ERRINFO_PAIRS], agree_out[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_t *agree_result;
    fwdioi_req_cb_t agree_done;
    /* a read file's restart from the local copies (local_restart.c), and
     * how it is freed (set with it: the file's release does not call up
     * into the restart) */
    struct fwdioi_restart *restart;
    void (*drop_restart)(struct fwdioi_restart *r);
};

/** Start the drain of `f` (local_tier.c hands over at the session's end)
 *  (progress thread). */
void fwdioi_drain_start(fwdio_file_t *f);

#endif
