/* SPDX-License-Identifier: BSD-3-Clause */
/* The watchdog (watchdog.c): reports a file that is overdue (progress thread). */
#ifndef FWDIOI_WATCHDOG_H
#define FWDIOI_WATCHDOG_H

#include "state.h"

void fwdioi_watchdog_check(fwdio_file_t *f, double now);

#endif
