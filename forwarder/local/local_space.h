/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A writer's room in the node's local store (local_capacity): taken from
 * the node's count at the open, made by evicting this rank's drained
 * copies, or waited for (config.local_wait_ms) while drains in flight may
 * free it; local_tier.c asks at the writer's open. A writer that waits
 * holds its open job here, in the runtime's `local_waiting`, oldest first,
 * and is tried again on the progress thread's ticks: once every
 * FWDIOI_WAIT_TICK_US (another rank of the node may free room: the count
 * is shared, and nothing announces it), and on the next tick after a
 * drain of this runtime ends. Nothing blocks meanwhile: the open of that
 * one writer is deferred, the rest of the runtime goes on.
 */
#ifndef FWDIOI_LOCAL_SPACE_H
#define FWDIOI_LOCAL_SPACE_H

#include "state.h"

struct fwdioi_storage_job; /* storage/storage.h */

/**
 * Take `bytes` of the node's count for f's writer file, evicting this
 * rank's oldest drained copies when that makes room (their bytes pass
 * straight to the file). 0: taken (f's `reserved`, and counted as not
 * drained yet); -1: no room now (progress thread).
 */
int fwdioi_local_room_take(fwdio_file_t *f, uint64_t bytes);

/**
 * local_copies 2: this rank is about to keep a partner copy of `bytes`
 * (another writer's units and index) in its local store. With
 * local_capacity, take them from the node's count as a writer's file
 * would (evicting this rank's drained copies when that makes room) and
 * count them as not drained yet, in f's `partner_bytes`, until the drain
 * removed the partner copies or the file is freed; 0 when taken (or
 * nothing is counted: no local_capacity). -1: no room (logged): the copy
 * is not kept, never waited for, since the file's completion waits for
 * the copies (progress thread).
 */
int fwdioi_local_partner_room_take(fwdio_file_t *f, uint64_t bytes);
/** Give back `bytes` of the partner copies' room: the copy they were
 *  taken for was not kept after all, or the drain removed it (progress
 *  thread). */
void fwdioi_local_partner_room_give(fwdio_file_t *f, uint64_t bytes);

/**
 * A stream's writer (no size at the open): take `bytes` its write adds to
 * its local file from the node's count, counted as not drained yet; no
 * eviction, no wait. 0, or -1: no room (the file moves to the target, as
 * from a full store) (any thread: its WRITE jobs call it).
 */
int fwdioi_local_stream_take(fwdio_file_t *f, uint64_t bytes);

/** What the waiting ends with: `resolved(f, job, taken)` (the tier points
 *  the job at the local file, or leaves it on the target), then
 *  `go(f, job, 1)` submits it; a file aborted meanwhile gets `go(f, job,
 *  0)` alone (nothing opened). */
typedef struct fwdioi_room_wait {
    void (*resolved)(fwdio_file_t *f, struct fwdioi_storage_job *job, int taken);
    void (*go)(fwdio_file_t *f, struct fwdioi_storage_job *job, int run);
} fwdioi_room_wait_t;

/**
 * f's file of `bytes` did not fit: hold `job` and wait for room when it
 * can come (local_room.h) and local_wait is not off; returns 1 then. 0:
 * no wait (the reason logged): the caller writes the file straight to the
 * target now (progress thread).
 */
int fwdioi_local_room_wait(fwdio_file_t *f, struct fwdioi_storage_job *job, uint64_t bytes,
                           const fwdioi_room_wait_t *then);

/** Room may have come (a drain of this runtime ended): the waiting writers
 *  are tried on the next tick (progress thread). */
void fwdioi_local_room_changed(struct fwdio_runtime *o);

/**
 * The tick: try the waiting writers when their time has come; each that
 * gets room, waited local_wait, can no longer get room, or whose file
 * aborted, ends its wait. Returns 1 while writers still wait (the tick
 * should come again within FWDIOI_WAIT_TICK_US), else 0 (progress thread).
 */
int fwdioi_local_room_poll(struct fwdio_runtime *o);

#endif
