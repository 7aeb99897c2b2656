/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's agreements on its communicator (agreements.h): started here,
 * tracked by the runtime, and a failed one reported as the file's outcome
 * (outcome.h). The session's phases and a stream's steps start them; what
 * they reduce is theirs (agree.h: the status pairs; open_check.h).
 */
#include "agreement/agreements.h"

#include "agreement/outcome.h"
#include "trace.h"

#include <assert.h>

/*
 * Start one of the file's agreements: `count` int64s of `in` reduced with
 * `op` into `out` on the file's communicator; `done` runs on completion.
 * Returns 0, or -1 when it could not start (the file is aborted then).
 */
int fwdioi_session_agree(fwdio_file_t *f, int call, const void *in, void *out, int count,
                         MPI_Datatype type, MPI_Op op, fwdioi_req_cb_t done)
{
    FWDIOI_ASSERT_PROGRESS();
    f->s.trace_t0 = fwdioi_trace_begin();
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Iallreduce(in, out, count, type, op, f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        fwdioi_outcome_mpi_failed(f, call, rc);
        return -1;
    }
    fwdioi_rt_track(f->engine, req, done, f);
    return 0;
}

/* A status agreement completed: its errinfo is unpacked for `done`. */
static void on_status_agreed(void *arg, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdio_file_t *f = arg;
    fwdioi_session_t *s = &f->s;
    s->status.busy = 0;
    if (st->MPI_ERROR == MPI_SUCCESS)
        fwdioi_errinfo_unpack(s->status.out, s->status.agreed);
    s->status.done(f, st);
}

int fwdioi_session_agree_status(fwdio_file_t *f, int call, const fwdioi_errinfo_t *in,
                                fwdioi_errinfo_t *out, fwdioi_req_cb_t done)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    assert(!s->status.busy);
    fwdioi_errinfo_pack(in, f->rank, s->status.in);
    s->status.agreed = out;
    s->status.done = done;
    if (fwdioi_session_agree(f, call, s->status.in, s->status.out, FWDIOI_ERRINFO_PAIRS,
                             MPI_LONG_INT, MPI_MINLOC, on_status_agreed) != 0)
        return -1;
    s->status.busy = 1;
    return 0;
}

int fwdioi_session_scan_appends(fwdio_file_t *f, const uint64_t *mine, uint64_t *prefix,
                                fwdioi_req_cb_t done)
{
    FWDIOI_ASSERT_PROGRESS();
    f->s.trace_t0 = fwdioi_trace_begin();
    MPI_Request req;
    int rc = fwdioi_rt_track_reserve(f->engine) != 0
                 ? MPI_ERR_NO_MEM
                 : MPI_Iexscan(mine, prefix, 1, MPI_UINT64_T, MPI_SUM, f->s.comm, &req);
    if (rc != MPI_SUCCESS) {
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_SCAN_APPEND, rc);
        return -1;
    }
    fwdioi_rt_track(f->engine, req, done, f);
    return 0;
}

/* An agreement completed: whether it succeeded (else the file is aborted). */
int fwdioi_session_agreement_ok(fwdio_file_t *f, int call, const MPI_Status *st)
{
    FWDIOI_ASSERT_PROGRESS();
    if (st->MPI_ERROR == MPI_SUCCESS)
        return 1;
    fwdioi_outcome_mpi_failed(f, call, st->MPI_ERROR);
    return 0;
}

