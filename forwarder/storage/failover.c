/* SPDX-License-Identifier: BSD-3-Clause */
/* A local file that moves to its target when its store fails (failover.h). */
#include "storage/failover.h"

#include "fwdio.h"

#include "lock_check.h"
#include "storage/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes copied per pread/pwrite pair. */
enum { COPY_CHUNK = 1 << 20 };

fwdioi_failover_t *fwdioi_failover_new(const char *local_path, const char *record_path,
                                       const char *target_path, uint64_t size, int sets_length,
                                       fwdioi_range_t *runs, size_t nruns)
{
    fwdioi_failover_t *fo = calloc(1, sizeof *fo);
    if (fo) {
        fo->local_path = strdup(local_path);
        fo->record_path = record_path ? strdup(record_path) : NULL;
    }
    if (!fo || !fo->local_path || (record_path && !fo->record_path)) {
        if (fo) {
            free(fo->local_path);
            free(fo->record_path);
        }
        free(fo);
        free(runs);
        return NULL;
    }
    fo->target_path = target_path;
    fo->size = size;
    fo->sets_length = sets_length;
    fo->runs = runs;
    fo->nruns = nruns;
    fo->target_fd = -1;
    pthread_mutex_init(&fo->guard, NULL);
    return fo;
}

fwdioi_failover_t *fwdioi_failover_new_stream(const char *local_path, const char *target_path,
                                              int (*take_room)(void *arg, uint64_t bytes),
                                              void *room_arg)
{
    fwdioi_failover_t *fo = fwdioi_failover_new(local_path, NULL, target_path, 0, 0, NULL, 0);
    if (fo) {
        fo->grows = 1;
        fo->take_room = take_room;
        fo->room_arg = room_arg;
    }
    return fo;
}

int fwdioi_failover_claim(fwdioi_failover_t *fo, uint64_t offset, uint64_t len)
{
    if (!fo || !fo->grows || fo->active || len == 0)
        return 0;
    uint64_t added = 0;
    uint64_t again = 0;
    if (fwdioi_ranges_merge(&fo->written, offset, offset + len, &added) != FWDIOI_RANGES_OK ||
        fwdioi_ranges_merge(&fo->fresh, offset, offset + len, &again) != FWDIOI_RANGES_OK) {
        errno = ENOMEM;
        return -1;
    }
    if (added > 0 && fo->take_room) {
        if (fo->take_room(fo->room_arg, added) != 0)
            return 1; /* recorded all the same: the move copies what is there */
        fo->room_taken += added;
    }
    return 0;
}

int fwdioi_failover_take_fresh(fwdioi_failover_t *fo, fwdioi_range_t **list, size_t *n)
{
    *list = NULL;
    *n = 0;
    if (!fo || !fo->grows || fo->active || fo->fresh.n == 0)
        return 0;
    fwdioi_range_t *l = fwdioi_ranges_list(&fo->fresh);
    if (!l)
        return -1;
    *list = l;
    *n = fo->fresh.n;
    fwdioi_ranges_free(&fo->fresh);
    return 0;
}

void fwdioi_failover_free(fwdioi_failover_t *fo)
{
    if (!fo)
        return;
    if (fo->target_fd >= 0)
        fwdioi_sys_close(fo->target_fd);
    free(fo->local_path);
    free(fo->record_path);
    free(fo->runs);
    fwdioi_ranges_free(&fo->written);
    fwdioi_ranges_free(&fo->fresh);
    pthread_mutex_destroy(&fo->guard);
    free(fo);
}

int fwdioi_failover_fd(const fwdioi_failover_t *fo, int fd)
{
    return fo && fo->active ? fo->target_fd : fd;
}

static int failed(fwdioi_failover_t *fo, int call, uint64_t offset, int on_local)
{
    fo->fail_call = call;
    fo->fail_errno = errno;
    fo->fail_offset = offset;
    fo->fail_local = on_local;
    return -1;
}

int fwdioi_failover_status(const fwdioi_failover_t *fo)
{
    switch (fo->fail_call) {
    case FWDIOI_CALL_OPEN:
        return fo->fail_local ? FWDIO_EREAD : FWDIO_EOPEN;
    case FWDIOI_CALL_FTRUNCATE:
        return FWDIO_EOPEN;
    case FWDIOI_CALL_PREAD:
    case FWDIOI_CALL_FSTAT:
        return FWDIO_EREAD;
    case FWDIOI_CALL_PWRITE:
        return FWDIO_EWRITE;
    case FWDIOI_CALL_FDATASYNC:
    case FWDIOI_CALL_CLOSE:
        return FWDIO_ESYNC;
    default:
        return FWDIO_ENOMEM;
    }
}

/* Copy what the local file holds of the writer's runs to the target. */
static int copy_written(fwdioi_failover_t *fo)
{
    int in = fwdioi_sys_open(fo->local_path, O_RDONLY | O_CLOEXEC, 0);
    if (in < 0)
        return failed(fo, FWDIOI_CALL_OPEN, 0, 1);
    struct stat st;
    if (fwdioi_sys_fstat(in, &st) != 0) {
        failed(fo, FWDIOI_CALL_FSTAT, 0, 1);
        fwdioi_sys_close(in);
        return -1;
    }
    uint64_t end_of_local = (uint64_t)st.st_size;
    uint8_t *buf = malloc(COPY_CHUNK);
    if (!buf) {
        errno = ENOMEM;
        failed(fo, FWDIOI_CALL_NONE, 0, 0);
        fwdioi_sys_close(in);
        return -1;
    }
    int rc = 0;
    if (fo->grows) { /* a stream's writer: what it wrote */
        free(fo->runs);
        fo->nruns = fo->written.n;
        fo->runs = fo->nruns ? fwdioi_ranges_list(&fo->written) : NULL;
        if (fo->nruns && !fo->runs) {
            errno = ENOMEM;
            rc = failed(fo, FWDIOI_CALL_NONE, 0, 0);
        }
    }
    for (size_t i = 0; rc == 0 && i < fo->nruns; i++) {
        uint64_t end = fo->runs[i].end < end_of_local ? fo->runs[i].end : end_of_local;
        for (uint64_t at = fo->runs[i].start; rc == 0 && at < end;) {
            uint64_t len = end - at < COPY_CHUNK ? end - at : COPY_CHUNK, bad = at;
            if (fwdioi_pread_all(in, buf, len, at, &bad) != 0)
                rc = failed(fo, FWDIOI_CALL_PREAD, bad, 1);
            else if (fwdioi_pwrite_all(fo->target_fd, buf, len, at, &bad) != 0)
                rc = failed(fo, FWDIOI_CALL_PWRITE, bad, 0);
            else
                fo->copied += len;
            at += len;
        }
    }
    free(buf);
    fwdioi_sys_close(in);
    return rc;
}

int fwdioi_failover_hold(fwdioi_failover_t *fo)
{
    fwdioi_mutex_lock(&fo->guard);
    return fo->active;
}

void fwdioi_failover_release(fwdioi_failover_t *fo) { fwdioi_mutex_unlock(&fo->guard); }

static int move_guarded(fwdioi_failover_t *fo, int call, uint64_t offset);

int fwdioi_failover_move(fwdioi_failover_t *fo, int call, uint64_t offset)
{
    if (!fo || fo->active)
        return -1;
    int err = errno;
    fwdioi_mutex_lock(&fo->guard); /* no step drain copies meanwhile */
    errno = err;
    int rc = move_guarded(fo, call, offset);
    err = errno;
    fwdioi_mutex_unlock(&fo->guard);
    errno = err;
    return rc;
}

static int move_guarded(fwdioi_failover_t *fo, int call, uint64_t offset)
{
    fo->cause_errno = errno;
    fo->cause_call = call;
    fo->cause_offset = offset;
    fo->active = 1; /* from now on, every failure is the target's */
    /* Never O_TRUNC: writers that wrote straight to the target, or moved
     * before this one, may have bytes there; every byte below `size` is
     * some writer's, written whole. */
    fo->target_fd = fwdioi_sys_open(fo->target_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
    if (fo->target_fd < 0)
        return failed(fo, FWDIOI_CALL_OPEN, 0, 0);
    if (fo->sets_length && fwdioi_sys_ftruncate(fo->target_fd, (off_t)fo->size) != 0)
        return failed(fo, FWDIOI_CALL_FTRUNCATE, fo->size, 0);
    return copy_written(fo);
}

int fwdioi_failover_end(fwdioi_failover_t *fo, int durable)
{
    if (!fo || !fo->active || fo->target_fd < 0)
        return 0;
    int rc = 0;
    if (durable && fwdioi_sys_fdatasync(fo->target_fd) != 0)
        rc = failed(fo, FWDIOI_CALL_FDATASYNC, 0, 0);
    if (fwdioi_sys_close(fo->target_fd) != 0 && rc == 0)
        rc = failed(fo, FWDIOI_CALL_CLOSE, 0, 0);
    fo->target_fd = -1;
    /* The local file is partial: a restart or a drain must never take it.
     * Its record goes first (a copy without a record is never read). */
    if (fo->record_path)
        fwdioi_sys_unlink(fo->record_path);
    fwdioi_sys_unlink(fo->local_path);
    return rc;
}
