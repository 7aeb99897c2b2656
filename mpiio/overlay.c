/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlay: bytes this process wrote through another handle of a path over
 * bytes of a taken handle's current step, kept in order until that step is
 * in the file and then written by the layer (direct.c). */
#include "layer.h"

#include <stdlib.h>
#include <string.h>

int mpiio_overlay_apply(mpiio_file_t *f, const char *call)
{
    if (!f->overlay)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    for (mpiio_overlay_t *o = f->overlay; o && rc == MPI_SUCCESS; o = o->next)
        rc = mpiio_direct_write(f, o->data, o->len, o->off, call);
    mpiio_overlay_drop(f);
    return rc;
}

void mpiio_overlay_drop(mpiio_file_t *f)
{
    while (f->overlay) {
        mpiio_overlay_t *o = f->overlay;
        f->overlay = o->next;
        free(o->data);
        free(o);
    }
    f->overlay_tail = &f->overlay;
}

static int overlay_touches(const mpiio_file_t *f, int64_t start, int64_t end)
{
    for (const mpiio_overlay_t *o = f->overlay; o; o = o->next)
        if (o->off < end && start < o->off + o->len)
            return 1;
    return 0;
}

int mpiio_has_unended(const mpiio_file_t *f) { return f->own.n > 0 || f->overlay != NULL; }

int mpiio_touches_unended(const mpiio_file_t *f, int64_t start, int64_t end)
{
    return mpiio_extents_touch(&f->own, start, end) || overlay_touches(f, start, end);
}

int mpiio_overlay_add(mpiio_file_t *f, const char *data, int64_t len, int64_t off)
{
    mpiio_overlay_t *o = malloc(sizeof(*o));
    char *copy = malloc((size_t)len);
    if (!o || !copy) {
        free(o);
        free(copy);
        return FWDIO_ENOMEM;
    }
    memcpy(copy, data, (size_t)len);
    *o = (mpiio_overlay_t){.off = off, .len = len, .data = copy, .next = NULL};
    if (!f->overlay_tail)
        f->overlay_tail = &f->overlay;
    *f->overlay_tail = o;
    f->overlay_tail = &o->next;
    return FWDIO_OK;
}

/* --- writes through other handles of the path ------------------------------------ */

typedef struct alias_ctx {
    mpiio_file_t **alias;
    size_t n;
    const char *data;
} alias_ctx_t;

int mpiio_aliases_keep(mpiio_file_t **alias, size_t n, const char *data, int64_t off, int64_t len)
{
    int rc = 0;
    for (size_t i = 0; i < n && off >= 0; i++)
        if (mpiio_touches_unended(alias[i], off, off + len) &&
            mpiio_overlay_add(alias[i], data, len, off) != FWDIO_OK)
            rc = 1;
    return rc;
}

static int copy_extent_to_aliases(void *arg, int64_t off, int64_t len, int64_t data_pos)
{
    alias_ctx_t *c = arg;
    return mpiio_aliases_keep(c->alias, c->n, c->data + data_pos, off, len);
}

void mpiio_copy_to_aliases(mpiio_file_t **alias, size_t n, const mpiio_view_t *view,
                           int64_t pos, const void *buf, int count, MPI_Datatype type)
{
    int64_t bytes = 0;
    if (n == 0 || mpiio_type_bytes(count, type, &bytes) != MPI_SUCCESS || bytes == 0)
        return;
    alias_ctx_t c = {alias, n, NULL};
    mpiio_map_data(view, pos, buf, count, type, bytes, &c.data, copy_extent_to_aliases, &c);
}
