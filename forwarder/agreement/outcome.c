/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's outcome (outcome.h): the roles' reports of failures and of their
 * part of a phase done, passed to the session through the table it
 * registered. What this module decides itself: which error a file keeps
 * (the first: a file aborted or done keeps its outcome, a later abort only
 * reaches the session's table if it is the first), how a failure becomes
 * visible to the application, and how an MPI failure is logged.
 */
#include "agreement/outcome.h"

#include "local/local_life.h"
#include "log.h"

static const fwdioi_session_ops_t *ops_of(const fwdio_file_t *f)
{
    return f->owner->session_ops;
}

void fwdioi_outcome_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    if (s->phase == FWDIOI_PHASE_DONE || s->outcome.aborted)
        return; /* the first error wins */
    s->outcome.aborted = 1;
    s->outcome.abort_info = *why;
    if (s->outcome.local_error.status == FWDIO_OK)
        s->outcome.local_error = *why;
    ops_of(f)->aborted(f, why, notify);
}

void fwdioi_outcome_abort_heard(fwdio_file_t *f, const fwdioi_errinfo_t *why,
                                const fwdioi_step_outcome_t *steps)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!f->s.outcome.aborted)
        ops_of(f)->abort_heard(f, steps); /* the first one heard counts */
    fwdioi_outcome_abort(f, why, 0);
}

void fwdioi_outcome_nomem(fwdio_file_t *f, uint64_t offset)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&why, FWDIO_ENOMEM, f->rank, 0, offset);
    fwdioi_outcome_abort(f, &why, 1);
}

void fwdioi_outcome_mpi_failed(fwdio_file_t *f, int call, int mpi_rc)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set_mpi(&why, f->rank, call, mpi_rc);
    fwdioi_log(FWDIOI_LOG_WARN, "rank %d: %s failed for %s (MPI error %d)", f->rank,
               fwdioi_mpi_call_name(call), f->path, mpi_rc);
    if (ops_of(f)->defer_abort(f, call, &why))
        return; /* the step before is being agreed on: its outcome first */
    fwdioi_outcome_abort(f, &why, 1);
}

void fwdioi_outcome_finish_if_aborted(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    ops_of(f)->finish_if_aborted(f);
}

void fwdioi_outcome_opened(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    ops_of(f)->opened(f);
}

void fwdioi_outcome_data_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    ops_of(f)->data_done(f);
}

void fwdioi_outcome_step_data_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    ops_of(f)->step_data_done(f);
}

void fwdioi_outcome_read_check_done(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    ops_of(f)->read_check_done(f);
}

void fwdioi_outcome_try_close(fwdio_file_t *f)
{
    FWDIOI_ASSERT_PROGRESS();
    ops_of(f)->try_close(f);
}

void fwdioi_outcome_publish_error_locked(fwdio_file_t *f, const fwdioi_errinfo_t *e)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    if (e->status != FWDIO_OK && !f->failed_known) {
        f->failed_known = 1;
        f->known_error = *e;
        fwdioi_rt_broadcast(f->engine); /* writes waiting for staging room give up */
        char local[4096]; /* the node-local tier: the writers wrote local files */
        const char *written = fwdioi_local_error_path(f, e, local, sizeof local);
        fwdioi_errinfo_format(e, f->path, written ? written : f->write_path, f->error_text,
                              sizeof f->error_text);
    }
}

void fwdioi_outcome_publish_error(fwdio_file_t *f, const fwdioi_errinfo_t *e)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_rt_lock(f->engine);
    fwdioi_outcome_publish_error_locked(f, e);
    fwdioi_rt_unlock(f->engine);
}

fwdio_file_t *fwdioi_outcome_active_file(struct fwdio_runtime *o, uint64_t seq)
{
    FWDIOI_ASSERT_PROGRESS();
    return fwdioi_u64map_get(&o->active_by_seq, seq);
}
