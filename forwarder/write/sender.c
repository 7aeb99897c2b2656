/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sending side of a file's session (progress thread): data messages
 * built by fwdio_write (route.c, combine.c) are held until the file is open,
 * then sent to their writers (to this rank's own writer without MPI), and
 * given back when the send is done.
 */
#include "write/sender.h"

#include "write/send_done.h"

#include "log.h"
#include "write/message.h"
#include "agreement/outcome.h"
#include "node/shared_path.h"
#include "write/staging.h"
#include "stream/stream.h"
#include "trace.h"
#include "write/writer.h"

#include <stdlib.h>
#include <string.h>

static void on_send_done(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_send_done(arg, st->MPI_ERROR);
}

/* Drop a message that will never be sent (the file failed). */
void fwdioi_sender_drop(fwdio_file_t *f, fwdioi_msg_t *m, int status)
{
    FWDIOI_ASSERT_PROGRESS();
    if (m->lent && m->lent->status == FWDIO_OK)
        m->lent->status = status;
    fwdioi_msg_free(f->engine, m);
}

/* A lent message goes out as one MPI message all the same: a datatype of
 * absolute addresses gathers its header, the pieces from the caller's buffer
 * and its piece table (m->wire holds the header and the table), so the
 * receiver sees the usual wire format and nothing is copied here. */
static int isend_lent(fwdio_file_t *f, fwdioi_msg_t *m, int dest, MPI_Request *req, int *call)
{
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    int n = (int)h.npieces + 2;
    int *lens = malloc((size_t)n * sizeof *lens);
    MPI_Aint *addrs = malloc((size_t)n * sizeof *addrs);
    int rc = MPI_ERR_NO_MEM;
    if (lens && addrs) {
        lens[0] = (int)sizeof h;
        *call = FWDIOI_MPI_TYPE;
        rc = MPI_Get_address(m->wire, &addrs[0]);
        for (int i = 1; i < n - 1 && rc == MPI_SUCCESS; i++) {
            fwdioi_piece_t p;
            memcpy(&p, m->wire + sizeof h + (size_t)(i - 1) * sizeof p, sizeof p);
            lens[i] = (int)p.len;
            rc = MPI_Get_address(fwdioi_msg_piece_data(m, &p, NULL), &addrs[i]);
        }
        lens[n - 1] = (int)(m->wire_len - sizeof h);
        if (rc == MPI_SUCCESS)
            rc = MPI_Get_address(m->wire + sizeof h, &addrs[n - 1]);
        MPI_Datatype type;
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_create_hindexed(n, lens, addrs, MPI_BYTE, &type);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Type_commit(&type);
            if (rc == MPI_SUCCESS) {
                *call = FWDIOI_MPI_ISEND;
                rc = MPI_Issend(MPI_BOTTOM, 1, type, dest, FWDIOI_TAG_DATA, f->s.comm, req);
            }
            fwdioi_log_mpi_failure(MPI_Type_free(&type), "MPI_Type_free"); /* the send keeps what it needs */
        }
    }
    free(lens);
    free(addrs);
    return rc;
}

/* Over MPI to the writer's rank. */
static void send_mpi(fwdio_file_t *f, fwdioi_msg_t *m)
{
    /* Synchronous sends: a message is done (its staged bytes free) only once
     * the writer has taken it. A plain send of a message under the MPI's
     * eager limit completes at once, and the data waits in the writer's MPI
     * queue instead: a writer at its budget would not hold back senders of
     * small messages, and its memory would grow with the file. */
    MPI_Request req;
    int dest = fwdioi_plan_writer_rank(&f->plan, m->writer);
    int call = FWDIOI_MPI_ISEND;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0 ? MPI_ERR_NO_MEM
             : m->lent ? isend_lent(f, m, dest, &req, &call)
                       : MPI_Issend(m->wire, (int)m->wire_len, MPI_BYTE, dest, FWDIOI_TAG_DATA,
                                    f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        /* Not sent and not counted: the writer does not wait for it, and the
         * final agreement tells every rank the file failed. */
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s failed for %s (MPI error %d)", f->rank,
                   fwdioi_mpi_call_name(call), f->path, rc);
        fwdioi_errinfo_set_mpi(&f->s.outcome.local_error, f->rank, call, rc);
        /* (the close agreement, once started, reads sent_bytes) */
        int counted = fwdioi_file_closing(f) || fwdioi_steps_untag(f, m) != 0;
        if (!fwdioi_file_closing(f))
            f->s.sent_bytes[m->writer] -= m->payload;
        fwdioi_sender_drop(f, m, FWDIO_EMPI);
        /* Its bytes were agreed on already (a message that waited for room in
         * the area): its writer would wait for them for ever. */
        if (counted)
            fwdioi_outcome_mpi_failed(f, call, rc);
        return;
    }
    if (m->staged)
        fwdioi_staging_sent(f, m);
    f->s.stats.bytes_to_mpi += m->payload;
    f->s.sends_pending++;
    fwdioi_rt_track(f->engine, req, on_send_done, m);
}

/* To a writer on local rank `to` of this node: by reference through the
 * node-shared area, or, a message outside it, announced there and sent over
 * MPI (the announcement is what makes the sleeping writer probe). 0, or -1
 * when the writer's ring is full (nothing done). */
static int send_local(fwdio_file_t *f, fwdioi_msg_t *m, int to)
{
    if (m->area_to >= 0) {
        if (fwdioi_shared_send(f, m) != 0)
            return -1;
        /* done when the writer gives it back: no MPI, no copy */
        if (m->staged)
            fwdioi_staging_sent(f, m);
        f->s.stats.bytes_shared += m->payload;
        f->s.sends_pending++;
        return 0;
    }
    if (fwdioi_shared_note(f, m, to) != 0)
        return -1;
    send_mpi(f, m);
    return 0;
}

void fwdioi_sender_dispatch(fwdio_file_t *f, fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!f->s.close_early) /* else counted at the close, held (session.c) */
        f->s.sent_bytes[m->writer] += m->payload;
    f->s.stats.messages_sent++;
    if (m->writer == f->my_writer) { /* to ourselves: no MPI */
        if (m->staged)
            fwdioi_staging_sent(f, m);
        m->hold = (fwdioi_hold_t){1, FWDIOI_HOLD_OWN, m, m->alloc_len, 0, NULL};
        fwdioi_pieces_view_t v;
        fwdioi_msg_view(m, &v);
        fwdioi_writer_accept(f, &v, &m->hold, f->rank);
        fwdioi_writer_check_drained(f);
        return;
    }
    m->trace_t0 = fwdioi_trace_begin();
    int to = fwdioi_area_local_index(&f->owner->area, fwdioi_plan_writer_rank(&f->plan, m->writer));
    if (to < 0) {
        send_mpi(f, m);
    } else if (send_local(f, m, to) != 0) {
        /* The writer's ring is full: it waits, in flight, for room. */
        f->s.sends_pending++;
        STAILQ_INSERT_TAIL(&f->owner->area_blocked, &m->task, link);
    }
}

int fwdioi_sender_retry_blocked(struct fwdio_runtime *o)
{
    FWDIOI_ASSERT_PROGRESS();
    int sent = 0;
    while (!STAILQ_EMPTY(&o->area_blocked)) {
        fwdioi_msg_t *m = (fwdioi_msg_t *)STAILQ_FIRST(&o->area_blocked);
        fwdio_file_t *f = m->file;
        STAILQ_REMOVE_HEAD(&o->area_blocked, link); /* sending may free it */
        if (f->s.outcome.aborted) {
            f->s.sends_pending--;
            fwdioi_sender_drop(f, m, (int)f->s.outcome.abort_info.status);
            fwdioi_outcome_finish_if_aborted(f);
            continue;
        }
        int to = fwdioi_area_local_index(&o->area, fwdioi_plan_writer_rank(&f->plan, m->writer));
        f->s.sends_pending--; /* send_local counts it again */
        if (send_local(f, m, to) != 0) {
            f->s.sends_pending++;
            STAILQ_INSERT_HEAD(&o->area_blocked, &m->task, link);
            break; /* still full: in order, the rest waits too */
        }
        sent++;
    }
    return sent;
}

/*
 * A stream with rewrites sends a step's messages only once every step before
 * it is complete here. A step completes only after every writer has written
 * all of it, so a writer never has a later step's bytes in its assembly
 * while an earlier step's may still come: it can forget a complete step's
 * bytes (writer.c) and take the same bytes again, and the later step's land
 * last. Held messages count against staging, which bounds them.
 */
static int in_turn(const fwdio_file_t *f, const fwdioi_msg_t *m)
{
    if (fwdioi_file_before_open(f))
        return 0;
    return !f->opts.rewrites || m->step <= fwdioi_steps_complete(f);
}

void fwdioi_sender_send(fwdio_file_t *f, fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->outcome.aborted) {
        fwdioi_sender_drop(f, m, (int)s->outcome.abort_info.status);
    } else if (fwdioi_file_open_failed(f)) {
        fwdioi_sender_drop(f, m, (int)s->outcome.open_agreed.status); /* the file failed to open */
    } else if (!in_turn(f, m)) {
        /* Held messages are all out of turn (released as soon as their turn
         * comes), so one in turn may pass them. */
        STAILQ_INSERT_TAIL(&s->held, &m->task, link);
    } else {
        fwdioi_sender_dispatch(f, m);
    }
}

void fwdioi_sender_release_held(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_task_list_t waiting;
    STAILQ_INIT(&waiting);
    STAILQ_CONCAT(&waiting, &f->s.held);
    f->s.releasing = &waiting;
    while (!STAILQ_EMPTY(&waiting)) { /* each sent, dropped, or held again */
        fwdioi_msg_t *m = (fwdioi_msg_t *)STAILQ_FIRST(&waiting);
        STAILQ_REMOVE_HEAD(&waiting, link);
        fwdioi_sender_send(f, m);
    }
    f->s.releasing = NULL;
}

/* Task: a message from fwdio_write. */
void fwdioi_msg_task(fwdioi_task_t *task)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_msg_t *m = (fwdioi_msg_t *)task;
    fwdio_file_t *f = m->file;
    if (!f->s.outcome.aborted)
        fwdioi_steps_tag(f, m);
    fwdioi_sender_send(f, m); /* the task has run: its link is free */
}
