/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's node-local tier state made at fwdio_open and freed with the file
 * (local_life.h); nothing here writes or drains (local_tier.c, drain.c), so
 * the file's release reaches no further into the tier.
 */
#include "local/local_life.h"

#include "local/local_name.h"
#include "local/local_state.h"
#include "local/partner.h"
#include "node/node_area.h"
#include "plan/plan.h"
#include "storage/failover.h"

#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef HOST_NAME_MAX
#define HOST_NAME_MAX 255
#endif

/* Writer w's partner copy in `dir`: the writer's own name with ".partner"
 * before ".fwdio-local" (a local_dir on a shared file system must not make
 * the two one file). 0, or -1 when it does not fit `len`. */
static int partner_name(const char *dir, const char *path_key, int w, char *out, size_t len)
{
    static const char suffix[] = ".fwdio-local";
    if (len < sizeof ".partner" || fwdioi_local_file_name(dir, path_key, w, out,
                                                          len - (sizeof ".partner" - 1)) != 0)
        return -1;
    size_t n = strlen(out);
    if (n < sizeof suffix - 1 || strcmp(out + n - (sizeof suffix - 1), suffix) != 0)
        return -1;
    strcpy(out + n - (sizeof suffix - 1), ".partner.fwdio-local");
    return 0;
}

/* local_copies 2: this writer's partner, and the writers whose partner
 * copies this rank keeps with their paths in `dir` (partner.h). */
static int place_copies(fwdio_file_t *f, const char *dir, fwdioi_origins_t *why)
{
    struct fwdioi_local *l = f->local;
    const fwdioi_topology_t *t = &f->owner->topo;
    int nw = f->plan.nwriters;
    int *node = malloc((size_t)t->nranks * sizeof *node);
    int *partner = malloc((size_t)nw * sizeof *partner);
    l->kept = malloc((size_t)nw * sizeof *l->kept);
    l->kept_paths = calloc((size_t)nw, sizeof *l->kept_paths);
    if (!node || !partner || !l->kept || !l->kept_paths) {
        free(node);
        free(partner);
        return FWDIO_ENOMEM;
    }
    for (int r = 0; r < t->nranks; r++)
        node[r] = fwdioi_topology_node_of(t, r);
    int missing = fwdioi_local_partners(f->writer_ranks, nw, node, t->nranks, partner);
    free(node);
    if (missing > 0) {
        free(partner);
        return fwdioi_refuse(why, "fwdio_open of %s: local_copies 2 keeps each writer's partner "
                                  "copy on another node, and all %d ranks run on one node: set "
                                  "local_copies 1 here (a copy on the same node does not survive "
                                  "the node's loss)",
                             f->path, t->nranks);
    }
    l->partner = f->my_writer >= 0 ? partner[f->my_writer] : -1;
    for (int w = 0; w < nw; w++) {
        if (partner[w] != f->rank)
            continue;
        char name[PATH_MAX];
        if (partner_name(dir, f->path_key, w, name, sizeof name) != 0) {
            free(partner);
            return fwdioi_refuse(why, "local_dir \"%s\": the partner copy of %s would be "
                                      "longer than %d bytes",
                                 l->pattern, f->path, PATH_MAX - 1);
        }
        if (!(l->kept_paths[l->nkept] = strdup(name))) {
            free(partner);
            return FWDIO_ENOMEM;
        }
        l->kept[l->nkept++] = w;
    }
    free(partner);
    return FWDIO_OK;
}

/* A stream's local file is never a restart's copy, nobody looks it up by
 * name, and two streams of one path may be open at once in one process (an
 * MPI-IO code's two handles of a file, through two runtimes): its name is
 * made unique on the node, "<name>.<hash>.w<writer>.p<pid>s<n>.fwdio-local"
 * (still ending .fwdio-local, for a person cleaning up after a killed job). */
static int stream_name(char *name, size_t len)
{
    static atomic_uint_fast64_t serial;
    const char *suffix = ".fwdio-local";
    size_t n = strlen(name), s = strlen(suffix);
    if (n < s || strcmp(name + n - s, suffix) != 0)
        return -1;
    char tail[64];
    snprintf(tail, sizeof tail, ".p%ld" "s%" PRIuFAST64 "%s", (long)getpid(),
             atomic_fetch_add(&serial, 1), suffix);
    if (n - s + strlen(tail) >= len)
        return -1;
    strcpy(name + n - s, tail);
    return 0;
}

int fwdioi_local_create(fwdio_file_t *f, const char *pattern, uint64_t bandwidth,
                        uint64_t capacity, int copies, fwdioi_origins_t *why)
{
    char host[HOST_NAME_MAX + 1] = "";
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    char dir[PATH_MAX], name[PATH_MAX];
    if (fwdioi_local_expand(pattern, host, dir, sizeof dir) != 0)
        return fwdioi_refuse(why, "local_dir \"%s\": not a directory name (\"%%h\" is the host "
                                  "name, \"%%%%\" a '%%'; no other '%%' sequence; at most %d "
                                  "bytes)",
                             pattern, PATH_MAX - 1);
    if (fwdioi_local_file_name(dir, f->path_key, f->my_writer, name, sizeof name) != 0 ||
        (f->stream && stream_name(name, sizeof name) != 0))
        return fwdioi_refuse(why, "local_dir \"%s\": the local file of %s would be longer than "
                                  "%d bytes",
                             pattern, f->path, PATH_MAX - 1);
    struct fwdioi_local *l = calloc(1, sizeof *l);
    if (!l)
        return FWDIO_ENOMEM;
    f->local = l;
    l->file = f;
    l->pattern = strdup(pattern);
    l->dir = strdup(dir);
    l->data_path = f->my_writer >= 0 && !f->reading ? strdup(name) : NULL;
    l->bandwidth = bandwidth;
    l->capacity = capacity;
    l->copies = copies > 1 ? 2 : 1;
    l->partner = -1;
    l->comm = MPI_COMM_NULL;
    l->in_fd = l->out_fd = -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    l->created_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (!l->pattern || !l->dir || (f->my_writer >= 0 && !f->reading && !l->data_path))
        return FWDIO_ENOMEM; /* the caller releases the file, and with it `local` */
    return l->copies > 1 ? place_copies(f, dir, why) : FWDIO_OK;
}

/* The partner copies' state (replicate.c), unless MPI may still write into
 * its buffers: requests given up with the file's abort. */
static void free_replica(struct fwdioi_local *l)
{
    struct fwdioi_replica *r = l->replica;
    if (!r)
        return;
    l->replica = NULL;
    if (r->out_fd >= 0)
        close(r->out_fd);
    if (r->in_fd >= 0)
        close(r->in_fd);
    if (r->requests > 0)
        return; /* left to MPI */
    free(r->out_buf);
    free(r->out_index);
    free(r->out_runs);
    free(r->in_buf);
    free(r->in_runs);
    free(r);
}

int fwdioi_local_abandoned(const fwdio_file_t *f)
{
    return f->local && f->local->abandoned;
}

void fwdioi_local_room_release(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (!l)
        return;
    fwdioi_local_stream_room_absorb(f); /* a stream's jobs took it */
    fwdioi_local_space_free(f); /* a failed file's, or a failed drain's, kept copy */
    if (l->partner_bytes > 0) /* partner copies a failed drain left */
        fwdioi_area_local_give(&f->owner->area, l->partner_bytes);
    l->partner_bytes = 0;
}

void fwdioi_local_free(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (!l)
        return;
    fwdioi_local_room_release(f);
    fwdioi_step_drains_free(f);
    free(l->pattern);
    free(l->dir);
    free(l->data_path);
    fwdioi_failover_free(l->failover);
    free(l->buf);
    for (int i = 0; i < l->nkept; i++)
        free(l->kept_paths[i]);
    free(l->kept_paths);
    free(l->kept);
    free(l->avail);
    free(l->avail_in);
    free(l->drain_writers);
    free(l->runs);
    free(l->written);
    free(l->drain_paths);
    free(l->check_paths);
    free(l->check_writers);
    free(l->check_intact);
    free(l->check_errs);
    free_replica(l);
    if (l->restart)
        l->drop_restart(l->restart);
    free(l);
    f->local = NULL;
}

uint64_t fwdioi_local_version_id(const fwdio_file_t *f)
{
    /* the largest open time of the writers, agreed at the open
     * (fwdioi_local_prepare_open puts each writer's in the agreement) */
    return f->s.outcome.open_agreed.offset > 0 ? (uint64_t)f->s.outcome.open_agreed.offset
                                       : f->local->created_ns;
}

int64_t fwdioi_local_check_value(const fwdio_file_t *f)
{
    if (!f->local)
        return 0;
    return (int64_t)fwdioi_hash(FWDIOI_HASH_INIT, f->local->pattern, strlen(f->local->pattern));
}

void fwdioi_local_stream_room_absorb(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    fwdioi_failover_t *fo = l ? l->failover : NULL;
    if (!fo || !fo->grows || fo->room_taken == 0)
        return;
    l->reserved += fo->room_taken;
    l->pending += fo->room_taken; /* counted as not drained when taken */
    fo->room_taken = 0;
}

void fwdioi_local_pending_end(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (!l || l->pending == 0)
        return;
    fwdioi_area_local_pending(&f->owner->area, 0, l->pending);
    l->pending = 0;
}

void fwdioi_local_space_free(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (!l)
        return;
    fwdioi_local_pending_end(f);
    if (l->reserved > 0)
        fwdioi_area_local_give(&f->owner->area, l->reserved);
    l->reserved = 0;
}

uint64_t fwdioi_local_capacity(const fwdio_file_t *f)
{
    return f->local ? f->local->capacity : 0;
}

int fwdioi_local_copies(const fwdio_file_t *f)
{
    return f->local ? f->local->copies : 0;
}

const char *fwdioi_local_error_path(const fwdio_file_t *f, const fwdioi_errinfo_t *e, char *buf,
                                    size_t len)
{
    if (!f->local || e->other_value == FWDIOI_LOCAL_AT_TARGET)
        return NULL;
    if (e->other_value == FWDIOI_LOCAL_PARTNER_COPY && e->other_rank >= 0 &&
        e->other_rank < f->plan.nwriters &&
        partner_name(f->local->pattern, f->path_key, (int)e->other_rank, buf, len) == 0)
        return buf;
    int writer = e->rank >= 0 ? fwdioi_plan_writer_of_rank(&f->plan, (int)e->rank) : -1;
    if (writer < 0 || fwdioi_local_file_name(f->local->pattern, f->path_key, writer, buf, len) != 0)
        snprintf(buf, len, "the local copy in %s", f->local->pattern);
    return buf;
}
