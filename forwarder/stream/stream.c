/* SPDX-License-Identifier: BSD-3-Clause */
/* A stream's state made and freed, and what the writer and the sender ask
 * of it: its steps complete, a message's step (stream.h). It calls nothing
 * of the stream's work (steps.c), so the file's release can free it, and
 * the write roles ask it, from below. */
#include "stream/stream.h"

#include "stream/stream_state.h"
#include "write/message.h"

#include <stdlib.h>

int fwdioi_stream_create(fwdio_file_t *f, uint64_t append_start)
{
    struct fwdioi_stream *sm = calloc(1, sizeof *sm);
    if (!sm)
        return -1;
    const size_t nsums = (size_t)f->plan.nwriters + FWDIOI_CLOSE_EXTRA;
    sm->step_sent = calloc((size_t)f->plan.nwriters, sizeof *sm->step_sent);
    sm->step_slots = calloc(2 * (2 * nsums + 2), sizeof *sm->step_slots);
    if (!sm->step_sent || !sm->step_slots) {
        free(sm->step_sent);
        free(sm->step_slots);
        free(sm);
        return -1;
    }
    STAILQ_INIT(&sm->steps);
    sm->seq_ready = 1;
    sm->append_base = append_start;
    sm->close_appends.tail = &sm->close_appends.head; /* empty (calloc'd) */
    sm->step_committer = -1;
    sm->step_agreed = sm->step_commit_local = sm->step_commit_agreed = FWDIOI_ERRINFO_OK;
    sm->steps_failed = FWDIOI_ERRINFO_OK;
    f->s.stream = sm;
    return 0;
}

void fwdioi_stream_free(fwdio_file_t *f)
{
    struct fwdioi_stream *sm = f->s.stream;
    if (!sm)
        return;
    free(sm->step_sent);
    free(sm->step_slots);
    fwdioi_commit_set_free(&sm->step_commit);
    free(sm);
    f->s.stream = NULL;
}

static struct fwdioi_stream *stream_of(const fwdio_file_t *f) { return f->s.stream; }

uint64_t fwdioi_steps_complete(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_stream *sm = stream_of(f);
    return sm ? sm->steps_complete : 0;
}

int fwdioi_steps_head_commits(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    const struct fwdioi_stream *sm = stream_of(f);
    return sm && sm->step_committers > 0;
}

void fwdioi_steps_tag(fwdio_file_t *f, fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    if (!sm)
        return;
    fwdioi_msg_set_step(m, sm->step_fill);
    sm->step_sent[m->writer] += m->payload;
}

int fwdioi_steps_untag(fwdio_file_t *f, const fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    struct fwdioi_stream *sm = stream_of(f);
    if (!sm)
        return 0;
    if (m->step != sm->step_fill)
        return -1;
    sm->step_sent[m->writer] -= m->payload;
    return 0;
}
