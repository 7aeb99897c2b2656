/* SPDX-License-Identifier: BSD-3-Clause */
/* A writer's room in the node's local store, taken or waited for
 * (local_space.h). */
#include "local/local_space.h"

#include "clock.h"
#include "local/local_keep.h"
#include "local/local_life.h"
#include "local/local_room.h"
#include "local/local_state.h"
#include "log.h"
#include "node/node_area.h"
#include "plan/topology.h"

#include <stdio.h>

_Static_assert(FWDIO_LOCAL_WAIT_OFF == FWDIOI_ROOM_NEVER_WAIT, "local_wait off is never waiting");

/* Where the area is off each rank counts alone against its share. */
static uint64_t share_of(const fwdio_file_t *f)
{
    int node_ranks = fwdioi_topology_node_ranks(&f->owner->topo, f->rank);
    return f->local->capacity / (uint64_t)(node_ranks > 0 ? node_ranks : 1);
}

static uint64_t limit_of(const fwdio_file_t *f)
{
    return f->owner->area.enabled ? f->local->capacity : share_of(f);
}

/* Take `bytes` of the node's count, evicting this rank's drained copies
 * when that makes room: 0, or -1 (nothing taken). */
static int take_room(fwdio_file_t *f, uint64_t bytes)
{
    struct fwdioi_local *l = f->local;
    fwdioi_area_t *a = &f->owner->area;
    uint64_t share = share_of(f), limit = limit_of(f);
    int taken = fwdioi_area_local_take(a, l->capacity, share, bytes) == 0;
    /* Room from this rank's drained copies, oldest first (their files go
     * on the ordered I/O thread, before this open): their bytes pass
     * straight to this file, never through the node's count, where
     * another rank's file could take them first (that rank's own copies
     * then gone for nothing). As many as the file's bytes if this
     * rank's copies hold that much, else as many as the shortfall. */
    uint64_t used = 0, peak = 0;
    fwdioi_area_local_usage(a, &used, &peak);
    if (!taken && bytes <= limit) {
        uint64_t shortfall = used > limit - bytes ? used - (limit - bytes) : 0, freed = 0;
        if (!fwdioi_local_kept_evict(f->owner, bytes, &freed) && shortfall > 0)
            fwdioi_local_kept_evict(f->owner, shortfall, &freed);
        if (freed >= bytes) {
            if (freed > bytes)
                fwdioi_area_local_give(a, freed - bytes);
            taken = 1;
        } else {
            taken = fwdioi_area_local_take(a, l->capacity, share, bytes - freed) == 0;
            if (!taken && freed > 0)
                fwdioi_area_local_give(a, freed); /* the copies are gone all the same */
        }
    }
    return taken ? 0 : -1;
}

int fwdioi_local_room_take(fwdio_file_t *f, uint64_t bytes)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (take_room(f, bytes) != 0)
        return -1;
    l->reserved = bytes;
    l->pending += bytes;
    fwdioi_area_local_pending(&f->owner->area, bytes, 0);
    return 0;
}

int fwdioi_local_stream_take(fwdio_file_t *f, uint64_t bytes)
{
    fwdioi_area_t *a = &f->owner->area;
    if (fwdioi_area_local_take(a, f->local->capacity, share_of(f), bytes) != 0)
        return -1;
    fwdioi_area_local_pending(a, bytes, 0);
    return 0;
}

int fwdioi_local_partner_room_take(fwdio_file_t *f, uint64_t bytes)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (l->capacity == 0)
        return 0; /* nothing is counted without local_capacity */
    if (take_room(f, bytes) != 0) {
        uint64_t used = 0, peak = 0;
        fwdioi_area_local_usage(&f->owner->area, &used, &peak);
        fwdioi_log(FWDIOI_LOG_WARN,
                   "rank %d: %s: a partner copy of %llu bytes does not fit local_capacity "
                   "(%llu used of %llu on the node%s): not kept, the file completes with one "
                   "copy of that writer's units until it is drained",
                   f->rank, f->path, (unsigned long long)bytes, (unsigned long long)used,
                   (unsigned long long)limit_of(f),
                   f->owner->area.enabled ? "" : ", this rank's share");
        return -1;
    }
    l->partner_bytes += bytes;
    l->pending += bytes;
    fwdioi_area_local_pending(&f->owner->area, bytes, 0);
    return 0;
}

void fwdioi_local_partner_room_give(fwdio_file_t *f, uint64_t bytes)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_local *l = f->local;
    if (bytes == 0 || bytes > l->partner_bytes)
        return;
    uint64_t undrained = bytes < l->pending ? bytes : l->pending;
    fwdioi_area_local_pending(&f->owner->area, 0, undrained);
    l->pending -= undrained;
    fwdioi_area_local_give(&f->owner->area, bytes);
    l->partner_bytes -= bytes;
    fwdioi_local_room_changed(f->owner);
}

/* The choice for f's file now (local_room.h). */
static fwdioi_local_room_t choose(fwdio_file_t *f, uint64_t bytes, double waited)
{
    fwdioi_area_t *a = &f->owner->area;
    fwdioi_local_room_in_t in = {.bytes = bytes, .limit = limit_of(f)};
    uint64_t peak = 0;
    fwdioi_area_local_usage(a, &in.used, &peak);
    in.pending = fwdioi_area_local_pending_now(a);
    /* every rank's drained copies where the area lets ranks evict for one
     * another, else this rank's own */
    in.kept = a->enabled ? fwdioi_area_kept_node(a, NULL) : fwdioi_local_kept_bytes(f->owner);
    in.waited_ms = (uint64_t)(waited * 1000.0);
    in.wait_ms = fwdioi_rt_config(f->engine)->local_wait_ms;
    return fwdioi_local_room_choose(&in);
}

/* The writer goes to the target: why, in the log (FWDIO_VERBOSE). */
static void log_direct(const fwdio_file_t *f, uint64_t bytes, fwdioi_local_room_t why,
                       double waited)
{
    fwdioi_area_t *a = &f->owner->area;
    uint64_t used = 0, peak = 0;
    fwdioi_area_local_usage(a, &used, &peak);
    char after[64] = "";
    if (waited > 0)
        snprintf(after, sizeof after, " after waiting %.3f s", waited);
    fwdioi_log(FWDIOI_LOG_INFO,
               "rank %d: %s: %llu bytes do not fit local_capacity (%llu used of %llu on the "
               "node%s)%s: written straight to the target (%s)",
               f->rank, f->path, (unsigned long long)bytes, (unsigned long long)used,
               (unsigned long long)limit_of(f), a->enabled ? "" : ", this rank's share", after,
               fwdioi_local_room_why(why));
}

/* What the node's count lacks for `bytes` more now. */
static uint64_t shortfall_of(fwdio_file_t *f, uint64_t bytes)
{
    uint64_t used = 0, peak = 0, limit = limit_of(f);
    fwdioi_area_local_usage(&f->owner->area, &used, &peak);
    return used > limit - bytes ? used - (limit - bytes) : 0;
}

/* Node-wide eviction (local_keep.h): publish what this rank's oldest waiting
 * writer lacks (0: none waits) and, on every try while it lacks room, ring
 * the rank holding the node's oldest drained copy, which evicts for it: the
 * holder changes as copies go, and an idle rank's progress thread looks at
 * the node's shortfalls only when rung. */
static void ask_node(struct fwdio_runtime *o)
{
    fwdioi_area_t *a = &o->area;
    if (!a->enabled)
        return;
    struct fwdioi_local *l = TAILQ_FIRST(&o->local_waiting);
    uint64_t lacks = l ? shortfall_of(l->file, l->wait_bytes) : 0;
    if (lacks != o->local_short_set || lacks != fwdioi_area_room_short_mine(a)) {
        fwdioi_area_room_short_set(a, lacks); /* changed, or others covered some */
        o->local_short_set = lacks;
    }
    int holder = lacks > 0 ? fwdioi_area_kept_oldest(a, NULL, NULL) : -1;
    if (holder >= 0 && holder != a->local)
        fwdioi_area_ring(a, holder);
}

int fwdioi_local_room_wait(fwdio_file_t *f, struct fwdioi_storage_job *job, uint64_t bytes,
                           const fwdioi_room_wait_t *then)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_local_room_t why = choose(f, bytes, 0);
    if (why != FWDIOI_ROOM_WAIT) {
        log_direct(f, bytes, why, 0);
        return 0;
    }
    struct fwdioi_local *l = f->local;
    struct fwdio_runtime *o = f->owner;
    l->waiting = 1;
    l->wait_job = job;
    l->wait_bytes = bytes;
    l->wait_t0 = fwdioi_now();
    l->wait_then = *then;
    TAILQ_INSERT_TAIL(&o->local_waiting, l, wait_link);
    o->local_wait_next = l->wait_t0 + FWDIOI_WAIT_TICK_US / 1e6;
    fwdioi_log(FWDIOI_LOG_INFO,
               "rank %d: %s: %llu bytes do not fit local_capacity now: the writer waits for "
               "drains or evictions to make room (at most %.3f s)",
               f->rank, f->path, (unsigned long long)bytes,
               (double)fwdioi_rt_config(f->engine)->local_wait_ms / 1000.0);
    ask_node(o);
    fwdioi_local_kept_node_poll(o); /* this rank may hold the node's oldest copy */
    return 1;
}

void fwdioi_local_room_changed(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    if (TAILQ_EMPTY(&o->local_waiting))
        return;
    o->local_wait_next = 0; /* the next tick tries them, */
    fwdioi_rt_kick(o->engine); /* which comes soon */
}

/* Try one waiting writer: 1 when its wait is over. */
static int try_one(struct fwdioi_local *l, double now)
{
    fwdio_file_t *f = l->file;
    struct fwdioi_storage_job *job = l->wait_job;
    const fwdioi_room_wait_t then = l->wait_then;
    double waited = now - l->wait_t0;
    if (f->s.outcome.aborted) {
        l->waiting = 0;
        l->wait_job = NULL;
        then.go(f, job, 0);
        return 1;
    }
    int taken = fwdioi_local_room_take(f, l->wait_bytes) == 0;
    fwdioi_local_room_t why = taken ? FWDIOI_ROOM_WAIT : choose(f, l->wait_bytes, waited);
    if (!taken && why == FWDIOI_ROOM_WAIT)
        return 0;
    if (taken)
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: %s: room in the local store after waiting %.3f s",
                   f->rank, f->path, waited);
    else
        log_direct(f, l->wait_bytes, why, waited);
    l->waiting = 0;
    l->wait_job = NULL;
    then.resolved(f, job, taken);
    then.go(f, job, 1);
    return 1;
}

int fwdioi_local_room_poll(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_local_kept_node_poll(o); /* another rank's writer may lack room */
    if (TAILQ_EMPTY(&o->local_waiting)) {
        if (o->local_short_set > 0)
            ask_node(o); /* none waits any more */
        return 0;
    }
    double now = fwdioi_now();
    /* before the tick only when another rank evicted for this one */
    int covered = fwdioi_area_room_short_mine(&o->area) < o->local_short_set;
    if (now < o->local_wait_next && !covered)
        return 1;
    o->local_wait_next = now + FWDIOI_WAIT_TICK_US / 1e6;
    /* Oldest first. Take the list: what a wait's end runs (an aborted
     * file's end, the open of a file that waited for the path) may add a
     * new waiter, which goes to the runtime's list after these. */
    struct fwdioi_local_waiting batch = TAILQ_HEAD_INITIALIZER(batch);
    struct fwdioi_local_waiting still = TAILQ_HEAD_INITIALIZER(still);
    TAILQ_CONCAT(&batch, &o->local_waiting, wait_link);
    struct fwdioi_local *l;
    while ((l = TAILQ_FIRST(&batch)) != NULL) {
        TAILQ_REMOVE(&batch, l, wait_link);
        if (!try_one(l, now))
            TAILQ_INSERT_TAIL(&still, l, wait_link);
    }
    /* the ones still waiting first, in order, then any newcomer */
    TAILQ_CONCAT(&still, &o->local_waiting, wait_link);
    TAILQ_CONCAT(&o->local_waiting, &still, wait_link);
    ask_node(o);
    return !TAILQ_EMPTY(&o->local_waiting);
}
