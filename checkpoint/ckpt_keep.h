/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Retention: which complete versions of a set to remove once a version
 * completed. The `keep` newest complete versions stay (at least one: the
 * newest complete version is never removed); every older complete version
 * goes. Versions without a manifest are never chosen: they are in flight,
 * or leftovers of a killed job that the next write of that version
 * replaces. Pure (tests/unit/checkpoint/test_ckpt_keep).
 */
#ifndef FWDIOI_CKPT_KEEP_H
#define FWDIOI_CKPT_KEEP_H

#include <stddef.h>
#include <stdint.h>

/** Sort `versions[0..*n)` newest first, drop duplicates (updating *n) and
 *  return the index of the first version to remove: versions[ret..*n) go,
 *  the `keep` newest stay (keep 0 counts as 1). */
size_t fwdioi_ckpt_keep_choose(uint64_t *versions, size_t *n, unsigned keep);

#endif
