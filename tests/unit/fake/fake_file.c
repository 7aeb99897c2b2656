/* SPDX-License-Identifier: BSD-3-Clause */
/* A file for the role tests (fake_file.h). */
#include "fake_file.h"

#include "plan/plan.h"

#include <stdlib.h>

void fake_file_init(fwdio_file_t *f, struct fwdio_runtime *owner, char *path,
                    const fake_file_shape_t *shape, int *writer_ranks)
{
    fwdio_options_t in = {.write_size = shape->unit, .stripe_size = shape->stripe,
                          .writers = shape->nwriters, .first_writer = 0, .writer_stride = 1,
                          .layout = shape->layout, .placement = FWDIO_PLACEMENT_STRIDE};
    if (fwdioi_options_resolve(&in, shape->nranks, 1, &f->opts, NULL) != FWDIO_OK)
        abort();
    for (int i = 0; i < shape->nwriters; i++)
        writer_ranks[i] = i;
    f->owner = owner;
    f->engine = owner->engine;
    f->path = path;
    f->write_path = path;
    f->size = shape->size;
    f->rank = shape->rank;
    f->writer_ranks = writer_ranks;
    fwdioi_plan_init(&f->plan, shape->size, &f->opts, shape->nranks, writer_ranks,
                     shape->nwriters);
    f->my_writer = fwdioi_plan_writer_of_rank(&f->plan, shape->rank);
    fwdioi_session_t *s = &f->s;
    s->phase = FWDIOI_PHASE_CHECKING;
    s->comm = MPI_COMM_SELF; /* any communicator: the fake wire ignores it */
    s->fd = -1;
    s->outcome.open_local = s->outcome.open_agreed = s->outcome.local_error = s->outcome.final_agreed = FWDIOI_ERRINFO_OK;
    s->outcome.abort_info = FWDIOI_ERRINFO_OK;
    s->expected_bytes =
        calloc((size_t)shape->nwriters + FWDIOI_CLOSE_EXTRA, sizeof *s->expected_bytes);
    if (!s->expected_bytes)
        abort();
    LIST_INSERT_HEAD(&owner->active, f, s.links.active);
}
