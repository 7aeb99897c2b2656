/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a writer whose file does not fit local_capacity waits for room
 * or writes the file straight to the target (node-local tier,
 * local_space.c asks): a pure choice, any thread.
 */
#ifndef FWDIOI_LOCAL_ROOM_H
#define FWDIOI_LOCAL_ROOM_H

#include <stdint.h>

/** wait_ms that never waits: fwdio.h's FWDIO_LOCAL_WAIT_OFF. */
#define FWDIOI_ROOM_NEVER_WAIT UINT64_MAX

/** What the choice sees, all in bytes of the count except the times. */
typedef struct fwdioi_local_room_in {
    uint64_t bytes;    /* the writer's file: its units and index */
    uint64_t limit;    /* local_capacity (the rank's share without the area) */
    uint64_t used;     /* the count now (the node's, or the rank's) */
    uint64_t pending;  /* of `used`: files not drained yet (written or draining) */
    uint64_t kept;     /* of `used`: the drained copies that may be evicted for
                          this file (the node's, or this rank's without the area) */
    uint64_t waited_ms, wait_ms; /* so far; the limit (FWDIOI_ROOM_NEVER_WAIT: off) */
} fwdioi_local_room_in_t;

typedef enum {
    FWDIOI_ROOM_WAIT,      /* drains in flight may free enough: try again later */
    FWDIOI_ROOM_OFF,       /* local_wait off: to the target */
    FWDIOI_ROOM_NEVER,     /* larger than the limit: it can never fit */
    FWDIOI_ROOM_NOTHING,   /* even with every file in flight drained and every
                              evictable copy evicted it would not fit */
    FWDIOI_ROOM_TIMED_OUT  /* waited local_wait: to the target */
} fwdioi_local_room_t;

/**
 * The file did not fit just now (its rank's drained copies could not make
 * room): wait, or go to the target, and why. It waits only while the room
 * can still come: the file fits the limit, something is freeable (a file
 * not drained yet, whose copy is kept and then evictable, or a drained
 * copy), and the count without all of that leaves room for it. With the
 * node area the drained copies of every rank of the node count, since their
 * ranks evict them for this one when asked (local_keep.h); without it only
 * this rank's.
 */
fwdioi_local_room_t fwdioi_local_room_choose(const fwdioi_local_room_in_t *in);
/** A few words for the log: why the file went to the target. */
const char *fwdioi_local_room_why(fwdioi_local_room_t r);

#endif
