/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer side of a file's session (progress thread): receiving data
 * messages within the writer's memory budget, checking every piece against
 * the plan, assembling write units, handing them to the I/O thread, and the
 * storage jobs' completions. session.c runs the phases and agreements around
 * it (session.h).
 */
#include "write/writer.h"

#include "local/local_tier.h"
#include "log.h"
#include "write/assembly.h"
#include "write/budget.h"
#include "write/message.h"
#include "write/parking.h"
#include "read/reader.h"
#include "agreement/outcome.h"
#include "stream/stream.h"
#include "storage/storage.h"
#include "clock.h"
#include "trace.h"
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

/* Messages a writer starts receiving per file and per poll: keeps one busy file
 * from starving the others. */
enum { RECVS_PER_POLL = 16 };

/* Past its budget, a writer parks the pieces of a unit it has no buffer for
 * (parking.h) when they average less than this many bytes: below it a
 * pwrite per piece costs more than the copy into a buffer and one pwrite
 * of the unit; above it the piece is written straight from its message. */
enum { PARK_PIECE_MAX = 32 * 1024 };
/* Parked pieces wait for the writes under way to give memory back, or for
 * the pieces that complete their units. When nothing was taken or written
 * for this long they are written as they are (straight from their messages,
 * or in buffers where room came): a sender whose staging the parked
 * messages fill waits for them, and the pieces the writer waits for may be
 * behind that. */
enum { PARK_STALL_NS = 100 * 1000 * 1000 };

/*
 * The writer side of one file (progress thread): made at fwdio_open for a
 * rank that writes the file (fwdioi_writer_create), reached through the
 * session's `writer`; no other module sees its fields, they ask the functions
 * of writer.h.
 */
struct fwdioi_writer {
    /* receiving */
    uint64_t received;       /* data bytes taken, from every sender */
    /* The ranks that sent data, rank -> bytes (as a pointer, never 0): for
     * the watchdog's report only, which names the ranks heard from and the
     * silent ones. A map of the senders, not an array of every rank: O(the
     * senders of this writer), ~P / W + 1 in a block layout, not 8 P bytes
     * per writer per file (docs/scaling.md). `senders_lost`: a sender could
     * not be recorded (no memory), so the report says less. */
    fwdioi_u64map_t senders;
    int senders_lost;
    /* Messages ranks of this node announced they send over MPI rather than
     * through the node-shared area, less those received: while above 0 (or
     * while ranks of other nodes may send) the writer probes MPI. */
    int mpi_notes;
    /* a matched message that waits for writer memory */
    int has_waiting;
    MPI_Message waiting_msg;
    int waiting_len, waiting_source;
    /* assembling and writing */
    fwdioi_assembly_t assembly;
    fwdioi_hold_t *accepting;              /* the message being assembled */
    struct fwdioi_storage_job *direct_job; /* its direct writes, gathered */
    /* A write of the file failed: its later writes and its fdatasync are
     * skipped (storage.c). Set and read only by the file's storage jobs
     * (their `write_failed`), which run one at a time, in order, on the I/O
     * thread (on the progress thread with io_inline): not progress state. */
    int write_failed;
    /* a stream: bytes received per step from step_recv_base on, the bytes
     * the first step waits for, and whether its end is awaited */
    uint64_t *step_recv;
    size_t step_recv_len, step_recv_cap;
    uint64_t step_recv_base;
    uint64_t step_expected;
    int step_draining;
    /* the messages of later steps kept unwritten until the steps before
     * theirs are complete, so the file never holds bytes of a step beyond an
     * incomplete one; their received bytes, and whether the cap was hit */
    struct fwdioi_deferred *deferred;
    size_t ndeferred, deferred_cap;
    uint64_t deferred_received;
    int deferred_capped;
    /* pieces waiting for a unit buffer, the bytes of their records counted
     * against the budget, and when the writer last took or wrote anything */
    fwdioi_parking_t parking;
    uint64_t parking_counted;
    uint64_t last_progress_ns;
};

static struct fwdioi_writer *writer_of(const fwdio_file_t *f) { return f->s.writer; }

static void on_finish_done(fwdioi_storage_job_t *job);
static void feed_parked(fwdio_file_t *f, int all);

/* ---- storage jobs ---- */

static void record_job_error(fwdio_file_t *f, const fwdioi_storage_job_t *job)
{
    fwdioi_outcome_storage_failed(f, job->fail_time); /* fwdio_file_stats_t */
    if (job->status != FWDIO_OK && f->s.outcome.local_error.status == FWDIO_OK) {
        fwdioi_errinfo_set_call(&f->s.outcome.local_error, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
        if (job->err_on_target) /* the local store failed, then the target */
            f->s.outcome.local_error.other_value = FWDIOI_LOCAL_AT_TARGET;
    }
}

/* ---- writer memory: every byte held counts against writer_buffer ---- */

static uint64_t writer_budget(const fwdio_file_t *f)
{
    return f->owner->wbuf.limit;
}

static void wbuf_add(fwdio_file_t *f, uint64_t bytes)
{
    fwdioi_wbudget_add(&f->owner->wbuf, &f->s.wbuf, bytes);
}

static void wbuf_sub(fwdio_file_t *f, uint64_t bytes)
{
    fwdioi_wbudget_sub(&f->owner->wbuf, &f->s.wbuf, bytes);
}

static int reserve_unit(void *arg, uint64_t bytes)
{
    fwdio_file_t *f = arg;
    return fwdioi_wbudget_reserve(&f->owner->wbuf, &f->s.wbuf, bytes);
}

static void unreserve_unit(void *arg, uint64_t bytes)
{
    wbuf_sub(arg, bytes);
}

/* Assembly bookkeeping (which bytes arrived) counts like buffers, but cannot
 * be refused: it shrinks only as data arrives. It passes the budget only when
 * the arrival order leaves more separate gaps open than the budget can
 * describe; say so once, as the budget no longer bounds the writer then (progress thread). */
static void meta_unit(void *arg, int64_t delta)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_wbudget_t *b = &f->owner->wbuf;
    if (fwdioi_wbudget_meta(b, &f->s.wbuf, delta)) {
        fwdioi_report("rank %d: the record of which bytes of %s have arrived takes %llu bytes, "
                      "more than writer_buffer (%llu): the writes leave that many gaps open; "
                      "going on beyond the budget",
                      f->rank, f->path, (unsigned long long)b->meta,
                      (unsigned long long)writer_budget(f));
    }
}

/* Drop one reference to a message; the last one frees it (and its bytes). */
static void hold_release(fwdio_file_t *f, fwdioi_hold_t *h)
{
    if (--h->refs > 0)
        return;
    if (h->kind == FWDIOI_HOLD_OWN) {
        fwdioi_msg_free(f->engine, h->block);
        return;
    }
    if (h->kind == FWDIOI_HOLD_SHARED) { /* its sender may reuse the memory */
        h->give_back(f->owner, h);
        return;
    }
    if (h->releasing)
        fwdioi_wbudget_released(&f->owner->wbuf, &f->s.wbuf, h->size);
    else
        wbuf_sub(f, h->size);
    fwdioi_rt_buf_put(f->engine, h->block, h->size);
}

/* The writer is done with a message it took: drop its reference; when only
 * writes keep the message then, its bytes count as being released. */
static void let_go(fwdio_file_t *f, fwdioi_hold_t *h)
{
    if (h->kind == FWDIOI_HOLD_RECEIVED && h->refs > 1 && !h->releasing) {
        h->releasing = 1;
        fwdioi_wbudget_releasing(&f->owner->wbuf, h->size);
    }
    hold_release(f, h);
}

static void on_write_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    record_job_error(f, job);
    f->s.io_pending--;
    f->s.stats.pwrite_seconds += job->seconds;
    f->s.stats.pwrite_calls += job->nextents + job->nsegs;
    f->s.stats.bytes_to_pwrite += job->bytes_written;
    if (job->hold)
        hold_release(f, job->hold);
    if (job->buf_size)
        fwdioi_wbudget_released(&f->owner->wbuf, &f->s.wbuf, job->buf_size);
    fwdioi_storage_job_free(job);
    if (writer_of(f)) { /* memory came back: parked pieces may have a buffer now */
        writer_of(f)->last_progress_ns = fwdioi_now_ns();
        feed_parked(f, 0);
        fwdioi_writer_check_drained(f); /* the last of them, once every byte came */
    }
    fwdioi_outcome_finish_if_aborted(f);
}

static void on_finish_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    record_job_error(f, job);
    f->s.io_pending--;
    f->s.fd = -1;
    f->s.stats.sync_seconds += job->seconds;
    int ok = job->status == FWDIO_OK && f->s.outcome.local_error.status == FWDIO_OK && !f->s.outcome.aborted;
    fwdioi_storage_job_free(job);
    /* The I/O thread runs jobs in order: every write of the file is done.
     * A file of the node-local tier writes its local file's index first. */
    if (!ok || fwdioi_local_seal(f, fwdioi_outcome_data_done) != 0)
        fwdioi_outcome_data_done(f);
}

/* Assembly hands over a unit buffer: write its extents, unless the file
 * already failed. Its bytes stay counted until the write is done. */
static void flush_unit(void *arg, uint8_t *buf, uint64_t size, uint64_t offset,
                       fwdioi_range_t *extents, size_t nextents)
{
    fwdio_file_t *f = arg;
    fwdioi_storage_job_t *job =
        f->s.outcome.local_error.status == FWDIO_OK && nextents > 0 && extents
            ? fwdioi_storage_job_new(FWDIOI_STORAGE_WRITE, f, on_write_done)
            : NULL;
    if (!job) {
        if (f->s.outcome.local_error.status == FWDIO_OK && nextents > 0)
            fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ENOMEM, f->rank, 0, offset);
        wbuf_sub(f, size);
        free(buf);
        free(extents);
        return;
    }
    /* The job and the extents (bookkeeping until now) count too, until the
     * write is done: with small write units they weigh as much as the data.
     * Added here rather than with the buffer, a budget of N units still holds
     * N buffers. */
    uint64_t extra = nextents * sizeof *extents + sizeof *job;
    wbuf_add(f, extra);
    job->fd = f->s.fd;
    job->write_failed = &writer_of(f)->write_failed;
    job->failover = fwdioi_local_failover(f);
    job->buf = buf;
    job->buf_size = size + extra;
    job->base = offset;
    job->extents = extents;
    job->nextents = nextents;
    fwdioi_wbudget_releasing(&f->owner->wbuf, job->buf_size);
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

/* Write bytes straight from the message being accepted, which stays alive
 * until the write is done: whole units (no copy needed) and pieces for which
 * the budget has no buffer. They gather into one job per message, sent by
 * submit_direct once the message is taken: a message of many small pieces
 * costs one job and a segment a piece, not a job a piece. */
static void write_direct(void *arg, const uint8_t *data, uint64_t offset, uint64_t len)
{
    fwdio_file_t *f = arg;
    struct fwdioi_writer *w = writer_of(f);
    if (f->s.outcome.local_error.status != FWDIO_OK)
        return;
    fwdioi_storage_job_t *job = w->direct_job;
    if (!job) {
        job = fwdioi_storage_job_new(FWDIOI_STORAGE_WRITE, f, on_write_done);
        if (!job) {
            fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ENOMEM, f->rank, 0, offset);
            return;
        }
        job->fd = f->s.fd;
        job->write_failed = &w->write_failed;
        job->failover = fwdioi_local_failover(f);
        job->hold = w->accepting;
        w->accepting->refs++;
        w->direct_job = job;
    }
    if (fwdioi_storage_job_add_segment(job, offset, data, len) != 0)
        fwdioi_errinfo_set(&f->s.outcome.local_error, FWDIO_ENOMEM, f->rank, 0, offset);
}

/* Send the direct writes of the message just taken. The job and its segments
 * count against the budget until they are written (progress thread). */
static void submit_direct(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_writer *w = writer_of(f);
    fwdioi_storage_job_t *job = w->direct_job;
    if (!job)
        return;
    w->direct_job = NULL;
    job->buf_size = sizeof *job + job->segs_cap * sizeof *job->segs;
    wbuf_add(f, job->buf_size);
    fwdioi_wbudget_releasing(&f->owner->wbuf, job->buf_size);
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

/* ---- a stream's steps ---- */

/* Steps a message may be ahead of the first step not yet written: its
 * received counts take 8 bytes a step. */
enum { STEP_WINDOW = 1 << 20 };

/* Count a message's bytes for its step (streams; other files have step 0
 * only). 0, or -1 when the step cannot be the message's: one already
 * written, or one too far ahead. */
static int count_step(fwdio_file_t *f, uint32_t wire_step, uint64_t payload, uint64_t *step)
{
    struct fwdioi_writer *w = writer_of(f);
    *step = 0;
    if (!f->stream)
        return wire_step == 0 ? 0 : -1;
    /* the step in full, at or after the base (the wire has it mod 2^32) */
    uint64_t ahead = (uint32_t)(wire_step - (uint32_t)w->step_recv_base);
    *step = w->step_recv_base + ahead;
    if (ahead >= STEP_WINDOW)
        return -1;
    if (ahead >= w->step_recv_cap) {
        size_t cap = w->step_recv_cap ? w->step_recv_cap : 8;
        while (cap <= ahead)
            cap *= 2;
        uint64_t *r = realloc(w->step_recv, cap * sizeof *r);
        if (!r)
            return -1;
        memset(r + w->step_recv_cap, 0, (cap - w->step_recv_cap) * sizeof *r);
        w->step_recv = r;
        w->step_recv_cap = cap;
    }
    if (ahead >= w->step_recv_len)
        w->step_recv_len = (size_t)ahead + 1;
    w->step_recv[ahead] += payload;
    return 0;
}

/* The first step is done with: count from the next one. */
static void step_window_advance(struct fwdioi_writer *w)
{
    if (w->step_recv_len > 0) {
        memmove(w->step_recv, w->step_recv + 1, (w->step_recv_len - 1) * sizeof *w->step_recv);
        w->step_recv[--w->step_recv_len] = 0;
    }
    w->step_recv_base++;
}

static void on_step_synced(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    fwdioi_session_t *s = &f->s;
    record_job_error(f, job);
    s->io_pending--;
    s->stats.sync_seconds += job->seconds;
    fwdioi_step_drains_synced(f, job->fresh, job->nfresh); /* taken over */
    job->fresh = NULL;
    fwdioi_storage_job_free(job);
    step_window_advance(writer_of(f)); /* the step is written */
    if (s->outcome.aborted) {
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    fwdioi_outcome_step_data_done(f);
}

/* Every byte of the file (or of the step) has come: parked pieces go out a
 * unit at a time as the writes under way give memory back (units that
 * still have holes are final now, so they go first), and only when none
 * is under way are the rest written from their messages. 1 once nothing is
 * parked; 0 while they wait (on_write_done comes back here through
 * fwdioi_writer_check_drained). */
static int settle_parked(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    if (fwdioi_parking_empty(&w->parking))
        return 1;
    if (s->outcome.local_error.status == FWDIO_OK && !s->outcome.aborted) {
        fwdioi_assembly_flush_partial(&w->assembly);
        feed_parked(f, 0);
        if (!fwdioi_parking_empty(&w->parking) && s->io_pending > 0)
            return 0;
    }
    feed_parked(f, 1);
    return 1;
}

/* Once the first step's bytes have all arrived: flush its partial units,
 * write and sync them, then fwdioi_outcome_step_data_done (progress thread). */
static void check_step(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    if (!w->step_draining || s->outcome.aborted)
        return;
    uint64_t got = w->step_recv_len > 0 ? w->step_recv[0] : 0;
    if (got < w->step_expected || !settle_parked(f))
        return;
    w->step_draining = 0;
    if (got > w->step_expected && s->outcome.local_error.status == FWDIO_OK) {
        /* more than the senders counted: somebody's bytes are not theirs */
        fwdioi_errinfo_t e = {FWDIO_EPROTO, f->rank, 0, (int64_t)got,
                              FWDIOI_REASON_BAD_STEP, -1, (int64_t)w->step_recv_base};
        s->outcome.local_error = e;
    }
    /* No frame waits for the next: partly filled units go out now. */
    if (s->outcome.local_error.status == FWDIO_OK)
        fwdioi_assembly_flush_partial(&w->assembly);
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_SYNC, f, on_step_synced);
    if (!job) {
        fwdioi_errinfo_set(&s->outcome.local_error, FWDIO_ENOMEM, f->rank, 0, 0);
        step_window_advance(writer_of(f)); /* the stream fails at this step */
        fwdioi_outcome_step_data_done(f);
        return;
    }
    job->fd = s->fd;
    job->write_failed = &w->write_failed;
    job->failover = fwdioi_local_failover(f); /* a stream's in a local store */
    job->take_fresh = job->failover && fwdioi_step_drains_on(f); /* the step's drain */
    /* a commit block follows durable data only */
    job->durable = f->opts.durable || fwdioi_steps_head_commits(f);
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

/* Everything announced has arrived: flush what is left, sync, close. */
void fwdioi_writer_check_drained(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    if (!w)
        return; /* not this rank's to write */
    check_step(f);
    if (s->outcome.aborted || !s->close_agreed || s->finishing || s->recvs_pending > 0)
        return;
    uint64_t expected = s->expected_bytes[f->my_writer];
    uint64_t received = w->received;
    if (received < expected)
        return;
    if (!settle_parked(f))
        return;
    if (received > expected)
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: received %llu bytes, %llu announced", f->rank,
                   f->path, (unsigned long long)received, (unsigned long long)expected);
    s->finishing = 1;
    if (s->outcome.local_error.status == FWDIO_OK)
        fwdioi_assembly_flush_partial(&w->assembly);
    if (s->fd < 0) { /* open failed: nothing to sync or close */
        fwdioi_outcome_data_done(f);
        return;
    }
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_FINISH, f, on_finish_done);
    if (!job) {
        fwdioi_errinfo_set(&s->outcome.local_error, FWDIO_ENOMEM, f->rank, 0, 0);
        fwdioi_outcome_data_done(f); /* the fd leaks rather than the job hangs */
        return;
    }
    job->fd = s->fd;
    job->write_failed = &w->write_failed;
    job->failover = fwdioi_local_failover(f);
    /* a commit follows durable data; the node-local tier's complete means durable */
    job->durable = f->opts.durable || s->commit.committers > 0 || fwdioi_local_defers_commit(f);
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

/* ---- receiving data ---- */

/*
 * A writer never trusts a message: every piece must lie within the file and
 * within stripes the plan gives this writer, the bytes of spread pieces from
 * another process within that process's memory, and the pieces must account
 * for exactly the message's data, before any of it touches memory. 0, or -1
 * with the first bad piece in *bad.
 */
static int check_message(const fwdio_file_t *f, const fwdioi_pieces_view_t *v,
                         fwdioi_piece_t *bad)
{
    *bad = (fwdioi_piece_t){0, 0};
    if (!v->table)
        return -1;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < v->npieces; i++) {
        fwdioi_piece_t p;
        memcpy(&p, v->table + (size_t)i * sizeof p, sizeof p);
        int outside = 0;
        if (!v->packed && v->lo) {
            const uint8_t *at = v->spread_base + (p.offset - v->spread_offset);
            outside = p.offset < v->spread_offset || at < v->lo || at > v->hi ||
                      p.len > (uint64_t)(v->hi - at) ||
                      (v->readable && !v->readable(v->readable_ctx, at, p.len));
        }
        if (p.len > v->payload - sum || outside ||
            !fwdioi_plan_owns(&f->plan, f->my_writer, p.offset, p.len)) {
            *bad = p;
            return -1;
        }
        sum += p.len;
    }
    return sum == v->payload ? 0 : -1;
}

/* Take the pieces of one message (from MPI, from a peer of this node, or from
 * this rank itself), then drop the caller's reference to it. `source` is the
 * sending rank. */
/* A message kept until the steps before its own are complete. */
typedef struct fwdioi_deferred {
    fwdioi_pieces_view_t v;
    fwdioi_hold_t *hold;
    int source;
    uint64_t step;
} fwdioi_deferred_t;

static void take_message(fwdio_file_t *f, const fwdioi_pieces_view_t *v, fwdioi_hold_t *hold,
                         int source);

/* Keep a stream's message of a later step unwritten: 0, or -1 when it must
 * be written now (out of memory, or kept messages would take more than half
 * the writer's budget: then a writer full of later steps could not receive
 * the step everyone waits for). With rewrites no cap applies: senders send a
 * step only once the steps before it are complete (sender.c), so no message
 * of an earlier step can be behind the kept ones, and the budget check of the
 * receives bounds them. */
static int defer_message(fwdio_file_t *f, const fwdioi_pieces_view_t *v, fwdioi_hold_t *hold,
                         int source, uint64_t step)
{
    struct fwdioi_writer *w = writer_of(f);
    uint64_t counted = hold->kind == FWDIOI_HOLD_RECEIVED ? hold->size : 0;
    if (!f->opts.rewrites && w->deferred_received + counted > writer_budget(f) / 2) {
        if (!w->deferred_capped)
            fwdioi_log(FWDIOI_LOG_WARN,
                       "rank %d: %s: bytes of later steps fill half of writer_buffer: writing "
                       "them before the earlier steps complete (a file cut short now may hold "
                       "bytes past an incomplete step)",
                       f->rank, f->path);
        w->deferred_capped = 1;
        return -1;
    }
    if (w->ndeferred == w->deferred_cap) {
        size_t cap = w->deferred_cap ? 2 * w->deferred_cap : 16;
        fwdioi_deferred_t *d = realloc(w->deferred, cap * sizeof *d);
        if (!d)
            return -1;
        w->deferred = d;
        w->deferred_cap = cap;
    }
    w->deferred[w->ndeferred++] = (fwdioi_deferred_t){*v, hold, source, step};
    w->deferred_received += counted;
    return 0;
}

void fwdioi_writer_release_deferred(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    if (!w)
        return; /* a read file: nothing kept */
    size_t kept = 0;
    for (size_t i = 0; i < w->ndeferred; i++) {
        fwdioi_deferred_t d = w->deferred[i];
        if (d.step > fwdioi_steps_complete(f) && !s->outcome.aborted) {
            w->deferred[kept++] = d; /* its turn has not come */
            continue;
        }
        if (d.hold->kind == FWDIOI_HOLD_RECEIVED)
            w->deferred_received -= d.hold->size;
        take_message(f, &d.v, d.hold, d.source);
    }
    w->ndeferred = kept;
    if (s->outcome.aborted)
        feed_parked(f, 1); /* dropped: the file failed */
}

void fwdioi_writer_forget_step(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_assembly_forget(&writer_of(f)->assembly);
}

void fwdioi_writer_accept(fwdio_file_t *f, const fwdioi_pieces_view_t *v, fwdioi_hold_t *hold,
                          int source)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    if (!w) { /* a read file: no data message is its */
        hold_release(f, hold);
        return;
    }
    w->received += v->payload;
    if (v->payload > 0 && !w->senders_lost && source >= 0 && source < f->plan.nranks) {
        uintptr_t had = (uintptr_t)fwdioi_u64map_get(&w->senders, (uint64_t)source);
        if (fwdioi_u64map_put(&w->senders, (uint64_t)source,
                              (void *)(had + (uintptr_t)v->payload)) != 0)
            w->senders_lost = 1;
    }
    uint64_t step;
    if (count_step(f, v->step, v->payload, &step) != 0) {
        /* Its step's count cannot be trusted any more, so no step can be
         * agreed: the file is aborted (every rank hears of it). */
        fwdioi_errinfo_t why = {FWDIO_EPROTO, f->rank, 0, (int64_t)v->payload,
                                FWDIOI_REASON_BAD_STEP, source, (int64_t)v->step};
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: a message from rank %d names step %u",
                   f->rank, f->path, source, v->step);
        fwdioi_outcome_abort(f, &why, 1);
        hold_release(f, hold);
        return;
    }
    /* A stream's file holds bytes of a step only once the steps before it
     * are complete: with its header's count committed last, the file never
     * reaches past its complete steps but by the step being written. */
    if (f->stream && step > fwdioi_steps_complete(f) && !s->outcome.aborted) {
        if (defer_message(f, v, hold, source, step) == 0)
            return;
        if (f->opts.rewrites) {
            /* Taken now, its bytes could land before an earlier step's
             * copies of them: the step fails instead of the order. */
            fwdioi_errinfo_set(&s->outcome.local_error, FWDIO_ENOMEM, f->rank, 0, 0);
            hold_release(f, hold);
            return;
        }
    }
    take_message(f, v, hold, source);
}

/* ---- taking pieces, and parking those without a buffer ---- */

/* The message whose pieces are being taken, and its parking record once
 * it has one. */
typedef struct taken_msg {
    const fwdioi_pieces_view_t *v;
    fwdioi_hold_t *hold;
    int source;
    fwdioi_parked_msg_t *rec; /* set when its pieces come back from the parking */
} taken_msg_t;

static fwdioi_piece_t piece_at(const fwdioi_pieces_view_t *v, uint32_t i)
{
    fwdioi_piece_t p;
    memcpy(&p, v->table + (size_t)i * sizeof p, sizeof p);
    return p;
}

/* The parking's records count against the budget, as bookkeeping does. */
static void count_parking(fwdio_file_t *f)
{
    struct fwdioi_writer *w = writer_of(f);
    uint64_t now = w->parking.memory;
    if (now > w->parking_counted)
        wbuf_add(f, now - w->parking_counted);
    else
        wbuf_sub(f, w->parking_counted - now);
    w->parking_counted = now;
}

static void take_pieces(fwdio_file_t *f, taken_msg_t *m, uint32_t first, uint32_t n,
                        uint64_t packed_at, int may_park);

/* Take back the parked groups `g` (one unit's, in arrival order): their
 * pieces are taken as if they came now; with `may_park` those that still
 * find no buffer park again. */
static void feed_groups(fwdio_file_t *f, fwdioi_parked_group_t *g, int may_park)
{
    struct fwdioi_writer *w = writer_of(f);
    while (g) {
        fwdioi_parked_group_t *next = g->next;
        fwdioi_parked_msg_t *rec = g->msg;
        if (f->s.outcome.local_error.status == FWDIO_OK && !f->s.outcome.aborted) {
            taken_msg_t m = {&rec->v, rec->hold, rec->source, rec};
            take_pieces(f, &m, g->first, g->count, g->packed_at, may_park);
        }
        fwdioi_hold_t *done = fwdioi_parking_group_done(&w->parking, g);
        if (done)
            let_go(f, done);
        g = next;
    }
    count_parking(f);
    w->last_progress_ns = fwdioi_now_ns();
}

/* Take parked pieces back: all of them (`all`: those without a buffer are
 * written from their messages, or dropped when the file failed), or the
 * oldest units' while a buffer can be had (progress thread). */
static void feed_parked(fwdio_file_t *f, int all)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_writer *w = writer_of(f);
    if (!w || fwdioi_parking_empty(&w->parking))
        return;
    size_t rounds = w->parking.units.n; /* a unit taken back may park again */
    while (!fwdioi_parking_empty(&w->parking) &&
           (all || (rounds-- > 0 && !fwdioi_wbudget_over(&f->owner->wbuf, f->plan.write_size)))) {
        uint64_t unit;
        fwdioi_parked_group_t *g = fwdioi_parking_take_first(&w->parking, &unit);
        feed_groups(f, g, !all);
    }
}

/* Pieces that reach into units with parked pieces come after those: the
 * parked ones are taken first (file bytes [lo, hi)). */
static void feed_units_of(fwdio_file_t *f, uint64_t lo, uint64_t hi)
{
    struct fwdioi_writer *w = writer_of(f);
    const uint64_t usize = f->plan.write_size;
    for (uint64_t u = lo - lo % usize; u < hi && !fwdioi_parking_empty(&w->parking); u += usize) {
        fwdioi_parked_group_t *g = fwdioi_parking_take_unit(&w->parking, u);
        if (g)
            feed_groups(f, g, 0);
    }
}

/*
 * Park pieces [first, first + count) of m (`bytes`, all in the unit at
 * `unit`, theirs starting at `packed_at` among the packed bytes) if they
 * should wait: the unit has parked pieces (they come after those, and
 * refusing them would write the parked ones a piece a call), or it has no
 * buffer, none can be had, the pieces are small and the parked messages
 * (those received over MPI: their bytes are the budget's) and the records
 * take less than half the budget, leaving the rest for buffers. 1 when
 * parked.
 */
static int park_group(fwdio_file_t *f, taken_msg_t *m, uint64_t unit, uint32_t first,
                      uint32_t count, uint64_t packed_at, uint64_t bytes)
{
    struct fwdioi_writer *w = writer_of(f);
    fwdioi_parking_t *pk = &w->parking;
    fwdioi_parked_msg_t *rec = m->rec;
    if (!fwdioi_parking_has(pk, unit)) {
        uint64_t ulen = f->plan.size - unit < f->plan.write_size ? f->plan.size - unit
                                                                 : f->plan.write_size;
        if (bytes >= ulen || bytes / count >= PARK_PIECE_MAX ||
            fwdioi_assembly_unit_buffered(&w->assembly, unit) ||
            !fwdioi_wbudget_over(&f->owner->wbuf, ulen))
            return 0;
        uint64_t more = rec || (pk->open && pk->open->hold == m->hold) ? 0 : m->hold->size;
        if (pk->msg_bytes + more + pk->memory > writer_budget(f) / 2)
            return 0;
    }
    if (!rec)
        rec = fwdioi_parking_msg(pk, m->v, m->hold, m->source);
    fwdioi_hold_t *drop = NULL;
    int rc = rec ? fwdioi_parking_park(pk, rec, unit, first, count, packed_at, bytes, &drop) : -1;
    count_parking(f);
    if (drop)
        hold_release(f, drop); /* the record made for it went unused */
    return rc == 0;
}

/* Give pieces [first, end) of m to the assembly; their bytes start at
 * `packed` (packed messages) or lie spread. */
static void add_run(fwdio_file_t *f, taken_msg_t *m, uint32_t first, uint32_t end,
                    const uint8_t *packed)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    const fwdioi_pieces_view_t *v = m->v;
    for (uint32_t i = first; i < end && s->outcome.local_error.status == FWDIO_OK; i++) {
        fwdioi_piece_t p = piece_at(v, i);
        uint64_t bad_offset = p.offset;
        const uint8_t *bytes = packed ? packed : v->spread_base + (p.offset - v->spread_offset);
        int rc = fwdioi_assembly_add(&w->assembly, p.offset, bytes, p.len, &bad_offset);
        if (rc != FWDIO_OK)
            fwdioi_errinfo_set(&s->outcome.local_error, rc, f->rank, 0, bad_offset);
        if (packed)
            packed += p.len;
    }
}

/* Take pieces [first, first + n) of m, checked, whose bytes start at
 * `packed_at` among its packed bytes: a run of them in one unit at a time,
 * parked (may_park) or given to the assembly. Their direct writes go out
 * as one job. */
static void take_pieces(fwdio_file_t *f, taken_msg_t *m, uint32_t first, uint32_t n,
                        uint64_t packed_at, int may_park)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    const fwdioi_pieces_view_t *v = m->v;
    const uint64_t usize = f->plan.write_size;
    const uint8_t *packed = v->packed ? v->packed + packed_at : NULL;
    submit_direct(f); /* another message's direct writes, if it is taking back these */
    fwdioi_hold_t *outer = w->accepting;
    w->accepting = m->hold;
    for (uint32_t i = first, end = first + n; i < end && s->outcome.local_error.status == FWDIO_OK;) {
        fwdioi_piece_t p = piece_at(v, i);
        uint64_t unit = p.offset - p.offset % usize, bytes = p.len;
        int one_unit = p.offset + p.len <= unit + usize;
        uint32_t j = i + 1;
        while (one_unit && j < end) { /* the run of pieces in the same unit */
            fwdioi_piece_t q = piece_at(v, j);
            if (q.offset < unit || q.offset + q.len > unit + usize)
                break;
            bytes += q.len;
            j++;
        }
        uint64_t at = packed ? (uint64_t)(packed - v->packed) : 0;
        if (!(one_unit && may_park && park_group(f, m, unit, i, j - i, at, bytes))) {
            if (!fwdioi_parking_empty(&w->parking))
                feed_units_of(f, p.offset, one_unit ? p.offset + 1 : p.offset + p.len);
            add_run(f, m, i, j, packed); /* (a feed above gave `accepting` back) */
        }
        if (packed)
            packed += bytes;
        i = j;
    }
    submit_direct(f);
    w->accepting = outer;
}

/* Check and take a message's pieces, then drop the reference to it. */
static void take_message(fwdio_file_t *f, const fwdioi_pieces_view_t *v, fwdioi_hold_t *hold,
                         int source)
{
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_piece_t bad;
    int ok = check_message(f, v, &bad) == 0;
    if (!ok) {
        fwdioi_errinfo_t e = {FWDIO_EPROTO, f->rank, 0, (int64_t)bad.offset,
                              FWDIOI_REASON_BAD_PIECE, source, (int64_t)bad.len};
        if (s->outcome.local_error.status == FWDIO_OK)
            s->outcome.local_error = e;
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: a message from rank %d does not match the plan",
                   f->rank, f->path, source);
    }
    if (ok) {
        taken_msg_t m = {v, hold, source, NULL};
        int may_park = !s->outcome.aborted && !s->finishing;
        take_pieces(f, &m, 0, v->npieces, 0, may_park);
    }
    /* Pieces of it that parked keep it: its record's reference goes last. */
    int parked = w->parking.open && w->parking.open->hold == hold;
    fwdioi_parking_msg_end(&w->parking);
    w->last_progress_ns = fwdioi_now_ns();
    fwdioi_trace_end(t_trace, "assemble", (int64_t)f->seq, (int64_t)v->payload,
                     FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE);
    s->stats.messages_received++;
    if (parked)
        hold_release(f, hold);
    else
        let_go(f, hold);
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
    FWDIOI_ASSERT_PROGRESS();
    recv_op_t *r = arg;
    fwdio_file_t *f = r->file;
    fwdioi_trace_end(r->trace_t0, "recv", (int64_t)f->seq, r->len, FWDIOI_TRACE_NONE,
                     r->source);
    f->s.recvs_pending--;
    if (st->MPI_ERROR != MPI_SUCCESS || f->s.outcome.aborted) {
        hold_release(f, &r->hold);
        if (st->MPI_ERROR != MPI_SUCCESS)
            fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMRECV, st->MPI_ERROR);
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    int source = r->source; /* r is released by fwdioi_writer_accept */
    if (source != f->rank && fwdioi_area_local_index(&f->owner->area, source) >= 0)
        writer_of(f)->mpi_notes--; /* announced through the area (shared_path.c) */
    fwdioi_pieces_view_t v;
    fwdioi_wire_view(r->buf, (size_t)r->len, &v);
    fwdioi_writer_accept(f, &v, &r->hold, source);
    fwdioi_writer_check_drained(f);
}

/*
 * The writer is at its budget and a message waits: unless the writes under way
 * will free enough, hand the fullest partly filled units (of any file) to
 * storage as extents, so their memory comes back whatever order the rest of
 * their bytes arrives in.
 */
static void make_room(struct fwdio_runtime *o, uint64_t need)
{
    fwdioi_reader_make_room(o, need); /* units read files keep only as a cache */
    while (fwdioi_wbudget_short(&o->wbuf, need)) {
        fwdio_file_t *best = NULL;
        uint64_t best_bytes = 0;
        for (fwdio_file_t *f = LIST_FIRST(&o->active); f; f = LIST_NEXT(f, s.links.active)) {
            if (!writer_of(f) || fwdioi_file_before_open(f))
                continue;
            uint64_t b = fwdioi_assembly_fullest_pending(&writer_of(f)->assembly);
            if (b > best_bytes) {
                best = f;
                best_bytes = b;
            }
        }
        if (!best)
            return; /* only in-flight writes hold memory: wait for them */
        uint64_t pending;
        if (fwdioi_assembly_flush_fullest(&writer_of(best)->assembly, &pending) == 0)
            return;
        best->s.stats.partial_flushes++;
    }
}

/* A message received only to be dropped: free its buffer, if it had one. */
static void on_dropped(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)st;
    free(arg);
}

/* Receive the matched message `msg` of `len` bytes from `source`. */
static void start_receive(fwdio_file_t *f, MPI_Message *msg, int len, int source)
{
    fwdioi_session_t *s = &f->s;
    recv_op_t *r = fwdioi_rt_buf_get(f->engine, sizeof *r + (size_t)len);
    MPI_Request req;
    if (!r) {
        /* Cannot buffer it: without its bytes the counts cannot add up, so the
         * file is aborted; the message is received into nothing (truncated),
         * so its sender is not blocked for ever. */
        fwdioi_outcome_nomem(f, 0);
        if (MPI_Imrecv(NULL, 0, MPI_BYTE, msg, &req) == MPI_SUCCESS)
            fwdioi_rt_track(f->engine, req, on_dropped, NULL);
        return;
    }
    r->hold = (fwdioi_hold_t){1, FWDIOI_HOLD_RECEIVED, r, sizeof *r + (size_t)len, 0, NULL};
    r->file = f;
    r->len = len;
    r->source = source;
    r->trace_t0 = fwdioi_trace_begin();
    wbuf_add(f, r->hold.size);
    int rc = MPI_Imrecv(r->buf, len, MPI_BYTE, msg, &req);
    if (rc != MPI_SUCCESS) {
        hold_release(f, &r->hold);
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMRECV, rc);
        /* The message is matched: unless it is received somehow, its sender
         * waits for ever. Into a scratch buffer, or nothing (truncated). */
        void *scratch = malloc(len > 0 ? (size_t)len : 1);
        if (MPI_Imrecv(scratch, scratch ? len : 0, MPI_BYTE, msg, &req) == MPI_SUCCESS)
            fwdioi_rt_track(f->engine, req, on_dropped, scratch);
        else
            free(scratch);
        return;
    }
    s->recvs_pending++;
    fwdioi_rt_track(f->engine, req, on_recv_done, r);
}

/* Receive the messages that have arrived for this file while the writer has
 * room; a message that does not fit waits, matched, until it does. Returns
 * the number of receives started. */
int fwdioi_writer_probe(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    struct fwdioi_writer *w = writer_of(f);
    struct fwdio_runtime *o = f->owner;
    int started = 0;
    if (!fwdioi_parking_empty(&w->parking) &&
        fwdioi_now_ns() - w->last_progress_ns > PARK_STALL_NS) {
        fwdioi_log(FWDIOI_LOG_DEBUG, "rank %d: %s: %llu parked bytes waited %d ms: written now",
                   f->rank, f->path, (unsigned long long)w->parking.bytes,
                   PARK_STALL_NS / 1000000);
        feed_parked(f, 1);
    }
    /* an aborted file only drops what arrives */
    while (started < RECVS_PER_POLL && f->s.comm != MPI_COMM_NULL) {
        if (fwdioi_rt_track_reserve(f->engine) != 0)
            break; /* no memory to track a receive: try on the next tick */
        if (!w->has_waiting) {
            int flag = 0, rc;
            MPI_Status st;
            rc = MPI_Improbe(MPI_ANY_SOURCE, FWDIOI_TAG_DATA, s->comm, &flag, &w->waiting_msg,
                             &st);
            if (rc != MPI_SUCCESS) {
                fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMPROBE, rc);
                break;
            }
            if (!flag)
                break;
            rc = MPI_Get_count(&st, MPI_BYTE, &w->waiting_len);
            if (rc != MPI_SUCCESS || w->waiting_len == MPI_UNDEFINED) {
                fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_GET_COUNT, rc != MPI_SUCCESS ? rc : MPI_ERR_COUNT);
                w->waiting_len = 0; /* still received (into nothing) below */
            }
            w->waiting_source = st.MPI_SOURCE;
            w->has_waiting = 1;
        }
        uint64_t need = sizeof(recv_op_t) + (uint64_t)w->waiting_len;
        /* An empty writer takes any message: budget + one message at most.
         * Bookkeeping alone does not make it wait: no write can shrink it. */
        if (fwdioi_wbudget_must_wait(&o->wbuf, need)) {
            make_room(o, need);
            break;
        }
        w->has_waiting = 0;
        start_receive(f, &w->waiting_msg, w->waiting_len, w->waiting_source);
        started++;
    }
    return started;
}

/* ---- opening ---- */

/* Close the descriptor of an aborted writer (no sync: the file failed). */
void fwdioi_writer_close_aborted(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->fd < 0 || s->finishing)
        return;
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_FINISH, f, on_finish_done);
    if (!job)
        return; /* the descriptor leaks rather than the file hangs */
    s->finishing = 1;
    job->fd = s->fd;
    /* a rank without a writer side has no writes */
    job->write_failed = writer_of(f) ? &writer_of(f)->write_failed : NULL;
    job->failover = fwdioi_local_failover(f); /* a moved file: its target closed too */
    job->durable = 0;
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

static void on_open_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    f->s.fd = job->fd;
    fwdioi_outcome_storage_failed(f, job->fail_time); /* fwdio_file_stats_t */
    fwdioi_local_open_done(f, job);
    if (job->status != FWDIO_OK)
        fwdioi_errinfo_set_call(&f->s.outcome.open_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    f->s.io_pending--;
    fwdioi_storage_job_free(job);
    if (f->s.outcome.aborted) {
        fwdioi_writer_close_aborted(f);
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    fwdioi_outcome_opened(f);
}

/* The open job the node-local tier held while the writer waited for room:
 * run it, or (the file aborted meanwhile) end it unrun, which opened
 * nothing (progress thread). */
static void open_go(fwdio_file_t *f, fwdioi_storage_job_t *job, int run)
{
    FWDIOI_ASSERT_PROGRESS();
    if (run)
        fwdioi_rt_io_submit(f->engine, &job->io);
    else
        job->io.done(&job->io);
}

void fwdioi_writer_open(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_writer *w = writer_of(f);
    f->s.phase = FWDIOI_PHASE_OPENING;
    fwdioi_assembly_hooks_t hooks = {.flush = flush_unit,
                                     .direct = write_direct,
                                     .reserve = reserve_unit,
                                     .unreserve = unreserve_unit,
                                     .meta = meta_unit,
                                     .arg = f};
    fwdioi_assembly_init(&w->assembly, &f->plan, f->my_writer, &hooks);
    w->assembly.overlaps = f->opts.overlaps;
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_OPEN, f, on_open_done);
    if (!job) {
        fwdioi_errinfo_set(&f->s.outcome.open_local, FWDIO_ENOMEM, f->rank, 0, 0);
        fwdioi_outcome_opened(f);
        return;
    }
    job->path = f->write_path;
    job->size = f->stream ? f->opts.append_start : f->size; /* a stream grows from there */
    job->sets_length = f->my_writer == 0 && !f->opts.keep_contents;
    job->keeps_prefix = f->stream; /* its first append_start bytes stay */
    job->no_create = f->opts.must_exist;
    /* counted from now: a job held while the writer waits for room in the
     * local store keeps an aborted file from ending before it lets go */
    f->s.io_pending++;
    if (fwdioi_local_prepare_open(f, job, open_go) == 0) /* the node-local tier */
        fwdioi_rt_io_submit(f->engine, &job->io);
}

/* ---- the writer's state, and what other modules may ask of it ---- */

int fwdioi_writer_create(fwdio_file_t *f)
{
    f->s.writer = calloc(1, sizeof *f->s.writer);
    return f->s.writer ? 0 : -1;
}

uint64_t fwdioi_writer_received(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_writer *w = writer_of(f);
    return w ? w->received : 0;
}

uint64_t fwdioi_writer_received_from(const fwdio_file_t *f, int rank)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_writer *w = writer_of(f);
    return w ? (uint64_t)(uintptr_t)fwdioi_u64map_get(&w->senders, (uint64_t)rank) : 0;
}

static int by_rank(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int fwdioi_writer_senders(const fwdio_file_t *f, int **ranks)
{
    FWDIOI_ASSERT_PROGRESS();
    *ranks = NULL;
    const struct fwdioi_writer *w = writer_of(f);
    if (!w)
        return 0;
    if (w->senders_lost)
        return -1;
    if (w->senders.n == 0)
        return 0;
    int *out = malloc(w->senders.n * sizeof *out);
    if (!out)
        return -1;
    size_t pos = 0, n = 0;
    uint64_t key;
    void *value;
    while (fwdioi_u64map_next(&w->senders, &pos, &key, &value))
        out[n++] = (int)key;
    qsort(out, n, sizeof *out, by_rank);
    *ranks = out;
    return (int)n;
}

int fwdioi_writer_waiting_len(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_writer *w = writer_of(f);
    return w && w->has_waiting ? w->waiting_len : -1;
}

int fwdioi_writer_expects_mpi(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_writer *w = writer_of(f);
    /* parked pieces too: the probe is where their wait is timed */
    return w && (w->mpi_notes > 0 || w->has_waiting || !fwdioi_parking_empty(&w->parking));
}

void fwdioi_writer_note_mpi(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_writer *w = writer_of(f);
    if (w)
        w->mpi_notes++;
}

void fwdioi_writer_end(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_writer *w = writer_of(f);
    if (!w)
        return;
    f->s.stats.writer_bytes = w->received;
    uint64_t unit;
    fwdioi_parked_group_t *g;
    while ((g = fwdioi_parking_take_first(&w->parking, &unit)) != NULL) {
        /* none left once the file is complete or failed: its messages go back */
        while (g) {
            fwdioi_parked_group_t *next = g->next;
            fwdioi_hold_t *done = fwdioi_parking_group_done(&w->parking, g);
            if (done)
                hold_release(f, done);
            g = next;
        }
    }
    fwdioi_parking_free(&w->parking);
    count_parking(f);
    fwdioi_assembly_free(&w->assembly);
    f->s.stats.writer_copied = w->assembly.copied;
    free(w->step_recv);
    free(w->deferred); /* empty: released before the session ends */
    fwdioi_u64map_free(&w->senders);
    free(w);
    f->s.writer = NULL;
}

void fwdioi_writer_drain_step(fwdio_file_t *f, uint64_t expected)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_writer *w = writer_of(f);
    w->step_expected = expected;
    w->step_draining = 1;
    check_step(f);
}

const fwdioi_role_ops_t fwdioi_writer_role = {
    .open = fwdioi_writer_open,
    .may_receive = fwdioi_writer_expects_mpi,
    .probe = fwdioi_writer_probe,
    .close_agreed = fwdioi_writer_check_drained,
    .close_aborted = fwdioi_writer_close_aborted,
    .drop_deferred = fwdioi_writer_release_deferred,
    .waiting_len = fwdioi_writer_waiting_len,
    .end = fwdioi_writer_end,
};
