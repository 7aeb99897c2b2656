/* SPDX-License-Identifier: BSD-3-Clause */
/* A message sent to this rank's neighbours in the relay tree (relay_send.h):
 * one copy, shared by its sends and freed when the last has completed. */
#include "agreement/relay_send.h"

#include "agreement/relay_tree.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

typedef struct relay_msg {
    int refs;
    int64_t msg[];
} relay_msg_t;

static void on_sent(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    (void)st;
    relay_msg_t *a = arg;
    if (--a->refs == 0)
        free(a);
}

void fwdioi_relay_send(struct fwdio_runtime *o, const int64_t *msg, int n, int tag, int except,
                       const char *what)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_engine_t *engine = o->engine;
    const int me = fwdioi_rt_rank(engine);
    int to[FWDIOI_RELAY_MAX];
    int nto = fwdioi_relay_neighbours(me, fwdioi_rt_size(engine), to);
    if (nto == 0 || (nto == 1 && to[0] == except) || n < 0 || n > FWDIOI_RELAY_INTS_MAX)
        return;
    relay_msg_t *a = malloc(sizeof *a + (size_t)n * sizeof a->msg[0]);
    if (!a) {
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: no memory to tell the other ranks of %s", me, what);
        return;
    }
    a->refs = 1; /* ours, until every send is posted */
    memcpy(a->msg, msg, (size_t)n * sizeof a->msg[0]);
    for (int i = 0; i < nto; i++) {
        if (to[i] == except)
            continue;
        MPI_Request req;
        int rc = fwdioi_rt_track_reserve(engine) != 0
                     ? MPI_ERR_NO_MEM
                     : MPI_Isend(a->msg, n, MPI_INT64_T, to[i], tag, fwdioi_rt_comm(engine), &req);
        if (rc != MPI_SUCCESS) {
            fwdioi_log(FWDIOI_LOG_WARN, "rank %d: could not tell rank %d of %s", me, to[i], what);
            continue;
        }
        a->refs++;
        fwdioi_rt_track(engine, req, on_sent, a);
    }
    on_sent(a, NULL);
}
