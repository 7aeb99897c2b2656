/* Data messages: made by routing and combining, freed by the session. */
#include "message.h"

#include "sender.h"
#include "staging.h"

#include <string.h>

fwdioi_msg_t *fwdioi_msg_new(fwdio_file_t *f, int writer, size_t wire_cap, int staged)
{
    fwdioi_msg_t *m = fwdioi_rt_buf_get(f->rt, sizeof *m + wire_cap);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->task.run = fwdioi_msg_task;
    m->file = f;
    m->writer = writer;
    m->staged = staged;
    m->alloc_len = sizeof *m + wire_cap;
    return m;
}

const uint8_t *fwdioi_msg_piece_data(const fwdioi_msg_t *m, const fwdioi_piece_t *p,
                                     const uint8_t *packed)
{
    return m->lent ? m->lent_base + (p->offset - m->lent_offset) : packed;
}

void fwdioi_msg_free(fwdioi_rt_t *rt, fwdioi_msg_t *m)
{
    if (m->staged)
        fwdioi_staging_release_msg(m->file, m);
    fwdioi_lent_t *lent = m->lent;
    fwdioi_rt_buf_put(rt, m, m->alloc_len);
    /* The last message of a lent write gives the buffer back. refs is 0 when
     * the call itself failed before submitting: then there is no callback. */
    if (lent && lent->refs > 0 && --lent->refs == 0)
        fwdioi_rt_deliver(rt, &lent->call);
}

void fwdioi_msgs_free(fwdioi_rt_t *rt, fwdioi_task_list_t *msgs)
{
    while (!STAILQ_EMPTY(msgs)) {
        fwdioi_msg_t *m = (fwdioi_msg_t *)STAILQ_FIRST(msgs);
        STAILQ_REMOVE_HEAD(msgs, link);
        fwdioi_msg_free(rt, m);
    }
}
