/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier's state of a file: made at fwdio_open, compared by the
 * open check, freed with the file (local_tier.h has what the tier does).
 */
#ifndef FWDIOI_LOCAL_LIFE_H
#define FWDIOI_LOCAL_LIFE_H

#include "state.h"

/**
 * fwdio_open of a file with a size and `pattern` (options.local_dir) set:
 * give `f` its tier state: the directory for this host ("%h" expanded), and
 * this rank's local file if it writes. `bandwidth`: the drain's cap in
 * bytes/s per writer (0: none); `capacity`: local_capacity (0: none);
 * `copies`: local_copies (0 or 1: one; 2: a partner copy, partner.h: this
 * writer's partner and the copies this rank keeps). Application thread,
 * before the file is handed to the progress thread. FWDIO_OK, FWDIO_EINVAL
 * (a bad pattern, or 2 copies with every rank on one node, said on stderr
 * through `why`) or FWDIO_ENOMEM.
 */
int fwdioi_local_create(fwdio_file_t *f, const char *pattern, uint64_t bandwidth,
                        uint64_t capacity, int copies, fwdioi_origins_t *why);
/** Free the tier state of `f` (fwdioi_file_release; any thread). */
void fwdioi_local_free(fwdio_file_t *f);
/** Give back what the file's local stores hold of the node's count
 *  (local_capacity): its writer's file, a stream's writes, the partner
 *  copies. fwdioi_local_free does it; a file kept whole for MPI (its
 *  agreements given up, never freed) does it alone, so that the node's
 *  room does not shrink for the process's life. Once is enough (any
 *  thread, the file's jobs done). */
void fwdioi_local_room_release(fwdio_file_t *f);
/** Whether the file's drain gave up an agreement (drain.c), whose buffers
 *  MPI may still write: then the file is never freed (file_life.c). */
int fwdioi_local_abandoned(const fwdio_file_t *f);
/** The version id of `f`'s local copies (local_version.h): the writers'
 *  largest open time, agreed at the open (progress thread, after it). */
uint64_t fwdioi_local_version_id(const fwdio_file_t *f);
/** What the open check compares: a hash of local_dir as given, 0 without. */
int64_t fwdioi_local_check_value(const fwdio_file_t *f);
/** Give the writer's bytes back to the node's count of local space
 *  (local_capacity): its local file is gone (the drain removed it), it
 *  writes to the target after all, or the file is released (any thread). */
void fwdioi_local_space_free(fwdio_file_t *f);
/** The writer's bytes are no longer those of a file not drained yet (its
 *  drain is over, the session ended without one, or they go back):
 *  taken off the node's count of them (fwdioi_area_local_pending); once
 *  (any thread). */
void fwdioi_local_pending_end(fwdio_file_t *f);
/** The file's local_capacity (bytes per node; 0: none, or no tier). */
uint64_t fwdioi_local_capacity(const fwdio_file_t *f);
/** The file's local_copies (1 or 2; 0 without the tier): the open check's. */
int fwdioi_local_copies(const fwdio_file_t *f);

/** An error's `other_value` that marks it as about a partner copy
 *  (local_copies 2): the copy of writer `other_rank`, kept by `rank`. */
#define FWDIOI_LOCAL_PARTNER_COPY 1

/**
 * The path an error of the file's local phase is about, for its text: the
 * failing writer's local file (or, marked FWDIOI_LOCAL_PARTNER_COPY, the
 * partner copy) named with local_dir as given (the same text on every
 * rank), in `buf`; NULL for a file without the tier, and for an error
 * marked FWDIOI_LOCAL_AT_TARGET (local_tier.h: the caller names the target).
 */
const char *fwdioi_local_error_path(const fwdio_file_t *f, const fwdioi_errinfo_t *e, char *buf,
                                    size_t len);

#endif
