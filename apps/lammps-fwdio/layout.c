/* SPDX-License-Identifier: BSD-3-Clause */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

int lfw_layout_init(lfw_layout_t *l, int64_t steps, int64_t every, int64_t natoms,
                    size_t record_len, lfw_header_len_fn header_len, const void *arg)
{
    memset(l, 0, sizeof *l);
    l->every = every;
    l->count = steps / every + 1;
    l->natoms = natoms;
    l->record_len = record_len;
    l->header_len = malloc((size_t)l->count * sizeof *l->header_len);
    l->base = malloc((size_t)(l->count + 1) * sizeof *l->base);
    if (!l->header_len || !l->base) {
        lfw_layout_free(l);
        return -1;
    }
    uint64_t at = 0;
    for (int64_t s = 0; s < l->count; s++) {
        l->base[s] = at;
        l->header_len[s] = header_len(s * every, arg);
        at += l->header_len[s] + (uint64_t)natoms * record_len;
    }
    l->base[l->count] = at;
    return 0;
}

void lfw_layout_free(lfw_layout_t *l)
{
    free(l->header_len);
    free(l->base);
    memset(l, 0, sizeof *l);
}

int64_t lfw_layout_snapshot(const lfw_layout_t *l, int64_t step)
{
    if (step < 0 || step % l->every != 0 || step / l->every >= l->count)
        return -1;
    return step / l->every;
}
