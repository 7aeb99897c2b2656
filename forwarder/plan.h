/*
 * The file plan: which ranks write and which stripes each writer owns. A pure
 * function of (file size, resolved options, rank count), computed identically
 * on every rank, so no rank has to ask another who writes what.
 */
#ifndef FWDIOI_PLAN_H
#define FWDIOI_PLAN_H

#include "fwdio.h"

typedef struct fwdioi_plan {
    uint64_t size;
    uint64_t stripe_size;
    uint64_t write_size;
    uint64_t nstripes;
    int nranks;
    int nwriters;
    int first_writer;
    int writer_stride;
    fwdio_layout_t layout;
    /* block layout: the last `block_long` writers own block_q + 1 stripes, the
     * others block_q */
    uint64_t block_q;
    uint64_t block_long;
} fwdioi_plan_t;

/**
 * Fill in defaults and check options for a file over `nranks` ranks on `nnodes`
 * nodes. `in` may be NULL. Returns FWDIO_OK or FWDIO_EINVAL.
 */
int fwdioi_options_resolve(const fwdio_options_t *in, int nranks, int nnodes,
                           fwdio_options_t *out);

/** Build the plan from resolved options. */
void fwdioi_plan_init(fwdioi_plan_t *plan, uint64_t size, const fwdio_options_t *resolved,
                      int nranks);

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
/** The first stripe >= s owned by writer w, or nstripes if none. */
uint64_t fwdioi_plan_next_stripe(const fwdioi_plan_t *plan, int w, uint64_t s);
/** Bytes of the file writer `w` owns. */
uint64_t fwdioi_plan_writer_bytes(const fwdioi_plan_t *plan, int w);

/**
 * The writers owning any stripe in [s0, s1] are first, first+1, ... (count of
 * them, modulo nwriters).
 */
void fwdioi_plan_writers_in_range(const fwdioi_plan_t *plan, uint64_t s0, uint64_t s1,
                                  int *first, int *count);

#endif
