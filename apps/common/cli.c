/* SPDX-License-Identifier: BSD-3-Clause */
/* The command lines of the apps and benchmarks (cli.h). */
#define _GNU_SOURCE
#include "cli.h"

#include "parse_size.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* "+": stop at the first operand, as the parsers before getopt_long did;
 * ":": a missing value is told from an unknown option. */
static const char short_options[] = "+:h";

void cli_begin(cli_t *c, const char *prog, int argc, char **argv, const struct option *options,
               int quiet)
{
    *c = (cli_t){.prog = prog, .argc = argc, .argv = argv, .options = options, .quiet = quiet};
    opterr = 0;
    optind = 0; /* 0, not 1: glibc starts afresh (a second parse in one process) */
}

int cli_error(cli_t *c, const char *fmt, ...)
{
    if (c->quiet)
        return CLI_BAD;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", c->prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", c->prog);
    va_end(ap);
    return CLI_BAD;
}

int cli_next(cli_t *c)
{
    int index = -1;
    int key = getopt_long(c->argc, c->argv, short_options, c->options, &index);
    c->arg = optarg;
    c->name = index >= 0 ? c->options[index].name : NULL;
    if (key == ':') {
        /* The option that lacks its value is the last word read. */
        return cli_error(c, "%s needs a value", c->argv[optind - 1]);
    }
    if (key == '?') {
        if (optopt && optopt != '?')
            return cli_error(c, "unknown option '-%c'", optopt);
        return cli_error(c, "unknown option '%s'", c->argv[optind - 1]);
    }
    return key == -1 ? CLI_END : key;
}

int cli_parse(cli_t *c, int (*one)(cli_t *c, int key, void *ctx), void *ctx,
              void (*usage)(FILE *out), int operands)
{
    for (int key; (key = cli_next(c)) != CLI_END;) {
        if (key == CLI_HELP) {
            if (usage && !c->quiet)
                usage(stdout);
            return 1;
        }
        if (key == CLI_BAD || one(c, key, ctx) != 0)
            return CLI_BAD;
    }
    return operands ? 0 : cli_no_operands(c);
}

int cli_status(int parsed) { return parsed == 1 ? 0 : 2; }

int cli_operand_index(const cli_t *c)
{
    (void)c;
    return optind;
}

int cli_no_operands(cli_t *c)
{
    if (optind < c->argc)
        return cli_error(c, "unexpected argument '%s'", c->argv[optind]);
    return 0;
}

int cli_bad_value(cli_t *c, const char *want)
{
    const char *value = c->arg ? c->arg : "";
    if (c->name)
        return want ? cli_error(c, "bad value '%s' for --%s: %s", value, c->name, want)
                    : cli_error(c, "bad value '%s' for --%s", value, c->name);
    return want ? cli_error(c, "bad value '%s': %s", value, want)
                : cli_error(c, "bad value '%s'", value);
}

int cli_size(cli_t *c, uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    if (fwdioi_parse_size(c->arg, &v) != 0)
        return cli_bad_value(c, "a size such as 4096, 64K, 8MiB, 2G, 1T");
    if (v < min || v > max) {
        char want[96];
        if (max == UINT64_MAX)
            snprintf(want, sizeof want, "a size of at least %llu bytes", (unsigned long long)min);
        else
            snprintf(want, sizeof want, "a size from %llu to %llu bytes", (unsigned long long)min,
                     (unsigned long long)max);
        return cli_bad_value(c, want);
    }
    *out = v;
    return 0;
}

int cli_i64(cli_t *c, int64_t min, int64_t max, int64_t *out)
{
    const char *text = c->arg ? c->arg : "";
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max) {
        char want[96];
        if (max == INT64_MAX || max == INT32_MAX)
            snprintf(want, sizeof want, "a whole number of at least %lld", (long long)min);
        else
            snprintf(want, sizeof want, "a whole number from %lld to %lld", (long long)min,
                     (long long)max);
        return cli_bad_value(c, want);
    }
    *out = (int64_t)v;
    return 0;
}

int cli_int(cli_t *c, int min, int max, int *out)
{
    int64_t v = 0; /* set by cli_i64 when it returns 0 (GCC 12 -O3 cannot see it) */
    if (cli_i64(c, min, max, &v) != 0)
        return CLI_BAD;
    *out = (int)v;
    return 0;
}

int cli_u64(cli_t *c, uint64_t min, uint64_t max, uint64_t *out)
{
    const char *text = c->arg ? c->arg : "";
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || end == text || *end != '\0' || text[0] == '-' || v < min || v > max) {
        char want[96];
        snprintf(want, sizeof want, "a whole number from %llu to %llu", (unsigned long long)min,
                 (unsigned long long)max);
        return cli_bad_value(c, want);
    }
    *out = (uint64_t)v;
    return 0;
}

int cli_double(cli_t *c, double min, double max, double *out)
{
    const char *text = c->arg ? c->arg : "";
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(v) || v < min || v > max) {
        char want[96];
        snprintf(want, sizeof want, "a number from %g to %g", min, max);
        return cli_bad_value(c, want);
    }
    *out = v;
    return 0;
}

int cli_choice(cli_t *c, const char *const *names, int n, int *out)
{
    const char *text = c->arg ? c->arg : "";
    for (int i = 0; i < n; i++) {
        if (!strcmp(text, names[i])) {
            *out = i;
            return 0;
        }
    }
    char want[160] = "one of";
    size_t len = strlen(want);
    for (int i = 0; i < n && len < sizeof want; i++)
        len += (size_t)snprintf(want + len, sizeof want - len, "%s %s", i ? "," : "", names[i]);
    return cli_bad_value(c, want);
}

const char *cli_optional_word(cli_t *c, const char *const *words, int n)
{
    if (c->arg || optind >= c->argc)
        return c->arg;
    for (int i = 0; i < n; i++) {
        if (!strcmp(c->argv[optind], words[i])) {
            c->arg = c->argv[optind++];
            break;
        }
    }
    return c->arg;
}
