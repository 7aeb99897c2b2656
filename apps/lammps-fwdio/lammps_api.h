/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LAMMPS C library interface as lammps-fwdio uses it: library.h with its
 * MPI functions enabled, and the integer types of the fix external callback,
 * which depend on how LAMMPS was built (-DLAMMPS_SMALLBIG, the default and
 * Debian's choice, gives 32-bit atom ids and 64-bit timesteps).
 */
#ifndef LFW_LAMMPS_API_H
#define LFW_LAMMPS_API_H

#include <mpi.h>
#include <stdint.h>

#define LAMMPS_LIB_MPI 1
#include <lammps/library.h>

#if defined(LAMMPS_BIGBIG)
typedef int64_t lfw_tag_t;  /* LAMMPS tagint: atom ids */
typedef int64_t lfw_step_t; /* LAMMPS bigint: timesteps */
#elif defined(LAMMPS_SMALLSMALL)
typedef int lfw_tag_t;
typedef int lfw_step_t;
#else
typedef int lfw_tag_t;
typedef int64_t lfw_step_t;
#endif

#endif
