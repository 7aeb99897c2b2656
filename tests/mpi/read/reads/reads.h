/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_reads (../test_reads.c, which describes what it checks): the parts
 * its cases share and the cases, one file per family:
 *
 *   files.c      groups of ranks, the file's model, options, writing the
 *                file (with fwdio or with plain pwrite)
 *   engine.c     the reading engine: a plan of reads issued at every moment
 *                a read may be issued, run, verified byte by byte, and the
 *                collective checks of callbacks and stats
 *   random.c     random read plans over random files, one or several at once
 *                (cases random, multi)
 *   restarts.c   reads of what a run wrote: on other ranks, right after the
 *                write of the path, while it is still open (ranks,
 *                after_write, still_open)
 *   requester.c  what the requesting rank is refused: reads past the end,
 *                calls that cannot work (range, misuse)
 *   failures.c   files that fail: failed opens, pread faults, ranks that
 *                disagree (open_fail, fault, contract)
 *   budgets.c    the readers' memory budget (budgets)
 */
#ifndef FWDIO_TEST_READS_H
#define FWDIO_TEST_READS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fwdio.h"
#include "test_common.h"

enum { GUARD = 16 };
#define GUARD_BYTE 0x5A
/* call_rc of a read that was never issued (its parent failed, or ready did). */
#define RC_NOT_CALLED 1000
/* Most wrong reads reported per file (the count of the rest is given). */
#define MAX_REPORTS 12

/* --callback-mode (test_reads.c) */
extern fwdio_callback_mode_t g_mode;

void *xmalloc(size_t n);
uint64_t min_u64(uint64_t a, uint64_t b);
uint64_t sum_u64(MPI_Comm comm, uint64_t v);
uint64_t max_u64(MPI_Comm comm, uint64_t v);

/* ---- ranks that run a runtime together (files.c) -------------------------- */

typedef struct group {
    MPI_Comm comm;
    int rank, size;
    fwdio_runtime_t *rt;
} group_t;

void group_set(group_t *g, MPI_Comm comm, fwdio_runtime_t *rt);

/* ---- the file's model: extents written with the pattern, or holes -------- */

typedef struct model {
    char path[4096];
    uint64_t size, seed;
    tc_extent_t *ext; /* sorted, tiling [0, size); owner -1: a hole */
    size_t n, cap;
} model_t;

/* [0, size - tail_hole) cut into extents of 1..max_len bytes owned by one of
 * `nranks` ranks or (1 in hole_one_in) holes, then a hole of tail_hole bytes.
 * Drawn from `r` only: ranks that seed it alike get the same model. */
void model_plan(model_t *m, const char *name, tc_rng_t *r, uint64_t size, uint64_t seed,
                uint64_t max_len, int nranks, unsigned hole_one_in, uint64_t tail_hole);
void model_free(model_t *m);
/* The bytes [off, off + len) of the model into out (zeros past its end). */
void expected_fill(const model_t *m, uint64_t off, size_t len, uint8_t *out);
int in_hole(const model_t *m, uint64_t off);
uint64_t model_holes(const model_t *m);
/* Rank 0 of comm writes the model with plain pwrite, last extent first (the
 * holes between are never written), then ftruncate makes the hole at the end. */
void write_plain(MPI_Comm comm, const model_t *m);
/* The file on disk is the model (collective over comm). */
int disk_matches(MPI_Comm comm, const model_t *m);
int64_t stat_size(const char *path);

/* ---- options (files.c) ---------------------------------------------------- */

typedef struct opts {
    fwdio_options_t o;
    int list[64];
} opts_t;

void opts_copy(opts_t *dst, const opts_t *src);
void opts_fixed(opts_t *p, uint64_t write_size, uint64_t stripe, int writers,
                fwdio_layout_t layout);
/* Options drawn from `r` (the same on ranks that seed it alike). */
void opts_random(opts_t *p, tc_rng_t *r, int nranks);
const char *describe(const opts_t *p, char *out, size_t n);

/* ---- writing with fwdio (files.c) ----------------------------------------- */

/* Open `m->path` for writing, write this rank's extents, close; not waited for. */
fwdio_file_t *write_fwdio_start(group_t *g, const model_t *m, const opts_t *p,
                                tc_rng_t *mine, tc_cbstate_t *cb);
void write_fwdio_end(group_t *g, fwdio_file_t *f, tc_cbstate_t *cb, const char *what);
void write_fwdio(group_t *g, const model_t *m, const opts_t *p, tc_rng_t *mine);

/* ---- reading: the engine (engine.c) --------------------------------------- */

/* When a read is issued. */
enum {
    W_EARLY,    /* right after fwdio_open_read */
    W_READY_CB, /* from the ready callback */
    W_THREAD,   /* from a second application thread, from the open on */
    W_CHILD,    /* from the done callback of another read */
    W_LATER     /* after ready, on the main thread */
};

typedef struct reader reader_t;

typedef struct rd {
    reader_t *rs;
    uint64_t off;
    size_t len;
    uint8_t *base; /* GUARD + len + GUARD bytes; NULL: buf is NULL (a 0-byte read) */
    uint8_t *buf;
    int when;
    int parent;  /* W_CHILD: the read whose done issues this one */
    int child;   /* the read this one's done issues, or -1 */
    int no_cb;   /* issued with done NULL */
    int expect;  /* the status done must give ... */
    int alt;     /* ... or this one (an OK read must hold the right bytes) */
    int rc_alt;  /* fwdio_read may return this instead of FWDIO_OK (done then not called) */
    int call_rc; /* what fwdio_read returned, or RC_NOT_CALLED */
    atomic_int done_count;
    atomic_int status;
    atomic_int bad_cb; /* 1 wrong file, 2 wrong buffer, 4 wrong thread, 8 after complete */
} rd_t;

struct reader {
    group_t *g;
    const model_t *m;
    char what[160];
    opts_t ro;
    _Atomic(fwdio_file_t *) f;
    rd_t *r;
    int n;
    atomic_int issued;             /* reads issued, or given up */
    atomic_int ended;              /* done callbacks run */
    atomic_int *must_be_complete;  /* ready must come after this count reached 1 */
    atomic_int order_bad;
    int want_ready, want_complete; /* statuses the file must give */
    pthread_t main;
    pthread_t thread;
    int has_thread;
    tc_cbstate_t cb;
};

/* The done of reads that must be refused at the call (counted in g_never). */
extern atomic_int g_never;
void never_done(fwdio_file_t *f, void *buf, int status, void *arg);

void reader_init(reader_t *rs, group_t *g, const model_t *m, const opts_t *ro, int n,
                 const char *what);
/* Read i: [off, off + len), issued `when`; buffer allocated (NULL for a 0-byte
 * read when null_buf). Expected to end FWDIO_OK. */
rd_t *rd_set(reader_t *rs, int i, uint64_t off, size_t len, int when, int null_buf);
/* The random read plan of this rank: `n` reads of at most max_bytes in all. */
void plan_random(reader_t *rs, tc_rng_t *shared, tc_rng_t *mine, size_t max_bytes);
/* Open for reading, issue the early reads, start the second thread. */
void reads_open(reader_t *rs);
/* Wait for ready, check the size, issue the later reads, close. */
void reads_close(reader_t *rs);
/* fwdio_wait: the status the file must end with. */
int reads_wait(reader_t *rs);
/* reads_close, then reads_wait: returns fwdio_wait's status. */
int reads_run(reader_t *rs);
/* Every read: called and ended as it should, and an OK read holds every byte
 * of the model. Returns the number of reads that ended with FWDIO_EREAD. */
int reads_verify(reader_t *rs);
/* Collective over the group: callbacks, stats, and the readers pread at least
 * every byte some rank asked for. */
void reads_collective(reader_t *rs);
void reads_free(reader_t *rs);
/* A whole random read of model m with options ro: plan, open, run, verify. */
void read_random(group_t *g, const model_t *m, const opts_t *ro, uint64_t seed, int nreads,
                 size_t max_bytes, const char *what);
/* A file size: mostly 64 KiB .. 3 MiB, sometimes below a unit; never a
 * multiple of 4 KiB (so of no unit). */
uint64_t pick_size(tc_rng_t *r);

/* ---- the cases ---------------------------------------------------------- */

/* random.c */
void case_random(uint64_t seed, int rounds, int nreads, size_t max_bytes,
                 uint64_t writer_buffer);
void case_multi(uint64_t seed, int nreads);
/* restarts.c */
void case_ranks(uint64_t seed, int nreads);
void case_after_write(uint64_t seed, int nreads);
void case_still_open(uint64_t seed);
/* requester.c */
void case_range(uint64_t seed);
void case_misuse(uint64_t seed);
/* failures.c */
void case_open_fail(uint64_t seed);
void case_fault(uint64_t seed, int expect, int err, int fault_rank);
void case_contract(uint64_t seed);
/* budgets.c */
void case_budgets(uint64_t seed, uint64_t writer_buffer);

#endif
