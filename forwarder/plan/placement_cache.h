/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer ranks of the last SPREAD placement of a runtime, kept so that
 * files opened with the same placement options, the common case (one file
 * per frame), take them in O(W) instead of placing again in O(N + W) time
 * and memory over the N nodes (fwdioi_place_writers shares the writers out
 * over every node). SPREAD depends
 * only on the topology, fixed for the runtime's life, the writer count and
 * writers_per_node; STRIDE is O(W) already and LIST is the caller's, so
 * they are placed each time. Its own lock: any application thread.
 */
#ifndef FWDIOI_PLACEMENT_CACHE_H
#define FWDIOI_PLACEMENT_CACHE_H

#include "plan/placement.h"

#include <pthread.h>

typedef struct fwdioi_placement_cache {
    pthread_mutex_t lock;
    int writers, per_node; /* the options of the kept placement */
    int n;                 /* its writers; 0: nothing kept */
    int *ranks;            /* [n] */
    unsigned long hits, misses; /* placements taken from it, and made */
} fwdioi_placement_cache_t;

/** An empty cache. */
void fwdioi_placement_cache_init(fwdioi_placement_cache_t *c);
/** Free what it keeps. */
void fwdioi_placement_cache_free(fwdioi_placement_cache_t *c);

/** fwdioi_place_writers(topo, opts, ranks, nwriters), from the cache when
 *  the last SPREAD placement had the same options, else placed (and kept,
 *  when SPREAD and memory allows). `topo` must be the same at every call. */
int fwdioi_place_writers_cached(fwdioi_placement_cache_t *c, const fwdioi_topology_t *topo,
                                const fwdio_options_t *opts, int *ranks, int *nwriters);

#endif
