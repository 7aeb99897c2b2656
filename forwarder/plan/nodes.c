/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node's description and the topology made of them (nodes.h): its ranks
 * as runs and, on a node whose ranks are all placed, its writer candidates
 * in the order spread placement picks them: the free rank whose domains hold the fewest writers
 * so far, comparing the finer of NUMA node and package first (the finer is
 * the level with more distinct domains among the node's ranks), then the
 * coarser, then the core, then the rank. Comparing the finer level first is
 * what keeps both guarantees when one level nests in the other: no NUMA node
 * gets a second writer while an unused one has ranks, and likewise for
 * packages (an unused package has only unused NUMA nodes). Each pick depends
 * only on the picks before it, so the first k of this order are the node's
 * writers for any k.
 */
#include "plan/nodes.h"

#include <stdlib.h>
#include <string.h>

/** Per-domain writer counts of one node, indexed by package/NUMA/core. */
typedef struct domain_counts {
    int *package, *numa, *core;
} domain_counts_t;

/** Writers already in p's core; an unknown core counts as a core of its own. */
static int core_load(const domain_counts_t *c, const fwdioi_rank_place_t *p)
{
    return p->core >= 0 ? c->core[p->core] : 0;
}

/** Is a a better next writer than b (see the file's comment)? Ties keep b,
 *  the lower rank (candidates come in rank order). */
static int better(const domain_counts_t *c, const fwdioi_rank_place_t *a,
                  const fwdioi_rank_place_t *b, int numa_first)
{
    int an = c->numa[a->numa], bn = c->numa[b->numa];
    int ap = c->package[a->package], bp = c->package[b->package];
    int key_a[3] = {numa_first ? an : ap, numa_first ? ap : an, core_load(c, a)};
    int key_b[3] = {numa_first ? bn : bp, numa_first ? bp : bn, core_load(c, b)};
    for (int i = 0; i < 3; i++)
        if (key_a[i] != key_b[i])
            return key_a[i] < key_b[i];
    return 0;
}

/** Distinct values of one level (0 package, 1 NUMA) among the n places;
 *  `seen` has room for every index of it. */
static int distinct(const fwdioi_rank_place_t *places, int n, int numa, unsigned char *seen,
                    int seen_len)
{
    memset(seen, 0, (size_t)seen_len);
    int d = 0;
    for (int i = 0; i < n; i++) {
        int v = numa ? places[i].numa : places[i].package;
        d += !seen[v];
        seen[v] = 1;
    }
    return d;
}

/** The first k picks of the node's n placed ranks into cand[0 .. k). */
static int pick_candidates(const fwdioi_rank_place_t *places, const int *ranks, int n, int k,
                           fwdioi_candidate_t *cand)
{
    int npk = 0, nnuma = 0, ncore = 0;
    for (int i = 0; i < n; i++) {
        npk = places[i].package >= npk ? places[i].package + 1 : npk;
        nnuma = places[i].numa >= nnuma ? places[i].numa + 1 : nnuma;
        ncore = places[i].core >= ncore ? places[i].core + 1 : ncore;
    }
    domain_counts_t c = {calloc((size_t)npk + 1, sizeof(int)), calloc((size_t)nnuma + 1, sizeof(int)),
                         calloc((size_t)ncore + 1, sizeof(int))};
    int seen_len = npk > nnuma ? npk : nnuma;
    unsigned char *seen = malloc((size_t)seen_len + 1);
    unsigned char *taken = calloc((size_t)n, 1);
    int rc = -1;
    if (!c.package || !c.numa || !c.core || !seen || !taken)
        goto out;
    int numa_first = distinct(places, n, 1, seen, seen_len) >= distinct(places, n, 0, seen, seen_len);
    for (int w = 0; w < k; w++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && (best < 0 || better(&c, &places[i], &places[best], numa_first)))
                best = i;
        const fwdioi_rank_place_t *p = &places[best];
        taken[best] = 1;
        c.package[p->package]++;
        c.numa[p->numa]++;
        if (p->core >= 0)
            c.core[p->core]++;
        cand[w] = (fwdioi_candidate_t){ranks[best], p->package, p->numa, p->core};
    }
    rc = 0;
out:
    free(c.package);
    free(c.numa);
    free(c.core);
    free(seen);
    free(taken);
    return rc;
}

int fwdioi_node_record(const fwdioi_rank_place_t *places, const int *ranks, int n, int **rec,
                       size_t *len)
{
    *rec = NULL;
    *len = 0;
    int nruns = 1, placed = 1;
    for (int i = 0; i < n; i++) {
        nruns += i > 0 && ranks[i] != ranks[i - 1] + 1;
        placed &= places[i].package >= 0 && places[i].numa >= 0;
    }
    int ncand = placed ? (n < FWDIOI_TOPOLOGY_CANDIDATES ? n : FWDIOI_TOPOLOGY_CANDIDATES) : 0;
    size_t ints = FWDIOI_NODE_RECORD_INTS(nruns, ncand);
    int *r = malloc(ints * sizeof *r);
    fwdioi_candidate_t *cand = malloc((size_t)(ncand ? ncand : 1) * sizeof *cand);
    if (!r || !cand || (ncand && pick_candidates(places, ranks, n, ncand, cand) != 0)) {
        free(r);
        free(cand);
        return -1;
    }
    int *p = r;
    *p++ = n;
    *p++ = places[0].cpus;
    *p++ = placed;
    *p++ = nruns;
    *p++ = ncand;
    for (int i = 0; i < n; i++) {
        if (i == 0 || ranks[i] != ranks[i - 1] + 1) {
            *p++ = ranks[i];
            *p++ = 1;
        } else {
            p[-1]++;
        }
    }
    for (int i = 0; i < ncand; i++) {
        *p++ = cand[i].rank;
        *p++ = cand[i].package;
        *p++ = cand[i].numa;
        *p++ = cand[i].core;
    }
    free(cand);
    *rec = r;
    *len = ints;
    return 0;
}

/** A run's first rank and index, to sort runs by rank. */
typedef struct run_key {
    int first, index;
} run_key_t;

static int by_first(const void *pa, const void *pb)
{
    const run_key_t *a = pa, *b = pb;
    return (a->first > b->first) - (a->first < b->first);
}

/** Index the runs by first rank; 0, or -1 (out of memory, or runs that do not
 *  cover ranks 0 .. nranks - 1 exactly once). */
static int index_runs(fwdioi_topology_t *t)
{
    run_key_t *k = malloc((size_t)t->nruns * sizeof *k);
    if (!k)
        return -1;
    for (int i = 0; i < t->nruns; i++)
        k[i] = (run_key_t){t->runs[i].first, i};
    qsort(k, (size_t)t->nruns, sizeof *k, by_first);
    long next = 0; /* the first rank not covered yet */
    int rc = 0;
    for (int i = 0; i < t->nruns; i++) {
        const fwdioi_rank_run_t *r = &t->runs[k[i].index];
        if (r->first != next || r->count < 1)
            rc = -1; /* a gap or an overlap */
        next = (long)r->first + r->count;
        t->runs_by_rank[i] = k[i].index;
    }
    free(k);
    return rc == 0 && next == t->nranks ? 0 : -1;
}

int fwdioi_topology_decode(const int *recs, size_t len, int nnodes, int nranks,
                           fwdioi_topology_t *out)
{
    memset(out, 0, sizeof *out);
    if (nnodes < 1 || nranks < 1)
        return -1;
    /* first pass: sizes, each record within `len` */
    size_t at = 0;
    long nruns = 0, ncands = 0;
    for (int j = 0; j < nnodes; j++) {
        if (len - at < 5 || at > len)
            return -1;
        const int *r = recs + at;
        if (r[0] < 1 || r[3] < 1 || r[4] < 0 || r[4] > r[0] || r[3] > r[0])
            return -1;
        size_t ints = FWDIOI_NODE_RECORD_INTS(r[3], r[4]);
        if (ints > len - at)
            return -1;
        nruns += r[3];
        ncands += r[4];
        at += ints;
    }
    if (at != len || nruns > nranks)
        return -1;
    out->nranks = nranks;
    out->nnodes = nnodes;
    out->nruns = (int)nruns;
    out->ncands = (int)ncands;
    out->nodes = calloc((size_t)nnodes, sizeof *out->nodes);
    out->runs = malloc((size_t)nruns * sizeof *out->runs);
    out->runs_by_rank = malloc((size_t)nruns * sizeof *out->runs_by_rank);
    out->cands = malloc((size_t)(ncands ? ncands : 1) * sizeof *out->cands);
    if (!out->nodes || !out->runs || !out->runs_by_rank || !out->cands) {
        fwdioi_topology_free(out);
        return -1;
    }
    at = 0;
    int run = 0, cand = 0;
    long ranks = 0;
    for (int j = 0; j < nnodes; j++) {
        const int *r = recs + at;
        fwdioi_node_info_t *n = &out->nodes[j];
        *n = (fwdioi_node_info_t){.nranks = r[0], .cpus = r[1], .placed = r[2] != 0,
                                  .first_run = run, .nruns = r[3], .first_cand = cand,
                                  .ncand = r[4]};
        long in_runs = 0;
        const int *p = r + 5;
        for (int i = 0; i < n->nruns; i++, p += 2) {
            out->runs[run++] = (fwdioi_rank_run_t){p[0], p[1], j};
            in_runs += p[1];
            if (p[0] < 0 || p[1] < 1 || (long)p[0] + p[1] > nranks ||
                (i > 0 && p[0] <= p[-2] + p[-1]))
                goto bad; /* a node's runs come in rank order, apart */
        }
        for (int i = 0; i < n->ncand; i++, p += 4)
            out->cands[cand++] = (fwdioi_candidate_t){p[0], p[1], p[2], p[3]};
        if (in_runs != n->nranks)
            goto bad;
        ranks += in_runs;
        at += FWDIOI_NODE_RECORD_INTS(r[3], r[4]);
    }
    if (ranks != nranks || index_runs(out) != 0)
        goto bad;
    for (int c = 0; c < out->ncands; c++) /* a candidate is a rank of its node */
        if (out->cands[c].rank < 0 || out->cands[c].rank >= nranks)
            goto bad;
    for (int j = 0; j < nnodes; j++)
        for (int c = 0; c < out->nodes[j].ncand; c++)
            if (fwdioi_topology_node_of(out, out->cands[out->nodes[j].first_cand + c].rank) != j)
                goto bad;
    return 0;
bad:
    fwdioi_topology_free(out);
    return -1;
}

/** Group ranks by node (counting sort, rank order within a node). */
static int group_by_node(const fwdioi_places_t *pl, int *start, int *order)
{
    for (int r = 0; r < pl->nranks; r++) {
        int node = pl->ranks[r].node;
        if (node < 0 || node >= pl->nnodes)
            return -1;
        start[node + 1]++;
    }
    for (int j = 0; j < pl->nnodes; j++) {
        if (start[j + 1] == 0)
            return -1; /* a node without ranks */
        start[j + 1] += start[j];
    }
    int *fill = malloc((size_t)pl->nnodes * sizeof *fill);
    if (!fill)
        return -1;
    memcpy(fill, start, (size_t)pl->nnodes * sizeof *fill);
    for (int r = 0; r < pl->nranks; r++)
        order[fill[pl->ranks[r].node]++] = r;
    free(fill);
    return 0;
}

int fwdioi_topology_from_places(const fwdioi_places_t *pl, fwdioi_topology_t *out)
{
    memset(out, 0, sizeof *out);
    if (!pl || pl->nranks < 1 || pl->nnodes < 1)
        return -1;
    int *start = calloc((size_t)pl->nnodes + 1, sizeof *start);
    int *order = malloc((size_t)pl->nranks * sizeof *order);
    fwdioi_rank_place_t *local = malloc((size_t)pl->nranks * sizeof *local);
    int *all = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    if (!start || !order || !local || group_by_node(pl, start, order) != 0)
        goto out;
    for (int j = 0; j < pl->nnodes; j++) {
        int n = start[j + 1] - start[j];
        for (int i = 0; i < n; i++)
            local[i] = pl->ranks[order[start[j] + i]];
        int *rec;
        size_t ints;
        if (fwdioi_node_record(local, order + start[j], n, &rec, &ints) != 0)
            goto out;
        if (len + ints > cap) {
            size_t want = 2 * (len + ints);
            int *grown = realloc(all, want * sizeof *grown);
            if (!grown) {
                free(rec);
                goto out;
            }
            all = grown;
            cap = want;
        }
        memcpy(all + len, rec, ints * sizeof *rec);
        len += ints;
        free(rec);
    }
    rc = fwdioi_topology_decode(all, len, pl->nnodes, pl->nranks, out);
out:
    free(start);
    free(order);
    free(local);
    free(all);
    return rc;
}

void fwdioi_places_free(fwdioi_places_t *p)
{
    if (!p)
        return;
    free(p->ranks);
    memset(p, 0, sizeof *p);
}

int fwdioi_topology_node_of(const fwdioi_topology_t *t, int rank)
{
    if (!t || rank < 0 || rank >= t->nranks)
        return -1;
    int lo = 0, hi = t->nruns - 1; /* the last run starting at or before rank */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (t->runs[t->runs_by_rank[mid]].first <= rank)
            lo = mid;
        else
            hi = mid - 1;
    }
    return t->runs[t->runs_by_rank[lo]].node;
}

int fwdioi_topology_node_ranks(const fwdioi_topology_t *t, int rank)
{
    int j = fwdioi_topology_node_of(t, rank);
    return j < 0 ? 0 : t->nodes[j].nranks;
}

int fwdioi_topology_node_cpus(const fwdioi_topology_t *t, int rank)
{
    int j = fwdioi_topology_node_of(t, rank);
    return j < 0 ? -1 : t->nodes[j].cpus;
}

int fwdioi_topology_member(const fwdioi_topology_t *t, int node, int i)
{
    const fwdioi_node_info_t *n = &t->nodes[node];
    for (int k = 0; k < n->nruns; k++) {
        const fwdioi_rank_run_t *r = &t->runs[n->first_run + k];
        if (i < r->count)
            return r->first + i;
        i -= r->count;
    }
    return -1;
}

fwdioi_rank_place_t fwdioi_topology_place(const fwdioi_topology_t *t, int rank)
{
    int j = fwdioi_topology_node_of(t, rank);
    fwdioi_rank_place_t p = {.node = j, .package = -1, .numa = -1, .core = -1, .cpus = -1};
    if (j < 0)
        return p;
    const fwdioi_node_info_t *n = &t->nodes[j];
    p.cpus = n->cpus;
    for (int c = 0; c < n->ncand; c++) {
        const fwdioi_candidate_t *k = &t->cands[n->first_cand + c];
        if (k->rank == rank) {
            p.package = k->package;
            p.numa = k->numa;
            p.core = k->core;
        }
    }
    return p;
}

size_t fwdioi_topology_bytes(const fwdioi_topology_t *t)
{
    return (size_t)t->nnodes * sizeof *t->nodes + (size_t)t->nruns * sizeof *t->runs +
           (size_t)t->nruns * sizeof *t->runs_by_rank + (size_t)t->ncands * sizeof *t->cands;
}

void fwdioi_topology_free(fwdioi_topology_t *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->runs);
    free(t->runs_by_rank);
    free(t->cands);
    memset(t, 0, sizeof *t);
}
