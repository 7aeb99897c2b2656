/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file plan: which ranks write and which stripes each writer owns. A pure
 * function of (file size, resolved options, the writer ranks), computed
 * identically on every rank, so no rank has to ask another who writes what.
 *
 * Three layouts map stripe s to a writer:
 * - block: writers own contiguous runs of stripes, differing by at most one;
 * - cyclic: writer s mod W;
 * - targets: stripe s lives on storage target s mod T. With W <= T writer w owns
 *   a contiguous group of ceil(T/W) or floor(T/W) targets; with W > T writer w
 *   serves target w mod T, and the writers of one target take its stripes in
 *   turn. No writer touches more than ceil(T/W) targets.
 */
#ifndef FWDIOI_PLAN_H
#define FWDIOI_PLAN_H

#include "fwdio.h"
#include "refuse.h"

typedef struct fwdioi_plan {
    uint64_t size;
    uint64_t stripe_size;
    uint64_t write_size;
    uint64_t nstripes;
    int nranks;
    int nwriters;
    const int *writer_ranks; /* [nwriters], owned by the caller */
    fwdio_layout_t layout;
    /* block: the last `block_long` writers own block_q + 1 stripes, the others
     * block_q */
    uint64_t block_q;
    uint64_t block_long;
    /* targets */
    uint64_t ntargets;
    /* W <= T: the last `group_long` writers own group_q + 1 targets, the others
     * group_q */
    uint64_t group_q;
    uint64_t group_long;
} fwdioi_plan_t;

/** Smallest stripe_size in force: every stripe is a piece of its own in a
 *  message (16 bytes of piece table) and a pwrite of its own at the writer.
 *  32 MiB in cyclic stripes from 2 ranks took 60 s and 0.5 GB per rank with
 *  1-byte stripes, 2.4 s with 64 bytes, 0.2 s with 512 bytes and more. */
#define FWDIOI_MIN_STRIPE_SIZE ((uint64_t)512)

/** Smallest write_size in force, unless the stripe is smaller: a unit being
 *  assembled takes ~200 bytes of bookkeeping (its table slot and byte
 *  ranges), which a smaller unit would not outweigh. */
#define FWDIOI_MIN_WRITE_SIZE ((uint64_t)4096)

/**
 * Fill in defaults and check options for a file over `nranks` ranks on `nnodes`
 * nodes. `in` may be NULL. After it, out->writers is the number of writers to
 * place (the placement may give fewer for a stride that runs out of ranks).
 * A stripe_size below FWDIOI_MIN_STRIPE_SIZE is raised to its smallest
 * multiple at or above it, and a write_size below FWDIOI_MIN_WRITE_SIZE (or
 * the stripe, if smaller) to its smallest multiple at or above that which
 * divides the stripe (fwdioi_options_report_clamps says so).
 * A refusal says why, naming where each value came from through `why`
 * (refuse.h; NULL: origins unknown, printed on stderr). Returns FWDIO_OK,
 * FWDIO_EINVAL or FWDIO_ENOMEM.
 */
int fwdioi_options_resolve(const fwdio_options_t *in, int nranks, int nnodes,
                           fwdio_options_t *out, fwdioi_origins_t *why);

/** Say on stderr (once per process for each size) that fwdioi_options_resolve
 *  raised a stripe_size or write_size given in `in`, to what and why, naming
 *  where the value came from through `why` (may be NULL). Call on one rank. */
void fwdioi_options_report_clamps(const fwdio_options_t *in, const fwdio_options_t *resolved,
                                  fwdioi_origins_t *why);

/** Build the plan; `writer_ranks` (nwriters of them, distinct) must outlive it. */
void fwdioi_plan_init(fwdioi_plan_t *plan, uint64_t size, const fwdio_options_t *resolved,
                      int nranks, const int *writer_ranks, int nwriters);

/** Give the plan another file size (a file opened for reading learns its
 *  size at the open); only the fields that depend on it change. */
void fwdioi_plan_set_size(fwdioi_plan_t *plan, uint64_t size);

/** Rank of writer `w` (0 <= w < nwriters). */
int fwdioi_plan_writer_rank(const fwdioi_plan_t *plan, int w);
/** Writer index of `rank`, or -1 if it does not write. */
int fwdioi_plan_writer_of_rank(const fwdioi_plan_t *plan, int rank);
/** Writer that owns stripe `s` (< nstripes). */
int fwdioi_plan_stripe_writer(const fwdioi_plan_t *plan, uint64_t s);
/** Number of stripes writer `w` owns. */
uint64_t fwdioi_plan_writer_stripes(const fwdioi_plan_t *plan, int w);
/** Index of stripe `s` among the stripes of its writer (0, 1, ...). */
uint64_t fwdioi_plan_local_stripe(const fwdioi_plan_t *plan, uint64_t s);
/** The stripe with local index `i` of writer `w` (i < writer_stripes). */
uint64_t fwdioi_plan_writer_stripe_at(const fwdioi_plan_t *plan, int w, uint64_t i);
/** The first stripe >= s owned by writer w, or nstripes if none. */
uint64_t fwdioi_plan_next_stripe(const fwdioi_plan_t *plan, int w, uint64_t s);
/** Whether [offset, offset + len) lies in the file and in stripes of writer w
 *  only (what a writer checks of every piece it receives). */
int fwdioi_plan_owns(const fwdioi_plan_t *plan, int w, uint64_t offset, uint64_t len);

/** Bytes of the file writer `w` owns. */
uint64_t fwdioi_plan_writer_bytes(const fwdioi_plan_t *plan, int w);
/** Storage target of stripe s (targets layout: s mod T; others: s mod T as
 *  well when a target count is known, which describes where the stripe lands). */
uint64_t fwdioi_plan_stripe_target(const fwdioi_plan_t *plan, uint64_t s);

/**
 * Every writer owning a stripe in [s0, s1] is among first, first+1, ... (count
 * of them, modulo nwriters); the route asks each of them for its stripes.
 */
void fwdioi_plan_writers_in_range(const fwdioi_plan_t *plan, uint64_t s0, uint64_t s1,
                                  int *first, int *count);

#endif
