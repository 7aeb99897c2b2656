/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI-IO layer on fwdio (libfwdio-mpiio.so): shared state of its files.
 *
 * The application keeps the real MPI_File: the layer opens every file through
 * PMPI_File_open, so whatever it does not handle reaches the real MPI-IO on
 * the same handle. For a file it takes, it also opens a fwdio stream of the
 * same path, sends writes there, and keeps what MPI's consistency rules need:
 * the view, the individual file pointer, the highest byte this rank wrote,
 * and the extents this rank wrote since its last fwdio step ended (the
 * collective calls on the file end steps). */
#ifndef FWDIO_MPIIO_LAYER_H
#define FWDIO_MPIIO_LAYER_H

#include "copies.h"
#include "ranges.h"
#include "view.h"

#include <fwdio.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* The MPI calls the layer defines (calls.c) are exported explicitly: the
 * library is built with hidden visibility, and only Open MPI's mpi.h declares
 * its calls with default visibility (OMPI_DECLSPEC); under MPICH's, whose
 * declarations say nothing, they stayed hidden, and every call reached MPI. */
#define MPIIO_EXPORT __attribute__((visibility("default")))

#define MPIIO_REASON_LEN 160
/* The most other handles of one path a write looks at. */
#define MPIIO_ALIASES_MAX 16

/* The extents of the file this rank handed to the stream in the current
 * step (a set of byte ranges, O(log n) a write). A write that lands on one
 * of them again cannot go to the stream in the same step (MPI orders a
 * rank's own writes; fwdio's writers do not order a step's overlapping
 * pieces), so the layer keeps it and writes it itself once the step is in
 * the file (see access.c). Past MPIIO_EXTENTS_MAX a new extent joins its
 * nearest neighbour (extents.c): a larger extent only sends more writes
 * that way. */
typedef fwdioi_ranges_t mpiio_extents_t;

#define MPIIO_EXTENTS_MAX ((size_t)1 << 20)

/* Bytes the layer writes itself once the current step is in the file. */
typedef struct mpiio_overlay {
    int64_t off, len;
    char *data;
    struct mpiio_overlay *next;
} mpiio_overlay_t;

/* The default of FWDIO_MPIIO_READBACK: bytes kept per file and step. */
#define MPIIO_READBACK_DEFAULT ((int64_t)64 << 20)
/* A read of a rank's own bytes patches at most this many kept copies: past
 * them the copies are written to the file first (readback.c). */
#define MPIIO_PATCH_MAX 256
/* The stripe of the layer's files when nothing else sets one (no
 * striping_unit hint, no FWDIO_STRIPE_SIZE, FWDIO_WRITE_SIZE or FWDIO_CONFIG
 * in the environment): Lustre's default stripe unit, so that a step smaller
 * than fwdio's own default stripe (16 MiB) is spread over the writers as
 * MPI-IO's collective buffering spreads it over its aggregators
 * (docs/results/mpiio-layer.md, "The layer's default stripe"). */
#define MPIIO_DEFAULT_STRIPE ((uint64_t)1 << 20)

/*
 * The stream's open, not waited for at MPI_File_open (opening.c): a taken
 * file's stream is `pending` until its ready status is known. Meanwhile the
 * bytes handed to it are also kept (the open log, at most
 * MPIIO_OPEN_LOG_MAX bytes), so that if fwdio's open fails the layer can
 * still write them itself and give the file back to MPI-IO (`given_back`
 * until the next collective call on the file agrees on how that went).
 */
enum { MPIIO_OPEN_KNOWN, MPIIO_OPEN_PENDING, MPIIO_OPEN_GIVEN_BACK };
/* ready_status before the ready callback came (fwdio's statuses are <= 0). */
#define MPIIO_READY_UNKNOWN 1
/* The most bytes the open log keeps, per file and rank: a write that would
 * take it past them waits for the ready status first (and the log goes, or
 * the file is given back). The open's status comes tens to hundreds of
 * microseconds after MPI_File_open; a small file's writes (headers, a
 * 64 KiB piece per rank) fit many times over, so they never wait, and the
 * extra memory of every file open at once stays small. Waiting past it
 * costs that latency once, little beside copying 4 MiB (about a
 * millisecond). It is also fwdio's default staging share at 128 ranks a
 * node (README.md, staging_buffer): fwdio holds the writes made before
 * ready against that budget, so a log within it rarely makes fwdio_write
 * wait for room itself (it would wait for the ready status too). */
#define MPIIO_OPEN_LOG_MAX ((int64_t)4 << 20)

/* The default of FWDIO_MPIIO_HOLD: bytes a rank holds before its file's
 * stream gets them (hold.c). A small file's pieces (64 KiB per rank in
 * bench/mpiio_write_call.c) fit; a file that grows past it goes through
 * the stream after a copy of at most this much. */
#define MPIIO_HOLD_DEFAULT ((int64_t)256 << 10)
/* The most bytes held by all files of a process at once (hold.c): a write
 * past it hands its file's held bytes over instead. */
#define MPIIO_HOLD_TOTAL ((int64_t)16 << 20)
/* mpiio_hold_keep: the bytes are not held (the caller hands them over). */
#define MPIIO_NOT_HELD 1

/* Kinds of calls whose time FWDIO_VERBOSE reports at the close. */
enum { MPIIO_T_WRITE, MPIIO_T_SIZE, MPIIO_T_SYNC, MPIIO_T_READ, MPIIO_T_CLOSE,
       MPIIO_BLOCKED_KINDS };

/* A step ended here and not known complete: every rank's bytes in it lie
 * in [lo, hi) (inflight.c). */
typedef struct mpiio_inflight {
    uint64_t step;
    int64_t lo, hi;
} mpiio_inflight_t;
/* The most steps inflight.c keeps apart (older ones merge). */
#define MPIIO_INFLIGHT_MAX 8

/* What a call that ends a step agrees on besides its outcome
 * (mpiio_agree_step_end): each field this rank's before the round, every
 * rank's after it. */
typedef struct mpiio_step_end {
    int64_t lo, hi;         /* the bounds of the bytes written in the step */
    int64_t ind_lo, ind_hi; /* of those written independently and not in the
                             * file when the call returned (unsynced.c) */
    int64_t first, last;    /* the lowest and highest rank that wrote those
                             * (INT64_MAX and -1: none) */
    int64_t read_lo, read_hi; /* this rank's reads (FWDIO_VERBOSE; not agreed) */
    const char *read_call;
} mpiio_step_end_t;

typedef struct mpiio_file {
    MPI_File fh;                 /* the real handle: the application's */
    char *path;                  /* as fwdio opened it */
    MPI_Comm comm;               /* the layer's duplicate of the file's communicator */
    int comm_slot;               /* its slot among the group's kept ones, or -1 */
    int rank;                    /* in comm */
    fwdio_runtime_t *rt;         /* the runtime of the file's ranks */
    fwdio_options_t opts;        /* the stream's options (from the open's hints) */
    fwdio_file_t *stream;        /* NULL once the file is released */
    char released[MPIIO_REASON_LEN]; /* why the file went back to MPI-IO, or "" */
    uint64_t steps_ended;
    mpiio_view_t view;
    int64_t fp;                  /* individual file pointer, in etypes */
    int64_t max_end;             /* highest end of a byte this rank wrote */
    int64_t synced_end;          /* every rank's max_end at the last MPI_File_sync */
    int sync_owed;               /* a sync returned before the bytes were durable */
    mpiio_extents_t own;         /* this rank's bytes in the current step */
    int64_t own_lo, own_hi;      /* their bounds (none: lo INT64_MAX, hi 0) */
    int64_t ind_lo, ind_hi;      /* of those written independently (unsynced.c) */
    /* FWDIO_VERBOSE: the bounds of this rank's independent reads in the
     * current step of bytes not its own (unsynced.c), and the first's call */
    int64_t read_lo, read_hi;
    const char *read_call;
    /* the steps ended here not known complete, with every rank's bounds
     * (inflight.c) */
    mpiio_inflight_t inflight[MPIIO_INFLIGHT_MAX];
    int ninflight;
    mpiio_overlay_t *overlay, **overlay_tail; /* in call order */
    mpiio_copies_t copies;       /* copies of `own`'s bytes, for this rank's reads */
    int64_t readback_limit;      /* FWDIO_MPIIO_READBACK: most bytes in `copies` */
    int direct_fd;               /* the layer's own descriptor for those writes, or -1 */
    /* What became of this rank's writes (FWDIO_VERBOSE prints them at the
     * close): to the stream, written again by the layer, new streams. */
    int64_t bytes_stream, bytes_direct, syncs;
    /* Seconds this rank spent inside the file's MPI-IO calls, by kind. */
    double blocked[MPIIO_BLOCKED_KINDS];
    double t_open;               /* seconds this rank's MPI_File_open took */
    int error_code;              /* MPI error code of the file's failure, the same on every
                                    rank from the same call on (agreed, or a step's status) */
    int local_code;              /* this rank's own failure not yet agreed on (access.c) */
    int said_shared;             /* FWDIO_VERBOSE told of the shared pointer's calls */
    int said_unsynced_read;      /* ... and of independent reads of others' bytes */
    int said_unsynced_rule;      /* ... and of MPI's rule for them (once) */
    atomic_int aliased;          /* another taken handle of the same path is open here
                                    (set under state.c's lock by any thread's open or
                                    close, read by this handle's writes) */
    int write_only;              /* MPI_MODE_WRONLY: this handle never reads (no copies) */
    int tier;                    /* its stream is in fwdio's node-local tier (files.c) */
    atomic_int opening;          /* MPIIO_OPEN_*: the stream's open (opening.c); atomic
                                    for state.c's lists, read by other threads' opens */
    atomic_int ready_status;     /* the ready callback's status (progress thread), or
                                    MPIIO_READY_UNKNOWN */
    mpiio_copies_t open_log;     /* bytes handed to the stream while the open is pending */
    mpiio_copies_t hold;         /* bytes held back from the stream (hold.c) */
    int64_t hold_max;            /* FWDIO_MPIIO_HOLD for this file: 0, never held */
    int holding;                 /* every byte for the stream so far is in `hold` */
    int dormant;                 /* its stream was opened dormant (every rank holds) */
    int record_pending;          /* this struct is freed with its stream (hold.c) */
    struct mpiio_file *next;
} mpiio_file_t;

/* --- say.c: what the layer says on stderr ------------------------------------- */
int mpiio_verbose(void); /* FWDIO_VERBOSE set, not 0 */
void mpiio_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- state.c: is the layer on; runtimes per communicator; the file table --- */
int mpiio_active(void);             /* FWDIO_MPIIO set and MPI_THREAD_MULTIPLE given */
int mpiio_wanted(void);             /* FWDIO_MPIIO set (asked for before MPI_Init) */
void mpiio_set_thread_level(int provided);
const char *mpiio_match(const char *path); /* the pattern that takes path, or NULL */
fwdio_runtime_t *mpiio_runtime_for(MPI_Comm comm, char *why, size_t why_len);
int mpiio_runtime_exists(MPI_Comm comm); /* 1: mpiio_runtime_for finds one, no collective */
/* The files' communicators of a group, kept by its runtime entry for later
 * files (runtime/util/comm_pool.h) instead of one MPI_Comm_dup per file:
 * an open reserves the idle ones of comm's runtime (0 without one) and
 * offers them in its first agreement (bitwise AND); with the agreed slots
 * every rank then takes the same one, or duplicates comm into a new slot
 * (pool: every rank had the runtime before this open, so every rank's slots
 * are the same; else the duplicate is not kept), the rest given back;
 * returns the slot (-1: not kept) with *out set (MPI_COMM_NULL if the
 * duplication failed). A closed file gives it back (freed when the slot is
 * -1 or the runtime is gone). */
uint64_t mpiio_comms_reserve(MPI_Comm comm);
int mpiio_comms_choose(fwdio_runtime_t *rt, MPI_Comm comm, uint64_t reserved, uint64_t agreed,
                       int pool, MPI_Comm *out);
void mpiio_comms_unreserve(MPI_Comm comm, uint64_t reserved); /* the open was not taken */
void mpiio_comms_give_back(fwdio_runtime_t *rt, int slot, MPI_Comm *comm);
void mpiio_add_file(mpiio_file_t *f);
mpiio_file_t *mpiio_find(MPI_File fh);
void mpiio_remove_file(mpiio_file_t *f);
/* The other taken handles of f's path open in this process (at most max;
 * none unless f->aliased): writes through f must land after what this
 * process wrote through them (access.c). */
size_t mpiio_aliases(const mpiio_file_t *f, mpiio_file_t **out, size_t max);
/* The taken handles of path served by runtime rt (opened by the same group
 * of ranks; any runtime when rt is NULL), at most max. */
size_t mpiio_taken_in(const char *path, const fwdio_runtime_t *rt, mpiio_file_t **out,
                      size_t max);
#define mpiio_taken_with_path(path, out, max) mpiio_taken_in((path), NULL, (out), (max))
/* The same, with the handles whose failed open the layer gave back to MPI-IO
 * without a collective call since (the ranks still agree on them: every
 * rank of the group holds them, whether it resolved the open yet or not). */
size_t mpiio_held_in(const char *path, const fwdio_runtime_t *rt, mpiio_file_t **out,
                     size_t max);

/* Files closed with FWDIO_MPIIO_CLOSE=async that may still be writing. */
int mpiio_close_async(void);
int mpiio_sync_async(void);         /* FWDIO_MPIIO_SYNC=async */
/* The size in environment variable `name` (fwdioi_parse_size), def when it
 * is unset, or (rank 0 says so, once per process) not a size from 0 to max;
 * `what` ends the message ("... bytes are <what>"). `name` a literal. */
int64_t mpiio_env_size(const char *name, int64_t def, int64_t max, const char *what, int rank);
/* FWDIO_MPIIO_READBACK, or its default (rank 0 says when the value is bad). */
int64_t mpiio_readback_limit(int rank);
/* Remember a closed file's stream still writing (FWDIO_MPIIO_CLOSE=async),
 * draining from the node-local tier to its path, or finishing without a
 * byte (hold.c); the next open of the path, its MPI_File_delete and
 * MPI_Finalize wait for it (mpiio_wait_pending) and return its failure,
 * unless `reported` (the close returned the file's failure already, or the
 * stream had nothing to write: it is waited for quietly). `record`, if not
 * NULL, is freed once the stream is (its callbacks' argument). Quiet streams
 * found done are let go at each call, and past MPIIO_PENDING_MAX quiet ones
 * the oldest is waited for, so that a code closing many small files does not
 * pile them up. */
void mpiio_add_pending(fwdio_file_t *stream, const char *path, int reported, void *record);
#define MPIIO_PENDING_MAX 16
int mpiio_wait_pending(const char *path); /* NULL: every path; MPI error code */
int mpiio_finalize_runtimes(void);

/* --- aliases.c: handles of a matching path that the layer did not take ------- */
/* Remember (and forget) a write-capable handle of a matching path that was
 * not taken; is one of path open in this process? */
void mpiio_untaken_add(MPI_File fh, const char *path);
void mpiio_untaken_remove(MPI_File fh);
int mpiio_untaken_open(const char *path);
/* A write through such a handle: begin (before the real call) waits for the
 * steps the taken handles of its path ended and returns non-zero when the
 * write may land on bytes of their current steps; then end (after the real
 * call) copies its bytes over theirs. */
typedef struct mpiio_untaken_write {
    mpiio_file_t *alias[MPIIO_ALIASES_MAX];
    size_t n;
    mpiio_view_t view; /* the real handle's */
    int64_t pos;       /* the write's first data byte in the view */
} mpiio_untaken_write_t;
int mpiio_untaken_begin(MPI_File fh, MPI_Offset offset, int at_pointer, mpiio_untaken_write_t *w);
int mpiio_untaken_end(mpiio_untaken_write_t *w, int rc, const void *buf, int count,
                      MPI_Datatype type); /* returns rc */

/* --- errors.c: fwdio failures as MPI error codes ---------------------------- */
/* "fwdio-mpiio: <message> (<path>)" in at most len bytes (MPI's error string
 * limit): the message first, the path shortened from its start to fit. */
void mpiio_error_text(char *out, size_t len, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An MPI error code of the class that fits `status` (and errno), whose
 * MPI_Error_string is `text`. */
int mpiio_error_code(int status, int sys_errno, const char *text);
/* The file's stream failed (or a call on it returned `status`): the file's
 * sticky error code, through the file's error handler. */
int mpiio_file_error(mpiio_file_t *f, int status, const char *call);
/* The same for a failed drain of the node-local tier to the path (a step's,
 * before the close): its text says so. */
#define MPIIO_DRAIN_FAILED "the drain from the node-local tier to the path failed"
int mpiio_drain_error(mpiio_file_t *f, int status, const char *call);
/* A collective call's outcome made the same on every rank (collective), also
 * for a failure of this rank's own since its last collective call
 * (local_code): when any rank failed, a rank that did not returns an error
 * of the lowest failing rank's class whose text is that rank's, through the
 * file's handler; a failing rank keeps its own code. The file has then
 * failed on every rank (error_code). */
int mpiio_agree_error(mpiio_file_t *f, int code, const char *call);
/* The same, in the same round: *flag (this rank's) becomes whether any rank
 * set it. */
int mpiio_agree_error_flag(mpiio_file_t *f, int code, const char *call, int *flag);
/* The same with one flag, and *failed: whether the agreement's MPI call
 * itself failed on this rank (the flag is then taken as set, and this rank
 * cannot know what the others chose). */
int mpiio_agree_error_round(mpiio_file_t *f, int code, const char *call, int *flag,
                            int *failed);
/* The same with nflags flags (at most MPIIO_AGREE_FLAGS_MAX), each set
 * where any rank set it. */
#define MPIIO_AGREE_FLAGS_MAX 3
int mpiio_agree_error_flags(mpiio_file_t *f, int code, const char *call, int *flags, int nflags);
/* mpiio_agree_error_round with nflags flags, for a call that ends a step,
 * in the same round: *e (this rank's, mpiio_step_end_mine) becomes every
 * rank's (unsynced.c); where the round's MPI call failed here, every byte
 * may be on its way (lo 0, hi INT64_MAX) and no rank wrote independently. */
#define MPIIO_AGREE_WORDS_MAX 6
int mpiio_agree_step_end(mpiio_file_t *f, int code, const char *call, int *flags, int nflags,
                         int *failed, mpiio_step_end_t *e);
/* The same in two halves, for a round that may overlap a blocking call of
 * MPI's (the close's second agreement beside MPI_File_close): start takes
 * `code` (and this rank's earlier failure) into an MPI_Iallreduce (its
 * failure to start, an MPI code, comes back from finish too); finish waits
 * and returns what mpiio_agree_error would. Every rank makes both, and no
 * other agreement of the file between them. */
typedef struct mpiio_agreement {
    int code;
    int mine[2], all[2]; /* a round without flags: the failing rank and one slot */
    MPI_Request req;
    int rc;
} mpiio_agreement_t;
int mpiio_agree_error_start(mpiio_file_t *f, int code, mpiio_agreement_t *a);
int mpiio_agree_error_finish(mpiio_file_t *f, mpiio_agreement_t *a, const char *call);
/* After mpiio_agree_error_finish: whether no rank reported a failure in the
 * round (where this rank's own part of the exchange failed, whether this
 * rank reported none: the others decide on what they got). */
int mpiio_agreement_clean(const mpiio_file_t *f, const mpiio_agreement_t *a);
/* An agreement of the layer's (mpi_call, in `call`) failed on this rank
 * with MPI's rc: the error `call` returns here, saying so. */
int mpiio_agreement_failed(mpiio_file_t *f, int rc, const char *call, const char *mpi_call);
/* A failure of this rank's own (its part of a write): the call's code
 * through the file's handler, remembered until the next collective call
 * makes every rank return it. `status` is fwdio's; the text says `call`. */
int mpiio_local_error(mpiio_file_t *f, int status, int sys_errno, const char *text);
/* A refusal of the layer itself (class `cls`), through the file's handler. */
int mpiio_refuse(mpiio_file_t *f, int cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- files.c: taking and releasing files -------------------------------------- */
int mpiio_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh);
/* The hints of an open of path that fwdio can honour (hints.c): a new info
 * to free, or MPI_INFO_NULL. The others are left out, as MPI ignores hints
 * it cannot use; FWDIO_VERBOSE says which. */
MPI_Info mpiio_hints_for_fwdio(MPI_Info info, const char *path);
int mpiio_close(mpiio_file_t *f, MPI_File *fh);
/* Hand the file back to MPI-IO for good (collective). */
int mpiio_release(mpiio_file_t *f, const char *reason);

/* --- opening.c: the stream's open after MPI_File_open returned ------------------ */
/* The callbacks to open the stream with (its ready status lands in f). */
void mpiio_opening_callbacks(mpiio_file_t *f, fwdio_callbacks_t *cbs);
/* Cheap, never blocks (every call on a taken file): the log goes once the
 * open is known good. */
void mpiio_opening_check(mpiio_file_t *f);
/* A pending open whose outcome nothing of this rank's depends on yet: it
 * wrote no byte to the file and no step has ended, so an independent read
 * reads what MPI-IO holds whatever the outcome (never blocks). */
int mpiio_opening_moot(const mpiio_file_t *f);
/* Would a write of count x type take the open log past MPIIO_OPEN_LOG_MAX? */
int mpiio_opening_log_full(const mpiio_file_t *f, int count, MPI_Datatype type);
/* Hand len bytes for off to the stream (logged while its open is pending):
 * FWDIO_OK (also where the stream failed: the waits report that), or
 * FWDIO_ENOMEM. */
int mpiio_stream_write(mpiio_file_t *f, const char *data, int64_t len, int64_t off);
/* Keep bytes handed to the pending stream: 0, or -1 (no memory). */
int mpiio_opening_log(mpiio_file_t *f, const char *data, int64_t len, int64_t off);
/* Resolve a pending open (independent; blocks for fwdio's ready): known
 * good, the file stays taken; failed (the same on every rank), the stream
 * is freed, the logged bytes written by the layer in call order, and the
 * file is MPI-IO's from now on (f->stream NULL). An MPI error code: the
 * replay's failure, or a call from an fwdio callback before the status is
 * known (the open stays pending). */
int mpiio_opening_resolve(mpiio_file_t *f, const char *call);
/* The same for a collective call (every rank calls it): a failed open's
 * replay outcome is then agreed on every rank, also where it was resolved
 * by an earlier independent call. */
int mpiio_opening_resolve_all(mpiio_file_t *f, const char *call);
/* The same at the file's close (mpiio_close): a failed open's handle is not
 * remembered as MPI-IO's, and the pointer not handed over (the handle is
 * being closed, or closed already); the close agrees on the outcome. */
int mpiio_opening_close(mpiio_file_t *f, const char *call);

/* --- hold.c: a small file's bytes, held back from its stream ------------------- */
/* At the take: how much this file holds (0 for a handle that can read, in
 * the node-local tier and with FWDIO_MPIIO_CLOSE=async), and holding from
 * now on. */
void mpiio_hold_start(mpiio_file_t *f);
/* Hold len bytes for off: FWDIO_OK (held), MPIIO_NOT_HELD (the file holds
 * nothing more: anything held went to the stream first, in order; the
 * caller hands these over), or fwdio's failure of that hand-over. */
int mpiio_hold_keep(mpiio_file_t *f, const char *data, int64_t len, int64_t off);
/* Hand the held bytes to the stream, in order, and hold nothing more:
 * FWDIO_OK or fwdio's failure (mpiio_hold_release_call: MPI_SUCCESS or this
 * rank's error, through the handler, agreed at the next collective call). */
int mpiio_hold_release(mpiio_file_t *f);
int mpiio_hold_release_call(mpiio_file_t *f, const char *call);
/* At a close where every rank holds all it wrote: write the held bytes, then
 * the overlay, as the layer writes its own (MPI_SUCCESS or this rank's
 * error). */
int mpiio_hold_write(mpiio_file_t *f, const char *call);
/* Forget whatever is held (a file freed without its close: out of memory at
 * the open). */
void mpiio_hold_drop(mpiio_file_t *f);
/* After that close, once free_file freed all but f's struct and path (f
 * has record_pending): the stream (closed, no byte in it) finishes in the
 * background, and f goes with it. */
void mpiio_hold_leave(mpiio_file_t *f, fwdio_file_t *stream);

/* --- steps.c: ending steps and settling them ----------------------------------- */
/* End a step on every rank (collective) and wait until every byte written
 * before is in the file (in the node-local tier: drained to it). */
int mpiio_settle_all(mpiio_file_t *f, const char *call);
/* The same, waiting only until those bytes are durable where fwdio keeps
 * them (in the node-local tier: the local stores): MPI_File_sync's wait. */
int mpiio_settle_durable(mpiio_file_t *f, const char *call);
/* mpiio_settle_all (drained) or mpiio_settle_durable, with the outcome the
 * same on every rank (mpiio_agree_error, this rank's earlier failure
 * included); no step is ended where no rank wrote since the last one (an
 * agreement before says so). */
int mpiio_settle_collective(mpiio_file_t *f, int drained, const char *call);
/* Wait (independently) until the steps this rank ended are in the file. */
int mpiio_settle_ended(mpiio_file_t *f, const char *call);
/* Wait (independently) for the steps this rank ended, reporting nothing: a
 * failure is the file's own calls' to report. */
void mpiio_settle_quietly(mpiio_file_t *f);
/* End a step after a collective write (collective); the overlay follows it
 * into the file. */
int mpiio_end_step(mpiio_file_t *f, const char *call);
/* mpiio_end_step, then its outcome (or `code`, this rank's earlier
 * failure) agreed in one round that also agrees *e (mpiio_agree_step_end),
 * and FWDIO_VERBOSE's note on this rank's reads of the step
 * (mpiio_unsynced_check): a collective write's end, an asynchronous
 * sync's. */
int mpiio_end_step_agreed(mpiio_file_t *f, int code, const char *call, mpiio_step_end_t *e);

/* --- inflight.c: the steps ended and not complete, with their bounds ---------- */
/* Step `step` ended here (its bounds unknown yet: every byte). */
void mpiio_inflight_ended(mpiio_file_t *f, uint64_t step);
/* Its bounds, agreed by the collective write that ended it. */
void mpiio_inflight_set(mpiio_file_t *f, uint64_t step, int64_t lo, int64_t hi);
/* Every step ended here is complete. */
void mpiio_inflight_clear(mpiio_file_t *f);
/* Whether a step not known complete remains (those known complete are
 * dropped first). */
int mpiio_inflight_pending(mpiio_file_t *f);
/* Whether the file's bytes [off, off + len) touch such a step (call
 * mpiio_inflight_pending first: this one drops none). */
int mpiio_inflight_touches(const mpiio_file_t *f, int64_t off, int64_t len);

/* --- unsynced.c: reads that may have missed another rank's writes ------------ */
/* This rank's part of a step's end: its bytes of the step (their bounds,
 * those written independently, and its rank if it wrote such bytes), and
 * its reads' bounds, taken before mpiio_end_step forgets them. */
void mpiio_step_end_mine(const mpiio_file_t *f, mpiio_step_end_t *e);
/* FWDIO_VERBOSE: an independent read of the view's data bytes
 * [pos, pos + len) in the current step (the bounds of its bytes that this
 * rank did not write in the step are kept for mpiio_unsynced_check). */
void mpiio_unsynced_read(mpiio_file_t *f, int64_t pos, int64_t len, const char *call);
/* After the round of a call that ends the step (e: every rank's, with this
 * rank's reads): where this rank read bytes in the step that another rank
 * may have written independently in it, FWDIO_VERBOSE says so, once per
 * file. */
void mpiio_unsynced_check(mpiio_file_t *f, const mpiio_step_end_t *e, const char *call);

/* --- extents.c: the set of this rank's extents in the stream ------------------ */
/* Does [start, end) touch an extent? */
int mpiio_extents_touch(const mpiio_extents_t *x, int64_t start, int64_t end);
/* Does one extent hold all of [start, end)? */
int mpiio_extents_cover(const mpiio_extents_t *x, int64_t start, int64_t end);
/* Add [start, end), touching no extent: 0, or -1 out of memory. */
int mpiio_extents_add(mpiio_extents_t *x, int64_t start, int64_t end);
void mpiio_extents_clear(mpiio_extents_t *x);

/* --- access.c: writes and the data of reads ----------------------------------- */
/* MPI_File_preallocate of a taken file (collective): the layer's own, as
 * Open MPI 4.1's OMPIO gets it wrong on several ranks (used over every MPI:
 * it needs nothing of the MPI-IO below, and passes over MPICH's ROMIO too). */
int mpiio_preallocate(mpiio_file_t *f, MPI_Offset size);

/* --- overlay.c: overwrites through another handle, kept for after a step ------- */
/* Did this rank write bytes since its last step end (to the stream, or kept
 * in the overlay)? Does [start, end) touch them? */
int mpiio_has_unended(const mpiio_file_t *f);
int mpiio_touches_unended(const mpiio_file_t *f, int64_t start, int64_t end);
/* Keep len bytes of data at off in the overlay: FWDIO_OK or FWDIO_ENOMEM. */
int mpiio_overlay_add(mpiio_file_t *f, const char *data, int64_t len, int64_t off);
/* Keep them in the overlay of each alias whose unended bytes they touch:
 * non-zero when a copy could not be kept (no memory). */
int mpiio_aliases_keep(mpiio_file_t **alias, size_t n, const char *data, int64_t off, int64_t len);
/* Write the overlay (the caller waited for the steps that came before it). */
int mpiio_overlay_apply(mpiio_file_t *f, const char *call);
void mpiio_overlay_drop(mpiio_file_t *f);
/* Copies of count x type from buf, written at data position pos of `view`
 * through another handle, follow the bytes of the aliases' current steps
 * they land on (best effort: no memory, no copy). */
void mpiio_copy_to_aliases(mpiio_file_t **alias, size_t n, const mpiio_view_t *view,
                           int64_t pos, const void *buf, int count, MPI_Datatype type);

/* --- direct.c: bytes the layer writes itself ------------------------------------ */
/* The layer's own descriptor of the file (opened on first use), or -1. */
int mpiio_direct_fd(mpiio_file_t *f);
/* pwrite len bytes at off: MPI_SUCCESS, or this rank's error (mpiio_local_error). */
int mpiio_direct_write(mpiio_file_t *f, const char *data, int64_t len, int64_t off,
                       const char *call);
/* Write copies k in call order, adjacent ones in one pwrite: MPI_SUCCESS, or
 * the first failure (this rank's, as mpiio_direct_write's; none after it). */
int mpiio_direct_write_copies(mpiio_file_t *f, const mpiio_copies_t *k, const char *call);

/* --- pack.c: memory types' bytes in typemap order ------------------------------ */
/* count x type's bytes (MPI_Type_size_x: 2^31 and more too): MPI_SUCCESS,
 * MPI_ERR_COUNT or MPI_ERR_TYPE. */
int mpiio_type_bytes(int count, MPI_Datatype type, int64_t *bytes);
/* Is count x type one run of bytes in memory, in typemap order? *start: where it begins,
 * from the buffer's address. */
int mpiio_one_run(int count, MPI_Datatype type, MPI_Aint *start);
/* The `bytes` bytes of count x type at buf in typemap order: *data is buf
 * itself (one run) or *copy (to free), packed. An MPI error code. */
int mpiio_pack(const void *buf, int count, MPI_Datatype type, int64_t bytes, const char **data,
               char **copy);
/* The bytes of count x type in typemap order a piece at a time, from the
 * flattened type (so that data of any size needs no copy of its own size). */
typedef struct mpiio_packer {
    const char *buf;
    int count;
    mpiio_runs_t runs;
    int k;          /* instance */
    size_t i;       /* entry of the flattened type */
    int64_t m;      /* run of the entry */
    int64_t in_run; /* bytes of the run given */
} mpiio_packer_t;
/* 0, or -1 when the type cannot be flattened (*p is then empty). */
int mpiio_packer_init(mpiio_packer_t *p, const void *buf, int count, MPI_Datatype type);
/* The next at most cap bytes into out: how many (0 at the end). */
int64_t mpiio_packer_next(mpiio_packer_t *p, char *out, int64_t cap);
void mpiio_packer_free(mpiio_packer_t *p);
/* Hand the n bytes of count x type at buf, in typemap order, to the view's
 * extents from data position pos (mpiio_view_map's fn and arg, with *data
 * the base its data_pos counts from): in place when they are one run of
 * memory, else packed a chunk of 4 MiB at a time (MPI_Pack itself, whole,
 * for a type that cannot be flattened). Stops where fn returns non-zero. An
 * MPI error code (packing); what the extents did is the caller's to keep. */
int mpiio_map_data(const mpiio_view_t *view, int64_t pos, const void *buf, int count,
                   MPI_Datatype type, int64_t n, const char **data, mpiio_extent_fn fn,
                   void *arg);
/* Packed data back into count x type at buf. */
int mpiio_unpack(const char *packed, int64_t bytes, void *buf, int count, MPI_Datatype type);
/* Write count x type from buf at data position pos of the view (bytes); a
 * collective write (which ends the step next) keeps no copy for reads. */
int mpiio_write(mpiio_file_t *f, int64_t pos, const void *buf, int count, MPI_Datatype type,
                int collective, int64_t *bytes, const char *call);

/* --- readback.c: this rank's reads of its own bytes of the current step -------- */
/* The copies of this rank's bytes of the current step (mpiio_copies_t,
 * copies.h) are kept with mpiio_copies_keep, up to readback_limit bytes: past
 * them, bytes must not go to the stream (the layer writes them itself). */
/* Read count x type at `offset` etypes of the view through MPI-IO (blocking,
 * after the ended steps are in the file) and lay this rank's bytes of the
 * current step over it; *bytes: the bytes read, counting those. */
int mpiio_read_own(mpiio_file_t *f, int64_t offset, void *buf, int count, MPI_Datatype type,
                   int64_t *bytes, const char *call);

#endif
