/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI requests polled by the progress thread, each with a completion callback. */
#include "engine_state.h"
#include "runtime.h"

#include "log.h"

#include <assert.h>
#include <stdlib.h>

static int grow(fwdioi_requests_t *r)
{
    int cap = r->capacity ? 2 * r->capacity : 64;
    MPI_Request *reqs = realloc(r->reqs, (size_t)cap * sizeof *reqs);
    if (reqs)
        r->reqs = reqs;
    fwdioi_req_cb_t *cbs = realloc(r->cbs, (size_t)cap * sizeof *cbs);
    if (cbs)
        r->cbs = cbs;
    void **args = realloc(r->args, (size_t)cap * sizeof *args);
    if (args)
        r->args = args;
    int *indices = realloc(r->indices, (size_t)cap * sizeof *indices);
    if (indices)
        r->indices = indices;
    MPI_Status *statuses = realloc(r->statuses, (size_t)cap * sizeof *statuses);
    if (statuses)
        r->statuses = statuses;
    if (!reqs || !cbs || !args || !indices || !statuses)
        return -1;
    r->capacity = cap;
    return 0;
}

/* Drop the entries whose request is MPI_REQUEST_NULL, keeping the order. */
static void compact(fwdioi_requests_t *r)
{
    int keep = 0;
    for (int i = 0; i < r->count; i++) {
        if (r->reqs[i] == MPI_REQUEST_NULL)
            continue;
        r->reqs[keep] = r->reqs[i];
        r->cbs[keep] = r->cbs[i];
        r->args[keep] = r->args[i];
        keep++;
    }
    r->count = keep;
}

int fwdioi_rt_track_reserve(fwdioi_engine_t *rt)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_requests_t *r = &rt->requests;
    return r->count < r->capacity || grow(r) == 0 ? 0 : -1;
}

void fwdioi_rt_track(fwdioi_engine_t *rt, MPI_Request req, fwdioi_req_cb_t cb, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_requests_t *r = &rt->requests;
    /* The caller reserved a slot before it started the request, so this
     * never needs memory (and never has to wait for the request instead). */
    assert(r->count < r->capacity);
    r->reqs[r->count] = req;
    r->cbs[r->count] = cb;
    r->args[r->count] = arg;
    r->count++;
}

/* Test all requests once; run the callbacks of the completed ones. Callbacks may
 * track new requests (and so grow the arrays), so completions are first copied
 * to the `done` scratch array, which only grows here, before testing. */
int fwdioi_requests_test(fwdioi_engine_t *rt)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_requests_t *r = &rt->requests;
    if (r->count == 0)
        return 0;
    if (r->done_capacity < r->count) {
        fwdioi_done_t *done = realloc(r->done, (size_t)r->capacity * sizeof *done);
        if (!done)
            return 0; /* try again on the next tick */
        r->done = done;
        r->done_capacity = r->capacity;
    }
    int ndone = 0;
    int rc = MPI_Testsome(r->count, r->reqs, &ndone, r->indices, r->statuses);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        /* Nothing says which request failed; they stay tracked, and the
         * ones that can no longer complete are reported by the watchdog. */
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: MPI_Testsome failed (error %d)", rt->rank, rc);
        return 0;
    }
    if (ndone <= 0 || ndone == MPI_UNDEFINED)
        return 0;
    fwdioi_done_t *done = r->done;
    for (int i = 0; i < ndone; i++) {
        done[i].cb = r->cbs[r->indices[i]];
        done[i].arg = r->args[r->indices[i]];
        done[i].status = r->statuses[i];
        /* Only MPI_ERR_IN_STATUS fills in the error fields. */
        if (rc == MPI_SUCCESS)
            done[i].status.MPI_ERROR = MPI_SUCCESS;
    }
    compact(r); /* completed requests were set to MPI_REQUEST_NULL */
    /* The scratch is detached while callbacks run, so nothing can move it. */
    int done_capacity = r->done_capacity;
    r->done = NULL;
    r->done_capacity = 0;
    /* A callback may forget requests (fwdioi_rt_forget) whose completions
     * are later in this batch: theirs must not run either. */
    fwdioi_batch_t batch = {done, ndone, 0, r->running};
    r->running = &batch;
    while (batch.next < ndone) {
        int i = batch.next++;
        if (done[i].cb)
            done[i].cb(done[i].arg, &done[i].status);
    }
    r->running = batch.outer;
    if (r->done) { /* a nested test grew a new scratch: keep that one */
        free(done);
    } else {
        r->done = done;
        r->done_capacity = done_capacity;
    }
    return ndone;
}

int fwdioi_rt_forget(fwdioi_engine_t *rt, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_requests_t *r = &rt->requests;
    int forgotten = 0;
    for (int i = 0; i < r->count; i++) {
        if (r->args[i] == arg) {
            r->reqs[i] = MPI_REQUEST_NULL; /* the request itself is left to MPI */
            forgotten++;
        }
    }
    compact(r);
    /* completed in a batch whose callbacks are running, not yet called back */
    for (fwdioi_batch_t *b = r->running; b; b = b->outer)
        for (int i = b->next; i < b->count; i++)
            if (b->done[i].cb && b->done[i].arg == arg) {
                b->done[i].cb = NULL;
                forgotten++;
            }
    return forgotten;
}

void fwdioi_requests_free(fwdioi_requests_t *r)
{
    free(r->reqs);
    free(r->cbs);
    free(r->args);
    free(r->indices);
    free(r->statuses);
    free(r->done);
    *r = (fwdioi_requests_t){0};
}
