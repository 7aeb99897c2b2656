/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drain's storage jobs (drain_io.c, run on the runtime's I/O pool): a
 * job carries copies of what it needs, so its run half touches nothing of
 * the file but the plan, which is fixed after fwdio_open. drain.c makes
 * them and takes their results on the progress thread.
 */
#ifndef FWDIOI_DRAIN_IO_H
#define FWDIOI_DRAIN_IO_H

#include "local/local_index.h"
#include "state.h"
#include "storage/failover.h"

/* Bytes one COPY job moves at most (whole units; at least one): a job
 * costs a round trip through the progress thread. */
enum { FWDIOI_DRAIN_CHUNK = 8 << 20 };

/* OPEN: the local file (read) and the target; COPY: whole units, up to
 * FWDIOI_DRAIN_CHUNK bytes, then a sleep for the cap; CLOSE: sync the target if
 * asked, close both; REMOVE: unlink the local files (`paths`); CHECK
 * (local_copies 2): read the index at the end of each of `paths` back and
 * say which are intact copies of this file (`intact`, `errs`); KEEP: the
 * local file stays, for a restart: its version record says drained
 * (local_restart.h). */
typedef enum {
    FWDIOI_DRAIN_OPEN,
    FWDIOI_DRAIN_COPY,
    FWDIOI_DRAIN_CLOSE,
    FWDIOI_DRAIN_REMOVE,
    FWDIOI_DRAIN_CHECK,
    FWDIOI_DRAIN_KEEP
} fwdioi_drain_step_t;

typedef struct fwdioi_drain_job {
    fwdioi_io_job_t io;
    fwdio_file_t *file;
    fwdioi_drain_step_t step;
    /* inputs, copied from the file's state (the job owns nothing of it) */
    const char *local_path, *target_path, *final_path; /* final: the target's own name */
    int writer; /* whose units the local file holds (OPEN, COPY) */
    uint64_t unit; /* COPY: bytes per pread/pwrite (the file's write unit) */
    /* a stream's step drain (step_drain.c): the writer's failover, held
     * around each unit (OPEN, COPY); once the file moved to the target the
     * job copies nothing more and says so (moved_away) */
    struct fwdioi_failover *guard;
    int moved_away;
    /* a stream's (its open created the target): OPEN never creates it; a
     * target removed since (a program's unlink after the close) is not
     * made again, its bytes go nowhere, as writes to an unlinked file
     * (target_gone; not a failure) */
    int no_create, target_gone;
    uint64_t seq;  /* the file's, for traces */
    /* REMOVE, CHECK: the local files, and for CHECK the writer each holds,
     * whether it is intact (out) and why not (out) */
    const char *const *paths;
    const int *path_writers;
    int npaths;
    int *intact;
    fwdioi_errinfo_t *errs;
    int in_fd, out_fd;
    int sets_length, sync;
    uint64_t size;
    uint8_t *buf;
    /* COPY: the target bytes the local file holds (its index's runs), and
     * where the copy is: run next_run, next_off bytes into it */
    const fwdioi_local_run_t *runs;
    size_t nruns;
    uint64_t next_run, next_off, moved, bandwidth;
    double t0;
    /* results */
    uint64_t copied;
    int removed; /* KEEP: the copy could not be marked drained and is gone */
    int status, sys_errno, call;
    uint64_t err_offset;
} fwdioi_drain_job_t;

/** The `run` half of a drain job (an I/O pool thread). */
void fwdioi_drain_job_run(fwdioi_io_job_t *io);

#endif
