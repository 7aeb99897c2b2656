/*
 * The I/O thread: runs blocking storage jobs in submission order, so that a
 * writer's progress thread never waits for the disk, and hands each finished
 * job back to the progress thread. Started on the first job.
 */
#include "runtime_internal.h"

#include "log.h"
#include "trace.h"

/* Queue a finished job for its `done` half on the progress thread (lock held). */
static void push_done_locked(fwdioi_rt_t *rt, fwdioi_io_job_t *job)
{
    job->next = NULL;
    if (rt->io_done_tail)
        rt->io_done_tail->next = job;
    else
        rt->io_done_head = job;
    rt->io_done_tail = job;
    event_active(rt->io_done_ev, EV_READ, 0);
}

static void *io_main(void *arg)
{
    fwdioi_rt_t *rt = arg;
    fwdioi_trace_thread("io");
    fwdioi_rt_lock(rt);
    for (;;) {
        while (!rt->io_head && !rt->io_stop)
            pthread_cond_wait(&rt->io_cond, &rt->lock);
        if (!rt->io_head)
            break; /* stopping, queue drained */
        fwdioi_io_job_t *job = rt->io_head;
        rt->io_head = job->next;
        if (!rt->io_head)
            rt->io_tail = NULL;
        fwdioi_rt_unlock(rt);

        job->run(job);

        fwdioi_rt_lock(rt);
        push_done_locked(rt, job);
    }
    fwdioi_rt_unlock(rt);
    return NULL;
}

void fwdioi_rt_io_submit(fwdioi_rt_t *rt, fwdioi_io_job_t *job)
{
    if (rt->cfg.io_inline) {
        /* Measuring without the pipeline: the disk call blocks the progress
         * thread. `done` still runs from the loop, never inside the caller. */
        job->run(job);
        fwdioi_rt_lock(rt);
        push_done_locked(rt, job);
        fwdioi_rt_unlock(rt);
        return;
    }
    fwdioi_rt_lock(rt);
    if (!rt->io_started) {
        if (pthread_create(&rt->io_thread, NULL, io_main, rt) != 0) {
            /* No thread: run the job here rather than fail the file. */
            fwdioi_log(FWDIOI_LOG_WARN, "cannot start the I/O thread; writing inline");
            fwdioi_rt_unlock(rt);
            job->run(job);
            fwdioi_rt_lock(rt);
            push_done_locked(rt, job);
            fwdioi_rt_unlock(rt);
            return;
        }
        rt->io_started = 1;
    }
    job->next = NULL;
    if (rt->io_tail)
        rt->io_tail->next = job;
    else
        rt->io_head = job;
    rt->io_tail = job;
    pthread_cond_signal(&rt->io_cond);
    fwdioi_rt_unlock(rt);
}

/* Progress thread: run the `done` half of every finished job. */
void fwdioi_io_run_done(fwdioi_rt_t *rt)
{
    fwdioi_rt_lock(rt);
    fwdioi_io_job_t *job = rt->io_done_head;
    rt->io_done_head = rt->io_done_tail = NULL;
    fwdioi_rt_unlock(rt);
    while (job) {
        fwdioi_io_job_t *next = job->next;
        job->done(job);
        job = next;
    }
}

/* After the progress thread has stopped: finish queued jobs and join. */
void fwdioi_io_stop(fwdioi_rt_t *rt)
{
    fwdioi_rt_lock(rt);
    int started = rt->io_started;
    rt->io_stop = 1;
    pthread_cond_signal(&rt->io_cond);
    fwdioi_rt_unlock(rt);
    if (started)
        pthread_join(rt->io_thread, NULL);
}
