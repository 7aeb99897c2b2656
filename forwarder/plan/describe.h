/* SPDX-License-Identifier: BSD-3-Clause */
/* Printing a plan (describe.c), for fwdio_plan_describe and FWDIO_VERBOSE. */
#ifndef FWDIOI_DESCRIBE_H
#define FWDIOI_DESCRIBE_H

#include "fwdio.h"
#include "plan/topology.h"

#include <stdio.h>

int fwdioi_plan_print(const fwdioi_topology_t *topo, uint64_t size, const fwdio_options_t *opts,
                      int json, FILE *out);

#endif
