/* SPDX-License-Identifier: BSD-3-Clause */
/* A sent message done with (send_done.h): below the sender and the node's
 * data path, which both end messages here. */
#include "write/send_done.h"

#include "agreement/outcome.h"
#include "trace.h"
#include "write/message.h"

void fwdioi_send_done(fwdioi_msg_t *m, int mpi_error)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = m->file;
    fwdioi_trace_end(m->trace_t0, "send", (int64_t)f->seq, (int64_t)m->payload,
                     FWDIOI_TRACE_NONE, fwdioi_plan_writer_rank(&f->plan, m->writer));
    if (mpi_error != MPI_SUCCESS && m->lent && m->lent->status == FWDIO_OK)
        m->lent->status = FWDIO_EMPI;
    fwdioi_msg_free(f->engine, m);
    f->s.sends_pending--;
    /* Whether the writer got the bytes is unknown: the counts cannot be
     * trusted, so the file is aborted. */
    if (mpi_error != MPI_SUCCESS)
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_ISEND, mpi_error);
    if (f->s.outcome.aborted)
        fwdioi_outcome_finish_if_aborted(f);
    else if (f->s.sends_pending == 0 && f->s.final_ready)
        fwdioi_outcome_data_done(f);
}
