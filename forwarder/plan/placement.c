/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer placement: a pure function of the topology description and the
 * resolved options, computed identically on every rank.
 *
 * SPREAD works in two steps. First the writers are shared out over the nodes
 * by water-filling: every node gets the same count, except that a node never
 * gets more writers than it has ranks (or than writers_per_node), and what it
 * cannot take goes to the others; the last few go to the nodes with the most
 * ranks. Then each node's k writers are the first k of its candidates, which
 * its description keeps in the order of the greedy pick of nodes.c
 * (past the candidates, its other ranks in rank order); a node with a rank
 * of unknown place takes the stride rule instead.
 */
#include "plan/placement.h"

#include <stdlib.h>
#include <string.h>

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

/** Ranks on node j. */
static int node_size(const fwdioi_topology_t *topo, int j)
{
    return topo->nodes[j].nranks;
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
static int give_extras(const fwdioi_topology_t *topo, const int *cap, int *count, int extra)
{
    extra_candidate_t *c = malloc((size_t)topo->nnodes * sizeof *c);
    if (!c)
        return FWDIO_ENOMEM;
    int n = 0;
    for (int j = 0; j < topo->nnodes; j++)
        if (count[j] < cap[j])
            c[n++] = (extra_candidate_t){.size = node_size(topo, j), .node = j};
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
static int share_writers(const fwdioi_topology_t *topo, const int *cap, int total, int *count)
{
    const int nnodes = topo->nnodes;
    memset(count, 0, (size_t)nnodes * sizeof *count);
    while (total > 0) {
        int open = 0;
        for (int j = 0; j < nnodes; j++)
            open += count[j] < cap[j];
        int share = total / open;
        if (share == 0)
            return give_extras(topo, cap, count, total);
        for (int j = 0; j < nnodes; j++) {
            int add = cap[j] - count[j] < share ? cap[j] - count[j] : share;
            count[j] += add;
            total -= add;
        }
    }
    return FWDIO_OK;
}

static int ascending(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

/** Is `rank` among the first n of the node's candidates? */
static int is_candidate(const fwdioi_candidate_t *cand, int n, int rank)
{
    for (int i = 0; i < n; i++)
        if (cand[i].rank == rank)
            return 1;
    return 0;
}

/** Pick node j's k writers into out[0 .. k), in rank order. */
static void pick_on_node(const fwdioi_topology_t *topo, int j, int k, int *out)
{
    const fwdioi_node_info_t *node = &topo->nodes[j];
    const int n = node->nranks;
    if (k <= 0)
        return;
    if (!node->placed) { /* the stride rule: local positions floor(i * n / k) */
        for (int i = 0; i < k; i++)
            out[i] = fwdioi_topology_member(topo, j, (int)((long)i * n / k));
        return;
    }
    const fwdioi_candidate_t *cand = topo->cands + node->first_cand;
    int from_cand = k < node->ncand ? k : node->ncand, w = 0;
    for (; w < from_cand; w++)
        out[w] = cand[w].rank;
    for (int i = 0; i < n && w < k; i++) { /* past the candidates: rank order */
        int r = fwdioi_topology_member(topo, j, i);
        if (!is_candidate(cand, node->ncand, r))
            out[w++] = r;
    }
    qsort(out, (size_t)k, sizeof *out, ascending); /* writer order: rank order */
}

/** SPREAD: writers per node, then each node's picks, node by node. */
static int place_ranks_spread(const fwdioi_topology_t *topo, const fwdio_options_t *opts,
                              int *ranks, int *nwriters)
{
    int *cap = malloc((size_t)topo->nnodes * sizeof *cap);
    int *count = malloc((size_t)topo->nnodes * sizeof *count);
    int rc = cap && count ? FWDIO_OK : FWDIO_ENOMEM;
    long room = 0;
    for (int j = 0; rc == FWDIO_OK && j < topo->nnodes; j++) {
        cap[j] = node_size(topo, j);
        if (opts->writers_per_node > 0 && opts->writers_per_node < cap[j])
            cap[j] = opts->writers_per_node;
        room += cap[j];
    }
    int total = opts->writers < room ? opts->writers : (int)room;
    if (rc == FWDIO_OK)
        rc = share_writers(topo, cap, total, count);
    if (rc == FWDIO_OK) {
        int w = 0;
        for (int j = 0; j < topo->nnodes; j++) {
            pick_on_node(topo, j, count[j], ranks + w);
            w += count[j];
        }
        *nwriters = total;
    }
    free(cap);
    free(count);
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
