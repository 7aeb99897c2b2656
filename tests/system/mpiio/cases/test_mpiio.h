/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mpiio (../test_mpiio.c, which describes what it checks): the helpers
 * its cases share (common.c) and the cases, one file per family of what they
 * exercise:
 *
 *   writes.c    contiguous, independent, file-pointer and nonblocking
 *               writes, same-step overlaps
 *   sizes.c     set_size, preallocate, get_size; existing files, append mode
 *   views.c     file views (subarray, vector, hindexed, struct, a sequence of
 *               views; darray, which the layer hands back)
 *   fallback.c  what the layer hands back to MPI-IO (shared pointers,
 *               atomicity) or leaves alone (files it does not match, opens
 *               on an intercommunicator)
 *   readback.c  reads of a rank's own bytes of the current step
 *   handles.c   other communicators, two files at once, two handles of one
 *               file, the info of one open passed to the next
 *   finalize.c  asynchronous closes, a close inside MPI_Finalize, an
 *               asynchronous close that fails
 *   errors.c    injected pwrite faults, the layer's own writes failing, an
 *               error's text under a long path
 *   types.c     memory types listed out of address order, a memory type of
 *               2^31 bytes
 *   opening.c   fwdio's open of a taken file failing after MPI_File_open
 *               returned (the layer does not wait for it)
 *
 * Every case runs on every rank of MPI_COMM_WORLD, reports what is wrong with
 * fail() (or CHECK, OK) and never stops at a failure; the driver sums them.
 */
#ifndef FWDIO_TEST_MPIIO_H
#define FWDIO_TEST_MPIIO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "pattern.h"

#ifndef MPIIO_TEST_LAYER
#define MPIIO_TEST_LAYER 0
#endif

/* ------------------------------------------------------------------------- */
/* Globals, failures, the watchdog (common.c)                                 */
/* ------------------------------------------------------------------------- */

extern int g_rank, g_size;
extern int g_layer;           /* assert the layer's get_info states */
extern const char *g_case;    /* the case running (in failure lines, seeds) */
extern char g_dir[4096];      /* --dir: where the files go */
extern uint64_t g_seed;       /* --seed */
extern int g_failures;        /* on this rank, all cases */
extern int g_case_failures;   /* on this rank, the current case */
extern int g_keep_files;      /* --keep: do not remove the files of passed cases */
/* Does MPI_Error_string give the string MPI_Add_error_string set on a code of
 * a predefined class (mpi_keeps_code_text)? The layer's error codes carry
 * their text so. MPICH 4.0's does not (it gives one of its own messages):
 * there the layer says the text on stderr, and the cases check the class of
 * its codes but not their text. */
extern int g_code_text;
int mpi_keeps_code_text(void);

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* SIGALRM (--timeout): says which case was stuck, exits 124. */
void on_alarm(int sig);
const char *err_text(int code);

/* Check an MPI return code; 1 if it is MPI_SUCCESS. */
int mpi_ok(int rc, const char *what, int line);
#define OK(call) mpi_ok((call), #call, __LINE__)

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            fail(__VA_ARGS__);                                                             \
    } while (0)

/* ------------------------------------------------------------------------- */
/* Random numbers (the same sequence on every rank for the same seed)         */
/* ------------------------------------------------------------------------- */

typedef struct {
    uint64_t s;
} rng_t;

uint64_t rng_below(rng_t *r, uint64_t n);
/* A seed for one generation of bytes of the current case. */
uint64_t seed_of(int generation);

/* ------------------------------------------------------------------------- */
/* The model of a file                                                        */
/* ------------------------------------------------------------------------- */

/*
 * The expected bytes of a file, and which of them were ever defined (written,
 * or there before the test opened the file). The others are holes: MPI-IO
 * itself does not promise what a hole reads as (its collective writes may
 * fill a hole between pieces with whatever its buffer held, and set_size
 * calls the bytes it adds undefined), so holes are checked as zeros only
 * where holes_zero is set: files written through the layer, which writes
 * just the bytes it is given (fwdio: "bytes nobody writes stay holes").
 */
typedef struct {
    uint8_t *b;
    uint8_t *def; /* 1: a defined byte, 0: a hole */
    int64_t size;
    int64_t cap;
    int holes_zero;
} model_t;

/* Set the file size: truncate, or extend with holes. */
void model_set_size(model_t *m, int64_t size);
void model_byte(model_t *m, int64_t off, uint8_t v);
/* Bytes [off, off + len) written with the pattern of `seed`. */
void model_put(model_t *m, int64_t off, int64_t len, uint64_t seed);
/* Bytes [old size, size) added by set_size or preallocate: never compared. */
void model_grow_undefined(model_t *m, int64_t size);
void model_free(model_t *m);
/* Pattern bytes of file range [off, off + len) in a new buffer. */
uint8_t *pattern_buf(int64_t off, int64_t len, uint64_t seed);

/* ------------------------------------------------------------------------- */
/* Paths, files, checks                                                       */
/* ------------------------------------------------------------------------- */

void path_of(char *out, size_t n, const char *name);
/* Rank 0 removes the file (if any); every rank waits. */
void remove_file(const char *name);
/* Rank 0 writes the model's bytes to a fresh file with POSIX calls; every rank waits. */
void posix_create(const char *name, const model_t *m);
/* Compare the bytes of `path` with the model on this rank (no barrier). */
void check_path_local(const char *path, const model_t *m);

/* FWDIO_MPIIO_CLOSE=async: a closed file is complete only once the next
   MPI_File_open (or delete) of its path returned (or MPI_Finalize). */
extern int g_async_close;

/* After every rank closed the file: rank 0 checks it against the model. */
void check_file(const char *name, const model_t *m);
/* With g_async_close (FWDIO_MPIIO_CLOSE=async, FWDIO_LOCAL_DIR): a closed
 * file is whole at path p once its next open returned; open and close it
 * read-only on comm (collective over comm's ranks). */
void settle_path(MPI_Comm comm, const char *p);
int file_exists(const char *name);

/* The files opened in the current case (removed when it passes). */
enum { MAX_TRACK = 64 };
extern char g_track[MAX_TRACK][4200];
extern int g_ntrack;
/* A file whose drain or asynchronous close MPI_Finalize waits for and
 * reports on: kept past its case (removing the path would end its drain
 * early, as MPI_File_delete would), removed after MPI_Finalize when every
 * case passed. Call it after the file's open. */
enum { MAX_LEFT = 8 };
extern char g_left[MAX_LEFT][4200];
extern int g_nleft;
void leave_to_finalize(const char *name);

/* Collective over comm. Returns MPI_FILE_NULL after a failure (reported). */
MPI_File open_comm(MPI_Comm comm, const char *name, int amode);
/* The same with the open's hints. */
MPI_File open_comm_info(MPI_Comm comm, const char *name, int amode, MPI_Info info);
MPI_File open_file(const char *name, int amode);
void close_file(MPI_File *fh);

enum { ST_ABSENT, ST_TAKEN, ST_RELEASED };
/* With the layer: the file's "fwdio_mpiio" info key says `want`. */
void expect_state(MPI_File fh, const char *what, int want);

/* Compare a buffer read back through MPI with the model's bytes. */
void check_buf(const char *what, const uint8_t *got, const model_t *m, int64_t off,
               int64_t len);
void check_count(const char *what, MPI_Status *st, MPI_Datatype t, int want);
void check_size(MPI_File fh, const char *what, int64_t want);
void check_position(MPI_File fh, const char *what, int64_t want);
void sync_barrier_sync(MPI_File fh);
/* Without the layer: sync-barrier-sync where the layer promises more. */
void plain_settle(MPI_File fh);

/* `rounds` collective writes of a piece per rank, modelled; generations
   gen, gen + 1, ... */
void write_rounds(MPI_File fh, model_t *m, int rounds, int64_t piece, int gen);
/* rc is an error of class want_class whose text holds want_text. */
void expect_error(int rc, const char *what, int want_class, const char *want_text);

/* ------------------------------------------------------------------------- */
/* Flattened views: the byte blocks of one tile of a file or memory type,     */
/* written down by hand from the same parameters the MPI type is made of.     */
/* ------------------------------------------------------------------------- */

typedef struct {
    int n, cap;
    int64_t *off, *len; /* bytes, from the tile's start, in typemap order */
    int64_t extent;     /* tile extent in bytes */
    int64_t bytes;      /* data bytes per tile */
} flat_t;

void flat_add(flat_t *f, int64_t off, int64_t len);
void flat_free(flat_t *f);
/* The model after `nbytes` data bytes written from data byte k0 of a view. */
void model_view_put(model_t *m, int64_t disp, const flat_t *ff, int64_t k0,
                    int64_t nbytes, uint64_t seed);
/* A memory buffer holding, in the layout `mf` (NULL: contiguous), the bytes
   to write at data bytes [k0, k0 + nbytes) of the view (disp, ff). */
uint8_t *view_mem(int64_t disp, const flat_t *ff, int64_t k0, int64_t nbytes,
                  const flat_t *mf, uint64_t seed, int64_t *memsize);
void check_byte_offset(MPI_File fh, const char *what, int64_t pos, int64_t esize,
                       int64_t disp, const flat_t *ff);

/* ------------------------------------------------------------------------- */
/* The cases (the driver's table says which --all runs)                       */
/* ------------------------------------------------------------------------- */

/* writes.c */
void case_contig(void);
void case_independent(void);
void case_pointers(void);
void case_nonblocking(void);
void case_overlaps(void);
/* sizes.c */
void case_sizes(void);
void case_reopen(void);
/* views.c */
void case_view_subarray(void);
void case_view_vector(void);
void case_view_hindexed(void);
void case_view_struct(void);
void case_view_sequence(void);
void case_view_many_runs(void);
void case_darray(void);
/* fallback.c */
void case_shared(void);
void case_atomic(void);
void case_not_taken(void);
void case_refused_on_one(void);
void case_intercomm(void);
/* readback.c */
void case_own_read(void);
void case_own_read_limit(void);
/* handles.c */
void case_comm_self(void);
void case_split(void);
void case_two_files(void);
void case_renamed(void);
void case_own_read_many(void);
void case_read_all_steps(void);
void case_read_in_flight(void);
void case_others_unsynced(void);
void case_others_unsynced_alias(void);
void case_read_other_handle(void);
void case_many_open(void);
void case_many_closed(void);
void case_dormant_wake(void);
void case_kept_comms(void);
void case_two_handles(void);
void case_info_reuse(void);
/* finalize.c */
void case_async_close(void);
void case_finalize_close(void);
void case_async_close_fault(void);
/* errors.c */
void case_fault_eio(void);
void case_fault_nospc(void);
void case_own_failures(void);
/* This rank's soft RLIMIT_FSIZE (RLIM_INFINITY lifts it again). */
void set_file_limit(rlim_t bytes);
void case_long_path(void);
void case_agree_fault(void);
/* types.c */
void case_memtype_order(void);
void case_large_memtype(void);
void case_large_count(void);
void case_tier(void);
void case_tier_fault(void);
/* opening.c */
void case_late_refusal(void);
void case_late_refusal_fault(void);

/* What the driver checks after MPI_Finalize (finalize.c). */
extern model_t g_after_finalize; /* async_close: the file checked after MPI_Finalize */
extern int g_check_after_finalize;
extern const char *const AFTER_FINALIZE_NAME;
extern const char *const DELETED_NAME;
extern model_t g_self_closed; /* finalize_close: the file checked after MPI_Finalize */
extern int g_check_self_closed;
extern const char *const SELF_CLOSED_NAME;
extern int g_expect_finalize_error; /* async_close_fault: MPI_Finalize must fail */

#endif
