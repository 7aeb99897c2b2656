/* SPDX-License-Identifier: BSD-3-Clause */
/* The state one rank hands to the output at a step: its owned atoms. */
#ifndef MDLJ_SNAPSHOT_H
#define MDLJ_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

typedef struct md_snapshot {
    int64_t step;
    size_t n;          /* owned atoms */
    const int64_t *id; /* ascending */
    const double *x;   /* 3 per atom */
    const double *v;   /* 3 per atom */
} md_snapshot_t;

#endif
