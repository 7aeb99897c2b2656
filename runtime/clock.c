/* SPDX-License-Identifier: BSD-3-Clause */
#include "clock.h"

#include <time.h>

uint64_t fwdioi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double fwdioi_now(void) { return 1e-9 * (double)fwdioi_now_ns(); }
