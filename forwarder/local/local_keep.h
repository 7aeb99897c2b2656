/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drained local copies a writer rank keeps for restarts, counted in the
 * node's local space (local_capacity) and evicted oldest first when a new
 * file needs room: a file of this rank (local_tier.c asks), then, when this
 * rank's copies cannot make the room, the node's oldest copies whichever
 * rank holds them (each rank evicting its own when asked through the node
 * area: fwdioi_local_kept_node_poll). One list per runtime on each rank,
 * owned by the progress thread: a rank removes only the copies it wrote
 * (their count is the node's, their list that rank's). Files not yet
 * drained are never in it. Copies left by an earlier
 * runtime are not counted and not evicted.
 */
#ifndef FWDIOI_LOCAL_KEEP_H
#define FWDIOI_LOCAL_KEEP_H

#include "state.h"

/** The drain of `f` kept this writer's local copy (`local_path`, version id
 *  `version`), holding `bytes` of the node's count: it joins the list,
 *  ordered by version, and its bytes stay counted (progress thread). */
void fwdioi_local_kept_add(struct fwdio_runtime *o, const char *local_path, uint64_t version,
                           uint64_t bytes);
/** A new version is about to be written into `local_path`: a kept copy
 *  there leaves the list and its bytes go back to the count (progress
 *  thread). */
void fwdioi_local_kept_forget(struct fwdio_runtime *o, const char *local_path);
/**
 * Node-wide eviction (node_area.h), on every tick of this rank's progress
 * thread and its doorbell: while writers of the node wait for room they
 * lack (the ranks' published shortfalls) and this rank holds the node's
 * oldest kept copy, evict its copies older than every other rank's, oldest
 * first, until they cover what is lacking; their bytes go back to the
 * node's count once their files are removed, and the waiting ranks are rung
 * (progress thread). One such eviction at a time per rank.
 */
void fwdioi_local_kept_node_poll(struct fwdio_runtime *o);
/**
 * A new file of this rank needs `shortfall` bytes of the count: evict this
 * rank's oldest kept copies that cover it (local_evict.h) and remove their
 * files (and version records) on the ordered I/O thread, so before the
 * open job submitted next. Their bytes stay counted and are added to
 * *freed: the caller's to keep for its file or give back. Returns 1 when
 * it evicted, 0 when the kept copies cannot cover the shortfall (nothing
 * evicted) (progress thread).
 */
int fwdioi_local_kept_evict(struct fwdio_runtime *o, uint64_t shortfall, uint64_t *freed);
/** The bytes of the count this rank's kept copies hold (progress
 *  thread). */
uint64_t fwdioi_local_kept_bytes(struct fwdio_runtime *o);
/** Forget the list (fwdio_finalize, after the threads are joined): the files
 *  stay for a restart. */
void fwdioi_local_kept_free(struct fwdio_runtime *o);

#endif
