/*
 * The I/O thread: runs blocking storage jobs in submission order, so that a
 * writer's progress thread never waits for the disk, and hands each finished
 * job back to the progress thread. Started on the first job.
 */
#include "runtime_internal.h"

#include "log.h"
#include "trace.h"

/* Queue a finished job for its `done` half on the progress thread (io_lock
 * held). */
static void push_done_locked(fwdioi_rt_t *rt, fwdioi_io_job_t *job)
{
    STAILQ_INSERT_TAIL(&rt->io_done, job, link);
    event_active(rt->io_done_ev, EV_READ, 0);
}

static void push_done(fwdioi_rt_t *rt, fwdioi_io_job_t *job)
{
    pthread_mutex_lock(&rt->io_lock);
    push_done_locked(rt, job);
    pthread_mutex_unlock(&rt->io_lock);
}

static void *io_main(void *arg)
{
    fwdioi_rt_t *rt = arg;
    fwdioi_trace_thread("io");
    pthread_mutex_lock(&rt->io_lock);
    for (;;) {
        if (STAILQ_EMPTY(&rt->io_jobs) && !rt->io_stop) {
            while (STAILQ_EMPTY(&rt->io_jobs) && !rt->io_stop)
                pthread_cond_wait(&rt->io_cond, &rt->io_lock);
            atomic_fetch_add_explicit(&rt->io_wakeups, 1, memory_order_relaxed);
        }
        fwdioi_io_job_t *job = STAILQ_FIRST(&rt->io_jobs);
        if (!job)
            break; /* stopping, queue drained */
        STAILQ_REMOVE_HEAD(&rt->io_jobs, link);
        pthread_mutex_unlock(&rt->io_lock);

        job->run(job);

        pthread_mutex_lock(&rt->io_lock);
        push_done_locked(rt, job);
    }
    pthread_mutex_unlock(&rt->io_lock);
    return NULL;
}

void fwdioi_rt_io_submit(fwdioi_rt_t *rt, fwdioi_io_job_t *job)
{
    if (rt->cfg.io_inline) {
        /* Measuring without the pipeline: the disk call blocks the progress
         * thread. `done` still runs from the loop, never inside the caller. */
        job->run(job);
        push_done(rt, job);
        return;
    }
    pthread_mutex_lock(&rt->io_lock);
    if (!rt->io_started) {
        if (pthread_create(&rt->io_thread, NULL, io_main, rt) != 0) {
            /* No thread: run the job here rather than fail the file. */
            fwdioi_log(FWDIOI_LOG_WARN, "cannot start the I/O thread; writing inline");
            pthread_mutex_unlock(&rt->io_lock);
            job->run(job);
            push_done(rt, job);
            return;
        }
        rt->io_started = 1;
    }
    STAILQ_INSERT_TAIL(&rt->io_jobs, job, link);
    pthread_cond_signal(&rt->io_cond);
    pthread_mutex_unlock(&rt->io_lock);
}

/* Progress thread: run the `done` half of every finished job. */
void fwdioi_io_run_done(fwdioi_rt_t *rt)
{
    FWDIOI_ASSERT_PROGRESS();
    STAILQ_HEAD(, fwdioi_io_job) done = STAILQ_HEAD_INITIALIZER(done);
    pthread_mutex_lock(&rt->io_lock);
    STAILQ_CONCAT(&done, &rt->io_done);
    pthread_mutex_unlock(&rt->io_lock);
    while (!STAILQ_EMPTY(&done)) {
        fwdioi_io_job_t *job = STAILQ_FIRST(&done);
        STAILQ_REMOVE_HEAD(&done, link);
        job->done(job);
    }
}

/* After the progress thread has stopped: finish queued jobs and join. */
void fwdioi_io_stop(fwdioi_rt_t *rt)
{
    pthread_mutex_lock(&rt->io_lock);
    int started = rt->io_started;
    rt->io_stop = 1;
    pthread_cond_signal(&rt->io_cond);
    pthread_mutex_unlock(&rt->io_lock);
    if (started)
        pthread_join(rt->io_thread, NULL);
}
