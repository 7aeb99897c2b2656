/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-rank runtime engine: a progress thread running a libevent loop, the
 * MPI requests it polls, an I/O thread for blocking storage calls, and the
 * delivery of user callbacks. It knows nothing about files: the forwarder
 * drives it through the functions below (the seam of docs/ARCHITECTURE.md).
 *
 * Threads: "(app)" functions may be called from any application thread,
 * "(progress thread)" functions only from the progress thread (tasks, request
 * and job completions, the client's poll hook), and they assert it
 * (FWDIOI_ASSERT_PROGRESS, below; tests/thread_rules_check.py checks that
 * they do).
 */
#ifndef FWDIOI_RUNTIME_H
#define FWDIOI_RUNTIME_H

#include "fwdio.h"

#include <pthread.h>

#include "engine.h"

/** Start the runtime on `comm` (collective; app). Duplicates comm. Its
 *  configuration is `cfg` resolved for `ranks_on_node` ranks on this rank's
 *  node (fwdioi_config_resolve). */
int fwdioi_rt_create(MPI_Comm comm, const fwdio_config_t *cfg, int ranks_on_node,
                     const fwdioi_client_t *client, fwdioi_engine_t **out);
/** Stop the threads and free everything (app; no task may be pending). */
void fwdioi_rt_destroy(fwdioi_engine_t *rt);

MPI_Comm fwdioi_rt_comm(const fwdioi_engine_t *rt);
int fwdioi_rt_rank(const fwdioi_engine_t *rt);
int fwdioi_rt_size(const fwdioi_engine_t *rt);
const fwdio_config_t *fwdioi_rt_config(const fwdioi_engine_t *rt);

/** Put fwdioi_spin_choice(cfg's poll_spin_us, ...) in force (app, any
 *  time). Returns it. */
unsigned fwdioi_rt_choose_spin(fwdioi_engine_t *rt, int ranks_on_node, int node_cpus);
/** poll_spin_us in force (any thread). */
unsigned fwdioi_rt_spin_us(const fwdioi_engine_t *rt);

/** The runtime lock guards the forwarder's state shared between application
 *  and progress threads (the task, call and I/O queues have locks of their
 *  own, taken inside it when both are held). */
void fwdioi_rt_lock(fwdioi_engine_t *rt);
void fwdioi_rt_unlock(fwdioi_engine_t *rt);
/** Wake threads blocked in fwdioi_rt_wait / fwdioi_rt_sleep_locked. */
void fwdioi_rt_broadcast(fwdioi_engine_t *rt);
/** Wait for a broadcast, the runtime lock held (app threads only). */
void fwdioi_rt_sleep_locked(fwdioi_engine_t *rt);
/** The same, until `deadline` (CLOCK_REALTIME; NULL: none) at the latest: 1
 *  if it passed. */
int fwdioi_rt_sleep_locked_until(fwdioi_engine_t *rt, const struct timespec *deadline);

/** Move every task of `tasks` to the progress thread's queue, in order, and
 *  wake it (any thread). Submissions made under the runtime lock keep the
 *  order of the lock. */
void fwdioi_rt_submit_list(fwdioi_engine_t *rt, fwdioi_task_list_t *tasks);
/** fwdioi_rt_submit_list for one task. */
void fwdioi_rt_submit(fwdioi_engine_t *rt, fwdioi_task_t *task);
/** Make the progress thread run one tick soon, so that it sees state the
 *  caller changed and decides again whether to keep polling (any thread). */
void fwdioi_rt_kick(fwdioi_engine_t *rt);

/** Make room to track one more request; 0, or -1 out of memory. Call it
 *  before starting the MPI request, so a started request is never lost for
 *  want of memory (progress thread). */
int fwdioi_rt_track_reserve(fwdioi_engine_t *rt);
/** Poll `req` until it completes, then call cb with its status, whose
 *  MPI_ERROR says whether it failed (progress thread). A slot must be
 *  reserved. */
void fwdioi_rt_track(fwdioi_engine_t *rt, MPI_Request req, fwdioi_req_cb_t cb, void *arg);
/** Stop polling the requests tracked with `arg` and never call their
 *  callbacks: for collectives that can no longer complete because a peer
 *  gave up on them (the requests are left to MPI). Returns how many
 *  (progress thread). */
int fwdioi_rt_forget(fwdioi_engine_t *rt, void *arg);
/** Run a tick whenever `fd` is readable; the client's poll hook must drain
 *  it (else the loop spins). How the client's peers wake it without the loop
 *  polling (app, at most one fd, before any file is open; the fd must stay
 *  open until fwdioi_rt_destroy). 0, or -1. */
int fwdioi_rt_watch_fd(fwdioi_engine_t *rt, int fd);
/** Run a job on the I/O thread, started on first use. Jobs run one at a
 *  time, in the order submitted (progress thread). */
void fwdioi_rt_io_submit(fwdioi_engine_t *rt, fwdioi_io_job_t *job);
/** Run a job that needs no order against any other (a reader's pread of
 *  one unit) on a pool of up to FWDIOI_IO_POOL threads, started as jobs
 *  wait, so that several storage requests are in flight at once; `done`
 *  runs on the progress thread as for fwdioi_rt_io_submit (progress thread). */
void fwdioi_rt_io_submit_any(fwdioi_engine_t *rt, fwdioi_io_job_t *job);
/** Deliver a user callback: now, or queued for fwdio_poll, per callback mode
 *  (progress thread). */
void fwdioi_rt_deliver(fwdioi_engine_t *rt, fwdioi_call_t *call);

/** fwdioi_rt_deliver from an application thread: the callback still runs on the
 *  progress thread in FWDIO_CALLBACKS_ON_PROGRESS mode (app). */
void fwdioi_rt_deliver_later(fwdioi_engine_t *rt, fwdioi_call_t *call);

/** Run the queued user callbacks on the calling thread; returns how many (app). */
int fwdioi_rt_run_calls(fwdioi_engine_t *rt);
/** Block until done(arg) holds (evaluated under the runtime lock), running queued
 *  callbacks meanwhile (app). */
void fwdioi_rt_wait(fwdioi_engine_t *rt, int (*done)(void *arg), void *arg);
/** The same for at most `seconds` (0: no limit): 1 when done(arg) held, 0
 *  when the time ran out first (app). */
int fwdioi_rt_wait_for(fwdioi_engine_t *rt, int (*done)(void *arg), void *arg, unsigned seconds);

/** A buffer for a message of `len` bytes, reused when possible (any thread). */
void *fwdioi_rt_buf_get(fwdioi_engine_t *rt, size_t len);
/** Give back a buffer from fwdioi_rt_buf_get with the same `len` (any thread). */
void fwdioi_rt_buf_put(fwdioi_engine_t *rt, void *buf, size_t len);

/** What the runtime's own threads cost so far: CPU seconds of the progress
 *  and I/O threads (0 for one not running) and their wakeups (any thread). */
typedef struct fwdioi_thread_costs {
    double progress_cpu, io_cpu;
    uint64_t progress_wakeups, io_wakeups;
} fwdioi_thread_costs_t;
void fwdioi_rt_thread_costs(fwdioi_engine_t *rt, fwdioi_thread_costs_t *out);

/** Room the runtime leaves for headers beside max_message_size bytes of data. */
#define FWDIOI_MESSAGE_HEADROOM ((size_t)64 << 10)

/** True inside a user callback on the calling thread (either mode). */
int fwdioi_rt_in_callback(void);

/* fwdioi_rt_on_progress_thread: engine.h */

#endif
