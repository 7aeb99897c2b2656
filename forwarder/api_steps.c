/* SPDX-License-Identifier: BSD-3-Clause */
/* The public calls of streams (fwdio.h, "Streams"): ending a step, and
 * asking whether one is complete. The progress side is steps.c. */
#include "session/dormant.h"
#include "stream/appends.h"
#include "write/combine.h"
#include "state.h"
#include "log.h"
#include "stream/steps.h"
#include "trace.h"

#include <stdlib.h>

static int refuse_not_stream(const fwdio_file_t *f, const char *call)
{
    fwdioi_report("%s of %s: the file is not a stream (open it with FWDIO_SIZE_GROWS)", call,
                  f->path);
    return FWDIO_EINVAL;
}

int fwdio_step_end(fwdio_file_t *f)
{
    if (!f)
        return FWDIO_EINVAL;
    if (!f->stream)
        return refuse_not_stream(f, "fwdio_step_end");
    fwdioi_dormant_use(f); /* a step's agreement is the session's */
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_step_t *step = fwdioi_step_new(f);
    if (!step)
        return FWDIO_ENOMEM;
    fwdioi_rt_lock(f->engine);
    while (!f->app_closed && f->combine_copies > 0) /* bytes of a write being copied in */
        fwdioi_rt_sleep_locked(f->engine);
    if (f->app_closed) {
        fwdioi_rt_unlock(f->engine);
        fwdioi_step_free(step);
        return FWDIO_ECLOSED;
    }
    /* The step's combined messages go before its record: the progress
     * thread counts every message it meets before the record in the step. */
    fwdioi_combine_flush_file_locked(f);
    step->index = f->steps_ended++;
    fwdioi_commit_set_move(&step->commit, &f->commit); /* the step's commit blocks */
    fwdioi_append_list_move(&step->appends, &f->appends);
    int rc = f->failed_known ? FWDIO_EFAILED : FWDIO_OK;
    fwdioi_rt_submit(f->engine, &step->task);
    f->stats.time_blocked += fwdioi_now() - t0;
    uint64_t index = step->index;
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end(t_trace, "step end", (int64_t)f->seq, (int64_t)index, FWDIOI_TRACE_NONE,
                     FWDIOI_TRACE_NONE);
    return rc;
}

int fwdio_append(fwdio_file_t *f, const void *buf, size_t len)
{
    if (!f || (!buf && len > 0))
        return FWDIO_EINVAL;
    if (!f->stream)
        return refuse_not_stream(f, "fwdio_append");
    if (f->opts.offsets_only) {
        fwdioi_report("fwdio_append of %s: the stream was opened with offsets_only", f->path);
        return FWDIO_EINVAL;
    }
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    int rc = fwdioi_append(f, buf, len);
    fwdioi_rt_lock(f->engine);
    f->stats.time_blocked += fwdioi_now() - t0;
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end(t_trace, "append", (int64_t)f->seq, (int64_t)len, FWDIOI_TRACE_NONE,
                     FWDIOI_TRACE_NONE);
    return rc;
}

/* Whether step `k` is complete here, and its status (runtime lock held). */
static int step_status_locked(const fwdio_file_t *f, uint64_t k, int *done)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    *done = k < f->steps_done;
    return *done && k >= f->step_fail_from ? f->step_fail_status : FWDIO_OK;
}

static int refuse_step(const fwdio_file_t *f, const char *call, uint64_t k, uint64_t ended)
{
    fwdioi_report("%s of %s: step %llu has not been ended on this rank (%llu ended so far)",
                  call, f->path, (unsigned long long)k, (unsigned long long)ended);
    return FWDIO_EINVAL;
}

/* A stream of the node-local tier: whether step `k` is drained here (its
 * drain agreed), and the drain's status (runtime lock held). Another
 * stream: as complete. */
static int in_tier(const fwdio_file_t *f) { return f->local != NULL && !f->reading; }

static int drained_status_locked(const fwdio_file_t *f, uint64_t k, int *done)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    int status = step_status_locked(f, k, done);
    if (!*done || !in_tier(f))
        return status;
    if (status != FWDIO_OK) /* failed: never drained, and known now */
        return status;
    /* the whole file's drain has ended (e.g. after an abort of it): its
     * status stands for the steps not drained one by one */
    *done = k < f->steps_drained || f->drained_delivered;
    if (!*done)
        return FWDIO_OK;
    if (k >= f->step_drain_fail_from)
        return (int)f->step_drain_error.status;
    return k < f->steps_drained ? FWDIO_OK : f->drain_status;
}

/* What a step's test or wait asks (runtime lock held): complete, drained. */
typedef int (*step_status_fn)(const fwdio_file_t *f, uint64_t k, int *done);

/* The checks of a step's test and wait: FWDIO_OK (and every rank's bytes
 * combined so far go, so that the step can end), or the refusal. */
static int step_ask(fwdio_file_t *f, uint64_t k, const char *call)
{
    if (!f->stream)
        return refuse_not_stream(f, call);
    fwdioi_rt_lock(f->engine);
    uint64_t ended = f->steps_ended;
    if (k < ended)
        fwdioi_combine_flush_all_locked(f->owner); /* other files' bytes go while we wait */
    fwdioi_rt_unlock(f->engine);
    return k < ended ? FWDIO_OK : refuse_step(f, call, k, ended);
}

static int step_test(fwdio_file_t *f, uint64_t k, int *done, step_status_fn what,
                     const char *call)
{
    if (!f || !done)
        return FWDIO_EINVAL;
    int rc = step_ask(f, k, call);
    if (rc != FWDIO_OK)
        return rc;
    if (!fwdioi_rt_on_progress_thread())
        fwdioi_rt_run_calls(f->engine);
    fwdioi_rt_lock(f->engine);
    int status = what(f, k, done);
    fwdioi_rt_unlock(f->engine);
    return *done ? status : FWDIO_OK;
}

typedef struct step_wait {
    const fwdio_file_t *file;
    uint64_t step;
    step_status_fn what;
} step_wait_t;

static int step_reached(void *arg)
{
    const step_wait_t *w = arg;
    int done;
    (void)w->what(w->file, w->step, &done);
    return done;
}

static int step_wait(fwdio_file_t *f, uint64_t k, step_status_fn what, const char *call,
                     const char *trace)
{
    if (!f)
        return FWDIO_EINVAL;
    int rc = f->stream && (fwdioi_rt_on_progress_thread() || fwdioi_rt_in_callback())
                 ? FWDIO_ECONTEXT
                 : step_ask(f, k, call);
    if (rc != FWDIO_OK)
        return rc;
    uint64_t t_trace = fwdioi_trace_begin();
    step_wait_t w = {f, k, what};
    fwdioi_rt_wait(f->engine, step_reached, &w);
    int done;
    fwdioi_rt_lock(f->engine);
    int status = what(f, k, &done);
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end(t_trace, trace, (int64_t)f->seq, (int64_t)k, FWDIOI_TRACE_NONE,
                     FWDIOI_TRACE_NONE);
    return status;
}

int fwdio_step_test(fwdio_file_t *f, uint64_t k, int *done)
{
    return step_test(f, k, done, step_status_locked, "fwdio_step_test");
}

int fwdio_step_wait(fwdio_file_t *f, uint64_t k)
{
    return step_wait(f, k, step_status_locked, "fwdio_step_wait", "step wait");
}

int fwdio_step_drain_test(fwdio_file_t *f, uint64_t k, int *done)
{
    return step_test(f, k, done, drained_status_locked, "fwdio_step_drain_test");
}

int fwdio_step_drain_wait(fwdio_file_t *f, uint64_t k)
{
    return step_wait(f, k, drained_status_locked, "fwdio_step_drain_wait", "step drain wait");
}
