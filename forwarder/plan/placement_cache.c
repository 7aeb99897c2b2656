/* SPDX-License-Identifier: BSD-3-Clause */
/* The last SPREAD placement of a runtime, reused (placement_cache.h). */
#include "plan/placement_cache.h"

#include <stdlib.h>
#include <string.h>

void fwdioi_placement_cache_init(fwdioi_placement_cache_t *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
}

void fwdioi_placement_cache_free(fwdioi_placement_cache_t *c)
{
    free(c->ranks);
    c->ranks = NULL;
    c->n = 0;
    pthread_mutex_destroy(&c->lock);
}

int fwdioi_place_writers_cached(fwdioi_placement_cache_t *c, const fwdioi_topology_t *topo,
                                const fwdio_options_t *opts, int *ranks, int *nwriters)
{
    if (!opts || opts->placement != FWDIO_PLACEMENT_SPREAD)
        return fwdioi_place_writers(topo, opts, ranks, nwriters);
    /* Placed under the cache's lock, so that threads opening at once place
     * once; only opens wait for it, never the progress thread. */
    pthread_mutex_lock(&c->lock);
    int rc = FWDIO_OK;
    if (c->n > 0 && c->writers == opts->writers && c->per_node == opts->writers_per_node) {
        memcpy(ranks, c->ranks, (size_t)c->n * sizeof *ranks);
        *nwriters = c->n;
        c->hits++;
    } else {
        rc = fwdioi_place_writers(topo, opts, ranks, nwriters);
        c->misses++;
        int *kept = rc == FWDIO_OK && *nwriters > 0
                        ? realloc(c->ranks, (size_t)*nwriters * sizeof *kept)
                        : NULL;
        if (kept) { /* else the next open places again: nothing lost but time */
            memcpy(kept, ranks, (size_t)*nwriters * sizeof *kept);
            c->ranks = kept;
            c->n = *nwriters;
            c->writers = opts->writers;
            c->per_node = opts->writers_per_node;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}
