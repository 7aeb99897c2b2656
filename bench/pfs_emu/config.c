/* SPDX-License-Identifier: BSD-3-Clause */
/* Command line of the emulator: value parsers and the options of `up`. */
#define _GNU_SOURCE
#include "config.h"

#include "parse_size.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* fwdio's own size grammar (runtime/parse_size.c), so the emulator reads
 * sizes as the library and its tools do. */
int pfs_parse_size(const char *text, uint64_t *out) { return fwdioi_parse_size(text, out); }

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
        "Mounts DIR as a file system whose files are striped round-robin over T\n"
        "targets of stripe size S; each target serves one request at a time in\n"
        "latency + bytes/bw, by sleeping. Sizes take K/M/G/T (powers of 1024),\n"
        "times are milliseconds (fractions allowed). See docs/benchmarks.md,\n"
        "\"Parallel file system emulator\".\n");
}

/* The value of option argv[*i], moving *i past it; NULL (with a message) if
 * it is missing. */
static const char *option_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "pfs: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int bad_value(const char *opt, const char *value, const char *want)
{
    fprintf(stderr, "pfs: bad value for %s: '%s' (%s)\n", opt, value, want);
    return -1;
}

static int parse_uint(const char *text, unsigned lo, unsigned hi, unsigned *out)
{
    if (!text || !isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int copy_path(char *dst, size_t cap, const char *opt, const char *src)
{
    if (!*src || strlen(src) >= cap)
        return bad_value(opt, src, "a non-empty path shorter than PATH_MAX");
    strcpy(dst, src);
    return 0;
}

/* One option of `up` at argv[*i]; `seen` collects the required ones.
 * Returns 0, or -1 after printing what is wrong. */
enum { SEEN_TARGETS = 1, SEEN_STRIPE = 2, SEEN_BW = 4, SEEN_LATENCY = 8, SEEN_WINDOW = 16 };

static int parse_option(int argc, char **argv, int *i, pfs_config_t *cfg, unsigned *seen)
{
    const char *opt = argv[*i];
    const char *v;
    if (!strcmp(opt, "--durable")) {
        cfg->durable = 1;
        return 0;
    }
    if (!strcmp(opt, "--foreground")) {
        cfg->foreground = 1;
        return 0;
    }
    if (strncmp(opt, "--", 2) != 0) {
        fprintf(stderr, "pfs: unexpected argument '%s'\n", opt);
        return -1;
    }
    if (!(v = option_value(argc, argv, i)))
        return -1;
    if (!strcmp(opt, "--targets")) {
        *seen |= SEEN_TARGETS;
        if (parse_uint(v, 1, PFS_MAX_TARGETS, &cfg->targets))
            return bad_value(opt, v, "1 to 1024");
    } else if (!strcmp(opt, "--stripe")) {
        *seen |= SEEN_STRIPE;
        if (pfs_parse_size(v, &cfg->stripe) || cfg->stripe < PFS_MIN_STRIPE ||
            cfg->stripe > ((uint64_t)1 << 40))
            return bad_value(opt, v, "a size from 4K to 1T");
    } else if (!strcmp(opt, "--bw")) {
        *seen |= SEEN_BW;
        if (pfs_parse_size(v, &cfg->bw))
            return bad_value(opt, v, "bytes per second, K/M/G suffixes; 0 = no transfer time");
    } else if (!strcmp(opt, "--latency")) {
        *seen |= SEEN_LATENCY;
        if (pfs_parse_ms(v, &cfg->latency_ns))
            return bad_value(opt, v, "milliseconds, e.g. 0.5");
    } else if (!strcmp(opt, "--client-bw")) {
        if (pfs_parse_size(v, &cfg->client_bw))
            return bad_value(opt, v, "bytes per second; 0 = unlimited");
    } else if (!strcmp(opt, "--client")) {
        if (!strcmp(v, "process"))
            cfg->client_kind = PFS_CLIENT_PROCESS;
        else if (!strcmp(v, "host"))
            cfg->client_kind = PFS_CLIENT_HOST;
        else
            return bad_value(opt, v, "process or host");
    } else if (!strcmp(opt, "--conflict-ms")) {
        if (pfs_parse_ms(v, &cfg->conflict_ns))
            return bad_value(opt, v, "milliseconds");
    } else if (!strcmp(opt, "--conflict-window-ms")) {
        *seen |= SEEN_WINDOW;
        if (pfs_parse_ms(v, &cfg->conflict_window_ns))
            return bad_value(opt, v, "milliseconds");
    } else if (!strcmp(opt, "--sync-ms")) {
        if (pfs_parse_ms(v, &cfg->sync_ns))
            return bad_value(opt, v, "milliseconds");
    } else if (!strcmp(opt, "--write-behind")) {
        if (pfs_parse_size(v, &cfg->write_behind))
            return bad_value(opt, v, "bytes");
    } else if (!strcmp(opt, "--start-target")) {
        unsigned t;
        if (!strcmp(v, "rr"))
            cfg->start_target = -1;
        else if (parse_uint(v, 0, PFS_MAX_TARGETS - 1, &t) == 0)
            cfg->start_target = (int)t;
        else
            return bad_value(opt, v, "a target index or rr");
    } else if (!strcmp(opt, "--threads")) {
        if (parse_uint(v, 2, 100000, &cfg->threads))
            return bad_value(opt, v, "2 to 100000");
    } else if (!strcmp(opt, "--backing")) {
        return copy_path(cfg->backing, sizeof cfg->backing, opt, v);
    } else if (!strcmp(opt, "--log")) {
        return copy_path(cfg->log, sizeof cfg->log, opt, v);
    } else {
        fprintf(stderr, "pfs: unknown option %s\n", opt);
        return -1;
    }
    return 0;
}

int pfs_config_parse(int argc, char **argv, pfs_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->start_target = -1;
    cfg->threads = 64;
    cfg->conflict_window_ns = 100 * 1000000LL;
    if (argc < 1 || argv[0][0] == '-') {
        fprintf(stderr, "pfs: up needs the directory to mount first\n");
        return -1;
    }
    if (copy_path(cfg->mountpoint, sizeof cfg->mountpoint, "DIR", argv[0]))
        return -1;
    unsigned seen = 0;
    for (int i = 1; i < argc; i++)
        if (parse_option(argc, argv, &i, cfg, &seen))
            return -1;
    const unsigned required = SEEN_TARGETS | SEEN_STRIPE | SEEN_BW | SEEN_LATENCY;
    if ((seen & required) != required) {
        fprintf(stderr, "pfs: up needs --targets, --stripe, --bw and --latency\n");
        return -1;
    }
    if (cfg->start_target >= (int)cfg->targets) {
        fprintf(stderr, "pfs: --start-target %d is not below --targets %u\n", cfg->start_target,
                cfg->targets);
        return -1;
    }
    if ((seen & SEEN_WINDOW) && cfg->conflict_ns == 0) {
        fprintf(stderr, "pfs: --conflict-window-ms without --conflict-ms has no effect\n");
        return -1;
    }
    if (cfg->sync_ns && !cfg->durable) {
        fprintf(stderr, "pfs: --sync-ms needs --durable (without it fsync does not wait)\n");
        return -1;
    }
    return 0;
}
