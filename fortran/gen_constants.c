/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prints the Fortran module's constants from the C header, so the two never
 * disagree: the status codes (FWDIO_STATUS_LIST) and the size constants, as
 * Fortran parameter declarations (run at build time; its output is
 * fwdio_constants.inc, included by fwdio.F90).
 */
#include "fwdio.h"

#include <inttypes.h>
#include <stdio.h>

int main(void)
{
    printf("! Generated from fwdio.h by gen_constants.c: do not edit.\n");
#define FWDIO_X_PARAM(name, value, text)                                                      \
    printf("integer, parameter, public :: %s = %d  !< %s\n", #name, (int)(value), text);
    FWDIO_STATUS_LIST(FWDIO_X_PARAM)
#undef FWDIO_X_PARAM
    /* C's UINT64_MAX is -1 as a signed 64-bit integer: the same bits. */
    printf("integer(c_int64_t), parameter, public :: FWDIO_SIZE_GROWS = %" PRId64 "_c_int64_t\n",
           (int64_t)FWDIO_SIZE_GROWS);
    printf("integer(c_int64_t), parameter, public :: FWDIO_STREAM_MAX_SIZE = %" PRId64
           "_c_int64_t\n",
           (int64_t)FWDIO_STREAM_MAX_SIZE);
    printf("integer(c_int64_t), parameter, public :: FWDIO_DEFAULT_WRITE_SIZE = %" PRId64
           "_c_int64_t\n",
           (int64_t)FWDIO_DEFAULT_WRITE_SIZE);
    return 0;
}
