/* SPDX-License-Identifier: BSD-3-Clause */
#include "read/reader.h"

#include "local/local_restart.h"
#include "log.h"
#include "plan/plan.h"
#include "read/read_wire.h"
#include "agreement/outcome.h"
#include "storage/storage.h"
#include "trace.h"
#include "write/budget.h"

#include <stdlib.h>
#include <string.h>

/* Request messages taken per poll, and the pieces that may wait for their
 * units before no more requests are taken (their bookkeeping is bounded so;
 * the rest wait in MPI). */
enum { REQUESTS_PER_POLL = 64, MAX_WAITING_PIECES = 65536 };

/* Alignment of unit buffers. */
enum { PAGE_ALIGN = 4096 };

/* Largest piece: MPI counts are ints. */
#define MAX_PIECE ((uint64_t)1 << 30)

/* Largest request message taken (bigger ones cannot be ours). */
#define MAX_REQUEST_MESSAGE (1024 * sizeof(fwdioi_read_request_t))

/* A piece a rank asked for, waiting for its unit. */
typedef struct waiter {
    struct waiter *next;
    int source;
    uint64_t id, offset, len;
} waiter_t;

typedef enum unit_state {
    UNIT_QUEUED,  /* wanted, waiting for memory */
    UNIT_READING, /* its pread is under way */
    UNIT_READY,   /* in memory */
    UNIT_FAILED   /* its pread failed: its pieces are answered with the error */
} unit_state_t;

typedef struct unit {
    uint64_t index;     /* file offset / write_size */
    uint64_t base, len; /* the file's bytes [base, base + len) */
    uint8_t *buf;
    unit_state_t state;
    int sends;          /* sends of its bytes in flight */
    waiter_t *waiters, **waiters_tail;
    fwdioi_errinfo_t err;
    struct unit *hash_next;
    TAILQ_ENTRY(unit) link; /* in `queued` (QUEUED) or `idle` (READY, unused) */
    int in_idle;
    int answering;          /* answer_waiters is sending from it: an abort leaves it be */
} unit_t;

TAILQ_HEAD(unit_list, unit);

struct fwdioi_reader {
    unit_t **hash;
    size_t hash_cap, nunits;
    struct unit_list queued; /* in the order first wanted */
    struct unit_list idle;   /* least recently used first */
    uint64_t requests;       /* request messages taken (what the close counts) */
    uint64_t waiting;        /* pieces waiting for their units */
    int recvs;               /* request receives in flight */
    int reading;             /* unit preads in flight (on the I/O pool) */
    int close_deferred;      /* aborted with preads in flight: close after them */
    int closing, closed;     /* the descriptor's close (after the last answer) */
};

/* A request message being received. */
typedef struct request_recv {
    fwdio_file_t *file;
    int source, len;
    uint8_t buf[];
} request_recv_t;

/* A send of an answer: a piece's bytes (unit set) or its header. */
typedef struct answer_send {
    fwdio_file_t *file;
    unit_t *unit;
    fwdioi_read_header_t header;
} answer_send_t;

static struct fwdioi_reader *reader_of(const fwdio_file_t *f) { return f->s.reader; }

static uint64_t budget_of(const fwdio_file_t *f)
{
    return fwdioi_rt_config(f->engine)->writer_buffer;
}

/* The end of a receive into nothing. */
static void on_discarded(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)arg;
    (void)st;
}

/* ---- units ---- */

static size_t slot_of(const struct fwdioi_reader *rd, uint64_t index)
{
    return (size_t)((index * 0x9e3779b97f4a7c15ull) >> 7) & (rd->hash_cap - 1);
}

static unit_t *unit_find(const struct fwdioi_reader *rd, uint64_t index)
{
    for (unit_t *u = rd->hash[slot_of(rd, index)]; u; u = u->hash_next)
        if (u->index == index)
            return u;
    return NULL;
}

static int hash_grow(struct fwdioi_reader *rd)
{
    size_t cap = rd->hash_cap * 2;
    unit_t **h = calloc(cap, sizeof *h);
    if (!h)
        return -1;
    unit_t **old = rd->hash;
    size_t old_cap = rd->hash_cap;
    rd->hash = h;
    rd->hash_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        for (unit_t *u = old[i], *next; u; u = next) {
            next = u->hash_next;
            size_t s = slot_of(rd, u->index);
            u->hash_next = h[s];
            h[s] = u;
        }
    }
    free(old);
    return 0;
}

static unit_t *unit_new(fwdio_file_t *f, uint64_t index)
{
    struct fwdioi_reader *rd = reader_of(f);
    if (rd->nunits + 1 > rd->hash_cap / 2 && hash_grow(rd) != 0)
        return NULL;
    unit_t *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    const uint64_t ws = f->plan.write_size;
    u->index = index;
    u->base = index * ws;
    u->len = f->size - u->base < ws ? f->size - u->base : ws;
    u->state = UNIT_QUEUED;
    u->waiters_tail = &u->waiters;
    u->err = FWDIOI_ERRINFO_OK;
    size_t s = slot_of(rd, index);
    u->hash_next = rd->hash[s];
    rd->hash[s] = u;
    rd->nunits++;
    TAILQ_INSERT_TAIL(&rd->queued, u, link);
    return u;
}

/* Forget a unit (nothing waits for it and nothing is sent from it). */
static void unit_free(fwdio_file_t *f, unit_t *u)
{
    struct fwdioi_reader *rd = reader_of(f);
    unit_t **pp = &rd->hash[slot_of(rd, u->index)];
    while (*pp != u)
        pp = &(*pp)->hash_next;
    *pp = u->hash_next;
    rd->nunits--;
    if (u->state == UNIT_QUEUED)
        TAILQ_REMOVE(&rd->queued, u, link);
    else if (u->in_idle)
        TAILQ_REMOVE(&rd->idle, u, link);
    if (u->buf) {
        free(u->buf);
        fwdioi_wbudget_sub(&f->owner->wbuf, &f->s.wbuf, u->len);
    }
    for (waiter_t *w = u->waiters, *next; w; w = next) {
        next = w->next;
        rd->waiting--;
        free(w);
    }
    free(u);
}

/* Nothing waits for a ready unit and nothing is sent from it: it stays as a
 * cache until its memory is wanted (or the file ends, or it failed). */
static void unit_settle(fwdio_file_t *f, unit_t *u)
{
    struct fwdioi_reader *rd = reader_of(f);
    if (u->sends > 0 || u->waiters || u->in_idle)
        return;
    if (u->state == UNIT_READY && !f->s.outcome.aborted) {
        TAILQ_INSERT_TAIL(&rd->idle, u, link);
        u->in_idle = 1;
    } else if (u->state == UNIT_FAILED || f->s.outcome.aborted) {
        unit_free(f, u); /* a failed unit keeps no memory: wanted again, it is read again */
    }
}

/* ---- answers ---- */

static void schedule(fwdio_file_t *f);
static void close_aborted(fwdio_file_t *f);

static void on_answer_sent(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    answer_send_t *a = arg;
    fwdio_file_t *f = a->file;
    f->s.sends_pending--;
    if (a->unit) {
        a->unit->sends--;
        unit_settle(f, a->unit);
    }
    free(a);
    if (st->MPI_ERROR != MPI_SUCCESS)
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_READ_ISEND, st->MPI_ERROR);
    schedule(f); /* the unit's memory may be what the next one waits for */
    fwdioi_outcome_read_check_done(f);
}

/* Post one send of an answer; 0, or -1 (the file is aborted). */
static int post(fwdio_file_t *f, answer_send_t *a, const void *buf, uint64_t len, int dest, int tag)
{
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        free(a);
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_READ_ISEND, rc);
        return -1;
    }
    f->s.sends_pending++;
    f->s.stats.messages_sent++;
    if (a->unit)
        a->unit->sends++;
    fwdioi_rt_track(f->engine, req, on_answer_sent, a);
    return 0;
}

/* Answer one piece from its unit: its bytes, then the header that names
 * them (requester.h: a header always has its bytes behind it). */
static void answer(fwdio_file_t *f, unit_t *u, const waiter_t *w, int status)
{
    answer_send_t *data = NULL, *head = malloc(sizeof *head);
    if (status == FWDIO_OK)
        data = malloc(sizeof *data);
    if (!head || (status == FWDIO_OK && !data)) {
        free(head);
        free(data);
        fwdioi_outcome_nomem(f, w->offset);
        return;
    }
    if (data) {
        *data = (answer_send_t){f, u, {0}};
        f->s.stats.bytes_to_mpi += w->len;
        if (post(f, data, u->buf + (w->offset - u->base), w->len, w->source,
                 FWDIOI_TAG_READ_DATA) != 0) {
            free(head);
            return;
        }
    }
    *head = (answer_send_t){f, NULL, {w->id, w->offset, w->len, status}};
    post(f, head, &head->header, sizeof head->header, w->source, FWDIOI_TAG_READ_HDR);
}

/* Answer every piece waiting for a unit that is ready or failed. */
static void answer_waiters(fwdio_file_t *f, unit_t *u)
{
    struct fwdioi_reader *rd = reader_of(f);
    /* A send that fails aborts the file from inside answer(); the abort
     * frees the units nothing sends from, which must not include this one
     * while the loop still looks at it. */
    u->answering = 1;
    while (u->waiters && !f->s.outcome.aborted) {
        waiter_t *w = u->waiters;
        u->waiters = w->next;
        if (!u->waiters)
            u->waiters_tail = &u->waiters;
        rd->waiting--;
        answer(f, u, w, u->state == UNIT_READY ? FWDIO_OK : (int)u->err.status);
        free(w);
    }
    u->answering = 0;
    unit_settle(f, u);
}

/* ---- reading units ---- */

static void on_unit_read(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    unit_t *u = job->hold;
    fwdioi_session_t *s = &f->s;
    struct fwdioi_reader *rd = reader_of(f);
    s->io_pending--;
    rd->reading--;
    s->stats.pwrite_calls++;
    s->stats.pwrite_seconds += job->seconds;
    s->stats.bytes_from_storage += job->bytes_written;
    fwdioi_outcome_storage_failed(f, job->fail_time); /* fwdio_file_stats_t */
    if (job->status != FWDIO_OK) {
        fwdioi_errinfo_set_call(&u->err, job->status, f->rank, job->sys_errno, job->err_offset,
                                job->err_call);
        fwdioi_errinfo_set_call(&s->outcome.local_error, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: pread of %s at %llu failed: %s", f->rank, f->path,
                   (unsigned long long)job->err_offset, fwdio_strerror(job->status));
        free(u->buf);
        u->buf = NULL;
        fwdioi_wbudget_sub(&f->owner->wbuf, &f->s.wbuf, u->len);
        u->state = UNIT_FAILED;
    } else {
        u->state = UNIT_READY;
    }
    fwdioi_storage_job_free(job);
    answer_waiters(f, u);
    if (s->outcome.aborted) {
        if (rd->close_deferred && rd->reading == 0) {
            rd->close_deferred = 0;
            close_aborted(f); /* no pread uses the descriptor now */
        }
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    schedule(f);
    fwdioi_outcome_read_check_done(f);
}

/* Read the queued units, oldest first, while writer_buffer has room (an
 * empty budget takes any one unit). */
static void schedule(fwdio_file_t *f)
{
    struct fwdioi_reader *rd = reader_of(f);
    struct fwdio_runtime *o = f->owner;
    unit_t *u;
    while (!f->s.outcome.aborted && (u = TAILQ_FIRST(&rd->queued)) != NULL) {
        if (fwdioi_wbudget_must_wait(&o->wbuf, u->len))
            fwdioi_reader_make_room(o, u->len);
        if (fwdioi_wbudget_must_wait(&o->wbuf, u->len))
            return; /* when a send or a read of a unit ends */
        fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_READ, f, on_unit_read);
        void *buf = NULL;
        /* page aligned: a file system may split a request into an
         * unaligned buffer (FUSE does) */
        if (job && posix_memalign(&buf, PAGE_ALIGN, (size_t)u->len) != 0)
            buf = NULL;
        u->buf = buf;
        if (!u->buf) {
            if (job)
                fwdioi_storage_job_free(job);
            fwdioi_outcome_nomem(f, u->base);
            return;
        }
        TAILQ_REMOVE(&rd->queued, u, link);
        u->state = UNIT_READING;
        fwdioi_wbudget_add(&f->owner->wbuf, &f->s.wbuf, u->len);
        job->fd = fwdioi_local_restart_fd(f, u->base, u->len, f->s.fd);
        job->dst = u->buf;
        job->base = u->base;
        job->len = u->len;
        job->hold = u;
        f->s.io_pending++;
        rd->reading++;
        fwdioi_rt_io_submit_any(f->engine, &job->io); /* several preads in flight */
    }
}

void fwdioi_reader_make_room(struct fwdio_runtime *o, uint64_t need)
{
    FWDIOI_ASSERT_PROGRESS();
    for (fwdio_file_t *g = LIST_FIRST(&o->active); g; g = LIST_NEXT(g, s.links.active)) {
        struct fwdioi_reader *rd = g->s.reader;
        if (!rd)
            continue;
        unit_t *u;
        while (fwdioi_wbudget_over(&o->wbuf, need) && (u = TAILQ_FIRST(&rd->idle)) != NULL)
            unit_free(g, u);
    }
}

/* ---- requests ---- */

/* Add a waiting piece to unit `index`, or answer it now. 0, or -1 (aborted). */
static int want(fwdio_file_t *f, uint64_t index, int source, uint64_t id, uint64_t offset,
                uint64_t len)
{
    struct fwdioi_reader *rd = reader_of(f);
    unit_t *u = unit_find(rd, index);
    if (!u)
        u = unit_new(f, index);
    waiter_t *w = u ? malloc(sizeof *w) : NULL;
    if (!w) {
        fwdioi_outcome_nomem(f, offset);
        return -1;
    }
    *w = (waiter_t){NULL, source, id, offset, len};
    if (u->state == UNIT_FAILED) { /* not kept, but while its answers go */
        answer(f, u, w, (int)u->err.status);
        free(w);
        return f->s.outcome.aborted ? -1 : 0;
    }
    if (u->state == UNIT_READY) {
        if (u->in_idle) {
            TAILQ_REMOVE(&rd->idle, u, link);
            u->in_idle = 0;
        }
        u->answering = 1; /* as in answer_waiters: a failed send must not free u */
        answer(f, u, w, FWDIO_OK);
        u->answering = 0;
        free(w);
        unit_settle(f, u);
        return f->s.outcome.aborted ? -1 : 0;
    }
    *u->waiters_tail = w;
    u->waiters_tail = &w->next;
    rd->waiting++;
    return 0;
}

/*
 * One request: the bytes of [offset, offset + len) in this reader's
 * stripes, cut at its units. A request that is not within the file, or
 * holds none of this reader's bytes, comes from a rank with another plan:
 * the file is aborted (its requester would wait for ever otherwise).
 */
static void take_request(fwdio_file_t *f, int source, const fwdioi_read_request_t *q)
{
    const fwdioi_plan_t *p = &f->plan;
    const uint64_t ws = p->write_size, ss = p->stripe_size;
    int found = 0;
    if (q->len > 0 && q->offset <= f->size && q->len <= f->size - q->offset) {
        const uint64_t end = q->offset + q->len;
        for (uint64_t s = fwdioi_plan_next_stripe(p, f->my_writer, q->offset / ss);
             s < p->nstripes && s * ss < end; s = fwdioi_plan_next_stripe(p, f->my_writer, s + 1)) {
            uint64_t lo = s * ss > q->offset ? s * ss : q->offset;
            uint64_t hi = (s + 1) * ss < end ? (s + 1) * ss : end;
            while (lo < hi) {
                uint64_t unit_end = (lo / ws + 1) * ws;
                uint64_t n = (unit_end < hi ? unit_end : hi) - lo;
                if (n > MAX_PIECE)
                    n = MAX_PIECE;
                if (want(f, lo / ws, source, q->id, lo, n) != 0)
                    return;
                found = 1;
                lo += n;
            }
        }
    }
    if (!found) {
        fwdioi_errinfo_t why = {FWDIO_EPROTO, f->rank, 0, (int64_t)q->offset,
                                FWDIOI_REASON_BAD_READ, source, (int64_t)q->len};
        fwdioi_outcome_abort(f, &why, 1);
    }
}

static void on_request_received(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    request_recv_t *rr = arg;
    fwdio_file_t *f = rr->file;
    struct fwdioi_reader *rd = reader_of(f);
    rd->recvs--;
    f->s.recvs_pending--;
    if (st->MPI_ERROR != MPI_SUCCESS)
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMRECV, st->MPI_ERROR);
    if (!f->s.outcome.aborted) {
        f->s.stats.messages_received++;
        size_t n = (size_t)rr->len / sizeof(fwdioi_read_request_t);
        for (size_t i = 0; i < n && !f->s.outcome.aborted; i++) {
            fwdioi_read_request_t q;
            memcpy(&q, rr->buf + i * sizeof q, sizeof q);
            take_request(f, rr->source, &q);
        }
        schedule(f);
    }
    free(rr);
    fwdioi_outcome_read_check_done(f);
}

int fwdioi_reader_probe(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_reader *rd = reader_of(f);
    /* memory another file (or a writer) gave back may let queued units in */
    if (!TAILQ_EMPTY(&rd->queued))
        schedule(f);
    int n = 0;
    while (n < REQUESTS_PER_POLL && rd->waiting < MAX_WAITING_PIECES &&
           f->s.comm != MPI_COMM_NULL) {
        if (fwdioi_rt_track_reserve(f->engine) != 0)
            break;
        int flag = 0, len = 0;
        MPI_Message msg;
        MPI_Status st;
        int rc = MPI_Improbe(MPI_ANY_SOURCE, FWDIOI_TAG_READ_REQ, f->s.comm, &flag, &msg, &st);
        if (rc != MPI_SUCCESS) {
            fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMPROBE, rc);
            break;
        }
        if (!flag)
            break;
        rc = MPI_Get_count(&st, MPI_BYTE, &len);
        int good = rc == MPI_SUCCESS && len > 0 && (size_t)len <= MAX_REQUEST_MESSAGE &&
                   (size_t)len % sizeof(fwdioi_read_request_t) == 0;
        request_recv_t *rr = good ? malloc(sizeof *rr + (size_t)len) : NULL;
        MPI_Request req;
        if (!rr) {
            /* not a request of our plan (or no memory): received into
             * nothing, so its sender is not held, and the file aborted */
            fwdioi_errinfo_t why = {good ? FWDIO_ENOMEM : FWDIO_EPROTO, f->rank, 0, 0,
                                    good ? FWDIOI_CALL_NONE : FWDIOI_REASON_BAD_READ,
                                    st.MPI_SOURCE, len};
            if (MPI_Imrecv(NULL, 0, MPI_BYTE, &msg, &req) == MPI_SUCCESS)
                fwdioi_rt_track(f->engine, req, on_discarded, NULL);
            fwdioi_outcome_abort(f, &why, 1);
            break;
        }
        *rr = (request_recv_t){f, st.MPI_SOURCE, len};
        rc = MPI_Imrecv(rr->buf, len, MPI_BYTE, &msg, &req);
        if (rc != MPI_SUCCESS) {
            free(rr);
            fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMRECV, rc);
            break;
        }
        rd->requests++;
        rd->recvs++;
        f->s.recvs_pending++;
        fwdioi_rt_track(f->engine, req, on_request_received, rr);
        n++;
    }
    return n;
}

int fwdioi_reader_busy(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_reader *rd = reader_of(f);
    return rd && !rd->closing;
}

/* ---- opening and closing ---- */

static void on_open_done(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    fwdioi_session_t *s = &f->s;
    s->fd = job->fd;
    fwdioi_outcome_storage_failed(f, job->fail_time); /* fwdio_file_stats_t */
    if (job->status != FWDIO_OK) {
        fwdioi_errinfo_set_call(&s->outcome.open_local, job->status, f->rank, job->sys_errno,
                                job->err_offset, job->err_call);
    } else {
        /* the agreement keeps the largest of both: the size, and minus the
         * smallest (session.c compares them) */
        s->outcome.open_local.offset = (int64_t)job->size;
        s->outcome.open_local.other_value = -(int64_t)job->size;
    }
    s->io_pending--;
    fwdioi_storage_job_free(job);
    if (s->outcome.aborted) {
        close_aborted(f);
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    fwdioi_outcome_opened(f);
}

void fwdioi_reader_open(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    if (fwdioi_local_restart_open(f))
        return; /* the local copies chosen: nothing to open (local_restart.h) */
    f->s.phase = FWDIOI_PHASE_OPENING;
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_OPEN, f, on_open_done);
    if (!job) {
        fwdioi_errinfo_set(&f->s.outcome.open_local, FWDIO_ENOMEM, f->rank, 0, 0);
        fwdioi_outcome_opened(f);
        return;
    }
    job->path = f->path;
    job->read_only = 1;
    f->s.io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

static void on_closed(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    struct fwdioi_reader *rd = reader_of(f);
    f->s.io_pending--;
    f->s.fd = -1;
    rd->closed = 1;
    fwdioi_storage_job_free(job); /* a read-only close has nothing to lose */
    fwdioi_outcome_read_check_done(f);
}

int fwdioi_reader_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_reader *rd = reader_of(f);
    fwdioi_session_t *s = &f->s;
    if (rd->closed)
        return 1;
    uint64_t expected = s->expected_bytes[f->my_writer];
    if (!s->close_agreed || rd->requests < expected || rd->recvs > 0 || rd->waiting > 0 ||
        !TAILQ_EMPTY(&rd->queued) || s->io_pending > 0 || s->sends_pending > 0 || rd->closing)
        return 0;
    if (rd->requests > expected)
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s: %llu read requests taken, %llu announced",
                   f->rank, f->path, (unsigned long long)rd->requests,
                   (unsigned long long)expected);
    unit_t *u;
    while ((u = TAILQ_FIRST(&rd->idle)) != NULL) /* the cache goes with the file */
        unit_free(f, u);
    rd->closing = 1;
    s->finishing = 1;
    if (s->fd < 0) {
        rd->closed = 1;
        return 1;
    }
    fwdioi_storage_job_t *job = fwdioi_storage_job_new(FWDIOI_STORAGE_FINISH, f, on_closed);
    if (!job) {
        rd->closed = 1; /* the descriptor leaks rather than the file hangs */
        return 1;
    }
    job->fd = s->fd;
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
    return 0;
}

static void on_closed_aborted(fwdioi_storage_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = job->owner;
    f->s.io_pending--;
    f->s.fd = -1;
    f->s.stats.sync_seconds += job->seconds;
    fwdioi_storage_job_free(job);
    fwdioi_outcome_finish_if_aborted(f);
}

/* Close the descriptor of an aborted file, without a sync (nothing was
 * written), once (progress thread). */
static void close_aborted(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->fd < 0 || s->finishing)
        return;
    fwdioi_storage_job_t *job =
        fwdioi_storage_job_new(FWDIOI_STORAGE_FINISH, f, on_closed_aborted);
    if (!job)
        return; /* the descriptor leaks rather than the file hangs */
    s->finishing = 1;
    job->fd = s->fd;
    job->durable = 0;
    s->io_pending++;
    fwdioi_rt_io_submit(f->engine, &job->io);
}

void fwdioi_reader_close_aborted(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_reader *rd = reader_of(f);
    if (rd && rd->reading > 0) {
        rd->close_deferred = 1; /* preads on other threads still use the descriptor */
        return;
    }
    close_aborted(f);
}

void fwdioi_reader_abort(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_reader *rd = reader_of(f);
    if (!rd)
        return;
    for (size_t i = 0; i < rd->hash_cap; i++) {
        for (unit_t *u = rd->hash[i], *next; u; u = next) {
            next = u->hash_next;
            if (u->state != UNIT_READING && u->sends == 0 && !u->answering)
                unit_free(f, u); /* else when its read, its last send or its answers end */
        }
    }
}

void fwdioi_reader_report(FILE *out, const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_reader *rd = reader_of(f);
    const fwdioi_session_t *s = &f->s;
    if (!rd)
        return;
    size_t queued = 0, idle = 0;
    const unit_t *u;
    TAILQ_FOREACH(u, &rd->queued, link)
        queued++;
    TAILQ_FOREACH(u, &rd->idle, link)
        idle++;
    fprintf(out, "  reader %d: took %llu read request(s)", f->my_writer,
            (unsigned long long)rd->requests);
    if (s->close_agreed)
        fprintf(out, " of %llu announced", (unsigned long long)s->expected_bytes[f->my_writer]);
    fprintf(out, "; %llu piece(s) wait for %zu unit(s) queued for memory (%llu of %llu bytes "
                 "held) and %d pread(s) under way; %zu unit(s) cached\n",
            (unsigned long long)rd->waiting, queued, (unsigned long long)f->owner->wbuf.held,
            (unsigned long long)budget_of(f), s->io_pending, idle);
}

int fwdioi_reader_create(fwdio_file_t *f)
{
    struct fwdioi_reader *rd = calloc(1, sizeof *rd);
    if (!rd)
        return -1;
    rd->hash_cap = 64;
    rd->hash = calloc(rd->hash_cap, sizeof *rd->hash);
    if (!rd->hash) {
        free(rd);
        return -1;
    }
    TAILQ_INIT(&rd->queued);
    TAILQ_INIT(&rd->idle);
    f->s.reader = rd;
    return 0;
}

void fwdioi_reader_free(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_reader *rd = f->s.reader;
    if (!rd)
        return;
    for (size_t i = 0; i < rd->hash_cap; i++)
        while (rd->hash[i])
            unit_free(f, rd->hash[i]);
    free(rd->hash);
    free(rd);
    f->s.reader = NULL;
}

const fwdioi_role_ops_t fwdioi_reader_role = {
    .open = fwdioi_reader_open,
    .may_receive = fwdioi_reader_busy,
    .probe = fwdioi_reader_probe,
    .done = fwdioi_reader_done,
    .close_aborted = fwdioi_reader_close_aborted,
};
