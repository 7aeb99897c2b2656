/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared helpers of the fwdio MPI integration tests: MPI start-up with a
 * watchdog, failure reporting, a per-test temporary directory, a seeded random
 * generator, callback bookkeeping and byte-for-byte verification of files
 * against the pattern of apps/common/pattern.h.
 *
 * Every helper reports problems through tc_fail(), which prints the rank, the
 * current phase and the message; tc_finish() combines the failure counts of
 * all ranks and turns them into the exit status.
 */
#ifndef FWDIO_TEST_COMMON_H
#define FWDIO_TEST_COMMON_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fwdio.h"

#if defined(__GNUC__)
#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TC_PRINTF(a, b)
#endif

/** Rank and size in MPI_COMM_WORLD (set by tc_mpi_init). */
extern int tc_rank;
extern int tc_size;

/**
 * MPI_Init_thread asking for MPI_THREAD_MULTIPLE (exits with a message if it
 * is not granted) and a watchdog thread that aborts the job after
 * `timeout_s` seconds, printing the phase each rank was in.
 */
void tc_mpi_init(int *argc, char ***argv, unsigned timeout_s);

/** Start only the watchdog (for programs that call MPI_Init_thread themselves). */
void tc_watchdog_start(unsigned timeout_s);

/** Name the current phase of the test; failures and timeouts mention it. */
void tc_phase(const char *fmt, ...) TC_PRINTF(1, 2);

/** fwdio_init on `comm` with `cfg` (NULL: defaults); aborts the job on failure. */
fwdio_runtime_t *tc_start_runtime_with(MPI_Comm comm, const fwdio_config_t *cfg);

/** tc_start_runtime_with a config that only sets the callback mode. */
fwdio_runtime_t *tc_start_runtime(MPI_Comm comm, fwdio_callback_mode_t mode);

/** Record one failure on this rank and print it at once. Thread-safe. */
void tc_fail(const char *fmt, ...) TC_PRINTF(1, 2);

/** Print an informational line prefixed with the rank. */
void tc_note(const char *fmt, ...) TC_PRINTF(1, 2);

/** Failures recorded on this rank so far. */
int tc_failures(void);

#define TC_CHECK(cond, ...)                                                                \
    do {                                                                                   \
        if (!(cond))                                                                       \
            tc_fail(__VA_ARGS__);                                                          \
    } while (0)

/** Check that an fwdio call returned `want`; print both codes by name otherwise. */
#define TC_EXPECT(got_expr, want, what)                                                    \
    do {                                                                                   \
        int tc_got_ = (got_expr);                                                          \
        int tc_want_ = (want);                                                             \
        if (tc_got_ != tc_want_)                                                           \
            tc_fail("%s: got %d (%s), expected %d (%s) [%s:%d]", (what), tc_got_,          \
                    fwdio_strerror(tc_got_), tc_want_, fwdio_strerror(tc_want_), __FILE__, \
                    __LINE__);                                                             \
    } while (0)

/**
 * Collective over MPI_COMM_WORLD: add up the failures of every rank, print a
 * summary on rank 0, remove the temporary directory if every rank passed
 * (it is kept, and named, after a failure), stop the watchdog and call
 * MPI_Finalize. Returns the process exit status (0 or 1).
 */
int tc_finish(const char *test_name);

/** Exit status of a skipped test; register the test with the ctest property
 *  SKIP_RETURN_CODE set to it. */
#define TC_SKIP 77

/**
 * Collective over MPI_COMM_WORLD, like tc_finish, for a test that cannot run
 * here (e.g. it needs a privilege it does not have): rank 0 prints
 * "SKIP <name>: <reason>". Returns TC_SKIP, or 1 if a rank recorded a failure
 * before.
 */
int tc_skip(const char *test_name, const char *reason);

/**
 * Collective over MPI_COMM_WORLD: rank 0 creates a fresh directory with
 * mkdtemp under $TC_TMPDIR, else $TMPDIR, else /tmp, and every rank gets its
 * name. Aborts the job
 * (after printing why) if it cannot be created.
 */
const char *tc_tmpdir(void);

/** out = "<tmpdir>/<name>". */
void tc_path(char *out, size_t out_size, const char *name);

/** Parse a size with the library's grammar ("123", "64K", "4M", "1GiB"; binary
 *  units, runtime/util/parse_size.h). Exits with a message on error. */
uint64_t tc_parse_size(const char *s);

/** Parse a decimal integer option value. Exits with a message on error. */
long tc_parse_long(const char *s);

/** Seeded, reproducible random numbers (a 64-bit mixing generator). */
typedef struct tc_rng {
    uint64_t state;
} tc_rng_t;

void tc_rng_seed(tc_rng_t *r, uint64_t seed);
uint64_t tc_rng_next(tc_rng_t *r);
/** Uniform in [0, n), n > 0. */
uint64_t tc_rng_below(tc_rng_t *r, uint64_t n);

/** A piece of the file: written with the pattern by rank `owner`, or a hole. */
typedef struct tc_extent {
    uint64_t offset;
    uint64_t len;
    int owner; /**< writing rank, or -1 for a hole */
} tc_extent_t;

/**
 * Cut [0, size) into extents of 1..max_len bytes, each owned by a random rank
 * of MPI_COMM_WORLD or, with hole_one_in > 0, a hole with probability
 * 1/hole_one_in. Drawn from `rng` only, so every rank that seeds it alike
 * gets the same plan. *out is malloc'd (free it); aborts if memory runs out.
 */
void tc_random_extents(tc_rng_t *rng, uint64_t size, uint64_t max_len, unsigned hole_one_in,
                       tc_extent_t **out, size_t *n_out);

/**
 * Collective over `comm`: verify every byte of `path` against the extents,
 * which must be sorted and cover [0, size) exactly (holes must read as zeros,
 * written extents as pattern_byte(seed, offset)). The file's size must be
 * `size`. The work is split evenly over the ranks of `comm`. Every mismatch is
 * reported with tc_fail (rank, path, offset). Returns the number of ranks that
 * found a problem (the same value on every rank).
 */
int tc_verify_extents(MPI_Comm comm, const char *path, uint64_t size, uint64_t seed,
                      const tc_extent_t *ext, size_t n_ext);

/** tc_verify_extents for a file written entirely with the pattern. */
int tc_verify_full(MPI_Comm comm, const char *path, uint64_t size, uint64_t seed);

/**
 * Write bytes [offset, offset + len) of the pattern through fwdio_write using
 * `piece` bytes per call (0: one call), overwriting the staging buffer after
 * every call (fwdio_write copies). Returns the first status that is not
 * FWDIO_OK, or FWDIO_OK.
 */
int tc_write_pattern(fwdio_file_t *f, uint64_t offset, uint64_t len, uint64_t seed,
                     size_t piece);

/** Collective over comm: 1 if every rank passed the same value, else 0. */
int tc_all_same(MPI_Comm comm, long v);

/**
 * Collective: open `path` (`size`, options `o`, which differ between the
 * ranks in the option `option`), close it at once and expect FWDIO_EINVAL on
 * every rank, with an error text that names the option.
 */
void tc_expect_disagreement(fwdio_runtime_t *rt, const char *path, uint64_t size,
                            const fwdio_options_t *o, const char *option);

/** Collective over comm: the sum of v. */
long tc_sum(MPI_Comm comm, long v);

/**
 * Bookkeeping of a file's callbacks. tc_cb_init() and then tc_cb_callbacks()
 * to pass to fwdio_open. The callbacks record how often and in what order
 * they ran, the status, the thread and the file handle they were given.
 */
typedef struct tc_cbstate {
    atomic_int ready_count;
    atomic_int complete_count;
    atomic_int ready_status;
    atomic_int complete_status;
    atomic_int seq;            /* incremented by each callback */
    atomic_int ready_seq;      /* value of seq when ready ran (1-based) */
    atomic_int complete_seq;   /* value of seq when complete ran */
    atomic_int on_main_thread; /* callbacks that ran on the thread of tc_cb_init */
    atomic_int off_main_thread;
    _Atomic(fwdio_file_t *) ready_file;
    _Atomic(fwdio_file_t *) complete_file;
    pthread_t main_thread;
    /* Optional hooks run inside the callbacks after the bookkeeping. */
    void (*on_ready)(struct tc_cbstate *st, fwdio_file_t *f, int status);
    void (*on_complete)(struct tc_cbstate *st, fwdio_file_t *f, int status);
    void *user;
} tc_cbstate_t;

void tc_cb_init(tc_cbstate_t *st);
fwdio_callbacks_t tc_cb_callbacks(tc_cbstate_t *st);

/**
 * Collective over comm, after the file finished on this rank: ready and
 * complete each ran exactly once, ready before complete, with statuses
 * `want_ready` / `want_complete`, and the statuses are the same on every rank
 * of comm. `mode` is the callback mode of the runtime: ON_POLL callbacks must
 * have run on the thread that called tc_cb_init, ON_PROGRESS ones on another
 * thread. `file` (may be NULL to skip) must be the handle passed to them.
 * Returns 0 if everything holds.
 */
int tc_cb_check(MPI_Comm comm, const tc_cbstate_t *st, const char *what, int want_ready,
                int want_complete, fwdio_callback_mode_t mode, const fwdio_file_t *file);

/**
 * Run fwdio_poll until *counter reaches `want` (a count kept by callbacks),
 * sleeping 200 us after a poll that ran nothing. The watchdog ends a test
 * that would wait forever.
 */
void tc_poll_until_count(fwdio_runtime_t *rt, atomic_int *counter, int want);

/** tc_poll_until_count for the complete callback of `st`. */
void tc_poll_until_complete(fwdio_runtime_t *rt, tc_cbstate_t *st);

/**
 * The options every MPI test takes: `--timeout SEC` and `--callback-mode
 * poll|progress`. If argv[*i] is one of them, its value is consumed (*i moves
 * past it) and 1 is returned; 0 if it is not. A bad mode exits with status 2.
 */
int tc_common_option(int argc, char **argv, int *i, unsigned *timeout,
                     fwdio_callback_mode_t *mode);

/** Number of distinct nodes (shared-memory domains) in comm. */
int tc_node_count(MPI_Comm comm);

/** Collective: non-zero when every rank is bound to a part of the machine
 *  (then fwdio's spread placement follows packages and cores, not rank order). */
int tc_ranks_bound(MPI_Comm comm);

/** This rank's stderr, sent to a file between tc_capture_begin and
 *  tc_capture_end (to check what fwdio reports). */
typedef struct tc_capture {
    char path[4096];
    int saved_fd;
} tc_capture_t;

/** Send this rank's stderr to "<tmpdir>/<name>.stderr.<rank>". */
void tc_capture_begin(tc_capture_t *c, const char *name);

/** Restore stderr; return what was captured (malloc'd, NUL-terminated, at
 *  most 64 KiB; never NULL: aborts without memory). */
char *tc_capture_end(tc_capture_t *c);

#endif
