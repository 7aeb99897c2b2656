/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partner copies (local_copies 2; local_tier.h, fwdioi_local_replicate).
 * Once the file's data is durable in its writers' local files and its final
 * status is agreed, and before complete: each writer reads its local file
 * back (its units in order, as runs of the target's bytes, then its index)
 * and sends it to its partner, a rank on another node (partner.h), in
 * messages of up to FWDIOI_DRAIN_CHUNK bytes on the file's communicator
 * (FWDIOI_TAG_COPY); the partner writes them into its own local store at
 * the same offsets, in a file named as the writer's with ".partner" before
 * ".fwdio-local" (a local_dir on a shared file system must not make the
 * two one file), then the index, and fdatasyncs. A writer whose read fails,
 * or that wrote straight to the target (no room locally), sends an empty
 * message instead, and its partner keeps nothing of it. A rank that keeps several copies takes them one
 * after the other (messages of one sender arrive in order); its own copy
 * out runs beside them. Then every rank agrees on the copies' status, the
 * status the file completes with.
 *
 * Forwarded by the writer rather than sent twice by the senders: the
 * senders' traffic and the writers' assembly stay as they are (a second
 * writer per stripe would double every sender's messages and budgets), the
 * copy reads back what the page cache still holds, and only the writers'
 * nodes exchange bytes, one copy of each writer's share.
 *
 * The system calls run as jobs on the runtime's I/O pool, counted in the
 * session's io_pending, so an abort of the file waits for them; the MPI
 * requests are tracked with the file as their argument, so the session's
 * abort gives them up (their buffers are then left to MPI, as a drain's
 * given-up communicator is: local_life.c's fwdioi_local_free).
 */
#include "local/local_state.h"

#include "local/local_life.h"
#include "local/local_space.h"
#include "local/drain_io.h"
#include "log.h"
#include "agreement/agreements.h"
#include "agreement/outcome.h"
#include "storage/storage.h"
#include "storage/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>


/* ---- the I/O jobs ---- */

typedef enum { OUT_READ, IN_OPEN, IN_WRITE, IN_SEAL, IN_CLOSE } copy_step_t;

typedef struct copy_job {
    fwdioi_io_job_t io;
    fwdio_file_t *file;
    copy_step_t step;
    const char *path;
    int fd;
    const fwdioi_local_run_t *runs;
    size_t nruns;
    uint8_t *buf;
    uint64_t pos, len, index_at;
    int last; /* OUT_READ: close the file after this piece */
    int status, sys_errno, call;
    uint64_t err_offset;
} copy_job_t;

static void job_fail(copy_job_t *j, int status, int call, uint64_t offset)
{
    if (j->status != FWDIO_OK)
        return;
    j->status = status;
    j->call = call;
    j->sys_errno = errno;
    j->err_offset = offset;
}

/* Bytes [pos, pos + len) of the runs, in order, between the file and buf. */
static void move_runs(copy_job_t *j, int reading)
{
    uint64_t skip = j->pos, done = 0;
    for (size_t i = 0; i < j->nruns && done < j->len; i++) {
        const fwdioi_local_run_t *r = &j->runs[i];
        if (skip >= r->len) {
            skip -= r->len;
            continue;
        }
        uint64_t n = r->len - skip < j->len - done ? r->len - skip : j->len - done;
        uint64_t at = r->offset + skip, failed_at;
        if (reading && fwdioi_pread_all(j->fd, j->buf + done, n, at, &failed_at) != 0) {
            if (errno == 0)
                errno = ENODATA; /* the local file ended before its units */
            job_fail(j, FWDIO_EREAD, FWDIOI_CALL_PREAD, failed_at);
            return;
        }
        if (!reading && fwdioi_pwrite_all(j->fd, j->buf + done, n, at, &failed_at) != 0) {
            job_fail(j, FWDIO_EWRITE, FWDIOI_CALL_PWRITE, failed_at);
            return;
        }
        done += n;
        skip = 0;
    }
}

static void close_fd(copy_job_t *j, int sync)
{
    if (j->fd < 0)
        return;
    if (sync && j->status == FWDIO_OK && fwdioi_sys_fdatasync(j->fd) != 0)
        job_fail(j, FWDIO_ESYNC, FWDIOI_CALL_FDATASYNC, 0);
    if (fwdioi_sys_close(j->fd) != 0 && sync)
        job_fail(j, FWDIO_ESYNC, FWDIOI_CALL_CLOSE, 0);
    j->fd = -1;
}

/* An I/O pool thread. */
static void copy_job_run(fwdioi_io_job_t *io)
{
    copy_job_t *j = (copy_job_t *)io;
    uint64_t failed_at;
    switch (j->step) {
    case OUT_READ:
        if (j->fd < 0 && (j->fd = fwdioi_sys_open(j->path, O_RDONLY | O_CLOEXEC, 0)) < 0) {
            job_fail(j, FWDIO_EREAD, FWDIOI_CALL_OPEN, 0);
            return;
        }
        move_runs(j, 1);
        if (j->last || j->status != FWDIO_OK)
            close_fd(j, 0);
        return;
    case IN_OPEN:
        if (fwdioi_make_parents(j->path) != 0) {
            job_fail(j, FWDIO_EOPEN, FWDIOI_CALL_MKDIR, 0);
            return;
        }
        j->fd = fwdioi_sys_open(j->path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0666);
        if (j->fd < 0)
            job_fail(j, FWDIO_EOPEN, FWDIOI_CALL_OPEN, 0);
        return;
    case IN_WRITE:
        move_runs(j, 0);
        return;
    case IN_SEAL:
        if (fwdioi_pwrite_all(j->fd, j->buf, j->len, j->index_at, &failed_at) != 0)
            job_fail(j, FWDIO_EWRITE, FWDIOI_CALL_PWRITE, failed_at);
        close_fd(j, 1);
        return;
    case IN_CLOSE: /* no copy after all: nothing of it stays */
        close_fd(j, 0);
        if (fwdioi_sys_unlink(j->path) != 0 && errno != ENOENT)
            job_fail(j, FWDIO_EWRITE, FWDIOI_CALL_UNLINK, 0);
        return;
    }
}

/* ---- the progress side ---- */

static void job_done(fwdioi_io_job_t *io);
static void next_kept(fwdio_file_t *f);
static void maybe_agree(fwdio_file_t *f);

static void submit(fwdio_file_t *f, copy_step_t step, const char *path, int fd,
                   const fwdioi_local_run_t *runs, size_t nruns, uint8_t *buf, uint64_t pos,
                   uint64_t len)
{
    copy_job_t *j = calloc(1, sizeof *j);
    if (!j) {
        fwdioi_outcome_nomem(f, pos);
        return;
    }
    *j = (copy_job_t){.io = {.run = copy_job_run, .done = job_done},
                      .file = f, .step = step, .path = path, .fd = fd, .runs = runs,
                      .nruns = nruns, .buf = buf, .pos = pos, .len = len,
                      .index_at = fwdioi_local_index_offset(f->size), .status = FWDIO_OK};
    j->last = step == OUT_READ && pos + len >= f->local->replica->out_total;
    f->s.io_pending++;
    fwdioi_rt_io_submit_any(f->engine, &j->io);
}

/* An MPI call of the copying failed: the file is aborted on every rank. */
static void mpi_failed(fwdio_file_t *f, int call, int rc)
{
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set_mpi(&why, f->rank, call, rc);
    fwdioi_outcome_abort(f, &why, 1);
}

static void out_sent(void *arg, const MPI_Status *st);
static void in_received(void *arg, const MPI_Status *st);

/* Send len bytes of buf to the partner (len 0: this writer's copy failed). */
static void out_send(fwdio_file_t *f, const uint8_t *buf, uint64_t len)
{
    struct fwdioi_replica *r = f->local->replica;
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Isend(buf, (int)len, MPI_BYTE, f->local->partner, FWDIOI_TAG_COPY,
                             f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        mpi_failed(f, FWDIOI_MPI_COPY_ISEND, rc);
        return;
    }
    r->out_len = len;
    r->requests++;
    fwdioi_rt_track(f->engine, req, out_sent, f);
}

/* The next piece of this writer's file: read it, or send the index. */
static void out_next(fwdio_file_t *f)
{
    struct fwdioi_replica *r = f->local->replica;
    if (r->out_pos < r->out_total) {
        uint64_t len = r->out_total - r->out_pos;
        if (len > FWDIOI_DRAIN_CHUNK)
            len = FWDIOI_DRAIN_CHUNK;
        submit(f, OUT_READ, f->local->data_path, r->out_fd, r->out_runs, r->out_nruns,
               r->out_buf, r->out_pos, len);
    } else {
        r->out_pos++; /* past the data: what goes now is the index */
        out_send(f, r->out_index, r->out_index_len);
    }
}

static void out_sent(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_replica *r = f->local->replica;
    r->requests--;
    if (st->MPI_ERROR != MPI_SUCCESS) {
        mpi_failed(f, FWDIOI_MPI_COPY_ISEND, st->MPI_ERROR);
        return;
    }
    if (r->out_len == 0 || r->out_pos > r->out_total) { /* failed, or the index went */
        r->out_done = 1;
        maybe_agree(f);
        return;
    }
    r->out_pos += r->out_len;
    out_next(f);
}

/* Receive the next message of the kept copy's writer. */
static void in_post(fwdio_file_t *f)
{
    struct fwdioi_replica *r = f->local->replica;
    struct fwdioi_local *l = f->local;
    int src = fwdioi_plan_writer_rank(&f->plan, l->kept[r->in_k]);
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Irecv(r->in_buf, (int)r->in_cap, MPI_BYTE, src, FWDIOI_TAG_COPY,
                             f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        mpi_failed(f, FWDIOI_MPI_COPY_IRECV, rc);
        return;
    }
    r->requests++;
    fwdioi_rt_track(f->engine, req, in_received, f);
}

static void in_received(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_local *l = f->local;
    struct fwdioi_replica *r = l->replica;
    r->requests--;
    int count = 0;
    int rc = st->MPI_ERROR != MPI_SUCCESS ? st->MPI_ERROR : MPI_Get_count(st, MPI_BYTE, &count);
    if (rc != MPI_SUCCESS) {
        mpi_failed(f, FWDIOI_MPI_COPY_IRECV, rc);
        return;
    }
    const char *path = l->kept_paths[r->in_k];
    if (count == 0) { /* the writer could not read its file: nothing more comes */
        submit(f, IN_CLOSE, path, r->in_fd, NULL, 0, NULL, 0, 0);
        return;
    }
    r->in_len = (uint64_t)count;
    if (r->in_pos < r->in_total) {
        if (r->in_failed) { /* received all the same, so the writer's sends end */
            r->in_pos += r->in_len;
            in_post(f);
            return;
        }
        submit(f, IN_WRITE, path, r->in_fd, r->in_runs, r->in_nruns, r->in_buf, r->in_pos,
               r->in_len);
        return;
    }
    /* the index, last */
    submit(f, r->in_failed ? IN_CLOSE : IN_SEAL, path, r->in_fd, NULL, 0, r->in_buf, 0,
           r->in_len);
}

/* A job of the copying is done: the next step of its side (progress
 * thread). */
static void job_done(fwdioi_io_job_t *io)
{
    FWDIOI_ASSERT_PROGRESS();
    copy_job_t *j = (copy_job_t *)io;
    fwdio_file_t *f = j->file;
    struct fwdioi_local *l = f->local;
    struct fwdioi_replica *r = l->replica;
    copy_step_t step = j->step;
    int fd = j->fd, status = j->status;
    uint64_t len = j->len;
    /* A partner copy this rank cannot write (its store full or broken:
     * open, a pwrite, the index or its fdatasync) does not fail the file:
     * the writer's own copy is whole and durable, so the file completes
     * with that one copy of the writer's units until the drain, and the
     * partial partner copy is removed (IN_CLOSE) so the drain never takes
     * it. A writer that cannot read its own file back, or a partial copy
     * that cannot be removed, still fails the file. */
    int one_copy = status != FWDIO_OK && (step == IN_OPEN || step == IN_WRITE || step == IN_SEAL);
    if (one_copy) {
        if (!r->in_failed)
            fwdioi_log(FWDIOI_LOG_WARN,
                       "rank %d: %s: the partner copy %s of writer %d cannot be written (%s of "
                       "it: %s): the file completes with one copy of that writer's units "
                       "until it is drained",
                       f->rank, f->path, l->kept_paths[r->in_k], l->kept[r->in_k],
                       fwdioi_syscall_name(j->call), strerror(j->sys_errno));
        r->one_copy++;
    } else if (status != FWDIO_OK) {
        int first = r->local.status == FWDIO_OK;
        fwdioi_errinfo_set_call(&r->local, status, f->rank, j->sys_errno, j->err_offset, j->call);
        if (first && step != OUT_READ) { /* the text names the partner copy */
            r->local.other_rank = l->kept[r->in_k];
            r->local.other_value = FWDIOI_LOCAL_PARTNER_COPY;
        }
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: the partner copy of %s failed (%s, %s)",
                   f->rank, f->path, step == OUT_READ ? l->data_path : l->kept_paths[r->in_k],
                   fwdio_strerror(status), strerror(j->sys_errno));
    }
    f->s.io_pending--;
    free(j);
    if (f->s.outcome.aborted) {
        if (step == OUT_READ)
            r->out_fd = fd;
        else
            r->in_fd = fd;
        r->then(f, &r->local); /* the session finishes the aborted file */
        return;
    }
    switch (step) {
    case OUT_READ:
        r->out_fd = fd;
        if (status != FWDIO_OK)
            out_send(f, NULL, 0); /* the partner stops waiting */
        else
            out_send(f, r->out_buf, len);
        return;
    case IN_OPEN:
        r->in_fd = fd;
        r->in_failed = status != FWDIO_OK;
        in_post(f);
        return;
    case IN_WRITE:
        r->in_failed |= status != FWDIO_OK;
        r->in_pos += r->in_len;
        in_post(f);
        return;
    case IN_SEAL:
        if (status != FWDIO_OK) { /* closed; the copy without a durable index goes */
            submit(f, IN_CLOSE, l->kept_paths[r->in_k], -1, NULL, 0, NULL, 0, 0);
            return;
        }
        /* fall through */
    case IN_CLOSE:
        if (step == IN_CLOSE) { /* the copy is not kept: its room goes back */
            fwdioi_local_partner_room_give(f, r->in_room);
            r->in_room = 0;
        }
        r->in_fd = -1;
        r->in_k++;
        next_kept(f);
        return;
    }
}

/* Take the next copy this rank keeps, or be done with them. */
static void next_kept(fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    struct fwdioi_replica *r = l->replica;
    free(r->in_runs);
    r->in_runs = NULL;
    if (r->in_k >= l->nkept) {
        r->in_done = 1;
        maybe_agree(f);
        return;
    }
    int w = l->kept[r->in_k];
    r->in_runs = fwdioi_local_writer_runs(&f->plan, w, &r->in_nruns);
    if (!r->in_runs) {
        fwdioi_outcome_nomem(f, 0);
        return;
    }
    r->in_pos = r->in_total = 0;
    r->in_failed = 0;
    for (size_t i = 0; i < r->in_nruns; i++)
        r->in_total += r->in_runs[i].len;
    /* local_capacity counts the copy as it counts a writer's file; a copy
     * without room is received all the same (the writer's sends end) and
     * not kept, as one the store cannot hold */
    uint64_t bytes = fwdioi_local_file_bytes(f, w);
    r->in_room = 0;
    if (fwdioi_local_partner_room_take(f, bytes) != 0) {
        r->in_failed = 1;
        r->one_copy++;
        in_post(f);
        return;
    }
    r->in_room = l->capacity > 0 ? bytes : 0;
    submit(f, IN_OPEN, l->kept_paths[r->in_k], -1, NULL, 0, NULL, 0, 0);
}

static void on_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    struct fwdioi_replica *r = f->local->replica;
    r->agreeing = 0;
    if (!fwdioi_session_agreement_ok(f, FWDIOI_MPI_AGREE_COPIES, st))
        return; /* the file is aborted */
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s: partner copies: %s", f->rank, f->path,
               fwdio_strerror((int)r->agreed.status));
    r->then(f, &r->agreed);
}

static void maybe_agree(fwdio_file_t *f)
{
    struct fwdioi_replica *r = f->local->replica;
    if (!r->out_done || !r->in_done || r->agreeing)
        return;
    r->agreeing = 1;
    fwdioi_session_agree_status(f, FWDIOI_MPI_AGREE_COPIES, &r->local, &r->agreed, on_agreed);
}

/* The largest message this rank receives as a partner: a data piece or an
 * index. */
static size_t in_capacity(const fwdio_file_t *f)
{
    struct fwdioi_local *l = f->local;
    size_t cap = 0;
    for (int i = 0; i < l->nkept; i++) {
        size_t len = 0;
        uint8_t *ix = fwdioi_local_index_of(f, l->kept[i], 0, &len);
        if (!ix)
            return 0;
        free(ix);
        if (len > cap)
            cap = len;
    }
    uint64_t data = f->size < FWDIOI_DRAIN_CHUNK ? f->size : FWDIOI_DRAIN_CHUNK;
    return data > cap ? (size_t)data : cap;
}

int fwdioi_local_replicate(fwdio_file_t *f,
                           void (*then)(fwdio_file_t *f, const fwdioi_errinfo_t *copies))
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (!l || l->copies < 2)
        return -1;
    struct fwdioi_replica *r = calloc(1, sizeof *r);
    if (!r) {
        fwdioi_outcome_nomem(f, 0);
        return 0;
    }
    l->replica = r;
    r->then = then;
    r->local = r->agreed = FWDIOI_ERRINFO_OK;
    r->out_fd = r->in_fd = -1;
    /* a writer that wrote straight to the target sends its partner an
     * empty message: nothing to keep */
    int sends = f->my_writer >= 0 && l->partner >= 0;
    r->out_done = !sends;
    r->in_cap = l->nkept > 0 ? in_capacity(f) : 0;
    if (l->nkept > 0 && r->in_cap > 0)
        r->in_buf = malloc(r->in_cap);
    if (sends && !l->direct) {
        r->out_runs = fwdioi_local_writer_runs(&f->plan, f->my_writer, &r->out_nruns);
        r->out_index = fwdioi_local_index_of(f, f->my_writer, fwdioi_local_version_id(f),
                                             &r->out_index_len);
        for (size_t i = 0; r->out_runs && i < r->out_nruns; i++)
            r->out_total += r->out_runs[i].len;
        r->out_buf = malloc(r->out_total < FWDIOI_DRAIN_CHUNK ? (r->out_total ? r->out_total : 1)
                                                              : FWDIOI_DRAIN_CHUNK);
    }
    if ((l->nkept > 0 && !r->in_buf) ||
        (sends && !l->direct && (!r->out_runs || !r->out_index || !r->out_buf))) {
        fwdioi_outcome_nomem(f, 0);
        return 0;
    }
    if (sends && l->direct) {
        r->out_pos = r->out_total + 1;
        out_send(f, NULL, 0);
    } else if (sends) {
        out_next(f);
    }
    next_kept(f);
    return 0;
}
