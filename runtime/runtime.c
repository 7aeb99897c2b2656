/* Runtime lifetime, identity and the shared lock. */
#include "runtime_internal.h"

#include "config.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

int fwdioi_rt_create(MPI_Comm comm, const fwdio_config_t *cfg, const fwdioi_client_t *client,
                     fwdioi_rt_t **out)
{
    fwdio_config_t conf;
    int rc = fwdioi_config_resolve(cfg, &conf);
    if (rc != FWDIO_OK)
        return rc;

    fwdioi_rt_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return FWDIO_ENOMEM;
    rt->cfg = conf;
    rt->client = *client;
    rt->comm = MPI_COMM_NULL;
    rc = FWDIO_EMPI;
    if (MPI_Comm_dup(comm, &rt->comm) != MPI_SUCCESS)
        goto fail_free;
    /* A dup inherits the caller's error handler, usually fatal: fwdio's own
     * traffic reports MPI errors as file statuses instead. */
    if (MPI_Comm_set_errhandler(rt->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        goto fail_comm;
    MPI_Comm_rank(rt->comm, &rt->rank);
    MPI_Comm_size(rt->comm, &rt->size);
    if ((rc = fwdioi_bufcache_init(rt, rt->cfg.max_message_size + FWDIOI_MESSAGE_HEADROOM)) !=
        FWDIO_OK)
        goto fail_comm;
    pthread_mutex_init(&rt->lock, NULL);
    pthread_cond_init(&rt->cond, NULL);
    pthread_cond_init(&rt->io_cond, NULL);
    if ((rc = fwdioi_progress_start(rt)) != FWDIO_OK)
        goto fail_sync;
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d of %d: runtime started", rt->rank, rt->size);
    *out = rt;
    return FWDIO_OK;

fail_sync:
    pthread_cond_destroy(&rt->io_cond);
    pthread_cond_destroy(&rt->cond);
    pthread_mutex_destroy(&rt->lock);
    fwdioi_bufcache_free(rt);
fail_comm:
    MPI_Comm_free(&rt->comm);
fail_free:
    free(rt);
    return rc;
}

void fwdioi_rt_destroy(fwdioi_rt_t *rt)
{
    fwdioi_progress_stop(rt);
    fwdioi_io_stop(rt);
    fwdioi_requests_free(&rt->requests);
    fwdioi_bufcache_free(rt);
    pthread_cond_destroy(&rt->io_cond);
    pthread_cond_destroy(&rt->cond);
    pthread_mutex_destroy(&rt->lock);
    MPI_Comm_free(&rt->comm);
    free(rt);
}

MPI_Comm fwdioi_rt_comm(const fwdioi_rt_t *rt) { return rt->comm; }
int fwdioi_rt_rank(const fwdioi_rt_t *rt) { return rt->rank; }
int fwdioi_rt_size(const fwdioi_rt_t *rt) { return rt->size; }
const fwdio_config_t *fwdioi_rt_config(const fwdioi_rt_t *rt) { return &rt->cfg; }

void fwdioi_rt_lock(fwdioi_rt_t *rt) { pthread_mutex_lock(&rt->lock); }
void fwdioi_rt_unlock(fwdioi_rt_t *rt) { pthread_mutex_unlock(&rt->lock); }
void fwdioi_rt_broadcast(fwdioi_rt_t *rt) { pthread_cond_broadcast(&rt->cond); }
void fwdioi_rt_sleep_locked(fwdioi_rt_t *rt) { pthread_cond_wait(&rt->cond, &rt->lock); }

void fwdioi_rt_submit_locked(fwdioi_rt_t *rt, fwdioi_task_t *first, fwdioi_task_t *last)
{
    last->next = NULL;
    if (rt->tasks_tail)
        rt->tasks_tail->next = first;
    else
        rt->tasks_head = first;
    rt->tasks_tail = last;
    event_active(rt->wake_ev, EV_READ, 0);
}

void fwdioi_rt_submit(fwdioi_rt_t *rt, fwdioi_task_t *task)
{
    fwdioi_rt_lock(rt);
    fwdioi_rt_submit_locked(rt, task, task);
    fwdioi_rt_unlock(rt);
}
