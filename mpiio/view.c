/* SPDX-License-Identifier: BSD-3-Clause */
/* Datatypes flattened through MPI's envelope/contents calls, and file views
 * walked over the flattened filetype. */
#include "view.h"

#include "type_contents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct flatten_ctx {
    mpiio_runs_t *out;
    char *why;
    size_t why_len;
} flatten_ctx_t;

static int fail(flatten_ctx_t *c, const char *what)
{
    snprintf(c->why, c->why_len, "%s", what);
    return -1;
}

static int append_run(flatten_ctx_t *c, int64_t disp, int64_t len)
{
    mpiio_runs_t *o = c->out;
    if (len <= 0)
        return 0;
    mpiio_run_t *last = o->n > 0 ? &o->r[o->n - 1] : NULL;
    if (last && last->count == 1 && last->disp + last->len == disp) { /* it continues */
        last->len += len;
        o->size += len;
        return 0;
    }
    if (last && last->len == len && disp != last->disp &&
        (last->count == 1 || disp == last->disp + last->count * last->stride)) {
        if (last->count == 1) /* a second run of its length: a stride */
            last->stride = disp - last->disp;
        last->count++; /* one more at its stride */
        o->size += len;
        return 0;
    }
    if (o->n == MPIIO_MAX_RUNS)
        return fail(c, "the datatype has more than 4194304 runs of bytes at no common stride");
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 16;
        mpiio_run_t *r = realloc(o->r, cap * sizeof(*r));
        if (!r)
            return fail(c, "out of memory flattening the datatype");
        o->r = r;
        o->cap = cap;
    }
    o->r[o->n++] = (mpiio_run_t){.disp = disp, .len = len, .before = o->size, .count = 1};
    o->size += len;
    return 0;
}

static int64_t type_extent(MPI_Datatype t)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(t, &lb, &extent);
    return (int64_t)extent;
}

static int flatten_at(flatten_ctx_t *c, MPI_Datatype t, int64_t base, int depth);

/* A type's runs at displacement 0, flattened once and then placed wherever
 * its instances go (walking the type again for every instance would cost a
 * call per element). `dense`: one run covering the whole extent. */
typedef struct tmpl {
    mpiio_runs_t runs;
    int64_t extent;
    int dense;
} tmpl_t;

static int make_tmpl(flatten_ctx_t *c, MPI_Datatype t, int depth, tmpl_t *tp)
{
    memset(tp, 0, sizeof(*tp));
    flatten_ctx_t sub = {.out = &tp->runs, .why = c->why, .why_len = c->why_len};
    if (flatten_at(&sub, t, 0, depth + 1) != 0) {
        mpiio_runs_free(&tp->runs);
        return -1;
    }
    tp->extent = type_extent(t);
    tp->dense = tp->runs.n == 1 && tp->runs.r[0].count == 1 && tp->runs.r[0].disp == 0 &&
                tp->runs.r[0].len == tp->extent;
    return 0;
}

/* `n` consecutive instances of the template from base. */
static int place(flatten_ctx_t *c, const tmpl_t *tp, int64_t base, int64_t n)
{
    if (tp->dense || tp->runs.n == 0)
        return tp->runs.n ? append_run(c, base, n * tp->extent) : 0;
    for (int64_t j = 0; j < n; j++)
        for (size_t k = 0; k < tp->runs.n; k++) {
            const mpiio_run_t *r = &tp->runs.r[k];
            for (int64_t m = 0; m < r->count; m++)
                if (append_run(c, base + j * tp->extent + r->disp + m * r->stride, r->len) != 0)
                    return -1;
        }
    return 0;
}

/* `count` blocks of `blocklen` instances of `old`, block i at base + disp(i). */
static int flatten_blocks(flatten_ctx_t *c, MPI_Datatype old, int64_t base, int64_t count,
                          const int64_t *blocklens, int64_t blocklen, const int64_t *disps,
                          int depth)
{
    tmpl_t tp;
    if (make_tmpl(c, old, depth, &tp) != 0)
        return -1;
    int rc = 0;
    for (int64_t i = 0; i < count && rc == 0; i++)
        rc = place(c, &tp, base + disps[i], blocklens ? blocklens[i] : blocklen);
    mpiio_runs_free(&tp.runs);
    return rc;
}

/* A subarray: the elements of the subsizes box, in the array's own order;
 * a row along the fastest dimension at a time. */
static int flatten_subarray(flatten_ctx_t *c, const int64_t *ints, MPI_Datatype old,
                            int64_t base, int depth)
{
    int64_t nd = ints[0];
    const int64_t *sizes = ints + 1, *subsizes = ints + 1 + nd, *starts = ints + 1 + 2 * nd;
    int64_t order = ints[1 + 3 * nd];
    if (nd <= 0 || nd > 32)
        return fail(c, "a subarray of an unusual number of dimensions");
    int64_t stride[32], idx[32];
    for (int d = 0; d < nd; d++) {
        if (subsizes[d] == 0)
            return 0;
        idx[d] = 0;
    }
    /* Element strides, and the dimension that varies fastest first. */
    int dims[32];
    for (int k = 0; k < nd; k++) {
        int d = order == MPI_ORDER_C ? nd - 1 - k : k;
        dims[k] = d;
        stride[d] = k == 0 ? 1 : stride[dims[k - 1]] * sizes[dims[k - 1]];
    }
    tmpl_t tp;
    if (make_tmpl(c, old, depth, &tp) != 0)
        return -1;
    int rc = 0;
    for (;;) {
        int64_t elem = 0;
        for (int d = 0; d < nd; d++)
            elem += (starts[d] + idx[d]) * stride[d];
        /* one row: subsizes of the fastest dimension, consecutive elements */
        rc = place(c, &tp, base + elem * tp.extent, subsizes[dims[0]]);
        int k = 1;
        while (rc == 0 && k < nd && ++idx[dims[k]] == subsizes[dims[k]]) {
            idx[dims[k]] = 0;
            k++;
        }
        if (rc != 0 || k >= nd)
            break;
    }
    mpiio_runs_free(&tp.runs);
    return rc;
}

static int flatten_at(flatten_ctx_t *c, MPI_Datatype t, int64_t base, int depth)
{
    if (depth > 64)
        return fail(c, "the datatype nests too deeply");
    mpiio_type_contents_t k;
    if (mpiio_type_contents(t, &k) != 0)
        return fail(c, "MPI could not describe the datatype, or out of memory");
    if (k.combiner == MPI_COMBINER_NAMED) {
        MPI_Count size = 0;
        PMPI_Type_size_x(t, &size);
        return append_run(c, base, (int64_t)size);
    }
    const int64_t *ints = k.ints, *addrs = k.addrs;
    MPI_Datatype *types = k.types;
    int64_t count = k.nints > 0 ? ints[0] : 0;
    int64_t *disps = NULL;
    int rc = -1;
    if (count > 0) {
        disps = malloc(sizeof(int64_t) * (size_t)count);
        if (!disps) {
            fail(c, "out of memory flattening the datatype");
            goto out;
        }
    }
    switch (k.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the typemap is the old type's */
        rc = flatten_at(c, types[0], base, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS: {
        int64_t zero = 0;
        rc = flatten_blocks(c, types[0], base, 1, NULL, count, &zero, depth);
        break;
    }
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        int64_t step = k.combiner == MPI_COMBINER_VECTOR ? ints[2] * type_extent(types[0])
                                                         : addrs[0];
        for (int64_t i = 0; i < count; i++)
            disps[i] = i * step;
        rc = flatten_blocks(c, types[0], base, count, NULL, ints[1], disps, depth);
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int64_t i = 0; i < count; i++)
            disps[i] = k.combiner == MPI_COMBINER_INDEXED
                           ? ints[1 + count + i] * type_extent(types[0])
                           : addrs[i];
        rc = flatten_blocks(c, types[0], base, count, ints + 1, 0, disps, depth);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int64_t i = 0; i < count; i++)
            disps[i] = k.combiner == MPI_COMBINER_INDEXED_BLOCK
                           ? ints[2 + i] * type_extent(types[0])
                           : addrs[i];
        rc = flatten_blocks(c, types[0], base, count, NULL, ints[1], disps, depth);
        break;
    case MPI_COMBINER_STRUCT:
        rc = 0;
        for (int64_t i = 0; i < count && rc == 0; i++) {
            int64_t d = addrs[i];
            rc = flatten_blocks(c, types[i], base, 1, NULL, ints[1 + i], &d, depth);
        }
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = flatten_subarray(c, ints, types[0], base, depth);
        break;
    case MPI_COMBINER_DARRAY:
        fail(c, "a distributed-array (darray) datatype");
        break;
    default:
        fail(c, "a datatype of a kind the layer does not flatten (Fortran or external)");
        break;
    }
out:
    free(disps);
    mpiio_type_contents_free(&k);
    return rc;
}

int mpiio_flatten(MPI_Datatype type, mpiio_runs_t *out, char *why, size_t why_len)
{
    flatten_ctx_t c = {.out = out, .why = why, .why_len = why_len};
    memset(out, 0, sizeof(*out));
    if (flatten_at(&c, type, 0, 0) != 0) {
        mpiio_runs_free(out);
        return -1;
    }
    out->extent = type_extent(type);
    if (out->size > 0 && out->extent <= 0) {
        mpiio_runs_free(out);
        return fail(&c, "a datatype whose extent is not positive");
    }
    return 0;
}

void mpiio_runs_free(mpiio_runs_t *runs)
{
    free(runs->r);
    memset(runs, 0, sizeof(*runs));
}

int mpiio_view_default(mpiio_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->etype_size = 1;
    v->ft.r = malloc(sizeof(mpiio_run_t));
    if (!v->ft.r)
        return -1;
    v->ft.r[0] = (mpiio_run_t){.disp = 0, .len = 1, .before = 0, .count = 1};
    v->ft.n = v->ft.cap = 1;
    v->ft.size = v->ft.extent = 1;
    return 0;
}

void mpiio_view_free(mpiio_view_t *v)
{
    mpiio_runs_free(&v->ft);
}

/* The entry of the filetype holding data byte `within` of an instance, and
 * which of its runs (*m). */
static size_t run_of(const mpiio_runs_t *ft, int64_t within, int64_t *m)
{
    size_t lo = 0, hi = ft->n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (ft->r[mid].before <= within)
            lo = mid;
        else
            hi = mid;
    }
    *m = (within - ft->r[lo].before) / ft->r[lo].len;
    return lo;
}

int mpiio_view_map(const mpiio_view_t *v, int64_t pos, int64_t len, mpiio_extent_fn fn, void *arg)
{
    const mpiio_runs_t *ft = &v->ft;
    if (len <= 0 || ft->size <= 0)
        return 0;
    /* A filetype that is one run filling its extent (the default view's
     * MPI_BYTE, any contiguous type): its instances touch, so the data is
     * one extent, however many instances (walking them cost a step a byte). */
    if (ft->n == 1 && ft->r[0].count == 1 && ft->r[0].len == ft->extent)
        return fn(arg, v->disp + ft->r[0].disp + pos, len, 0);
    int64_t inst = pos / ft->size, within = pos % ft->size, m;
    size_t i = run_of(ft, within, &m);
    int64_t done = 0, cur_off = -1, cur_len = 0, cur_pos = 0;
    while (done < len) {
        const mpiio_run_t *r = &ft->r[i];
        int64_t skip = within - r->before - m * r->len;
        int64_t take = r->len - skip < len - done ? r->len - skip : len - done;
        int64_t off = v->disp + inst * ft->extent + r->disp + m * r->stride + skip;
        if (cur_len > 0 && cur_off + cur_len == off) {
            cur_len += take;
        } else {
            if (cur_len > 0) {
                int rc = fn(arg, cur_off, cur_len, cur_pos);
                if (rc != 0)
                    return rc;
            }
            cur_off = off;
            cur_len = take;
            cur_pos = done;
        }
        done += take;
        within += take;
        if (skip + take < r->len)
            continue; /* the data ended inside this run */
        if (++m < r->count)
            continue; /* the entry's next run */
        m = 0;
        if (++i == ft->n || within == ft->size) {
            i = 0;
            within = 0;
            inst++;
        }
    }
    return cur_len > 0 ? fn(arg, cur_off, cur_len, cur_pos) : 0;
}

int64_t mpiio_view_byte_offset(const mpiio_view_t *v, int64_t pos)
{
    const mpiio_runs_t *ft = &v->ft;
    if (ft->size <= 0)
        return v->disp;
    int64_t inst = pos / ft->size, within = pos % ft->size, m;
    const mpiio_run_t *r = &ft->r[run_of(ft, within, &m)];
    return v->disp + inst * ft->extent + r->disp + m * r->stride + (within - r->before - m * r->len);
}

int64_t mpiio_view_bytes_below(const mpiio_view_t *v, int64_t file_size)
{
    const mpiio_runs_t *ft = &v->ft;
    if (file_size <= v->disp || ft->size <= 0 || ft->extent <= 0)
        return 0;
    int64_t rel = file_size - v->disp;
    int64_t inst = rel / ft->extent, rest = rel % ft->extent;
    int64_t bytes = inst * ft->size;
    for (size_t i = 0; i < ft->n; i++) {
        const mpiio_run_t *r = &ft->r[i];
        int64_t m = 0, n = r->count;
        if (r->stride > 0) { /* the runs wholly below rest, at once */
            int64_t whole = r->disp + r->len <= rest ? (rest - r->disp - r->len) / r->stride + 1 : 0;
            m = whole < n ? whole : n;
            bytes += m * r->len;
        }
        for (; m < n; m++) { /* the one cut by rest; any order for the others */
            int64_t d = r->disp + m * r->stride;
            if (d < rest)
                bytes += d + r->len <= rest ? r->len : rest - d;
            else if (r->stride > 0)
                break;
        }
    }
    return bytes;
}
