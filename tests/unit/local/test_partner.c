/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who keeps a writer's partner copy (local_copies 2, forwarder/local/
 * partner.c): always a rank on another node than the writer's; writers placed
 * node by node or interleaved each keep exactly one copy (a common shift);
 * uneven placements fall back to the next writer, then the next rank, on
 * another node; with every rank on one node there is no partner.
 */
#include "local/partner.h"
#include "unit_check.h"

#include <string.h>

enum { MAXR = 64 };

/* Every writer's partner is on another node; returns how many copies the
 * busiest rank keeps. */
static int check_partners(const int *wr, int nw, const int *node, int nranks, const int *partner)
{
    int kept[MAXR];
    memset(kept, 0, sizeof kept);
    int most = 0;
    for (int w = 0; w < nw; w++) {
        CHECK(partner[w] >= 0 && partner[w] < nranks);
        CHECK(node[partner[w]] != node[wr[w]]);
        if (++kept[partner[w]] > most)
            most = kept[partner[w]];
    }
    return most;
}

int main(void)
{
    int node[MAXR], wr[MAXR], partner[MAXR];

    /* 8 ranks on 4 nodes, 2 each; spread placement: 2 writers per node,
     * node by node (ranks 0,1 | 2,3 | ...): shift 2, one copy each */
    for (int r = 0; r < 8; r++)
        node[r] = r / 2;
    for (int w = 0; w < 8; w++)
        wr[w] = w;
    CHECK(fwdioi_local_partners(wr, 8, node, 8, partner) == 0);
    CHECK(check_partners(wr, 8, node, 8, partner) == 1);
    CHECK(partner[0] == 2 && partner[1] == 3 && partner[7] == 1);

    /* one writer per node, interleaved: shift 1 */
    for (int w = 0; w < 4; w++)
        wr[w] = 2 * w;
    CHECK(fwdioi_local_partners(wr, 4, node, 8, partner) == 0);
    CHECK(check_partners(wr, 4, node, 8, partner) == 1);
    CHECK(partner[0] == 2 && partner[3] == 0);

    /* every writer on node 0, senders elsewhere: the next rank off the node */
    wr[0] = 0;
    wr[1] = 1;
    CHECK(fwdioi_local_partners(wr, 2, node, 8, partner) == 0);
    CHECK(partner[0] == 2 && partner[1] == 2);
    check_partners(wr, 2, node, 8, partner);

    /* uneven: 3 writers on node 0, 1 on node 1 (no shift fits every
     * writer): the next writer on another node */
    int node2[4] = {0, 0, 0, 1};
    for (int w = 0; w < 4; w++)
        wr[w] = w;
    CHECK(fwdioi_local_partners(wr, 4, node2, 4, partner) == 0);
    check_partners(wr, 4, node2, 4, partner);
    CHECK(partner[0] == 3 && partner[3] == 0);

    /* one node: nobody can keep a copy against its loss */
    int one[3] = {0, 0, 0};
    CHECK(fwdioi_local_partners(wr, 2, one, 3, partner) == 2);
    CHECK(partner[0] == -1 && partner[1] == -1);

    /* one writer, two nodes */
    wr[0] = 1;
    CHECK(fwdioi_local_partners(wr, 1, node, 4, partner) == 0);
    CHECK(partner[0] == 2);
    return unit_result("test_partner");
}
