/*
 * Delivery of user callbacks. Progress is not triggering: the progress thread
 * decides that a callback is due; it runs at once on the progress thread
 * (FWDIO_CALLBACKS_ON_PROGRESS) or waits in a queue for an application thread
 * inside fwdio_poll/fwdio_test/fwdio_wait (FWDIO_CALLBACKS_ON_POLL).
 */
#include "runtime_internal.h"

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

void fwdioi_rt_deliver(fwdioi_rt_t *rt, fwdioi_call_t *call)
{
    if (rt->cfg.callback_mode == FWDIO_CALLBACKS_ON_PROGRESS) {
        run_call(call);
        return;
    }
    fwdioi_rt_lock(rt);
    call->next = NULL;
    if (rt->calls_tail)
        rt->calls_tail->next = call;
    else
        rt->calls_head = call;
    rt->calls_tail = call;
    pthread_cond_broadcast(&rt->cond);
    fwdioi_rt_unlock(rt);
}

int fwdioi_rt_run_calls(fwdioi_rt_t *rt)
{
    int n = 0;
    for (;;) {
        fwdioi_rt_lock(rt);
        fwdioi_call_t *call = rt->calls_head;
        if (call) {
            rt->calls_head = call->next;
            if (!rt->calls_head)
                rt->calls_tail = NULL;
        }
        fwdioi_rt_unlock(rt);
        if (!call)
            return n;
        /* One at a time, in order, without the lock: a callback may call fwdio. */
        run_call(call);
        n++;
    }
}

void fwdioi_rt_wait(fwdioi_rt_t *rt, int (*done)(void *arg), void *arg)
{
    for (;;) {
        fwdioi_rt_run_calls(rt);
        fwdioi_rt_lock(rt);
        if (done(arg)) {
            fwdioi_rt_unlock(rt);
            return;
        }
        if (!rt->calls_head)
            pthread_cond_wait(&rt->cond, &rt->lock);
        fwdioi_rt_unlock(rt);
    }
}
