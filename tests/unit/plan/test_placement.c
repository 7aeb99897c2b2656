/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer placement over many synthetic topologies and rank layouts (no MPI
 * launch needed): spread, stride and list placements, and the synthetic
 * topology builder they are tested on; the runtime's cache of the last
 * spread placement gives what placing again gives.
 */
#include "plan/placement.h"
#include "plan/placement_cache.h"
#include "plan/topology.h"
#include "plan/nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static int checks;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        checks++;                                                                    \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            failures++;                                                              \
            return;                                                                  \
        }                                                                            \
    } while (0)

/** The case being checked, for failure messages. */
static char where[256];

/** What the checks need to know of one node of a topology, whatever the
 *  writers: computed once per topology (node_facts), not once per check. */
typedef struct node_view {
    int *rank;    /**< the node's ranks, in rank order */
    int n;        /**< how many */
    int known;    /**< every rank's package and NUMA node known */
    int packages; /**< distinct known packages, NUMA nodes and cores */
    int numas;
    int cores;
    int npk;      /**< packages 0..npk-1 hold equal numbers of ranks; -1: they do not */
} node_view_t;

/** fwdioi_place_writers on the topology of `t` (what a runtime keeps). */
static int place_writers(const fwdioi_places_t *t, const fwdio_options_t *o, int *w, int *nw)
{
    fwdioi_topology_t topo;
    if (fwdioi_topology_from_places(t, &topo) != 0)
        return -100; /* no check expects this */
    int rc = fwdioi_place_writers(&topo, o, w, nw);
    fwdioi_topology_free(&topo);
    return rc;
}

/** Place of rank r: which of package (0), numa (1), core (2). */
static int level(const fwdioi_places_t *t, int r, int which)
{
    const fwdioi_rank_place_t *p = &t->ranks[r];
    return which == 0 ? p->package : which == 1 ? p->numa : p->core;
}

/** Number of distinct known values of a level over the given ranks. */
static int count_distinct(const fwdioi_places_t *t, const int *ranks, int n, int which)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        int v = level(t, ranks[i], which), seen = v < 0;
        for (int j = 0; j < i && !seen; j++)
            seen = level(t, ranks[j], which) == v;
        d += !seen;
    }
    return d;
}

static int node_known(const fwdioi_places_t *t, const node_view_t *v)
{
    for (int i = 0; i < v->n; i++)
        if (level(t, v->rank[i], 0) < 0 || level(t, v->rank[i], 1) < 0)
            return 0;
    return 1;
}

/** Writers of a node whose package is p. */
static int in_package(const fwdioi_places_t *t, const int *mine, int k, int p)
{
    int c = 0;
    for (int i = 0; i < k; i++)
        c += t->ranks[mine[i]].package == p;
    return c;
}

/** The packages of a node (0 if none is known) if each holds the same number
 *  of its ranks, else -1. */
static int symmetric_packages(const fwdioi_places_t *t, const node_view_t *v)
{
    int npk = 0, lo = -1;
    for (int i = 0; i < v->n; i++)
        if (t->ranks[v->rank[i]].package + 1 > npk)
            npk = t->ranks[v->rank[i]].package + 1;
    for (int p = 0; p < npk; p++) {
        int size = in_package(t, v->rank, v->n, p);
        if (size == 0 || (lo >= 0 && size != lo))
            return -1; /* asymmetric: no claim */
        lo = size;
    }
    return npk;
}

/** The views of every node of t (free with free_node_facts). */
static node_view_t *node_facts(const fwdioi_places_t *t)
{
    node_view_t *v = calloc((size_t)t->nnodes, sizeof *v);
    for (int j = 0; j < t->nnodes; j++)
        v[j].rank = malloc((size_t)t->nranks * sizeof(int));
    for (int r = 0; r < t->nranks; r++) {
        node_view_t *mine = &v[t->ranks[r].node];
        mine->rank[mine->n++] = r;
    }
    for (int j = 0; j < t->nnodes; j++) {
        v[j].known = node_known(t, &v[j]);
        v[j].packages = count_distinct(t, v[j].rank, v[j].n, 0);
        v[j].numas = count_distinct(t, v[j].rank, v[j].n, 1);
        v[j].cores = count_distinct(t, v[j].rank, v[j].n, 2);
        v[j].npk = symmetric_packages(t, &v[j]);
    }
    return v;
}

static void free_node_facts(const fwdioi_places_t *t, node_view_t *v)
{
    for (int j = 0; j < t->nnodes; j++)
        free(v[j].rank);
    free(v);
}

/** Writers of one node (in the order returned) into mine; returns their count. */
static int writers_on_node(const fwdioi_places_t *t, const int *w, int nw, int node, int *mine)
{
    int k = 0;
    for (int i = 0; i < nw; i++)
        if (t->ranks[w[i]].node == node)
            mine[k++] = w[i];
    return k;
}

/** Spread within one node: domains distinct while possible, or the stride
 *  rule where places are unknown. */
static void check_node_spread(const fwdioi_places_t *t, int node, const node_view_t *v,
                              const int *mine, int k)
{
    int known = v->known, n = v->n;
    int packages = v->packages, numas = v->numas, cores = v->cores;
    int stride_rank[k > 0 ? k : 1];
    for (int i = 0; i < k; i++)
        stride_rank[i] = v->rank[(long)i * n / k];
    for (int i = 1; i < k; i++)
        CHECK(mine[i - 1] < mine[i], "%s: node %d writers not in rank order", where, node);
    if (!known) {
        for (int i = 0; i < k; i++)
            CHECK(mine[i] == stride_rank[i], "%s: node %d writer %d is %d, stride rule says %d",
                  where, node, i, mine[i], stride_rank[i]);
        return;
    }
    if (k <= packages)
        CHECK(count_distinct(t, mine, k, 0) == k, "%s: node %d: %d writers share %d packages",
              where, node, k, packages);
    if (k <= numas)
        CHECK(count_distinct(t, mine, k, 1) == k, "%s: node %d: %d writers share %d NUMA nodes",
              where, node, k, numas);
    if (k <= cores)
        CHECK(count_distinct(t, mine, k, 2) == k, "%s: node %d: %d writers share %d cores",
              where, node, k, cores);
}

/** A node whose packages hold equal numbers of ranks gets writers balanced
 *  over them within one. */
static void check_package_balance(const fwdioi_places_t *t, int node, const node_view_t *v,
                                  const int *mine, int k)
{
    int npk = v->npk, lo = k, hi = 0;
    if (npk < 0)
        return; /* packages of unequal sizes: no claim */
    for (int p = 0; p < npk; p++) {
        int c = in_package(t, mine, k, p);
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    CHECK(npk == 0 || hi - lo <= 1, "%s: node %d: %d..%d writers per package", where, node, lo,
          hi);
}

/** Writers per node: as requested, each within its cap, water-filled. */
static void check_node_counts(const fwdioi_places_t *t, const int *count, const int *cap,
                              const int *size)
{
    for (int i = 0; i < t->nnodes; i++) {
        CHECK(count[i] <= cap[i], "%s: node %d has %d writers, cap %d", where, i, count[i],
              cap[i]);
        for (int j = 0; j < t->nnodes; j++) {
            if (count[i] >= count[j] || count[i] == cap[i])
                continue;
            /* i has room yet fewer writers than j: only an extra may separate them */
            CHECK(count[j] == count[i] + 1, "%s: nodes %d/%d get %d/%d writers", where, i, j,
                  count[i], count[j]);
            CHECK(size[j] > size[i] || (size[j] == size[i] && j < i),
                  "%s: extra writer to node %d (%d ranks) before node %d (%d ranks)", where, j,
                  size[j], i, size[i]);
        }
    }
}

/** Distinct, in range, in node order; returns 0 if not. */
static int check_basic(const fwdioi_places_t *t, const int *w, int nw)
{
    unsigned char *seen = calloc((size_t)t->nranks, 1);
    int ok = 1;
    for (int i = 0; i < nw && ok; i++) {
        ok = w[i] >= 0 && w[i] < t->nranks && !seen[w[i]];
        if (ok)
            seen[w[i]] = 1;
        if (ok && i > 0)
            ok = t->ranks[w[i - 1]].node <= t->ranks[w[i]].node;
    }
    free(seen);
    return ok;
}

/** Check SPREAD with `writers` wanted and `wpn` writers per node; `view`
 *  holds t's nodes (node_facts). */
static void check_spread(const fwdioi_places_t *t, const node_view_t *view, int writers, int wpn)
{
    fwdio_options_t o = {.placement = FWDIO_PLACEMENT_SPREAD, .writers = writers,
                         .writers_per_node = wpn};
    int *w = malloc((size_t)writers * sizeof *w), nw = -1;
    int *count = calloc((size_t)t->nnodes, sizeof *count);
    int *cap = calloc((size_t)t->nnodes, sizeof *cap);
    int *size = calloc((size_t)t->nnodes, sizeof *size);
    int *mine = malloc((size_t)t->nranks * sizeof *mine);
    int rc = place_writers(t, &o, w, &nw);
    long room = 0;
    for (int r = 0; r < t->nranks; r++)
        size[t->ranks[r].node]++;
    for (int j = 0; j < t->nnodes; j++) {
        cap[j] = wpn > 0 && wpn < size[j] ? wpn : size[j];
        room += cap[j];
    }
    int expect = writers < room ? writers : (int)room;
    if (rc == FWDIO_OK && nw == expect && check_basic(t, w, nw)) {
        for (int i = 0; i < nw; i++)
            count[t->ranks[w[i]].node]++;
        check_node_counts(t, count, cap, size);
        for (int j = 0; j < t->nnodes; j++) {
            int k = writers_on_node(t, w, nw, j, mine);
            check_node_spread(t, j, &view[j], mine, k);
            check_package_balance(t, j, &view[j], mine, k);
        }
    }
    free(w);
    free(count);
    free(cap);
    free(size);
    free(mine);
    CHECK(rc == FWDIO_OK, "%s: rc %d", where, rc);
    CHECK(nw == expect, "%s: %d writers, expected %d", where, nw, expect);
}

/** Check STRIDE: exactly CkIO's basePE + i * skipPEs while below nranks. */
static void check_stride(const fwdioi_places_t *t, int writers, int first, int stride)
{
    fwdio_options_t o = {.placement = FWDIO_PLACEMENT_STRIDE, .writers = writers,
                         .first_writer = first, .writer_stride = stride};
    int w[writers], nw = -1;
    CHECK(place_writers(t, &o, w, &nw) == FWDIO_OK, "stride P=%d", t->nranks);
    int fit = (t->nranks - first - 1) / stride + 1;
    int expect = writers < fit ? writers : fit;
    CHECK(nw == expect, "stride P=%d W=%d first=%d stride=%d: %d writers, expected %d",
          t->nranks, writers, first, stride, nw, expect);
    for (int i = 0; i < nw; i++)
        CHECK(w[i] == first + i * stride, "stride writer %d is %d", i, w[i]);
}

static void check_stride_all(const fwdioi_places_t *t)
{
    int P = t->nranks;
    int firsts[] = {0, 1, P / 2, P - 1};
    int strides[] = {1, 2, 3, 7, P};
    int writers[] = {1, 3, P};
    for (size_t f = 0; f < sizeof firsts / sizeof *firsts; f++)
        for (size_t s = 0; s < sizeof strides / sizeof *strides; s++)
            for (size_t n = 0; n < sizeof writers / sizeof *writers; n++)
                if (firsts[f] < P && strides[s] > 0)
                    check_stride(t, writers[n], firsts[f], strides[s]);
}

/** Check LIST on a shuffled valid list and on the lists it must refuse. */
static void check_list(const fwdioi_places_t *t)
{
    int P = t->nranks, n = P < 5 ? P : 5;
    int list[6], w[6], nw = -1;
    for (int i = 0; i < n; i++)
        list[i] = P - 1 - i; /* distinct, not in rank order */
    fwdio_options_t o = {.placement = FWDIO_PLACEMENT_LIST, .writers = n, .writer_list = list,
                         .writer_list_len = n};
    CHECK(place_writers(t, &o, w, &nw) == FWDIO_OK, "list P=%d", P);
    CHECK(nw == n && memcmp(w, list, (size_t)n * sizeof *w) == 0, "list P=%d not kept", P);
    int bad[][2] = {{0, P}, {-1, 0}, {P - 1, P - 1}};
    for (int b = 0; b < 3; b++) {
        o.writer_list = bad[b];
        o.writer_list_len = o.writers = 2;
        CHECK(place_writers(t, &o, w, &nw) == FWDIO_EINVAL, "list P=%d bad %d", P, b);
    }
    o.writer_list = list, o.writer_list_len = 2, o.writers = 1;
    CHECK(place_writers(t, &o, w, &nw) == FWDIO_EINVAL, "list longer than writers");
}

/** A hand-made topology: node of each rank given, places unknown or known. */
static fwdioi_places_t make_topology(const int *node, int nranks, int nnodes)
{
    fwdioi_places_t t = {nranks, nnodes, malloc((size_t)nranks * sizeof(fwdioi_rank_place_t))};
    for (int r = 0; r < nranks; r++)
        t.ranks[r] = (fwdioi_rank_place_t){.node = node[r], .package = -1, .numa = -1, .core = -1};
    return t;
}

/** Place writers by SPREAD and compare with the expected ranks. */
static void expect_spread(const fwdioi_places_t *t, int writers, int wpn, const int *expect,
                          int n, const char *what)
{
    fwdio_options_t o = {.placement = FWDIO_PLACEMENT_SPREAD, .writers = writers,
                         .writers_per_node = wpn};
    int w[writers], nw = -1;
    CHECK(place_writers(t, &o, w, &nw) == FWDIO_OK, "%s", what);
    CHECK(nw == n, "%s: %d writers, expected %d", what, nw, n);
    for (int i = 0; i < n; i++)
        CHECK(w[i] == expect[i], "%s: writer %d is rank %d, expected %d", what, i, w[i],
              expect[i]);
}

/** The paper's example: 20 ranks on nodes of 8, 8 and 4, two aggregators
 *  per node, binding unknown: P0 P4 P8 P12 P16 P18. */
static void test_paper_example(void)
{
    int node[20];
    for (int r = 0; r < 20; r++)
        node[r] = r / 8;
    fwdioi_places_t t = make_topology(node, 20, 3);
    int expect[] = {0, 4, 8, 12, 16, 18};
    expect_spread(&t, 6, 2, expect, 6, "paper example, writers_per_node 2");
    expect_spread(&t, 6, 0, expect, 6, "paper example, 6 writers");
    fwdioi_places_free(&t);
}

/** Ranks dealt round-robin to two nodes: writer order is node by node. */
static void test_interleaved_nodes(void)
{
    int node[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    fwdioi_places_t t = make_topology(node, 8, 2);
    int expect[] = {0, 4, 1, 5};
    expect_spread(&t, 4, 0, expect, 4, "interleaved nodes");
    fwdioi_places_free(&t);
}

/** Extras go to the nodes with the most ranks; short nodes pass theirs on. */
static void test_node_shares(void)
{
    int node[20];
    for (int r = 0; r < 20; r++)
        node[r] = r < 4 ? 0 : r < 12 ? 1 : 2;
    fwdioi_places_t t = make_topology(node, 20, 3);
    int four[] = {0, 4, 8, 12}; /* 1 + 2 + 1: the extra to node 1 (8 ranks, lower) */
    expect_spread(&t, 4, 0, four, 4, "extras to the biggest node");
    int five[] = {0, 4, 8, 12, 16};
    expect_spread(&t, 5, 0, five, 5, "two extras");
    fwdioi_places_free(&t);
    for (int r = 0; r < 17; r++)
        node[r] = r < 1 ? 0 : r < 9 ? 1 : 2;
    t = make_topology(node, 17, 3);
    int nine[] = {0, 1, 3, 5, 7, 9, 11, 13, 15}; /* 1 + 4 + 4 */
    expect_spread(&t, 9, 0, nine, 9, "node of one rank");
    fwdioi_places_free(&t);
}

/** Known places on one node, unknown on the other; one rank of a node
 *  unknown makes the whole node use the stride rule. */
static void test_mixed_knowledge(void)
{
    char err[128];
    fwdioi_places_t t;
    CHECK(fwdioi_places_synthetic("package:2 core:4 pu:1", 16, 8, &t, err, sizeof err) == 0,
          "%s", err);
    int two_each[] = {0, 4, 8, 12};
    expect_spread(&t, 4, 0, two_each, 4, "known places, 2 packages");
    t.ranks[9].core = -1; /* core unknown only: still by packages */
    expect_spread(&t, 4, 0, two_each, 4, "one core unknown");
    t.ranks[9].package = -1;
    int stride_node1[] = {0, 4, 8, 12};
    expect_spread(&t, 4, 0, stride_node1, 4, "one package unknown");
    t.ranks[1].package = -1; /* now node 0 by the stride rule too: same ranks */
    int six[] = {0, 2, 5, 8, 10, 13}; /* floor(i * 8 / 3) on each node */
    expect_spread(&t, 6, 0, six, 6, "both nodes by the stride rule");
    fwdioi_places_free(&t);
}

/** Spread within a node over packages, then NUMA nodes. */
static void test_domains_by_hand(void)
{
    char err[128];
    fwdioi_places_t t;
    CHECK(fwdioi_places_synthetic("package:2 core:8 pu:1", 16, 16, &t, err, sizeof err) == 0,
          "%s", err);
    int two[] = {0, 8};
    expect_spread(&t, 2, 0, two, 2, "one per package");
    int four[] = {0, 1, 8, 9};
    expect_spread(&t, 4, 0, four, 4, "two per package");
    fwdioi_places_free(&t);
    CHECK(fwdioi_places_synthetic("package:2 numa:2 core:8 pu:1", 32, 32, &t, err,
                                    sizeof err) == 0,
          "%s", err);
    int numa4[] = {0, 8, 16, 24};
    expect_spread(&t, 4, 0, numa4, 4, "one per NUMA node");
    int numa3[] = {0, 8, 16};
    expect_spread(&t, 3, 0, numa3, 3, "three NUMA nodes of four");
    fwdioi_places_free(&t);
}

/** Give rank r of a one-node topology its package, NUMA node and core. */
static void set_place(fwdioi_places_t *t, int r, int package, int numa, int core)
{
    t->ranks[r] = (fwdioi_rank_place_t){.node = 0, .package = package, .numa = numa, .core = core};
}

/** Uneven hierarchies, where the order of the levels matters. */
static void test_uneven_domains(void)
{
    int node[8] = {0};
    fwdioi_places_t t = make_topology(node, 8, 1);
    /* package 0 has NUMA nodes 0, 1, 2 and package 1 only NUMA node 3:
     * four writers take all four NUMA nodes */
    int numa_of[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    for (int r = 0; r < 8; r++)
        set_place(&t, r, numa_of[r] < 3 ? 0 : 1, numa_of[r], r);
    int by_numa[] = {0, 2, 4, 6};
    expect_spread(&t, 4, 0, by_numa, 4, "NUMA nodes unevenly over packages");
    /* NUMA node 0 holds packages 0, 1, 2 and NUMA node 1 package 3: four
     * writers take all four packages */
    for (int r = 0; r < 8; r++)
        set_place(&t, r, numa_of[r], numa_of[r] < 3 ? 0 : 1, r);
    expect_spread(&t, 4, 0, by_numa, 4, "packages unevenly over NUMA nodes");
    /* two ranks per core, neighbours sharing: cores before rank order */
    for (int r = 0; r < 8; r++)
        set_place(&t, r, 0, 0, r / 2);
    expect_spread(&t, 4, 0, by_numa, 4, "two ranks per core");
    fwdioi_places_free(&t);
}

/** The synthetic builder: places, wrapping, nodes, errors. */
static void test_synthetic(void)
{
    char err[128] = "";
    fwdioi_places_t t;
    CHECK(fwdioi_places_synthetic("package:2 numa:2 core:4 pu:2", 40, 20, &t, err,
                                    sizeof err) == 0,
          "%s", err);
    CHECK(t.nranks == 40 && t.nnodes == 2, "%d ranks %d nodes", t.nranks, t.nnodes);
    const fwdioi_rank_place_t *p = t.ranks;
    CHECK(p[5].node == 0 && p[5].package == 0 && p[5].numa == 1 && p[5].core == 5, "rank 5");
    CHECK(p[9].package == 1 && p[9].numa == 2 && p[9].core == 9, "rank 9");
    CHECK(p[17].core == 1 && p[17].package == 0, "rank 17 wraps to core 1");
    CHECK(p[21].node == 1 && p[21].core == 1 && p[21].numa == 0, "rank 21 on node 1");
    fwdioi_places_free(&t);
    CHECK(t.ranks == NULL && t.nranks == 0, "free clears");

    CHECK(fwdioi_places_synthetic("core:16 pu:1", 16, 16, &t, err, sizeof err) == 0, "%s", err);
    CHECK(t.ranks[15].package == 0 && t.ranks[15].numa == 0 && t.ranks[15].core == 15,
          "no package level");
    fwdioi_places_free(&t);
    CHECK(fwdioi_places_synthetic("numa:4 core:4 pu:1", 16, 16, &t, err, sizeof err) == 0, "%s",
          err);
    CHECK(t.ranks[6].package == 0 && t.ranks[6].numa == 1 && t.ranks[6].core == 6, "NUMA only");
    fwdioi_places_free(&t);
    CHECK(fwdioi_places_synthetic("package:2 pu:3", 6, 6, &t, err, sizeof err) == 0, "%s", err);
    CHECK(t.ranks[4].package == 1 && t.ranks[4].core == 4, "no core level: PUs are cores");
    fwdioi_places_free(&t);
    CHECK(fwdioi_places_synthetic(NULL, 10, 4, &t, err, sizeof err) == 0, "%s", err);
    CHECK(t.nnodes == 3 && t.ranks[9].node == 2 && t.ranks[9].package == -1 &&
              t.ranks[9].numa == -1 && t.ranks[9].core == -1,
          "unknown shape");
    fwdioi_places_free(&t);

    err[0] = 0;
    CHECK(fwdioi_places_synthetic("sockets:banana", 4, 4, &t, err, sizeof err) == -1, "bad");
    CHECK(err[0] != 0 && t.ranks == NULL, "no reason given for a bad description");
    CHECK(fwdioi_places_synthetic("core:2", 0, 4, &t, err, sizeof err) == -1, "no ranks");
    CHECK(fwdioi_places_synthetic("core:2", 4, 0, &t, NULL, 0) == -1, "no ranks per node");
}

/** Arguments refused by every placement. */
static void test_bad_arguments(void)
{
    fwdioi_places_t t;
    CHECK(fwdioi_places_synthetic(NULL, 8, 4, &t, NULL, 0) == 0, "unknown");
    int w[8], nw;
    fwdio_options_t o = {.writers = 0};
    CHECK(place_writers(&t, &o, w, &nw) == FWDIO_EINVAL, "0 writers");
    o = (fwdio_options_t){.placement = FWDIO_PLACEMENT_STRIDE, .writers = 2, .first_writer = 8};
    CHECK(place_writers(&t, &o, w, &nw) == FWDIO_EINVAL, "first_writer past the end");
    o.first_writer = 2; /* writer_stride 0: the default spacing (8 - 2) / 2 = 3 */
    CHECK(place_writers(&t, &o, w, &nw) == FWDIO_OK && nw == 2 && w[0] == 2 && w[1] == 5,
          "default stride");
    o = (fwdio_options_t){.placement = FWDIO_PLACEMENT_LIST, .writers = 2};
    CHECK(place_writers(&t, &o, w, &nw) == FWDIO_EINVAL, "no list");
    o = (fwdio_options_t){.placement = (fwdio_placement_t)7, .writers = 2};
    CHECK(place_writers(&t, &o, w, &nw) == FWDIO_EINVAL, "unknown placement");
    fwdioi_places_free(&t);
}

/** Every writer count and writers_per_node of interest on one topology. */
static void check_topology(const fwdioi_places_t *t)
{
    int N = t->nnodes, P = t->nranks;
    int writers[] = {1, 2, 3, N, 2 * N, 3 * N + 1, P};
    node_view_t *view = node_facts(t);
    for (size_t i = 0; i < sizeof writers / sizeof *writers; i++)
        check_spread(t, view, writers[i], 0);
    for (int wpn = 1; wpn <= 4; wpn++) {
        check_spread(t, view, wpn * N < P ? wpn * N : P, wpn);
        check_spread(t, view, 3, wpn);
    }
    free_node_facts(t, view);
}

static const char *const shapes[] = {
    "package:2 core:8 pu:1", "package:2 numa:2 core:8 pu:1", "package:4 core:4 pu:2",
    "core:16 pu:1",          "numa:4 core:4 pu:1",           "package:1 core:2 pu:1",
    NULL,
};

/** All shapes x ranks per node x nodes, full nodes and a short last node. */
static void test_many_topologies(void)
{
    int per_node[] = {1, 2, 7, 8, 16, 64, 128};
    int nodes[] = {1, 2, 3, 64};
    char err[128];
    int cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t r = 0; r < sizeof per_node / sizeof *per_node; r++)
            for (size_t n = 0; n < sizeof nodes / sizeof *nodes; n++)
                for (int shortened = 0; shortened < 2; shortened++) {
                    int rpn = per_node[r], P = nodes[n] * rpn - shortened * (rpn / 2);
                    if (shortened && (nodes[n] == 1 || rpn < 2))
                        continue;
                    fwdioi_places_t t;
                    int rc = fwdioi_places_synthetic(shapes[s], P, rpn, &t, err, sizeof err);
                    CHECK(rc == 0, "%s: %s", shapes[s] ? shapes[s] : "unknown", err);
                    snprintf(where, sizeof where, "\"%s\" %d ranks/node, %d ranks",
                             shapes[s] ? shapes[s] : "unknown", rpn, P);
                    check_topology(&t);
                    if (s == 0)
                        check_stride_all(&t);
                    if (s == 0 && r == 3)
                        check_list(&t);
                    fwdioi_places_free(&t);
                    cases++;
                }
    printf("%d topologies\n", cases);
}

/* The cache of the last spread placement: the same ranks as placing again,
 * taken from it only for the same options; stride and list never kept. */
static void test_placement_cache(void)
{
    snprintf(where, sizeof where, "placement cache");
    fwdioi_places_t t;
    char err[256];
    CHECK(fwdioi_places_synthetic("package:2 numa:2 core:8 pu:1", 256, 32, &t, err,
                                    sizeof err) == 0, "%s", err);
    fwdioi_topology_t topo;
    CHECK(fwdioi_topology_from_places(&t, &topo) == 0, "topology of the places");
    fwdioi_placement_cache_t c;
    fwdioi_placement_cache_init(&c);
    struct {
        int placement, writers, per_node, hit;
    } steps[] = {
        {FWDIO_PLACEMENT_SPREAD, 16, 0, 0}, {FWDIO_PLACEMENT_SPREAD, 16, 0, 1},
        {FWDIO_PLACEMENT_SPREAD, 16, 0, 1}, {FWDIO_PLACEMENT_SPREAD, 8, 0, 0},
        {FWDIO_PLACEMENT_SPREAD, 16, 2, 0}, {FWDIO_PLACEMENT_SPREAD, 16, 2, 1},
        {FWDIO_PLACEMENT_STRIDE, 16, 0, 0}, {FWDIO_PLACEMENT_SPREAD, 16, 2, 1},
        {FWDIO_PLACEMENT_LIST, 3, 0, 0},    {FWDIO_PLACEMENT_SPREAD, 16, 0, 0},
    };
    static const int list[3] = {5, 77, 200};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        fwdio_options_t o;
        memset(&o, 0, sizeof o);
        o.placement = steps[i].placement;
        o.writers = steps[i].writers;
        o.writers_per_node = steps[i].per_node;
        if (o.placement == FWDIO_PLACEMENT_LIST) {
            o.writer_list = list;
            o.writer_list_len = 3;
        }
        int want[64], got[64], nwant = 0, ngot = 0;
        unsigned long hits = c.hits;
        CHECK(place_writers(&t, &o, want, &nwant) == FWDIO_OK, "step %zu: placed", i);
        CHECK(fwdioi_place_writers_cached(&c, &topo, &o, got, &ngot) == FWDIO_OK,
              "step %zu: placed through the cache", i);
        CHECK(ngot == nwant && !memcmp(got, want, (size_t)nwant * sizeof *want),
              "step %zu: the cache's writers differ from placing again", i);
        CHECK((int)(c.hits - hits) == steps[i].hit, "step %zu: %s the cache", i,
              steps[i].hit ? "should come from" : "should not come from");
    }
    CHECK(c.hits == 4 && c.misses == 4, "%lu hits, %lu misses", c.hits, c.misses);
    fwdioi_placement_cache_free(&c);
    fwdioi_topology_free(&topo);
    fwdioi_places_free(&t);
}

/* The first repeat of a writer list, in list order, against a quadratic
 * oracle over random lists. */
static void test_list_repeat(void)
{
    snprintf(where, sizeof where, "list repeats");
    unsigned seed = 7;
    for (int round = 0; round < 2000; round++) {
        int list[40], n = 1 + round % 40, range = 1 + round % 60;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            list[i] = (int)((seed >> 8) % (unsigned)range) - (round % 7 == 0);
        }
        int want = -1;
        for (int i = 1; i < n && want < 0; i++)
            for (int j = 0; j < i; j++)
                if (list[j] == list[i]) {
                    want = i;
                    break;
                }
        int at = -2;
        CHECK(fwdioi_list_first_repeat(list, n, &at) == 0, "round %d: no memory", round);
        CHECK(at == want, "round %d: first repeat at %d, want %d", round, at, want);
    }
}

/* What a runtime keeps of the topology (topology.h): its size grows with
 * the nodes, not the ranks; a rank's node, its node's ranks and size found
 * for block and interleaved layouts; places kept for candidates only; a
 * node past its candidates; records that do not describe every rank once
 * are refused. */
static void test_compact(void)
{
    snprintf(where, sizeof where, "compact topology");
    char err[256];
    fwdioi_topology_t t;
    const int P = 131072, per = 128;
    CHECK(fwdioi_topology_synthetic("package:2 numa:2 core:32 pu:1", P, per, &t, err,
                                    sizeof err) == 0, "%s", err);
    CHECK(t.nnodes == P / per && t.nruns == P / per &&
              t.ncands == P / per * FWDIOI_TOPOLOGY_CANDIDATES,
          "%d nodes, %d runs, %d candidates", t.nnodes, t.nruns, t.ncands);
    /* was 20 bytes per rank (every rank's place) */
    CHECK(fwdioi_topology_bytes(&t) * 8 < (size_t)20 * P, "%zu bytes for %d ranks",
          fwdioi_topology_bytes(&t), P);
    for (int r = 0; r < P; r += 997) {
        CHECK(fwdioi_topology_node_of(&t, r) == r / per, "rank %d on node %d", r,
              fwdioi_topology_node_of(&t, r));
        CHECK(fwdioi_topology_node_ranks(&t, r) == per, "rank %d: node of %d", r,
              fwdioi_topology_node_ranks(&t, r));
        CHECK(fwdioi_topology_member(&t, r / per, r % per) == r, "member of rank %d", r);
    }
    CHECK(fwdioi_topology_node_of(&t, P) == -1 && fwdioi_topology_node_of(&t, -1) == -1,
          "ranks outside");
    fwdioi_topology_free(&t);

    /* interleaved: node = rank % 4 */
    enum { IP = 64, IN = 4 };
    fwdioi_places_t pl = {IP, IN, malloc(IP * sizeof(fwdioi_rank_place_t))};
    CHECK(pl.ranks != NULL, "memory");
    for (int r = 0; r < IP; r++)
        pl.ranks[r] = (fwdioi_rank_place_t){r % IN, -1, -1, -1, 8};
    CHECK(fwdioi_topology_from_places(&pl, &t) == 0, "interleaved");
    CHECK(t.nruns == IP && t.ncands == 0, "%d runs, %d candidates", t.nruns, t.ncands);
    for (int r = 0; r < IP; r++) {
        CHECK(fwdioi_topology_node_of(&t, r) == r % IN, "rank %d", r);
        CHECK(fwdioi_topology_member(&t, r % IN, r / IN) == r, "member %d", r);
        CHECK(fwdioi_topology_node_cpus(&t, r) == 8, "cpus of rank %d", r);
    }
    fwdioi_topology_free(&t);
    fwdioi_places_free(&pl);

    /* a node of 32 placed ranks asked for 24 writers: its 16 candidates, then
     * the lowest other ranks */
    CHECK(fwdioi_places_synthetic("package:2 core:16 pu:1", 32, 32, &pl, err, sizeof err) == 0,
          "%s", err);
    CHECK(fwdioi_topology_from_places(&pl, &t) == 0, "one node");
    fwdio_options_t o;
    memset(&o, 0, sizeof o);
    o.placement = FWDIO_PLACEMENT_SPREAD;
    o.writers = 24;
    int w[32], nw = 0, is_cand[32] = {0}, is_writer[32] = {0};
    CHECK(fwdioi_place_writers(&t, &o, w, &nw) == FWDIO_OK && nw == 24, "24 writers: %d", nw);
    for (int c = 0; c < t.ncands; c++) {
        is_cand[t.cands[c].rank] = 1;
        fwdioi_rank_place_t p = fwdioi_topology_place(&t, t.cands[c].rank);
        CHECK(p.package == pl.ranks[t.cands[c].rank].package &&
                  p.core == pl.ranks[t.cands[c].rank].core,
              "candidate %d's place", t.cands[c].rank);
    }
    for (int i = 0; i < nw; i++) {
        CHECK(i == 0 || w[i] > w[i - 1], "writers in rank order");
        is_writer[w[i]] = 1;
    }
    int others = 0;
    for (int r = 0; r < 32; r++) {
        if (is_cand[r])
            CHECK(is_writer[r], "candidate %d not a writer", r);
        else if (others++ < 24 - FWDIOI_TOPOLOGY_CANDIDATES)
            CHECK(is_writer[r], "rank %d, among the lowest others, not a writer", r);
        else
            CHECK(!is_writer[r], "rank %d a writer", r);
        if (!is_cand[r])
            CHECK(fwdioi_topology_place(&t, r).package == -1, "a place kept for rank %d", r);
    }
    /* with no more than the candidates, a package each in turn */
    o.writers = 2;
    CHECK(fwdioi_place_writers(&t, &o, w, &nw) == FWDIO_OK && nw == 2 &&
              pl.ranks[w[0]].package != pl.ranks[w[1]].package,
          "2 writers share a package");
    fwdioi_topology_free(&t);
    fwdioi_places_free(&pl);

    /* records that do not describe every rank once */
    const int gap[] = {1, -1, 0, 1, 0, 0, 1, 1, -1, 0, 1, 0, 2, 1}, overlap[] = {2, -1, 0, 2, 0, 0, 1, 1, 2},
              twice[] = {1, -1, 0, 1, 0, 0, 1, 1, -1, 0, 1, 0, 0, 1},
              foreign[] = {1, -1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, -1, 0, 1, 0, 1, 1};
    CHECK(fwdioi_topology_decode(gap, 14, 2, 3, &t) == -1, "a gap taken");
    CHECK(fwdioi_topology_decode(overlap, 9, 1, 2, &t) == -1, "an overlap taken");
    CHECK(fwdioi_topology_decode(twice, 14, 2, 2, &t) == -1, "a rank twice taken");
    CHECK(fwdioi_topology_decode(foreign, 18, 2, 2, &t) == -1, "another node's candidate taken");
    CHECK(fwdioi_topology_decode(gap, 13, 2, 3, &t) == -1, "a cut record taken");
    const int good[] = {1, -1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, -1, 0, 1, 0, 1, 1};
    CHECK(fwdioi_topology_decode(good, 18, 2, 2, &t) == 0 && t.nodes[0].placed &&
              fwdioi_topology_node_of(&t, 1) == 1,
          "two nodes of one rank refused");
    fwdioi_topology_free(&t);
}

int main(void)
{
    test_list_repeat();
    test_compact();
    test_placement_cache();
    test_synthetic();
    test_bad_arguments();
    test_paper_example();
    test_interleaved_nodes();
    test_node_shares();
    test_mixed_knowledge();
    test_domains_by_hand();
    test_uneven_domains();
    test_many_topologies();
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
