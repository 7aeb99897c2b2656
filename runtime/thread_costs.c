/* SPDX-License-Identifier: BSD-3-Clause */
/* What the runtime's own threads cost: their CPU time, read from the kernel's
 * per-thread clocks, and their wakeup counts (fwdio_runtime_stats). */
#include "engine_state.h"
#include "runtime.h"

#include <time.h>

static double thread_cpu(pthread_t thread)
{
    clockid_t clock;
    struct timespec ts;
    if (pthread_getcpuclockid(thread, &clock) != 0 || clock_gettime(clock, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void fwdioi_rt_thread_costs(fwdioi_engine_t *rt, fwdioi_thread_costs_t *out)
{
    /* The progress thread lives from create to destroy, the I/O thread from
     * its first job (io_started, under io_lock) to destroy. */
    out->progress_cpu = rt->progress_thread ? thread_cpu(rt->progress_thread) : 0.0;
    pthread_mutex_lock(&rt->io_lock);
    out->io_cpu = rt->io_started ? thread_cpu(rt->io_thread) : 0.0;
    for (int i = 0; i < rt->io_pool_started; i++) /* a reader's preads */
        out->io_cpu += thread_cpu(rt->io_pool[i]);
    pthread_mutex_unlock(&rt->io_lock);
    out->progress_wakeups = atomic_load_explicit(&rt->progress_wakeups, memory_order_relaxed);
    out->io_wakeups = atomic_load_explicit(&rt->io_wakeups, memory_order_relaxed);
}
