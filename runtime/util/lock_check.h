/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "Lock held" checks for mutexes other than the runtime lock (that one has
 * FWDIOI_ASSERT_LOCKED, runtime.h). A function named *_locked that needs such
 * a mutex starts with FWDIOI_ASSERT_HELD(&mutex), and the source file takes
 * and releases that mutex with fwdioi_mutex_lock / fwdioi_mutex_unlock, which
 * note it in a record of the calling thread. A thread that waits on a
 * condition variable with the mutex keeps it in its record: it holds the
 * mutex again whenever it runs.
 *
 * In util/ because every layer uses it, the MPI-IO layer too (its two
 * *_locked functions), which sees only util/ of the library; header-only,
 * with no state of its own beyond the calling thread's record, so the layers
 * share nothing through it. The record is per source file, so a mutex is
 * checked in the file that takes it (a lock taken with plain
 * pthread_mutex_lock, or in another file, is not in the record and fails
 * the check). On with FWDIOI_DEBUG_CHECKS (Debug and sanitizer builds),
 * where a broken rule aborts with its place; otherwise the wrappers are the
 * pthread calls and the check is free.
 */
#ifndef FWDIOI_LOCK_CHECK_H
#define FWDIOI_LOCK_CHECK_H

#include <pthread.h>

#ifdef FWDIOI_DEBUG_CHECKS
#include <stdio.h>
#include <stdlib.h>

/* The mutexes this thread holds, taken through the wrappers of this file. */
enum { FWDIOI_HELD_MAX = 8 };
static _Thread_local const pthread_mutex_t *fwdioi_held_set_[FWDIOI_HELD_MAX];
static _Thread_local int fwdioi_nheld_;

static inline void fwdioi_held_fail_(const char *what, const char *file, int line)
{
    fprintf(stderr, "fwdio: internal check failed at %s:%d: %s\n", file, line, what);
    abort();
}

static inline int fwdioi_holds_(const pthread_mutex_t *m)
{
    for (int i = 0; i < fwdioi_nheld_; i++)
        if (fwdioi_held_set_[i] == m)
            return 1;
    return 0;
}

static inline void fwdioi_mutex_lock(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    if (fwdioi_nheld_ == FWDIOI_HELD_MAX)
        fwdioi_held_fail_("more mutexes held than fwdioi_mutex_lock records", __FILE__,
                          __LINE__);
    fwdioi_held_set_[fwdioi_nheld_++] = m;
}

static inline void fwdioi_mutex_unlock(pthread_mutex_t *m)
{
    for (int i = fwdioi_nheld_ - 1; i >= 0; i--)
        if (fwdioi_held_set_[i] == m) {
            fwdioi_held_set_[i] = fwdioi_held_set_[--fwdioi_nheld_];
            break;
        }
    pthread_mutex_unlock(m);
}

#define FWDIOI_ASSERT_HELD(m)                                                     \
    ((void)(fwdioi_holds_(m) ||                                                    \
            (fwdioi_held_fail_("not holding " #m, __FILE__, __LINE__), 0)))
#else
static inline void fwdioi_mutex_lock(pthread_mutex_t *m) { pthread_mutex_lock(m); }
static inline void fwdioi_mutex_unlock(pthread_mutex_t *m) { pthread_mutex_unlock(m); }
#define FWDIOI_ASSERT_HELD(m) ((void)0)
#endif

#endif
