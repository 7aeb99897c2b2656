/* SPDX-License-Identifier: BSD-3-Clause */
/* The drained local copies a rank keeps, and their eviction (local_keep.h). */
#include "local/local_keep.h"

#include "local/local_evict.h"
#include "local/local_record.h"
#include "log.h"
#include "node/node_area.h"
#include "storage/sysio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct kept_copy {
    char *path;
    uint64_t version, bytes;
} kept_copy_t;

struct fwdioi_kept {
    kept_copy_t *v; /* oldest (smallest version) first */
    size_t n, cap;
    uint64_t evicting; /* bytes of a node-wide eviction's files being removed */
};

/* The removal of evicted copies, on the ordered I/O thread. */
typedef struct evict_job {
    fwdioi_io_job_t io;
    size_t n;
    char **paths;
    struct fwdio_runtime *owner;
    uint64_t give_back; /* a node-wide eviction: bytes to return once removed */
} evict_job_t;

/* What the node sees of this rank's copies (node_area.h). */
static void publish(struct fwdio_runtime *o)
{
    const struct fwdioi_kept *k = o->kept;
    fwdioi_area_kept_publish(&o->area, fwdioi_local_kept_bytes(o),
                             k && k->n ? k->v[0].version : UINT64_MAX, k ? k->evicting : 0);
}

static void run_evict(fwdioi_io_job_t *io)
{
    evict_job_t *j = (evict_job_t *)io;
    for (size_t i = 0; i < j->n; i++) {
        /* the record first: a copy without it is never read by a restart */
        if (fwdioi_local_record_remove(j->paths[i]) != 0 ||
            (fwdioi_sys_unlink(j->paths[i]) != 0 && errno != ENOENT))
            fwdioi_log(FWDIOI_LOG_WARN, "could not evict %s: %s", j->paths[i], strerror(errno));
        else
            fwdioi_log(FWDIOI_LOG_INFO, "evicted the drained local copy %s", j->paths[i]);
    }
}

static void evict_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    evict_job_t *j = (evict_job_t *)io;
    if (j->give_back > 0) { /* removed: the room is the node's again */
        fwdioi_area_local_give(&j->owner->area, j->give_back);
        fwdioi_area_room_short_cover(&j->owner->area, j->give_back);
        j->owner->kept->evicting = 0;
        publish(j->owner);
    }
    for (size_t i = 0; i < j->n; i++)
        free(j->paths[i]);
    free(j->paths);
    free(j);
}

void fwdioi_local_kept_add(struct fwdio_runtime *o, const char *local_path, uint64_t version,
                           uint64_t bytes)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_kept *k = o->kept;
    if (!k && (k = o->kept = calloc(1, sizeof *k)) == NULL)
        goto no_memory;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 8;
        kept_copy_t *grown = realloc(k->v, cap * sizeof *grown);
        if (!grown)
            goto no_memory;
        k->v = grown;
        k->cap = cap;
    }
    char *path = strdup(local_path);
    if (!path)
        goto no_memory;
    size_t at = k->n; /* drains end out of order: keep the versions sorted */
    while (at > 0 && k->v[at - 1].version > version)
        at--;
    memmove(k->v + at + 1, k->v + at, (k->n - at) * sizeof *k->v);
    k->v[at] = (kept_copy_t){path, version, bytes};
    k->n++;
    publish(o);
    return;
no_memory:
    /* not listed, so never evicted: its bytes go back to the count rather
     * than stay taken for ever (the copy is then not counted) */
    fwdioi_area_local_give(&o->area, bytes);
}

void fwdioi_local_kept_forget(struct fwdio_runtime *o, const char *local_path)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_kept *k = o->kept;
    for (size_t i = 0; k && i < k->n; i++) {
        if (strcmp(k->v[i].path, local_path) != 0)
            continue;
        fwdioi_area_local_give(&o->area, k->v[i].bytes);
        free(k->v[i].path);
        memmove(k->v + i, k->v + i + 1, (k->n - i - 1) * sizeof *k->v);
        k->n--;
        publish(o);
        return;
    }
}

/* The n oldest copies leave the list for job j (which frees their paths):
 * their bytes, still counted. */
static uint64_t take_oldest(struct fwdio_runtime *o, evict_job_t *j, size_t n)
{
    struct fwdioi_kept *k = o->kept;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += k->v[i].bytes;
        j->paths[i] = k->v[i].path;
    }
    memmove(k->v, k->v + n, (k->n - n) * sizeof *k->v);
    k->n -= n;
    j->n = n;
    j->owner = o;
    j->io.run = run_evict;
    j->io.done = evict_done;
    publish(o);
    return bytes;
}

int fwdioi_local_kept_evict(struct fwdio_runtime *o, uint64_t shortfall, uint64_t *freed)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_kept *k = o->kept;
    if (!k || k->n == 0)
        return 0;
    uint64_t *bytes = malloc(k->n * sizeof *bytes);
    evict_job_t *j = calloc(1, sizeof *j);
    size_t n = 0;
    if (bytes && j) {
        for (size_t i = 0; i < k->n; i++)
            bytes[i] = k->v[i].bytes;
        n = fwdioi_local_evict_choose(bytes, k->n, shortfall);
    }
    free(bytes);
    if (n > 0 && (j->paths = malloc(n * sizeof *j->paths)) == NULL)
        n = 0;
    if (n == 0) {
        free(j);
        return 0;
    }
    *freed += take_oldest(o, j, n); /* still counted: the caller's now */
    fwdioi_rt_io_submit(o->engine, &j->io);
    return 1;
}

void fwdioi_local_kept_node_poll(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_kept *k = o->kept;
    if (!k || k->n == 0 || k->evicting)
        return;
    /* what the waiting writers lack beyond what evictions in flight free */
    uint64_t lack = fwdioi_area_room_short_node(&o->area), coming = 0;
    fwdioi_area_kept_node(&o->area, &coming);
    if (lack <= coming)
        return;
    uint64_t want = lack - coming;
    uint64_t oldest = 0, next = 0;
    if (fwdioi_area_kept_oldest(&o->area, &oldest, &next) != o->area.local)
        return; /* another rank's copy is older: that rank evicts first */
    /* this rank's copies older than every other rank's, oldest first, until
     * they cover what the node's waiting writers lack */
    size_t n = 0;
    uint64_t bytes = 0;
    while (n < k->n && bytes < want && (n == 0 || k->v[n].version <= next))
        bytes += k->v[n++].bytes;
    evict_job_t *j = calloc(1, sizeof *j);
    if (!j || (j->paths = malloc(n * sizeof *j->paths)) == NULL) {
        free(j);
        return; /* tried again at the next tick */
    }
    k->evicting = bytes; /* published by take_oldest */
    j->give_back = take_oldest(o, j, n);
    fwdioi_log(FWDIOI_LOG_INFO,
               "evicting %zu drained local copies (%llu bytes, the node's oldest) for another "
               "writer of the node that lacks %llu bytes of local_capacity",
               n, (unsigned long long)j->give_back, (unsigned long long)want);
    fwdioi_rt_io_submit(o->engine, &j->io);
}

uint64_t fwdioi_local_kept_bytes(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_kept *k = o->kept;
    uint64_t bytes = 0;
    for (size_t i = 0; k && i < k->n; i++)
        bytes += k->v[i].bytes;
    return bytes;
}

void fwdioi_local_kept_free(struct fwdio_runtime *o)
{
    struct fwdioi_kept *k = o->kept;
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i].path);
    free(k->v);
    free(k);
    o->kept = NULL;
}
