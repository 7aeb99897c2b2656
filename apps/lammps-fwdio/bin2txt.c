/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lammps-fwdio-bin2txt: turn a binary dump of lammps-fwdio back into LAMMPS's
 * `dump custom id type x y z` text, with the same fixed-width format the
 * driver uses for that run (the same --precision), so that the result can be
 * compared byte for byte with the text dumps of the same run.
 *
 *   lammps-fwdio-bin2txt [--precision P] BINARY TEXT
 *
 * Every snapshot must be whole: its header valid and the same as the first
 * one's but for the step, and its records the atoms 1 .. N in order (a hole
 * in the file reads as id 0 and is reported). Exit status 0, 1 with a
 * message, or 2 for a bad command line. The checks and messages are
 * convert.c's, shared with the parallel converter lammps-fwdio-bin2txt-mpi
 * (bin2txt_mpi.c).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "convert.h"
#include "dump_binary.h"
#include "dump_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("lammps-fwdio-bin2txt: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* Convert the records of one snapshot (the header is already read). */
static int convert_atoms(FILE *in, FILE *out, const lfw_text_format_t *fmt, int64_t natoms,
                         int64_t snapshot)
{
    unsigned char rec[LFW_BIN_RECORD_SIZE];
    char line[LFW_TEXT_FORMAT_MAX * 8], why[LFW_CONV_WHY_MAX];
    if (fmt->line_len + 1 > sizeof line)
        return fail("atom lines of %zu bytes are longer than this tool handles", fmt->line_len);
    for (int64_t id = 1; id <= natoms; id++) {
        if (fread(rec, sizeof rec, 1, in) != 1) {
            lfw_conv_truncated(snapshot, id, why, sizeof why);
            return fail("%s", why);
        }
        if (lfw_conv_record(fmt, rec, id, snapshot, line, why, sizeof why))
            return fail("%s", why);
        fwrite(line, 1, fmt->line_len, out);
    }
    return 0;
}

static int convert(FILE *in, FILE *out, int precision)
{
    unsigned char raw[LFW_BIN_HEADER_SIZE];
    lfw_bin_header_t first = {0}, h;
    lfw_text_format_t fmt;
    char why[LFW_CONV_WHY_MAX], header[LFW_TEXT_HEADER_MAX];
    int64_t snapshot = 0;
    size_t got;
    while ((got = fread(raw, 1, sizeof raw, in)) == sizeof raw) {
        if (lfw_conv_header(raw, snapshot, snapshot ? &first : NULL, &h, why, sizeof why))
            return fail("%s", why);
        if (snapshot == 0) {
            first = h;
            if (lfw_conv_format(&fmt, &first, precision, why, sizeof why))
                return fail("%s", why);
        }
        size_t len = lfw_text_header(header, sizeof header, h.step, h.natoms, &h.box);
        fwrite(header, 1, len, out);
        if (convert_atoms(in, out, &fmt, h.natoms, snapshot))
            return 1;
        snapshot++;
    }
    if (ferror(in))
        return fail("read error: %s", strerror(errno));
    if (got != 0 || snapshot == 0) {
        lfw_conv_stray(got, snapshot, why, sizeof why);
        return fail("%s", why);
    }
    fprintf(stderr, "lammps-fwdio-bin2txt: %" PRId64 " snapshots of %" PRId64 " atoms, \"%s\"\n",
            snapshot, first.natoms, fmt.line);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lammps-fwdio-bin2txt [--precision P] BINARY TEXT\n"
            "Turns the binary dump BINARY of lammps-fwdio into LAMMPS's dump custom text\n"
            "TEXT, in the fixed-width format of the run's text dump.\n"
            "  --precision P  decimals of the coordinates, %d..%d, as the run's (6)\n"
            "  --help         this text\n"
            "Exit status: 0, 1 (a damaged dump or an I/O error, with a message), 2 (usage).\n",
            LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX);
}

enum { OPT_PRECISION = 256 };

static const struct option options[] = {
    {"precision", required_argument, NULL, OPT_PRECISION},
    CLI_HELP_OPTION,
    {0}};

static int parse_option(cli_t *c, int key, void *ctx)
{
    return key == OPT_PRECISION
               ? cli_int(c, LFW_TEXT_PRECISION_MIN, LFW_TEXT_PRECISION_MAX, (int *)ctx)
               : CLI_BAD;
}

int main(int argc, char **argv)
{
    int precision = 6;
    cli_t c;
    cli_begin(&c, "lammps-fwdio-bin2txt", argc, argv, options, 0);
    int parsed = cli_parse(&c, parse_option, &precision, usage, 1);
    if (parsed != 0)
        return cli_status(parsed);
    int i = cli_operand_index(&c);
    if (argc - i != 2) {
        cli_error(&c, "takes two arguments, BINARY and TEXT (%d given)", argc - i);
        return 2;
    }
    FILE *in = fopen(argv[i], "rb");
    if (!in)
        return fail("%s: %s", argv[i], strerror(errno));
    FILE *out = fopen(argv[i + 1], "wb");
    if (!out) {
        fclose(in);
        return fail("%s: %s", argv[i + 1], strerror(errno));
    }
    int rc = convert(in, out, precision);
    fclose(in);
    int write_error = ferror(out);
    if ((fclose(out) != 0 || write_error) && rc == 0)
        rc = fail("%s: %s", argv[i + 1], strerror(errno));
    return rc;
}
