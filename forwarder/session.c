/*
 * The per-file session state machine, run on the progress thread:
 *
 *   DUP -> CHECKING [-> WAIT_PATH] -> OPENING -> OPEN -> CLOSING -> SYNCING
 *       [-> COMMITTING] -> DONE
 *
 * DUP: the file gets its own communicator (MPI_Comm_idup), so its collectives
 * never mix with another file's, whatever order ranks close files in.
 * CHECKING: every rank's path, size and plan-shaping options are compared
 * (open_check.h); ranks that disagree fail the file everywhere with
 * FWDIO_EINVAL before anything touches storage, and it completes once closed
 * here, with no further collective (their plans may differ).
 * WAIT_PATH: an earlier file of this runtime still writes the same path; the
 * open (and its truncation, or the reuse of the temporary) waits until it is
 * complete, so versions of a path are written one after the other.
 * OPENING: writers open the file on the I/O thread; the statuses are agreed
 * (Iallreduce); ready fires. Writes issued before are held here, then sent.
 * OPEN: data messages flow; writers receive and assemble them.
 * CLOSING: once this rank closed, the bytes sent to each writer are summed
 * (Iallreduce), so each writer knows how many bytes to wait for.
 * SYNCING: writers drain, flush partial units, fdatasync if asked, close, and
 * the final status is agreed; complete fires.
 * COMMITTING (a commit block was set, or atomic_replace): once every byte is
 * durable, one rank writes the commit block and renames the temporary over
 * the target (or, if the file failed, removes the temporary); its status is
 * agreed and complete fires.
 * A failed writer keeps receiving and discarding, so no sender and no
 * collective ever waits for it forever.
 *
 * Every MPI call is checked. One that fails aborts the file on this rank
 * (fwdioi_session_abort): it tells the other ranks (abort.c), gives up the
 * file's collectives and completes with FWDIO_EMPI naming the call, once its
 * own sends, receives and storage jobs are done.
 */
#include "file.h"
#include "log.h"
#include "storage.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>


/* Messages a writer starts receiving per file and per poll: keeps one busy file
 * from starving the others. */
enum { RECVS_PER_POLL = 16 };

static void start_final_agreement(fwdio_file_t *f);
static void writer_check_drained(fwdio_file_t *f);
static void finish_session(fwdio_file_t *f, const fwdioi_errinfo_t *result);

/* An MPI call of this rank failed: the file is aborted (see the top). */
static void mpi_failed(fwdio_file_t *f, int call, int mpi_rc)
{
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set_mpi(&why, f->rank, call, mpi_rc);
    fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s failed for %s (MPI error %d)", f->rank,
               fwdioi_mpi_call_name(call), f->path, mpi_rc);
    fwdioi_session_abort(f, &why, 1);
}

/*
 * Start one of the file's agreements: `count` int64s of `in` reduced with
 * `op` into `out` on the file's communicator; `done` runs on completion.
 * Returns 0, or -1 when it could not start (the file is aborted then).
 */
static int start_agreement(fwdio_file_t *f, int call, const void *in, void *out, int count,
                           MPI_Datatype type, MPI_Op op, fwdioi_req_cb_t done)
{
    f->s.trace_t0 = fwdioi_trace_begin();
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->rt) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Iallreduce(in, out, count, type, op, f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        mpi_failed(f, call, rc);
        return -1;
    }
    fwdioi_rt_track(f->rt, req, done, f);
    return 0;
}

/* An agreement completed: whether it succeeded (else the file is aborted). */
static int agreement_ok(fwdio_file_t *f, int call, const MPI_Status *st)
{
    if (st->MPI_ERROR == MPI_SUCCESS)
        return 1;
    mpi_failed(f, call, st->MPI_ERROR);
    return 0;
}

/* Make a failure visible to the application (writes refused, error text). */
static void publish_error_locked(fwdio_file_t *f, const fwdioi_errinfo_t *e)
{
    if (e->status != FWDIO_OK && !f->failed_known) {
        f->failed_known = 1;
        f->known_error = *e;
        fwdioi_errinfo_format(e, f->path, f->write_path, f->error_text, sizeof f->error_text);
    }
}

static void publish_error(fwdio_file_t *f, const fwdioi_errinfo_t *e)
{
    fwdioi_rt_lock(f->rt);
    publish_error_locked(f, e);
    fwdioi_rt_unlock(f->rt);
}

/* Hand the progress thread's counters to fwdio_file_stats (at completion, `t`;
 * runtime lock held). */
static void publish_stats_locked(fwdio_file_t *f, double t)
{
    const fwdioi_session_stats_t *ss = &f->s.stats;
    fwdio_file_stats_t *st = &f->stats;
    st->messages_sent = ss->messages_sent;
    st->writer_bytes = f->s.received;
    st->messages_received = ss->messages_received;
    st->pwrite_calls = ss->pwrite_calls;
    st->partial_flushes = ss->partial_flushes;
    st->pwrite_time = ss->pwrite_seconds;
    st->sync_time = ss->sync_seconds;
    st->peak_writer_bytes = f->s.wbuf_file_peak;
    st->time_to_complete = t - f->t_open;
}

/* ---- callbacks ---- */

static void run_ready(fwdioi_call_t *call)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)call - offsetof(fwdio_file_t, ready_call));
    uint64_t t_trace = fwdioi_trace_begin();
    if (f->cbs.ready)
        f->cbs.ready(f, (int)f->s.open_agreed.status, f->cbs.user);
    fwdioi_trace_end_file(t_trace, "ready callback", (int64_t)f->seq);
}

static void run_complete(fwdioi_call_t *call)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)call - offsetof(fwdio_file_t, complete_call));
    uint64_t t_trace = fwdioi_trace_begin();
    if (f->cbs.complete)
        f->cbs.complete(f, (int)f->known_error.status, f->cbs.user);
    fwdioi_trace_end_file(t_trace, "complete callback", (int64_t)f->seq);
    fwdioi_rt_lock(f->rt);
    f->complete_delivered = 1;
    /* Freed by the application already: the last reference is ours. Unlinked in
     * the same critical section, so fwdio_finalize never sees it half gone. */
    int release = f->app_freed;
    if (release)
        fwdioi_file_unlink_locked(f);
    fwdioi_rt_broadcast(f->rt);
    fwdioi_rt_unlock(f->rt);
    if (release)
        fwdioi_file_release(f);
}

/* ---- one file per path at a time ---- */

static void start_open(fwdio_file_t *f);

/* An earlier file of the runtime, not complete here, writes f's path. */
static int path_in_use(const fwdio_file_t *f)
{
    for (const fwdio_file_t *g = f->owner->active; g; g = g->s.next_active)
        if (g != f && g->seq < f->seq && !strcmp(g->path_key, f->path_key))
            return 1;
    return 0;
}

/* `done` left the active list: open the files that waited for its path. */
static void start_waiting_opens(struct fwdio_runtime *o, const fwdio_file_t *done)
{
    for (fwdio_file_t *f = o->active; f; f = f->s.next_active)
        if (f->s.phase == FWDIOI_PHASE_WAIT_PATH && !strcmp(f->path_key, done->path_key) &&
            !path_in_use(f))
            start_open(f);
}

/* ---- the end: final agreement ---- */

/* The session is over: publish the result and fire complete. */
static void finish_session(fwdio_file_t *f, const fwdioi_errinfo_t *result)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_DONE;
    /* unlink from the active list */
    for (fwdio_file_t **pp = &f->owner->active; *pp; pp = &(*pp)->s.next_active) {
        if (*pp == f) {
            *pp = s->next_active;
            break;
        }
    }
    fwdioi_errinfo_t final = *result; /* result may point into the session */
    if (s->comm != MPI_COMM_NULL) {
        if (s->aborted && f->my_writer >= 0)
            fwdioi_zombie_add(f->owner, s->comm); /* late data still arrives */
        else
            MPI_Comm_free(&s->comm);
        s->comm = MPI_COMM_NULL;
    }
    fwdioi_session_free(f);
    double t = fwdioi_now();
    fwdioi_rt_lock(f->rt); /* stats, error and final status become visible together */
    publish_stats_locked(f, t);
    publish_error_locked(f, &final);
    f->known_error = final;
    fwdioi_rt_unlock(f->rt);
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s complete: %s", f->rank, f->path,
               fwdio_strerror((int)final.status));
    start_waiting_opens(f->owner, f);
    fwdioi_rt_deliver(f->rt, &f->complete_call); /* last: it may free f */
}

/* The status before the commit: the open's if it failed, else the final one. */
static const fwdioi_errinfo_t *data_result(const fwdio_file_t *f)
{
    return f->s.open_agreed.status != FWDIO_OK ? &f->s.open_agreed : &f->s.final_agreed;
}

static void on_commit_agreed(void *arg, const MPI_Status *st)
{
    fwdio_file_t *f = arg;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_COMMIT, st))
        return;
    fwdioi_trace_end_file(f->s.trace_t0, "agree commit", (int64_t)f->seq);
    const fwdioi_errinfo_t *data = data_result(f);
    finish_session(f, data->status != FWDIO_OK ? data : &f->s.commit_agreed);
}

static void start_commit_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    start_agreement(f, FWDIOI_MPI_AGREE_COMMIT, &s->commit_local, &s->commit_agreed,
                    FWDIOI_ERRINFO_INTS, MPI_INT64_T, f->owner->agree_op, on_commit_agreed);
}

/* An aborted file completes once nothing of its own is in flight. */
static void finish_if_aborted(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->aborted && s->phase != FWDIOI_PHASE_DONE && s->phase != FWDIOI_PHASE_DUP &&
        s->close_requested && s->sends_pending == 0 && s->recvs_pending == 0 &&
        s->io_pending == 0 && !s->has_waiting)
        finish_session(f, &s->abort_info);
}

static void on_commit_done(fwdioi_storage_job_t *job)
{
    fwdio_file_t *f = job->owner;
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&f->s.commit_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    f->s.io_pending--;
    fwdioi_storage_job_free(job);
    if (f->s.aborted)
        finish_if_aborted(f);
    else
        start_commit_agreement(f);
}

/* Every rank is done with the data and its status is agreed. The committer
 * writes the commit block and renames the temporary into place, or removes
 * the temporary if the file failed; everyone else waits for its status. */
static void start_commit(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_COMMITTING;
    if (f->rank != s->committer) {
        start_commit_agreement(f);
        return;
    }
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_COMMIT, f, on_commit_done);
    if (!job) {
        fwdioi_errinfo_set(&s->commit_local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_commit_agreement(f);
        return;
    }
    job->path = f->write_path;
    job->target = f->opts.atomic_replace ? f->path : NULL;
    job->discard = data_result(f)->status != FWDIO_OK;
    if (s->committers == 1 && f->commit_buf) {
        job->src = f->commit_buf;
        job->len = f->commit_len;
        job->base = f->commit_offset;
    }
    s->io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

static void on_final_agreed(void *arg, const MPI_Status *st)
{
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_FINAL, st))
        return;
    fwdioi_trace_end_file(s->trace_t0, "agree final", (int64_t)f->seq);
    if (s->committer >= 0)
        start_commit(f);
    else
        finish_session(f, data_result(f));
}

/*
 * This rank is done with the file (closing agreed; as a writer, everything
 * written and synced). Its final status goes in once its own sends are done
 * too, so that every lent buffer is handed back before complete fires.
 */
static void start_final_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->aborted) {
        finish_if_aborted(f);
        return;
    }
    s->final_ready = 1;
    if (s->sends_pending > 0 || s->final_started)
        return;
    s->final_started = 1;
    s->phase = FWDIOI_PHASE_SYNCING;
    start_agreement(f, FWDIOI_MPI_AGREE_FINAL, &s->local_error, &s->final_agreed,
                    FWDIOI_ERRINFO_INTS, MPI_INT64_T, f->owner->agree_op, on_final_agreed);
}

/* ---- writer: storage jobs ---- */

static void record_job_error(fwdio_file_t *f, const fwdioi_storage_job_t *job)
{
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&f->s.local_error, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
}

/* ---- writer memory: every byte held counts against writer_buffer ---- */

static uint64_t writer_budget(const fwdio_file_t *f)
{
    return fwdioi_rt_config(f->rt)->writer_buffer;
}

static void wbuf_add(fwdio_file_t *f, uint64_t bytes)
{
    struct fwdio_runtime *o = f->owner;
    o->wbuf_held += bytes;
    if (o->wbuf_held > atomic_load_explicit(&o->wbuf_peak, memory_order_relaxed))
        atomic_store_explicit(&o->wbuf_peak, o->wbuf_held, memory_order_relaxed);
    f->s.wbuf_file += bytes;
    if (f->s.wbuf_file > f->s.wbuf_file_peak)
        f->s.wbuf_file_peak = f->s.wbuf_file;
}

static void wbuf_sub(fwdio_file_t *f, uint64_t bytes)
{
    f->owner->wbuf_held -= bytes;
    f->s.wbuf_file -= bytes;
}

static int reserve_unit(void *arg, uint64_t bytes)
{
    fwdio_file_t *f = arg;
    if (f->owner->wbuf_held + bytes > writer_budget(f))
        return 0;
    wbuf_add(f, bytes);
    return 1;
}

static void unreserve_unit(void *arg, uint64_t bytes)
{
    wbuf_sub(arg, bytes);
}

/* Drop one reference to a message; the last one frees it (and its bytes). */
static void hold_release(fwdio_file_t *f, fwdioi_hold_t *h)
{
    if (--h->refs > 0)
        return;
    if (!h->counted) { /* one of this rank's own messages */
        fwdioi_msg_free(f->rt, h->block);
        return;
    }
    wbuf_sub(f, h->size);
    if (h->releasing)
        f->owner->wbuf_releasing -= h->size;
    fwdioi_rt_buf_put(f->rt, h->block, h->size);
}

static void on_write_done(fwdioi_storage_job_t *job)
{
    fwdio_file_t *f = job->owner;
    record_job_error(f, job);
    f->s.io_pending--;
    f->s.stats.pwrite_seconds += job->seconds;
    f->s.stats.pwrite_calls += job->nextents ? job->nextents : 1;
    if (job->hold)
        hold_release(f, job->hold);
    if (job->buf) {
        wbuf_sub(f, job->buf_size);
        f->owner->wbuf_releasing -= job->buf_size;
    }
    fwdioi_storage_job_free(job);
    finish_if_aborted(f);
}

static void on_finish_done(fwdioi_storage_job_t *job)
{
    fwdio_file_t *f = job->owner;
    record_job_error(f, job);
    f->s.io_pending--;
    f->s.fd = -1;
    f->s.stats.sync_seconds += job->seconds;
    fwdioi_storage_job_free(job);
    /* The I/O thread runs jobs in order: every write of the file is done. */
    start_final_agreement(f);
}

/* Assembly hands over a unit buffer: write its extents, unless the file
 * already failed. Its bytes stay counted until the write is done. */
static void flush_unit(void *arg, uint8_t *buf, uint64_t size, uint64_t offset,
                       fwdioi_range_t *extents, size_t nextents)
{
    fwdio_file_t *f = arg;
    fwdioi_storage_job_t *job =
        f->s.local_error.status == FWDIO_OK && nextents > 0
            ? fwdioi_storage_job_new(FWDIOI_STORAGE_WRITE, f, on_write_done)
            : NULL;
    if (!job) {
        if (f->s.local_error.status == FWDIO_OK && nextents > 0)
            fwdioi_errinfo_set(&f->s.local_error, FWDIO_ENOMEM, f->rank, 0, offset);
        wbuf_sub(f, size);
        free(buf);
        free(extents);
        return;
    }
    job->fd = f->s.fd;
    job->buf = buf;
    job->buf_size = size;
    job->base = offset;
    job->extents = extents;
    job->nextents = nextents;
    f->owner->wbuf_releasing += size;
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

/* Write bytes straight from the message being accepted, which stays alive
 * until the write is done: whole units (no copy needed) and pieces for which
 * the budget has no buffer. */
static void write_direct(void *arg, const uint8_t *data, uint64_t offset, uint64_t len)
{
    fwdio_file_t *f = arg;
    if (f->s.local_error.status != FWDIO_OK)
        return;
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_WRITE, f, on_write_done);
    if (!job) {
        fwdioi_errinfo_set(&f->s.local_error, FWDIO_ENOMEM, f->rank, 0, offset);
        return;
    }
    job->fd = f->s.fd;
    job->src = data;
    job->base = offset;
    job->len = len;
    job->hold = f->s.accepting;
    f->s.accepting->refs++;
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

/* Everything announced has arrived: flush what is left, sync, close. */
static void writer_check_drained(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->aborted || !s->close_agreed || s->finishing || s->recvs_pending > 0)
        return;
    uint64_t expected = s->expected_bytes[f->my_writer];
    if (s->received < expected)
        return;
    if (s->received > expected)
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: received %llu bytes, %llu announced", f->rank,
                   f->path, (unsigned long long)s->received, (unsigned long long)expected);
    s->finishing = 1;
    if (s->local_error.status == FWDIO_OK)
        fwdioi_assembly_flush_partial(&s->assembly);
    if (s->fd < 0) { /* open failed: nothing to sync or close */
        start_final_agreement(f);
        return;
    }
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_FINISH, f, on_finish_done);
    if (!job) {
        fwdioi_errinfo_set(&s->local_error, FWDIO_ENOMEM, f->rank, 0, 0);
        start_final_agreement(f); /* the fd leaks rather than the job hangs */
        return;
    }
    job->fd = s->fd;
    job->durable = f->opts.durable || s->committers > 0; /* a commit follows durable data */
    s->io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

/* ---- writer: receiving data ---- */

/*
 * A writer never trusts a message: every piece must lie within the file and
 * within stripes the plan gives this writer, and the pieces must account for
 * exactly the message's data, before any of it touches memory. Returns the
 * message's data bytes in *payload either way (what its sender counted), and
 * 0, or -1 with the first bad piece in *bad.
 */
static int check_message(const fwdio_file_t *f, const uint8_t *wire, size_t wire_len,
                         const fwdioi_msg_t *lent, uint64_t *payload, fwdioi_piece_t *bad)
{
    fwdioi_wire_header_t h;
    *bad = (fwdioi_piece_t){0, 0};
    *payload = wire_len > sizeof h ? wire_len - sizeof h : 0;
    if (wire_len < sizeof h)
        return -1;
    memcpy(&h, wire, sizeof h);
    if (h.npieces > (wire_len - sizeof h) / sizeof(fwdioi_piece_t))
        return -1;
    size_t table = (size_t)h.npieces * sizeof(fwdioi_piece_t);
    /* lent: the data stays in the sender's buffer, the wire has no data */
    *payload = lent ? lent->payload : wire_len - sizeof h - table;
    const uint8_t *pieces = wire + wire_len - table;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h.npieces; i++) {
        fwdioi_piece_t p;
        memcpy(&p, pieces + (size_t)i * sizeof p, sizeof p);
        if (p.len > *payload - sum || !fwdioi_plan_owns(&f->plan, f->my_writer, p.offset, p.len)) {
            *bad = p;
            return -1;
        }
        sum += p.len;
    }
    return sum == *payload ? 0 : -1;
}

/* Take the pieces of one message (from MPI or from this rank itself), then drop
 * the caller's reference to it. `source` is the sending rank. */
static void writer_accept(fwdio_file_t *f, const uint8_t *wire, size_t wire_len,
                          const fwdioi_msg_t *lent, fwdioi_hold_t *hold, int source)
{
    fwdioi_session_t *s = &f->s;
    uint64_t t_trace = fwdioi_trace_begin();
    uint64_t payload;
    fwdioi_piece_t bad;
    int ok = check_message(f, wire, wire_len, lent, &payload, &bad) == 0;
    s->received += payload;
    if (!ok) {
        fwdioi_errinfo_t e = {FWDIO_EPROTO, f->rank, 0, (int64_t)bad.offset,
                              FWDIOI_REASON_BAD_PIECE, source, (int64_t)bad.len};
        if (s->local_error.status == FWDIO_OK)
            s->local_error = e;
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: a message from rank %d does not match the plan",
                   f->rank, f->path, source);
    }
    s->accepting = hold;
    fwdioi_wire_header_t h;
    memcpy(&h, wire, sizeof h);
    size_t table = (size_t)h.npieces * sizeof(fwdioi_piece_t);
    const uint8_t *data = wire + sizeof h;
    const uint8_t *pieces = wire + wire_len - table; /* the table ends the message */
    for (uint32_t i = 0; ok && i < h.npieces && s->local_error.status == FWDIO_OK; i++) {
        fwdioi_piece_t p;
        memcpy(&p, pieces + i * sizeof p, sizeof p);
        uint64_t bad_offset = p.offset;
        const uint8_t *bytes = lent ? fwdioi_msg_piece_data(lent, &p, data) : data;
        int rc = fwdioi_assembly_add(&s->assembly, p.offset, bytes, p.len, &bad_offset);
        if (rc != FWDIO_OK)
            fwdioi_errinfo_set(&s->local_error, rc, f->rank, 0, bad_offset);
        data += p.len;
    }
    s->accepting = NULL;
    fwdioi_trace_end(t_trace, "assemble", (int64_t)f->seq, (int64_t)payload, FWDIOI_TRACE_NONE,
                     FWDIOI_TRACE_NONE);
    s->stats.messages_received++;
    if (hold->counted && hold->refs > 1) { /* now only writes keep it alive */
        hold->releasing = 1;
        f->owner->wbuf_releasing += hold->size;
    }
    hold_release(f, hold);
}

typedef struct recv_op {
    fwdioi_hold_t hold;
    fwdio_file_t *file;
    uint64_t trace_t0;
    int len;
    int source; /* the sending rank, from the probe */
    uint8_t buf[];
} recv_op_t;

static void on_recv_done(void *arg, const MPI_Status *st)
{
    recv_op_t *r = arg;
    fwdio_file_t *f = r->file;
    fwdioi_trace_end(r->trace_t0, "recv", (int64_t)f->seq, r->len, FWDIOI_TRACE_NONE,
                     r->source);
    f->s.recvs_pending--;
    if (st->MPI_ERROR != MPI_SUCCESS || f->s.aborted) {
        hold_release(f, &r->hold);
        if (st->MPI_ERROR != MPI_SUCCESS)
            mpi_failed(f, FWDIOI_MPI_IMRECV, st->MPI_ERROR);
        finish_if_aborted(f);
        return;
    }
    uint64_t before = f->s.received;
    int source = r->source; /* r is released by writer_accept */
    writer_accept(f, r->buf, (size_t)r->len, NULL, &r->hold, source);
    if (f->s.received_from && source >= 0 && source < f->plan.nranks)
        f->s.received_from[source] += f->s.received - before;
    writer_check_drained(f);
}

/*
 * The writer is at its budget and a message waits: unless the writes under way
 * will free enough, hand the fullest partly filled units (of any file) to
 * storage as extents, so their memory comes back whatever order the rest of
 * their bytes arrives in.
 */
static void make_room(struct fwdio_runtime *o, uint64_t need, uint64_t budget)
{
    while (o->wbuf_held - o->wbuf_releasing + need > budget) {
        fwdio_file_t *best = NULL;
        uint64_t best_bytes = 0;
        for (fwdio_file_t *f = o->active; f; f = f->s.next_active) {
            if (f->my_writer < 0 || f->s.phase < FWDIOI_PHASE_OPEN)
                continue;
            uint64_t b = fwdioi_assembly_fullest_pending(&f->s.assembly);
            if (b > best_bytes) {
                best = f;
                best_bytes = b;
            }
        }
        if (!best)
            return; /* only in-flight writes hold memory: wait for them */
        uint64_t pending;
        if (fwdioi_assembly_flush_fullest(&best->s.assembly, &pending) == 0)
            return;
        best->s.stats.partial_flushes++;
    }
}

/* A message received only to be dropped: free its buffer, if it had one. */
static void on_dropped(void *arg, const MPI_Status *st)
{
    (void)st;
    free(arg);
}

/* Receive the matched message `msg` of `len` bytes from `source`. */
static void start_receive(fwdio_file_t *f, MPI_Message *msg, int len, int source)
{
    fwdioi_session_t *s = &f->s;
    recv_op_t *r = fwdioi_rt_buf_get(f->rt, sizeof *r + (size_t)len);
    MPI_Request req;
    if (!r) {
        /* Cannot buffer it: without its bytes the counts cannot add up, so the
         * file is aborted; the message is received into nothing (truncated),
         * so its sender is not blocked for ever. */
        fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
        fwdioi_errinfo_set(&why, FWDIO_ENOMEM, f->rank, 0, 0);
        fwdioi_session_abort(f, &why, 1);
        if (MPI_Imrecv(NULL, 0, MPI_BYTE, msg, &req) == MPI_SUCCESS)
            fwdioi_rt_track(f->rt, req, on_dropped, NULL);
        return;
    }
    r->hold = (fwdioi_hold_t){1, r, sizeof *r + (size_t)len, 1, 0};
    r->file = f;
    r->len = len;
    r->source = source;
    r->trace_t0 = fwdioi_trace_begin();
    wbuf_add(f, r->hold.size);
    int rc = MPI_Imrecv(r->buf, len, MPI_BYTE, msg, &req);
    if (rc != MPI_SUCCESS) {
        hold_release(f, &r->hold);
        mpi_failed(f, FWDIOI_MPI_IMRECV, rc);
        /* The message is matched: unless it is received somehow, its sender
         * waits for ever. Into a scratch buffer, or nothing (truncated). */
        void *scratch = malloc(len > 0 ? (size_t)len : 1);
        if (MPI_Imrecv(scratch, scratch ? len : 0, MPI_BYTE, msg, &req) == MPI_SUCCESS)
            fwdioi_rt_track(f->rt, req, on_dropped, scratch);
        else
            free(scratch);
        return;
    }
    s->recvs_pending++;
    fwdioi_rt_track(f->rt, req, on_recv_done, r);
}

/* Receive the messages that have arrived for this file while the writer has
 * room; a message that does not fit waits, matched, until it does. Returns
 * the number of receives started. */
static int writer_probe(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    struct fwdio_runtime *o = f->owner;
    const uint64_t budget = writer_budget(f);
    int started = 0;
    /* an aborted file only drops what arrives */
    while (started < RECVS_PER_POLL && f->s.comm != MPI_COMM_NULL) {
        if (fwdioi_rt_track_reserve(f->rt) != 0)
            break; /* no memory to track a receive: try on the next tick */
        if (!s->has_waiting) {
            int flag = 0, rc;
            MPI_Status st;
            rc = MPI_Improbe(MPI_ANY_SOURCE, FWDIOI_TAG_DATA, s->comm, &flag, &s->waiting_msg,
                             &st);
            if (rc != MPI_SUCCESS) {
                mpi_failed(f, FWDIOI_MPI_IMPROBE, rc);
                break;
            }
            if (!flag)
                break;
            rc = MPI_Get_count(&st, MPI_BYTE, &s->waiting_len);
            if (rc != MPI_SUCCESS || s->waiting_len == MPI_UNDEFINED) {
                mpi_failed(f, FWDIOI_MPI_GET_COUNT, rc != MPI_SUCCESS ? rc : MPI_ERR_COUNT);
                s->waiting_len = 0; /* still received (into nothing) below */
            }
            s->waiting_source = st.MPI_SOURCE;
            s->has_waiting = 1;
        }
        uint64_t need = sizeof(recv_op_t) + (uint64_t)s->waiting_len;
        /* An empty writer takes any message: budget + one message at most. */
        if (o->wbuf_held > 0 && o->wbuf_held + need > budget) {
            make_room(o, need, budget);
            break;
        }
        s->has_waiting = 0;
        start_receive(f, &s->waiting_msg, s->waiting_len, s->waiting_source);
        started++;
    }
    return started;
}

/* ---- sending data ---- */

static void on_send_done(void *arg, const MPI_Status *st)
{
    fwdioi_msg_t *m = arg;
    fwdio_file_t *f = m->file;
    fwdioi_trace_end(m->trace_t0, "send", (int64_t)f->seq, (int64_t)m->payload,
                     FWDIOI_TRACE_NONE, fwdioi_plan_writer_rank(&f->plan, m->writer));
    if (st->MPI_ERROR != MPI_SUCCESS && m->lent && m->lent->status == FWDIO_OK)
        m->lent->status = FWDIO_EMPI;
    fwdioi_msg_free(f->rt, m);
    f->s.sends_pending--;
    /* Whether the writer got the bytes is unknown: the counts cannot be
     * trusted, so the file is aborted. */
    if (st->MPI_ERROR != MPI_SUCCESS)
        mpi_failed(f, FWDIOI_MPI_ISEND, st->MPI_ERROR);
    if (f->s.aborted)
        finish_if_aborted(f);
    else if (f->s.sends_pending == 0 && f->s.final_ready)
        start_final_agreement(f);
}

/* Drop a message that will never be sent (the file failed). */
static void drop_msg(fwdio_file_t *f, fwdioi_msg_t *m, int status)
{
    if (m->lent && m->lent->status == FWDIO_OK)
        m->lent->status = status;
    fwdioi_msg_free(f->rt, m);
}

/* A lent message goes out as one MPI message all the same: a datatype of
 * absolute addresses gathers its header, the pieces from the caller's buffer
 * and its piece table (m->wire holds the header and the table), so the
 * receiver sees the usual wire format and nothing is copied here. */
static int isend_lent(fwdio_file_t *f, fwdioi_msg_t *m, int dest, MPI_Request *req, int *call)
{
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    int n = (int)h.npieces + 2;
    int *lens = malloc((size_t)n * sizeof *lens);
    MPI_Aint *addrs = malloc((size_t)n * sizeof *addrs);
    int rc = MPI_ERR_NO_MEM;
    if (lens && addrs) {
        lens[0] = (int)sizeof h;
        MPI_Get_address(m->wire, &addrs[0]);
        for (int i = 1; i < n - 1; i++) {
            fwdioi_piece_t p;
            memcpy(&p, m->wire + sizeof h + (size_t)(i - 1) * sizeof p, sizeof p);
            lens[i] = (int)p.len;
            MPI_Get_address(fwdioi_msg_piece_data(m, &p, NULL), &addrs[i]);
        }
        lens[n - 1] = (int)(m->wire_len - sizeof h);
        MPI_Get_address(m->wire + sizeof h, &addrs[n - 1]);
        MPI_Datatype type;
        *call = FWDIOI_MPI_TYPE;
        rc = MPI_Type_create_hindexed(n, lens, addrs, MPI_BYTE, &type);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Type_commit(&type);
            if (rc == MPI_SUCCESS) {
                *call = FWDIOI_MPI_ISEND;
                rc = MPI_Isend(MPI_BOTTOM, 1, type, dest, FWDIOI_TAG_DATA, f->s.comm, req);
            }
            MPI_Type_free(&type); /* the send keeps what it needs */
        }
    }
    free(lens);
    free(addrs);
    return rc;
}

static void dispatch(fwdio_file_t *f, fwdioi_msg_t *m)
{
    f->s.sent_bytes[m->writer] += m->payload;
    f->s.stats.messages_sent++;
    if (m->writer == f->my_writer) { /* to ourselves: no MPI */
        m->hold = (fwdioi_hold_t){1, m, m->alloc_len, 0, 0};
        if (f->s.received_from)
            f->s.received_from[f->rank] += m->payload;
        writer_accept(f, m->wire, m->wire_len, m->lent ? m : NULL, &m->hold, f->rank);
        writer_check_drained(f);
        return;
    }
    MPI_Request req;
    int dest = fwdioi_plan_writer_rank(&f->plan, m->writer);
    int call = FWDIOI_MPI_ISEND;
    m->trace_t0 = fwdioi_trace_begin();
    int rc = fwdioi_rt_track_reserve(f->rt) != 0 ? MPI_ERR_NO_MEM
             : m->lent ? isend_lent(f, m, dest, &req, &call)
                       : MPI_Isend(m->wire, (int)m->wire_len, MPI_BYTE, dest, FWDIOI_TAG_DATA,
                                   f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        /* Not sent and not counted: the writer does not wait for it, and the
         * final agreement tells every rank the file failed. */
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s failed for %s (MPI error %d)", f->rank,
                   fwdioi_mpi_call_name(call), f->path, rc);
        fwdioi_errinfo_set_mpi(&f->s.local_error, f->rank, call, rc);
        f->s.sent_bytes[m->writer] -= m->payload;
        drop_msg(f, m, FWDIO_EMPI);
        return;
    }
    f->s.sends_pending++;
    fwdioi_rt_track(f->rt, req, on_send_done, m);
}

/* Task: a message from fwdio_write. */
void fwdioi_msg_task(fwdioi_task_t *task)
{
    fwdioi_msg_t *m = (fwdioi_msg_t *)task;
    fwdio_file_t *f = m->file;
    fwdioi_session_t *s = &f->s;
    if (s->aborted) {
        drop_msg(f, m, (int)s->abort_info.status);
        return;
    }
    if (s->phase < FWDIOI_PHASE_OPEN) {
        m->next_held = NULL;
        if (s->held_tail)
            s->held_tail->next_held = m;
        else
            s->held_head = m;
        s->held_tail = m;
        return;
    }
    if (s->open_agreed.status != FWDIO_OK) { /* the file failed to open: drop */
        drop_msg(f, m, (int)s->open_agreed.status);
        return;
    }
    dispatch(f, m);
}

/* ---- closing: agree on the bytes per writer ---- */

static void on_close_agreed(void *arg, const MPI_Status *st)
{
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_CLOSE, st))
        return;
    fwdioi_trace_end_file(s->trace_t0, "agree close", (int64_t)f->seq);
    const int nw = f->plan.nwriters;
    s->committers = (int)s->expected_bytes[nw];
    if (s->committers == 1)
        s->committer = (int)s->expected_bytes[nw + 1];
    else if (s->committers > 1 || f->opts.atomic_replace)
        s->committer = fwdioi_plan_writer_rank(&f->plan, 0); /* cleans up, writes no block */
    if (s->committers > 1 && f->commit_buf) {
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: fwdio_set_commit was called on %d ranks",
                   f->rank, f->path, s->committers);
        fwdioi_errinfo_t e = {FWDIO_EINVAL, f->rank, 0, (int64_t)f->commit_offset,
                              FWDIOI_REASON_COMMITTERS, -1, s->committers};
        if (s->local_error.status == FWDIO_OK)
            s->local_error = e;
    }
    s->phase = FWDIOI_PHASE_SYNCING;
    s->t_closed = fwdioi_now();
    s->next_report = s->t_closed + (double)fwdioi_rt_config(f->rt)->watchdog;
    fwdioi_rt_lock(f->rt);
    memcpy(f->writer_bytes_agreed, f->s.expected_bytes,
           (size_t)f->plan.nwriters * sizeof *f->writer_bytes_agreed);
    fwdioi_rt_unlock(f->rt);
    if (f->my_writer < 0) {
        start_final_agreement(f);
        return;
    }
    f->s.close_agreed = 1;
    writer_check_drained(f);
}

static void start_close_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->check_failed) {
        /* The ranks' plans may differ, so no further collective can be
         * trusted to match; every rank knows the status already. */
        finish_session(f, &s->open_agreed);
        return;
    }
    s->phase = FWDIOI_PHASE_CLOSING;
    const int nw = f->plan.nwriters;
    int has_commit = f->commit_buf != NULL; /* set before fwdio_close, which queued us */
    s->sent_bytes[nw] = (uint64_t)has_commit;
    s->sent_bytes[nw + 1] = has_commit ? (uint64_t)f->rank : 0;
    start_agreement(f, FWDIOI_MPI_AGREE_CLOSE, s->sent_bytes, s->expected_bytes,
                    nw + FWDIOI_CLOSE_EXTRA, MPI_UINT64_T, MPI_SUM, on_close_agreed);
}

static void close_task(fwdioi_task_t *task)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, close_task));
    f->s.close_requested = 1;
    f->s.t_close_called = fwdioi_now();
    f->s.next_report = f->s.t_close_called + (double)fwdioi_rt_config(f->rt)->watchdog;
    if (f->s.aborted)
        finish_if_aborted(f);
    else if (f->s.phase == FWDIOI_PHASE_OPEN)
        start_close_agreement(f);
    /* else: started when the open status is agreed */
}

/* ---- opening ---- */

static void deliver_ready(fwdio_file_t *f)
{
    if (f->s.ready_delivered)
        return;
    f->s.ready_delivered = 1;
    double t = fwdioi_now();
    fwdioi_rt_lock(f->rt);
    f->stats.time_to_ready = t - f->t_open;
    fwdioi_rt_unlock(f->rt);
    fwdioi_rt_deliver(f->rt, &f->ready_call);
}

/* Drop the writes held for the open, with `status` for lent buffers. */
static void drop_held(fwdio_file_t *f, int status)
{
    fwdioi_msg_t *held = f->s.held_head;
    f->s.held_head = f->s.held_tail = NULL;
    while (held) {
        fwdioi_msg_t *next = held->next_held;
        drop_msg(f, held, status);
        held = next;
    }
}

/* The open status is known on every rank (open_agreed): data flows, or the
 * file failed. */
static void open_decided(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_OPEN;
    if (s->open_agreed.status != FWDIO_OK) {
        publish_error(f, &s->open_agreed);
        drop_held(f, (int)s->open_agreed.status);
    }
    fwdioi_msg_t *held = s->held_head;
    s->held_head = s->held_tail = NULL;
    while (held) {
        fwdioi_msg_t *next = held->next_held;
        dispatch(f, held);
        held = next;
    }
    deliver_ready(f);
    if (s->close_requested && !s->aborted)
        start_close_agreement(f);
}

static void on_open_agreed(void *arg, const MPI_Status *st)
{
    fwdio_file_t *f = arg;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_OPEN, st))
        return;
    fwdioi_trace_end_file(f->s.trace_t0, "agree open", (int64_t)f->seq);
    open_decided(f);
}

static void start_open_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_OPENING;
    start_agreement(f, FWDIOI_MPI_AGREE_OPEN, &s->open_local, &s->open_agreed,
                    FWDIOI_ERRINFO_INTS, MPI_INT64_T, f->owner->agree_op, on_open_agreed);
}

/* Close the descriptor of an aborted writer (no sync: the file failed). */
static void close_aborted_fd(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (s->fd < 0 || s->finishing)
        return;
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_FINISH, f, on_finish_done);
    if (!job)
        return; /* the descriptor leaks rather than the file hangs */
    s->finishing = 1;
    job->fd = s->fd;
    job->durable = 0;
    s->io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

static void on_open_done(fwdioi_storage_job_t *job)
{
    fwdio_file_t *f = job->owner;
    f->s.fd = job->fd;
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&f->s.open_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    f->s.io_pending--;
    fwdioi_storage_job_free(job);
    if (f->s.aborted) {
        close_aborted_fd(f);
        finish_if_aborted(f);
        return;
    }
    start_open_agreement(f);
}

/* The check passed and no earlier file writes the path: writers open it. */
static void start_open(fwdio_file_t *f)
{
    if (f->my_writer < 0) {
        start_open_agreement(f);
        return;
    }
    f->s.phase = FWDIOI_PHASE_OPENING;
    fwdioi_assembly_hooks_t hooks = {flush_unit, write_direct, reserve_unit, unreserve_unit, f};
    fwdioi_assembly_init(&f->s.assembly, &f->plan, f->my_writer, &hooks);
    /* for the watchdog's report only: without it, the report says less */
    f->s.received_from = calloc((size_t)f->plan.nranks, sizeof *f->s.received_from);
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_OPEN, f, on_open_done);
    if (!job) {
        fwdioi_errinfo_set(&f->s.open_local, FWDIO_ENOMEM, f->rank, 0, 0);
        start_open_agreement(f);
        return;
    }
    job->path = f->write_path;
    job->size = f->size;
    job->sets_length = f->my_writer == 0;
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->rt, &job->io);
}

static void on_check_agreed(void *arg, const MPI_Status *st)
{
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    if (!agreement_ok(f, FWDIOI_MPI_AGREE_CHECK, st))
        return;
    fwdioi_trace_end_file(s->trace_t0, "agree check", (int64_t)f->seq);
    fwdioi_errinfo_t result;
    fwdioi_open_check_result(s->check_out, &result);
    if (result.status != FWDIO_OK) {
        s->check_failed = 1;
        s->open_agreed = result;
        if (f->rank == 0 || result.call == FWDIOI_REASON_PATH_OPEN) {
            char text[512];
            fwdioi_errinfo_format(&result, f->path, f->write_path, text, sizeof text);
            fwdioi_report("%s", text);
        }
        open_decided(f);
        return;
    }
    if (path_in_use(f)) {
        s->phase = FWDIOI_PHASE_WAIT_PATH;
        return;
    }
    start_open(f);
}

static void start_check_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_CHECKING;
    fwdioi_open_check_pack(s->check_in, f->rank, f->check_fields, &f->open_refusal);
    start_agreement(f, FWDIOI_MPI_AGREE_CHECK, s->check_in, s->check_out, FWDIOI_OPEN_CHECK_INTS,
                    MPI_INT64_T, f->owner->check_op, on_check_agreed);
}

static void start_next_dup(struct fwdio_runtime *owner);

static void on_dup_done(void *arg, const MPI_Status *st)
{
    fwdio_file_t *f = arg;
    if (st->MPI_ERROR != MPI_SUCCESS) {
        mpi_failed(f, FWDIOI_MPI_COMM_IDUP, st->MPI_ERROR);
        return;
    }
    fwdioi_trace_end_file(f->s.trace_t0, "comm dup", (int64_t)f->seq);
    f->owner->dup_in_flight = 0;
    f->owner->dup_file = NULL;
    start_next_dup(f->owner);
    if (f->s.aborted) { /* another rank failed after its duplication */
        MPI_Comm_free(&f->s.comm);
        f->s.phase = FWDIOI_PHASE_CHECKING;
        finish_if_aborted(f);
        return;
    }
    int rc = MPI_Comm_set_errhandler(f->s.comm, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        /* The others go on into the check: tell them. */
        mpi_failed(f, FWDIOI_MPI_COMM_IDUP, rc);
        return;
    }
    start_check_agreement(f);
}

/* Start the communicator duplication of the next file in open order, if none
 * is in flight. */
static void start_next_dup(struct fwdio_runtime *owner)
{
    fwdio_file_t *f = owner->dup_head;
    if (owner->dup_in_flight || !f)
        return;
    owner->dup_head = f->s.next_dup;
    if (!owner->dup_head)
        owner->dup_tail = NULL;
    MPI_Request req;
    f->s.trace_t0 = fwdioi_trace_begin();
    int rc = fwdioi_rt_track_reserve(f->rt) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Comm_idup(fwdioi_rt_comm(f->rt), &f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        f->s.comm = MPI_COMM_NULL;
        owner->dup_in_flight = 1; /* mpi_failed takes it (and the queue) down */
        owner->dup_file = f;
        mpi_failed(f, FWDIOI_MPI_COMM_IDUP, rc);
        return;
    }
    owner->dup_in_flight = 1;
    owner->dup_file = f;
    fwdioi_rt_track(f->rt, req, on_dup_done, f);
}

static void open_task(fwdioi_task_t *task)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, open_task));
    struct fwdio_runtime *owner = f->owner;
    f->s.next_active = owner->active;
    owner->active = f;
    owner->opened_seq = f->seq + 1;
    fwdioi_errinfo_t why;
    if (owner->broken.status != FWDIO_OK) {
        why = owner->broken;
        why.call = FWDIOI_REASON_BROKEN;
        fwdioi_session_abort(f, &why, 0);
        return;
    }
    if (fwdioi_abort_take_pending(owner, f->seq, &why)) {
        fwdioi_session_abort(f, &why, 0);
        return;
    }
    f->s.next_dup = NULL;
    if (owner->dup_tail)
        owner->dup_tail->s.next_dup = f;
    else
        owner->dup_head = f;
    owner->dup_tail = f;
    start_next_dup(owner);
}

/* ---- aborts ---- */

/* f's communicator duplication failed or was given up: the runtime's
 * communicator is out of step between ranks, so no later file can use it. */
static void break_runtime(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    struct fwdio_runtime *o = f->owner;
    if (o->broken.status == FWDIO_OK) {
        o->broken = *why;
        fwdioi_rt_lock(f->rt);
        o->broken_known = 1;
        fwdioi_rt_unlock(f->rt);
    }
    if (o->dup_file == f) {
        o->dup_in_flight = 0;
        o->dup_file = NULL;
    }
    /* Every file still queued for its duplication fails too (f itself may be
     * among them, with an abort from another rank). */
    fwdio_file_t *queued = o->dup_head;
    o->dup_head = o->dup_tail = NULL;
    fwdioi_errinfo_t later = o->broken;
    later.call = FWDIOI_REASON_BROKEN;
    while (queued) {
        fwdio_file_t *g = queued;
        queued = g->s.next_dup;
        if (g != f)
            fwdioi_session_abort(g, &later, 0);
    }
}

void fwdioi_session_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    fwdioi_session_t *s = &f->s;
    if (s->phase == FWDIOI_PHASE_DONE || s->aborted)
        return;
    s->aborted = 1;
    s->abort_info = *why;
    if (s->local_error.status == FWDIO_OK)
        s->local_error = *why;
    /* Collectives of the file that can no longer complete are given up: the
     * rank that failed never calls another collective on the file's
     * communicator (nor, after a failed duplication, on the runtime's), so
     * they cannot complete later either and write into memory we free. */
    int dup_failed = why->call == FWDIOI_REASON_MPI + FWDIOI_MPI_COMM_IDUP ||
                     why->call == FWDIOI_REASON_BROKEN;
    if (s->phase == FWDIOI_PHASE_DUP && dup_failed) {
        fwdioi_rt_forget(f->rt, f);
        break_runtime(f, why);
        s->phase = FWDIOI_PHASE_CHECKING; /* no duplication to wait for */
        s->comm = MPI_COMM_NULL; /* a duplicate that was never finished: left to MPI */
    } else if (s->phase != FWDIOI_PHASE_DUP) {
        fwdioi_rt_forget(f->rt, f);
    }
    /* else: another rank failed later on; this rank's duplication still has
     * to match theirs, and completes the file when it is done (on_dup_done) */
    if (notify)
        fwdioi_abort_announce(f->owner, f->seq, why);
    publish_error(f, why);
    drop_held(f, (int)why->status);
    if (s->phase < FWDIOI_PHASE_OPEN)
        s->open_agreed = *why; /* what ready reports */
    deliver_ready(f);
    if (f->my_writer >= 0 && s->phase >= FWDIOI_PHASE_OPENING)
        close_aborted_fd(f);
    finish_if_aborted(f);
}

/* ---- setup, teardown, polling ---- */

void fwdioi_session_init(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_DUP;
    s->comm = MPI_COMM_NULL;
    s->fd = -1;
    s->open_local = s->open_agreed = s->local_error = s->final_agreed = FWDIOI_ERRINFO_OK;
    s->commit_local = s->commit_agreed = s->abort_info = FWDIOI_ERRINFO_OK;
    s->committer = -1;
    f->open_task.run = open_task;
    f->close_task.run = close_task;
    f->ready_call.run = run_ready;
    f->complete_call.run = run_complete;
}

void fwdioi_session_free(fwdio_file_t *f)
{
    fwdioi_assembly_free(&f->s.assembly);
}

/* Client poll hook: aborts from other ranks; writers look for data of every
 * file in the OPEN..SYNCING phases (an aborted one's only to drop it).
 * Returns the number of receives started; *active while any session runs. */
int fwdioi_session_poll(void *runtime, int *active)
{
    struct fwdio_runtime *owner = runtime;
    const fwdio_config_t *cfg = fwdioi_rt_config(owner->rt);
    int events = 0;
    double now = 0;
    *active = 0;
    if (owner->active)
        events += fwdioi_abort_receive(owner);
    if (owner->nzombies)
        events += fwdioi_zombie_drain(owner, active);
    if (cfg->combine_size > 1)
        events += fwdioi_combine_flush_stale(owner, (uint64_t)cfg->poll_max_us * 1000u);
    for (fwdio_file_t *f = owner->active; f; f = f->s.next_active) {
        if (f->s.t_close_called > 0) {
            if (now == 0)
                now = fwdioi_now();
            fwdioi_watchdog_check(f, now);
        }
        int receiving = f->s.aborted ? f->s.phase >= FWDIOI_PHASE_OPENING
                                     : f->s.phase >= FWDIOI_PHASE_OPEN && !f->s.finishing &&
                                           f->s.open_agreed.status == FWDIO_OK;
        if (f->my_writer >= 0 && receiving)
            events += writer_probe(f);
    }
    if (owner->active)
        *active = 1;
    return events;
}
