/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The I/O thread: runs blocking storage jobs in submission order, so that a
 * writer's progress thread never waits for the disk, and hands each finished
 * job back to the progress thread. Started on the first job. Beside it, a
 * pool of threads for jobs that need no order (a reader's unit preads), so
 * that a reader keeps several storage requests in flight: on a striped file
 * system each may go to another target.
 */
#include "engine_state.h"
#include "runtime.h"

#include "lock_check.h"
#include "thread_name.h"
#include "log.h"
#include "trace.h"

/* Queue a finished job for its `done` half on the progress thread (io_lock
 * held). */
static void push_done_locked(fwdioi_engine_t *rt, fwdioi_io_job_t *job)
{
    FWDIOI_ASSERT_HELD(&rt->io_lock);
    STAILQ_INSERT_TAIL(&rt->io_done, job, link);
    event_active(rt->io_done_ev, EV_READ, 0);
}

static void push_done(fwdioi_engine_t *rt, fwdioi_io_job_t *job)
{
    fwdioi_mutex_lock(&rt->io_lock);
    push_done_locked(rt, job);
    fwdioi_mutex_unlock(&rt->io_lock);
}

/* A thread's life: run the jobs of `queue` as they come (waiting on
 * `cond`, counted in *idle meanwhile when idle is set) until the runtime
 * stops and the queue is drained. */
static void run_jobs(fwdioi_engine_t *rt, struct fwdioi_io_queue *queue, pthread_cond_t *cond,
                     int *idle)
{
    fwdioi_mutex_lock(&rt->io_lock);
    for (;;) {
        if (STAILQ_EMPTY(queue) && !rt->io_stop) {
            if (idle)
                (*idle)++;
            while (STAILQ_EMPTY(queue) && !rt->io_stop)
                pthread_cond_wait(cond, &rt->io_lock);
            if (idle)
                (*idle)--;
            atomic_fetch_add_explicit(&rt->io_wakeups, 1, memory_order_relaxed);
        }
        fwdioi_io_job_t *job = STAILQ_FIRST(queue);
        if (!job)
            break; /* stopping, queue drained */
        STAILQ_REMOVE_HEAD(queue, link);
        fwdioi_mutex_unlock(&rt->io_lock);

        job->run(job);

        fwdioi_mutex_lock(&rt->io_lock);
        push_done_locked(rt, job);
    }
    fwdioi_mutex_unlock(&rt->io_lock);
}

static void *io_main(void *arg)
{
    fwdioi_engine_t *rt = arg;
    fwdioi_trace_thread("io");
    fwdioi_thread_name("fwdio-io");
    run_jobs(rt, &rt->io_jobs, &rt->io_cond, NULL);
    return NULL;
}

static void *pool_main(void *arg)
{
    fwdioi_engine_t *rt = arg;
    fwdioi_trace_thread("io-pool");
    fwdioi_thread_name("fwdio-io-pool");
    run_jobs(rt, &rt->io_pool_jobs, &rt->io_pool_cond, &rt->io_pool_idle);
    return NULL;
}

void fwdioi_rt_io_submit_any(fwdioi_engine_t *rt, fwdioi_io_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    if (rt->cfg.io_inline) {
        job->run(job);
        push_done(rt, job);
        return;
    }
    fwdioi_mutex_lock(&rt->io_lock);
    STAILQ_INSERT_TAIL(&rt->io_pool_jobs, job, link);
    /* one more thread while jobs wait and every thread is busy */
    if (rt->io_pool_idle == 0 && rt->io_pool_started < FWDIOI_IO_POOL &&
        pthread_create(&rt->io_pool[rt->io_pool_started], NULL, pool_main, rt) == 0)
        rt->io_pool_started++;
    if (rt->io_pool_started == 0) {
        /* No thread: run the job here rather than fail the file. */
        STAILQ_REMOVE(&rt->io_pool_jobs, job, fwdioi_io_job, link);
        fwdioi_mutex_unlock(&rt->io_lock);
        fwdioi_log(FWDIOI_LOG_WARN, "cannot start an I/O pool thread; reading inline");
        job->run(job);
        push_done(rt, job);
        return;
    }
    pthread_cond_signal(&rt->io_pool_cond);
    fwdioi_mutex_unlock(&rt->io_lock);
}

void fwdioi_rt_io_submit(fwdioi_engine_t *rt, fwdioi_io_job_t *job)
{
    FWDIOI_ASSERT_PROGRESS();
    if (rt->cfg.io_inline) {
        /* Measuring without the pipeline: the disk call blocks the progress
         * thread. `done` still runs from the loop, never inside the caller. */
        job->run(job);
        push_done(rt, job);
        return;
    }
    fwdioi_mutex_lock(&rt->io_lock);
    if (!rt->io_started) {
        if (pthread_create(&rt->io_thread, NULL, io_main, rt) != 0) {
            /* No thread: run the job here rather than fail the file. */
            fwdioi_log(FWDIOI_LOG_WARN, "cannot start the I/O thread; writing inline");
            fwdioi_mutex_unlock(&rt->io_lock);
            job->run(job);
            push_done(rt, job);
            return;
        }
        rt->io_started = 1;
    }
    STAILQ_INSERT_TAIL(&rt->io_jobs, job, link);
    pthread_cond_signal(&rt->io_cond);
    fwdioi_mutex_unlock(&rt->io_lock);
}

void fwdioi_io_run_done(fwdioi_engine_t *rt)
{
    FWDIOI_ASSERT_PROGRESS();
    STAILQ_HEAD(, fwdioi_io_job) done = STAILQ_HEAD_INITIALIZER(done);
    fwdioi_mutex_lock(&rt->io_lock);
    STAILQ_CONCAT(&done, &rt->io_done);
    fwdioi_mutex_unlock(&rt->io_lock);
    while (!STAILQ_EMPTY(&done)) {
        fwdioi_io_job_t *job = STAILQ_FIRST(&done);
        STAILQ_REMOVE_HEAD(&done, link);
        job->done(job);
    }
}

/* After the progress thread has stopped: finish queued jobs and join. */
void fwdioi_io_stop(fwdioi_engine_t *rt)
{
    fwdioi_mutex_lock(&rt->io_lock);
    int started = rt->io_started, pool = rt->io_pool_started;
    rt->io_stop = 1;
    pthread_cond_signal(&rt->io_cond);
    pthread_cond_broadcast(&rt->io_pool_cond);
    fwdioi_mutex_unlock(&rt->io_lock);
    if (started)
        pthread_join(rt->io_thread, NULL);
    for (int i = 0; i < pool; i++)
        pthread_join(rt->io_pool[i], NULL);
}
