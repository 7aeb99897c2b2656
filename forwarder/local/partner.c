/* SPDX-License-Identifier: BSD-3-Clause */
/* Who keeps a writer's partner copy (partner.h). */
#include "local/partner.h"

/* The smallest shift s (0 < s < nwriters) that puts every writer's partner
 * on another node; 0 if none does. */
static int common_shift(const int *writer_rank, int nwriters, const int *node)
{
    for (int s = 1; s < nwriters; s++) {
        int w = 0;
        while (w < nwriters &&
               node[writer_rank[w]] != node[writer_rank[(w + s) % nwriters]])
            w++;
        if (w == nwriters)
            return s;
    }
    return 0;
}

/* Writer w's partner without a common shift: the next writer on another
 * node, else the next rank on another node, else -1. */
static int own_partner(const int *writer_rank, int nwriters, const int *node, int nranks, int w)
{
    int me = writer_rank[w];
    for (int i = 1; i < nwriters; i++) {
        int r = writer_rank[(w + i) % nwriters];
        if (node[r] != node[me])
            return r;
    }
    for (int i = 1; i < nranks; i++) {
        int r = (me + i) % nranks;
        if (node[r] != node[me])
            return r;
    }
    return -1;
}

int fwdioi_local_partners(const int *writer_rank, int nwriters, const int *node, int nranks,
                          int *partner)
{
    int s = common_shift(writer_rank, nwriters, node), missing = 0;
    for (int w = 0; w < nwriters; w++) {
        partner[w] = s > 0 ? writer_rank[(w + s) % nwriters]
                           : own_partner(writer_rank, nwriters, node, nranks, w);
        missing += partner[w] < 0;
    }
    return missing;
}
