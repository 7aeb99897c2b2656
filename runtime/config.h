/* Runtime configuration: defaults, environment variables, checks. */
#ifndef FWDIOI_CONFIG_H
#define FWDIOI_CONFIG_H

#include "fwdio.h"

/** Smallest combine_size in force (other than 1, off): a header, one piece
 *  and some data. */
#define FWDIOI_COMBINE_MIN ((size_t)64)

/** Fill in defaults and check; FWDIO_OK or FWDIO_EINVAL. */
int fwdioi_config_resolve(const fwdio_config_t *in, fwdio_config_t *out);

#endif
