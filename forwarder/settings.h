/*
 * One configuration, four ways in. Every runtime setting (fwdio_config_t) and
 * file option (fwdio_options_t) has a key, e.g. writer_buffer or stripe_size.
 * A field the code leaves at 0 takes, in this order of precedence:
 *   1. the environment variable FWDIO_<KEY> (FWDIO_STRIPE_SIZE=1M),
 *   2. the `key = value` file named by FWDIO_CONFIG,
 *   3. the documented default.
 * MPI_Info hints (fwdio_options_set_info) write the fields they name, so they
 * count as set in code. Bad values and unknown keys are reported on stderr and
 * refused (FWDIO_EINVAL); unknown FWDIO_* variables are reported.
 */
#ifndef FWDIOI_SETTINGS_H
#define FWDIOI_SETTINGS_H

#include "fwdio.h"

/** Key/value pairs read from the FWDIO_CONFIG file. */
typedef struct fwdioi_settings_file {
    char *path;
    int n;
    char **keys, **values;
    int *lines;
} fwdioi_settings_file_t;

/** Read FWDIO_CONFIG (if set) and check its keys and values; report unknown
 *  FWDIO_* environment variables when `report` is set. FWDIO_OK or
 *  FWDIO_EINVAL (reason printed). */
int fwdioi_settings_load(fwdioi_settings_file_t *file, int report);
void fwdioi_settings_free(fwdioi_settings_file_t *file);

/** Fill the zero fields of `cfg` from the environment and the file. */
int fwdioi_settings_apply_config(const fwdioi_settings_file_t *file, fwdio_config_t *cfg);

/**
 * Fill the zero fields of `opts` from the environment and the file. A list of
 * writer ranks read from them is allocated into *list_storage (free it after
 * the options are used).
 */
int fwdioi_settings_apply_options(const fwdioi_settings_file_t *file, fwdio_options_t *opts,
                                  int **list_storage);

/** Print the effective runtime configuration (FWDIO_VERBOSE). */
void fwdioi_settings_print_config(const fwdio_config_t *cfg, FILE *out);

#endif
