/* SPDX-License-Identifier: BSD-3-Clause */
/* The drain's system calls, on an I/O pool thread (drain_io.h). */
#include "local/drain_io.h"

#include "clock.h"
#include "local/local_index.h"
#include "local/local_record.h"
#include "log.h"
#include "storage/storage.h"
#include "storage/sysio.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>

static void job_fail(fwdioi_drain_job_t *j, int status, int call, uint64_t offset)
{
    if (j->status != FWDIO_OK)
        return;
    j->status = status;
    j->call = call;
    j->sys_errno = errno;
    j->err_offset = offset;
}

static void open_files(fwdioi_drain_job_t *j)
{
    j->in_fd = fwdioi_sys_open(j->local_path, O_RDONLY | O_CLOEXEC, 0);
    if (j->in_fd < 0) {
        job_fail(j, FWDIO_EREAD, FWDIOI_CALL_OPEN, 0);
        return;
    }
    j->out_fd = fwdioi_sys_open(j->target_path, (j->no_create ? 0 : O_CREAT) | O_WRONLY | O_CLOEXEC,
                                0666);
    if (j->out_fd < 0 && j->no_create && errno == ENOENT) {
        j->target_gone = 1;
        return;
    }
    if (j->out_fd < 0) {
        job_fail(j, FWDIO_EOPEN, FWDIOI_CALL_OPEN, 0);
        return;
    }
    if (j->sets_length && fwdioi_sys_ftruncate(j->out_fd, (off_t)j->size) != 0)
        job_fail(j, FWDIO_EOPEN, FWDIOI_CALL_FTRUNCATE, j->size);
}

/* A step drain opens nothing once the file moved to the target. */
static void run_open(fwdioi_drain_job_t *j)
{
    if (j->guard && fwdioi_failover_hold(j->guard))
        j->moved_away = 1;
    else
        open_files(j);
    if (j->guard)
        fwdioi_failover_release(j->guard);
}

/* Sleep until `moved` bytes since t0 are within the cap. */
static void pace(const fwdioi_drain_job_t *j, uint64_t moved)
{
    if (j->bandwidth <= 1)
        return;
    double due = j->t0 + (double)moved / (double)j->bandwidth;
    double wait = due - fwdioi_now();
    if (wait <= 0)
        return;
    struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void run_copy(fwdioi_drain_job_t *j)
{
    const uint64_t unit = j->unit;
    while (j->next_run < j->nruns && j->copied < FWDIOI_DRAIN_CHUNK) {
        const fwdioi_local_run_t *r = &j->runs[j->next_run];
        uint64_t end = r->offset + r->len;
        uint64_t at = r->offset + j->next_off;
        uint64_t len = end > at ? (end - at < unit ? end - at : unit) : 0;
        uint64_t failed_at;
        if (j->guard && fwdioi_failover_hold(j->guard)) { /* moved: it copied these */
            fwdioi_failover_release(j->guard);
            j->moved_away = 1;
            return;
        }
        int rc = 0;
        if (len > 0 && fwdioi_pread_all(j->in_fd, j->buf, len, at, &failed_at) != 0) {
            if (errno == 0)
                errno = ENODATA; /* the local file ended before its units: not ours */
            job_fail(j, FWDIO_EREAD, FWDIOI_CALL_PREAD, failed_at);
            rc = -1;
        } else if (len > 0 && fwdioi_pwrite_all(j->out_fd, j->buf, len, at, &failed_at) != 0) {
            job_fail(j, FWDIO_EWRITE, FWDIOI_CALL_PWRITE, failed_at);
            rc = -1;
        }
        if (j->guard)
            fwdioi_failover_release(j->guard);
        if (rc != 0)
            return;
        j->copied += len;
        j->next_off += len;
        if (at + len >= end) {
            j->next_run++;
            j->next_off = 0;
        }
    }
    pace(j, j->moved + j->copied);
}

static void run_close(fwdioi_drain_job_t *j)
{
    if (j->out_fd >= 0 && j->sync && fwdioi_sys_fdatasync(j->out_fd) != 0)
        job_fail(j, FWDIO_ESYNC, FWDIOI_CALL_FDATASYNC, 0);
    if (j->out_fd >= 0 && fwdioi_sys_close(j->out_fd) != 0)
        job_fail(j, FWDIO_ESYNC, FWDIOI_CALL_CLOSE, 0);
    if (j->in_fd >= 0)
        fwdioi_sys_close(j->in_fd);
    j->in_fd = j->out_fd = -1;
}

/* Whether `path` ends in an intact index of writer w of this file (its
 * size, geometry and version); else e says what failed. */
static int copy_intact(const fwdioi_drain_job_t *j, const char *path, int w, fwdioi_errinfo_t *e)
{
    const fwdio_file_t *f = j->file;
    int fd = fwdioi_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        fwdioi_errinfo_set_call(e, FWDIO_EREAD, f->rank, errno, 0, FWDIOI_CALL_OPEN);
        return 0;
    }
    struct stat st;
    uint64_t at = fwdioi_local_index_offset(f->size), failed_at = at;
    uint8_t *buf = NULL;
    int ok = 0;
    if (fwdioi_sys_fstat(fd, &st) != 0) {
        fwdioi_errinfo_set_call(e, FWDIO_EREAD, f->rank, errno, 0, FWDIOI_CALL_FSTAT);
    } else if ((uint64_t)st.st_size <= at || (uint64_t)st.st_size - at > (64u << 20) ||
               !(buf = malloc((size_t)((uint64_t)st.st_size - at)))) {
        errno = (uint64_t)st.st_size <= at ? ENODATA : EFBIG;
        fwdioi_errinfo_set_call(e, FWDIO_EREAD, f->rank, errno, at, FWDIOI_CALL_PREAD);
    } else if (fwdioi_pread_all(fd, buf, (uint64_t)st.st_size - at, at, &failed_at) != 0) {
        fwdioi_errinfo_set_call(e, FWDIO_EREAD, f->rank, errno ? errno : ENODATA, failed_at,
                                FWDIOI_CALL_PREAD);
    } else {
        fwdioi_local_index_t ix;
        if (fwdioi_local_index_decode(buf, (size_t)((uint64_t)st.st_size - at), &ix) == 0) {
            ok = ix.size == f->size && ix.writer == (uint32_t)w &&
                 ix.nwriters == (uint32_t)f->plan.nwriters && ix.version == f->seq &&
                 ix.stripe_size == f->plan.stripe_size && !strcmp(ix.path, f->path_key);
            fwdioi_local_index_free(&ix);
        }
        if (!ok) {
            errno = EBADMSG; /* not this file's copy, or damaged */
            fwdioi_errinfo_set_call(e, FWDIO_EREAD, f->rank, errno, at, FWDIOI_CALL_PREAD);
        }
    }
    free(buf);
    fwdioi_sys_close(fd);
    return ok;
}

void fwdioi_drain_job_run(fwdioi_io_job_t *io)
{
    fwdioi_drain_job_t *j = (fwdioi_drain_job_t *)io;
    uint64_t t_trace = fwdioi_trace_begin();
    switch (j->step) {
    case FWDIOI_DRAIN_OPEN:
        run_open(j);
        break;
    case FWDIOI_DRAIN_COPY:
        run_copy(j);
        fwdioi_trace_end(t_trace, "drain", (int64_t)j->seq, (int64_t)j->copied,
                         FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE);
        break;
    case FWDIOI_DRAIN_CLOSE:
        run_close(j);
        break;
    case FWDIOI_DRAIN_REMOVE:
        for (int i = 0; i < j->npaths; i++)
            if (fwdioi_sys_unlink(j->paths[i]) != 0 && errno != ENOENT)
                fwdioi_log(FWDIOI_LOG_WARN, "could not remove %s: %s", j->paths[i],
                           strerror(errno));
        break;
    case FWDIOI_DRAIN_CHECK:
        for (int i = 0; i < j->npaths; i++)
            j->intact[i] = j->paths[i] && copy_intact(j, j->paths[i], j->path_writers[i], &j->errs[i]);
        break;
    case FWDIOI_DRAIN_KEEP:
        /* A copy whose record cannot say drained (a full store: the record
         * is rewritten through a new file) would stay counted and never be
         * evicted, a drained copy looking undrained: the target holds every
         * byte, so the copy goes instead of being kept. */
        if (j->local_path && fwdioi_local_record_drained(j->local_path, j->final_path) != 0) {
            int err = errno;
            (void)fwdioi_sys_unlink(j->local_path);
            (void)fwdioi_local_record_remove(j->local_path);
            j->removed = 1;
            fwdioi_log(FWDIOI_LOG_INFO, "the version record of %s could not be marked drained "
                       "(%s): the copy is removed, a restart reads the target", j->local_path,
                       strerror(err));
        }
        break;
    }
}
