/* SPDX-License-Identifier: BSD-3-Clause */
/* The name the runtime's own threads carry in the kernel (top -H, ps -L,
 * gdb, perf), so that an application's profile tells fwdio's progress and
 * I/O threads from its own. */
#ifndef FWDIOI_THREAD_NAME_H
#define FWDIOI_THREAD_NAME_H

#include <pthread.h>

/** Name the calling thread (at most 15 characters: longer is cut); a
 *  failure only costs the name. */
static inline void fwdioi_thread_name(const char *name)
{
    char cut[16];
    size_t i = 0;
    for (; name[i] && i < sizeof cut - 1; i++)
        cut[i] = name[i];
    cut[i] = '\0';
    (void)pthread_setname_np(pthread_self(), cut);
}

#endif
