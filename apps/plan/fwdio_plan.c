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
#include "app_util.h"

#include <fwdio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --size BYTES --ranks P --ranks-per-node N [--topology DESC]\n"
            "          [--writers W] [--writers-per-node N] [--policy spread|stride|list]\n"
            "          [--first R --stride S] [--list R,R,...] [--layout block|cyclic|targets]\n"
            "          [--targets T] [--stripe-size BYTES] [--write-size BYTES] [--json]\n"
            "sizes take K/M/G/T suffixes; DESC is one node's hwloc synthetic shape,\n"
            "e.g. \"package:2 numa:2 core:8 pu:1\" (default: binding unknown)\n",
            prog);
}

static int parse_int(const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
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
        if (i == count || parse_int(tok, &v[i]) != 0) {
            free(copy);
            free(v);
            return -1;
        }
        i++;
    }
    free(copy);
    *out = v;
    *n = i;
    return i > 0 ? 0 : -1;
}

static int parse_choice(const char *text, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(text, names[i])) {
            *out = i;
            return 0;
        }
    return -1;
}

int main(int argc, char **argv)
{
    static const char *const policies[] = {"spread", "stride", "list"};
    static const char *const layouts[] = {"block", "cyclic", "targets"};
    fwdio_options_t o;
    memset(&o, 0, sizeof o); /* zeros: the library's defaults */
    uint64_t size = 0;
    int nranks = 0, per_node = 0, json = 0, policy = -1, *list = NULL;
    const char *topology = NULL;
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int layout = 0, takes_value = 1;
        uint64_t bytes;
        if (!strcmp(opt, "--json")) {
            json = 1;
            takes_value = 0;
        } else if (!val) {
            bad = 1;
        } else if (!strcmp(opt, "--size")) {
            bad = app_parse_size(val, &size) != 0;
        } else if (!strcmp(opt, "--ranks")) {
            bad = parse_int(val, &nranks) != 0;
        } else if (!strcmp(opt, "--ranks-per-node")) {
            bad = parse_int(val, &per_node) != 0;
        } else if (!strcmp(opt, "--topology")) {
            topology = val;
        } else if (!strcmp(opt, "--writers")) {
            bad = parse_int(val, &o.writers) != 0;
        } else if (!strcmp(opt, "--writers-per-node")) {
            bad = parse_int(val, &o.writers_per_node) != 0;
        } else if (!strcmp(opt, "--policy")) {
            bad = parse_choice(val, policies, 3, &policy) != 0;
        } else if (!strcmp(opt, "--first")) {
            bad = parse_int(val, &o.first_writer) != 0;
        } else if (!strcmp(opt, "--stride")) {
            bad = parse_int(val, &o.writer_stride) != 0;
        } else if (!strcmp(opt, "--list")) {
            bad = parse_list(val, &list, &o.writer_list_len) != 0;
            o.writer_list = list;
        } else if (!strcmp(opt, "--layout")) {
            bad = parse_choice(val, layouts, 3, &layout) != 0;
            o.layout = (fwdio_layout_t)layout;
        } else if (!strcmp(opt, "--targets")) {
            bad = parse_int(val, &o.targets) != 0;
        } else if (!strcmp(opt, "--stripe-size")) {
            bad = app_parse_size(val, &bytes) != 0;
            o.stripe_size = bytes;
        } else if (!strcmp(opt, "--write-size")) {
            bad = app_parse_size(val, &bytes) != 0;
            o.write_size = bytes;
        } else {
            bad = 1;
        }
        if (bad)
            fprintf(stderr, "fwdio-plan: bad or missing value for %s\n", opt);
        i += takes_value;
    }
    if (bad || size == 0 || nranks <= 0) {
        usage(argv[0]);
        free(list);
        return 2;
    }
    if (policy >= 0)
        o.placement = (fwdio_placement_t)policy;
    if (policy == FWDIO_PLACEMENT_LIST && !list) {
        fprintf(stderr, "fwdio-plan: --policy list needs --list\n");
        return 2;
    }
    if (list && policy < 0)
        o.placement = FWDIO_PLACEMENT_LIST;
    int rc = fwdio_plan_describe(NULL, size, &o, nranks, per_node, topology, json, stdout);
    free(list);
    if (rc != FWDIO_OK) {
        fprintf(stderr, "fwdio-plan: %s\n", fwdio_strerror(rc));
        return 1;
    }
    return 0;
}
