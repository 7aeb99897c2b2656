/* SPDX-License-Identifier: BSD-3-Clause */
#include "options.h"

#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"fwdio", "mpiio", "serial", "mpiio-async",
                                            "local-copy", "none"};

const char *md_output_mode_name(md_output_mode_t mode)
{
    return (unsigned)mode < sizeof mode_names / sizeof mode_names[0] ? mode_names[mode] : "?";
}

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: mdlj [options]\n"
            "  --atoms N              atoms in the periodic box (default 32000)\n"
            "  --steps S              run until step S; a restart continues up to S (default 100)\n"
            "  --every K              a DCD frame every K steps, 0 for none (default 10)\n"
            "  --checkpoint-every C   a checkpoint every C steps, 0 for none (default: K)\n"
            "  --output MODE          fwdio | mpiio | serial | mpiio-async | local-copy | none\n"
            "                         (default fwdio): mpiio-async hands each output to\n"
            "                         MPI_File_iwrite_at_all and waits at the next one;\n"
            "                         local-copy writes each rank's part of a checkpoint to\n"
            "                         --local-dir and a thread copies it to the file (as SCR)\n"
            "  --local-dir DIR        node-local directory (\"%%h\": the host name, \"%%%%\": '%%'):\n"
            "                         of --output local-copy, and with --output fwdio the\n"
            "                         checkpoints go through fwdio's node-local tier: complete\n"
            "                         there, drained to their path in the background; one\n"
            "                         counts (and older ones go) once drained\n"
            "  --dcd PATH             trajectory file (default mdlj.dcd)\n"
            "  --checkpoint PATH      checkpoints are PATH.<step> (default mdlj.ckpt); with\n"
            "                         --output fwdio versions of fwdio's checkpoint set PATH:\n"
            "                         PATH.v<step>.ckpt and its manifest PATH.v<step>.manifest\n"
            "  --restart              continue from the newest valid checkpoint,\n"
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
            "                         read byte for byte (for testing restart)\n"
            "  --help                 this text\n");
}

static int parse_mode(cli_t *c, md_output_mode_t *out)
{
    int i;
    if (cli_choice(c, mode_names, (int)(sizeof mode_names / sizeof mode_names[0]), &i))
        return CLI_BAD;
    *out = (md_output_mode_t)i;
    return 0;
}

/* A positive number of reduced units. */
static int parse_positive(cli_t *c, double *out)
{
    if (cli_double(c, 0, 1e300, out))
        return CLI_BAD;
    return *out > 0 ? 0 : cli_bad_value(c, "a number above 0");
}

enum {
    OPT_ATOMS = 256, OPT_STEPS, OPT_EVERY, OPT_CHECKPOINT_EVERY, OPT_OUTPUT, OPT_DCD,
    OPT_CHECKPOINT, OPT_RESTART, OPT_SEED, OPT_TEMPERATURE, OPT_DENSITY, OPT_DT, OPT_THERMO,
    OPT_VERIFY, OPT_WRITERS, OPT_CRASH_AT, OPT_DUMP_LOADED, OPT_LOCAL_DIR
};

static const struct option options[] = {
    {"atoms", required_argument, NULL, OPT_ATOMS},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"every", required_argument, NULL, OPT_EVERY},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"dcd", required_argument, NULL, OPT_DCD},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"restart", no_argument, NULL, OPT_RESTART},
    {"seed", required_argument, NULL, OPT_SEED},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"density", required_argument, NULL, OPT_DENSITY},
    {"dt", required_argument, NULL, OPT_DT},
    {"thermo", required_argument, NULL, OPT_THERMO},
    {"verify", no_argument, NULL, OPT_VERIFY},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"crash-at", required_argument, NULL, OPT_CRASH_AT},
    {"dump-loaded", required_argument, NULL, OPT_DUMP_LOADED},
    {"local-dir", required_argument, NULL, OPT_LOCAL_DIR},
    CLI_HELP_OPTION,
    {0}};

/* One option; 0, or CLI_BAD after the message. */
static int parse_option(cli_t *c, int key, void *ctx)
{
    md_options_t *opt = ctx;
    int64_t i64;
    switch (key) {
    case OPT_ATOMS:
        opt->atoms_given = 1;
        return cli_i64(c, 1, INT64_MAX, &opt->atoms);
    case OPT_STEPS: return cli_i64(c, 0, INT64_MAX, &opt->steps);
    case OPT_EVERY: return cli_i64(c, 0, INT64_MAX, &opt->every);
    case OPT_CHECKPOINT_EVERY: return cli_i64(c, 0, INT64_MAX, &opt->checkpoint_every);
    case OPT_OUTPUT: return parse_mode(c, &opt->output);
    case OPT_DCD: opt->dcd_path = c->arg; return 0;
    case OPT_CHECKPOINT: opt->checkpoint_path = c->arg; return 0;
    case OPT_RESTART: opt->restart = 1; return 0;
    case OPT_DUMP_LOADED:
        opt->dump_loaded = c->arg;
        return c->arg[0] ? 0 : cli_bad_value(c, "a path");
    case OPT_LOCAL_DIR:
        opt->local_dir = c->arg;
        return c->arg[0] ? 0 : cli_bad_value(c, "a directory");
    case OPT_SEED: return cli_u64(c, 0, UINT64_MAX, &opt->seed);
    case OPT_TEMPERATURE: return parse_positive(c, &opt->temperature);
    case OPT_DENSITY: return parse_positive(c, &opt->density);
    case OPT_DT: return parse_positive(c, &opt->dt);
    case OPT_THERMO: return cli_i64(c, 0, INT64_MAX, &opt->thermo);
    case OPT_VERIFY: opt->verify = 1; return 0;
    case OPT_WRITERS:
        if (cli_i64(c, 0, 1 << 20, &i64))
            return CLI_BAD;
        opt->writers = (int)i64;
        return 0;
    case OPT_CRASH_AT: return cli_i64(c, 1, INT64_MAX, &opt->crash_at);
    default: return CLI_BAD; /* cli_next printed why */
    }
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
    cli_t c;
    cli_begin(&c, "mdlj", argc, argv, options, !verbose);
    int parsed = cli_parse(&c, parse_option, opt, print_usage, 0);
    if (parsed != 0)
        return parsed == 1 ? 1 : -1;
    if (opt->checkpoint_every < 0)
        opt->checkpoint_every = opt->every;
    if (opt->dcd_path[0] == '\0' || opt->checkpoint_path[0] == '\0') {
        cli_error(&c, "--dcd and --checkpoint need a non-empty path");
        return -1;
    }
    return 0;
}
