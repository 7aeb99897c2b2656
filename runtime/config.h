/* Runtime configuration: defaults, environment variables, checks. */
#ifndef FWDIOI_CONFIG_H
#define FWDIOI_CONFIG_H

#include "fwdio.h"
#include "refuse.h"

/** Smallest combine_size in force (other than 1, off): a header, one piece
 *  and some data. */
#define FWDIOI_COMBINE_MIN ((size_t)64)

/** The range of max_message_size (0 is the default, 8 MiB). */
#define FWDIOI_MAX_MESSAGE_MIN ((size_t)4096)
#define FWDIOI_MAX_MESSAGE_MAX ((size_t)1 << 30)

/**
 * Check the values fwdioi_config_resolve refuses (callback_mode,
 * max_message_size, the reserved tail), saying why through `why` (refuse.h;
 * NULL: origins unknown). FWDIO_OK or FWDIO_EINVAL.
 */
int fwdioi_config_check(const fwdio_config_t *cfg, fwdioi_origins_t *why);

/** Fill in defaults and check (fwdioi_config_check, origins unknown);
 *  FWDIO_OK or FWDIO_EINVAL. */
int fwdioi_config_resolve(const fwdio_config_t *in, fwdio_config_t *out);

#endif
