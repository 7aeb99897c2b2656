/* SPDX-License-Identifier: BSD-3-Clause */
/* The watchdog (watchdog.c): reports a file that is overdue (progress thread). */
#ifndef FWDIOI_WATCHDOG_H
#define FWDIOI_WATCHDOG_H

#include "state.h"

/** Report `f` on stderr once it has waited config.watchdog seconds at `now`
 *  for its open, its close or its data, and again at doubling intervals
 *  (progress thread). */
void fwdioi_watchdog_check(fwdio_file_t *f, double now);

#endif
