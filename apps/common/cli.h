/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command lines of the apps and benchmarks, one way for all of them:
 * long options through getopt_long (a unique prefix and --name=value work
 * too), --help (-h) prints the program's usage on stdout and exits 0, and an
 * unknown option, a missing value or a bad value prints one line on stderr
 * that names it and points to --help, and exits 2. Sizes are read with the
 * library's one size grammar (runtime/util/parse_size.h), and every help text
 * states it in the words of CLI_SIZE_GRAMMAR.
 *
 * No MPI here: the serial tools link it as well. An MPI program parses after
 * MPI_Init with `quiet` set on every rank but 0, so that one rank speaks.
 *
 *   static const struct option opts[] = {
 *       {"size", required_argument, NULL, OPT_SIZE},
 *       {"durable", no_argument, NULL, OPT_DURABLE},
 *       CLI_HELP_OPTION, {0}};
 *   static int one(cli_t *c, int key, void *ctx)
 *   {
 *       struct opts *o = ctx;
 *       switch (key) {
 *       case OPT_SIZE: return cli_size(c, 1, UINT64_MAX, &o->size);
 *       case OPT_DURABLE: o->durable = 1; return 0;
 *       default: return CLI_BAD;
 *       }
 *   }
 *   cli_t c;
 *   cli_begin(&c, "fwdio-x", argc, argv, opts, rank != 0);
 *   int parsed = cli_parse(&c, one, &o, usage, 0);
 *   if (parsed != 0) { MPI_Finalize(); return cli_status(parsed); }
 */
#ifndef FWDIO_APP_CLI_H
#define FWDIO_APP_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

/** The size grammar as every help text states it (two lines, each ending in
 *  a newline; a format string without conversions). */
#define CLI_SIZE_GRAMMAR                                                                 \
    "Sizes (BYTES): digits, then optionally K, M, G or T (powers of 1024, either\n"     \
    "case) and after it an optional i, then an optional B: 4096, 64K, 8MiB, 2G, 1T.\n"

/** What cli_next returns for --help and -h. */
#define CLI_HELP 'h'
/** The table entry of --help. */
#define CLI_HELP_OPTION {"help", no_argument, NULL, CLI_HELP}
/** No option left (cli_next). */
#define CLI_END (-1)
/** A bad command line; the message is printed (cli_next, the value parsers). */
#define CLI_BAD (-2)

typedef struct cli {
    const char *prog;              /* the name in messages */
    int argc;
    char **argv;
    const struct option *options;  /* ends with a zero entry */
    int quiet;                     /* print nothing (an MPI rank other than 0) */
    const char *arg;               /* the value of the option cli_next returned */
    const char *name;              /* its long name, without the dashes */
} cli_t;

/** Starts reading argv[1 .. argc) against `options`. */
void cli_begin(cli_t *c, const char *prog, int argc, char **argv, const struct option *options,
               int quiet);

/**
 * The next option's key (the `val` of its table entry; CLI_HELP for -h),
 * with its value in c->arg; CLI_END when no option is left (the operands,
 * if any, are argv[cli_operand_index(c) .. argc)); CLI_BAD after the message
 * of an unknown option or a missing value.
 */
int cli_next(cli_t *c);

/**
 * Reads every option with `one` (the key of each, CLI_BAD for a bad one:
 * `one` returns 0, or CLI_BAD after its message). Returns 0 to go on, 1
 * after --help (usage(stdout) called unless quiet or usage is NULL), or
 * CLI_BAD after the message of a bad command line. Without `operands` a word
 * that is no option is bad; with it the operands are argv[cli_operand_index(c)
 * .. argc).
 */
int cli_parse(cli_t *c, int (*one)(cli_t *c, int key, void *ctx), void *ctx,
              void (*usage)(FILE *out), int operands);

/** A program's exit status for what cli_parse returned, not 0: 0 after
 *  --help, 2 for a bad command line. */
int cli_status(int parsed);

/** The index of the first operand once cli_next returned CLI_END. */
int cli_operand_index(const cli_t *c);

/** CLI_BAD with a message when an operand is left, else 0. */
int cli_no_operands(cli_t *c);

/**
 * Prints "<prog>: <message> (see <prog> --help)" on stderr unless quiet;
 * returns CLI_BAD.
 */
int cli_error(cli_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** "bad value 'V' for --NAME" of the current option, with `want` (what it
 *  takes: "a count from 1", ...) after it when not NULL; returns CLI_BAD. */
int cli_bad_value(cli_t *c, const char *want);

/* The value parsers of the current option's value: 0 and *out set, or
 * CLI_BAD after the message (out of [min, max] is bad too). */
int cli_size(cli_t *c, uint64_t min, uint64_t max, uint64_t *out);
int cli_int(cli_t *c, int min, int max, int *out);
int cli_i64(cli_t *c, int64_t min, int64_t max, int64_t *out);
/** A whole number in C's notation (0x1F, 017 too), for seeds. */
int cli_u64(cli_t *c, uint64_t min, uint64_t max, uint64_t *out);
int cli_double(cli_t *c, double min, double max, double *out);
/** Which of the `n` names the value is (its index into *out). */
int cli_choice(cli_t *c, const char *const *names, int n, int *out);

/**
 * For an option whose value may also stand as the next word (--cold drop,
 * beside --cold=drop; table entry optional_argument): when the option came
 * without "=value" and the next word is one of the n words, takes that word
 * as c->arg. Returns c->arg (NULL: no value).
 */
const char *cli_optional_word(cli_t *c, const char *const *words, int n);

#endif
