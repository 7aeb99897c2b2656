/* Runtime configuration: defaults, environment variables, checks. */
#ifndef FWDIOI_CONFIG_H
#define FWDIOI_CONFIG_H

#include "fwdio.h"

/** Parse "123", "64K", "8M", "2GiB", "1G" (binary units) into bytes; 0 or -1. */
int fwdioi_parse_size(const char *text, uint64_t *out);

/** Smallest combine_size in force (other than 1, off): a header, one piece
 *  and some data. */
#define FWDIOI_COMBINE_MIN ((size_t)64)

/** Fill in defaults and check; FWDIO_OK or FWDIO_EINVAL. */
int fwdioi_config_resolve(const fwdio_config_t *in, fwdio_config_t *out);

#endif
