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
};

/* The removal of evicted copies, on the ordered I/O thread. */
typedef struct evict_job {
    fwdioi_io_job_t io;
    size_t n;
    char **paths;
} evict_job_t;

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
        return;
    }
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
    for (size_t i = 0; i < n; i++) {
        *freed += k->v[i].bytes; /* still counted: the caller's now */
        j->paths[i] = k->v[i].path; /* the job frees them */
    }
    memmove(k->v, k->v + n, (k->n - n) * sizeof *k->v);
    k->n -= n;
    j->n = n;
    j->io.run = run_evict;
    j->io.done = evict_done;
    fwdioi_rt_io_submit(o->engine, &j->io);
    return 1;
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
