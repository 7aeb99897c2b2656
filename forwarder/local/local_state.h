/* SPDX-License-Identifier: BSD-3-Clause */
/* The tier's state of one file, private to forwarder/local/. */
#ifndef FWDIOI_LOCAL_STATE_H
#define FWDIOI_LOCAL_STATE_H

#include "local/local_index.h"
#include "local/local_space.h"
#include "local/local_tier.h"
#include "agreement/agree.h"

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
    /* of `reserved`, the bytes counted as not drained yet in the node's
     * count (fwdioi_area_local_pending), until the drain is over or the
     * bytes go back (fwdioi_local_pending_end) */
    uint64_t pending;
    /* local_copies 2: the bytes of the node's count the partner copies
     * this rank keeps hold (fwdioi_local_partner_room_take), until the
     * drain removes them or the file is freed (also in `pending` until the
     * drain is over) */
    uint64_t partner_bytes;
    /* a stream's writer (progress thread, from its seal): the target bytes
     * its local file holds (what its jobs wrote, failover.h), in order, and
     * where they end */
    fwdioi_local_run_t *written;
    size_t nwritten;
    uint64_t stream_end;
    /* progress thread: the writer waits for room (local_space.c), in the
     * runtime's `local_waiting`, its open job held: the bytes it needs,
     * since when, and how the wait ends */
    TAILQ_ENTRY(fwdioi_local) wait_link;
    int waiting;
    struct fwdioi_storage_job *wait_job;
    uint64_t wait_bytes;
    double wait_t0;
    fwdioi_room_wait_t wait_then;
    /* the writer's failover to the target when its local store fails
     * (storage/failover.h; its jobs carry it); `went_to_target`: it did, and the
     * writer is direct from then on (progress thread, once its last job is
     * done) */
    struct fwdioi_failover *failover;
    int went_to_target;
    uint64_t created_ns; /* CLOCK_REALTIME at fwdio_open: the index's `created` */
    /* local_copies (partner.h, replicate.c): 1, or 2 with a partner copy;
     * the rank that keeps this writer's partner copy (-1: none, copies 1);
     * the writers whose partner copies this rank keeps, and their copies'
     * paths in this host's store (the writer's own file name) */
    int copies;
    int partner;
    int nkept;
    int *kept;
    char **kept_paths;
    struct fwdioi_replica *replica; /* the copying, replicate.c */
    /* the drain with partner copies (drain.c): the copies of each writer
     * found intact (`avail`, agreed over all ranks: bit 1 the writer's, bit
     * 2 the partner's, bit 4 the writer writes straight to the target),
     * and the writers this rank drains, one after the other */
    int *avail, *avail_in;
    int ndrain, drain_at, nremove;
    int *drain_writers;
    const char **drain_paths; /* also the files REMOVE takes (nremove) */
    /* the CHECK job's: the local files this rank holds (slot 0 its own,
     * NULL if none; then the partner copies), their writers, whether each
     * is intact, and why not */
    const char **check_paths;
    int *check_writers, *check_intact;
    fwdioi_errinfo_t *check_errs;
    /* progress thread: the drain (drain.c), started from a task so that
     * nothing of it, even a failure to start, comes before complete */
    fwdioi_task_t start_task;
    void (*path_free)(fwdio_file_t *f); /* the session's: the path is free */
    /* the session's: tell the other ranks this rank's drain failed in MPI */
    void (*announce)(fwdio_file_t *f, const fwdioi_errinfo_t *why);
    /* the session's: the communicator back at the drain's end */
    void (*comm_done)(fwdio_file_t *f, MPI_Comm *comm, int reusable);
    MPI_Comm comm; /* the file's, kept for the drain's agreements */
    int committer, committers; /* as the close agreed them */
    int in_fd, out_fd;
    uint8_t *buf;  /* one write unit */
    /* the runs of the writer being drained (its index's: its stripes, or
     * for a stream what it wrote), and where the copy is in them */
    fwdioi_local_run_t *runs;
    size_t nruns;
    uint64_t next_run, next_off;
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
    /* a stream's drain of its steps while it is written (step_drain.c) */
    struct fwdioi_step_drains *steps;
};

/** Start the drain of `f` (local_tier.c hands over at the session's end),
 *  once its steps' drains are over (progress thread). */
void fwdioi_drain_start(fwdio_file_t *f);
/** A failed stream's drain is over, with l->drain_agreed, once its step
 *  drains are (local_tier.c) (progress thread). */
void fwdioi_drain_over_failed(fwdio_file_t *f);

/* ---- a stream's steps drained while it is written (step_drain.c) ---- */

/** 1 when the step drains of `f` are over (nothing queued or in flight),
 *  else 0 and then(f) is called once they are (progress thread). */
int fwdioi_step_drains_idle(fwdio_file_t *f, void (*then)(fwdio_file_t *f));
/** The first failed step drain's agreed error, or NULL (progress thread). */
const fwdioi_errinfo_t *fwdioi_step_drains_failed(const fwdio_file_t *f);
/** Free them with the file; a copy job in flight frees them when it ends
 *  (any thread). */
void fwdioi_step_drains_free(fwdio_file_t *f);

/** The target bytes writer `w` holds, as runs of adjacent stripes (`*n` of
 *  them; malloc'ed, NULL without memory) (any thread). */
fwdioi_local_run_t *fwdioi_local_writer_runs(const fwdioi_plan_t *p, int w, size_t *n);
/** The target bytes writer `w`'s local file holds, in order (`*n` runs,
 *  malloc'ed; NULL without memory): its stripes (fwdioi_local_writer_runs),
 *  or for this writer of a stream what it wrote (progress thread, after
 *  its seal). */
fwdioi_local_run_t *fwdioi_local_runs_of(const fwdio_file_t *f, int w, size_t *n);
/** A stream's writer: the room its jobs took in the local store
 *  (local_capacity) becomes the writer's own (`reserved`, `pending`), given
 *  back as a file's is (progress thread once its jobs are done, or the
 *  file's release). */
void fwdioi_local_stream_room_absorb(fwdio_file_t *f);
/** Bytes writer `w`'s local file takes in a local store: its units, and
 *  its index rounded up to a block (0 without memory) (any thread). */
uint64_t fwdioi_local_file_bytes(const fwdio_file_t *f, int w);
/** Writer `w`'s index (local_index.h) with `created_ns`, encoded into a
 *  malloc'ed buffer of *len bytes; NULL without memory (any thread). */
uint8_t *fwdioi_local_index_of(const fwdio_file_t *f, int w, uint64_t created_ns, size_t *len);
/* The copying's state (replicate.c; local_life.c frees it with the file). */
struct fwdioi_replica {
    void (*then)(fwdio_file_t *f, const fwdioi_errinfo_t *copies);
    fwdioi_errinfo_t local, agreed;
    int requests; /* MPI requests in flight */
    int agreeing;
    /* out: this writer's local file to its partner */
    int out_fd, out_done;
    uint64_t out_pos, out_total, out_len;
    uint8_t *out_buf, *out_index;
    size_t out_index_len;
    fwdioi_local_run_t *out_runs;
    size_t out_nruns;
    /* in: the copies this rank keeps, one at a time (in_k) */
    int in_k, in_fd, in_failed, in_done;
    int one_copy; /* failed jobs of partner copies this rank could not write
                     (the file completes with the writer's copy alone) */
    uint64_t in_pos, in_total, in_len;
    uint64_t in_room; /* of the local space, what the copy being kept took */
    uint8_t *in_buf;
    size_t in_cap, in_index_len;
    fwdioi_local_run_t *in_runs;
    size_t in_nruns;
};


#endif
