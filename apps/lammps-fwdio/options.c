/* SPDX-License-Identifier: BSD-3-Clause */
#include "options.h"

#include "cli.h"
#include "dump_text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lammps-fwdio [--atoms N] [--steps S] [--every K] [--dump PATH]\n"
            "                    [--binary PATH] [--native PATH] [--mpiio PATH] [--idle PATH]\n"
            "                    [--precision P] [--seed N] [--writers W]\n"
            "                    [--lammps-log PATH] [--lammps-screen]\n"
            "                    [--format fixed|lammps] [--delete-at STEP] [--append]\n"
            "Runs LAMMPS's 3d Lennard-Jones melt (fcc 0.8442, lj/cut 2.5, fix nve) for S steps\n"
            "and writes a snapshot of every atom's id type x y z every K steps.\n"
            "  --atoms N         at least N atoms: the smallest fcc cube with 4*n^3 >= N (4000)\n"
            "  --steps S         steps of the run (100)\n"
            "  --every K         steps between snapshots; steps 0, K, 2K, ... <= S (10)\n"
            "  --dump PATH       text dump through fwdio, byte for byte LAMMPS's dump custom\n"
            "  --binary PATH     binary dump through fwdio (layout in apps/lammps-fwdio/README.md)\n"
            "  --native PATH     LAMMPS's own dump custom of the same run, same format\n"
            "  --mpiio PATH      LAMMPS's dump custom/mpiio of the same run (its own spacing)\n"
            "  --idle PATH       reference run: fwdio started, an empty file PATH open through\n"
            "                    the run, nothing written (fwdio's progress thread polls MPI,\n"
            "                    which also moves LAMMPS's own messages along)\n"
            "  --precision P     decimals of the text coordinates, %d..%d (6)\n"
            "  --seed N          seed of the initial velocities (87287)\n"
            "  --writers W       fwdio writer ranks (fwdio's default)\n"
            "  --lammps-log PATH LAMMPS's log file (none); LAMMPS errors are reported there\n"
            "  --lammps-screen   LAMMPS's screen output on stdout (and its errors)\n"
            "  --format F        text dump format: fixed (a fixed-width format line, atoms\n"
            "                    sorted by id, each written at its place; the default) or\n"
            "                    lammps (LAMMPS's default dump custom format: variable-width\n"
            "                    numbers, each rank's atoms after the lower ranks', appended\n"
            "                    to a fwdio stream with fwdio_append, a step per snapshot)\n"
            "  --delete-at STEP  run STEP steps, delete the atoms in a sphere at the box's\n"
            "                    centre, run the rest (the atom count changes; lammps format)\n"
            "  --append          append to existing dumps, as dump_modify append yes (lammps\n"
            "                    format)\n"
            "  --local-dir DIR   write the fwdio dumps through fwdio's node-local tier in DIR\n"
            "                    (\"%%h\" the host name): a snapshot completes in the nodes'\n"
            "                    stores, the dump reaches its path when drained after the run\n"
            "                    (also the stream of --format lammps, which FWDIO_LOCAL_DIR\n"
            "                    alone leaves straight)\n"
            "  --help            this text\n"
            "Without any output option the run writes nothing (the reference of time to\n"
            "solution). Rank 0 prints the time to solution: from the start of the run until\n"
            "every output file is complete and closed.\n",
            LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX);
}

enum {
    OPT_ATOMS = 256, OPT_STEPS, OPT_EVERY, OPT_DUMP, OPT_BINARY, OPT_NATIVE, OPT_MPIIO, OPT_IDLE,
    OPT_PRECISION, OPT_SEED, OPT_WRITERS, OPT_LAMMPS_LOG, OPT_LAMMPS_SCREEN, OPT_FORMAT,
    OPT_DELETE_AT, OPT_APPEND, OPT_LOCAL_DIR
};

static const struct option options[] = {
    {"atoms", required_argument, NULL, OPT_ATOMS},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"every", required_argument, NULL, OPT_EVERY},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"binary", required_argument, NULL, OPT_BINARY},
    {"native", required_argument, NULL, OPT_NATIVE},
    {"mpiio", required_argument, NULL, OPT_MPIIO},
    {"idle", required_argument, NULL, OPT_IDLE},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"seed", required_argument, NULL, OPT_SEED},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"lammps-log", required_argument, NULL, OPT_LAMMPS_LOG},
    {"lammps-screen", no_argument, NULL, OPT_LAMMPS_SCREEN},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"delete-at", required_argument, NULL, OPT_DELETE_AT},
    {"append", no_argument, NULL, OPT_APPEND},
    {"local-dir", required_argument, NULL, OPT_LOCAL_DIR},
    CLI_HELP_OPTION,
    {0}};

/* One option; 0, or CLI_BAD after the message. */
static int parse_option(cli_t *c, int key, void *ctx)
{
    lfw_options_t *o = ctx;
    static const char *const formats[] = {"fixed", "lammps"};
    switch (key) {
    case OPT_ATOMS: return cli_i64(c, 1, INT32_MAX, &o->atoms);
    case OPT_STEPS: return cli_i64(c, 0, INT32_MAX, &o->steps);
    case OPT_EVERY: return cli_i64(c, 1, INT32_MAX, &o->every);
    case OPT_PRECISION:
        return cli_int(c, LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX, &o->precision);
    case OPT_SEED: return cli_int(c, 1, INT32_MAX, &o->seed);
    case OPT_WRITERS: return cli_int(c, 1, INT32_MAX, &o->writers);
    case OPT_DUMP: o->dump = c->arg; return 0;
    case OPT_BINARY: o->binary = c->arg; return 0;
    case OPT_NATIVE: o->native = c->arg; return 0;
    case OPT_MPIIO: o->mpiio = c->arg; return 0;
    case OPT_IDLE: o->idle = c->arg; return 0;
    case OPT_LAMMPS_LOG: o->lammps_log = c->arg; return 0;
    case OPT_LAMMPS_SCREEN: o->lammps_screen = 1; return 0;
    case OPT_FORMAT: return cli_choice(c, formats, 2, &o->lammps_format);
    case OPT_DELETE_AT: return cli_i64(c, 1, INT32_MAX, &o->delete_at);
    case OPT_APPEND: o->append = 1; return 0;
    case OPT_LOCAL_DIR: o->local_dir = c->arg; return 0;
    default: return CLI_BAD; /* cli_next printed why */
    }
}

int lfw_options_parse(int argc, char **argv, lfw_options_t *o, int verbose)
{
    *o = (lfw_options_t){.atoms = 4000, .steps = 100, .every = 10, .precision = 6,
                         .seed = 87287};
    cli_t c;
    cli_begin(&c, "lammps-fwdio", argc, argv, options, !verbose);
    int parsed = cli_parse(&c, parse_option, o, usage, 0);
    if (parsed != 0)
        return parsed == 1 ? 1 : -1;
    /* A fixed layout needs a constant atom count and a file of its own. */
    const char *needs = !o->lammps_format && o->delete_at ? "--delete-at"
                        : !o->lammps_format && o->append   ? "--append"
                        : o->lammps_format && o->binary     ? "--binary (a fixed layout)"
                                                            : NULL;
    if (needs) {
        if (verbose)
            fprintf(stderr, "lammps-fwdio: %s %s\n", needs,
                    o->lammps_format ? "does not go with --format lammps"
                                     : "needs --format lammps");
        return -1;
    }
    if (o->delete_at && o->delete_at >= o->steps) {
        if (verbose)
            fprintf(stderr, "lammps-fwdio: --delete-at %lld must be below --steps %lld\n",
                    (long long)o->delete_at, (long long)o->steps);
        return -1;
    }
    return 0;
}
