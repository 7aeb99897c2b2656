/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's node-local tier state made at fwdio_open and freed with the file
 * (local_life.h); nothing here writes or drains (local_tier.c, drain.c), so
 * the file's release reaches no further into the tier.
 */
#include "local/local_life.h"

#include "local/local_name.h"
#include "local/local_state.h"
#include "node/node_area.h"
#include "plan/plan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef HOST_NAME_MAX
#define HOST_NAME_MAX 255
#endif

int fwdioi_local_create(fwdio_file_t *f, const char *pattern, uint64_t bandwidth,
                        uint64_t capacity, fwdioi_origins_t *why)
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
    if (fwdioi_local_file_name(dir, f->path_key, f->my_writer, name, sizeof name) != 0)
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
    l->comm = MPI_COMM_NULL;
    l->in_fd = l->out_fd = -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    l->created_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (!l->pattern || !l->dir || (f->my_writer >= 0 && !f->reading && !l->data_path))
        return FWDIO_ENOMEM; /* the caller releases the file, and with it `local` */
    return FWDIO_OK;
}

void fwdioi_local_free(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (!l)
        return;
    fwdioi_local_space_free(f); /* a failed file's, or a failed drain's, kept copy */
    free(l->pattern);
    free(l->dir);
    free(l->data_path);
    free(l->buf);
    if (l->restart)
        l->drop_restart(l->restart);
    free(l);
    f->local = NULL;
}

uint64_t fwdioi_local_version_id(const fwdio_file_t *f)
{
    /* the largest open time of the writers, agreed at the open
     * (fwdioi_local_prepare_open puts each writer's in the agreement) */
    return f->s.open_agreed.offset > 0 ? (uint64_t)f->s.open_agreed.offset
                                       : f->local->created_ns;
}

int64_t fwdioi_local_check_value(const fwdio_file_t *f)
{
    if (!f->local)
        return 0;
    return (int64_t)fwdioi_hash(FWDIOI_HASH_INIT, f->local->pattern, strlen(f->local->pattern));
}

void fwdioi_local_space_free(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    if (!l)
        return;
    if (l->reserved > 0)
        fwdioi_area_local_give(&f->owner->area, l->reserved);
    l->reserved = 0;
}

uint64_t fwdioi_local_capacity(const fwdio_file_t *f)
{
    return f->local ? f->local->capacity : 0;
}

const char *fwdioi_local_error_path(const fwdio_file_t *f, const fwdioi_errinfo_t *e, char *buf,
                                    size_t len)
{
    if (!f->local)
        return NULL;
    int writer = e->rank >= 0 ? fwdioi_plan_writer_of_rank(&f->plan, (int)e->rank) : -1;
    if (writer < 0 || fwdioi_local_file_name(f->local->pattern, f->path_key, writer, buf, len) != 0)
        snprintf(buf, len, "the local copy in %s", f->local->pattern);
    return buf;
}
