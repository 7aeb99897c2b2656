/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime engine's vocabulary: the types its parts hand each other
 * (tasks, I/O jobs, callbacks, request completions, the client's poll hook)
 * and the checks of its threading rules. The bottom of runtime/: the
 * engine's parts (progress.c, io_thread.c, requests.c, ...) and its
 * lifecycle and API (runtime.c, runtime.h) build on it.
 */
#ifndef FWDIOI_ENGINE_H
#define FWDIOI_ENGINE_H

#include <mpi.h>
#include <sys/queue.h>

/** The engine of one rank's runtime: its threads, lock, tasks, tracked
 *  requests and callback delivery (the library's handle, fwdio_runtime_t,
 *  holds one as its `engine`; functions on it are fwdioi_rt_*). */
typedef struct fwdioi_engine fwdioi_engine_t;

/** A unit of work handed from an application thread to the progress thread. */
typedef struct fwdioi_task {
    STAILQ_ENTRY(fwdioi_task) link;
    void (*run)(struct fwdioi_task *task); /* runs on the progress thread */
} fwdioi_task_t;

/** Tasks in order (sys/queue.h STAILQ). */
typedef STAILQ_HEAD(fwdioi_task_list, fwdioi_task) fwdioi_task_list_t;

/** A blocking job for the I/O thread; `done` then runs on the progress thread. */
typedef struct fwdioi_io_job {
    STAILQ_ENTRY(fwdioi_io_job) link;
    void (*run)(struct fwdioi_io_job *job);
    void (*done)(struct fwdioi_io_job *job);
} fwdioi_io_job_t;

/** A user-visible callback, delivered where the callback mode says. */
typedef struct fwdioi_call {
    STAILQ_ENTRY(fwdioi_call) link;
    void (*run)(struct fwdioi_call *call);
} fwdioi_call_t;

/*
 * Internal checks of the threading rules: a function named *_locked is
 * called with the runtime lock held, a progress-thread function on the
 * progress thread. On in Debug and sanitizer builds (FWDIOI_DEBUG_CHECKS),
 * where a broken rule aborts with its place; free otherwise.
 */
#ifdef FWDIOI_DEBUG_CHECKS
void fwdioi_check_failed(const char *what, const char *file, int line);
/** Whether the calling thread holds rt's lock. */
int fwdioi_rt_lock_held(const fwdioi_engine_t *rt);
#define FWDIOI_ASSERT_LOCKED(rt)                                                  \
    ((void)(fwdioi_rt_lock_held(rt) ||                                            \
            (fwdioi_check_failed("runtime lock held", __FILE__, __LINE__), 0)))
#define FWDIOI_ASSERT_PROGRESS()                                                  \
    ((void)(fwdioi_rt_on_progress_thread() ||                                     \
            (fwdioi_check_failed("on the progress thread", __FILE__, __LINE__), 0)))
#else
#define FWDIOI_ASSERT_LOCKED(rt) ((void)0)
#define FWDIOI_ASSERT_PROGRESS() ((void)0)
#endif

/** Completion of a tracked MPI request (progress thread). */
typedef void (*fwdioi_req_cb_t)(void *arg, const MPI_Status *status);

/**
 * The client (the forwarder) is polled on every tick of the progress loop. It
 * returns how many things it moved forward and sets *active to how soon it
 * needs the next tick: FWDIOI_POLL_NONE (with no request in flight either,
 * the loop sleeps until the next task, I/O completion or doorbell),
 * FWDIOI_POLL_SLOW (a tick every FWDIOI_SLOW_TICK_US is enough: a watchdog
 * that may have to report), FWDIOI_POLL_TICK (a tick every
 * FWDIOI_WAIT_TICK_US: something waits for a change no event announces,
 * such as room another process frees) or FWDIOI_POLL_SOON (poll, backing
 * off up to poll_max_us: work that only polls can find).
 */
enum { FWDIOI_POLL_NONE = 0, FWDIOI_POLL_SLOW = 1, FWDIOI_POLL_SOON = 2, FWDIOI_POLL_TICK = 3 };
#define FWDIOI_SLOW_TICK_US 250000u
#define FWDIOI_WAIT_TICK_US 20000u
typedef struct fwdioi_client {
    int (*poll)(void *arg, int *active);
    void *arg;
} fwdioi_client_t;

/** Threads of the pool of fwdioi_rt_io_submit_any. */
#define FWDIOI_IO_POOL 4

/** True on the progress thread of any runtime (for calls a callback may not make). */
int fwdioi_rt_on_progress_thread(void);

#endif
