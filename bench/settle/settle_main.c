/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-settle: waits until the kernel has written back its dirty pages, and
 * says how long that took. bench/testbed settle runs it before each measured
 * repetition (docs/benchmarks.md, "Honest figures").
 *
 *   fwdio-settle [--limit KIB] [--timeout SECONDS]
 *
 * Exit status: 0 settled, 1 still above the limit at the timeout (a run would
 * not be comparable), 2 bad usage or /proc/meminfo unreadable.
 */
#include "cli.h"
#include "dirty_pages.h"

#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fwdio-settle [--limit KIB] [--timeout SECONDS]\n"
            "Waits (sync, then polling /proc/meminfo) until Dirty + Writeback is at most\n"
            "the limit, or the timeout passes.\n"
            "  --limit KIB          the limit in KiB (default %u)\n"
            "  --timeout SECONDS    the longest wait (default %.0f)\n"
            "  --help               this text\n"
            "Exit status: 0 settled, 1 still above the limit at the timeout, 2 bad usage or\n"
            "/proc/meminfo unreadable.\n",
            DIRTY_DEFAULT_LIMIT_KIB, DIRTY_DEFAULT_TIMEOUT_S);
}

enum { OPT_LIMIT = 256, OPT_TIMEOUT };

static const struct option options[] = {
    {"limit", required_argument, NULL, OPT_LIMIT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    CLI_HELP_OPTION,
    {0}};

struct opts {
    int64_t limit; /* KiB */
    double timeout;
};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_LIMIT: return cli_i64(c, 0, INT64_MAX, &o->limit);
    case OPT_TIMEOUT: return cli_double(c, 0, 1e9, &o->timeout);
    default: return CLI_BAD;
    }
}

int main(int argc, char **argv)
{
    struct opts o = {DIRTY_DEFAULT_LIMIT_KIB, DIRTY_DEFAULT_TIMEOUT_S};
    cli_t c;
    cli_begin(&c, "fwdio-settle", argc, argv, options, 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0)
        return cli_status(parsed);
    struct dirty_wait w;
    if (dirty_pages_wait((uint64_t)o.limit, o.timeout, &w) != 0) {
        fprintf(stderr, "fwdio-settle: cannot read /proc/meminfo\n");
        return 2;
    }
    printf("settle: %.3f s, dirty+writeback %llu KiB -> %llu KiB%s\n", w.waited_s,
           (unsigned long long)w.before_kib, (unsigned long long)w.after_kib,
           w.timed_out ? " (above the limit at the timeout)" : "");
    return w.timed_out ? 1 : 0;
}
