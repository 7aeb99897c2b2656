/* SPDX-License-Identifier: BSD-3-Clause */
/* The fake runtime seam of the unit tests (fake_runtime.h). */
#include "fake_runtime.h"

#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fwdioi_engine {
    fwdio_config_t cfg;
    int rank, size;
};

typedef struct fake_req {
    STAILQ_ENTRY(fake_req) link;
    fwdioi_req_cb_t cb;
    void *arg;
    int source, count, error; /* of an MPI_Irecv: what its status says */
} fake_req_t;

typedef struct fake_msg {
    STAILQ_ENTRY(fake_msg) link;
    int source, tag;
    size_t len;
    uint8_t bytes[];
} fake_msg_t;

static STAILQ_HEAD(, fwdioi_io_job) io_queue = STAILQ_HEAD_INITIALIZER(io_queue);
static STAILQ_HEAD(, fake_req) requests = STAILQ_HEAD_INITIALIZER(requests);
static STAILQ_HEAD(, fake_msg) wire = STAILQ_HEAD_INITIALIZER(wire);
static STAILQ_HEAD(, fake_msg) sent = STAILQ_HEAD_INITIALIZER(sent); /* source: the dest */
static size_t nio, nrequests, nwire, nsent; /* their lengths */
static fake_msg_t *matched; /* the message MPI_Improbe matched last */
static int fail_reserve, fail_buf_get;
static long bufs_out;
/* The MPI_Irecv started last, for the request tracked next (its status). */
static struct {
    int set, source, count, error;
} last_recv;
/* The status handed to the request being completed, and its count. */
static const MPI_Status *completing;
static int completing_count;

fwdioi_engine_t *fake_rt_create(int rank, int size, const fwdio_config_t *cfg)
{
    fwdioi_engine_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        abort();
    rt->cfg = *cfg;
    rt->rank = rank;
    rt->size = size;
    return rt;
}

void fake_rt_destroy(fwdioi_engine_t *rt)
{
    fake_msg_t *m;
    while ((m = STAILQ_FIRST(&wire)) != NULL) {
        STAILQ_REMOVE_HEAD(&wire, link);
        free(m);
    }
    while ((m = STAILQ_FIRST(&sent)) != NULL) {
        STAILQ_REMOVE_HEAD(&sent, link);
        free(m);
    }
    nsent = 0;
    free(matched);
    matched = NULL;
    nwire = 0;
    fake_req_t *r;
    while ((r = STAILQ_FIRST(&requests)) != NULL) {
        STAILQ_REMOVE_HEAD(&requests, link);
        free(r);
    }
    nrequests = 0;
    STAILQ_INIT(&io_queue); /* the jobs are their owners' */
    nio = 0;
    fail_reserve = fail_buf_get = 0;
    last_recv.set = 0;
    free(rt);
}

/* ---- what runtime.h promises the forwarder ---- */

#ifdef FWDIOI_DEBUG_CHECKS
void fwdioi_check_failed(const char *what, const char *file, int line)
{
    fprintf(stderr, "%s:%d: threading rule broken: not %s\n", file, line, what);
    abort();
}

int fwdioi_rt_lock_held(const fwdioi_engine_t *rt)
{
    (void)rt;
    return 1;
}
#endif

int fwdioi_rt_on_progress_thread(void) { return 1; }
int fwdioi_rt_in_callback(void) { return 0; }
int fwdioi_rt_rank(const fwdioi_engine_t *rt) { return rt->rank; }
int fwdioi_rt_size(const fwdioi_engine_t *rt) { return rt->size; }
/* Never used for traffic: fake_comm.c's calls and the fake wire ignore it. */
MPI_Comm fwdioi_rt_comm(const fwdioi_engine_t *rt)
{
    (void)rt;
    return MPI_COMM_WORLD;
}
const fwdio_config_t *fwdioi_rt_config(const fwdioi_engine_t *rt) { return &rt->cfg; }

/* One thread, which holds the lock already: taking it does nothing, and a
 * sleep under it could never be woken. */
void fwdioi_rt_lock(fwdioi_engine_t *rt) { (void)rt; }
void fwdioi_rt_unlock(fwdioi_engine_t *rt) { (void)rt; }
void fwdioi_rt_broadcast(fwdioi_engine_t *rt) { (void)rt; }

void fwdioi_rt_deliver(fwdioi_engine_t *rt, fwdioi_call_t *call)
{
    (void)rt;
    call->run(call); /* inline, as the tasks */
}

void fwdioi_rt_sleep_locked(fwdioi_engine_t *rt)
{
    (void)rt;
    fprintf(stderr, "fake runtime: a sleep under the runtime lock would never end\n");
    abort();
}

void fwdioi_rt_submit(fwdioi_engine_t *rt, fwdioi_task_t *task)
{
    (void)rt;
    task->run(task); /* inline */
}

void fwdioi_rt_submit_list(fwdioi_engine_t *rt, fwdioi_task_list_t *tasks)
{
    fwdioi_task_t *t;
    while ((t = STAILQ_FIRST(tasks)) != NULL) {
        STAILQ_REMOVE_HEAD(tasks, link);
        fwdioi_rt_submit(rt, t);
    }
}

int fwdioi_rt_track_reserve(fwdioi_engine_t *rt)
{
    (void)rt;
    if (fail_reserve > 0) {
        fail_reserve--;
        return -1;
    }
    return 0;
}

void fwdioi_rt_track(fwdioi_engine_t *rt, MPI_Request req, fwdioi_req_cb_t cb, void *arg)
{
    (void)rt;
    (void)req;
    fake_req_t *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    r->cb = cb;
    r->arg = arg;
    if (last_recv.set) {
        r->source = last_recv.source;
        r->count = last_recv.count;
        r->error = last_recv.error;
        last_recv.set = 0;
    }
    STAILQ_INSERT_TAIL(&requests, r, link);
    nrequests++;
}

int fwdioi_rt_forget(fwdioi_engine_t *rt, void *arg)
{
    (void)rt;
    int n = 0;
    fake_req_t *r, *next;
    for (r = STAILQ_FIRST(&requests); r; r = next) {
        next = STAILQ_NEXT(r, link);
        if (r->arg == arg) {
            STAILQ_REMOVE(&requests, r, fake_req, link);
            free(r);
            nrequests--;
            n++;
        }
    }
    return n;
}

void fwdioi_rt_io_submit(fwdioi_engine_t *rt, fwdioi_io_job_t *job)
{
    (void)rt;
    STAILQ_INSERT_TAIL(&io_queue, job, link);
    nio++;
}

void fwdioi_rt_io_submit_any(fwdioi_engine_t *rt, fwdioi_io_job_t *job)
{
    fwdioi_rt_io_submit(rt, job);
}

void *fwdioi_rt_buf_get(fwdioi_engine_t *rt, size_t len)
{
    (void)rt;
    if (fail_buf_get > 0) {
        fail_buf_get--;
        return NULL;
    }
    void *p = malloc(len ? len : 1);
    if (p)
        bufs_out++;
    return p;
}

void fwdioi_rt_buf_put(fwdioi_engine_t *rt, void *buf, size_t len)
{
    (void)rt;
    (void)len;
    if (buf)
        bufs_out--;
    free(buf);
}

/* ---- what the test drives ---- */

size_t fake_rt_io_queued(void) { return nio; }

fwdioi_io_job_t *fake_rt_io_take(void)
{
    fwdioi_io_job_t *j = STAILQ_FIRST(&io_queue);
    if (j) {
        STAILQ_REMOVE_HEAD(&io_queue, link);
        nio--;
    }
    return j;
}

void fake_rt_io_done(fwdioi_io_job_t *job)
{
    job->done(job);
}

size_t fake_rt_requests(void) { return nrequests; }

size_t fake_rt_requests_of(const void *arg)
{
    size_t n = 0;
    fake_req_t *r;
    STAILQ_FOREACH(r, &requests, link)
        n += r->arg == arg;
    return n;
}

/* Complete tracked request r, taken off the list, with `error`. */
static void complete(fake_req_t *r, int error)
{
    nrequests--;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_ERROR = error != MPI_SUCCESS ? error : r->error;
    st.MPI_SOURCE = r->source;
    completing = &st;
    completing_count = r->count;
    r->cb(r->arg, &st);
    completing = NULL;
    free(r);
}

int fake_rt_complete_oldest(int error)
{
    fake_req_t *r = STAILQ_FIRST(&requests);
    if (!r)
        return 0;
    STAILQ_REMOVE_HEAD(&requests, link);
    complete(r, error);
    return 1;
}

int fake_rt_complete_newest(int error)
{
    fake_req_t *r = STAILQ_FIRST(&requests), *last = NULL;
    for (; r; r = STAILQ_NEXT(r, link))
        last = r;
    if (!last)
        return 0;
    STAILQ_REMOVE(&requests, last, fake_req, link);
    complete(last, error);
    return 1;
}

size_t fake_rt_complete_requests(int error)
{
    size_t n = 0;
    while (fake_rt_complete_oldest(error))
        n++;
    return n;
}

void fake_rt_fail_track_reserve(int n) { fail_reserve = n; }
void fake_rt_fail_buf_get(int n) { fail_buf_get = n; }
long fake_rt_bufs_out(void) { return bufs_out; }

void fake_mpi_arrive(int source, const void *bytes, size_t len)
{
    fake_mpi_arrive_tag(source, MPI_ANY_TAG, bytes, len);
}

void fake_mpi_arrive_tag(int source, int tag, const void *bytes, size_t len)
{
    fake_msg_t *m = malloc(sizeof *m + len);
    if (!m)
        abort();
    m->source = source;
    m->tag = tag;
    m->len = len;
    memcpy(m->bytes, bytes, len);
    STAILQ_INSERT_TAIL(&wire, m, link);
    nwire++;
}

size_t fake_mpi_unmatched(void) { return nwire; }

/* ---- the MPI calls a writer makes, on the fake wire (these definitions
 * take the place of the MPI library's in the test program) ---- */

/* The oldest message on the wire from `source` with `tag` (either may be
 * MPI_ANY_*; a message queued without a tag matches any), or NULL. */
static fake_msg_t *wire_find(int source, int tag)
{
    fake_msg_t *m;
    STAILQ_FOREACH(m, &wire, link)
        if ((source == MPI_ANY_SOURCE || m->source == source) &&
            (tag == MPI_ANY_TAG || m->tag == MPI_ANY_TAG || m->tag == tag))
            return m;
    return NULL;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    (void)source;
    (void)tag;
    (void)comm;
    *flag = 0;
    fake_msg_t *m = wire_find(source, tag);
    if (!m)
        return MPI_SUCCESS;
    if (matched) /* the writer keeps at most one matched message */
        abort();
    STAILQ_REMOVE(&wire, m, fake_msg, link);
    nwire--;
    matched = m;
    *flag = 1;
    *message = MPI_MESSAGE_NULL; /* the fake knows which: `matched` */
    memset(status, 0, sizeof *status);
    status->MPI_SOURCE = m->source;
    status->MPI_TAG = tag;
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    (void)datatype;
    if (status && status == completing)
        *count = completing_count; /* a receive's, at its completion */
    else
        *count = matched ? (int)matched->len : 0;
    return MPI_SUCCESS;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request)
{
    if (!matched)
        abort();
    /* bytes, or the words a wake carries (session/dormant.c) */
    size_t cap = (size_t)count * (type == MPI_INT64_T ? sizeof(int64_t) : 1);
    size_t n = matched->len < cap ? matched->len : cap;
    if (buf && n)
        memcpy(buf, matched->bytes, n);
    free(matched);
    matched = NULL;
    *message = MPI_MESSAGE_NULL;
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
              MPI_Status *status)
{
    (void)status; /* MPI_STATUS_IGNORE in the roles */
    MPI_Request req;
    return MPI_Imrecv(buf, count, type, message, &req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    (void)type; /* bytes */
    (void)comm;
    fake_msg_t *m = wire_find(source, tag);
    if (!m) { /* the roles receive only what a header announced as sent */
        fprintf(stderr, "fake MPI_Irecv: no message from %d with tag %d on the wire\n", source,
                tag);
        abort();
    }
    STAILQ_REMOVE(&wire, m, fake_msg, link);
    nwire--;
    size_t n = m->len < (size_t)count ? m->len : (size_t)count;
    if (buf && n)
        memcpy(buf, m->bytes, n);
    last_recv.set = 1;
    last_recv.source = m->source;
    last_recv.count = (int)n;
    last_recv.error = m->len > (size_t)count ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    free(m);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    (void)type; /* bytes */
    (void)comm;
    fake_msg_t *m = malloc(sizeof *m + (size_t)count);
    if (!m)
        abort();
    m->source = dest;
    m->tag = tag;
    m->len = (size_t)count;
    if (count > 0)
        memcpy(m->bytes, buf, (size_t)count);
    STAILQ_INSERT_TAIL(&sent, m, link);
    nsent++;
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

size_t fake_mpi_sent(void) { return nsent; }

int fake_mpi_sent_take(int *dest, int *tag, void *buf, size_t cap, size_t *len)
{
    fake_msg_t *m = STAILQ_FIRST(&sent);
    if (!m)
        return 0;
    STAILQ_REMOVE_HEAD(&sent, link);
    nsent--;
    *dest = m->source;
    *tag = m->tag;
    *len = m->len;
    memcpy(buf, m->bytes, m->len < cap ? m->len : cap);
    free(m);
    return 1;
}
