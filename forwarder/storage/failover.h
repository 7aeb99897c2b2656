/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A writer's file written to a node-local store that moves to its target
 * when the store fails (the node-local tier, local_tier.c sets it up): a
 * pwrite, fdatasync or the index's write on the local file that fails
 * (ENOSPC, EDQUOT, EIO: another job filled the device, the free-space
 * estimate was wrong, the device broke) does not fail the file. The job
 * that meets the failure opens the target path instead (O_CREAT, never
 * O_TRUNC: other writers may have written there already; writer 0 sets its
 * length), copies the bytes this writer already wrote locally (its runs, as
 * far as the local file reaches) from the local file to the target, and
 * writes its own bytes there; the writer's later jobs write to the target
 * too, and its last job makes the target durable, closes both and removes
 * the local file and its version record, so nothing partial stays for a
 * restart or a drain to take.
 *
 * The writer's WRITE and FINISH jobs carry it (storage.h) and run one at a
 * time, in order, on the ordered I/O thread (the progress thread with
 * io_inline), as does the index's job after them: like `write_failed`, it
 * needs no lock. The progress thread reads `active` only once the last of
 * those jobs is done.
 */
#ifndef FWDIOI_FAILOVER_H
#define FWDIOI_FAILOVER_H

#include "ranges.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fwdioi_failover {
    /* set before the writer's first job, then read only */
    char *local_path;  /* the local file (owned) */
    char *record_path; /* its version record, removed with it (owned; NULL: none) */
    const char *target_path; /* what the writer opens without the tier (the
                                temporary with atomic_replace; the file's) */
    uint64_t size;     /* the target's length */
    int sets_length;   /* writer 0: ftruncate the target to `size` */
    fwdioi_range_t *runs; /* the target bytes this writer holds (owned) */
    size_t nruns;
    /* a stream's writer (fwdioi_failover_new_stream): no runs known ahead;
     * the bytes it holds are what its WRITE jobs wrote locally, which they
     * record in `written` (fwdioi_failover_claim) after taking room for
     * the new ones with take_room(room_arg, bytes) (local_capacity; NULL:
     * none), `room_taken` in all; the progress thread reads them once the
     * writer's last job is done */
    int grows;
    fwdioi_ranges_t written;
    /* of those, what they wrote since the last take (a step's SYNC job
     * takes it for that step's drain: fwdioi_failover_take_fresh) */
    fwdioi_ranges_t fresh;
    int (*take_room)(void *arg, uint64_t bytes);
    void *room_arg;
    uint64_t room_taken;
    /* held by fwdioi_failover_move, and by a step drain's copy
     * (fwdioi_failover_hold) so that the file never moves under it */
    pthread_mutex_t guard;
    /* the jobs' (I/O thread; written under `guard`) */
    int active;    /* failed over: the jobs write to target_fd */
    int target_fd; /* -1 until then, and after the last job closed it */
    int cause_errno;     /* the local failure that moved it */
    int cause_call;      /* its call (fwdioi_syscall_t) */
    uint64_t cause_offset;
    uint64_t copied;     /* bytes copied from the local file to the target */
    /* a failure of the failover itself: its call, errno, offset, and
     * whether the call was on the local file (reading it back) rather
     * than on the target */
    int fail_call, fail_errno, fail_local;
    uint64_t fail_offset;
} fwdioi_failover_t;

/**
 * A failover of the local file `local_path` (its version record
 * `record_path`, may be NULL) to `target_path` of length `size` (set with
 * `sets_length`), for a writer that holds `runs` (taken over: freed with
 * it). NULL without memory (then runs are freed) (any thread).
 */
fwdioi_failover_t *fwdioi_failover_new(const char *local_path, const char *record_path,
                                       const char *target_path, uint64_t size, int sets_length,
                                       fwdioi_range_t *runs, size_t nruns);
/**
 * A failover for a stream's writer, whose local file `local_path` holds
 * only what it wrote (fwdioi_failover_claim records it): moving copies
 * those bytes to `target_path`, whose length it never sets (the writer's
 * open prepared the target as a stream's open does). `take_room`, NULL
 * for none, takes room in the local store for the bytes a write adds. NULL
 * without memory (any thread).
 */
fwdioi_failover_t *fwdioi_failover_new_stream(const char *local_path, const char *target_path,
                                              int (*take_room)(void *arg, uint64_t bytes),
                                              void *room_arg);
/**
 * A stream's WRITE job is about to write [offset, offset + len) locally:
 * record it and take room for the bytes not written before. 0: write it
 * locally; 1: no room (take_room refused): the caller moves the file
 * (fwdioi_failover_move, errno ENOSPC) and writes to the target; -1: no
 * memory (errno ENOMEM). A failover that is not a stream's, or moved: 0,
 * nothing recorded (I/O thread).
 */
int fwdioi_failover_claim(fwdioi_failover_t *fo, uint64_t offset, uint64_t len);
/**
 * A stream's writer: the bytes its jobs wrote locally since the last take,
 * as a malloc'ed list of *n ranges in order (NULL and 0 when none), and
 * forget them. -1 without memory (they stay for the next take). A
 * failover that is not a stream's, or moved: 0 and nothing (I/O thread).
 */
int fwdioi_failover_take_fresh(fwdioi_failover_t *fo, fwdioi_range_t **list, size_t *n);
/**
 * A stream's step drain (local/step_drain.c, an I/O pool thread) is about to
 * read the local file and write the target: hold the file where it is.
 * Returns 1 if it moved already (the move copied every byte written so far
 * to the target, and later writes go there: the caller copies nothing), else
 * 0. Either way release it after (any thread).
 */
int fwdioi_failover_hold(fwdioi_failover_t *fo);
void fwdioi_failover_release(fwdioi_failover_t *fo);
/** Free it; its target descriptor, if still open, is closed (any thread,
 *  once no job carries it). */
void fwdioi_failover_free(fwdioi_failover_t *fo);

/** The descriptor a job of the file writes to: the target once failed over,
 *  else `fd` (the job's) (I/O thread). */
int fwdioi_failover_fd(const fwdioi_failover_t *fo, int fd);
/**
 * A call (`call`, at `offset`, errno as it failed) on the local file failed:
 * move to the target (open it, set its length, copy what the local file
 * holds of the runs). 0: the caller writes its bytes again, to
 * fwdioi_failover_fd; -1: the target failed too (fail_call, fail_errno,
 * fail_offset say how; errno is set) or `fo` is NULL or already moved (the
 * caller's own failure stands) (I/O thread).
 */
int fwdioi_failover_move(fwdioi_failover_t *fo, int call, uint64_t offset);
/** The file's status for the failover's own failure (fail_call): FWDIO_EOPEN
 *  (open, ftruncate of the target), FWDIO_EREAD (reading the local file
 *  back), FWDIO_EWRITE, FWDIO_ESYNC (fdatasync, close), FWDIO_ENOMEM (any
 *  thread). */
int fwdioi_failover_status(const fwdioi_failover_t *fo);
/**
 * The writer's last job: with the file moved, fdatasync the target when
 * `durable`, close it and remove the local file and its record (the local
 * descriptor is the caller's to close). 0 (also when not moved), or -1
 * with fail_* set (I/O thread).
 */
int fwdioi_failover_end(fwdioi_failover_t *fo, int durable);

#endif
