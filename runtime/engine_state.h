/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime engine's private state (struct fwdioi_engine) and the calls
 * between its parts, shared by the files of runtime/ only. */
#ifndef FWDIOI_ENGINE_STATE_H
#define FWDIOI_ENGINE_STATE_H

#include "engine.h"
#include "fwdio.h"

#include <pthread.h>

#include <event2/event.h>
#include <stdatomic.h>

/* A completed request whose callback is about to run. */
typedef struct fwdioi_done {
    fwdioi_req_cb_t cb;
    void *arg;
    MPI_Status status;
} fwdioi_done_t;

/* Completions whose callbacks are running (fwdioi_requests_test); nested
 * tests (a callback that polls) stack theirs on the outer ones. */
typedef struct fwdioi_batch {
    fwdioi_done_t *done;
    int count;
    int next; /* the first whose callback has not started */
    struct fwdioi_batch *outer;
} fwdioi_batch_t;

/* MPI requests the progress thread polls (owned by the progress thread). */
typedef struct fwdioi_requests {
    MPI_Request *reqs;
    fwdioi_req_cb_t *cbs;
    void **args;
    int *indices;
    MPI_Status *statuses;
    int count, capacity;
    fwdioi_done_t *done; /* scratch for completions */
    int done_capacity;
    fwdioi_batch_t *running; /* the innermost batch whose callbacks run, or NULL */
} fwdioi_requests_t;

/* A queue of I/O jobs (io_thread.c). */
STAILQ_HEAD(fwdioi_io_queue, fwdioi_io_job);

struct fwdioi_engine {
    MPI_Comm comm; /* private duplicate for collectives of the runtime */
    int rank, size;
    fwdio_config_t cfg;
    fwdioi_client_t client;

    /* Guards whatever the client keeps under fwdioi_rt_lock; `cond` wakes
     * application threads waiting for a state change or a queued call. */
    pthread_mutex_t lock;
    pthread_cond_t cond;

    /* Application -> progress thread, guarded by tasks_lock. */
    pthread_mutex_t tasks_lock;
    fwdioi_task_list_t tasks;

    /* Progress thread -> application threads (FWDIO_CALLBACKS_ON_POLL),
     * guarded by calls_lock. */
    pthread_mutex_t calls_lock;
    STAILQ_HEAD(, fwdioi_call) calls;

    /* The progress thread and its loop. */
    pthread_t progress_thread;
    struct event_base *base;
    struct event *wake_ev;    /* activated when tasks arrive */
    struct event *io_done_ev; /* activated when I/O jobs finish */
    struct event *poll_ev;    /* the adaptive MPI poll timer */
    struct event *stop_ev;    /* activated by fwdioi_rt_destroy */
    struct event *fd_ev;      /* the client's fd (fwdioi_rt_watch_fd), or NULL */
    unsigned poll_interval_us;
    int poll_armed;
    uint64_t moved_ns; /* progress: when a poll last moved something (spinning) */
    /* poll_spin_us in force (cfg.poll_spin_us, or the automatic choice of
     * fwdioi_rt_choose_spin while cfg's is 0): set by the application
     * thread, read by the progress thread. */
    atomic_uint spin_us;
    /* Application threads asleep in fwdioi_rt_sleep_locked (changed under
     * the lock, read by the progress thread without it), and whether the
     * progress thread is polling at the background pace (progress thread
     * writes, sleepers read): a sleeper then kicks it to poll fast. */
    atomic_int app_waiters;
    atomic_int polling_slowly;
    fwdioi_requests_t requests;
    _Atomic uint64_t progress_wakeups; /* callbacks of the loop run (stats) */

    /* The I/O thread (created on first job); its queues and flags guarded
     * by io_lock. */
    pthread_mutex_t io_lock;
    int io_started;
    int io_stop;
    pthread_t io_thread;
    pthread_cond_t io_cond;
    struct fwdioi_io_queue io_jobs, io_done;
    _Atomic uint64_t io_wakeups; /* returns from waiting for jobs (stats) */
    /* The pool for jobs that need no order (fwdioi_rt_io_submit_any): up to
     * FWDIOI_IO_POOL threads, created as jobs wait with none idle; also
     * guarded by io_lock. */
    pthread_t io_pool[FWDIOI_IO_POOL];
    int io_pool_started, io_pool_idle;
    pthread_cond_t io_pool_cond;
    struct fwdioi_io_queue io_pool_jobs;

    /* Reusable message buffers (bufcache.c), guarded by buf_lock. */
    pthread_mutex_t buf_lock;
    size_t buf_chunk;
    void **buf_free;
    int buf_nfree;
};

/* progress.c */
int fwdioi_progress_start(fwdioi_engine_t *rt);
void fwdioi_progress_stop(fwdioi_engine_t *rt);

/* requests.c */
/** Test the tracked requests once; run the callbacks of the completed ones
 *  (progress thread). */
int fwdioi_requests_test(fwdioi_engine_t *rt);
void fwdioi_requests_free(fwdioi_requests_t *r);

/* bufcache.c */
int fwdioi_bufcache_init(fwdioi_engine_t *rt, size_t chunk);
void fwdioi_bufcache_free(fwdioi_engine_t *rt);

/* io_thread.c */
/** Run the `done` half of every finished job (progress thread). */
void fwdioi_io_run_done(fwdioi_engine_t *rt);
void fwdioi_io_stop(fwdioi_engine_t *rt);

#endif
