/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The statistics of the emulator as text: what DIR/.pfs-stats (key=value
 * lines) and DIR/.pfs-stats.json return, and what the daemon prints at
 * unmount. Both formats are described in docs/benchmarks.md.
 */
#ifndef PFS_REPORT_H
#define PFS_REPORT_H

#include <stddef.h>

#include "model.h"

/** Render `s` (of daemon `pid`) as key=value lines, or as JSON with `json`.
 *  Returns a malloc'd NUL-terminated string (length in *len), NULL if out of
 *  memory. */
char *pfs_report(const pfs_snapshot_t *s, long pid, int json, size_t *len);

#endif
