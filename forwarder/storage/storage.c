/* SPDX-License-Identifier: BSD-3-Clause */
#include "storage/storage.h"

#include "clock.h"

#include "log.h"
#include "storage/sysio.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/*
 * Whether a write of the job's file failed. The file's status is settled by
 * its first error, so its later write jobs are skipped, and so is its
 * fdatasync: on a full, broken or slow disk they would only delay the
 * report. The flag belongs to the file, not to its descriptor's number,
 * which the kernel gives to the next file opened once this one is closed.
 */
static int write_failed(const fwdioi_storage_job_t *job)
{
    return job->write_failed && *job->write_failed;
}

static void fail(fwdioi_storage_job_t *job, int status, fwdioi_syscall_t call, uint64_t offset)
{
    job->status = status;
    job->sys_errno = errno;
    job->err_offset = offset;
    job->err_call = call;
    job->fail_time = fwdioi_now();
}

/* A reader's open: the file must exist and not be a directory; its size is
 * what the reads are planned over. */
static void run_open_read(fwdioi_storage_job_t *job)
{
    job->fd = fwdioi_sys_open(job->path, O_RDONLY | O_CLOEXEC, 0);
    if (job->fd < 0) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_OPEN, 0);
        return;
    }
    struct stat st;
    int rc = fwdioi_sys_fstat(job->fd, &st);
    if (rc == 0 && S_ISDIR(st.st_mode)) {
        errno = EISDIR;
        rc = -1;
    }
    if (rc != 0) {
        fail(job, FWDIO_EOPEN, rc == 0 || errno == EISDIR ? FWDIOI_CALL_OPEN : FWDIOI_CALL_FSTAT,
             0);
        fwdioi_sys_close(job->fd);
        job->fd = -1;
        return;
    }
    job->size = (uint64_t)st.st_size;
}

static void run_read(fwdioi_storage_job_t *job)
{
    uint64_t failed_at;
    if (fwdioi_pread_all(job->fd, job->dst, job->len, job->base, &failed_at) != 0) {
        fail(job, FWDIO_EREAD, FWDIOI_CALL_PREAD, failed_at);
        job->bytes_written = failed_at - job->base;
        return;
    }
    job->bytes_written = job->len;
}

int fwdioi_make_parents(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    size_t len = (size_t)(slash - path);
    if (len >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, path, len);
    dir[len] = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (fwdioi_sys_mkdir(dir, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = c;
        if (!c)
            return 0;
    }
}

static void dir_of(const char *path, char *buf, size_t len);

/* A stream written in a local store (storage.h, prepare_path): the target
 * exists from the open and its length is set as the stream's open sets it
 * (kept bytes below the length); an older version record of the local
 * file goes (a stream's local file is never a restart's copy). 0, or -1
 * with the job failed (on the target). */
static int prepare_target(fwdioi_storage_job_t *job)
{
    if (job->forget_path && fwdioi_sys_unlink(job->forget_path) != 0 && errno != ENOENT) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_UNLINK, 0);
        return -1;
    }
    int fd = fwdioi_sys_open(job->prepare_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_OPEN, 0);
        job->err_on_target = 1;
        return -1;
    }
    int rc = 0;
    if (job->prepare_sets_length && fwdioi_sys_ftruncate(fd, (off_t)job->prepare_size) != 0) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_FTRUNCATE, job->prepare_size);
        job->err_on_target = 1;
        rc = -1;
    }
    fwdioi_sys_close(fd);
    return rc;
}

static void run_open(fwdioi_storage_job_t *job)
{
    if (job->make_dirs && fwdioi_make_parents(job->path) != 0) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_MKDIR, 0);
        return;
    }
    if (job->read_only) {
        run_open_read(job);
        return;
    }
    if (job->need_free > 0 && job->fallback_path) {
        char dir[4096];
        dir_of(job->path, dir, sizeof dir);
        struct statvfs vfs;
        if (fwdioi_sys_statvfs(dir, &vfs) == 0 &&
            (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize < job->need_free) {
            job->fell_back = 1; /* no room in the local store: the target */
            job->path = job->fallback_path;
            job->size = job->fallback_size;
            job->sets_length = job->fallback_sets_length;
        }
    }
    /* the old contents go, unless the first `size` bytes are kept (a stream) */
    int flags = (job->no_create ? 0 : O_CREAT) | O_WRONLY | O_CLOEXEC |
                (job->sets_length && !job->keeps_prefix ? O_TRUNC : 0);
    job->fd = fwdioi_sys_open(job->path, flags, 0666);
    if (job->fd < 0) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_OPEN, 0);
        return;
    }
    if (job->sets_length && fwdioi_sys_ftruncate(job->fd, (off_t)job->size) != 0) {
        fail(job, FWDIO_EOPEN, FWDIOI_CALL_FTRUNCATE, job->size);
        fwdioi_sys_close(job->fd);
        job->fd = -1;
        return;
    }
    if (job->prepare_path && prepare_target(job) != 0) {
        fwdioi_sys_close(job->fd);
        job->fd = -1;
    }
}

/* Write the job's extents or segments to fd: 0, or -1 with errno and
 * *failed_at. */
static int write_all(fwdioi_storage_job_t *job, int fd, uint64_t *failed_at)
{
    job->bytes_written = 0;
    for (size_t i = 0; i < job->nextents + job->nsegs; i++) {
        const uint8_t *src;
        uint64_t len, offset;
        if (job->nextents) {
            const fwdioi_range_t *e = &job->extents[i];
            src = job->buf + e->start;
            len = e->end - e->start;
            offset = job->base + e->start;
        } else {
            src = job->segs[i].src;
            len = job->segs[i].len;
            offset = job->segs[i].offset;
        }
        if (fwdioi_pwrite_all(fd, src, len, offset, failed_at) != 0)
            return -1;
        job->bytes_written += len;
    }
    return 0;
}

/* The failover of the job's file failed (failover.h): the job fails with
 * its call. */
static void fail_failover(fwdioi_storage_job_t *job)
{
    const fwdioi_failover_t *fo = job->failover;
    errno = fo->fail_errno;
    fail(job, fwdioi_failover_status(fo), (fwdioi_syscall_t)fo->fail_call, fo->fail_offset);
    job->err_on_target = !fo->fail_local;
}

/* A stream's writer in a local store (failover.h): record the job's bytes,
 * taking room for the new ones. 0: write locally; 1: no room for the piece
 * at *at, the file moves first (the pieces after it are written to the
 * target, so they need neither room nor a record); -1: no memory. */
static int claim_all(fwdioi_storage_job_t *job, fwdioi_failover_t *fo, uint64_t *at)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < job->nextents + job->nsegs; i++) {
        *at = job->nextents ? job->base + job->extents[i].start : job->segs[i].offset;
        uint64_t len = job->nextents ? job->extents[i].end - job->extents[i].start
                                     : job->segs[i].len;
        rc = fwdioi_failover_claim(fo, *at, len);
    }
    return rc;
}

static void run_write(fwdioi_storage_job_t *job)
{
    uint64_t failed_at = 0;
    if (write_failed(job))
        return;
    fwdioi_failover_t *fo = job->failover;
    int moved = fo && fo->active;
    if (fo && fo->grows && !moved) {
        int claimed = claim_all(job, fo, &failed_at);
        if (claimed < 0) {
            fail(job, FWDIO_ENOMEM, FWDIOI_CALL_NONE, failed_at);
            if (job->write_failed)
                *job->write_failed = 1;
            return;
        }
        if (claimed > 0) { /* local_capacity has no room: as a full store */
            errno = ENOSPC;
            if (fwdioi_failover_move(fo, FWDIOI_CALL_PWRITE, failed_at) != 0) {
                fail_failover(job);
                if (job->write_failed)
                    *job->write_failed = 1;
                return;
            }
            moved = 1;
        }
    }
    int rc = write_all(job, fwdioi_failover_fd(fo, job->fd), &failed_at);
    if (rc != 0 && fo && !moved) {
        /* the local store failed: the file moves to its target, and this
         * job's bytes are written there */
        if (fwdioi_failover_move(fo, FWDIOI_CALL_PWRITE, failed_at) != 0) {
            fail_failover(job);
            if (job->write_failed)
                *job->write_failed = 1;
            return;
        }
        rc = write_all(job, fo->target_fd, &failed_at);
    }
    if (rc != 0) {
        fail(job, FWDIO_EWRITE, FWDIOI_CALL_PWRITE, failed_at);
        job->err_on_target = fo && fo->active;
        if (job->write_failed)
            *job->write_failed = 1;
    }
}

static void run_finish(fwdioi_storage_job_t *job)
{
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_failover_t *fo = job->failover;
    int sync = job->durable && !write_failed(job);
    if (sync && !(fo && fo->active) && fwdioi_sys_fdatasync(job->fd) != 0) {
        /* a local fdatasync that fails moves the file too: the target gets
         * every byte from the local file (its page cache) and is synced */
        if (!fo)
            fail(job, FWDIO_ESYNC, FWDIOI_CALL_FDATASYNC, 0);
        else if (fwdioi_failover_move(fo, FWDIOI_CALL_FDATASYNC, 0) != 0)
            fail_failover(job);
    }
    if (sync)
        fwdioi_trace_end_file(t_trace, "fdatasync", FWDIOI_TRACE_NONE);
    t_trace = fwdioi_trace_begin();
    if (fo && fo->active) {
        /* the local file is about to go: its descriptor's close says nothing */
        fwdioi_sys_close(job->fd);
        if (fwdioi_failover_end(fo, sync && job->status == FWDIO_OK) != 0 &&
            job->status == FWDIO_OK)
            fail_failover(job);
    } else if (fwdioi_sys_close(job->fd) != 0 && job->status == FWDIO_OK) {
        fail(job, FWDIO_ESYNC, FWDIOI_CALL_CLOSE, 0);
    }
    fwdioi_trace_end_file(t_trace, "file close", FWDIOI_TRACE_NONE);
    job->fd = -1;
}

/* The end of a stream's step: its bytes are written (jobs run in order);
 * made durable when asked, unless a write of the file failed already. */
/* The step's bytes written locally, for its drain (storage.h, take_fresh):
 * after the step's last write, as the file's jobs run in order. Without
 * memory they stay in the failover, for the next step or the close. */
static void take_fresh(fwdioi_storage_job_t *job)
{
    if (job->take_fresh && !write_failed(job))
        (void)fwdioi_failover_take_fresh(job->failover, &job->fresh, &job->nfresh);
}

static void sync_step(fwdioi_storage_job_t *job)
{
    if (!job->durable || write_failed(job))
        return;
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_failover_t *fo = job->failover;
    if (fwdioi_sys_fdatasync(fwdioi_failover_fd(fo, job->fd)) != 0) {
        /* a local store's failure moves the file (the target is synced
         * once its bytes are there); the target's fails the step */
        if (!fo || fo->active) {
            fail(job, FWDIO_ESYNC, FWDIOI_CALL_FDATASYNC, 0);
            job->err_on_target = fo != NULL;
        } else if (fwdioi_failover_move(fo, FWDIOI_CALL_FDATASYNC, 0) != 0) {
            fail_failover(job);
        } else if (fwdioi_sys_fdatasync(fo->target_fd) != 0) {
            fail(job, FWDIO_ESYNC, FWDIOI_CALL_FDATASYNC, 0);
            job->err_on_target = 1;
        }
    }
    fwdioi_trace_end_file(t_trace, "fdatasync", FWDIOI_TRACE_NONE);
}

/* After the sync: a failed one that moved the file to the target leaves
 * nothing local to drain. */
static void run_sync(fwdioi_storage_job_t *job)
{
    sync_step(job);
    take_fresh(job);
}

/* "dir/.name.fwdio-tmp" -> "dir" (or "." for a bare name), in buf. */
static void dir_of(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, len, ".");
    else if (slash == path)
        snprintf(buf, len, "/");
    else
        snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

static void run_commit(fwdioi_storage_job_t *job)
{
    if (job->discard) {
        if (job->target && fwdioi_sys_unlink(job->path) != 0 && errno != ENOENT)
            fwdioi_log(FWDIOI_LOG_WARN, "could not remove %s: %s", job->path, strerror(errno));
        return;
    }
    if (job->len > 0 || job->nsegs > 0) {
        uint64_t t_trace = fwdioi_trace_begin();
        uint64_t failed_at = job->base;
        int fd = fwdioi_sys_open(job->path, O_WRONLY | O_CLOEXEC, 0);
        fwdioi_syscall_t failed = FWDIOI_CALL_OPEN;
        if (fd >= 0) {
            /* the block, or the blocks in the order they were set */
            int written = job->len == 0 ||
                          fwdioi_pwrite_all(fd, job->src, job->len, job->base, &failed_at) == 0;
            for (size_t i = 0; written && i < job->nsegs; i++)
                written = fwdioi_pwrite_all(fd, job->segs[i].src, job->segs[i].len,
                                            job->segs[i].offset, &failed_at) == 0;
            failed = !written                          ? FWDIOI_CALL_PWRITE
                     : fwdioi_sys_fdatasync(fd) == 0 ? FWDIOI_CALL_NONE
                                                     : FWDIOI_CALL_FDATASYNC;
        }
        if (failed == FWDIOI_CALL_NONE && fwdioi_sys_close(fd) != 0)
            failed = FWDIOI_CALL_CLOSE;
        if (failed != FWDIOI_CALL_NONE) {
            fail(job, FWDIO_ECOMMIT, failed, failed_at); /* before errno changes */
            if (fd >= 0 && failed != FWDIOI_CALL_CLOSE)
                fwdioi_sys_close(fd);
            if (job->target) /* the target stays as it was, without a temporary */
                fwdioi_sys_unlink(job->path);
            return;
        }
        fwdioi_trace_end_file(t_trace, "commit block", FWDIOI_TRACE_NONE);
    }
    if (job->target) {
        uint64_t t_trace = fwdioi_trace_begin();
        char dir[4096];
        dir_of(job->target, dir, sizeof dir);
        if (fwdioi_sys_rename(job->path, job->target) != 0) {
            fail(job, FWDIO_ECOMMIT, FWDIOI_CALL_RENAME, 0);
            fwdioi_sys_unlink(job->path); /* the target stays as it was */
            return;
        }
        if (fwdioi_sys_fsync_dir(dir) != 0)
            fail(job, FWDIO_ECOMMIT, FWDIOI_CALL_FSYNC_DIR, 0);
        fwdioi_trace_end_file(t_trace, "rename", FWDIOI_TRACE_NONE);
    }
}

/* Bytes a write job puts in the file. */
static uint64_t job_bytes(const fwdioi_storage_job_t *job)
{
    uint64_t n = 0;
    for (size_t i = 0; i < job->nextents; i++)
        n += job->extents[i].end - job->extents[i].start;
    for (size_t i = 0; i < job->nsegs; i++)
        n += job->segs[i].len;
    return n;
}

static void run_job(fwdioi_io_job_t *io)
{
    fwdioi_storage_job_t *job = (fwdioi_storage_job_t *)io;
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    switch (job->kind) {
    case FWDIOI_STORAGE_OPEN:
        run_open(job);
        fwdioi_trace_end_text(t_trace, "file open", FWDIOI_TRACE_NONE, (int64_t)job->size,
                              job->path);
        break;
    case FWDIOI_STORAGE_WRITE:
        run_write(job);
        fwdioi_trace_end(t_trace, "pwrite", FWDIOI_TRACE_NONE, (int64_t)job_bytes(job),
                         (int64_t)job->base, FWDIOI_TRACE_NONE);
        break;
    case FWDIOI_STORAGE_FINISH:
        run_finish(job);
        break;
    case FWDIOI_STORAGE_SYNC:
        run_sync(job);
        break;
    case FWDIOI_STORAGE_COMMIT:
        run_commit(job);
        break;
    case FWDIOI_STORAGE_READ:
        run_read(job);
        fwdioi_trace_end(t_trace, "pread", FWDIOI_TRACE_NONE, (int64_t)job->len,
                         (int64_t)job->base, FWDIOI_TRACE_NONE);
        break;
    }
    job->seconds = fwdioi_now() - t0;
}

static void job_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_storage_job_t *job = (fwdioi_storage_job_t *)io;
    job->on_done(job);
}

fwdioi_storage_job_t *fwdioi_storage_job_new(fwdioi_storage_kind_t kind, void *owner,
                                             void (*on_done)(fwdioi_storage_job_t *))
{
    fwdioi_storage_job_t *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    job->io.run = run_job;
    job->io.done = job_done;
    job->kind = kind;
    job->owner = owner;
    job->on_done = on_done;
    job->fd = -1;
    job->status = FWDIO_OK;
    return job;
}

int fwdioi_storage_job_add_segment(fwdioi_storage_job_t *job, uint64_t offset,
                                   const uint8_t *src, uint64_t len)
{
    if (job->nsegs > 0) {
        fwdioi_segment_t *last = &job->segs[job->nsegs - 1];
        if (last->offset + last->len == offset && last->src + last->len == src) {
            last->len += len;
            return 0;
        }
    }
    if (job->nsegs == job->segs_cap) {
        size_t cap = job->segs_cap ? 2 * job->segs_cap : 8;
        fwdioi_segment_t *segs = realloc(job->segs, cap * sizeof *segs);
        if (!segs)
            return -1;
        job->segs = segs;
        job->segs_cap = cap;
    }
    job->segs[job->nsegs++] = (fwdioi_segment_t){offset, src, len};
    return 0;
}

int fwdioi_storage_job_add_blocks(fwdioi_storage_job_t *job, const fwdioi_commit_set_t *set)
{
    for (int i = 0; i < set->n; i++)
        if (fwdioi_storage_job_add_segment(job, set->b[i].offset, set->b[i].buf, set->b[i].len) != 0)
            return -1;
    return 0;
}

void fwdioi_storage_job_free(fwdioi_storage_job_t *job)
{
    free(job->fresh);
    free(job->buf);
    free(job->extents);
    free(job->segs);
    free(job);
}
