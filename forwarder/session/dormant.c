/* SPDX-License-Identifier: BSD-3-Clause */
/* Dormant files: woken by their first use on any rank (dormant.h). */
#include "session/dormant.h"

#include "agreement/outcome.h"
#include "agreement/relay_send.h"
#include "log.h"

#include <stdlib.h>

static void wake_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = (fwdio_file_t *)((char *)task - offsetof(fwdio_file_t, wake_task));
    fwdioi_dormant_wake(f, -1);
}

void fwdioi_dormant_init(fwdio_file_t *f, int dormant)
{
    f->wake_task.run = wake_task;
    f->s.dormant = dormant;
    atomic_store(&f->dormant_app, dormant);
}

void fwdioi_dormant_use_locked(fwdio_file_t *f)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    if (!atomic_load(&f->dormant_app))
        return;
    atomic_store(&f->dormant_app, 0);
    fwdioi_rt_submit(f->engine, &f->wake_task);
}

void fwdioi_dormant_use(fwdio_file_t *f)
{
    if (!atomic_load_explicit(&f->dormant_app, memory_order_relaxed))
        return; /* the common case: one load, no lock */
    fwdioi_rt_lock(f->engine);
    fwdioi_dormant_use_locked(f);
    fwdioi_rt_unlock(f->engine);
}

void fwdioi_dormant_discard_locked(fwdio_file_t *f)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    atomic_store(&f->dormant_app, 0);
}

/* Tell the neighbours but `except` that file `seq` is in use. */
static void tell(struct fwdio_runtime *o, uint64_t seq, int except)
{
    int64_t msg = (int64_t)seq;
    fwdioi_relay_send(o, &msg, 1, FWDIOI_TAG_WAKE, except, "a file's first use");
}

/* f's session may start: no longer dormant here, nor to be woken by the
 * application. */
static void rouse(fwdio_file_t *f)
{
    f->s.dormant = 0;
    f->owner->ndormant--;
    fwdioi_rt_lock(f->engine);
    atomic_store(&f->dormant_app, 0);
    fwdioi_rt_unlock(f->engine);
}

void fwdioi_dormant_wake(fwdio_file_t *f, int except)
{
    FWDIOI_ASSERT_PROGRESS();
    /* Told once per file: a rank carries a wake on when it first hears of
     * it, or first uses the file, and never again (a file not dormant here,
     * opened so where others opened it dormant, carries it on too). */
    if (f->s.wake_told)
        return;
    f->s.wake_told = 1;
    tell(f->owner, f->seq, except);
    if (!f->s.dormant)
        return;
    rouse(f);
    fwdioi_log(FWDIOI_LOG_DEBUG, "rank %d: %s (file %llu) woken%s", f->rank, f->path,
               (unsigned long long)f->seq, except < 0 ? " by its use here" : "");
    f->owner->session_ops->woken(f);
}

/* A wake for `seq` heard before this rank opened it: kept (1: new here),
 * or kept already (0). */
static int keep_pending(struct fwdio_runtime *o, uint64_t seq)
{
    for (int i = 0; i < o->npending_wakes; i++)
        if (o->pending_wakes[i] == seq)
            return 0;
    if (o->npending_wakes == o->pending_wakes_cap) {
        int cap = o->pending_wakes_cap ? 2 * o->pending_wakes_cap : 4;
        uint64_t *p = realloc(o->pending_wakes, (size_t)cap * sizeof *p);
        if (!p) {
            /* The file then waits for this rank's own use or close. */
            fwdioi_log(FWDIOI_LOG_WARN, "rank %d: no memory to keep the wake of file %llu",
                       fwdioi_rt_rank(o->engine), (unsigned long long)seq);
            return 1;
        }
        o->pending_wakes = p;
        o->pending_wakes_cap = cap;
    }
    o->pending_wakes[o->npending_wakes++] = seq;
    return 1;
}

static int take_pending(struct fwdio_runtime *o, uint64_t seq)
{
    for (int i = 0; i < o->npending_wakes; i++) {
        if (o->pending_wakes[i] != seq)
            continue;
        o->pending_wakes[i] = o->pending_wakes[--o->npending_wakes];
        return 1;
    }
    return 0;
}

void fwdioi_dormant_opened(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdio_runtime *o = f->owner;
    if (f->refused) { /* its check fails the others' file: they must run it */
        f->s.wake_told = 1;
        tell(o, f->seq, -1);
        return;
    }
    if (!take_pending(o, f->seq)) {
        if (f->s.dormant)
            o->ndormant++;
        return;
    }
    f->s.wake_told = 1; /* carried on when heard */
    if (f->s.dormant) {
        o->ndormant++;
        rouse(f); /* its communicator comes later: the session starts then */
    }
}

void fwdioi_dormant_ended(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    if (f->s.dormant)
        rouse(f);
}

int fwdioi_dormant_receive(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    int n = 0;
    for (;;) {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Comm comm = fwdioi_rt_comm(o->engine);
        if (MPI_Improbe(MPI_ANY_SOURCE, FWDIOI_TAG_WAKE, comm, &flag, &msg, &st) != MPI_SUCCESS ||
            !flag)
            return n;
        int64_t seq = -1;
        /* one word, arrived already: the matched receive completes at once */
        if (MPI_Mrecv(&seq, 1, MPI_INT64_T, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS || seq < 0) {
            fwdioi_log(FWDIOI_LOG_WARN, "rank %d: could not receive a wake from rank %d",
                       fwdioi_rt_rank(o->engine), st.MPI_SOURCE);
            return n;
        }
        n++;
        fwdio_file_t *f = fwdioi_outcome_active_file(o, (uint64_t)seq);
        if (f)
            fwdioi_dormant_wake(f, st.MPI_SOURCE);
        else if ((uint64_t)seq >= o->opened_seq && keep_pending(o, (uint64_t)seq))
            tell(o, (uint64_t)seq, st.MPI_SOURCE);
        /* else: over here already (complete, or discarded) */
    }
}

void fwdioi_dormant_free(struct fwdio_runtime *o)
{
    free(o->pending_wakes);
    o->pending_wakes = NULL;
    o->npending_wakes = o->pending_wakes_cap = 0;
}
