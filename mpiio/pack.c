/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory types: the bytes of count x type in typemap order, as MPI_Pack
 * orders them (what MPI writes), and back (what a read fills in). A type
 * that is one run of memory in increasing address order is used in place.
 * MPI_Pack counts in int, so data of 2^31 bytes or more is gathered (or
 * scattered) run by run from the flattened type instead. */
#include "layer.h"
#include "type_contents.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int mpiio_type_bytes(int count, MPI_Datatype type, int64_t *bytes)
{
    MPI_Count size = 0;
    *bytes = 0;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        size == MPI_UNDEFINED || size < 0)
        return MPI_ERR_TYPE;
    if (size > 0 && count > INT64_MAX / size)
        return MPI_ERR_COUNT;
    *bytes = (int64_t)count * (int64_t)size;
    return MPI_SUCCESS;
}

/* Is count x type one run of bytes, in the order MPI_Pack would take them?
 * A type whose bytes cover one range of memory may still list them out of
 * address order (a permuted hindexed, a struct ordered by file position):
 * MPI writes such data in typemap order, so it must be packed. Only a
 * predefined type, or one whose flattened typemap is a single run in order,
 * is used in place. */
int mpiio_one_run(int count, MPI_Datatype type, MPI_Aint *start)
{
    MPI_Count size = 0, lb, extent, true_lb, true_extent;
    PMPI_Type_size_x(type, &size);
    PMPI_Type_get_extent_x(type, &lb, &extent);
    PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
    *start = (MPI_Aint)true_lb;
    if (true_extent != size || (count > 1 && extent != size))
        return 0; /* gaps: not one run, whatever the order */
    if (size == 0)
        return 1;
    if (mpiio_type_combiner(type) == MPI_COMBINER_NAMED)
        return 1;
    mpiio_runs_t runs = {0};
    char why[128];
    int in_order = mpiio_flatten(type, &runs, why, sizeof why) == 0 && runs.n == 1 &&
                   runs.r[0].count == 1 && runs.r[0].len == size && runs.r[0].disp == true_lb;
    mpiio_runs_free(&runs);
    return in_order;
}

int mpiio_packer_init(mpiio_packer_t *p, const void *buf, int count, MPI_Datatype type)
{
    char why[128];
    *p = (mpiio_packer_t){.buf = buf, .count = count};
    return mpiio_flatten(type, &p->runs, why, sizeof why) == 0 ? 0 : -1;
}

int64_t mpiio_packer_next(mpiio_packer_t *p, char *out, int64_t cap)
{
    int64_t got = 0;
    while (got < cap && p->k < p->count && p->runs.n > 0) {
        const mpiio_run_t *r = &p->runs.r[p->i];
        int64_t take = r->len - p->in_run < cap - got ? r->len - p->in_run : cap - got;
        memcpy(out + got,
               p->buf + (int64_t)p->k * p->runs.extent + r->disp + p->m * r->stride + p->in_run,
               (size_t)take);
        got += take;
        p->in_run += take;
        if (p->in_run == r->len) { /* next run, next entry, next instance */
            p->in_run = 0;
            if (++p->m < r->count)
                continue;
            p->m = 0;
            if (++p->i == p->runs.n) {
                p->i = 0;
                p->k++;
            }
        }
    }
    return got;
}

void mpiio_packer_free(mpiio_packer_t *p)
{
    mpiio_runs_free(&p->runs);
}

/* Copy between packed data and count x type at buf, run by run (to: into
 * the buffer). */
static int by_runs(const char *buf_c, char *buf, int count, MPI_Datatype type, char *packed,
                   const char *packed_c)
{
    mpiio_runs_t runs = {0};
    char why[128];
    if (mpiio_flatten(type, &runs, why, sizeof why) != 0)
        return MPI_ERR_TYPE;
    int64_t at = 0;
    for (int k = 0; k < count; k++)
        for (size_t i = 0; i < runs.n; i++) {
            const mpiio_run_t *r = &runs.r[i];
            for (int64_t m = 0; m < r->count; m++) {
                int64_t from = (int64_t)k * runs.extent + r->disp + m * r->stride;
                if (packed)
                    memcpy(packed + at, buf_c + from, (size_t)r->len);
                else
                    memcpy(buf + from, packed_c + at, (size_t)r->len);
                at += r->len;
            }
        }
    mpiio_runs_free(&runs);
    return MPI_SUCCESS;
}

int mpiio_pack(const void *buf, int count, MPI_Datatype type, int64_t bytes, const char **data,
               char **copy)
{
    MPI_Aint start;
    *copy = NULL;
    if (mpiio_one_run(count, type, &start)) {
        *data = (const char *)buf + start;
        return MPI_SUCCESS;
    }
    *copy = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!*copy)
        return MPI_ERR_NO_MEM;
    int rc;
    if (bytes <= INT_MAX) {
        int pos = 0;
        rc = PMPI_Pack(buf, count, type, *copy, (int)bytes, &pos, MPI_COMM_SELF);
    } else {
        rc = by_runs(buf, NULL, count, type, *copy, NULL);
    }
    if (rc != MPI_SUCCESS) {
        free(*copy);
        *copy = NULL;
        return rc;
    }
    *data = *copy;
    return MPI_SUCCESS;
}

/* Bytes of the packed data laid out at a time: a memory type of any size
 * costs this much memory, not its size. */
enum { PACK_CHUNK = 4 << 20 };

int mpiio_map_data(const mpiio_view_t *view, int64_t pos, const void *buf, int count,
                   MPI_Datatype type, int64_t n, const char **data, mpiio_extent_fn fn,
                   void *arg)
{
    MPI_Aint start;
    if (mpiio_one_run(count, type, &start)) {
        *data = (const char *)buf + start;
        mpiio_view_map(view, pos, n, fn, arg);
        return MPI_SUCCESS;
    }
    mpiio_packer_t p;
    if (mpiio_packer_init(&p, buf, count, type) != 0) { /* MPI_Pack's own, whole */
        char *copy;
        int rc = mpiio_pack(buf, count, type, n, data, &copy);
        if (rc == MPI_SUCCESS)
            mpiio_view_map(view, pos, n, fn, arg);
        free(copy);
        return rc;
    }
    char *chunk = malloc(n < PACK_CHUNK ? (size_t)n : PACK_CHUNK);
    if (!chunk) {
        mpiio_packer_free(&p);
        return MPI_ERR_NO_MEM;
    }
    *data = chunk;
    for (int64_t done = 0, len; done < n; done += len) {
        len = mpiio_packer_next(&p, chunk, n - done < PACK_CHUNK ? n - done : PACK_CHUNK);
        if (len <= 0 || mpiio_view_map(view, pos + done, len, fn, arg) != 0)
            break;
    }
    free(chunk);
    mpiio_packer_free(&p);
    return MPI_SUCCESS;
}

int mpiio_unpack(const char *packed, int64_t bytes, void *buf, int count, MPI_Datatype type)
{
    if (bytes <= INT_MAX) {
        int at = 0;
        return PMPI_Unpack(packed, (int)bytes, &at, buf, count, type, MPI_COMM_SELF);
    }
    return by_runs(NULL, buf, count, type, NULL, packed);
}
