/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timelines: a per-rank recorder of what fwdio did, written as Chrome
 * trace-event JSON (bench/trace_merge.py merges the ranks and draws them).
 *
 * On iff FWDIO_TRACE names a directory when fwdio_init runs (read there, on the
 * application thread; the other threads never read the environment). Each
 * thread appends complete events to its own buffer, without a lock; the
 * buffers are written to <dir>/fwdio-trace.<rank>.json by the fwdio_finalize
 * that ends the last runtime, after the progress and I/O threads have stopped.
 *
 * Off, a hook costs one predictable branch: fwdioi_trace_begin() reads a flag
 * and returns 0, and fwdioi_trace_end() of 0 does nothing (no clock read, no
 * allocation, no lock). A duration is a begin timestamp kept where the work
 * starts (a local, or a field of the message or session) and one end call.
 *
 * Threads: begin/end/thread from any thread; start/stop from the application
 * thread in fwdio_init/fwdio_finalize only.
 */
#ifndef FWDIOI_TRACE_H
#define FWDIOI_TRACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** Nonzero while a trace is being recorded (set before the runtime's threads
 *  start, cleared after they stop). */
extern atomic_int fwdioi_trace_enabled;

/** "No value" for the file, bytes, offset and peer arguments of an event. */
#define FWDIOI_TRACE_NONE (-1)

/** Default cap of events per thread (FWDIO_TRACE_MAX_EVENTS overrides it);
 *  events past it are counted as dropped and the count is written out. */
#define FWDIOI_TRACE_DEFAULT_MAX_EVENTS 1000000

uint64_t fwdioi_trace_clock(void);
void fwdioi_trace_record(uint64_t t0, const char *name, int64_t file, int64_t bytes,
                         int64_t offset, int64_t peer, const char *text);

/** Timestamp where a traced piece of work begins; 0 when tracing is off. */
static inline uint64_t fwdioi_trace_begin(void)
{
    if (__builtin_expect(atomic_load_explicit(&fwdioi_trace_enabled, memory_order_relaxed), 0))
        return fwdioi_trace_clock();
    return 0;
}

/**
 * Record the event `name` (a string literal: it is kept, not copied) from t0 to
 * now on the calling thread, with optional arguments (FWDIOI_TRACE_NONE to leave
 * one out): the file's sequence number, a byte count, a file offset and a peer
 * rank. Nothing happens when t0 is 0.
 */
static inline void fwdioi_trace_end(uint64_t t0, const char *name, int64_t file, int64_t bytes,
                                    int64_t offset, int64_t peer)
{
    if (__builtin_expect(t0 != 0, 0))
        fwdioi_trace_record(t0, name, file, bytes, offset, peer, NULL);
}

/** fwdioi_trace_end with only the file argument. */
static inline void fwdioi_trace_end_file(uint64_t t0, const char *name, int64_t file)
{
    fwdioi_trace_end(t0, name, file, FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE);
}

/** fwdioi_trace_end with a text argument (copied), e.g. a path. */
static inline void fwdioi_trace_end_text(uint64_t t0, const char *name, int64_t file,
                                         int64_t bytes, const char *text)
{
    if (__builtin_expect(t0 != 0, 0))
        fwdioi_trace_record(t0, name, file, bytes, FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE, text);
}

/** Name the calling thread's row in the trace ("progress", "io"; "app" when
 *  never called). `role` is a string literal. Cheap: one thread-local store. */
void fwdioi_trace_thread(const char *role);

/** fwdio_init: start recording if FWDIO_TRACE names a directory (the first of
 *  several runtimes alive at once decides; `rank` names the file). Never fails
 *  the init: a bad FWDIO_TRACE is reported by rank 0 and tracing stays off. */
void fwdioi_trace_start(int rank);

/** fwdio_finalize (write = 1) or a failed fwdio_init (write = 0): the last
 *  runtime alive stops recording and, if asked, writes the file. Call after
 *  the runtime's threads have been joined. */
void fwdioi_trace_stop(int write);

#endif
