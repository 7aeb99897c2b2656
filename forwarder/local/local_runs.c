/* SPDX-License-Identifier: BSD-3-Clause */
/* The target bytes a writer's local file holds (local_state.h): its stripes,
 * or what a stream's writer wrote. */
#include "local/local_state.h"

#include <stdlib.h>
#include <string.h>

fwdioi_local_run_t *fwdioi_local_writer_runs(const fwdioi_plan_t *p, int w, size_t *n)
{
    uint64_t ns = fwdioi_plan_writer_stripes(p, w);
    fwdioi_local_run_t *runs = malloc((ns ? ns : 1) * sizeof *runs);
    *n = 0;
    if (!runs)
        return NULL;
    for (uint64_t i = 0; i < ns; i++) {
        uint64_t s = fwdioi_plan_writer_stripe_at(p, w, i);
        uint64_t start = s * p->stripe_size;
        uint64_t end = start + p->stripe_size < p->size ? start + p->stripe_size : p->size;
        if (end <= start)
            continue;
        if (*n > 0 && runs[*n - 1].offset + runs[*n - 1].len == start)
            runs[*n - 1].len += end - start;
        else
            runs[(*n)++] = (fwdioi_local_run_t){start, end - start};
    }
    return runs;
}

fwdioi_local_run_t *fwdioi_local_runs_of(const fwdio_file_t *f, int w, size_t *n)
{
    const struct fwdioi_local *l = f->local;
    if (!f->stream || w != f->my_writer)
        return fwdioi_local_writer_runs(&f->plan, w, n);
    fwdioi_local_run_t *runs = malloc((l->nwritten ? l->nwritten : 1) * sizeof *runs);
    *n = 0;
    if (!runs)
        return NULL;
    if (l->nwritten)
        memcpy(runs, l->written, l->nwritten * sizeof *runs);
    *n = l->nwritten;
    return runs;
}
