/* SPDX-License-Identifier: BSD-3-Clause */
#include "atoms.h"

#include <stdlib.h>
#include <string.h>

void atoms_init(md_atoms_t *a)
{
    memset(a, 0, sizeof *a);
}

void atoms_free(md_atoms_t *a)
{
    free(a->id);
    free(a->x);
    free(a->v);
    free(a->f);
    atoms_init(a);
}

static int grow(void **p, size_t count, size_t size)
{
    void *q = realloc(*p, count * size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

int atoms_reserve_x(md_atoms_t *a, size_t total)
{
    if (total <= a->xcap)
        return 0;
    size_t cap = a->xcap ? a->xcap : 64;
    while (cap < total)
        cap *= 2;
    if (grow((void **)&a->x, 3 * cap, sizeof(double)))
        return -1;
    a->xcap = cap;
    return 0;
}

int atoms_reserve(md_atoms_t *a, size_t owned)
{
    a->nghost = 0;
    if (atoms_reserve_x(a, owned))
        return -1;
    if (owned <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap : 64;
    while (cap < owned)
        cap *= 2;
    if (grow((void **)&a->id, cap, sizeof(int64_t)) || grow((void **)&a->v, 3 * cap, sizeof(double)) ||
        grow((void **)&a->f, 3 * cap, sizeof(double)))
        return -1;
    a->cap = cap;
    return 0;
}

int atoms_push(md_atoms_t *a, int64_t id, const double x[3], const double v[3])
{
    if (atoms_reserve(a, a->n + 1))
        return -1;
    size_t i = a->n++;
    a->id[i] = id;
    memcpy(a->x + 3 * i, x, 3 * sizeof(double));
    memcpy(a->v + 3 * i, v, 3 * sizeof(double));
    memset(a->f + 3 * i, 0, 3 * sizeof(double));
    return 0;
}

struct id_index {
    int64_t id;
    size_t index;
};

static int compare_id(const void *pa, const void *pb)
{
    const struct id_index *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/* Reorder an array of `n` records of `width` doubles by `order`, through `tmp`. */
static void permute(double *data, double *tmp, const struct id_index *order, size_t n, size_t width)
{
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + width * i, data + width * order[i].index, width * sizeof(double));
    memcpy(data, tmp, n * width * sizeof(double));
}

int atoms_sort_by_id(md_atoms_t *a)
{
    a->nghost = 0;
    size_t n = a->n;
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = a->id[i - 1] < a->id[i];
    if (sorted)
        return 0;
    struct id_index *order = malloc((n ? n : 1) * sizeof *order);
    double *tmp = malloc((n ? n : 1) * 3 * sizeof(double));
    if (!order || !tmp) {
        free(order);
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (struct id_index){a->id[i], i};
    qsort(order, n, sizeof *order, compare_id);
    permute(a->x, tmp, order, n, 3);
    permute(a->v, tmp, order, n, 3);
    permute(a->f, tmp, order, n, 3);
    for (size_t i = 0; i < n; i++)
        a->id[i] = order[i].id;
    free(order);
    free(tmp);
    return 0;
}
