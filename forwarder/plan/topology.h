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
 * picks them, worked out on the node from its own ranks' places (nodes.h,
 * the description; this file finds the places, with hwloc, and moves the
 * descriptions between ranks, with MPI). Places of every rank exist only in
 * what-ifs and tests (fwdioi_places_t).
 */
#ifndef FWDIOI_TOPOLOGY_H
#define FWDIOI_TOPOLOGY_H

#include "plan/nodes.h"

#include <mpi.h>
#include <stddef.h> /* size_t: not every mpi.h brings it (MPICH's does not) */

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

#endif
