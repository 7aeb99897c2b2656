/* SPDX-License-Identifier: BSD-3-Clause */
#include "exchange.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Doubles per atom in a message: id, position, velocity / position only. */
#define MIGRANT_WIDTH 7
#define GHOST_WIDTH 3

/* Tags: one pair per phase and dimension; DOWN travels to the lower neighbour. */
enum { TAG_MIGRATE = 100, TAG_GHOST = 200 };
#define TAG_DOWN(base, d) ((base) + 2 * (d))
#define TAG_UP(base, d) ((base) + 2 * (d) + 1)

enum { LOWER = 0, UPPER = 1 };

void exchange_init(md_exchange_t *ex)
{
    memset(ex, 0, sizeof *ex);
}

void exchange_free(md_exchange_t *ex)
{
    free(ex->send[0]);
    free(ex->send[1]);
    free(ex->recv);
    exchange_init(ex);
}

/*
 * A step that cannot go on (an atom flew across a whole region, memory ran
 * out) ends the job, as MD codes do when they lose atoms: agreeing on it
 * would cost a collective every step. The last committed checkpoint stays
 * valid.
 */
static void fatal(const md_domain_t *dom, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mdlj: rank %d: ", dom->rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ensure(const md_domain_t *dom, double **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    double *p = realloc(*buf, c * sizeof(double));
    if (!p)
        fatal(dom, "out of memory for %zu doubles of halo messages", c);
    *buf = p;
    *cap = c;
}

/* Append one record of `count` doubles to ex->send[side]. */
static void pack(const md_domain_t *dom, md_exchange_t *ex, int side, size_t *used,
                 const double *rec, size_t count)
{
    ensure(dom, &ex->send[side], &ex->send_cap[side], *used + count);
    memcpy(ex->send[side] + *used, rec, count * sizeof(double));
    *used += count;
}

/*
 * Send ex->send[LOWER] (used[LOWER] doubles) down and ex->send[UPPER] up along
 * dimension d, and hand what arrives to `take`: first the message from the
 * upper neighbour (travelling down), then the one from the lower neighbour.
 * The fixed order keeps the receiving side deterministic; the tags keep the
 * two messages apart when both neighbours are the same rank.
 */
static void swap(const md_domain_t *dom, md_exchange_t *ex, int d, int tag_base,
                 const size_t used[2],
                 void (*take)(const md_domain_t *, md_atoms_t *, int, const double *, size_t),
                 md_atoms_t *a)
{
    MPI_Request req[2];
    MPI_Isend(ex->send[LOWER], (int)used[LOWER], MPI_DOUBLE, dom->lower[d], TAG_DOWN(tag_base, d),
              dom->cart, &req[0]);
    MPI_Isend(ex->send[UPPER], (int)used[UPPER], MPI_DOUBLE, dom->upper[d], TAG_UP(tag_base, d),
              dom->cart, &req[1]);
    for (int from = 0; from < 2; from++) {
        int source = from == 0 ? dom->upper[d] : dom->lower[d];
        int tag = from == 0 ? TAG_DOWN(tag_base, d) : TAG_UP(tag_base, d);
        MPI_Status st;
        int count = 0;
        MPI_Probe(source, tag, dom->cart, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        ensure(dom, &ex->recv, &ex->recv_cap, (size_t)count + 1);
        MPI_Recv(ex->recv, count, MPI_DOUBLE, source, tag, dom->cart, MPI_STATUS_IGNORE);
        take(dom, a, d, ex->recv, (size_t)count);
    }
    /* statuses, not MPI_STATUSES_IGNORE: MPICH's is (MPI_Status *)1, which
     * GCC 12 takes for an array of size 0 (-Wstringop-overflow) */
    MPI_Status sent[2];
    MPI_Waitall(2, req, sent);
}

static void take_migrants(const md_domain_t *dom, md_atoms_t *a, int d, const double *buf,
                          size_t count)
{
    for (size_t k = 0; k + MIGRANT_WIDTH <= count; k += MIGRANT_WIDTH) {
        const double *rec = buf + k;
        if (domain_coord_of(dom->box, dom->dims[d], rec[1 + d]) != dom->coords[d])
            fatal(dom, "received atom %.0f outside its region along dimension %d (position %g)",
                  rec[0], d, rec[1 + d]);
        if (atoms_push(a, (int64_t)rec[0], rec + 1, rec + 4))
            fatal(dom, "out of memory for %zu atoms", a->n + 1);
    }
}

static void take_ghosts(const md_domain_t *dom, md_atoms_t *a, int d, const double *buf,
                        size_t count)
{
    (void)d;
    size_t n = count / GHOST_WIDTH;
    if (atoms_reserve_x(a, a->n + a->nghost + n))
        fatal(dom, "out of memory for %zu ghost atoms", a->nghost + n);
    memcpy(a->x + 3 * (a->n + a->nghost), buf, n * GHOST_WIDTH * sizeof(double));
    a->nghost += n;
}

void exchange_migrate(const md_domain_t *dom, md_exchange_t *ex, md_atoms_t *a)
{
    size_t before = 0, arrived = 0;
    for (int d = 0; d < 3; d++) {
        int n_d = dom->dims[d], me = dom->coords[d];
        int below = (me + n_d - 1) % n_d, above = (me + 1) % n_d;
        size_t used[2] = {0, 0};
        size_t keep = 0;
        for (size_t i = 0; i < a->n; i++) {
            double *x = a->x + 3 * i;
            double wrapped = x[d];
            int side = -1;
            if (x[d] < dom->lo[d] || x[d] >= dom->hi[d]) {
                /* Owner by the wrapped position, with the comparisons every
                 * rank makes, so that rounding at the box edge cannot hand an
                 * atom to a rank that does not own it. */
                wrapped = domain_wrap(x[d], dom->box);
                int c = domain_coord_of(dom->box, n_d, wrapped);
                if (c != me && c == below)
                    side = LOWER;
                else if (c != me && c == above)
                    side = UPPER;
                else if (c != me)
                    fatal(dom,
                          "atom %" PRId64 " moved more than one rank region in one step "
                          "(position %g along dimension %d): the simulation is unstable, try a "
                          "smaller --dt",
                          a->id[i], x[d], d);
            }
            if (side < 0) {
                x[d] = wrapped;
                if (keep != i) {
                    a->id[keep] = a->id[i];
                    memcpy(a->x + 3 * keep, x, 3 * sizeof(double));
                    memcpy(a->v + 3 * keep, a->v + 3 * i, 3 * sizeof(double));
                    memcpy(a->f + 3 * keep, a->f + 3 * i, 3 * sizeof(double));
                }
                keep++;
                continue;
            }
            double rec[MIGRANT_WIDTH] = {(double)a->id[i], x[0], x[1], x[2],
                                         a->v[3 * i], a->v[3 * i + 1], a->v[3 * i + 2]};
            rec[1 + d] = wrapped;
            pack(dom, ex, side, &used[side], rec, MIGRANT_WIDTH);
        }
        a->n = keep;
        a->nghost = 0;
        before = a->n;
        swap(dom, ex, d, TAG_MIGRATE, used, take_migrants, a);
        arrived += a->n - before;
    }
    if (arrived && atoms_sort_by_id(a))
        fatal(dom, "out of memory sorting %zu atoms", a->n);
}

void exchange_ghosts(const md_domain_t *dom, md_exchange_t *ex, md_atoms_t *a)
{
    a->nghost = 0;
    for (int d = 0; d < 3; d++) {
        int n_d = dom->dims[d], me = dom->coords[d];
        /* Images crossing the box edge are shifted so they sit next to the
         * receiver's region. */
        double shift_down = me == 0 ? dom->box : 0.0;
        double shift_up = me == n_d - 1 ? -dom->box : 0.0;
        size_t used[2] = {0, 0};
        size_t total = a->n + a->nghost;
        for (size_t i = 0; i < total; i++) {
            const double *x = a->x + 3 * i;
            if (x[d] < dom->lo[d] + dom->cutoff) {
                double rec[GHOST_WIDTH] = {x[0], x[1], x[2]};
                rec[d] += shift_down;
                pack(dom, ex, LOWER, &used[LOWER], rec, GHOST_WIDTH);
            }
            if (x[d] >= dom->hi[d] - dom->cutoff) {
                double rec[GHOST_WIDTH] = {x[0], x[1], x[2]};
                rec[d] += shift_up;
                pack(dom, ex, UPPER, &used[UPPER], rec, GHOST_WIDTH);
            }
        }
        swap(dom, ex, d, TAG_GHOST, used, take_ghosts, a);
    }
}
