/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads: groups of ranks, the file's model, options, and writing the
 * file with fwdio or with plain pwrite (reads.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "reads.h"
#include "test_common.h"

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "FAIL [rank %d]: out of memory (%zu bytes)\n", tc_rank, n);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

uint64_t sum_u64(MPI_Comm comm, uint64_t v)
{
    uint64_t s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, comm);
    return s;
}

uint64_t max_u64(MPI_Comm comm, uint64_t v)
{
    uint64_t s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_MAX, comm);
    return s;
}

/* ---- ranks that run a runtime together ---------------------------------- */

void group_set(group_t *g, MPI_Comm comm, fwdio_runtime_t *rt)
{
    g->comm = comm;
    MPI_Comm_rank(comm, &g->rank);
    MPI_Comm_size(comm, &g->size);
    g->rt = rt;
}

/* ---- the file's model: extents written with the pattern, or holes -------- */

static void model_push(model_t *m, uint64_t off, uint64_t len, int owner)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        tc_extent_t *grown = realloc(m->ext, m->cap * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "FAIL [rank %d]: out of memory for extents\n", tc_rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        m->ext = grown;
    }
    m->ext[m->n++] = (tc_extent_t){off, len, owner};
}

/* [0, size - tail_hole) cut into extents of 1..max_len bytes owned by one of
 * `nranks` ranks or (1 in hole_one_in) holes, then a hole of tail_hole bytes.
 * Drawn from `r` only: ranks that seed it alike get the same model. */
void model_plan(model_t *m, const char *name, tc_rng_t *r, uint64_t size, uint64_t seed,
                uint64_t max_len, int nranks, unsigned hole_one_in, uint64_t tail_hole)
{
    memset(m, 0, sizeof *m);
    tc_path(m->path, sizeof m->path, name);
    m->size = size;
    m->seed = seed;
    if (tail_hole > size)
        tail_hole = size;
    uint64_t end = size - tail_hole;
    for (uint64_t off = 0; off < end;) {
        uint64_t len = 1 + tc_rng_below(r, max_len);
        if (len > end - off)
            len = end - off;
        int owner = (int)tc_rng_below(r, (uint64_t)nranks);
        if (hole_one_in && tc_rng_below(r, hole_one_in) == 0)
            owner = -1;
        model_push(m, off, len, owner);
        off += len;
    }
    if (tail_hole)
        model_push(m, end, tail_hole, -1);
}

void model_free(model_t *m)
{
    free(m->ext);
    m->ext = NULL;
    m->n = m->cap = 0;
}

/* The bytes [off, off + len) of the model into out (zeros past its end). */
void expected_fill(const model_t *m, uint64_t off, size_t len, uint8_t *out)
{
    size_t i = 0;
    if (m->n) {
        size_t lo = 0, hi = m->n;
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->ext[mid].offset <= off)
                lo = mid;
            else
                hi = mid;
        }
        i = lo;
    }
    while (len > 0) {
        if (off >= m->size || i >= m->n) {
            memset(out, 0, len);
            return;
        }
        const tc_extent_t *e = &m->ext[i];
        uint64_t end = e->offset + e->len;
        if (off >= end) {
            i++;
            continue;
        }
        size_t k = (size_t)min_u64(end - off, len);
        if (e->owner < 0)
            memset(out, 0, k);
        else
            pattern_fill(out, k, off, m->seed);
        out += k;
        off += k;
        len -= k;
    }
}

int in_hole(const model_t *m, uint64_t off)
{
    for (size_t i = 0; i < m->n; i++)
        if (off >= m->ext[i].offset && off < m->ext[i].offset + m->ext[i].len)
            return m->ext[i].owner < 0;
    return 1; /* past the end */
}

uint64_t model_holes(const model_t *m)
{
    uint64_t h = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->ext[i].owner < 0)
            h += m->ext[i].len;
    return h;
}

/* Rank 0 of comm writes the model with plain pwrite, last extent first (the
 * holes between are never written), then ftruncate makes the hole at the end. */
void write_plain(MPI_Comm comm, const model_t *m)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        tc_phase("pwrite %s", m->path);
        int fd = open(m->path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0) {
            tc_fail("cannot create %s: %s", m->path, strerror(errno));
        } else {
            for (size_t k = m->n; k-- > 0;) {
                const tc_extent_t *e = &m->ext[k];
                if (e->owner < 0)
                    continue;
                uint8_t *buf = xmalloc(e->len);
                pattern_fill(buf, e->len, e->offset, m->seed);
                for (uint64_t done = 0; done < e->len;) {
                    ssize_t w = pwrite(fd, buf + done, e->len - done, (off_t)(e->offset + done));
                    if (w <= 0) {
                        tc_fail("pwrite %s: %s", m->path, strerror(errno));
                        break;
                    }
                    done += (uint64_t)w;
                }
                free(buf);
            }
            if (ftruncate(fd, (off_t)m->size) != 0)
                tc_fail("ftruncate %s: %s", m->path, strerror(errno));
            close(fd);
        }
    }
    MPI_Barrier(comm);
}

/* The file on disk is the model (collective over comm). */
int disk_matches(MPI_Comm comm, const model_t *m)
{
    tc_extent_t *ext = xmalloc(m->n * sizeof *ext);
    for (size_t i = 0; i < m->n; i++) {
        ext[i] = m->ext[i];
        if (ext[i].owner >= 0)
            ext[i].owner = 0;
    }
    int bad = tc_verify_extents(comm, m->path, m->size, m->seed, ext, m->n);
    free(ext);
    return bad == 0;
}

int64_t stat_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* ---- options ------------------------------------------------------------ */

void opts_copy(opts_t *dst, const opts_t *src)
{
    *dst = *src;
    if (src->o.writer_list == src->list)
        dst->o.writer_list = dst->list;
}

void opts_fixed(opts_t *p, uint64_t write_size, uint64_t stripe, int writers,
                fwdio_layout_t layout)
{
    memset(p, 0, sizeof *p);
    fwdio_options_init(&p->o);
    p->o.write_size = write_size;
    p->o.stripe_size = stripe;
    p->o.writers = writers;
    p->o.layout = layout;
}

/* Options drawn from `r` (the same on ranks that seed it alike): 4..64 KiB
 * units, stripes of 1..4 units, any layout, a writer count, the default, or
 * a list of writer ranks. */
void opts_random(opts_t *p, tc_rng_t *r, int nranks)
{
    static const uint64_t units[] = {4096, 8192, 16384, 32768, 65536};
    memset(p, 0, sizeof *p);
    fwdio_options_init(&p->o);
    p->o.write_size = units[tc_rng_below(r, 5)];
    p->o.stripe_size = p->o.write_size * (1 + tc_rng_below(r, 4));
    p->o.layout = (fwdio_layout_t)tc_rng_below(r, 3);
    if (p->o.layout == FWDIO_LAYOUT_TARGETS)
        p->o.targets = 1 + (int)tc_rng_below(r, (uint64_t)nranks + 2);
    switch (tc_rng_below(r, 4)) {
    case 0: { /* a list of distinct ranks, in a random order */
        int all[64];
        int n = nranks < 64 ? nranks : 64;
        for (int i = 0; i < n; i++)
            all[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)tc_rng_below(r, (uint64_t)i + 1), t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        int k = 1 + (int)tc_rng_below(r, (uint64_t)n);
        memcpy(p->list, all, (size_t)k * sizeof *all);
        p->o.writer_list = p->list;
        p->o.writer_list_len = k;
        break;
    }
    case 1:
        p->o.writers = 0; /* the default count */
        break;
    default:
        p->o.writers = 1 + (int)tc_rng_below(r, (uint64_t)nranks);
    }
}

const char *describe(const opts_t *p, char *out, size_t n)
{
    static const char *const layouts[] = {"block", "cyclic", "targets"};
    const fwdio_options_t *o = &p->o;
    int k = snprintf(out, n, "write_size %" PRIu64 ", stripe %" PRIu64 ", %s", o->write_size,
                     o->stripe_size, layouts[o->layout % 3]);
    if (o->layout == FWDIO_LAYOUT_TARGETS && k > 0 && (size_t)k < n)
        k += snprintf(out + k, n - (size_t)k, " (%d targets)", o->targets);
    if (o->writer_list_len > 0) {
        if (k > 0 && (size_t)k < n)
            k += snprintf(out + k, n - (size_t)k, ", writer list");
        for (int i = 0; i < o->writer_list_len && k > 0 && (size_t)k < n; i++)
            k += snprintf(out + k, n - (size_t)k, "%s%d", i ? "," : " ", o->writer_list[i]);
    } else if (k > 0 && (size_t)k < n) {
        snprintf(out + k, n - (size_t)k, ", writers %d%s", o->writers,
                 o->writers ? "" : " (default)");
    }
    return out;
}

/* ---- writing with fwdio ------------------------------------------------- */

/* Open `m->path` for writing, write this rank's extents, close; not waited for. */
fwdio_file_t *write_fwdio_start(group_t *g, const model_t *m, const opts_t *p,
                                tc_rng_t *mine, tc_cbstate_t *cb)
{
    tc_cb_init(cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(cb);
    fwdio_file_t *f = NULL;
    tc_phase("fwdio_open %s for writing", m->path);
    int rc = fwdio_open(g->rt, m->path, m->size, &p->o, &cbs, &f);
    TC_EXPECT(rc, FWDIO_OK, "fwdio_open (write)");
    if (rc != FWDIO_OK || !f) {
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    tc_phase("fwdio_write %s", m->path);
    for (size_t i = 0; i < m->n; i++) {
        if (m->ext[i].owner != g->rank)
            continue;
        size_t piece = tc_rng_below(mine, 3) == 0 ? 0 : 1 + (size_t)tc_rng_below(mine, 20000);
        int w = tc_write_pattern(f, m->ext[i].offset, m->ext[i].len, m->seed, piece);
        TC_EXPECT(w, FWDIO_OK, "fwdio_write");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close (write)");
    return f;
}

void write_fwdio_end(group_t *g, fwdio_file_t *f, tc_cbstate_t *cb, const char *what)
{
    tc_phase("fwdio_wait %s", what);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, what);
    tc_cb_check(g->comm, cb, what, FWDIO_OK, FWDIO_OK, g_mode, f);
    fwdio_file_free(f);
}

void write_fwdio(group_t *g, const model_t *m, const opts_t *p, tc_rng_t *mine)
{
    tc_cbstate_t cb;
    fwdio_file_t *f = write_fwdio_start(g, m, p, mine, &cb);
    write_fwdio_end(g, f, &cb, "the write");
}
