/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-plan: print the plan fwdio would use, before a run: which ranks write,
 * the stripes and storage targets each writer owns, bytes per writer, and the
 * most targets any writer touches, for a what-if machine (rank count, ranks
 * per node, an hwloc synthetic node shape). No MPI launch needed.
 *
 *   fwdio-plan --size 1T --ranks 8192 --ranks-per-node 128 \
 *              --topology "package:2 core:64 pu:1" --layout targets --targets 256
 *
 * With --model it prints instead the cost model of docs/scaling.md (messages,
 * agreements, metadata bytes, memory per rank and per writer) for one file or
 * one stream step, at P ranks or, with --sweep, at P = 2, 4, ... up to P:
 *
 *   fwdio-plan --model --sweep --size 64K --per-rank --ranks 131072 --ranks-per-node 128
 */
#define _GNU_SOURCE
#include "cli.h"
#include "cost_model.h"

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
            "       " PROG " --model --size BYTES --ranks P [--ranks-per-node N] [--writers W]\n"
            "          [--layout block|cyclic] [--stripe-size BYTES] [--write-size BYTES]\n"
            "          [--per-rank] [--sweep] [--stream] [--area] [--commit]\n"
            "Prints the plan fwdio would use for a file of --size bytes written by P ranks,\n"
            "N to a node, without an MPI launch; with --model, the cost model of one file\n"
            "(docs/scaling.md): each rank writes its block of the file in one fwdio_write,\n"
            "writers placed by stride; per rank and per writer the data messages, the\n"
            "agreements with their bytes and the memory.\n"
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
            "  --model               the cost model instead of the plan (fwdio's default\n"
            "                        writers: 2 per node, at most 32; a node is\n"
            "                        --ranks-per-node ranks, default all)\n"
            "  --per-rank            --model: --size is each rank's bytes, not the file's\n"
            "  --sweep               --model: one row for each P = 2, 4, 8, ... up to --ranks\n"
            "  --stream              --model: a stream, one step (cyclic), then its close\n"
            "  --area                --model: the node-shared area on (messages to a writer\n"
            "                        of the sender's node go through it, not MPI)\n"
            "  --commit              --model: a commit block (one more agreement)\n"
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
    OPT_WRITE_SIZE, OPT_JSON, OPT_MODEL, OPT_PER_RANK, OPT_SWEEP, OPT_STREAM, OPT_AREA,
    OPT_COMMIT
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
    {"model", no_argument, NULL, OPT_MODEL},
    {"per-rank", no_argument, NULL, OPT_PER_RANK},
    {"sweep", no_argument, NULL, OPT_SWEEP},
    {"stream", no_argument, NULL, OPT_STREAM},
    {"area", no_argument, NULL, OPT_AREA},
    {"commit", no_argument, NULL, OPT_COMMIT},
    CLI_HELP_OPTION,
    {0}};

/* What the command line says. */
struct plan_args {
    fwdio_options_t o; /* zeros: the library's defaults */
    uint64_t size;
    int nranks, per_node, json, policy; /* policy -1: not given */
    int model, per_rank, sweep, stream, area, commit;
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
    case OPT_MODEL: a->model = 1; return 0;
    case OPT_PER_RANK: a->per_rank = 1; return 0;
    case OPT_SWEEP: a->sweep = 1; return 0;
    case OPT_STREAM: a->stream = 1; return 0;
    case OPT_AREA: a->area = 1; return 0;
    case OPT_COMMIT: a->commit = 1; return 0;
    default: return CLI_BAD;
    }
}

/* Bytes with a binary unit, in 8 characters or so. */
static const char *human(uint64_t v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    double d = (double)v;
    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)v);
    else
        snprintf(buf, len, "%.*f %s", d < 10 ? 1 : 0, d, units[u]);
    return buf;
}

/* The ranks the model is evaluated at: the non-writers after writers 0 and
 * W/2, the last rank, and writers 0, W/2 and W-1 (every rank of a block
 * layout and even blocks is one of these up to a message). */
static void model_row(const struct plan_args *a, int P)
{
    cost_input_t in = {0};
    in.ranks = P;
    int per_node = a->per_node > 0 ? a->per_node : P;
    in.nodes = (P + per_node - 1) / per_node;
    in.writers = a->o.writers;
    if (in.writers <= 0)
        in.writers = fwdio_default_writers(P, in.nodes); /* fwdio's default */
    if (in.writers > P)
        in.writers = P;
    in.size = a->per_rank ? a->size * (uint64_t)P : a->size;
    in.stripe_size = a->o.stripe_size;
    in.write_size = a->o.write_size;
    in.cyclic = a->o.layout != FWDIO_LAYOUT_BLOCK;
    in.stream = a->stream;
    in.area = a->area;
    in.commit = a->commit;
    cost_model_defaults(&in);
    int stride = P / in.writers > 1 ? P / in.writers : 1;
    int ranks[7] = {1 % P, (in.writers / 2) * stride + 1, P - 1, 0, (in.writers / 2) * stride,
                    (in.writers - 1) * stride, P / 2};
    cost_rank_t sender = {0}, writer = {0}, r;
    for (int i = 0; i < 7; i++) {
        if (ranks[i] >= P)
            continue;
        cost_model_rank(&in, ranks[i], &r);
        uint64_t sent = r.mpi_msgs + r.area_msgs + r.self_msgs;
        if (sent > sender.mpi_msgs + sender.area_msgs + sender.self_msgs)
            sender = r;
        if (r.is_writer && r.recv_mpi_msgs + r.recv_area_msgs >=
                               writer.recv_mpi_msgs + writer.recv_area_msgs)
            writer = r;
        if (i == 0 && !sender.mpi_msgs && !sender.area_msgs && !sender.self_msgs)
            sender = r;
    }
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];
    printf("%7d %5d %5d | %4llu %4llu %4llu %9s | %6llu %6llu %6d %9s | %2d %2d %2d %9s %9s | "
           "%9s %9s %9s\n",
           P, in.nodes, in.writers, (unsigned long long)sender.mpi_msgs,
           (unsigned long long)sender.area_msgs, (unsigned long long)sender.self_msgs,
           human(sender.data_bytes, b1, sizeof b1), (unsigned long long)writer.recv_mpi_msgs,
           (unsigned long long)writer.recv_area_msgs, writer.senders,
           human(writer.recv_bytes, b2, sizeof b2), writer.idup.calls, writer.iallreduce.calls,
           writer.iexscan.calls, human(writer.iallreduce.bytes + writer.iexscan.bytes, b3, sizeof b3),
           human(((uint64_t)in.writers + COST_CLOSE_EXTRA) * 8, b5, sizeof b5),
           human(writer.mem_file, b4, sizeof b4), human(writer.mem_writer, b6, sizeof b6),
           human(writer.mem_runtime, b7, sizeof b7));
}

static int print_model(const struct plan_args *a)
{
    printf("# fwdio cost model (docs/scaling.md): one %s, each rank writes its block in one\n"
           "# fwdio_write; writers by stride; %s layout; node-shared area %s%s\n",
           a->stream ? "stream step and its close" : "file", a->stream || a->o.layout != FWDIO_LAYOUT_BLOCK
               ? "cyclic" : "block", a->area ? "on" : "off", a->commit ? "; a commit block" : "");
    printf("#       P  N(o)     W | sender: msgs MPI/area/self, bytes | writer: msgs MPI/area, "
           "senders, bytes | idup/Iallreduce/Iexscan, bytes, W-vector | memory: file/rank, "
           "writer arrays, runtime/rank\n");
    if (!a->sweep) {
        model_row(a, a->nranks);
        return 0;
    }
    for (long P = 2; P <= a->nranks; P *= 2)
        model_row(a, (int)P);
    if (a->nranks & (a->nranks - 1))
        model_row(a, a->nranks);
    return 0;
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
    if (a.model) {
        free(a.list);
        return print_model(&a);
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
