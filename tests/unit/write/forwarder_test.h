/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the unit tests that call the forwarder's internal functions
 * directly (test_route, test_combine, test_staging). They include the
 * library's private headers and link the static libfwdio.a, so they see
 * struct fwdio_file and struct fwdio_runtime as the library does.
 *
 * Settings are pinned (FWDIO_PIN_ALL): the numbers the tests compute from
 * their own configuration stay true whatever FWDIO_* variables the
 * environment holds.
 */
#ifndef FWDIO_FORWARDER_TEST_H
#define FWDIO_FORWARDER_TEST_H

#include "write/combine.h"
#include "state.h"
#include "test_common.h"

#include <string.h>
#include <time.h>

/** A combined write of `len` staged bytes, as fwdio_write makes it, but with
 *  the runtime lock held throughout (the library copies with it released):
 *  reserve, copy, finish, until every byte is taken. FWDIO_OK or the
 *  reservation's error. */
static inline int ft_combine_write_locked(fwdio_file_t *f, const uint8_t *buf, uint64_t len,
                                          uint64_t offset)
{
    int rc = FWDIO_OK;
    uint64_t done = 0;
    while (rc == FWDIO_OK && done < len) {
        fwdioi_combine_batch_t batch;
        done += fwdioi_combine_reserve_locked(f, buf + done, len - done, offset + done, &batch,
                                              &rc);
        fwdioi_combine_copy(&batch);
        fwdioi_combine_finish_locked(f, &batch);
    }
    return rc;
}

/** fwdio_init on MPI_COMM_WORLD with `cfg` (NULL: defaults) and every
 *  setting pinned. Aborts the job on failure. */
static inline fwdio_runtime_t *ft_runtime(const fwdio_config_t *cfg)
{
    fwdio_config_t c;
    if (cfg)
        c = *cfg;
    else
        fwdio_config_init(&c);
    c.pinned = FWDIO_PIN_ALL;
    return tc_start_runtime_with(MPI_COMM_WORLD, &c);
}

/** Options with every field pinned: the code's values, zeros meaning the
 *  documented defaults. */
static inline fwdio_options_t ft_options(uint64_t stripe, uint64_t unit, int writers,
                                         fwdio_layout_t layout)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.stripe_size = stripe;
    o.write_size = unit;
    o.writers = writers;
    o.layout = layout;
    o.placement = FWDIO_PLACEMENT_STRIDE; /* writers at ranks 0, 1, ... */
    o.writer_stride = 1;
    o.pinned = FWDIO_PIN_ALL;
    return o;
}

/** Piece `i` of a sealed message (the table ends the wire bytes, state.h). */
static inline fwdioi_piece_t ft_piece(const fwdioi_msg_t *m, uint32_t i)
{
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    fwdioi_piece_t p;
    memcpy(&p, m->wire + m->wire_len - (size_t)(h.npieces - i) * sizeof p, sizeof p);
    return p;
}

/** The piece count of a sealed message's header. */
static inline uint32_t ft_npieces(const fwdioi_msg_t *m)
{
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    return h.npieces;
}

/** Runtime-wide staged bytes, read under the runtime lock. */
static inline uint64_t ft_staged(fwdio_runtime_t *rt)
{
    fwdioi_rt_lock(rt->engine);
    uint64_t n = rt->staged;
    fwdioi_rt_unlock(rt->engine);
    return n;
}

/** A call of ft_on_progress, queued as a task. */
typedef struct ft_progress_call {
    fwdioi_task_t task; /* first: the progress thread gets it as a task */
    void (*fn)(void *arg);
    void *arg;
    atomic_int done;
} ft_progress_call_t;

static inline void ft_progress_call_run(fwdioi_task_t *task)
{
    ft_progress_call_t *c = (ft_progress_call_t *)task;
    c->fn(c->arg);
    atomic_store(&c->done, 1);
}

/** Run fn(arg) on the progress thread of `rt`, as a task, and wait until it
 *  returned: for internal functions marked "(progress thread)", which
 *  assert it in Debug and sanitizer builds. */
static inline void ft_on_progress(fwdio_runtime_t *rt, void (*fn)(void *arg), void *arg)
{
    ft_progress_call_t c = {.fn = fn, .arg = arg};
    atomic_init(&c.done, 0);
    c.task.run = ft_progress_call_run;
    fwdioi_rt_submit(rt->engine, &c.task);
    while (!atomic_load(&c.done)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/** Wait (without calling fwdio_poll, which would flush open combined
 *  messages) until the runtime's staged bytes drop to `want`; 0 when they
 *  did within `seconds`, else -1. */
static inline int ft_wait_staged(fwdio_runtime_t *rt, uint64_t want, double seconds)
{
    double t0 = MPI_Wtime();
    for (;;) {
        if (ft_staged(rt) == want)
            return 0;
        if (MPI_Wtime() - t0 > seconds)
            return -1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

#endif
