/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node's description and the topology made of them (topology_build.c),
 * as a record of ints that can travel in MPI messages:
 *
 *   nranks, cpus, placed, nruns, ncand,
 *   nruns x (first rank, count), ncand x (rank, package, numa, core)
 *
 * Pure logic: the discovery (topology.c) and the what-ifs both use it.
 */
#ifndef FWDIOI_TOPOLOGY_BUILD_H
#define FWDIOI_TOPOLOGY_BUILD_H

#include "plan/topology.h"

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

#endif
