/* SPDX-License-Identifier: BSD-3-Clause */
/* The public calls of the node-local tier's second completion: the drain
 * (local/drain.c runs it; fwdio.h, options.local_dir). */
#include "state.h"
#include "trace.h"
#include "write/combine.h"

static int file_drained(void *arg)
{
    return ((fwdio_file_t *)arg)->drained_delivered;
}

int fwdio_drain_test(fwdio_file_t *f, int *done)
{
    if (!f || !done)
        return FWDIO_EINVAL;
    fwdioi_rt_lock(f->rt);
    fwdioi_combine_flush_all_locked(f->owner);
    fwdioi_rt_unlock(f->rt);
    if (!fwdioi_rt_on_progress_thread())
        fwdioi_rt_run_calls(f->rt);
    fwdioi_rt_lock(f->rt);
    *done = f->drained_delivered;
    int status = *done ? f->drain_status : FWDIO_OK;
    fwdioi_rt_unlock(f->rt);
    return status;
}

int fwdio_drain_wait(fwdio_file_t *f)
{
    if (!f)
        return FWDIO_EINVAL;
    if (fwdioi_rt_on_progress_thread() || fwdioi_rt_in_callback())
        return FWDIO_ECONTEXT;
    fwdioi_rt_lock(f->rt);
    int closed = f->app_closed;
    fwdioi_combine_flush_all_locked(f->owner); /* other files' bytes go while we wait */
    fwdioi_rt_unlock(f->rt);
    if (!closed)
        return FWDIO_ENOTCLOSED;
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_wait(f->rt, file_drained, f);
    fwdioi_rt_lock(f->rt);
    int status = f->drain_status;
    fwdioi_rt_unlock(f->rt);
    fwdioi_trace_end_file(t_trace, "drain wait", (int64_t)f->seq);
    return status;
}
