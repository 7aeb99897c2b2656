/* SPDX-License-Identifier: BSD-3-Clause */
/* The one clock of fwdio: CLOCK_MONOTONIC, for durations, timeouts and
 * trace times (any thread). */
#ifndef FWDIOI_CLOCK_H
#define FWDIOI_CLOCK_H

#include <stdint.h>

/** Seconds since an arbitrary start. */
double fwdioi_now(void);
/** Nanoseconds since the same start. */
uint64_t fwdioi_now_ns(void);

#endif
