/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the ranks run: each rank's node, and for writer placement, within
 * each node the ranks best placed to write (by package, NUMA domain and
 * core, as hwloc sees them). Placement is a pure function of this
 * description, so it can be computed for a real run
 * (fwdioi_topology_discover) or for a what-if (fwdioi_topology_synthetic).
 *
 * What a rank keeps grows with the nodes, not the ranks: a node is its rank
 * count, its CPUs, its ranks as runs of consecutive ranks (one run per node
 * when ranks are placed node by node) and its first
 * FWDIOI_TOPOLOGY_CANDIDATES writer candidates in the order spread placement
 * picks them, worked out on the node from its own ranks' places
 * (topology_build.c). Places of every rank exist only in what-ifs and tests
 * (fwdioi_places_t).
 */
#ifndef FWDIOI_TOPOLOGY_H
#define FWDIOI_TOPOLOGY_H

#include <mpi.h>
#include <stddef.h> /* size_t: not every mpi.h brings it (MPICH's does not) */

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

/**
 * What-if places: `nranks` ranks on nodes of the hwloc synthetic shape
 * `desc` (one node, e.g. "package:2 numa:2 core:8 pu:1"), `ranks_per_node`
 * per node, filled node by node and, within a node, core by core in topology
 * order (wrapping to the first core when there are more ranks than cores).
 * desc NULL: nodes of unknown shape (every package/numa/core -1).
 * Returns 0, or -1 with a reason in err (for a bad description).
 */
int fwdioi_places_synthetic(const char *desc, int nranks, int ranks_per_node,
                            fwdioi_places_t *out, char *err, size_t err_len);

void fwdioi_places_free(fwdioi_places_t *p);

/** The topology of `places` (topology_build.c). Returns 0, or -1 (out of
 *  memory, or a node outside [0, nnodes) or without ranks). */
int fwdioi_topology_from_places(const fwdioi_places_t *places, fwdioi_topology_t *out);

/** fwdioi_places_synthetic, as a topology. */
int fwdioi_topology_synthetic(const char *desc, int nranks, int ranks_per_node,
                              fwdioi_topology_t *out, char *err, size_t err_len);

/**
 * The real topology of `comm` (collective): nodes from
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) numbered in rank order of their
 * first rank, each rank's package/NUMA/core from hwloc (its CPU binding; an
 * unbound rank is unknown, so placement falls back to the stride rule; the
 * CPU it last ran on only when the binding cannot be read) and the CPUs
 * usable on its node (the job's cpuset, not its binding). The places go to
 * the node's lowest rank, which describes the node; the nodes' descriptions
 * are gathered among those ranks and passed to the others of each node: no
 * rank holds the places of every rank. Returns 0, or -1 on every rank (an
 * MPI or memory failure).
 */
int fwdioi_topology_discover(MPI_Comm comm, fwdioi_topology_t *out);

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
