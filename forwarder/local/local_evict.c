/* SPDX-License-Identifier: BSD-3-Clause */
#include "local/local_evict.h"

size_t fwdioi_local_evict_choose(const uint64_t *bytes, size_t n, uint64_t shortfall)
{
    uint64_t freed = 0;
    for (size_t k = 0; k < n && shortfall > 0; k++) {
        freed += bytes[k];
        if (freed >= shortfall)
            return k + 1;
    }
    return 0;
}
