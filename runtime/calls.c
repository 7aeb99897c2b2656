/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Delivery of user callbacks. Progress is not triggering: the progress thread
 * decides that a callback is due; it runs at once on the progress thread
 * (FWDIO_CALLBACKS_ON_PROGRESS) or waits in a queue for an application thread
 * inside fwdio_poll/fwdio_test/fwdio_wait (FWDIO_CALLBACKS_ON_POLL).
 */
#include "engine_state.h"
#include "runtime.h"

#include <stdlib.h>
#include <time.h>

/* Depth of user callbacks running on this thread: blocking calls made from a
 * callback would wait for the callback itself, so the API refuses them. */
static _Thread_local int callback_depth;

int fwdioi_rt_in_callback(void) { return callback_depth > 0; }

static void run_call(fwdioi_call_t *call)
{
    callback_depth++;
    call->run(call);
    callback_depth--;
}

/* Queue a callback for the application's next fwdio_poll/test/wait. */
static void enqueue_call(fwdioi_engine_t *rt, fwdioi_call_t *call)
{
    pthread_mutex_lock(&rt->calls_lock);
    STAILQ_INSERT_TAIL(&rt->calls, call, link);
    pthread_mutex_unlock(&rt->calls_lock);
    /* A waiter checks the queue with the runtime lock held and sleeps on
     * `cond` without releasing it in between: broadcasting under that lock
     * cannot fall between its check and its sleep. */
    fwdioi_rt_lock(rt);
    pthread_cond_broadcast(&rt->cond);
    fwdioi_rt_unlock(rt);
}

static int calls_queued(fwdioi_engine_t *rt)
{
    pthread_mutex_lock(&rt->calls_lock);
    int queued = !STAILQ_EMPTY(&rt->calls);
    pthread_mutex_unlock(&rt->calls_lock);
    return queued;
}

void fwdioi_rt_deliver(fwdioi_engine_t *rt, fwdioi_call_t *call)
{
    FWDIOI_ASSERT_PROGRESS();
    if (rt->cfg.callback_mode == FWDIO_CALLBACKS_ON_PROGRESS)
        run_call(call);
    else
        enqueue_call(rt, call);
}

typedef struct deliver_task {
    fwdioi_task_t task; /* first */
    fwdioi_engine_t *rt;
    fwdioi_call_t *call;
} deliver_task_t;

static void run_deliver_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    deliver_task_t *d = (deliver_task_t *)task;
    fwdioi_engine_t *rt = d->rt;
    fwdioi_call_t *call = d->call;
    free(d);
    fwdioi_rt_deliver(rt, call);
}

void fwdioi_rt_deliver_later(fwdioi_engine_t *rt, fwdioi_call_t *call)
{
    deliver_task_t *d =
        rt->cfg.callback_mode == FWDIO_CALLBACKS_ON_PROGRESS ? malloc(sizeof *d) : NULL;
    if (!d) { /* poll mode (or no memory for the hop): queue it for fwdio_poll */
        enqueue_call(rt, call);
        return;
    }
    d->task.run = run_deliver_task;
    d->rt = rt;
    d->call = call;
    fwdioi_rt_submit(rt, &d->task);
}

int fwdioi_rt_run_calls(fwdioi_engine_t *rt)
{
    /* Never inside a callback: a call made there (fwdio_test, fwdio_poll,
     * a step's test) would run the next callbacks before this one returns,
     * out of order (a file's complete before its last step's callback has
     * returned; a later step's done before an earlier one's, which made
     * fwdio_step_wait of the earlier step wait for ever). They run once it
     * returns, from the loop below. */
    if (callback_depth > 0)
        return 0;
    int n = 0;
    for (;;) {
        pthread_mutex_lock(&rt->calls_lock);
        fwdioi_call_t *call = STAILQ_FIRST(&rt->calls);
        if (call)
            STAILQ_REMOVE_HEAD(&rt->calls, link);
        pthread_mutex_unlock(&rt->calls_lock);
        if (!call)
            return n;
        /* One at a time, in order, without the lock: a callback may call fwdio. */
        run_call(call);
        n++;
    }
}

int fwdioi_rt_wait_for(fwdioi_engine_t *rt, int (*done)(void *arg), void *arg, unsigned seconds)
{
    struct timespec at, *deadline = NULL;
    if (seconds > 0) {
        clock_gettime(CLOCK_REALTIME, &at);
        at.tv_sec += seconds;
        deadline = &at;
    }
    for (;;) {
        fwdioi_rt_run_calls(rt);
        fwdioi_rt_lock(rt);
        if (done(arg)) {
            fwdioi_rt_unlock(rt);
            return 1;
        }
        int late = !calls_queued(rt) && fwdioi_rt_sleep_locked_until(rt, deadline);
        fwdioi_rt_unlock(rt);
        if (late)
            return 0;
    }
}

void fwdioi_rt_wait(fwdioi_engine_t *rt, int (*done)(void *arg), void *arg)
{
    (void)fwdioi_rt_wait_for(rt, done, arg, 0);
}
