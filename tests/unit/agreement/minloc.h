/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_MINLOC over the agreements' pairs (agreement/agree.h), as the MPI
 * standard defines it (MPI 4.0, 6.9.4), for the tests that play the other
 * ranks of an agreement. */
#ifndef FWDIO_UNIT_MINLOC_H
#define FWDIO_UNIT_MINLOC_H

#include "agreement/agree.h"

/* MPI_MINLOC of `n` pairs of `in` into `inout`. */
static inline void minloc(const fwdioi_agree_pair_t *in, fwdioi_agree_pair_t *inout, int n)
{
    for (int i = 0; i < n; i++) {
        if (in[i].key < inout[i].key)
            inout[i] = in[i];
        else if (in[i].key == inout[i].key && in[i].val < inout[i].val)
            inout[i].val = in[i].val;
    }
}

#endif
