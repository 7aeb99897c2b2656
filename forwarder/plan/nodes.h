/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a rank knows of where the ranks run (topology.h finds it): each node
 * described by its ranks and writer candidates, and the topology made of
 * the nodes' descriptions, with its queries (nodes.c). A node's description
 * is a record of ints that can travel in MPI messages:
 *
 *   nranks, cpus, placed, nruns, ncand,
 *   nruns x (first rank, count), ncand x (rank, package, numa, core)
 *
 * Pure logic: the discovery (topology.c) and the what-ifs both use it.
 */
#ifndef FWDIOI_NODES_H
#define FWDIOI_NODES_H

#include <stddef.h>
#include <stdint.h>

/** Place of one rank. package/numa/core are indices within the node (logical,
 *  hwloc order), or -1 when unknown: the rank is not bound (or bound to the
 *  whole machine), or its binding spans several objects of that level (a rank
 *  bound to a package has package and NUMA node but core -1). A machine
 *  without objects of a level (no package level, say) has one: index 0. */
typedef struct fwdioi_rank_place {
    int node;
    int package;
    int numa;
    int core;
    int cpus; /* CPUs (PUs) hwloc finds usable on the rank's node, -1 unknown */
} fwdioi_rank_place_t;

/** The place of every rank (what-ifs and tests; nodes numbered 0 ..
 *  nnodes - 1, each with at least one rank). */
typedef struct fwdioi_places {
    int nranks;
    int nnodes;
    fwdioi_rank_place_t *ranks; /* [nranks] */
} fwdioi_places_t;

/** Writer candidates kept per node: spread placement picks a node's first k
 *  from them, and past them the node's other ranks in rank order. */
#define FWDIOI_TOPOLOGY_CANDIDATES 16

/** One node. */
typedef struct fwdioi_node_info {
    int nranks;            /* its ranks */
    int cpus;              /* CPUs usable there (its lowest rank's view), -1 unknown */
    int placed;            /* every rank's package and NUMA domain known */
    int first_run, nruns;  /* its ranks: runs[first_run ..], in rank order */
    int first_cand, ncand; /* placed: cands[first_cand ..], in pick order; else none */
} fwdioi_node_info_t;

/** Ranks first .. first + count - 1, all on `node`. */
typedef struct fwdioi_rank_run {
    int first, count, node;
} fwdioi_rank_run_t;

/** A writer candidate and its place on its node. */
typedef struct fwdioi_candidate {
    int rank, package, numa, core;
} fwdioi_candidate_t;

typedef struct fwdioi_topology {
    int nranks;
    int nnodes;
    int nruns;
    int ncands;
    fwdioi_node_info_t *nodes;   /* [nnodes] */
    fwdioi_rank_run_t *runs;     /* [nruns], node by node */
    int *runs_by_rank;           /* [nruns]: indices into runs, by first rank */
    fwdioi_candidate_t *cands;   /* [ncands], node by node */
} fwdioi_topology_t;


/** Ints of a record of `nruns` runs and `ncand` candidates. */
#define FWDIOI_NODE_RECORD_INTS(nruns, ncand) (5 + 2 * (size_t)(nruns) + 4 * (size_t)(ncand))

/**
 * Describe a node of `n` ranks (`ranks`, ascending, with their places in
 * `places`; n >= 1) into a new record (*rec, *len ints; free() it): its
 * runs, its CPUs (the first rank's), and, when every rank's package and NUMA
 * domain are known, its first FWDIOI_TOPOLOGY_CANDIDATES writers in the
 * order spread placement picks them (placement.h). Returns 0 or -1 (out of
 * memory).
 */
int fwdioi_node_record(const fwdioi_rank_place_t *places, const int *ranks, int n, int **rec,
                       size_t *len);

/**
 * The topology of `nnodes` records laid end to end in `recs` (`len` ints),
 * node j the j-th, for `nranks` ranks. Returns 0, or -1 (out of memory, or
 * records that do not describe every rank once).
 */
int fwdioi_topology_decode(const int *recs, size_t len, int nnodes, int nranks,
                           fwdioi_topology_t *out);

/** The topology of `places` . Returns 0, or -1 (out of
 *  memory, or a node outside [0, nnodes) or without ranks). */
int fwdioi_topology_from_places(const fwdioi_places_t *places, fwdioi_topology_t *out);

void fwdioi_places_free(fwdioi_places_t *p);

/** The node of `rank` (O(log runs)); -1 for a rank outside the topology. */
int fwdioi_topology_node_of(const fwdioi_topology_t *t, int rank);

/** How many ranks of `t` share the node of `rank`. */
int fwdioi_topology_node_ranks(const fwdioi_topology_t *t, int rank);

/** CPUs usable on the node of `rank`, -1 unknown. */
int fwdioi_topology_node_cpus(const fwdioi_topology_t *t, int rank);

/** The i-th rank of node `node`, in rank order (0 <= i < its nranks). */
int fwdioi_topology_member(const fwdioi_topology_t *t, int node, int i);

/** What `t` knows of the place of `rank`: its node and CPUs, and its
 *  package/NUMA domain/core if it is one of its node's candidates (else -1). */
fwdioi_rank_place_t fwdioi_topology_place(const fwdioi_topology_t *t, int rank);

/** Bytes `t` holds (what a rank keeps of the topology). */
size_t fwdioi_topology_bytes(const fwdioi_topology_t *t);

void fwdioi_topology_free(fwdioi_topology_t *t);

#endif
