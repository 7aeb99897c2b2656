/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which kept local copies to evict (node-local tier, local_keep.h): a pure
 * choice, any thread.
 */
#ifndef FWDIOI_LOCAL_EVICT_H
#define FWDIOI_LOCAL_EVICT_H

#include <stddef.h>
#include <stdint.h>

/**
 * `bytes[i]` is what the i-th kept copy holds of the count, oldest first;
 * `shortfall` what a new file lacks. Returns k, the number of oldest copies
 * to evict: the fewest whose bytes cover the shortfall; 0 when the
 * shortfall is 0, or when even all of them would not cover it (nothing is
 * evicted for a file that would not fit anyway).
 */
size_t fwdioi_local_evict_choose(const uint64_t *bytes, size_t n, uint64_t shortfall);

#endif
