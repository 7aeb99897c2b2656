/*
 * The per-file session state machine, run on the progress thread:
 *
 *   DUP -> OPENING -> OPEN -> CLOSING -> SYNCING [-> COMMITTING] -> DONE
 *
 * DUP: the file gets its own communicator (MPI_Comm_idup), so its collectives
 * never mix with another file's, whatever order ranks close files in.
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
 */
#include "file.h"
#include "log.h"
#include "storage.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_DATA = 1 };

/* Messages a writer starts receiving per file and per poll: keeps one busy file
 * from starving the others. */
enum { RECVS_PER_POLL = 16 };

static void start_final_agreement(fwdio_file_t *f);
static void writer_check_drained(fwdio_file_t *f);

static MPI_Op agree_op(fwdio_file_t *f) { return f->owner->agree_op; }

static void mpi_failed(fwdio_file_t *f, const char *what)
{
    /* fwdio's own communicators use MPI_ERRORS_RETURN; an MPI failure here is
     * not recoverable for the file, but must not kill the job silently. */
    fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s failed for %s", f->rank, what, f->path);
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
    MPI_Comm_free(&s->comm);
    fwdioi_session_free(f);
    double t = fwdioi_now();
    fwdioi_rt_lock(f->rt); /* stats, error and final status become visible together */
    publish_stats_locked(f, t);
    publish_error_locked(f, &final);
    f->known_error = final;
    fwdioi_rt_unlock(f->rt);
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s complete: %s", f->rank, f->path,
               fwdio_strerror((int)final.status));
    fwdioi_rt_deliver(f->rt, &f->complete_call); /* last: it may free f */
}

/* The status before the commit: the open's if it failed, else the final one. */
static const fwdioi_errinfo_t *data_result(const fwdio_file_t *f)
{
    return f->s.open_agreed.status != FWDIO_OK ? &f->s.open_agreed : &f->s.final_agreed;
}

static void on_commit_agreed(void *arg, const MPI_Status *st)
{
    (void)st;
    fwdio_file_t *f = arg;
    fwdioi_trace_end_file(f->s.trace_t0, "agree commit", (int64_t)f->seq);
    const fwdioi_errinfo_t *data = data_result(f);
    finish_session(f, data->status != FWDIO_OK ? data : &f->s.commit_agreed);
}

static void start_commit_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->trace_t0 = fwdioi_trace_begin();
    MPI_Request req;
    if (MPI_Iallreduce(&s->commit_local, &s->commit_agreed, FWDIOI_ERRINFO_INTS, MPI_INT64_T,
                       agree_op(f), s->comm, &req) != MPI_SUCCESS) {
        mpi_failed(f, "MPI_Iallreduce (commit status)");
        return;
    }
    fwdioi_rt_track(f->rt, req, on_commit_agreed, f);
}

static void on_commit_done(fwdioi_storage_job_t *job)
{
    fwdio_file_t *f = job->owner;
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&f->s.commit_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    f->s.io_pending--;
    fwdioi_storage_job_free(job);
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
    (void)st;
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
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
    s->final_ready = 1;
    if (s->sends_pending > 0 || s->final_started)
        return;
    s->final_started = 1;
    s->phase = FWDIOI_PHASE_SYNCING;
    s->trace_t0 = fwdioi_trace_begin();
    MPI_Request req;
    if (MPI_Iallreduce(&s->local_error, &s->final_agreed, FWDIOI_ERRINFO_INTS, MPI_INT64_T,
                       agree_op(f), s->comm, &req) != MPI_SUCCESS) {
        mpi_failed(f, "MPI_Iallreduce (final status)");
        return;
    }
    fwdioi_rt_track(f->rt, req, on_final_agreed, f);
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
    if (!s->close_agreed || s->finishing || s->recvs_pending > 0)
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

/* Take the pieces of one message (from MPI or from this rank itself), then drop
 * the caller's reference to it. */
static void writer_accept(fwdio_file_t *f, const uint8_t *wire, size_t wire_len,
                          const fwdioi_msg_t *lent, fwdioi_hold_t *hold)
{
    fwdioi_session_t *s = &f->s;
    uint64_t t_trace = fwdioi_trace_begin();
    uint64_t received = s->received;
    s->accepting = hold;
    fwdioi_wire_header_t h;
    memcpy(&h, wire, sizeof h);
    size_t table = (size_t)h.npieces * sizeof(fwdioi_piece_t);
    const uint8_t *data = wire + sizeof h;
    const uint8_t *pieces = wire + wire_len - table; /* the table ends the message */
    for (uint32_t i = 0; i < h.npieces && sizeof h + table <= wire_len; i++) {
        fwdioi_piece_t p;
        memcpy(&p, pieces + i * sizeof p, sizeof p);
        s->received += p.len;
        if (s->local_error.status == FWDIO_OK) {
            uint64_t bad = p.offset;
            const uint8_t *bytes = lent ? fwdioi_msg_piece_data(lent, &p, data) : data;
            int rc = fwdioi_assembly_add(&s->assembly, p.offset, bytes, p.len, &bad);
            if (rc != FWDIO_OK)
                fwdioi_errinfo_set(&s->local_error, rc, f->rank, 0, bad);
        }
        data += p.len;
    }
    s->accepting = NULL;
    fwdioi_trace_end(t_trace, "assemble", (int64_t)f->seq, (int64_t)(s->received - received),
                     FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE);
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
    uint8_t buf[];
} recv_op_t;

static void on_recv_done(void *arg, const MPI_Status *st)
{
    recv_op_t *r = arg;
    fwdio_file_t *f = r->file;
    fwdioi_trace_end(r->trace_t0, "recv", (int64_t)f->seq, r->len, FWDIOI_TRACE_NONE,
                     st->MPI_SOURCE);
    f->s.recvs_pending--;
    uint64_t before = f->s.received;
    writer_accept(f, r->buf, (size_t)r->len, NULL, &r->hold);
    if (f->s.received_from)
        f->s.received_from[st->MPI_SOURCE] += f->s.received - before;
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

static void start_receive(fwdio_file_t *f, MPI_Message *msg, int len)
{
    fwdioi_session_t *s = &f->s;
    recv_op_t *r = fwdioi_rt_buf_get(f->rt, sizeof *r + (size_t)len);
    if (!r) {
        /* Cannot buffer it: receive it into nothing and fail the file, so the
         * sender is not blocked forever. */
        fwdioi_errinfo_set(&s->local_error, FWDIO_ENOMEM, f->rank, 0, 0);
        MPI_Mrecv(NULL, 0, MPI_BYTE, msg, MPI_STATUS_IGNORE);
        return;
    }
    r->hold = (fwdioi_hold_t){1, r, sizeof *r + (size_t)len, 1, 0};
    r->file = f;
    r->len = len;
    r->trace_t0 = fwdioi_trace_begin();
    wbuf_add(f, r->hold.size);
    MPI_Request req;
    MPI_Imrecv(r->buf, len, MPI_BYTE, msg, &req);
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
    while (started < RECVS_PER_POLL) {
        if (!s->has_waiting) {
            int flag = 0;
            MPI_Status st;
            if (MPI_Improbe(MPI_ANY_SOURCE, TAG_DATA, s->comm, &flag, &s->waiting_msg, &st) !=
                MPI_SUCCESS) {
                mpi_failed(f, "MPI_Improbe");
                break;
            }
            if (!flag)
                break;
            MPI_Get_count(&st, MPI_BYTE, &s->waiting_len);
            s->has_waiting = 1;
        }
        uint64_t need = sizeof(recv_op_t) + (uint64_t)s->waiting_len;
        /* An empty writer takes any message: budget + one message at most. */
        if (o->wbuf_held > 0 && o->wbuf_held + need > budget) {
            make_room(o, need, budget);
            break;
        }
        s->has_waiting = 0;
        start_receive(f, &s->waiting_msg, s->waiting_len);
        started++;
    }
    return started;
}

/* ---- sending data ---- */

static void on_send_done(void *arg, const MPI_Status *st)
{
    (void)st;
    fwdioi_msg_t *m = arg;
    fwdio_file_t *f = m->file;
    fwdioi_trace_end(m->trace_t0, "send", (int64_t)f->seq, (int64_t)m->payload,
                     FWDIOI_TRACE_NONE, fwdioi_plan_writer_rank(&f->plan, m->writer));
    fwdioi_msg_free(f->rt, m);
    if (--f->s.sends_pending == 0 && f->s.final_ready)
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
static int isend_lent(fwdio_file_t *f, fwdioi_msg_t *m, int dest, MPI_Request *req)
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
        rc = MPI_Type_create_hindexed(n, lens, addrs, MPI_BYTE, &type);
        if (rc == MPI_SUCCESS) {
            MPI_Type_commit(&type);
            rc = MPI_Isend(MPI_BOTTOM, 1, type, dest, TAG_DATA, f->s.comm, req);
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
        writer_accept(f, m->wire, m->wire_len, m->lent ? m : NULL, &m->hold);
        writer_check_drained(f);
        return;
    }
    MPI_Request req;
    int dest = fwdioi_plan_writer_rank(&f->plan, m->writer);
    m->trace_t0 = fwdioi_trace_begin();
    int rc = m->lent ? isend_lent(f, m, dest, &req)
                     : MPI_Isend(m->wire, (int)m->wire_len, MPI_BYTE, dest, TAG_DATA, f->s.comm,
                                 &req);
    if (rc != MPI_SUCCESS) {
        mpi_failed(f, "MPI_Isend");
        fwdioi_errinfo_set(&f->s.local_error, FWDIO_EMPI, f->rank, 0, 0);
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
    (void)st;
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
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
        fwdioi_errinfo_set(&s->local_error, FWDIO_EINVAL, f->rank, 0, f->commit_offset);
    }
    s->phase = FWDIOI_PHASE_SYNCING;
    s->t_closed = fwdioi_now();
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
    s->phase = FWDIOI_PHASE_CLOSING;
    s->trace_t0 = fwdioi_trace_begin();
    const int nw = f->plan.nwriters;
    int has_commit = f->commit_buf != NULL; /* set before fwdio_close, which queued us */
    s->sent_bytes[nw] = (uint64_t)has_commit;
    s->sent_bytes[nw + 1] = has_commit ? (uint64_t)f->rank : 0;
    MPI_Request req;
    if (MPI_Iallreduce(s->sent_bytes, s->expected_bytes, nw + FWDIOI_CLOSE_EXTRA, MPI_UINT64_T,
                       MPI_SUM, s->comm, &req) != MPI_SUCCESS) {
        mpi_failed(f, "MPI_Iallreduce (byte counts)");
        return;
    }
    fwdioi_rt_track(f->rt, req, on_close_agreed, f);
}

static void close_task(fwdioi_task_t *task)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, close_task));
    f->s.close_requested = 1;
    f->s.t_close_called = fwdioi_now();
    if (f->s.phase == FWDIOI_PHASE_OPEN)
        start_close_agreement(f);
    /* else: started when the open status is agreed */
}

/* ---- opening ---- */

static void on_open_agreed(void *arg, const MPI_Status *st)
{
    (void)st;
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    fwdioi_trace_end_file(s->trace_t0, "agree open", (int64_t)f->seq);
    s->phase = FWDIOI_PHASE_OPEN;
    double t = fwdioi_now();
    fwdioi_rt_lock(f->rt);
    f->stats.time_to_ready = t - f->t_open;
    fwdioi_rt_unlock(f->rt);
    fwdioi_msg_t *held = s->held_head;
    s->held_head = s->held_tail = NULL;
    if (s->open_agreed.status != FWDIO_OK) {
        publish_error(f, &s->open_agreed);
        while (held) {
            fwdioi_msg_t *next = held->next_held;
            drop_msg(f, held, (int)s->open_agreed.status);
            held = next;
        }
    }
    while (held) {
        fwdioi_msg_t *next = held->next_held;
        dispatch(f, held);
        held = next;
    }
    fwdioi_rt_deliver(f->rt, &f->ready_call);
    if (s->close_requested)
        start_close_agreement(f);
}

static void start_open_agreement(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_OPENING;
    s->trace_t0 = fwdioi_trace_begin();
    MPI_Request req;
    if (MPI_Iallreduce(&s->open_local, &s->open_agreed, FWDIOI_ERRINFO_INTS, MPI_INT64_T,
                       agree_op(f), s->comm, &req) != MPI_SUCCESS) {
        mpi_failed(f, "MPI_Iallreduce (open status)");
        return;
    }
    fwdioi_rt_track(f->rt, req, on_open_agreed, f);
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
    start_open_agreement(f);
}

static void start_next_dup(struct fwdio_runtime *owner);

static void on_dup_done(void *arg, const MPI_Status *st)
{
    (void)st;
    fwdio_file_t *f = arg;
    fwdioi_trace_end_file(f->s.trace_t0, "comm dup", (int64_t)f->seq);
    f->owner->dup_in_flight = 0;
    start_next_dup(f->owner);
    MPI_Comm_set_errhandler(f->s.comm, MPI_ERRORS_RETURN);
    if (f->my_writer < 0) {
        start_open_agreement(f);
        return;
    }
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
    if (MPI_Comm_idup(fwdioi_rt_comm(f->rt), &f->s.comm, &req) != MPI_SUCCESS) {
        mpi_failed(f, "MPI_Comm_idup");
        return;
    }
    owner->dup_in_flight = 1;
    fwdioi_rt_track(f->rt, req, on_dup_done, f);
}

static void open_task(fwdioi_task_t *task)
{
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, open_task));
    struct fwdio_runtime *owner = f->owner;
    f->s.next_active = owner->active;
    owner->active = f;
    f->s.next_dup = NULL;
    if (owner->dup_tail)
        owner->dup_tail->s.next_dup = f;
    else
        owner->dup_head = f;
    owner->dup_tail = f;
    start_next_dup(owner);
}

/* ---- setup, teardown, polling ---- */

void fwdioi_session_init(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_DUP;
    s->comm = MPI_COMM_NULL;
    s->fd = -1;
    s->open_local = s->open_agreed = s->local_error = s->final_agreed = FWDIOI_ERRINFO_OK;
    s->commit_local = s->commit_agreed = FWDIOI_ERRINFO_OK;
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

/* Client poll hook: writers look for data of every file in the OPEN..SYNCING
 * phases. Returns the number of receives started; *active while any session
 * runs. */
int fwdioi_session_poll(void *runtime, int *active)
{
    struct fwdio_runtime *owner = runtime;
    const fwdio_config_t *cfg = fwdioi_rt_config(owner->rt);
    int events = 0;
    double now = 0;
    if (cfg->combine_size > 1)
        events += fwdioi_combine_flush_stale(owner, (uint64_t)cfg->poll_max_us * 1000u);
    for (fwdio_file_t *f = owner->active; f; f = f->s.next_active) {
        if (now == 0)
            now = fwdioi_now();
        fwdioi_watchdog_check(f, now);
        if (f->my_writer >= 0 && f->s.phase >= FWDIOI_PHASE_OPEN && !f->s.finishing &&
            f->s.open_agreed.status == FWDIO_OK)
            events += writer_probe(f);
    }
    *active = owner->active != NULL;
    return events;
}
