/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime lifetime, identity and the shared lock. */
#include "engine_state.h"
#include "runtime.h"

#include "config.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void destroy_sync(fwdioi_engine_t *rt)
{
    pthread_cond_destroy(&rt->io_cond);
    pthread_cond_destroy(&rt->io_pool_cond);
    pthread_mutex_destroy(&rt->io_lock);
    pthread_mutex_destroy(&rt->calls_lock);
    pthread_mutex_destroy(&rt->tasks_lock);
    pthread_cond_destroy(&rt->cond);
    pthread_mutex_destroy(&rt->lock);
}

int fwdioi_rt_create(MPI_Comm comm, const fwdio_config_t *cfg, int ranks_on_node,
                     const fwdioi_client_t *client, fwdioi_engine_t **out)
{
    fwdio_config_t conf;
    int rc = fwdioi_config_resolve(cfg, ranks_on_node, &conf);
    if (rc != FWDIO_OK)
        return rc;

    fwdioi_engine_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return FWDIO_ENOMEM;
    rt->cfg = conf;
    atomic_init(&rt->spin_us, conf.poll_spin_us ? conf.poll_spin_us : 1u);
    rt->client = *client;
    rt->comm = MPI_COMM_NULL;
    rc = FWDIO_EMPI;
    if (MPI_Comm_dup(comm, &rt->comm) != MPI_SUCCESS)
        goto fail_free;
    /* A dup inherits the caller's error handler, usually fatal: fwdio's own
     * traffic reports MPI errors as file statuses instead. */
    if (MPI_Comm_set_errhandler(rt->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        goto fail_comm;
    if (MPI_Comm_rank(rt->comm, &rt->rank) != MPI_SUCCESS ||
        MPI_Comm_size(rt->comm, &rt->size) != MPI_SUCCESS)
        goto fail_comm;
    if ((rc = fwdioi_bufcache_init(rt, rt->cfg.max_message_size + FWDIOI_MESSAGE_HEADROOM)) !=
        FWDIO_OK)
        goto fail_comm;
    pthread_mutex_init(&rt->lock, NULL);
    pthread_cond_init(&rt->cond, NULL);
    pthread_mutex_init(&rt->tasks_lock, NULL);
    pthread_mutex_init(&rt->calls_lock, NULL);
    pthread_mutex_init(&rt->io_lock, NULL);
    pthread_cond_init(&rt->io_cond, NULL);
    pthread_cond_init(&rt->io_pool_cond, NULL);
    STAILQ_INIT(&rt->io_pool_jobs);
    STAILQ_INIT(&rt->tasks);
    STAILQ_INIT(&rt->calls);
    STAILQ_INIT(&rt->io_jobs);
    STAILQ_INIT(&rt->io_done);
    if ((rc = fwdioi_progress_start(rt)) != FWDIO_OK)
        goto fail_sync;
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d of %d: runtime started", rt->rank, rt->size);
    *out = rt;
    return FWDIO_OK;

fail_sync:
    destroy_sync(rt);
    fwdioi_bufcache_free(rt);
fail_comm:
    MPI_Comm_free(&rt->comm);
fail_free:
    free(rt);
    return rc;
}

void fwdioi_rt_destroy(fwdioi_engine_t *rt)
{
    fwdioi_progress_stop(rt);
    fwdioi_io_stop(rt);
    fwdioi_requests_free(&rt->requests);
    fwdioi_bufcache_free(rt);
    destroy_sync(rt);
    fwdioi_log_mpi_failure(MPI_Comm_free(&rt->comm), "MPI_Comm_free (runtime)");
    free(rt);
}

MPI_Comm fwdioi_rt_comm(const fwdioi_engine_t *rt) { return rt->comm; }
int fwdioi_rt_rank(const fwdioi_engine_t *rt) { return rt->rank; }
int fwdioi_rt_size(const fwdioi_engine_t *rt) { return rt->size; }
const fwdio_config_t *fwdioi_rt_config(const fwdioi_engine_t *rt) { return &rt->cfg; }

unsigned fwdioi_rt_choose_spin(fwdioi_engine_t *rt, int ranks_on_node, int node_cpus)
{
    unsigned us = fwdioi_spin_choice(rt->cfg.poll_spin_us, ranks_on_node, node_cpus);
    atomic_store_explicit(&rt->spin_us, us, memory_order_relaxed);
    return us;
}

unsigned fwdioi_rt_spin_us(const fwdioi_engine_t *rt)
{
    return atomic_load_explicit(&((fwdioi_engine_t *)rt)->spin_us, memory_order_relaxed);
}

#ifdef FWDIOI_DEBUG_CHECKS
/* The runtime whose lock this thread holds (one at a time: fwdio never
 * holds two runtimes' locks). */
static _Thread_local const fwdioi_engine_t *lock_held;

int fwdioi_rt_lock_held(const fwdioi_engine_t *rt) { return lock_held == rt; }

void fwdioi_check_failed(const char *what, const char *file, int line)
{
    fprintf(stderr, "fwdio: internal check failed at %s:%d: not %s\n", file, line, what);
    abort();
}
#define NOTE_LOCKED(rt) (lock_held = (rt))
#else
#define NOTE_LOCKED(rt) ((void)0)
#endif

void fwdioi_rt_lock(fwdioi_engine_t *rt)
{
    pthread_mutex_lock(&rt->lock);
    NOTE_LOCKED(rt);
}

void fwdioi_rt_unlock(fwdioi_engine_t *rt)
{
    NOTE_LOCKED(NULL);
    pthread_mutex_unlock(&rt->lock);
}

void fwdioi_rt_broadcast(fwdioi_engine_t *rt) { pthread_cond_broadcast(&rt->cond); }

int fwdioi_rt_sleep_locked_until(fwdioi_engine_t *rt, const struct timespec *deadline)
{
    FWDIOI_ASSERT_LOCKED(rt);
    /* The progress thread polls fast while anyone sleeps here; one that is
     * pacing itself for the background is woken to say so. (A sleeper that
     * comes just as it starts pacing goes unannounced: its polls are then
     * late by one background interval, no more.) */
    atomic_fetch_add(&rt->app_waiters, 1);
    if (atomic_load(&rt->polling_slowly))
        fwdioi_rt_kick(rt);
    int rc = deadline ? pthread_cond_timedwait(&rt->cond, &rt->lock, deadline)
                      : pthread_cond_wait(&rt->cond, &rt->lock);
    atomic_fetch_sub(&rt->app_waiters, 1);
    return rc == ETIMEDOUT;
}

void fwdioi_rt_sleep_locked(fwdioi_engine_t *rt)
{
    FWDIOI_ASSERT_LOCKED(rt);
    (void)fwdioi_rt_sleep_locked_until(rt, NULL);
}

void fwdioi_rt_submit_list(fwdioi_engine_t *rt, fwdioi_task_list_t *tasks)
{
    if (STAILQ_EMPTY(tasks))
        return;
    pthread_mutex_lock(&rt->tasks_lock);
    STAILQ_CONCAT(&rt->tasks, tasks);
    pthread_mutex_unlock(&rt->tasks_lock);
    event_active(rt->wake_ev, EV_READ, 0);
}

void fwdioi_rt_kick(fwdioi_engine_t *rt)
{
    event_active(rt->wake_ev, EV_READ, 0);
}

void fwdioi_rt_submit(fwdioi_engine_t *rt, fwdioi_task_t *task)
{
    fwdioi_task_list_t one = STAILQ_HEAD_INITIALIZER(one);
    STAILQ_INSERT_TAIL(&one, task, link);
    fwdioi_rt_submit_list(rt, &one);
}
