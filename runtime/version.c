/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The library's version, and the sizes of the public structs checked at
 * compile time: a field added to a struct must take its room from the
 * struct's reserved tail, so that programs built against an older fwdio.h
 * keep working (fwdio.h, "Growing the structs").
 */
#include "fwdio.h"

const char *fwdio_version(void) { return FWDIO_VERSION_STRING; }

int fwdio_version_number(void) { return FWDIO_VERSION_NUMBER; }

/* The sizes of the 0.1 layouts on LP64 systems (Linux x86_64, aarch64). A
 * change here breaks binaries built against an earlier fwdio.h. */
#if UINTPTR_MAX == UINT64_MAX
#define FWDIOI_SIZE_IS(type, bytes) \
    _Static_assert(sizeof(type) == (bytes), #type " changed size: take new fields from reserved")
FWDIOI_SIZE_IS(fwdio_config_t, 128);
FWDIOI_SIZE_IS(fwdio_options_t, 144);
FWDIOI_SIZE_IS(fwdio_callbacks_t, 56);
FWDIOI_SIZE_IS(fwdio_error_info_t, 56);
FWDIOI_SIZE_IS(fwdio_file_stats_t, 176);
FWDIOI_SIZE_IS(fwdio_runtime_stats_t, 120);
#endif
