/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Refusing a setting with its reason (fwdio.h, "Refusals"): one line on
 * stderr naming the field, its value, where the value came from and what is
 * allowed, e.g.
 *   fwdio: stripe_size 1000 (set in code) is not a multiple of write_size
 *   4194304 (default): a stripe holds whole write units
 *
 * A check names the origin of each value it prints with fwdioi_origin(), then
 * calls fwdioi_refuse(). The origins named decide who prints the line: with
 * `rank0_only_if_shared`, a refusal made only of values that are the same on
 * every rank (defaults, the config file rank 0 broadcast, an environment every
 * rank shares) is printed by rank 0 alone, since every rank refuses it alike;
 * any other refusal by every rank that makes it. A rank other than 0 puts its
 * rank in front of the line.
 */
#ifndef FWDIOI_REFUSE_H
#define FWDIOI_REFUSE_H

#include <stddef.h>
#include <stdio.h>

/** Room for one origin text, " (from /a/path/fwdio.conf:12)". */
enum { FWDIOI_ORIGIN_LEN = 320 };

typedef struct fwdioi_origins fwdioi_origins_t;
struct fwdioi_origins {
    /* Writes where `key`'s value came from ("set in code", "from
     * FWDIO_LAYOUT", "from /x/fwdio.conf:3", "default") into out; returns
     * whether that value is the same on every rank. NULL: nothing is known
     * (no origin is printed; the value counts as this rank's own). */
    int (*describe)(const fwdioi_origins_t *o, const char *key, char *out, size_t len);
    int rank;                 /* in the communicator; -1 outside an MPI call */
    int rank0_only_if_shared; /* see above */
    FILE *out;                /* NULL: stderr, through fwdioi_report */
    int shared;               /* the origins named since the last refusal were all shared */
};

/** Origins that know nothing but who prints (describe NULL). */
void fwdioi_origins_init(fwdioi_origins_t *o, int rank, int rank0_only_if_shared, FILE *out);

/**
 * " (<origin of key>)" in buf, or "" when it is unknown (`o` or its describe
 * NULL); returns buf. Notes the origin's sharing for the next fwdioi_refuse.
 */
const char *fwdioi_origin(fwdioi_origins_t *o, const char *key, char *buf, size_t len);

/** Print the refusal (printf format, no newline) as the policy above says;
 *  `o` may be NULL (printed, to stderr). Returns FWDIO_EINVAL. */
int fwdioi_refuse(fwdioi_origins_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
