/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank without the node-shared area, for the unit tests of the roles: no
 * writer is another rank of this node's (every message goes by MPI), no
 * buffer lies in the area, and the area's heap has nothing to give. What
 * message.c and the roles ask of forwarder/node/ is answered so.
 */
#include "node/area_heap.h"
#include "node/node_area.h"

#include <stdio.h>
#include <stdlib.h>

int fwdioi_area_local_index(const fwdioi_area_t *a, int rank)
{
    (void)a;
    (void)rank;
    return -1;
}

uint64_t fwdioi_area_own_offset(const fwdioi_area_t *a, const void *p, size_t len)
{
    (void)a;
    (void)p;
    (void)len;
    return UINT64_MAX;
}

void *fwdioi_heap_alloc(fwdioi_heap_t *h, size_t len)
{
    (void)h;
    (void)len;
    return NULL;
}

void fwdioi_heap_free(fwdioi_heap_t *h, void *p, size_t len)
{
    (void)h;
    (void)p;
    (void)len;
    fprintf(stderr, "fake node: a free into the node-shared area, which gave nothing out\n");
    abort();
}
