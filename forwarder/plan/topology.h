/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where each rank runs: its node, and within the node its package (socket),
 * NUMA domain and core, as hwloc sees them. Writer placement is a pure
 * function of this description, so it can be computed for a real run
 * (fwdioi_topology_discover) or for a what-if (fwdioi_topology_synthetic).
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

typedef struct fwdioi_topology {
    int nranks;
    int nnodes;
    fwdioi_rank_place_t *ranks; /* [nranks] */
} fwdioi_topology_t;

/**
 * A what-if topology: `nranks` ranks on nodes of the hwloc synthetic shape
 * `desc` (one node, e.g. "package:2 numa:2 core:8 pu:1"), `ranks_per_node`
 * per node, filled node by node and, within a node, core by core in topology
 * order (wrapping to the first core when there are more ranks than cores).
 * desc NULL: nodes of unknown shape (every package/numa/core -1).
 * Returns 0, or -1 with a reason in err (for a bad description).
 */
int fwdioi_topology_synthetic(const char *desc, int nranks, int ranks_per_node,
                              fwdioi_topology_t *out, char *err, size_t err_len);

/**
 * The real topology of `comm` (collective): nodes from
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) numbered in rank order of their
 * first rank, each rank's package/NUMA/core from hwloc (its CPU binding; an
 * unbound rank is unknown, so placement falls back to the stride rule; the
 * CPU it last ran on only when the binding cannot be read) and the CPUs
 * usable on its node (the job's cpuset, not its binding), gathered to every
 * rank. Returns 0, or -1 on every rank (an MPI or memory failure).
 */
int fwdioi_topology_discover(MPI_Comm comm, fwdioi_topology_t *out);

/** How many ranks of `t` share the node of `rank`. */
int fwdioi_topology_node_ranks(const fwdioi_topology_t *t, int rank);

void fwdioi_topology_free(fwdioi_topology_t *t);

#endif
