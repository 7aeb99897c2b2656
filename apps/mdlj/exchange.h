/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communication of one MD step with the 6 face neighbours: atoms that left a
 * rank's region move to their new owner (migration), and every rank receives
 * ghost copies of the atoms within the cutoff of its region (halo), with the
 * periodic images shifted by the box length. Both go dimension by dimension
 * (x, then y, then z), which carries atoms to edge and corner neighbours in
 * two or three hops.
 *
 * Everything happens in a fixed order (owned atoms in id order, then ghosts in
 * arrival order), so the ghost list, and with it the order of every force
 * sum, is a function of the positions alone.
 */
#ifndef MDLJ_EXCHANGE_H
#define MDLJ_EXCHANGE_H

#include "atoms.h"
#include "domain.h"

/* Reusable message buffers. */
typedef struct md_exchange {
    double *send[2];
    size_t send_cap[2];
    double *recv;
    size_t recv_cap;
} md_exchange_t;

void exchange_init(md_exchange_t *ex);
void exchange_free(md_exchange_t *ex);

/*
 * Collective over dom->cart: send owned atoms that left this rank's region to
 * their owners, wrap positions into the box, and sort the owned atoms by id.
 * Ghosts are dropped. An atom that moved further than one region in one step
 * (an exploding simulation) or a failed allocation ends the job with a
 * message (MPI_Abort), as MD codes do when they lose atoms.
 */
void exchange_migrate(const md_domain_t *dom, md_exchange_t *ex, md_atoms_t *a);

/*
 * Collective over dom->cart: replace the ghosts by copies of every atom (owned
 * or ghost of a neighbour) within the cutoff of this rank's region. A failed
 * allocation ends the job with a message.
 */
void exchange_ghosts(const md_domain_t *dom, md_exchange_t *ex, md_atoms_t *a);

#endif
