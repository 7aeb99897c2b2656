/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The binomial tree of relay_tree.h. Rank r's parent is r with its lowest
 * set bit cleared; its children are r + 2^k for every 2^k below that bit
 * (every 2^k for rank 0) that is still a rank. Each rank but 0 has one
 * parent, so the tree spans the ranks, and a path between two ranks goes up
 * to their common ancestor and down: at most 2 ceil(log2 P) edges.
 */
#include "agreement/relay_tree.h"

int fwdioi_relay_neighbours(int rank, int size, int out[FWDIOI_RELAY_MAX])
{
    if (rank < 0 || rank >= size)
        return 0;
    int n = 0;
    unsigned r = (unsigned)rank;
    unsigned low = r & (~r + 1u); /* the lowest set bit; 0 for rank 0 */
    if (r != 0)
        out[n++] = (int)(r & (r - 1u));
    for (unsigned b = 1; (low == 0 || b < low) && b < (unsigned)size; b <<= 1) {
        if (r + b >= (unsigned)size)
            break;
        out[n++] = (int)(r + b);
    }
    return n;
}
