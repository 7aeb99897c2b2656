/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The writer budget (writer_buffer): the memory a rank holds as the writer,
 * or the reader, of its files, over all of them: received messages, unit
 * buffers, storage jobs and their bookkeeping until their writes are done,
 * a reader's units. The runtime keeps one (struct fwdio_runtime.wbuf), each
 * file its share (fwdioi_session_t.wbuf, for its stats). A writer that holds
 * nothing takes any message, so it never holds more than the budget plus one
 * message (docs/ARCHITECTURE.md, "Memory rules").
 *
 * Progress thread only, but for the peak, which fwdio_runtime_stats reads
 * from any thread. Pure bookkeeping: nothing here allocates or frees.
 */
#ifndef FWDIOI_BUDGET_H
#define FWDIOI_BUDGET_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct fwdioi_wbudget {
    uint64_t limit;     /* writer_buffer, fixed once set */
    uint64_t held;      /* every byte counted */
    uint64_t releasing; /* the part of held that writes in flight give back */
    /* The part of held that is assembly bookkeeping (which bytes arrived):
     * it only shrinks as units complete, so it never makes a message wait;
     * reported once if it alone passes the budget. */
    uint64_t meta;
    int meta_reported;
    _Atomic uint64_t peak; /* the most held at once */
} fwdioi_wbudget_t;

/* One file's share of the budget. */
typedef struct fwdioi_wbudget_file {
    uint64_t held, peak;
} fwdioi_wbudget_file_t;

/** Start with nothing held and `limit` bytes to hold. */
void fwdioi_wbudget_init(fwdioi_wbudget_t *b, uint64_t limit);
/** Count `bytes` for `file`, whatever the limit (a message taken, a job). */
void fwdioi_wbudget_add(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes);
/** Give back `bytes` counted by fwdioi_wbudget_add or _reserve. */
void fwdioi_wbudget_sub(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes);
/** Count `bytes` for `file` if they fit in the limit: 1, or 0 (nothing
 *  counted) when they do not. */
int fwdioi_wbudget_reserve(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes);
/** Count a change of bookkeeping of `delta` bytes (never refused). Returns 1
 *  the first time the bookkeeping alone passes the limit (the caller says
 *  so, once per budget), else 0. */
int fwdioi_wbudget_meta(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, int64_t delta);
/** `bytes` already counted are now on their way back: only writes in
 *  flight hold them. */
void fwdioi_wbudget_releasing(fwdioi_wbudget_t *b, uint64_t bytes);
/** Give back `bytes` that fwdioi_wbudget_releasing marked. */
void fwdioi_wbudget_released(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes);
/** Whether `need` more bytes must wait for room: something other than
 *  bookkeeping is held, and they would pass the limit. */
int fwdioi_wbudget_must_wait(const fwdioi_wbudget_t *b, uint64_t need);
/** Whether `need` more bytes would pass the limit. */
int fwdioi_wbudget_over(const fwdioi_wbudget_t *b, uint64_t need);
/** Whether `need` more bytes would pass the limit even once the writes in
 *  flight have given theirs back (then units must be flushed early). */
int fwdioi_wbudget_short(const fwdioi_wbudget_t *b, uint64_t need);
/** The most held at once (any thread). */
uint64_t fwdioi_wbudget_peak(const fwdioi_wbudget_t *b);

#endif
