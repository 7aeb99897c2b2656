/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype's constructor and its arguments, whichever constructor (int or
 * MPI 4's MPI_Count one) made it: what the layer's type analysis reads. */
#ifndef FWDIO_MPIIO_TYPE_CONTENTS_H
#define FWDIO_MPIIO_TYPE_CONTENTS_H

#include <mpi.h>
#include <stdint.h>

/* MPI_Type_get_contents' answer in the int-count constructors' layout
 * (MPI-4.0, section 5.1.13): for MPI_Type_create_hvector_c, say, ints {count,
 * blocklength} and addrs {stride}, as for MPI_Type_create_hvector. */
typedef struct mpiio_type_contents {
    int combiner;         /* MPI_COMBINER_* */
    int64_t *ints;        /* the integer arguments (nints) */
    int64_t *addrs;       /* the address arguments (naddrs) */
    MPI_Datatype *types;  /* the datatype arguments (ntypes; derived ones are
                             new handles, freed with the contents) */
    int64_t nints, naddrs, ntypes;
} mpiio_type_contents_t;

/* The combiner of `t` (MPI_COMBINER_NAMED for a predefined type); -1 if MPI
 * refuses to say. */
int mpiio_type_combiner(MPI_Datatype t);

/* The contents of `t` into *c (nothing but the combiner for a named type):
 * 0, or -1 (no memory, or MPI refused; *c is then empty). */
int mpiio_type_contents(MPI_Datatype t, mpiio_type_contents_t *c);
void mpiio_type_contents_free(mpiio_type_contents_t *c);

#endif
