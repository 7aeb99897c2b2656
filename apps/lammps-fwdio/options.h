/* SPDX-License-Identifier: BSD-3-Clause */
/* Command line of lammps-fwdio. */
#ifndef LFW_OPTIONS_H
#define LFW_OPTIONS_H

#include <stdint.h>

typedef struct lfw_options {
    int64_t atoms;         /**< at least this many atoms (default 4000) */
    int64_t steps;         /**< steps of the run (default 100) */
    int64_t every;         /**< steps between snapshots (default 10) */
    int precision;         /**< decimals of the text coordinates (default 6) */
    int seed;              /**< velocity seed (default 87287, as examples/melt) */
    int writers;           /**< fwdio writers; 0: fwdio's default */
    const char *dump;      /**< fwdio text dump, or NULL */
    const char *binary;    /**< fwdio binary dump, or NULL */
    const char *native;    /**< LAMMPS's own dump custom, or NULL */
    const char *mpiio;     /**< LAMMPS's dump custom/mpiio, or NULL */
    const char *idle;      /**< fwdio reference: an empty file kept open, or NULL */
    const char *lammps_log; /**< LAMMPS log file, or NULL for none */
    int lammps_format;     /**< non-zero: LAMMPS's default dump custom format, appended */
    int64_t delete_at;     /**< > 0: delete the atoms of a sphere after this many steps */
    int append;            /**< non-zero: append to existing dumps (dump_modify append yes) */
    int lammps_screen;     /**< non-zero: LAMMPS's screen output on stdout */
    const char *local_dir; /**< fwdio's node-local tier for the dumps ("%h": the host), or NULL */
} lfw_options_t;

/**
 * Parse argv into o (defaults first). Returns 0 to run, 1 after --help
 * (usage printed), -1 on a bad option (message printed). `verbose` non-zero
 * prints the messages (rank 0).
 */
int lfw_options_parse(int argc, char **argv, lfw_options_t *o, int verbose);

#endif
