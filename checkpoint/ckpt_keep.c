/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_keep.h"

#include <stdlib.h>

static int newest_first(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

size_t fwdioi_ckpt_keep_choose(uint64_t *versions, size_t *n, unsigned keep)
{
    if (*n > 1) /* an empty list may be NULL, which qsort may not get */
        qsort(versions, *n, sizeof *versions, newest_first);
    size_t m = 0;
    for (size_t i = 0; i < *n; i++)
        if (m == 0 || versions[m - 1] != versions[i])
            versions[m++] = versions[i];
    *n = m;
    size_t kept = keep ? keep : 1;
    return kept < m ? kept : m;
}
