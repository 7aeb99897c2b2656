/* SPDX-License-Identifier: BSD-3-Clause */
#include "options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"fwdio", "mpiio", "serial", "none"};

const char *md_output_mode_name(md_output_mode_t mode)
{
    return (unsigned)mode < sizeof mode_names / sizeof mode_names[0] ? mode_names[mode] : "?";
}

static void print_usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [options]\n"
            "  --atoms N              atoms in the periodic box (default 32000)\n"
            "  --steps S              run until step S; a restart continues up to S (default 100)\n"
            "  --every K              a DCD frame every K steps, 0 for none (default 10)\n"
            "  --checkpoint-every C   a checkpoint every C steps, 0 for none (default: K)\n"
            "  --output MODE          fwdio | mpiio | serial | none (default fwdio)\n"
            "  --dcd PATH             trajectory file (default mdlj.dcd)\n"
            "  --checkpoint PATH      checkpoints are PATH.<step> (default mdlj.ckpt)\n"
            "  --restart              continue from the newest valid checkpoint PATH.<step>,\n"
            "                         on any number of ranks (read through fwdio with --output\n"
            "                         fwdio); bit for bit on the rank count that wrote it\n"
            "  --seed X               seed of the initial velocities (default 12345)\n"
            "  --temperature T        initial temperature, reduced units (default 1.44)\n"
            "  --density RHO          reduced density (default 0.8442)\n"
            "  --dt DT                time step (default 0.005)\n"
            "  --thermo N             print energies every N steps, 0: first and last (default 100)\n"
            "  --verify               gather every output on rank 0 and compare the file bytes\n"
            "  --writers W            fwdio writer ranks (default: fwdio's)\n"
            "  --crash-at STEP        abort the job after writing the data of the checkpoint of\n"
            "                         STEP but before its commit record (for testing restart)\n"
            "  --dump-loaded FILE     with --restart: write the atoms the ranks loaded, gathered\n"
            "                         by id, as a checkpoint file FILE, which equals the one\n"
            "                         read byte for byte (for testing restart)\n",
            prog);
}

static int parse_i64(const char *text, int64_t min, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min)
        return -1;
    *out = (int64_t)v;
    return 0;
}

static int parse_u64(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || end == text || *end != '\0' || text[0] == '-')
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_positive_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !(v > 0.0) || v > 1e300)
        return -1;
    *out = v;
    return 0;
}

static int parse_mode(const char *text, md_output_mode_t *out)
{
    for (unsigned i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
        if (strcmp(text, mode_names[i]) == 0) {
            *out = (md_output_mode_t)i;
            return 0;
        }
    }
    return -1;
}

int md_options_parse(int argc, char **argv, md_options_t *opt, int verbose)
{
    *opt = (md_options_t){
        .atoms = 32000,
        .steps = 100,
        .every = 10,
        .checkpoint_every = -1,
        .output = MD_OUT_FWDIO,
        .dcd_path = "mdlj.dcd",
        .checkpoint_path = "mdlj.ckpt",
        .seed = 12345,
        .temperature = 1.44,
        .density = 0.8442,
        .dt = 0.005,
        .cutoff = 2.5,
        .thermo = 100,
        .crash_at = -1,
    };
    const char *prog = argc > 0 ? argv[0] : "mdlj";
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
            if (verbose)
                print_usage(stdout, prog);
            return 1;
        }
        int bad = 0;
        if (strcmp(name, "--restart") == 0) {
            opt->restart = 1;
            continue;
        }
        if (strcmp(name, "--verify") == 0) {
            opt->verify = 1;
            continue;
        }
        if (i + 1 >= argc) {
            if (verbose) {
                fprintf(stderr, "%s: %s needs a value (or is unknown)\n", prog, name);
                print_usage(stderr, prog);
            }
            return -1;
        }
        const char *value = argv[++i];
        int64_t i64 = 0;
        if (strcmp(name, "--atoms") == 0) {
            bad = parse_i64(value, 1, &opt->atoms);
            opt->atoms_given = 1;
        } else if (strcmp(name, "--steps") == 0)
            bad = parse_i64(value, 0, &opt->steps);
        else if (strcmp(name, "--every") == 0)
            bad = parse_i64(value, 0, &opt->every);
        else if (strcmp(name, "--checkpoint-every") == 0)
            bad = parse_i64(value, 0, &opt->checkpoint_every);
        else if (strcmp(name, "--output") == 0)
            bad = parse_mode(value, &opt->output);
        else if (strcmp(name, "--dcd") == 0)
            opt->dcd_path = value;
        else if (strcmp(name, "--checkpoint") == 0)
            opt->checkpoint_path = value;
        else if (strcmp(name, "--dump-loaded") == 0)
            bad = (opt->dump_loaded = value)[0] == '\0';
        else if (strcmp(name, "--seed") == 0)
            bad = parse_u64(value, &opt->seed);
        else if (strcmp(name, "--temperature") == 0)
            bad = parse_positive_double(value, &opt->temperature);
        else if (strcmp(name, "--density") == 0)
            bad = parse_positive_double(value, &opt->density);
        else if (strcmp(name, "--dt") == 0)
            bad = parse_positive_double(value, &opt->dt);
        else if (strcmp(name, "--thermo") == 0)
            bad = parse_i64(value, 0, &opt->thermo);
        else if (strcmp(name, "--writers") == 0) {
            bad = parse_i64(value, 0, &i64) || i64 > 1 << 20;
            opt->writers = (int)i64;
        } else if (strcmp(name, "--crash-at") == 0)
            bad = parse_i64(value, 1, &opt->crash_at);
        else {
            if (verbose) {
                fprintf(stderr, "%s: unknown option %s\n", prog, name);
                print_usage(stderr, prog);
            }
            return -1;
        }
        if (bad) {
            if (verbose)
                fprintf(stderr, "%s: bad value '%s' for %s\n", prog, value, name);
            return -1;
        }
    }
    if (opt->checkpoint_every < 0)
        opt->checkpoint_every = opt->every;
    if (opt->dcd_path[0] == '\0' || opt->checkpoint_path[0] == '\0') {
        if (verbose)
            fprintf(stderr, "%s: --dcd and --checkpoint need a non-empty path\n", prog);
        return -1;
    }
    return 0;
}
