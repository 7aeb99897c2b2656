/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier's state of a file and the hooks the writer and the
 * session call (local_tier.h). The drain itself is drain.c.
 */
#include "local/local_state.h"

#include "local/local_index.h"
#include "local/local_keep.h"
#include "local/local_life.h"
#include "local/local_name.h"
#include "local/local_record.h"
#include "local/local_space.h"
#include "log.h"
#include "agreement/open_check.h"
#include "storage/storage.h"
#include "storage/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The size an index records, and past which it lies: the file's, or for a
 * stream's writer the end of what it wrote. */
static uint64_t index_size(const fwdio_file_t *f)
{
    return f->stream ? f->local->stream_end : f->size;
}

const char *fwdioi_local_data_path(const fwdio_file_t *f)
{
    return f->local && !f->local->direct ? f->local->data_path : NULL;
}

/* ---- local space: local_capacity, the free-space check ---- */


uint64_t fwdioi_local_file_bytes(const fwdio_file_t *f, int w)
{
    size_t n = 0;
    fwdioi_local_run_t *runs = fwdioi_local_writer_runs(&f->plan, w, &n);
    if (!runs)
        return 0;
    fwdioi_local_index_t ix = {.path = f->path_key, .nruns = n, .runs = runs};
    uint64_t bytes = ((uint64_t)fwdioi_local_index_len(&ix) + 4095) & ~(uint64_t)4095;
    for (size_t i = 0; i < n; i++)
        bytes += runs[i].len;
    free(runs);
    return bytes;
}

/* The writer's failover to the target (storage/failover.h), which `job`
 * opens without the tier: NULL without memory (a failing local store then
 * fails the file, as before there was a failover). */
static fwdioi_failover_t *new_failover(const fwdio_file_t *f, const fwdioi_storage_job_t *job)
{
    size_t n = 0;
    fwdioi_local_run_t *runs = fwdioi_local_writer_runs(&f->plan, f->my_writer, &n);
    fwdioi_range_t *ranges = runs ? malloc((n ? n : 1) * sizeof *ranges) : NULL;
    for (size_t i = 0; ranges && i < n; i++)
        ranges[i] = (fwdioi_range_t){runs[i].offset, runs[i].offset + runs[i].len};
    free(runs);
    if (!ranges)
        return NULL;
    char record[PATH_MAX];
    int has_record = fwdioi_local_record_path(f->local->data_path, record, sizeof record) == 0;
    return fwdioi_failover_new(f->local->data_path, has_record ? record : NULL, job->path,
                               job->size, job->sets_length, ranges, n);
}

/* Point the writer's open job at its local file (emptied, directories
 * made, a free-space check that falls back to the target). */
static void open_locally(fwdio_file_t *f, fwdioi_storage_job_t *job, uint64_t bytes)
{
    struct fwdioi_local *l = f->local;
    l->failover = new_failover(f, job);
    job->fallback_path = job->path; /* the target, as the writer would open it */
    job->fallback_size = job->size;
    job->fallback_sets_length = job->sets_length;
    job->need_free = bytes;
    job->path = l->data_path;
    job->size = 0;
    job->sets_length = 1;
    job->keeps_prefix = 0;
    job->make_dirs = 1;
}

/* The wait for room is over (local_space.h): the local file, or the
 * target as the job already says (progress thread). */
static void room_resolved(fwdio_file_t *f, fwdioi_storage_job_t *job, int taken)
{
    FWDIOI_ASSERT_PROGRESS();
    if (taken)
        open_locally(f, job, f->local->reserved);
    else
        f->local->direct = 1;
}

/* local_capacity for a stream's writer: its WRITE jobs take room for the
 * bytes each adds (failover.h's take_room; I/O thread). */
static int stream_take(void *arg, uint64_t bytes)
{
    return fwdioi_local_stream_take((fwdio_file_t *)arg, bytes);
}

/* A stream's writer: its size is not known, so nothing is counted at the
 * open: the writer writes its steps into its local file where they land in
 * the target, its jobs record what they wrote and take room for it
 * (failover.h), and the open job prepares the target as the stream's open
 * would (created, its length set by writer 0 unless keep_contents) and
 * removes an older version record of the local file's name. Without
 * memory for the failover (which records the bytes), the writer writes
 * straight to the target (progress thread). */
static void open_stream_locally(fwdio_file_t *f, fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    char record[PATH_MAX];
    int has_record = fwdioi_local_record_path(l->data_path, record, sizeof record) == 0;
    l->failover = fwdioi_failover_new_stream(l->data_path, job->path,
                                             l->capacity > 0 ? stream_take : NULL, f);
    if (l->failover && has_record && !(l->failover->record_path = strdup(record))) {
        fwdioi_failover_free(l->failover);
        l->failover = NULL;
    }
    if (!l->failover) {
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: no memory for the node-local tier's record of "
                   "the stream: written straight to the target", f->rank, f->path);
        l->direct = 1;
        return;
    }
    job->prepare_path = job->path;
    job->prepare_size = job->size;
    job->prepare_sets_length = job->sets_length;
    job->forget_path = l->failover->record_path;
    job->path = l->data_path;
    job->size = 0;
    job->sets_length = 1; /* emptied */
    job->keeps_prefix = 0;
    job->make_dirs = 1;
}

int fwdioi_local_prepare_open(fwdio_file_t *f, fwdioi_storage_job_t *job,
                              void (*go)(fwdio_file_t *f, fwdioi_storage_job_t *job, int run))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || !l->data_path || l->direct)
        return 0;
    if (f->stream) {
        fwdioi_local_kept_forget(f->owner, l->data_path); /* a file's copy of that name */
        open_stream_locally(f, job);
        return 0;
    }
    /* the version id: the open's agreement keeps the largest of the
     * writers' open times, the same in every writer's index (local_version.h) */
    f->s.outcome.open_local.offset = (int64_t)l->created_ns;
    uint64_t bytes = fwdioi_local_file_bytes(f, f->my_writer);
    /* the path's kept copy (an earlier version) is about to be overwritten */
    fwdioi_local_kept_forget(f->owner, l->data_path);
    if (l->capacity > 0 && fwdioi_local_room_take(f, bytes) != 0) {
        const fwdioi_room_wait_t then = {.resolved = room_resolved, .go = go};
        if (fwdioi_local_room_wait(f, job, bytes, &then))
            return 1; /* the job waits for room */
        l->direct = 1;
        return 0;
    }
    open_locally(f, job, bytes);
    return 0;
}

void fwdioi_local_open_done(fwdio_file_t *f, const fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || !job->fell_back)
        return;
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s: the local store %s has no room for %llu bytes: "
               "written straight to the target", f->rank, f->path, l->dir,
               (unsigned long long)job->need_free);
    fwdioi_local_space_free(f);
    l->direct = 1;
    fwdioi_failover_free(l->failover); /* no job carries it */
    l->failover = NULL;
}

fwdioi_failover_t *fwdioi_local_failover(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    return f->local && !f->local->direct ? f->local->failover : NULL;
}

/* The writer's last job moved its file to the target (its local store
 * failed): from now on it is a writer that wrote straight to the target,
 * for the drain (nothing to drain, bit 4 of the copies' table), the
 * partner copy (none) and the count of local space (given back) (progress
 * thread). */
static void local_moved(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    const fwdioi_failover_t *fo = l->failover;
    fwdioi_log(FWDIOI_LOG_WARN,
               "rank %d: %s: %s of the local file %s failed at offset %llu (%s): the file "
               "moved to the target %s (%llu bytes written locally copied there)",
               f->rank, f->path, fwdioi_syscall_name(fo->cause_call), l->data_path,
               (unsigned long long)fo->cause_offset, strerror(fo->cause_errno), f->write_path,
               (unsigned long long)fo->copied);
    l->went_to_target = 1;
    l->direct = 1;
    fwdioi_local_stream_room_absorb(f);
    fwdioi_local_space_free(f);
}

int fwdioi_local_defers_commit(const fwdio_file_t *f)
{
    return f->local != NULL && !f->reading;
}

/* ---- sealing: the index after the data ---- */

typedef struct seal_job {
    fwdioi_io_job_t io;
    fwdio_file_t *file;
    void (*then)(fwdio_file_t *f);
    const char *path, *target;
    uint8_t *index;
    size_t len;
    uint64_t at, version;
    uint32_t writer;
    int status, sys_errno, call;
    int no_record; /* a stream's: never a restart's copy (local_restart.h) */
    fwdioi_failover_t *failover; /* the writer's: a failed index write moves
                                    the file to the target */
    int on_target;               /* the failure was the target's */
} seal_job_t;

/* I/O thread: write the index at the end, make it durable. */
static void run_seal(fwdioi_io_job_t *io)
{
    seal_job_t *j = (seal_job_t *)io;
    uint64_t failed_at = j->at;
    int fd = fwdioi_sys_open(j->path, O_WRONLY | O_CLOEXEC, 0);
    j->call = fd < 0                                                           ? FWDIOI_CALL_OPEN
              : fwdioi_pwrite_all(fd, j->index, j->len, j->at, &failed_at) != 0 ? FWDIOI_CALL_PWRITE
              : fwdioi_sys_fdatasync(fd) != 0                                  ? FWDIOI_CALL_FDATASYNC
                                                                               : FWDIOI_CALL_NONE;
    if (j->call != FWDIOI_CALL_NONE) {
        j->status = j->call == FWDIOI_CALL_FDATASYNC ? FWDIO_ESYNC
                    : j->call == FWDIOI_CALL_OPEN    ? FWDIO_EOPEN
                                                     : FWDIO_EWRITE;
        j->sys_errno = errno;
    }
    if (fd >= 0 && fwdioi_sys_close(fd) != 0 && j->status == FWDIO_OK) {
        j->status = FWDIO_ESYNC;
        j->call = FWDIOI_CALL_CLOSE;
        j->sys_errno = errno;
    }
    fwdioi_failover_t *fo = j->failover;
    if (j->status != FWDIO_OK && fo && !fo->active) {
        /* the local store failed at the index: the units are whole in the
         * local file, the target takes them (and is made durable) */
        errno = j->sys_errno;
        if (fwdioi_failover_move(fo, j->call, failed_at) == 0 && fwdioi_failover_end(fo, 1) == 0) {
            j->status = FWDIO_OK;
            j->call = FWDIOI_CALL_NONE;
            j->sys_errno = 0;
            return; /* no record: the local file is gone */
        }
        fwdioi_failover_end(fo, 0); /* close, and nothing partial stays */
        j->status = fwdioi_failover_status(fo);
        j->call = fo->fail_call;
        j->sys_errno = fo->fail_errno;
        j->at = fo->fail_offset;
        j->on_target = !fo->fail_local;
    }
    /* the version record, for a restart (local_restart.h): not the file's
     * status, which is about its bytes */
    if (j->status == FWDIO_OK && !j->no_record &&
        fwdioi_local_record_seal(j->path, j->target, j->version, j->writer) != 0)
        fwdioi_log(FWDIOI_LOG_INFO, "the version record of %s could not be written (%s): a "
                   "restart reads the target", j->path, strerror(errno));
}

static void seal_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    seal_job_t *j = (seal_job_t *)io;
    fwdio_file_t *f = j->file;
    if (j->status != FWDIO_OK && f->s.outcome.local_error.status == FWDIO_OK) {
        fwdioi_errinfo_set_call(&f->s.outcome.local_error, j->status, f->rank, j->sys_errno, j->at,
                                j->call);
        if (j->on_target)
            f->s.outcome.local_error.other_value = FWDIOI_LOCAL_AT_TARGET;
    }
    if (j->status == FWDIO_OK && j->failover && j->failover->active)
        local_moved(f);
    f->s.io_pending--;
    void (*then)(fwdio_file_t *) = j->then;
    free(j->index);
    free(j);
    then(f);
}

uint8_t *fwdioi_local_index_of(const fwdio_file_t *f, int w, uint64_t created_ns, size_t *len)
{
    fwdioi_local_index_t ix = {.size = index_size(f),
                               .stripe_size = f->plan.stripe_size,
                               .write_size = f->plan.write_size,
                               .writer = (uint32_t)w,
                               .nwriters = (uint32_t)f->plan.nwriters,
                               .version = f->seq,
                               .created_ns = created_ns,
                               .path = f->path_key};
    ix.runs = fwdioi_local_runs_of(f, w, &ix.nruns);
    uint8_t *out = NULL;
    if (ix.runs) {
        *len = fwdioi_local_index_len(&ix);
        out = malloc(*len);
        if (out)
            fwdioi_local_index_encode(&ix, out);
    }
    free(ix.runs);
    return out;
}

/* A stream's writer, its jobs done: what they wrote becomes its runs (the
 * index's, the drain's) and the room they took its own. 0, or -1 without
 * memory. */
static int stream_written(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    /* with its steps drained one by one, what is left for the drain after
     * the close: what was written after the last step */
    const fwdioi_ranges_t *w =
        fwdioi_step_drains_on(f) ? &l->failover->fresh : &l->failover->written;
    const fwdioi_ranges_t *all = &l->failover->written;
    fwdioi_local_stream_room_absorb(f);
    free(l->written);
    l->written = malloc((w->n ? w->n : 1) * sizeof *l->written);
    fwdioi_range_t *list = w->n ? fwdioi_ranges_list(w) : NULL;
    if (!l->written || (w->n && !list)) {
        free(list);
        return -1;
    }
    for (size_t i = 0; i < w->n; i++)
        l->written[i] = (fwdioi_local_run_t){list[i].start, list[i].end - list[i].start};
    l->nwritten = w->n;
    free(list);
    /* the index goes after every byte of the local file */
    fwdioi_range_t *every = all->n ? fwdioi_ranges_list(all) : NULL;
    if (all->n && !every)
        return -1;
    l->stream_end = all->n ? every[all->n - 1].end : 0;
    free(every);
    return 0;
}

int fwdioi_local_seal(fwdio_file_t *f, void (*then)(fwdio_file_t *f))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || !l->data_path || l->direct)
        return -1;
    if (l->failover && l->failover->active) {
        local_moved(f); /* a write or the fdatasync moved it: no index */
        return -1;
    }
    if (f->stream && stream_written(f) != 0) {
        fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ENOMEM, f->rank, 0, 0);
        then(f);
        return 0;
    }
    seal_job_t *j = calloc(1, sizeof *j);
    uint64_t version = fwdioi_local_version_id(f);
    if (j)
        j->index = fwdioi_local_index_of(f, f->my_writer, version, &j->len);
    if (!j || !j->index) {
        free(j);
        fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ENOMEM, f->rank, 0, 0);
        then(f);
        return 0;
    }
    j->io.run = run_seal;
    j->io.done = seal_done;
    j->file = f;
    j->then = then;
    j->path = l->data_path;
    j->target = f->path;
    j->version = version;
    j->writer = (uint32_t)f->my_writer;
    j->at = fwdioi_local_index_offset(index_size(f));
    j->no_record = f->stream;
    j->failover = l->failover;
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->engine, &j->io);
    return 0;
}

static void start_drain_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = (struct fwdioi_local *)((char *)task - offsetof(struct fwdioi_local, start_task));
    fwdioi_drain_start(l->file);
}

/* A stream whose steps drain ended failed: its step drains are given up.
 * 1 when nothing of them is in flight; 0 when a copy job is: then the
 * file's drain (failed with the file's error) is over once that job is
 * done, and the path stays taken until then (progress thread). */
static int steps_given_up(fwdio_file_t *f, const fwdioi_errinfo_t *final, MPI_Comm *comm,
                          void (*path_free)(fwdio_file_t *f))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    /* a duplication of the file's communicator still in flight for the
     * step drains keeps it: left to MPI, never freed */
    if (fwdioi_step_drains_dup_pending(f))
        *comm = MPI_COMM_NULL;
    fwdioi_errinfo_t why = *final;
    if (why.status == FWDIO_OK)
        why = f->s.outcome.abort_info;
    if (why.status == FWDIO_OK)
        fwdioi_errinfo_set(&why, FWDIO_EFAILED, f->rank, 0, 0);
    fwdioi_step_drains_give_up(f, &why);
    if (fwdioi_step_drains_idle(f, fwdioi_drain_over_failed))
        return 1;
    l->drain_agreed = why;
    l->path_free = path_free;
    fwdioi_rt_lock(f->engine);
    f->drain_pending = 1;
    fwdioi_rt_unlock(f->engine);
    return 0;
}

int fwdioi_local_session_done(fwdio_file_t *f, const fwdioi_errinfo_t *final, MPI_Comm *comm,
                              void (*path_free)(fwdio_file_t *f),
                              void (*announce)(fwdio_file_t *f, const fwdioi_errinfo_t *why),
                              void (*comm_done)(fwdio_file_t *f, MPI_Comm *comm, int reusable))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || f->reading || final->status != FWDIO_OK || f->s.outcome.aborted || *comm == MPI_COMM_NULL) {
        /* no drain: the writer's bytes (a failed file's, given back when
         * it is freed) never become a drained copy, so writers waiting
         * for room stop counting on them */
        if (l && l->steps && !steps_given_up(f, final, comm, path_free))
            return 1; /* a step's copy is in flight: the drain is over after it */
        fwdioi_local_pending_end(f);
        return 0;
    }
    l->comm = *comm;
    *comm = MPI_COMM_NULL;
    l->path_free = path_free;
    l->announce = announce;
    l->comm_done = comm_done;
    l->committer = f->s.commit.committer;
    l->committers = f->s.commit.committers;
    fwdioi_rt_lock(f->engine);
    f->drain_pending = 1;
    fwdioi_rt_unlock(f->engine);
    l->start_task.run = start_drain_task;
    fwdioi_rt_submit(f->engine, &l->start_task);
    return 1;
}

int fwdioi_local_drain_abort_heard(struct fwdio_runtime *o, uint64_t seq,
                                   const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    /* Drains in flight are few (each holds a communicator): a walk is fine. */
    for (fwdio_file_t *f = LIST_FIRST(&o->draining); f; f = LIST_NEXT(f, s.links.drain))
        if (f->seq == seq) {
            fwdioi_local_abort_heard(f, why);
            return 1;
        }
    return 0;
}
