/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who keeps a writer's partner copy (local_copies 2, node-local tier): a
 * pure function of the writer ranks and the node of every rank, computed
 * alike on every rank (partner.c).
 */
#ifndef FWDIOI_LOCAL_PARTNER_H
#define FWDIOI_LOCAL_PARTNER_H

/**
 * Fill partner[w] for each of the `nwriters` writers (ranks `writer_rank`,
 * `node[r]` the node of rank r of `nranks`): the rank that keeps writer w's
 * partner copy, always on another node than w's. The writers are shifted by
 * the smallest s for which every writer w + s (mod nwriters) sits on another
 * node than w, so each writer keeps exactly one copy (writers placed
 * node by node, two per node: s = 2); where no shift fits every writer, each
 * takes the next writer (in writer order) on another node, else the next
 * rank (in rank order, cyclically) on another node. -1 when every rank
 * shares w's node. Returns how many writers have no partner.
 */
int fwdioi_local_partners(const int *writer_rank, int nwriters, const int *node, int nranks,
                          int *partner);

#endif
