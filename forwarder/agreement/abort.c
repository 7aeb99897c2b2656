/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Aborts: when an MPI call of a file's session fails on one rank, the other
 * ranks may be left waiting in a collective that rank will never join. The
 * failing rank therefore tells every other rank, with a small message on the
 * runtime's communicator passed on along a tree (relay_tree.h: O(log P)
 * messages per rank and hops for any number of failing ranks), and each of
 * them gives up that file's collectives
 * and completes it with the same error (outcome.c, fwdioi_outcome_abort; session.c). An
 * abort can arrive before the receiver has opened the file: it is kept until
 * it does.
 *
 * A file of the node-local tier drains after its session, on its own
 * communicator (local/drain.c): an MPI failure of the drain is announced the
 * same way, marked as the drain's, and heard by the drain (or kept until
 * this rank's drain starts), never by the session.
 *
 * A writer of an aborted file may still be sent data that other ranks posted
 * before they heard of the abort; its communicator is kept as a "zombie" and
 * such data is received and dropped, so no sender waits for ever.
 *
 * Everything here runs on the progress thread.
 */
#include "agreement/abort.h"

#include "agreement/outcome.h"
#include "agreement/relay_send.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

/* seq, the errinfo, how the announcer's steps ended (a stream's), then
 * whether it is the file's drain (node-local tier) that is aborted */
enum { ABORT_INTS = 1 + FWDIOI_ERRINFO_INTS + 2 + FWDIOI_ERRINFO_INTS + 1 };

/* How long a zombie is drained after the last file completed, in seconds. */
#define ZOMBIE_DRAIN_SECONDS 30.0

/* Tell every other rank of the abort of file `seq` (of its drain with
 * `drain`): sent along the relay tree, which the ranks that hear it first
 * carry on (on_abort_received) (progress thread). */
static void announce(struct fwdio_runtime *o, uint64_t seq, const fwdioi_errinfo_t *why,
                     const fwdioi_step_outcome_t *steps, int drain)
{
    FWDIOI_ASSERT_PROGRESS();
    int64_t msg[ABORT_INTS];
    msg[0] = (int64_t)seq;
    memcpy(&msg[1], why, sizeof *why);
    msg[1 + FWDIOI_ERRINFO_INTS] = steps->complete;
    msg[2 + FWDIOI_ERRINFO_INTS] = steps->ok;
    memcpy(&msg[3 + FWDIOI_ERRINFO_INTS], &steps->failed, sizeof steps->failed);
    msg[ABORT_INTS - 1] = drain;
    fwdioi_relay_send(o, msg, ABORT_INTS, FWDIOI_TAG_ABORT, -1, "an MPI failure");
}

void fwdioi_abort_announce(struct fwdio_runtime *o, uint64_t seq, const fwdioi_errinfo_t *why,
                           const fwdioi_step_outcome_t *steps)
{
    FWDIOI_ASSERT_PROGRESS();
    announce(o, seq, why, steps, 0);
}

void fwdioi_abort_announce_drain(struct fwdio_runtime *o, uint64_t seq,
                                 const fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_step_outcome_t none = {0, 0, FWDIOI_ERRINFO_OK};
    announce(o, seq, why, &none, 1);
}

static fwdio_file_t *active_file(struct fwdio_runtime *o, uint64_t seq)
{
    return fwdioi_outcome_active_file(o, seq); /* indexed: O(1) per abort heard */
}

/* Keep an abort for a file (a drain) not started here yet; returns 0 if
 * one was kept for it already (the first one told is enough), else 1. */
static int keep_pending(struct fwdio_runtime *o, uint64_t seq, const fwdioi_errinfo_t *why,
                        int drain)
{
    for (int i = 0; i < o->npending_aborts; i++)
        if (o->pending_aborts[i].seq == seq && o->pending_aborts[i].drain == drain)
            return 0;
    if (o->npending_aborts == o->pending_aborts_cap) {
        int cap = o->pending_aborts_cap ? 2 * o->pending_aborts_cap : 4;
        fwdioi_pending_abort_t *p = realloc(o->pending_aborts, (size_t)cap * sizeof *p);
        if (!p) {
            fwdioi_log(FWDIOI_LOG_WARN, "rank %d: no memory to keep an abort of file %llu",
                       fwdioi_rt_rank(o->engine), (unsigned long long)seq);
            return 1; /* not kept, but new here: passed on all the same */
        }
        o->pending_aborts = p;
        o->pending_aborts_cap = cap;
    }
    o->pending_aborts[o->npending_aborts++] = (fwdioi_pending_abort_t){seq, *why, drain};
    return 1;
}

typedef struct abort_recv {
    struct fwdio_runtime *owner;
    int64_t msg[ABORT_INTS];
} abort_recv_t;

/* An abort heard: the file (its drain) takes it, or it is kept until this
 * rank starts it. The first one this rank hears of a file (a drain) goes on
 * to its other neighbours in the relay tree: a rank that knew already, by
 * its own failure or from another neighbour, told all of its neighbours
 * then. A file complete here keeps no record of what it heard, so it passes
 * on every one (a tree has no cycle: each crosses an edge once). */
static void on_abort_received(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    abort_recv_t *a = arg;
    struct fwdio_runtime *o = a->owner;
    if (st->MPI_ERROR == MPI_SUCCESS) {
        uint64_t seq = (uint64_t)a->msg[0];
        fwdioi_errinfo_t why;
        memcpy(&why, &a->msg[1], sizeof why);
        fwdioi_step_outcome_t steps = {a->msg[1 + FWDIOI_ERRINFO_INTS],
                                       a->msg[2 + FWDIOI_ERRINFO_INTS], FWDIOI_ERRINFO_OK};
        memcpy(&steps.failed, &a->msg[3 + FWDIOI_ERRINFO_INTS], sizeof steps.failed);
        fwdio_file_t *f = active_file(o, seq);
        int new_here = 1;
        if (a->msg[ABORT_INTS - 1]) {
            /* a drain: the file's session may still be running here */
            if (!(o->session_ops->drain_abort_heard &&
                  o->session_ops->drain_abort_heard(o, seq, &why)) &&
                (f || seq >= o->opened_seq))
                new_here = keep_pending(o, seq, &why, 1);
            /* else: its drain took it, or is over here already */
        } else if (f) {
            new_here = !f->s.outcome.aborted; /* aborted: told its neighbours then */
            fwdioi_outcome_abort_heard(f, &why, &steps);
        } else if (seq >= o->opened_seq)
            new_here = keep_pending(o, seq, &why, 0);
        /* else: complete here already; the sender's collective found us */
        if (new_here)
            fwdioi_relay_send(o, a->msg, ABORT_INTS, FWDIOI_TAG_ABORT, st->MPI_SOURCE,
                              "an MPI failure");
    }
    free(a);
}

int fwdioi_abort_receive(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_engine_t *engine = o->engine;
    int n = 0;
    for (;;) {
        if (fwdioi_rt_track_reserve(engine) != 0)
            return n;
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        MPI_Comm comm = fwdioi_rt_comm(engine);
        if (MPI_Improbe(MPI_ANY_SOURCE, FWDIOI_TAG_ABORT, comm, &flag, &msg, &st) != MPI_SUCCESS ||
            !flag)
            return n;
        abort_recv_t *a = malloc(sizeof *a);
        MPI_Request req;
        if (!a || MPI_Imrecv(a ? a->msg : NULL, a ? ABORT_INTS : 0, MPI_INT64_T, &msg, &req) !=
                      MPI_SUCCESS) {
            fwdioi_log(FWDIOI_LOG_WARN, "rank %d: could not receive an abort from rank %d",
                       fwdioi_rt_rank(engine), st.MPI_SOURCE);
            free(a);
            return n;
        }
        a->owner = o;
        fwdioi_rt_track(engine, req, on_abort_received, a);
        n++;
    }
}

int fwdioi_abort_take_pending(struct fwdio_runtime *o, uint64_t seq, int drain,
                              fwdioi_errinfo_t *why)
{
    FWDIOI_ASSERT_PROGRESS();
    for (int i = 0; i < o->npending_aborts; i++) {
        if (o->pending_aborts[i].seq != seq || o->pending_aborts[i].drain != drain)
            continue;
        *why = o->pending_aborts[i].info;
        o->pending_aborts[i] = o->pending_aborts[--o->npending_aborts];
        return 1;
    }
    return 0;
}

void fwdioi_zombie_add(struct fwdio_runtime *o, MPI_Comm comm, int kept)
{
    FWDIOI_ASSERT_PROGRESS();
    if (o->nzombies == o->zombies_cap) {
        int cap = o->zombies_cap ? 2 * o->zombies_cap : 4;
        fwdioi_zombie_t *z = realloc(o->zombies, (size_t)cap * sizeof *z);
        if (!z) { /* cannot keep it: free it; a late sender may then wait */
            if (!kept)
                fwdioi_log_mpi_failure(MPI_Comm_free(&comm), "MPI_Comm_free");
            return;
        }
        o->zombies = z;
        o->zombies_cap = cap;
    }
    o->zombies[o->nzombies++] = (fwdioi_zombie_t){comm, fwdioi_now(), kept};
}

static void on_zombie_data(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)st;
    free(arg);
}

int fwdioi_abort_drain(struct fwdio_runtime *o, MPI_Comm comm)
{
    FWDIOI_ASSERT_PROGRESS();
    int n = 0;
    for (;;) {
        if (fwdioi_rt_track_reserve(o->engine) != 0)
            return n;
        int flag = 0, len = 0;
        MPI_Message msg;
        MPI_Status st;
        /* any tag: a read file's answers and requests too */
        if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st) != MPI_SUCCESS ||
            !flag)
            return n;
        if (MPI_Get_count(&st, MPI_BYTE, &len) != MPI_SUCCESS || len == MPI_UNDEFINED)
            len = 0; /* received into nothing (truncated) all the same */
        void *buf = malloc(len > 0 ? (size_t)len : 1);
        MPI_Request req;
        if (!buf || MPI_Imrecv(buf, buf ? len : 0, MPI_BYTE, &msg, &req) != MPI_SUCCESS) {
            free(buf);
            return n;
        }
        fwdioi_rt_track(o->engine, req, on_zombie_data, buf);
        n++;
    }
}

int fwdioi_zombie_drain(struct fwdio_runtime *o, int *active)
{
    FWDIOI_ASSERT_PROGRESS();
    int n = 0;
    double now = o->nzombies ? fwdioi_now() : 0;
    for (int i = 0; i < o->nzombies; i++) {
        if (now - o->zombies[i].since > ZOMBIE_DRAIN_SECONDS && LIST_EMPTY(&o->active))
            continue;
        *active = FWDIOI_POLL_SOON;
        int got = fwdioi_abort_drain(o, o->zombies[i].comm);
        if (got > 0)
            o->zombies[i].since = now;
        n += got;
    }
    return n;
}

void fwdioi_abort_free(struct fwdio_runtime *o)
{
    for (int i = 0; i < o->nzombies; i++)
        if (!o->zombies[i].kept)
            fwdioi_log_mpi_failure(MPI_Comm_free(&o->zombies[i].comm),
                                   "MPI_Comm_free (aborted file)");
    free(o->zombies);
    free(o->pending_aborts);
    o->zombies = NULL;
    o->pending_aborts = NULL;
    o->nzombies = o->npending_aborts = 0;
}
