/* SPDX-License-Identifier: BSD-3-Clause */
/* Routing (route.c): a write cut at stripe boundaries into one message per
 * writer (application thread). */
#ifndef FWDIOI_ROUTE_H
#define FWDIOI_ROUTE_H

#include "state.h"

/** Messages for `len` bytes at `offset` from `buf` (copied, or lent with
 *  `lent`), in order in `msgs` (through their tasks; empty after a failure). */
int fwdioi_route_write(fwdio_file_t *f, const uint8_t *buf, uint64_t len, uint64_t offset,
                       fwdioi_lent_t *lent, fwdioi_task_list_t *msgs);

#endif
