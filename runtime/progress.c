/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress thread: one libevent loop that runs the application's tasks,
 * polls MPI requests and the client, and finishes I/O jobs. The polling policy
 * lives in schedule_next_poll().
 */
#include "engine_state.h"
#include "runtime.h"

#include "clock.h"
#include "log.h"
#include "thread_name.h"
#include "trace.h"

#include <event2/thread.h>
#include <sched.h>
#include <stdlib.h>

static _Thread_local int on_progress_thread;

int fwdioi_rt_on_progress_thread(void) { return on_progress_thread; }

/*
 * When to poll again. The shortest interval is poll_min_us while an
 * application thread waits in fwdio, poll_background_us otherwise (the
 * application computes, or makes MPI calls of its own that move MPI's
 * transfers as well; over TCP a second thread polling Open MPI every few
 * microseconds held those calls up for seconds). Something moved: poll again
 * after that shortest interval, since more is likely to follow. Nothing
 * moved: back off by doubling, up to a short cap while MPI requests are in
 * flight (a large transfer needs regular calls into MPI to advance even when
 * nothing completes) and up to poll_max_us while the client has work only
 * polls can find. Nothing in flight and nothing the
 * client must poll for: no timer at all, or a slow one while the client
 * watches files (its watchdog); the next task, I/O completion or doorbell
 * wakes the loop. This keeps an idle runtime, and a file open with nothing
 * in flight, off the CPU it shares with the application. A client that
 * waits for something no event announces (room in a store another process
 * frees) asks for a tick every FWDIOI_WAIT_TICK_US instead.
 *
 * While an application thread waits and requests are in flight, the thread
 * polls again at once, yielding the CPU in between, for up to poll_spin_us
 * after the last poll that moved something (or the wakeup that brought the
 * work): an agreement round or a transfer between ranks that are all
 * waiting ends in microseconds, where each timed poll costs tens (the
 * timer's slack). A blocking MPI call waits the same way.
 */
static int spinning(fwdioi_engine_t *rt, int events, int waiting, int in_flight)
{
    const unsigned spin_us = atomic_load_explicit(&rt->spin_us, memory_order_relaxed);
    if (!waiting || !in_flight || spin_us <= 1)
        return 0;
    uint64_t now = fwdioi_now_ns();
    if (events > 0)
        rt->moved_ns = now;
    return now - rt->moved_ns < (uint64_t)spin_us * 1000;
}

static void schedule_next_poll(fwdioi_engine_t *rt, int events, int client_active)
{
    const int waiting = atomic_load(&rt->app_waiters) > 0;
    const unsigned floor_us = waiting ? rt->cfg.poll_min_us : rt->cfg.poll_background_us;
    atomic_store(&rt->polling_slowly, floor_us > rt->cfg.poll_min_us);
    const unsigned busy_cap = 8 * floor_us;
    int in_flight = rt->requests.count > 0;
    if (spinning(rt, events, waiting, in_flight)) {
        static const struct timeval now = {0, 0};
        if (rt->poll_armed)
            evtimer_del(rt->poll_ev);
        sched_yield();
        evtimer_add(rt->poll_ev, &now);
        rt->poll_armed = 1;
        rt->poll_interval_us = floor_us;
        return;
    }
    if (!in_flight && (client_active == FWDIOI_POLL_SLOW || client_active == FWDIOI_POLL_TICK)) {
        rt->poll_interval_us = rt->cfg.poll_min_us;
        if (rt->poll_armed)
            evtimer_del(rt->poll_ev);
        unsigned us = client_active == FWDIOI_POLL_TICK ? FWDIOI_WAIT_TICK_US : FWDIOI_SLOW_TICK_US;
        struct timeval tv = {.tv_sec = us / 1000000, .tv_usec = us % 1000000};
        evtimer_add(rt->poll_ev, &tv);
        rt->poll_armed = 1;
        return;
    }
    if (!in_flight && client_active == FWDIOI_POLL_NONE) {
        rt->poll_interval_us = rt->cfg.poll_min_us;
        if (rt->poll_armed) {
            evtimer_del(rt->poll_ev);
            rt->poll_armed = 0;
        }
        return;
    }
    if (events > 0 || rt->poll_interval_us < floor_us) {
        rt->poll_interval_us = floor_us;
    } else {
        unsigned cap = in_flight && busy_cap < rt->cfg.poll_max_us ? busy_cap : rt->cfg.poll_max_us;
        unsigned next = rt->poll_interval_us * 2;
        rt->poll_interval_us = next < cap ? next : cap;
    }
    struct timeval tv = {.tv_sec = rt->poll_interval_us / 1000000,
                         .tv_usec = rt->poll_interval_us % 1000000};
    evtimer_add(rt->poll_ev, &tv);
    rt->poll_armed = 1;
}

static void progress_tick(fwdioi_engine_t *rt)
{
    int active = 0;
    int events = fwdioi_requests_test(rt);
    events += rt->client.poll(rt->client.arg, &active);
    /* Receives the client just posted may already be complete. */
    events += fwdioi_requests_test(rt);
    schedule_next_poll(rt, events, active);
}

static void on_poll_timer(evutil_socket_t fd, short what, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)fd;
    (void)what;
    fwdioi_engine_t *rt = arg;
    atomic_fetch_add_explicit(&rt->progress_wakeups, 1, memory_order_relaxed);
    rt->poll_armed = 0;
    progress_tick(rt);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)fd;
    (void)what;
    fwdioi_engine_t *rt = arg;
    atomic_fetch_add_explicit(&rt->progress_wakeups, 1, memory_order_relaxed);
    fwdioi_task_list_t tasks = STAILQ_HEAD_INITIALIZER(tasks);
    pthread_mutex_lock(&rt->tasks_lock);
    STAILQ_CONCAT(&tasks, &rt->tasks);
    pthread_mutex_unlock(&rt->tasks_lock);
    while (!STAILQ_EMPTY(&tasks)) {
        fwdioi_task_t *task = STAILQ_FIRST(&tasks);
        STAILQ_REMOVE_HEAD(&tasks, link);
        task->run(task);
    }
    rt->poll_interval_us = rt->cfg.poll_min_us;
    rt->moved_ns = fwdioi_now_ns(); /* new work: spin for its first rounds */
    progress_tick(rt);
}

static void on_io_done(evutil_socket_t fd, short what, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)fd;
    (void)what;
    fwdioi_engine_t *rt = arg;
    atomic_fetch_add_explicit(&rt->progress_wakeups, 1, memory_order_relaxed);
    fwdioi_io_run_done(rt);
    rt->moved_ns = fwdioi_now_ns();
    progress_tick(rt);
}

/* The client's fd is readable: one tick, in which the client's poll hook
 * drains it and takes what it announced. */
static void on_fd(evutil_socket_t fd, short what, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)fd;
    (void)what;
    fwdioi_engine_t *rt = arg;
    atomic_fetch_add_explicit(&rt->progress_wakeups, 1, memory_order_relaxed);
    progress_tick(rt);
}

int fwdioi_rt_watch_fd(fwdioi_engine_t *rt, int fd)
{
    if (rt->fd_ev)
        return -1;
    rt->fd_ev = event_new(rt->base, fd, EV_READ | EV_PERSIST, on_fd, rt);
    if (!rt->fd_ev || event_add(rt->fd_ev, NULL) != 0) {
        if (rt->fd_ev)
            event_free(rt->fd_ev);
        rt->fd_ev = NULL;
        return -1;
    }
    return 0;
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)fd;
    (void)what;
    fwdioi_engine_t *rt = arg;
    event_base_loopbreak(rt->base);
}

static void *progress_main(void *arg)
{
    fwdioi_engine_t *rt = arg;
    on_progress_thread = 1;
    fwdioi_trace_thread("progress");
    fwdioi_thread_name("fwdio-progress");
    event_base_loop(rt->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

static void route_libevent_log(int severity, const char *msg)
{
    fwdioi_log(severity >= EVENT_LOG_WARN ? FWDIOI_LOG_WARN : FWDIOI_LOG_DEBUG, "libevent: %s",
               msg);
}

static pthread_once_t libevent_once = PTHREAD_ONCE_INIT;
static int libevent_threads_rc;

static void libevent_setup(void)
{
    event_set_log_callback(route_libevent_log);
    libevent_threads_rc = evthread_use_pthreads();
}

int fwdioi_progress_start(fwdioi_engine_t *rt)
{
    pthread_once(&libevent_once, libevent_setup);
    if (libevent_threads_rc != 0)
        return FWDIO_ESYSTEM;
    /* Poll intervals are tens of microseconds; without a precise timer libevent
     * rounds every wait up to a whole millisecond (epoll's resolution). */
    struct event_config *ecfg = event_config_new();
    if (!ecfg)
        return FWDIO_ESYSTEM;
    event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER);
    rt->base = event_base_new_with_config(ecfg);
    event_config_free(ecfg);
    if (!rt->base)
        return FWDIO_ESYSTEM;
    rt->wake_ev = event_new(rt->base, -1, 0, on_wake, rt);
    rt->io_done_ev = event_new(rt->base, -1, 0, on_io_done, rt);
    rt->stop_ev = event_new(rt->base, -1, 0, on_stop, rt);
    rt->poll_ev = evtimer_new(rt->base, on_poll_timer, rt);
    rt->poll_interval_us = rt->cfg.poll_min_us;
    if (!rt->wake_ev || !rt->io_done_ev || !rt->stop_ev || !rt->poll_ev ||
        pthread_create(&rt->progress_thread, NULL, progress_main, rt) != 0) {
        fwdioi_progress_stop(rt);
        return FWDIO_ESYSTEM;
    }
    return FWDIO_OK;
}

static void free_event(struct event **ev)
{
    if (*ev)
        event_free(*ev);
    *ev = NULL;
}

/* Called with the thread running (join it) or after a failed start (just free). */
void fwdioi_progress_stop(fwdioi_engine_t *rt)
{
    if (rt->progress_thread) {
        event_active(rt->stop_ev, EV_READ, 0);
        pthread_join(rt->progress_thread, NULL);
        rt->progress_thread = 0;
    }
    free_event(&rt->poll_ev);
    free_event(&rt->fd_ev);
    free_event(&rt->stop_ev);
    free_event(&rt->io_done_ev);
    free_event(&rt->wake_ev);
    if (rt->base)
        event_base_free(rt->base);
    rt->base = NULL;
}
