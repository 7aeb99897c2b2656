/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer placement: a pure function of the topology description and the
 * resolved options, computed identically on every rank.
 *
 * SPREAD works in two steps. First the writers are shared out over the nodes
 * by water-filling: every node gets the same count, except that a node never
 * gets more writers than it has ranks (or than writers_per_node), and what it
 * cannot take goes to the others; the last few go to the nodes with the most
 * ranks. Then each node picks its writers greedily: the free rank whose
 * domains hold the fewest writers so far, comparing the finer of NUMA node and
 * package first, then the coarser, then the core, then the rank. Comparing the
 * finer level first is what keeps both guarantees when one level nests in the
 * other: no NUMA node gets a second writer while an unused one has ranks, and
 * likewise for packages (an unused package has only unused NUMA nodes).
 */
#include "plan/placement.h"

#include <stdlib.h>
#include <string.h>

/** The ranks of each node, in rank order: node j owns
 *  rank[start[j] .. start[j + 1]). */
typedef struct node_ranks {
    int *start; /* [nnodes + 1] */
    int *rank;  /* [nranks] */
} node_ranks_t;

/** Per-domain writer counts of one node, indexed by package/NUMA/core. */
typedef struct domain_counts {
    int *package, *numa, *core;
    int npackage, nnuma, ncore;
} domain_counts_t;

/** STRIDE: CkIO's basePE + i * skipPEs, while below nranks. */
static int place_ranks_stride(const fwdioi_topology_t *topo, const fwdio_options_t *opts,
                              int *ranks, int *nwriters)
{
    int first = opts->first_writer, room = topo->nranks - opts->first_writer;
    if (first < 0 || room < 1 || opts->writer_stride < 0)
        return FWDIO_EINVAL;
    int stride = opts->writer_stride;
    if (stride == 0) /* unresolved: the default spacing of fwdioi_options_resolve */
        stride = room / opts->writers > 1 ? room / opts->writers : 1;
    int n = 0;
    for (long r = first; r < topo->nranks && n < opts->writers; r += stride)
        ranks[n++] = (int)r;
    *nwriters = n;
    return FWDIO_OK;
}

/* An entry of a list and where it stands, sorted by value, then place. */
typedef struct list_entry {
    int value, index;
} list_entry_t;

static int by_value_then_index(const void *pa, const void *pb)
{
    const list_entry_t *a = pa, *b = pb;
    if (a->value != b->value)
        return (a->value > b->value) - (a->value < b->value);
    return (a->index > b->index) - (a->index < b->index);
}

int fwdioi_list_first_repeat(const int *list, int n, int *at)
{
    *at = -1;
    if (n < 2)
        return 0;
    list_entry_t *e = malloc((size_t)n * sizeof *e);
    if (!e)
        return -1;
    for (int i = 0; i < n; i++)
        e[i] = (list_entry_t){list[i], i};
    qsort(e, (size_t)n, sizeof *e, by_value_then_index);
    /* within a run of equal values the second is the first repeat of it */
    for (int i = 1; i < n; i++)
        if (e[i].value == e[i - 1].value && (i < 2 || e[i - 2].value != e[i].value) &&
            (*at < 0 || e[i].index < *at))
            *at = e[i].index;
    free(e);
    return 0;
}

/** LIST: the given ranks, each in range and none twice. */
static int place_ranks_list(const fwdioi_topology_t *topo, const fwdio_options_t *opts,
                            int *ranks, int *nwriters)
{
    int n = opts->writer_list_len;
    if (!opts->writer_list || n < 1 || n > opts->writers)
        return FWDIO_EINVAL;
    for (int i = 0; i < n; i++) {
        int r = opts->writer_list[i];
        if (r < 0 || r >= topo->nranks)
            return FWDIO_EINVAL;
        ranks[i] = r;
    }
    int repeat;
    if (fwdioi_list_first_repeat(ranks, n, &repeat) != 0)
        return FWDIO_ENOMEM;
    if (repeat >= 0)
        return FWDIO_EINVAL;
    *nwriters = n;
    return FWDIO_OK;
}

/** Group the ranks by node (counting sort, stable in rank order). */
static int group_by_node(const fwdioi_topology_t *topo, node_ranks_t *g)
{
    g->start = calloc((size_t)topo->nnodes + 1, sizeof *g->start);
    g->rank = malloc((size_t)topo->nranks * sizeof *g->rank);
    if (!g->start || !g->rank)
        return FWDIO_ENOMEM;
    for (int r = 0; r < topo->nranks; r++) {
        int node = topo->ranks[r].node;
        if (node < 0 || node >= topo->nnodes)
            return FWDIO_EINVAL;
        g->start[node + 1]++;
    }
    for (int j = 0; j < topo->nnodes; j++)
        g->start[j + 1] += g->start[j];
    int *fill = malloc((size_t)topo->nnodes * sizeof *fill);
    if (!fill)
        return FWDIO_ENOMEM;
    memcpy(fill, g->start, (size_t)topo->nnodes * sizeof *fill);
    for (int r = 0; r < topo->nranks; r++)
        g->rank[fill[topo->ranks[r].node]++] = r;
    free(fill);
    return FWDIO_OK;
}

static void free_groups(node_ranks_t *g)
{
    free(g->start);
    free(g->rank);
}

/** Ranks on node j. */
static int node_size(const node_ranks_t *g, int j)
{
    return g->start[j + 1] - g->start[j];
}

/** A node waiting for an extra writer: its size and index. */
typedef struct extra_candidate {
    int size, node;
} extra_candidate_t;

/** Most ranks first, ties to the lower node. */
static int compare_candidates(const void *pa, const void *pb)
{
    const extra_candidate_t *a = pa, *b = pb;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return (a->node > b->node) - (a->node < b->node);
}

/**
 * Give `extra` more writers, one each, to the nodes that still have room
 * (count < cap), most ranks first, ties to the lower node. extra is below the
 * number of such nodes. Returns FWDIO_OK or FWDIO_ENOMEM.
 */
static int give_extras(const node_ranks_t *g, int nnodes, const int *cap, int *count, int extra)
{
    extra_candidate_t *c = malloc((size_t)nnodes * sizeof *c);
    if (!c)
        return FWDIO_ENOMEM;
    int n = 0;
    for (int j = 0; j < nnodes; j++)
        if (count[j] < cap[j])
            c[n++] = (extra_candidate_t){.size = node_size(g, j), .node = j};
    qsort(c, (size_t)n, sizeof *c, compare_candidates);
    for (int i = 0; i < extra; i++)
        count[c[i].node]++;
    free(c);
    return FWDIO_OK;
}

/**
 * Share `total` writers over the nodes, node j taking at most cap[j]: rounds
 * of an equal share for every node with room, then single extras. total must
 * not exceed the sum of the caps. Returns FWDIO_OK or FWDIO_ENOMEM.
 */
static int share_writers(const node_ranks_t *g, int nnodes, const int *cap, int total, int *count)
{
    memset(count, 0, (size_t)nnodes * sizeof *count);
    while (total > 0) {
        int open = 0;
        for (int j = 0; j < nnodes; j++)
            open += count[j] < cap[j];
        int share = total / open;
        if (share == 0)
            return give_extras(g, nnodes, cap, count, total);
        for (int j = 0; j < nnodes; j++) {
            int add = cap[j] - count[j] < share ? cap[j] - count[j] : share;
            count[j] += add;
            total -= add;
        }
    }
    return FWDIO_OK;
}

/** Is every rank of node j placed (package and NUMA node known)? */
static int node_is_placed(const fwdioi_topology_t *topo, const node_ranks_t *g, int j)
{
    for (int i = g->start[j]; i < g->start[j + 1]; i++) {
        const fwdioi_rank_place_t *p = &topo->ranks[g->rank[i]];
        if (p->package < 0 || p->numa < 0)
            return 0;
    }
    return 1;
}

/** The stride rule: k writers at local positions floor(i * n / k). */
static void pick_by_stride(const int *local, int n, int k, int *out)
{
    for (int i = 0; i < k; i++)
        out[i] = local[(long)i * n / k];
}

/** Number of distinct packages (numa 0) or NUMA nodes (numa 1) of the node's
 *  ranks; `seen` has room for every index of that level. */
static int distinct(const fwdioi_topology_t *topo, const int *local, int n, int numa,
                    unsigned char *seen, int seen_len)
{
    memset(seen, 0, (size_t)seen_len);
    int d = 0;
    for (int i = 0; i < n; i++) {
        const fwdioi_rank_place_t *p = &topo->ranks[local[i]];
        int v = numa ? p->numa : p->package;
        d += !seen[v];
        seen[v] = 1;
    }
    return d;
}

/** Writers already in rank r's core; an unknown core counts as a core of its own. */
static int core_load(const domain_counts_t *c, const fwdioi_rank_place_t *p)
{
    return p->core >= 0 ? c->core[p->core] : 0;
}

/**
 * Is candidate a better next writer than best? Fewer writers in its finer
 * domain (NUMA node or package, see numa_first), then in the coarser one,
 * then on its core; ties to the lower rank (the candidates come in rank
 * order, so a tie keeps best).
 */
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

/** Pick k of the node's n ranks (local, in rank order) by domain counts. */
static void pick_by_domains(const fwdioi_topology_t *topo, const int *local, int n, int k,
                            domain_counts_t *c, unsigned char *taken, int numa_first, int *out)
{
    if (n <= 0 || k <= 0)
        return;
    memset(c->package, 0, (size_t)c->npackage * sizeof *c->package);
    memset(c->numa, 0, (size_t)c->nnuma * sizeof *c->numa);
    memset(c->core, 0, (size_t)c->ncore * sizeof *c->core);
    memset(taken, 0, (size_t)n);
    for (int w = 0; w < k; w++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && (best < 0 || better(c, &topo->ranks[local[i]],
                                                 &topo->ranks[local[best]], numa_first)))
                best = i;
        const fwdioi_rank_place_t *p = &topo->ranks[local[best]];
        taken[best] = 1;
        c->package[p->package]++;
        c->numa[p->numa]++;
        if (p->core >= 0)
            c->core[p->core]++;
    }
    for (int i = 0, w = 0; i < n; i++) /* writer order: rank order */
        if (taken[i])
            out[w++] = local[i];
}

/** Allocate counts for the largest package/NUMA/core index in the topology,
 *  and `seen` scratch of *seen_len bytes for the largest of them. */
static int alloc_counts(const fwdioi_topology_t *topo, domain_counts_t *c, unsigned char **seen,
                        int *seen_len)
{
    memset(c, 0, sizeof *c);
    for (int r = 0; r < topo->nranks; r++) {
        const fwdioi_rank_place_t *p = &topo->ranks[r];
        if (p->package >= c->npackage)
            c->npackage = p->package + 1;
        if (p->numa >= c->nnuma)
            c->nnuma = p->numa + 1;
        if (p->core >= c->ncore)
            c->ncore = p->core + 1;
    }
    c->package = calloc((size_t)c->npackage + 1, sizeof *c->package);
    c->numa = calloc((size_t)c->nnuma + 1, sizeof *c->numa);
    c->core = calloc((size_t)c->ncore + 1, sizeof *c->core);
    *seen_len = c->npackage > c->nnuma ? c->npackage : c->nnuma;
    *seen = malloc((size_t)*seen_len + 1);
    return c->package && c->numa && c->core && *seen ? FWDIO_OK : FWDIO_ENOMEM;
}

static void free_counts(domain_counts_t *c, unsigned char *seen)
{
    free(c->package);
    free(c->numa);
    free(c->core);
    free(seen);
}

/** Writers per node for SPREAD into count[nnodes] and their total; FWDIO_OK or
 *  FWDIO_ENOMEM. */
static int spread_counts(const fwdioi_topology_t *topo, const fwdio_options_t *opts,
                         const node_ranks_t *g, int *cap, int *count, int *total)
{
    long room = 0;
    for (int j = 0; j < topo->nnodes; j++) {
        cap[j] = node_size(g, j);
        if (opts->writers_per_node > 0 && opts->writers_per_node < cap[j])
            cap[j] = opts->writers_per_node;
        room += cap[j];
    }
    *total = opts->writers < room ? opts->writers : (int)room;
    return share_writers(g, topo->nnodes, cap, *total, count);
}

/** Scratch of SPREAD. */
typedef struct spread_work {
    node_ranks_t groups;
    domain_counts_t counts;
    unsigned char *seen;
    int seen_len;
    int *cap, *count;
    unsigned char *taken;
} spread_work_t;

static int spread_alloc(const fwdioi_topology_t *topo, spread_work_t *s)
{
    memset(s, 0, sizeof *s);
    int rc = group_by_node(topo, &s->groups);
    if (rc != FWDIO_OK)
        return rc;
    s->cap = malloc((size_t)topo->nnodes * sizeof *s->cap);
    s->count = malloc((size_t)topo->nnodes * sizeof *s->count);
    s->taken = malloc((size_t)topo->nranks);
    if (!s->cap || !s->count || !s->taken)
        return FWDIO_ENOMEM;
    return alloc_counts(topo, &s->counts, &s->seen, &s->seen_len);
}

static void spread_free(spread_work_t *s)
{
    free_groups(&s->groups);
    free_counts(&s->counts, s->seen);
    free(s->cap);
    free(s->count);
    free(s->taken);
}

/** Pick node j's k writers into out[0 .. k), in rank order. */
static void pick_on_node(const fwdioi_topology_t *topo, spread_work_t *s, int j, int k, int *out)
{
    const int *local = s->groups.rank + s->groups.start[j];
    int n = node_size(&s->groups, j);
    if (!node_is_placed(topo, &s->groups, j)) {
        pick_by_stride(local, n, k, out);
        return;
    }
    int npackages = distinct(topo, local, n, 0, s->seen, s->seen_len);
    int nnuma = distinct(topo, local, n, 1, s->seen, s->seen_len);
    pick_by_domains(topo, local, n, k, &s->counts, s->taken, nnuma >= npackages, out);
}

/** SPREAD: writers per node, then each node's picks, node by node. */
static int place_ranks_spread(const fwdioi_topology_t *topo, const fwdio_options_t *opts,
                              int *ranks, int *nwriters)
{
    spread_work_t s;
    int total = 0;
    int rc = spread_alloc(topo, &s);
    if (rc == FWDIO_OK)
        rc = spread_counts(topo, opts, &s.groups, s.cap, s.count, &total);
    if (rc == FWDIO_OK) {
        int w = 0;
        for (int j = 0; j < topo->nnodes; j++) {
            pick_on_node(topo, &s, j, s.count[j], ranks + w);
            w += s.count[j];
        }
        *nwriters = total;
    }
    spread_free(&s);
    return rc;
}

int fwdioi_place_writers(const fwdioi_topology_t *topo, const fwdio_options_t *opts, int *ranks,
                         int *nwriters)
{
    if (!topo || !opts || !ranks || !nwriters || topo->nranks < 1 || topo->nnodes < 1 ||
        opts->writers < 1)
        return FWDIO_EINVAL;
    switch (opts->placement) {
    case FWDIO_PLACEMENT_SPREAD:
        return place_ranks_spread(topo, opts, ranks, nwriters);
    case FWDIO_PLACEMENT_STRIDE:
        return place_ranks_stride(topo, opts, ranks, nwriters);
    case FWDIO_PLACEMENT_LIST:
        return place_ranks_list(topo, opts, ranks, nwriters);
    }
    return FWDIO_EINVAL;
}
