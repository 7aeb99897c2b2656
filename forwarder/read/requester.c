/* SPDX-License-Identifier: BSD-3-Clause */
#include "read/requester.h"

#include "log.h"
#include "plan/plan.h"
#include "ranges.h"
#include "read/reader.h"
#include "agreement/outcome.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

/* Headers taken per poll: keeps one busy file from starving the others. */
enum { HEADERS_PER_POLL = 64 };

/* The bytes one reader owns of a read. */
typedef struct read_part {
    int writer;
    uint64_t asked, accounted;
} read_part_t;

/* One fwdio_read, from the call until its callback has run. */
typedef struct fwdioi_read {
    fwdioi_task_t task; /* first: the call queues it for the progress thread */
    fwdioi_call_t call; /* its done callback */
    fwdio_file_t *file;
    uint8_t *buf;
    uint64_t len, offset;
    fwdio_read_cb_t done;
    void *arg;
    /* progress */
    uint64_t id;
    int status;
    uint64_t accounted; /* bytes received, or failed at their reader */
    int recvs;          /* receives of its bytes in flight */
    int routed;         /* in the table of reads under way */
    fwdioi_ranges_t got; /* bytes accounted, relative to offset: none twice */
    int nparts;
    read_part_t *parts;
} fwdioi_read_t;

/* The reads of one rank of one file (progress). */
struct fwdioi_requests {
    fwdioi_task_list_t held; /* issued before the open was decided, in order */
    /* reads under way by id: table[i] is read id table_base + i (NULL once
     * ended); ids are given in routing order */
    fwdioi_read_t **table;
    size_t head, len, cap;
    uint64_t table_base;
    uint64_t next_id;
    int pending;  /* reads in the table */
    int *part_of; /* [nwriters] scratch: a writer's part in the read being routed */
};

/* A request on its way to a reader. */
typedef struct request_send {
    fwdio_file_t *file;
    fwdioi_read_request_t req;
} request_send_t;

/* The bytes of one piece being received into a read's buffer. */
typedef struct piece_recv {
    fwdio_file_t *file;
    fwdioi_read_t *read;
    uint64_t len;
    uint64_t trace_t0;
} piece_recv_t;

static struct fwdioi_requests *requests_of(fwdio_file_t *f) { return f->s.requests; }

/* ---- ending a read ---- */

static void run_read_done(fwdioi_call_t *call)
{
    fwdioi_read_t *r = (fwdioi_read_t *)((char *)call - offsetof(fwdioi_read_t, call));
    uint64_t t_trace = fwdioi_trace_begin();
    if (r->done)
        r->done(r->file, r->buf, r->status, r->arg);
    fwdioi_trace_end(t_trace, "read callback", (int64_t)r->file->seq, (int64_t)r->len,
                     (int64_t)r->offset, FWDIOI_TRACE_NONE);
    free(r);
}

static void table_remove(struct fwdioi_requests *q, fwdioi_read_t *r)
{
    q->table[r->id - q->table_base] = NULL;
    r->routed = 0;
    q->pending--;
    while (q->head < q->len && !q->table[q->head]) /* ended reads leave the front */
        q->head++;
}

/* The read ends with `status` (unless it failed already): its callback is
 * delivered. */
static void end_read(fwdio_file_t *f, fwdioi_read_t *r, int status)
{
    struct fwdioi_requests *q = requests_of(f);
    if (r->status == FWDIO_OK)
        r->status = status;
    if (r->routed)
        table_remove(q, r);
    fwdioi_ranges_free(&r->got);
    free(r->parts);
    r->parts = NULL;
    fwdioi_rt_deliver(f->engine, &r->call);
}

/* The status reads end with once the file failed: its abort's, else its
 * open's. */
static int failed_status(const fwdio_file_t *f)
{
    if (f->s.outcome.aborted)
        return (int)f->s.outcome.abort_info.status;
    return (int)f->s.outcome.open_agreed.status;
}

/* ---- sending a read's requests ---- */

static void on_request_sent(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    request_send_t *rs = arg;
    fwdio_file_t *f = rs->file;
    free(rs);
    f->s.sends_pending--;
    if (st->MPI_ERROR != MPI_SUCCESS)
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_READ_ISEND, st->MPI_ERROR);
    fwdioi_outcome_read_check_done(f);
}

/* Ask writer w's rank for the read's bytes it owns. 0, or -1 (the file is
 * aborted). */
static int send_request(fwdio_file_t *f, fwdioi_read_t *r, int w)
{
    request_send_t *rs = malloc(sizeof *rs);
    if (!rs) {
        fwdioi_outcome_nomem(f, r->offset);
        return -1;
    }
    rs->file = f;
    rs->req = (fwdioi_read_request_t){r->id, r->offset, r->len};
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Isend(&rs->req, (int)sizeof rs->req, MPI_BYTE,
                             fwdioi_plan_writer_rank(&f->plan, w), FWDIOI_TAG_READ_REQ, f->s.comm,
                             &req);
    if (rc != MPI_SUCCESS) {
        free(rs);
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_READ_ISEND, rc);
        return -1;
    }
    f->s.sends_pending++;
    f->s.sent_bytes[w]++; /* requests per reader: what each reader waits for at the close */
    f->s.stats.messages_sent++;
    fwdioi_rt_track(f->engine, req, on_request_sent, rs);
    return 0;
}

/* Room for one more read in the table; 0, or -1 without memory. */
static int table_reserve(struct fwdioi_requests *q)
{
    if (q->len < q->cap)
        return 0;
    if (q->head > 0) { /* ended reads at the front: move the rest down */
        memmove(q->table, q->table + q->head, (q->len - q->head) * sizeof *q->table);
        q->len -= q->head;
        q->table_base += q->head;
        q->head = 0;
        if (q->len < q->cap)
            return 0;
    }
    size_t cap = q->cap ? 2 * q->cap : 64;
    fwdioi_read_t **t = realloc(q->table, cap * sizeof *t);
    if (!t)
        return -1;
    q->table = t;
    q->cap = cap;
    return 0;
}

/* Cut the read into its readers' parts (writer order of first bytes). */
static int make_parts(fwdio_file_t *f, fwdioi_read_t *r)
{
    struct fwdioi_requests *q = requests_of(f);
    const fwdioi_plan_t *p = &f->plan;
    const uint64_t end = r->offset + r->len;
    r->parts = malloc((size_t)p->nwriters * sizeof *r->parts);
    if (!r->parts)
        return -1;
    for (int w = 0; w < p->nwriters; w++)
        q->part_of[w] = -1;
    for (uint64_t s = r->offset / p->stripe_size; s * p->stripe_size < end; s++) {
        uint64_t lo = s * p->stripe_size, hi = lo + p->stripe_size;
        if (lo < r->offset)
            lo = r->offset;
        if (hi > end)
            hi = end;
        int w = fwdioi_plan_stripe_writer(p, s);
        if (q->part_of[w] < 0) {
            q->part_of[w] = r->nparts;
            r->parts[r->nparts++] = (read_part_t){w, 0, 0};
        }
        r->parts[q->part_of[w]].asked += hi - lo;
    }
    return 0;
}

/* Send a read's requests, or end it at once (nothing to read, past the end,
 * the file failed). */
static void route(fwdio_file_t *f, fwdioi_read_t *r)
{
    struct fwdioi_requests *q = requests_of(f);
    if (f->s.outcome.aborted || f->s.outcome.open_agreed.status != FWDIO_OK) {
        end_read(f, r, failed_status(f));
        return;
    }
    if (r->offset > f->size || r->len > f->size - r->offset) {
        end_read(f, r, FWDIO_ERANGE); /* issued before the size was known */
        return;
    }
    if (r->len == 0) {
        end_read(f, r, FWDIO_OK);
        return;
    }
    if (make_parts(f, r) != 0 || table_reserve(q) != 0) {
        fwdioi_outcome_nomem(f, r->offset);
        end_read(f, r, FWDIO_ENOMEM);
        return;
    }
    r->id = q->next_id++;
    if (q->len == 0)
        q->table_base = r->id;
    q->table[q->len++] = r;
    r->routed = 1;
    q->pending++;
    for (int i = 0; i < r->nparts; i++)
        if (send_request(f, r, r->parts[i].writer) != 0)
            return; /* aborted: the read ends with the file (fwdioi_requester_abort) */
}

/* Task: a fwdio_read reaches the progress thread. */
static void read_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_read_t *r = (fwdioi_read_t *)task;
    fwdio_file_t *f = r->file;
    if (fwdioi_file_before_open(f) && !f->s.outcome.aborted) {
        STAILQ_INSERT_TAIL(&requests_of(f)->held, &r->task, link);
        return;
    }
    route(f, r);
}

int fwdioi_requester_submit(fwdio_file_t *f, void *buf, uint64_t len, uint64_t offset,
                        fwdio_read_cb_t done, void *arg)
{
    fwdioi_read_t *r = calloc(1, sizeof *r);
    if (!r)
        return FWDIO_ENOMEM;
    r->task.run = read_task;
    r->call.run = run_read_done;
    r->file = f;
    r->buf = buf;
    r->len = len;
    r->offset = offset;
    r->done = done;
    r->arg = arg;
    r->status = FWDIO_OK;
    FWDIOI_ASSERT_LOCKED(f->engine);
    fwdioi_rt_submit(f->engine, &r->task);
    return FWDIO_OK;
}

void fwdioi_requester_open_decided(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_requests *q = requests_of(f);
    while (!STAILQ_EMPTY(&q->held)) {
        fwdioi_task_t *t = STAILQ_FIRST(&q->held);
        STAILQ_REMOVE_HEAD(&q->held, link);
        route(f, (fwdioi_read_t *)t);
    }
}

/* ---- receiving the answers ---- */

static read_part_t *part_of_writer(fwdioi_read_t *r, int w)
{
    for (int i = 0; i < r->nparts; i++)
        if (r->parts[i].writer == w)
            return &r->parts[i];
    return NULL;
}

/* Bytes of the read are accounted for: end it when all are. */
static void account(fwdio_file_t *f, fwdioi_read_t *r, uint64_t bytes)
{
    r->accounted += bytes;
    if (r->accounted == r->len && r->recvs == 0)
        end_read(f, r, FWDIO_OK);
}

static void on_piece_received(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    piece_recv_t *pr = arg;
    fwdio_file_t *f = pr->file;
    fwdioi_read_t *r = pr->read;
    uint64_t len = pr->len;
    fwdioi_trace_end(pr->trace_t0, "read piece", (int64_t)f->seq, (int64_t)len,
                     FWDIOI_TRACE_NONE, st->MPI_SOURCE);
    free(pr);
    f->s.recvs_pending--;
    r->recvs--;
    /* An abort this piece causes ends the read at once if nothing else of
     * it is in flight (fwdioi_requester_abort, from the abort): `r` is
     * not ours any more then. Only an abort from before leaves it here. */
    const int aborted_before = f->s.outcome.aborted;
    int count = 0;
    if (st->MPI_ERROR != MPI_SUCCESS) {
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_READ_IRECV, st->MPI_ERROR);
    } else if (MPI_Get_count(st, MPI_BYTE, &count) != MPI_SUCCESS || (uint64_t)count != len) {
        /* fewer bytes than its header announced */
        fwdioi_errinfo_t why = {FWDIO_EPROTO, f->rank, 0, 0, FWDIOI_REASON_BAD_READ,
                                st->MPI_SOURCE, (int64_t)len};
        fwdioi_outcome_abort(f, &why, 1);
    }
    if (f->s.outcome.aborted) {
        if (aborted_before && r->recvs == 0)
            end_read(f, r, failed_status(f));
        fwdioi_outcome_finish_if_aborted(f);
        return;
    }
    f->s.stats.writer_bytes += len;
    f->s.stats.messages_received++;
    account(f, r, len);
    fwdioi_outcome_read_check_done(f);
}

/*
 * A requester never trusts an answer either: the piece must lie within a
 * read under way, in bytes its sender owns and was asked for, and none of
 * them accounted for already. Returns the read's part, or NULL.
 */
static read_part_t *check_header(fwdio_file_t *f, const fwdioi_read_header_t *h, int source,
                                 fwdioi_read_t **read)
{
    struct fwdioi_requests *q = requests_of(f);
    *read = NULL;
    if (h->id < q->table_base || h->id - q->table_base >= q->len)
        return NULL;
    fwdioi_read_t *r = q->table[h->id - q->table_base];
    int w = fwdioi_plan_writer_of_rank(&f->plan, source);
    read_part_t *p = r && w >= 0 ? part_of_writer(r, w) : NULL;
    if (!p)
        return NULL;
    *read = r;
    if (h->len == 0 || h->offset < r->offset || h->len > r->len ||
        h->offset - r->offset > r->len - h->len || h->len > p->asked - p->accounted ||
        !fwdioi_plan_owns(&f->plan, w, h->offset, h->len))
        return NULL;
    uint64_t at;
    uint64_t rel = h->offset - r->offset;
    if (fwdioi_ranges_add(&r->got, rel, rel + h->len, &at) != FWDIOI_RANGES_OK)
        return NULL; /* twice, or no memory to tell */
    return p;
}

/* Start receiving a piece's bytes into its read's buffer. */
static void receive_piece(fwdio_file_t *f, fwdioi_read_t *r, const fwdioi_read_header_t *h,
                          int source)
{
    piece_recv_t *pr = malloc(sizeof *pr);
    MPI_Request req;
    int rc = !pr ? MPI_ERR_NO_MEM
             : fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Irecv(r->buf + (h->offset - r->offset), (int)h->len, MPI_BYTE, source,
                             FWDIOI_TAG_READ_DATA, f->s.comm, &req);
    if (rc != MPI_SUCCESS) { /* its bytes are dropped with the aborted file's (session.c) */
        free(pr);
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_READ_IRECV, rc);
        return;
    }
    *pr = (piece_recv_t){f, r, h->len, fwdioi_trace_begin()};
    r->recvs++;
    f->s.recvs_pending++;
    fwdioi_rt_track(f->engine, req, on_piece_received, pr);
}

static void take_header(fwdio_file_t *f, const fwdioi_read_header_t *h, int source)
{
    if (f->s.outcome.aborted)
        return; /* its bytes, if any, are dropped with the file's (session.c) */
    fwdioi_read_t *r;
    read_part_t *p = check_header(f, h, source, &r);
    if (!p) {
        fwdioi_errinfo_t why = {FWDIO_EPROTO, f->rank, 0, (int64_t)h->offset,
                                FWDIOI_REASON_BAD_READ, source, (int64_t)h->len};
        fwdioi_outcome_abort(f, &why, 1);
        return;
    }
    p->accounted += h->len;
    if (h->status == FWDIO_OK) {
        receive_piece(f, r, h, source);
        return;
    }
    /* the reader failed these bytes: the reason reaches every rank through
     * the final agreement (the reader's own error) */
    if (r->status == FWDIO_OK)
        r->status = (int)h->status;
    account(f, r, h->len);
    fwdioi_outcome_read_check_done(f);
}

int fwdioi_requester_probe(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    int n = 0;
    while (n < HEADERS_PER_POLL && f->s.comm != MPI_COMM_NULL) {
        if (fwdioi_rt_track_reserve(f->engine) != 0)
            break;
        int flag = 0, count = 0;
        MPI_Message msg;
        MPI_Status st;
        int rc = MPI_Improbe(MPI_ANY_SOURCE, FWDIOI_TAG_READ_HDR, f->s.comm, &flag, &msg, &st);
        if (rc != MPI_SUCCESS) {
            fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_IMPROBE, rc);
            break;
        }
        if (!flag)
            break;
        fwdioi_read_header_t h;
        rc = MPI_Get_count(&st, MPI_BYTE, &count);
        /* A header is a few dozen bytes, sent eagerly: matched, it is here,
         * so this receive does not wait. It must be taken before the next
         * one: its bytes are the next ones from its reader. */
        int rc2 = MPI_Mrecv(&h, (int)sizeof h, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        n++;
        if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS || count != (int)sizeof h) {
            if (rc2 != MPI_SUCCESS || rc != MPI_SUCCESS) {
                fwdioi_outcome_mpi_failed(f, rc2 != MPI_SUCCESS ? FWDIOI_MPI_READ_MRECV
                                                                : FWDIOI_MPI_GET_COUNT,
                                          rc2 != MPI_SUCCESS ? rc2 : rc);
            } else {
                fwdioi_errinfo_t why = {FWDIO_EPROTO, f->rank, 0, 0, FWDIOI_REASON_BAD_READ,
                                        st.MPI_SOURCE, count};
                fwdioi_outcome_abort(f, &why, 1);
            }
            break;
        }
        take_header(f, &h, st.MPI_SOURCE);
    }
    return n;
}

/* ---- the file's end ---- */

int fwdioi_requester_pending(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_requests *q = f->s.requests;
    return q && (q->pending > 0 || !STAILQ_EMPTY(&q->held));
}

void fwdioi_requester_abort(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_requests *q = requests_of(f);
    if (!q)
        return;
    fwdioi_requester_open_decided(f); /* the held ones end with the abort's status */
    for (size_t i = q->head; i < q->len; i++) {
        fwdioi_read_t *r = q->table[i];
        if (r && r->recvs == 0) /* else when its bytes are in (on_piece_received) */
            end_read(f, r, failed_status(f));
    }
    if (f->my_writer >= 0)
        fwdioi_reader_abort(f);
}

void fwdioi_requester_report(FILE *out, const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_requests *q = f->s.requests;
    if (q && q->pending > 0) {
        const fwdioi_read_t *r = NULL;
        for (size_t i = q->head; i < q->len && !r; i++)
            r = q->table[i];
        fprintf(out, "  %d read(s) of this rank not ended", q->pending);
        if (r) {
            fprintf(out, "; the oldest: %llu bytes at offset %llu, %llu received, waiting for "
                         "readers",
                    (unsigned long long)r->len, (unsigned long long)r->offset,
                    (unsigned long long)r->accounted);
            for (int i = 0; i < r->nparts; i++)
                if (r->parts[i].accounted < r->parts[i].asked)
                    fprintf(out, " %d (rank %d, %llu bytes)", r->parts[i].writer,
                            fwdioi_plan_writer_rank(&f->plan, r->parts[i].writer),
                            (unsigned long long)(r->parts[i].asked - r->parts[i].accounted));
        }
        fprintf(out, "\n");
    }
    if (f->my_writer >= 0)
        fwdioi_reader_report(out, f);
}

int fwdioi_requester_create(fwdio_file_t *f)
{
    struct fwdioi_requests *q = calloc(1, sizeof *q);
    if (!q)
        return -1;
    q->part_of = malloc((size_t)f->plan.nwriters * sizeof *q->part_of);
    if (!q->part_of || (f->my_writer >= 0 && fwdioi_reader_create(f) != 0)) {
        free(q->part_of);
        free(q);
        return -1;
    }
    STAILQ_INIT(&q->held);
    f->s.requests = q;
    return 0;
}

void fwdioi_requester_free(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_requests *q = f->s.requests;
    if (q) {
        free(q->table);
        free(q->part_of);
        free(q);
        f->s.requests = NULL;
    }
    fwdioi_reader_free(f);
}
