/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-plan: print the plan fwdio would use, before a run: which ranks write,
 * the stripes and storage targets each writer owns, bytes per writer, and the
 * most targets any writer touches, for a what-if machine (rank count, ranks
 * per node, an hwloc synthetic node shape). No MPI launch needed.
 *
 *   fwdio-plan --size 1T --ranks 8192 --ranks-per-node 128 \
 *              --topology "package:2 core:64 pu:1" --layout targets --targets 256
 */
#define _GNU_SOURCE
#include "cli.h"

#include <fwdio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "fwdio-plan"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " --size BYTES --ranks P --ranks-per-node N [--topology DESC]\n"
            "          [--writers W] [--writers-per-node N] [--policy spread|stride|list]\n"
            "          [--first R --stride S] [--list R,R,...] [--layout block|cyclic|targets]\n"
            "          [--targets T] [--stripe-size BYTES] [--write-size BYTES] [--json]\n"
            "Prints the plan fwdio would use for a file of --size bytes written by P ranks,\n"
            "N to a node, without an MPI launch.\n"
            "  --size BYTES          the file's size (required)\n"
            "  --ranks P             ranks of the job (required)\n"
            "  --ranks-per-node N    ranks on one node\n"
            "  --topology DESC       one node's hwloc synthetic shape, e.g.\n"
            "                        \"package:2 numa:2 core:8 pu:1\" (default: binding unknown)\n"
            "  --writers W           writer ranks (default: fwdio's)\n"
            "  --writers-per-node N  writers per node (default: fwdio's)\n"
            "  --policy NAME         writer placement: spread, stride or list\n"
            "  --first R             stride: the first writer rank\n"
            "  --stride S            stride: ranks between writers\n"
            "  --list R,R,...        list: the writer ranks (implies --policy list)\n"
            "  --layout NAME         stripe layout: block, cyclic or targets\n"
            "  --targets T           storage targets of the targets layout\n"
            "  --stripe-size BYTES   stripe size (default: fwdio's)\n"
            "  --write-size BYTES    write unit (default: fwdio's)\n"
            "  --json                the plan as JSON\n"
            "  --help                this text\n"
            CLI_SIZE_GRAMMAR);
}

/* "3,17,42" into a freshly allocated array. */
static int parse_list(const char *text, int **out, int *n)
{
    int count = 1;
    for (const char *c = text; *c; c++)
        count += *c == ',';
    int *v = malloc((size_t)count * sizeof *v);
    if (!v)
        return -1;
    char *copy = strdup(text), *save = NULL;
    int i = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long r = strtol(tok, &end, 10);
        if (i == count || *end != '\0' || end == tok || r < 0 || r > 1 << 30) {
            free(copy);
            free(v);
            return -1;
        }
        v[i++] = (int)r;
    }
    free(copy);
    if (i == 0) {
        free(v);
        return -1;
    }
    *out = v;
    *n = i;
    return 0;
}

enum {
    OPT_SIZE = 256, OPT_RANKS, OPT_PER_NODE, OPT_TOPOLOGY, OPT_WRITERS, OPT_WRITERS_PER_NODE,
    OPT_POLICY, OPT_FIRST, OPT_STRIDE, OPT_LIST, OPT_LAYOUT, OPT_TARGETS, OPT_STRIPE_SIZE,
    OPT_WRITE_SIZE, OPT_JSON
};

static const struct option options[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"ranks-per-node", required_argument, NULL, OPT_PER_NODE},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"writers", required_argument, NULL, OPT_WRITERS},
    {"writers-per-node", required_argument, NULL, OPT_WRITERS_PER_NODE},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"first", required_argument, NULL, OPT_FIRST},
    {"stride", required_argument, NULL, OPT_STRIDE},
    {"list", required_argument, NULL, OPT_LIST},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"targets", required_argument, NULL, OPT_TARGETS},
    {"stripe-size", required_argument, NULL, OPT_STRIPE_SIZE},
    {"write-size", required_argument, NULL, OPT_WRITE_SIZE},
    {"json", no_argument, NULL, OPT_JSON},
    CLI_HELP_OPTION,
    {0}};

/* What the command line says. */
struct plan_args {
    fwdio_options_t o; /* zeros: the library's defaults */
    uint64_t size;
    int nranks, per_node, json, policy; /* policy -1: not given */
    int *list;
    const char *topology;
};

static int parse_option(cli_t *c, int key, void *ctx)
{
    static const char *const policies[] = {"spread", "stride", "list"};
    static const char *const layouts[] = {"block", "cyclic", "targets"};
    const int most = 1 << 30;
    struct plan_args *a = ctx;
    uint64_t bytes = 0;
    int layout = 0, bad = 0;
    switch (key) {
    case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &a->size);
    case OPT_RANKS: return cli_int(c, 1, most, &a->nranks);
    case OPT_PER_NODE: return cli_int(c, 0, most, &a->per_node);
    case OPT_TOPOLOGY: a->topology = c->arg; return 0;
    case OPT_WRITERS: return cli_int(c, 0, most, &a->o.writers);
    case OPT_WRITERS_PER_NODE: return cli_int(c, 0, most, &a->o.writers_per_node);
    case OPT_POLICY: return cli_choice(c, policies, 3, &a->policy);
    case OPT_FIRST: return cli_int(c, 0, most, &a->o.first_writer);
    case OPT_STRIDE: return cli_int(c, 0, most, &a->o.writer_stride);
    case OPT_LIST:
        free(a->list);
        a->list = NULL;
        if (parse_list(c->arg, &a->list, &a->o.writer_list_len) != 0)
            bad = cli_bad_value(c, "ranks separated by commas");
        a->o.writer_list = a->list;
        return bad;
    case OPT_LAYOUT:
        bad = cli_choice(c, layouts, 3, &layout);
        a->o.layout = (fwdio_layout_t)layout;
        return bad;
    case OPT_TARGETS: return cli_int(c, 0, most, &a->o.targets);
    case OPT_STRIPE_SIZE:
        bad = cli_size(c, 0, UINT64_MAX, &bytes);
        a->o.stripe_size = bytes;
        return bad;
    case OPT_WRITE_SIZE:
        bad = cli_size(c, 0, UINT64_MAX, &bytes);
        a->o.write_size = bytes;
        return bad;
    case OPT_JSON: a->json = 1; return 0;
    default: return CLI_BAD;
    }
}

int main(int argc, char **argv)
{
    struct plan_args a = {.policy = -1};
    cli_t c;
    cli_begin(&c, PROG, argc, argv, options, 0);
    int parsed = cli_parse(&c, parse_option, &a, usage, 0);
    if (parsed == 0 && (a.size == 0 || a.nranks <= 0))
        parsed = cli_error(&c, "--size and --ranks are required");
    if (parsed != 0) {
        free(a.list);
        return cli_status(parsed);
    }
    fwdio_options_t o = a.o;
    int policy = a.policy, *list = a.list;
    if (policy >= 0)
        o.placement = (fwdio_placement_t)policy;
    if (policy == FWDIO_PLACEMENT_LIST && !list) {
        cli_error(&c, "--policy list needs --list");
        return 2;
    }
    if (list && policy < 0)
        o.placement = FWDIO_PLACEMENT_LIST;
    int rc = fwdio_plan_describe(NULL, a.size, &o, a.nranks, a.per_node, a.topology, a.json,
                                 stdout);
    free(list);
    if (rc != FWDIO_OK) {
        fprintf(stderr, "fwdio-plan: %s\n", fwdio_strerror(rc));
        return 1;
    }
    return 0;
}
