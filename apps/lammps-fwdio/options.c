/* SPDX-License-Identifier: BSD-3-Clause */
#include "options.h"

#include "dump_text.h"

#include <errno.h>
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
            "Without any output option the run writes nothing (the reference of time to\n"
            "solution). Rank 0 prints the time to solution: from the start of the run until\n"
            "every output file is complete and closed.\n",
            LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX);
}

static int parse_int64(const char *text, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int lfw_options_parse(int argc, char **argv, lfw_options_t *o, int verbose)
{
    *o = (lfw_options_t){.atoms = 4000, .steps = 100, .every = 10, .precision = 6,
                         .seed = 87287};
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            if (verbose)
                usage(stdout);
            return 1;
        }
        if (!strcmp(name, "--lammps-screen")) {
            o->lammps_screen = 1;
            continue;
        }
        if (!strcmp(name, "--append")) {
            o->append = 1;
            continue;
        }
        if (i + 1 >= argc) {
            if (verbose)
                fprintf(stderr, "lammps-fwdio: %s needs a value (or is unknown; see --help)\n",
                        name);
            return -1;
        }
        const char *value = argv[++i];
        int64_t v = 0;
        int bad = 0;
        if (!strcmp(name, "--atoms"))
            bad = parse_int64(value, 1, INT32_MAX, &o->atoms);
        else if (!strcmp(name, "--steps"))
            bad = parse_int64(value, 0, INT32_MAX, &o->steps);
        else if (!strcmp(name, "--every"))
            bad = parse_int64(value, 1, INT32_MAX, &o->every);
        else if (!strcmp(name, "--precision")) {
            bad = parse_int64(value, LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX, &v);
            o->precision = (int)v;
        } else if (!strcmp(name, "--seed")) {
            bad = parse_int64(value, 1, INT32_MAX, &v);
            o->seed = (int)v;
        } else if (!strcmp(name, "--writers")) {
            bad = parse_int64(value, 1, INT32_MAX, &v);
            o->writers = (int)v;
        } else if (!strcmp(name, "--dump"))
            o->dump = value;
        else if (!strcmp(name, "--binary"))
            o->binary = value;
        else if (!strcmp(name, "--native"))
            o->native = value;
        else if (!strcmp(name, "--mpiio"))
            o->mpiio = value;
        else if (!strcmp(name, "--idle"))
            o->idle = value;
        else if (!strcmp(name, "--lammps-log"))
            o->lammps_log = value;
        else if (!strcmp(name, "--format")) {
            bad = strcmp(value, "fixed") != 0 && strcmp(value, "lammps") != 0;
            o->lammps_format = !strcmp(value, "lammps");
        } else if (!strcmp(name, "--delete-at"))
            bad = parse_int64(value, 1, INT32_MAX, &o->delete_at);
        else {
            if (verbose)
                fprintf(stderr, "lammps-fwdio: unknown option %s (see --help)\n", name);
            return -1;
        }
        if (bad) {
            if (verbose)
                fprintf(stderr, "lammps-fwdio: bad value \"%s\" for %s (see --help)\n", value,
                        name);
            return -1;
        }
    }
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
