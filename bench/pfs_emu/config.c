/* SPDX-License-Identifier: BSD-3-Clause */
/* Command line of the emulator: value parsers and the options of `up`. */
#define _GNU_SOURCE
#include "config.h"

#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int pfs_parse_ms(const char *text, int64_t *out_ns)
{
    if (!text || !(isdigit((unsigned char)*text) || *text == '.'))
        return -1;
    errno = 0;
    char *end;
    double ms = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(ms) || ms < 0 || ms > 3600e3)
        return -1;
    *out_ns = (int64_t)llround(ms * 1e6);
    return 0;
}

void pfs_usage(FILE *out)
{
    fprintf(out,
        "usage: bench/pfs up DIR --targets T --stripe BYTES --bw BYTES_PER_S --latency MS\n"
        "                 [--client-bw BYTES_PER_S] [--client process|host]\n"
        "                 [--conflict-ms MS] [--conflict-window-ms MS]\n"
        "                 [--durable] [--sync-ms MS] [--write-behind BYTES]\n"
        "                 [--start-target N|rr] [--backing DIR] [--threads N]\n"
        "                 [--log FILE] [--foreground]\n"
        "       bench/pfs down DIR [--json] [--lazy] [--timeout SEC]\n"
        "       bench/pfs stats DIR [--json] [--reset]\n"
        "       bench/pfs --help\n"
        "Mounts DIR as a file system whose files are striped round-robin over T\n"
        "targets of stripe size S; each target serves one request at a time in\n"
        "latency + bytes/bw, by sleeping. Times are milliseconds (fractions allowed);\n"
        "BYTES_PER_S is a size per second (0: no limit). See docs/benchmarks.md,\n"
        "\"Parallel file system emulator\".\n"
        CLI_SIZE_GRAMMAR);
}

static int parse_uint(cli_t *c, unsigned lo, unsigned hi, unsigned *out)
{
    int v;
    if (cli_int(c, (int)lo, (int)hi, &v) != 0)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int parse_ms(cli_t *c, const char *want, int64_t *out_ns)
{
    return pfs_parse_ms(c->arg, out_ns) ? cli_bad_value(c, want) : 0;
}

static int copy_path(cli_t *c, char *dst, size_t cap, const char *src)
{
    if (!*src || strlen(src) >= cap)
        return c->arg ? cli_bad_value(c, "a non-empty path shorter than PATH_MAX")
                      : cli_error(c, "bad directory '%s': a non-empty path shorter than PATH_MAX",
                                  src);
    strcpy(dst, src);
    return 0;
}

/* The options of `up`; `seen` collects the required ones. */
enum { SEEN_TARGETS = 1, SEEN_STRIPE = 2, SEEN_BW = 4, SEEN_LATENCY = 8, SEEN_WINDOW = 16 };

enum {
    OPT_TARGETS = 256, OPT_STRIPE, OPT_BW, OPT_LATENCY, OPT_CLIENT_BW, OPT_CLIENT,
    OPT_CONFLICT_MS, OPT_CONFLICT_WINDOW_MS, OPT_DURABLE, OPT_SYNC_MS, OPT_WRITE_BEHIND,
    OPT_START_TARGET, OPT_BACKING, OPT_THREADS, OPT_LOG, OPT_FOREGROUND
};

static const struct option up_options[] = {
    {"targets", required_argument, NULL, OPT_TARGETS},
    {"stripe", required_argument, NULL, OPT_STRIPE},
    {"bw", required_argument, NULL, OPT_BW},
    {"latency", required_argument, NULL, OPT_LATENCY},
    {"client-bw", required_argument, NULL, OPT_CLIENT_BW},
    {"client", required_argument, NULL, OPT_CLIENT},
    {"conflict-ms", required_argument, NULL, OPT_CONFLICT_MS},
    {"conflict-window-ms", required_argument, NULL, OPT_CONFLICT_WINDOW_MS},
    {"durable", no_argument, NULL, OPT_DURABLE},
    {"sync-ms", required_argument, NULL, OPT_SYNC_MS},
    {"write-behind", required_argument, NULL, OPT_WRITE_BEHIND},
    {"start-target", required_argument, NULL, OPT_START_TARGET},
    {"backing", required_argument, NULL, OPT_BACKING},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"log", required_argument, NULL, OPT_LOG},
    {"foreground", no_argument, NULL, OPT_FOREGROUND},
    CLI_HELP_OPTION,
    {0}};

struct up_parse {
    pfs_config_t *cfg;
    unsigned seen;
};

static int parse_option(cli_t *c, int key, void *ctx)
{
    static const char *const clients[] = {"process", "host"};
    pfs_config_t *cfg = ((struct up_parse *)ctx)->cfg;
    unsigned *seen = &((struct up_parse *)ctx)->seen;
    const char *v = c->arg;
    unsigned t;
    int i;
    switch (key) {
    case OPT_DURABLE: cfg->durable = 1; return 0;
    case OPT_FOREGROUND: cfg->foreground = 1; return 0;
    case OPT_TARGETS:
        *seen |= SEEN_TARGETS;
        return parse_uint(c, 1, PFS_MAX_TARGETS, &cfg->targets);
    case OPT_STRIPE:
        *seen |= SEEN_STRIPE;
        return cli_size(c, PFS_MIN_STRIPE, (uint64_t)1 << 40, &cfg->stripe);
    case OPT_BW:
        *seen |= SEEN_BW;
        return cli_size(c, 0, UINT64_MAX, &cfg->bw);
    case OPT_LATENCY:
        *seen |= SEEN_LATENCY;
        return parse_ms(c, "milliseconds, e.g. 0.5", &cfg->latency_ns);
    case OPT_CLIENT_BW: return cli_size(c, 0, UINT64_MAX, &cfg->client_bw);
    case OPT_CLIENT:
        if (cli_choice(c, clients, 2, &i))
            return -1;
        cfg->client_kind = i ? PFS_CLIENT_HOST : PFS_CLIENT_PROCESS;
        return 0;
    case OPT_CONFLICT_MS: return parse_ms(c, "milliseconds", &cfg->conflict_ns);
    case OPT_CONFLICT_WINDOW_MS:
        *seen |= SEEN_WINDOW;
        return parse_ms(c, "milliseconds", &cfg->conflict_window_ns);
    case OPT_SYNC_MS: return parse_ms(c, "milliseconds", &cfg->sync_ns);
    case OPT_WRITE_BEHIND: return cli_size(c, 0, UINT64_MAX, &cfg->write_behind);
    case OPT_START_TARGET:
        if (!strcmp(v, "rr")) {
            cfg->start_target = -1;
            return 0;
        }
        if (parse_uint(c, 0, PFS_MAX_TARGETS - 1, &t))
            return -1;
        cfg->start_target = (int)t;
        return 0;
    case OPT_THREADS: return parse_uint(c, 2, 100000, &cfg->threads);
    case OPT_BACKING: return copy_path(c, cfg->backing, sizeof cfg->backing, v);
    case OPT_LOG: return copy_path(c, cfg->log, sizeof cfg->log, v);
    default: return -1; /* cli_next printed why */
    }
}

int pfs_config_parse(int argc, char **argv, pfs_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->start_target = -1;
    cfg->threads = 64;
    cfg->conflict_window_ns = 100 * 1000000LL;
    cli_t c;
    /* argv[0] is DIR: getopt_long reads from argv[1] on. */
    cli_begin(&c, "bench/pfs", argc, argv, up_options, 0);
    if (argc < 1 || argv[0][0] == '-') {
        if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")))
            return 1;
        return cli_error(&c, "up needs the directory to mount first");
    }
    if (copy_path(&c, cfg->mountpoint, sizeof cfg->mountpoint, argv[0]))
        return -1;
    struct up_parse up = {cfg, 0};
    int parsed = cli_parse(&c, parse_option, &up, NULL, 0); /* main prints the usage */
    if (parsed != 0)
        return parsed == 1 ? 1 : -1;
    unsigned seen = up.seen;
    const unsigned required = SEEN_TARGETS | SEEN_STRIPE | SEEN_BW | SEEN_LATENCY;
    if ((seen & required) != required)
        return cli_error(&c, "up needs --targets, --stripe, --bw and --latency");
    if (cfg->start_target >= (int)cfg->targets)
        return cli_error(&c, "--start-target %d is not below --targets %u", cfg->start_target,
                         cfg->targets);
    if ((seen & SEEN_WINDOW) && cfg->conflict_ns == 0)
        return cli_error(&c, "--conflict-window-ms without --conflict-ms has no effect");
    if (cfg->sync_ns && !cfg->durable)
        return cli_error(&c, "--sync-ms needs --durable (without it fsync does not wait)");
    return 0;
}
