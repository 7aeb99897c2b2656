/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdlj's command line: what to simulate, how often to write, and where.
 */
#ifndef MDLJ_OPTIONS_H
#define MDLJ_OPTIONS_H

#include <stdint.h>

/* Which path the trajectory and the checkpoints take to the file system. */
typedef enum md_output_mode {
    MD_OUT_FWDIO = 0, /* fwdio: nonblocking, forwarded to a few writer ranks */
    MD_OUT_MPIIO,     /* MPI_File_write_at_all with a file view per rank */
    MD_OUT_SERIAL,    /* gather to rank 0, which writes */
    MD_OUT_MPIIO_ASYNC, /* MPI_File_iwrite_at_all, waited for at the next output */
    MD_OUT_LOCAL_COPY,  /* checkpoints to a node-local file, copied by a thread (SCR's way) */
    MD_OUT_NONE       /* no output at all (the reference for output cost) */
} md_output_mode_t;

typedef struct md_options {
    int64_t atoms;            /* atoms in the box */
    int atoms_given;          /* --atoms was on the command line (a restart checks it) */
    int64_t steps;            /* the run ends at this step number (a restart continues up to it) */
    int64_t every;            /* a trajectory frame every `every` steps; 0: none */
    int64_t checkpoint_every; /* a checkpoint every so many steps; 0: none */
    md_output_mode_t output;
    const char *dcd_path;
    const char *checkpoint_path; /* checkpoints are <path>.<step> */
    int restart;              /* continue from the newest valid checkpoint (any rank count) */
    const char *dump_loaded;  /* restart: write the loaded state here (a checkpoint); NULL: no */
    uint64_t seed;
    double temperature;       /* initial temperature, reduced units */
    double density;           /* atoms per unit volume, reduced units */
    double dt;
    double cutoff;
    int64_t thermo;           /* print energies every so many steps; 0: first and last only */
    int verify;               /* gather every output on rank 0 and compare the files */
    int writers;              /* fwdio writer ranks (0: fwdio's default) */
    const char *local_dir;    /* node-local directory ("%h": host) of local-copy and fwdio's tier */
    int64_t crash_at;         /* abort after the data of this checkpoint, before its commit; -1: never */
} md_options_t;

/* Name of an output mode as spelled on the command line. */
const char *md_output_mode_name(md_output_mode_t mode);

/*
 * Parse argv into `opt` (defaults for what is not given). On an unknown
 * option or a bad or missing value prints the reason in one line on stderr
 * when `verbose` and returns -1; returns 1 for --help (usage printed to
 * stdout when `verbose`), else 0.
 */
int md_options_parse(int argc, char **argv, md_options_t *opt, int verbose);

#endif
