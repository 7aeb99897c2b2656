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
_Static_assert(sizeof(fwdio_config_t) == 128, "fwdio_config_t changed size: take new fields from reserved");
_Static_assert(sizeof(fwdio_options_t) == 144, "fwdio_options_t changed size: take new fields from reserved");
_Static_assert(sizeof(fwdio_callbacks_t) == 56, "fwdio_callbacks_t changed size: take new fields from reserved");
_Static_assert(sizeof(fwdio_error_info_t) == 56, "fwdio_error_info_t changed size: take new fields from reserved");
_Static_assert(sizeof(fwdio_file_stats_t) == 176, "fwdio_file_stats_t changed size: take new fields from reserved");
_Static_assert(sizeof(fwdio_runtime_stats_t) == 120, "fwdio_runtime_stats_t changed size: take new fields from reserved");
#endif
