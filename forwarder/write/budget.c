/* SPDX-License-Identifier: BSD-3-Clause */
/* The writer budget (budget.h): counts only; the writer and the reader decide
 * what to do when it is full. */
#include "write/budget.h"

void fwdioi_wbudget_init(fwdioi_wbudget_t *b, uint64_t limit)
{
    b->limit = limit;
    b->held = b->releasing = b->meta = 0;
    b->meta_reported = 0;
    atomic_store_explicit(&b->peak, 0, memory_order_relaxed);
}

void fwdioi_wbudget_add(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes)
{
    b->held += bytes;
    /* written by the progress thread alone: a relaxed store is enough for
     * fwdio_runtime_stats, which only reads it */
    if (b->held > atomic_load_explicit(&b->peak, memory_order_relaxed))
        atomic_store_explicit(&b->peak, b->held, memory_order_relaxed);
    file->held += bytes;
    if (file->held > file->peak)
        file->peak = file->held;
}

void fwdioi_wbudget_sub(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes)
{
    b->held -= bytes;
    file->held -= bytes;
}

int fwdioi_wbudget_reserve(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes)
{
    if (fwdioi_wbudget_over(b, bytes))
        return 0;
    fwdioi_wbudget_add(b, file, bytes);
    return 1;
}

int fwdioi_wbudget_meta(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, int64_t delta)
{
    if (delta < 0) {
        fwdioi_wbudget_sub(b, file, (uint64_t)-delta);
        b->meta -= (uint64_t)-delta;
        return 0;
    }
    fwdioi_wbudget_add(b, file, (uint64_t)delta);
    b->meta += (uint64_t)delta;
    if (b->meta <= b->limit || b->meta_reported)
        return 0;
    b->meta_reported = 1;
    return 1;
}

void fwdioi_wbudget_releasing(fwdioi_wbudget_t *b, uint64_t bytes)
{
    b->releasing += bytes;
}

void fwdioi_wbudget_released(fwdioi_wbudget_t *b, fwdioi_wbudget_file_t *file, uint64_t bytes)
{
    fwdioi_wbudget_sub(b, file, bytes);
    b->releasing -= bytes;
}

int fwdioi_wbudget_must_wait(const fwdioi_wbudget_t *b, uint64_t need)
{
    return b->held > b->meta && fwdioi_wbudget_over(b, need);
}

int fwdioi_wbudget_over(const fwdioi_wbudget_t *b, uint64_t need)
{
    return b->held + need > b->limit;
}

int fwdioi_wbudget_short(const fwdioi_wbudget_t *b, uint64_t need)
{
    return b->held - b->releasing + need > b->limit;
}

uint64_t fwdioi_wbudget_peak(const fwdioi_wbudget_t *b)
{
    return atomic_load_explicit(&b->peak, memory_order_relaxed);
}
