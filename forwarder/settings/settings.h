/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One configuration, four ways in. Every runtime setting (fwdio_config_t) and
 * file option (fwdio_options_t) has a key, e.g. writer_buffer or stripe_size.
 * A field the code sets (not 0, or pinned in the struct's `pinned` mask)
 * keeps the code's value; any other takes, in this order of precedence:
 *   1. the environment variable FWDIO_<KEY> (FWDIO_STRIPE_SIZE=1M),
 *   2. the `key = value` file named by FWDIO_CONFIG, which rank 0 reads at
 *      fwdio_init and broadcasts,
 *   3. the documented default.
 * MPI_Info hints (fwdio_options_set_info) write and pin the fields they name,
 * so they count as set in code. Bad values and unknown keys are refused
 * (FWDIO_EINVAL) with a line on stderr naming where they came from
 * (refuse.h); unknown FWDIO_* variables are reported.
 */
#ifndef FWDIOI_SETTINGS_H
#define FWDIOI_SETTINGS_H

#include "fwdio.h"
#include "refuse.h"

/** More than there are keys of both structs. */
enum { FWDIOI_SETTINGS_MAX_KEYS = 40 };

/** The FWDIO_CONFIG file as rank 0 read it (key/value pairs), and what the
 *  ranks agreed about their environments at fwdio_init. */
typedef struct fwdioi_settings_file {
    char *path; /* rank 0's FWDIO_CONFIG, or NULL */
    int n;
    char **keys, **values;
    int *lines;
    uint64_t env_hash; /* of this rank's FWDIO_* variables at init */
    int env_shared;    /* every rank had the same FWDIO_* variables at init */
} fwdioi_settings_file_t;

/** Where each key of one struct came from, filled by the apply functions and
 *  read by the checks through `base` when they refuse a value. */
typedef struct fwdioi_settings_origins {
    fwdioi_origins_t base; /* first: the checks get &base */
    const fwdioi_settings_file_t *file;
    int env_shared; /* the environment now is the one every rank had at init */
    unsigned char from[FWDIOI_SETTINGS_MAX_KEYS];
    int line[FWDIOI_SETTINGS_MAX_KEYS];
} fwdioi_settings_origins_t;

/**
 * Origins for one struct, before an apply function fills them: printed by
 * rank 0 only when shared by every rank (rank0_only_if_shared), else by each
 * refusing rank; `rank` -1 outside an MPI call.
 */
void fwdioi_settings_origins_init(fwdioi_settings_origins_t *o, const fwdioi_settings_file_t *file,
                                  int rank, int rank0_only_if_shared);

/**
 * fwdio_init, before any collective: refuse a bad `cfg` (NULL is fine) on
 * this rank, with the reason. FWDIO_OK or FWDIO_EINVAL.
 */
int fwdioi_settings_check_args(const fwdio_config_t *cfg, int rank);

/**
 * fwdio_init, collective over `comm`: rank 0 reads FWDIO_CONFIG (if set),
 * checks its keys and values and broadcasts it; every rank parses the same
 * text. Rank 0 also reports unknown FWDIO_* variables. FWDIO_OK, or
 * FWDIO_EINVAL (rank 0 prints why), FWDIO_EMPI, FWDIO_ENOMEM on this rank;
 * follow with fwdioi_settings_agree in any case.
 */
int fwdioi_settings_load(fwdioi_settings_file_t *file, MPI_Comm comm);

/**
 * fwdio_init, collective over `comm`: agree on the status `rc` of this
 * rank's settings. Returns FWDIO_OK on every rank, or an error on every rank
 * (this rank's own, else that of the lowest rank that failed). Reports held
 * with fwdioi_report_hold() are printed by the lowest failing rank only (by
 * every rank when none failed), then released. Also records whether every
 * rank has the same FWDIO_* environment (file->env_shared).
 */
int fwdioi_settings_agree(fwdioi_settings_file_t *file, MPI_Comm comm, int rc);

void fwdioi_settings_free(fwdioi_settings_file_t *file);

/** fwdio_open: refuse callbacks (NULL is fine) whose reserved tail is not
 *  zero, with the reason. FWDIO_OK or FWDIO_EINVAL. */
int fwdioi_settings_check_callbacks(const fwdio_callbacks_t *cbs);

/**
 * Fill the fields of `cfg` the code did not set from the environment and the
 * file, and check the result (fwdioi_config_check), with the reason of a
 * refusal (never deduplicated: fwdio_init agrees on the result and prints
 * once). FWDIO_OK or FWDIO_EINVAL.
 */
int fwdioi_settings_apply_config(const fwdioi_settings_file_t *file, fwdio_config_t *cfg, int rank);

/**
 * Fill the fields of `opts` the code did not set from the environment and
 * the file, recording where each came from in `why` (from
 * fwdioi_settings_origins_init). A list of writer ranks read from them is
 * allocated into *list_storage (free it after the options are used).
 * FWDIO_OK, FWDIO_EINVAL (reason printed), FWDIO_ENOMEM.
 */
int fwdioi_settings_apply_options(const fwdioi_settings_file_t *file, fwdio_options_t *opts,
                                  int **list_storage, fwdioi_settings_origins_t *why);

/** Whether `key` of the struct `o` describes was set by the code (or an
 *  MPI_Info hint), not taken from the environment, the file or the
 *  default. */
int fwdioi_settings_from_code(const fwdioi_settings_origins_t *o, const char *key);

/** Print the effective runtime configuration (FWDIO_VERBOSE). */
void fwdioi_settings_print_config(const fwdio_config_t *cfg, FILE *out);

#endif
