/* SPDX-License-Identifier: BSD-3-Clause */
/* The tree an abort travels along (relay_tree.c): a binomial tree over the
 * runtime's ranks, rooted at rank 0. A rank that learns of an abort first,
 * by its own failure or from a neighbour, sends it to every neighbour but
 * the one it came from; the news then reaches every rank in at most
 * 2 ceil(log2 P) hops, each rank sending at most ceil(log2 P) + 1 messages
 * per abort whatever the number of ranks that failed (pure logic). */
#ifndef FWDIOI_RELAY_TREE_H
#define FWDIOI_RELAY_TREE_H

/** The most neighbours a rank has in a tree of at most 2^31 ranks. */
#define FWDIOI_RELAY_MAX 32

/** Write the neighbours of `rank` in the tree over `size` ranks (its parent
 *  first, if it has one, then its children, nearest first) to `out`
 *  (FWDIOI_RELAY_MAX entries); returns how many. 0 for a rank outside
 *  [0, size). */
int fwdioi_relay_neighbours(int rank, int size, int out[FWDIOI_RELAY_MAX]);

#endif
