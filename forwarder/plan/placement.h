/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writer placement: which ranks write a file, from the topology and the
 * resolved options (fwdio_options_t.placement and its parameters).
 */
#ifndef FWDIOI_PLACEMENT_H
#define FWDIOI_PLACEMENT_H

#include "fwdio.h"
#include "plan/topology.h"

/**
 * Choose the writers. `opts` is resolved (fwdioi_options_resolve): writers is
 * the number wanted (> 0). Fills ranks[0 .. *nwriters) (room for opts->writers
 * entries) in writer order and returns FWDIO_OK, FWDIO_ENOMEM, or FWDIO_EINVAL
 * (a list with a rank outside the topology or a repeated rank, a list longer
 * than opts->writers, a first_writer outside the topology).
 *
 * - STRIDE: first_writer + i * writer_stride, as many as fit below nranks
 *   (at most opts->writers; writer_stride 0 means the default spacing of
 *   fwdioi_options_resolve).
 * - LIST: writer_list as given (the caller sets opts->writers to at least
 *   writer_list_len).
 * - SPREAD: min(writers, nranks) writers spread evenly over nodes (node j gets
 *   floor(W/N) or ceil(W/N), the extra ones to the nodes with the most ranks,
 *   ties to the lower node). A node never gets more writers than it has ranks,
 *   nor more than writers_per_node when that is > 0; what it cannot take goes
 *   to the other nodes (so with writers_per_node the total may be below
 *   opts->writers). Then within a node its first k writer candidates
 *   (topology.h; picked greedily on the node: the free rank whose NUMA
 *   domain and package hold the fewest writers so far, the finer of the two
 *   levels compared first, then whose core holds the fewest, then the lowest
 *   rank), and past its FWDIOI_TOPOLOGY_CANDIDATES candidates its other
 *   ranks in rank order. So no two writers of a node share a package while
 *   the node's ranks occupy at least as many packages as it has writers,
 *   likewise NUMA domains (for up to FWDIOI_TOPOLOGY_CANDIDATES writers a
 *   node). A node where some rank's package or NUMA domain is unknown gets
 *   the stride rule of aggregator placement: its k writers at local
 *   positions floor(i * n / k) of its n ranks in rank order.
 *   Writer order: node by node, and within a node in rank order.
 */
int fwdioi_place_writers(const fwdioi_topology_t *topo, const fwdio_options_t *opts, int *ranks,
                         int *nwriters);

/**
 * The first entry of `list` (n entries) that repeats an earlier one, in list
 * order: its index in *at, or -1 when every entry differs. O(n log n) time
 * and O(n) memory, whatever the ranks of the communicator (a list is checked
 * at every fwdio_open that gives one). 0, or -1 without memory.
 */
int fwdioi_list_first_repeat(const int *list, int n, int *at);

#endif
