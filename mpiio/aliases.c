/* SPDX-License-Identifier: BSD-3-Clause */
/* A process's several handles of one path. Writes keep the process's order
 * across its handles, as in any MPI-IO: a write through one handle waits for
 * the steps the other taken handles of the path ended, and a copy of its
 * bytes that land on another taken handle's bytes of the current step (still
 * on their way to fwdio's writers) follows those into the file (access.c,
 * that handle's overlay). The taken handles are the file table's (state.c);
 * this file keeps the handles of matching paths that the layer did not take
 * (another rank of their group could not, say) or handed back to MPI-IO,
 * whose writes go to MPI-IO at once but are ordered the same way. */
#include "layer.h"
#include "type_contents.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct untaken {
    MPI_File fh;
    char *path;
    struct untaken *next;
} untaken_t;

static pthread_mutex_t untaken_lock = PTHREAD_MUTEX_INITIALIZER;
static untaken_t *untakens;
static atomic_int nuntaken; /* read without the lock: most writes find none */

void mpiio_untaken_add(MPI_File fh, const char *path)
{
    untaken_t *u = malloc(sizeof *u);
    char *copy = strdup(path);
    if (!u || !copy) { /* its writes are then not ordered against taken handles */
        free(u);
        free(copy);
        return;
    }
    *u = (untaken_t){.fh = fh, .path = copy};
    pthread_mutex_lock(&untaken_lock);
    u->next = untakens;
    untakens = u;
    atomic_fetch_add(&nuntaken, 1);
    pthread_mutex_unlock(&untaken_lock);
}

void mpiio_untaken_remove(MPI_File fh)
{
    pthread_mutex_lock(&untaken_lock);
    for (untaken_t **p = &untakens; *p; p = &(*p)->next)
        if ((*p)->fh == fh) {
            untaken_t *u = *p;
            *p = u->next;
            free(u->path);
            free(u);
            atomic_fetch_sub(&nuntaken, 1);
            break;
        }
    pthread_mutex_unlock(&untaken_lock);
}

int mpiio_untaken_open(const char *path)
{
    int found = 0;
    pthread_mutex_lock(&untaken_lock);
    for (untaken_t *u = untakens; u && !found; u = u->next)
        found = strcmp(u->path, path) == 0;
    pthread_mutex_unlock(&untaken_lock);
    return found;
}

/* The view of a handle MPI-IO has, flattened: 0, or -1. */
static int real_view(MPI_File fh, mpiio_view_t *v)
{
    MPI_Offset disp;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    if (PMPI_File_get_view(fh, &disp, &etype, &ftype, rep) != MPI_SUCCESS)
        return -1;
    int esize = 0, rc = -1;
    char why[128];
    PMPI_Type_size(etype, &esize);
    *v = (mpiio_view_t){.disp = disp, .etype_size = esize};
    if (esize > 0 && mpiio_flatten(ftype, &v->ft, why, sizeof why) == 0)
        rc = 0;
    /* get_view returns new handles of derived types */
    MPI_Datatype types[2] = {etype, ftype};
    for (int i = 0; i < 2; i++) {
        int combiner = mpiio_type_combiner(types[i]);
        if (combiner >= 0 && combiner != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
    return rc;
}

int mpiio_untaken_begin(MPI_File fh, MPI_Offset offset, int at_pointer, mpiio_untaken_write_t *w)
{
    memset(w, 0, sizeof *w);
    if (atomic_load(&nuntaken) == 0)
        return 0;
    char path[4096] = "";
    pthread_mutex_lock(&untaken_lock);
    for (untaken_t *u = untakens; u; u = u->next)
        if (u->fh == fh) {
            strncpy(path, u->path, sizeof path - 1);
            break;
        }
    pthread_mutex_unlock(&untaken_lock);
    if (!path[0])
        return 0;
    w->n = mpiio_taken_with_path(path, w->alias, MPIIO_ALIASES_MAX);
    int unended = 0;
    for (size_t i = 0; i < w->n; i++) {
        mpiio_settle_quietly(w->alias[i]);
        unended |= mpiio_has_unended(w->alias[i]);
    }
    if (!unended || real_view(fh, &w->view) != 0)
        return 0; /* nothing can land after it (or no view to map: nothing to copy) */
    MPI_Offset at = offset;
    if (at_pointer && PMPI_File_get_position(fh, &at) != MPI_SUCCESS) {
        mpiio_view_free(&w->view);
        return 0;
    }
    w->pos = (int64_t)at * w->view.etype_size;
    return 1;
}

int mpiio_untaken_end(mpiio_untaken_write_t *w, int rc, const void *buf, int count,
                      MPI_Datatype type)
{
    if (rc == MPI_SUCCESS)
        mpiio_copy_to_aliases(w->alias, w->n, &w->view, w->pos, buf, count, type);
    mpiio_view_free(&w->view);
    return rc;
}
