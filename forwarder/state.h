/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of a runtime and of a file as the forwarder keeps it: the structs
 * every module of forwarder/ shares, and nothing else (each module declares
 * its functions in a header of its own). Fields are grouped by owner:
 * "locked" fields are shared between application and progress threads and
 * guarded by the runtime lock; "progress" fields belong to the progress thread
 * alone; the rest is fixed after fwdio_open.
 */
#ifndef FWDIOI_STATE_H
#define FWDIOI_STATE_H

#include "agreement/agree.h"
#include "storage/commit_set.h"
#include "node/node_area.h"
#include "agreement/open_check.h"

#include <stdatomic.h>
#include "plan/plan.h"
#include "comm_pool.h"
#include "write/budget.h"
#include "clock.h"
#include "runtime.h"
#include "settings/settings.h"
#include "plan/topology.h"
#include "plan/placement_cache.h"
#include "u64map.h"

/* Tags of fwdio's point-to-point messages: data, and a read file's
 * requests and answers (read/read_wire.h), on a file's communicator; aborts on the
 * runtime's. */
enum {
    FWDIOI_TAG_DATA = 1,
    FWDIOI_TAG_ABORT = 2,
    FWDIOI_TAG_READ_REQ = 3,  /* requester -> reader: pieces wanted */
    FWDIOI_TAG_READ_HDR = 4,  /* reader -> requester: which piece comes next */
    FWDIOI_TAG_READ_DATA = 5, /* reader -> requester: its bytes */
    FWDIOI_TAG_COPY = 6,      /* writer -> its partner: its local file (local_copies) */
    FWDIOI_TAG_WAKE = 7       /* a dormant file's session starts (session/dormant.h) */
};

/* Elements the close agreement and a stream's step agreements sum after the
 * bytes per writer (at nwriters + each): the number of ranks holding a
 * commit block, the sum of their ranks, the agreement's tag and its square
 * (steps.c: every rank passed the same tag exactly when sum = P * tag and
 * sum of squares = P * tag^2, so ranks that ended different numbers of
 * steps are caught), and the bytes appended (fwdio_append). */
enum {
    FWDIOI_SUM_COMMITS,
    FWDIOI_SUM_COMMITTER,
    FWDIOI_SUM_TAG,
    FWDIOI_SUM_TAG2,
    FWDIOI_SUM_APPENDED,
    FWDIOI_CLOSE_EXTRA /* how many */
};

/*
 * Wire format of a data message: the header, the pieces' bytes back to back,
 * then the piece table (npieces fwdioi_piece_t, in the order of the bytes).
 * The table comes last so that a message can be filled write by write (write
 * combining) without knowing in advance how many pieces it will hold.
 */
typedef struct fwdioi_wire_header {
    uint32_t npieces;
    uint32_t step; /* a stream's step the bytes belong to (mod 2^32); 0 otherwise */
} fwdioi_wire_header_t;

typedef struct fwdioi_piece {
    uint64_t offset;
    uint64_t len;
} fwdioi_piece_t;

/* Whose a message is that a writer takes (fwdioi_hold_t.kind). */
typedef enum fwdioi_hold_kind {
    FWDIOI_HOLD_RECEIVED, /* received over MPI: its bytes count against writer_buffer */
    FWDIOI_HOLD_OWN,      /* one of this rank's own messages (block: the fwdioi_msg_t) */
    FWDIOI_HOLD_SHARED    /* a peer's, in its node-shared segment (shared_path.c) */
} fwdioi_hold_kind_t;

/* Keeps a message buffer alive while writes straight from it are in flight
 * (progress thread only, so a plain count). */
typedef struct fwdioi_hold {
    int refs;
    fwdioi_hold_kind_t kind;
    void *block; /* given back (per kind) when refs drops to 0 */
    size_t size;
    int releasing; /* only I/O jobs hold it now */
    /* FWDIOI_HOLD_SHARED: how the block goes back to its sender (set by
     * shared_path.c, which the writer does not call by name) */
    void (*give_back)(struct fwdio_runtime *o, struct fwdioi_hold *h);
} fwdioi_hold_t;

/* What a writer takes from one message: its piece table and where the pieces'
 * bytes are, packed back to back (a copy) or spread over the sender's buffer
 * (a lent write: piece bytes at spread_base + (offset - spread_offset)). */
typedef struct fwdioi_pieces_view {
    uint32_t npieces;
    const uint8_t *table;  /* npieces fwdioi_piece_t; NULL: the message is malformed */
    const uint8_t *packed; /* NULL: spread */
    const uint8_t *spread_base;
    uint64_t spread_offset;
    const uint8_t *lo, *hi; /* spread from another process: every piece lies in [lo, hi) */
    /* spread from another process: whether a piece's bytes [at, at + len) are
     * its memory to read (node/shared_path.c: chunks its owner committed),
     * with `readable_ctx`; NULL: all of [lo, hi) is */
    int (*readable)(const void *ctx, const uint8_t *at, uint64_t len);
    const void *readable_ctx;
    uint64_t payload;       /* data bytes, as the sender counted them */
    uint32_t step;          /* the header's step (wire format) */
} fwdioi_pieces_view_t;

/* One fwdio_write_lent call: its buffer is lent until every message of it is
 * done with it; then the callback is delivered. */
typedef struct fwdioi_lent {
    fwdioi_call_t call;
    fwdio_file_t *file;
    const void *buf;
    uint64_t len;
    fwdio_lent_cb_t done;
    void *arg;
    void *alloc_start; /* the fwdio_alloc buffer buf lies in, or NULL */
    int refs;   /* messages not done yet (progress thread once submitted) */
    int status; /* FWDIO_OK, or why bytes were dropped */
    /* fwdio's own lent buffers (appends.c): called on the thread that frees
     * the last message, instead of delivering `call` */
    void (*release)(struct fwdioi_lent *lent);
} fwdioi_lent_t;

/* The bytes of one fwdio_append, copied, until they are routed at their
 * step's end (appends.c). Its messages lend them: the last one gives the
 * copy and its staging back. */
typedef struct fwdioi_append {
    fwdioi_lent_t lent;
    struct fwdioi_append *next;
    uint8_t *data; /* in the node-shared area when it had room, else malloc'd */
    int in_area;
} fwdioi_append_t;

/* Appends in the order of their calls. */
typedef struct fwdioi_append_list {
    fwdioi_append_t *head, **tail;
    uint64_t bytes;
} fwdioi_append_list_t;

/* One data message for one writer, built by fwdio_write (a copy) or
 * fwdio_write_lent (header here, data still in the caller's buffer). */
typedef struct fwdioi_msg {
    fwdioi_task_t task; /* first: the progress thread gets it as a task */
    fwdioi_hold_t hold;
    fwdio_file_t *file;
    int writer;
    int staged;       /* a copy: counts against the staging budget */
    int sent;         /* staged, and handed to its writer (staged_sent) */
    fwdioi_lent_t *lent;      /* lent: the call, and where its data is */
    const uint8_t *lent_base; /* file byte lent_offset is lent_base[0] */
    uint64_t lent_offset;
    uint64_t payload; /* data bytes */
    int copies;         /* combining: copies into it under way (locked) */
    int sealed_waiting; /* combining: sealed, goes out after its last copy (locked) */
    uint64_t trace_t0; /* when the send was posted (progress; trace.h) */
    uint64_t step;     /* a stream's step it belongs to (progress, steps.c) */
    /* The message lives in this rank's node-shared segment, for the writer on
     * local rank area_to (else -1), which takes it from there (shared_path.c);
     * area_out: handed over and not yet given back (progress). */
    int area_to;
    int area_out;
    uint64_t area_magic; /* FWDIOI_MSG_AREA_MAGIC while in the area */
    size_t alloc_len; /* of the whole buffer, for fwdioi_rt_buf_put */
    size_t wire_len;
    /* fwdioi_wire_header_t, data (not for lent), piece table; a message being
     * combined holds the header slot and the data only (combine.c) */
    uint8_t wire[];
} fwdioi_msg_t;

/* The open message of one (file, writer) pair that small writes are appended
 * to, and its piece table until it is sealed (write combining; locked). */
typedef struct fwdioi_combine {
    fwdioi_msg_t *open;
    fwdioi_piece_t *pieces;
    size_t npieces, cap;
} fwdioi_combine_t;

/* How a rank's steps of a stream ended when it aborted the stream: `ok`
 * steps completed with FWDIO_OK, the next ones up to `complete` with
 * `failed`; announced with the abort (abort.c), so that every rank reports
 * the same status for each step. */
typedef struct fwdioi_step_outcome {
    int64_t complete, ok;
    fwdioi_errinfo_t failed;
} fwdioi_step_outcome_t;

/* Counters the progress thread keeps per file (published at completion). */
typedef struct fwdioi_session_stats {
    uint64_t messages_sent, messages_received;
    uint64_t pwrite_calls, partial_flushes;
    double pwrite_seconds, sync_seconds;
    uint64_t bytes_to_mpi, bytes_to_pwrite, bytes_shared; /* fwdio_file_stats_t */
    uint64_t bytes_from_storage; /* a reader's preads */
    /* a writer's data bytes taken (a read file's: the answers this rank
     * received), and the bytes the writer copied into unit buffers */
    uint64_t writer_bytes, writer_copied;
    /* when this rank's first failed file-system call for the file returned
     * (fwdioi_now; 0: none): a storage job's fail_time (outcome.h) */
    double first_failure;
} fwdioi_session_stats_t;

typedef enum fwdioi_phase {
    FWDIOI_PHASE_DUP,      /* duplicating the communicator for the file */
    FWDIOI_PHASE_CHECKING, /* every rank's path, size and options being compared */
    FWDIOI_PHASE_WAIT_PATH, /* an earlier file of the same path is still being written */
    FWDIOI_PHASE_OPENING,  /* writers opening; open status being agreed */
    FWDIOI_PHASE_OPEN,     /* ready: data flows */
    FWDIOI_PHASE_CLOSING,  /* byte counts per writer being agreed */
    FWDIOI_PHASE_SYNCING,  /* writers draining, flushing, syncing; final status agreed */
    FWDIOI_PHASE_COMMITTING, /* commit block written, file renamed into place; agreed */
    FWDIOI_PHASE_DONE
} fwdioi_phase_t;

/* What the watchdog (session/watchdog.c) keeps of a file: when it was
 * closed here and everywhere, what it saw the file wait for since when, and
 * when it reports next. */
typedef struct fwdioi_watch {
    double t_close_called; /* when this rank's close reached the session */
    double t_closed;       /* when the close was agreed */
    double next_report;    /* when the watchdog reports next */
    int wait;              /* what the watchdog saw the file wait for, */
    double start;          /* since when */
} fwdioi_watch_t;

/* The status agreement in flight (agreement/agreements.c,
 * fwdioi_session_agree_status; one at a time: open, each step's status and
 * commit, final, commit follow one another): this rank's errinfo packed, the
 * reduced pairs, where the agreed errinfo goes and who is called then. */
typedef struct fwdioi_status_agreement {
    fwdioi_agree_pair_t in[FWDIOI_ERRINFO_PAIRS], out[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_t *agreed;
    fwdioi_req_cb_t done;
    int busy;
} fwdioi_status_agreement_t;

/* The runtime's lists a file is in (session/session.c; the lists are the
 * runtime's, struct fwdio_runtime below). */
typedef struct fwdioi_session_links {
    LIST_ENTRY(fwdio_file) active; /* in the runtime's `active` */
    LIST_ENTRY(fwdio_file) poll;   /* in the runtime's `polled`, if polled */
    LIST_ENTRY(fwdio_file) drain;  /* in the runtime's `draining`, if draining */
    STAILQ_ENTRY(fwdio_file) dup;  /* in the runtime's `dups` */
    int draining;                  /* in `draining` */
    int polled;
    int holds_comm; /* counted in the runtime's comms_held (session.c) */
    int comm_slot;  /* the pool slot of the file's communicator, or -1 (comm_pool.h) */
    /* the files whose path_key has this file's hash, in open order: a ring,
     * NULL while the file is not in the runtime's active_by_path */
    struct fwdio_file *path_prev, *path_next;
} fwdioi_session_links_t;

/* The commit block: who set one (agreed at close) and how writing it and
 * renaming the file into place went (session.c's commit phase). */
typedef struct fwdioi_commit_state {
    int committers; /* ranks that set a commit block (agreed at close) */
    int committer;  /* the rank that commits (block, rename), or -1 */
    fwdioi_errinfo_t local, agreed;
} fwdioi_commit_state_t;

/* The open check (agreement/open_check.c, session.c): every rank's path, size
 * and options reduced, and whether they disagreed. */
typedef struct fwdioi_open_check_state {
    fwdioi_agree_pair_t in[FWDIOI_OPEN_CHECK_PAIRS], out[FWDIOI_OPEN_CHECK_PAIRS];
    int failed; /* ranks disagree: no storage, no further agreement */
} fwdioi_open_check_state_t;

/* A file's outcome (agreement/outcome.c keeps the first error; the
 * agreements fill in what the ranks agreed). */
typedef struct fwdioi_outcome_state {
    /* An MPI call failed here, or another rank said one failed there: the
     * file's collectives are given up; it completes with abort_info once its
     * own sends, receives and storage jobs are done. */
    int aborted;
    fwdioi_errinfo_t abort_info;
    /* An agreement of the file was in flight when it aborted: the other
     * ranks' parts of it may still run (Open MPI's libnbc progresses what it
     * can among the ranks that joined), reading the file's communicator and
     * writing into its buffers, so neither is ever freed (file_life.c). */
    int abandoned;
    fwdioi_errinfo_t open_local, open_agreed;
    fwdioi_errinfo_t local_error; /* first error this rank saw after open */
    fwdioi_errinfo_t final_agreed;
} fwdioi_outcome_state_t;

/* Progress-thread state of one file: what every role needs (phase,
 * communicator, agreements, outcome), the modules' own parts as groups, and
 * the roles' private state behind pointers. */
typedef struct fwdioi_session {
    fwdioi_phase_t phase;
    MPI_Comm comm;
    int close_requested;
    /* The close agreement started while the open agreement was in flight
     * (session.c, "closing early"): the writes held for the open were
     * counted then; its result, if it comes first, waits for the open's. */
    int close_early, close_result_waits;
    int open_agreement_started; /* the open agreement is posted (the writer's
                                 * open job runs in OPENING before it) */
    /* opened dormant and not woken yet (session/dormant.h): its session
     * starts no collective until a rank uses it */
    int dormant;
    int wake_told; /* this rank told its neighbours the file is in use */
    /* An aborted file's end is queued as a task (finish_task): it completes
     * from the top of the progress loop, never inside a callback that may
     * still touch the file after the abort returns. */
    int finish_queued;
    /* messages of writes issued before ready, in order; with rewrites also
     * those of a step whose earlier steps are not complete here (sender.c) */
    fwdioi_task_list_t held;
    /* held messages being released (sender.c): a send that fails there
     * aborts the file, whose drop_held must drop these too */
    fwdioi_task_list_t *releasing;
    /* [nwriters + FWDIOI_CLOSE_EXTRA]: bytes this rank sent to each writer, then
     * whether it holds the commit block and its rank; summed at close. */
    uint64_t *sent_bytes;
    uint64_t *expected_bytes; /* the sums: bytes per writer, committers, rank */
    fwdioi_commit_state_t commit;
    fwdioi_watch_t watch;
    fwdioi_open_check_state_t check;
    fwdioi_status_agreement_t status;
    int ready_delivered;
    fwdioi_outcome_state_t outcome;
    fwdioi_session_links_t links;
    uint64_t trace_t0; /* start of the collective in flight (trace.h) */

    /* a file opened for reading (read/requester.c: this rank's reads; reader.c:
     * the reader's units and requests) */
    struct fwdioi_requests *requests;
    struct fwdioi_reader *reader;
    /* a file this rank writes (write/writer.c) */
    struct fwdioi_writer *writer;
    /* a stream's steps and appends (stream/steps.c) */
    struct fwdioi_stream *stream;

    /* what the writer and the reader of a file share with the session:
     * the descriptor, receives and storage jobs in flight (the session
     * waits for them), the close agreed, and the last storage job started */
    int fd;
    int recvs_pending;
    int io_pending;
    int close_agreed;
    int finishing;
    fwdioi_wbudget_file_t wbuf; /* writer (or reader) memory held for this file */
    fwdioi_session_stats_t stats;
    int sends_pending;        /* this rank's data messages not yet sent */
    int final_ready, final_started;
} fwdioi_session_t;

/* An abort announced by another rank for a file this rank has not opened yet. */
typedef struct fwdioi_pending_abort {
    uint64_t seq;
    fwdioi_errinfo_t info;
    int drain; /* the abort of the file's drain (node-local tier) */
} fwdioi_pending_abort_t;

/* The communicator of an aborted file whose writer still receives (and drops)
 * data other ranks had started to send before they learnt of the abort. */
typedef struct fwdioi_zombie {
    MPI_Comm comm;
    double since;
    int kept; /* an agreement on it was given up: never freed (abort.h) */
} fwdioi_zombie_t;

struct fwdio_runtime {
    /* the runtime layer's engine (runtime/runtime.h): progress and I/O
     * threads, the lock, tasks, tracked requests, callback delivery */
    fwdioi_engine_t *engine;
    /* what the session does with the roles' reports (agreement/outcome.h;
     * fixed after init) */
    const struct fwdioi_session_ops *session_ops;
    MPI_Comm app_comm; /* a duplicate of fwdio_init's communicator for the collectives of
                        * layers above (fwdio_runtime_comm), made from application threads */
    fwdioi_topology_t topo; /* where every rank runs (fixed after init) */
    fwdioi_placement_cache_t placed; /* the last spread placement (its own lock) */
    fwdioi_settings_file_t settings; /* FWDIO_CONFIG, read at init */
    /* locked */
    uint64_t next_seq;
    LIST_HEAD(, fwdio_file) live; /* every file not yet destroyed */
    /* locked: files of the runtime not closed here, counted per path_hash
     * (a count, not a pointer, as the value; api.c, fwdio_open) */
    fwdioi_u64map_t open_paths;
    /* progress */
    LIST_HEAD(, fwdio_file) active; /* files whose session has not ended */
    /* progress: files whose drain (node-local tier) is not over, which an
     * abort of their drain may concern (session.c) */
    LIST_HEAD(, fwdio_file) draining;
    /* progress: this rank's drained local copies kept for restarts,
     * oldest first (local/local_keep.c) */
    struct fwdioi_kept *kept;
    /* progress: writers waiting for room in the local store, oldest first,
     * and when the tick tries them next (local/local_space.c) */
    TAILQ_HEAD(fwdioi_local_waiting, fwdioi_local) local_waiting;
    double local_wait_next;
    /* what this rank last published as its waiting writer's shortfall
     * (node-wide eviction, local_space.c): a lower value in its segment
     * means another rank evicted for it */
    uint64_t local_short_set;
    /* progress: the active files by sequence number, and by the hash of
     * their path_key, each hash's value the first of its files in open
     * order (a ring through s.links.path_next; session.c, "one file per path") */
    fwdioi_u64map_t active_by_seq, active_by_path;
    double next_watch; /* progress: when the tick runs the watchdog next */
    /* progress: the active files the tick visits (session.c, poll_from_now) */
    LIST_HEAD(, fwdio_file) polled;
    /* Communicators for files (session.c, "Communicators for files"): the
     * files waiting for theirs, in open order; the pool of communicators
     * earlier files gave back (comm_pool.h); the choice in flight (one at a
     * time: the reduction that picks a pool slot, then, when no slot is idle
     * on every rank, the duplication: Open MPI hangs when several
     * MPI_Comm_idup of one communicator are in flight at once) and its
     * buffers; the communicator chosen that no file has taken yet (one is
     * chosen ahead) with its slot, or the MPI error its choice failed with. */
    STAILQ_HEAD(, fwdio_file) dups;
    fwdioi_comm_pool_t comm_pool;
    int dup_in_flight;
    int dup_picking; /* the choice in flight is the pool slot's reduction */
    uint64_t pick_offer, pick_agreed;
    int dup_slot; /* the slot the duplication in flight fills, or -1 */
    MPI_Comm dup_next;
    MPI_Comm spare;
    int spare_slot;
    int spare_rc, spare_call; /* the failed choice's MPI error and call */
    uint64_t dup_t0; /* trace */
    int dup_busy; /* locked: dup_in_flight, for fwdio_finalize */
    /* progress: files holding their communicator (from taking it to their
     * end); no duplication starts while files_in_flight of them do */
    unsigned comms_held;
    /* progress: aborts (abort.c). Once an MPI failure has put the runtime's
     * communicator out of step, every later file fails with `broken`. */
    uint64_t opened_seq; /* files whose open task ran */
    fwdioi_errinfo_t broken;
    fwdioi_pending_abort_t *pending_aborts;
    int npending_aborts, pending_aborts_cap;
    /* progress: dormant files (session/dormant.h): how many are dormant
     * here, and the wakes heard for files not opened here yet */
    int ndormant;
    uint64_t *pending_wakes;
    int npending_wakes, pending_wakes_cap;
    fwdioi_zombie_t *zombies;
    int nzombies, zombies_cap;
    int broken_known; /* locked: broken is set (read by fwdio_finalize) */
    /* Writer memory over all files (progress; its peak also read by
     * fwdio_runtime_stats): write/budget.h */
    fwdioi_wbudget_t wbuf;
    /* locked: copied writes not yet sent (staging budget), and the part of
     * them in messages already handed to their writers, which comes back
     * without anything else being sent */
    uint64_t staged, staged_peak, staged_sent;
    /* locked: files with open combined messages (combine.c), and the same
     * files in the order their oldest open message was opened, which is the
     * order they become old enough to send */
    int combining_files;
    TAILQ_HEAD(, fwdio_file) combining;
    /* how staging sends every open combined message to make room (combine.c's
     * fwdioi_combine_flush_all_locked, set by fwdio_init: staging, below
     * combining, does not name it) */
    void (*flush_combined_locked)(struct fwdio_runtime *o);
    /* The node-shared area (fixed after init; its heap has its own lock) and,
     * progress, the entries from it that wait: data for files not open here
     * yet, and releases whose ring was full (shared_path.c). */
    fwdioi_area_t area;
    struct fwdioi_area_wait *area_waiting;
    int narea_waiting, area_waiting_cap;
    int area_idle_held; /* the area keeps idle chunks for now (progress) */
    /* progress: messages for writers of this node whose ring was full; sent
     * (by reference, or announced and over MPI) as soon as it has room */
    fwdioi_task_list_t area_blocked;
    /* fixed after init: ranks of another node, or of this node without the
     * area, may send data over MPI at any time, so writers must probe */
    int mpi_senders;
    /* locked: appended bytes held for their step's end (part of `staged`;
     * only a step end can send them, so a reservation never waits for them) */
    uint64_t append_held;
    /* fwdio_alloc buffers not yet released (user_buffers.c; its own lock) */
    struct fwdioi_user_buffers *buffers;
    /* locked: a zeroed file kept for the next refused fwdio_open, so that
     * one refused for want of memory still takes its place in the open
     * order (session/refused.h) */
    struct fwdio_file *refused_spare;
};

struct fwdio_file {
    struct fwdio_runtime *owner;
    fwdioi_engine_t *engine; /* owner->engine */
    char *path;
    uint64_t size; /* a stream's: the largest it may grow to; a read file's
                      once size_known */
    int stream;    /* opened with FWDIO_SIZE_GROWS */
    int reading;   /* opened with fwdio_open_read: "writers" are its readers */
    /* this rank's data role: the writer or the reader (session/role.h) */
    const struct fwdioi_role_ops *role;
    uint64_t seq;
    fwdio_options_t opts;
    fwdio_callbacks_t cbs;
    fwdioi_plan_t plan;
    int *writer_ranks; /* the plan's writers */
    int rank;
    int my_writer; /* writer index of this rank, or -1 */
    char *write_path; /* what writers open: path, or its temporary (atomic_replace) */
    struct fwdioi_local *local; /* the node-local tier's state, or NULL (local/) */
    char *path_key;   /* the path with its directory resolved: one file per path at a time */
    uint64_t path_hash; /* of path_key (fixed once the file is live) */
    int64_t check_fields[FWDIOI_OPEN_FIELDS]; /* what this rank passed to fwdio_open */
    fwdioi_errinfo_t open_refusal; /* found wrong at fwdio_open on this rank */
    /* fwdio_open refused the file here: this is the stand-in that takes its
     * place in the open order, released by fwdio (session/refused.h) */
    int refused;

    /* opened dormant (session/dormant.h) and neither used nor discarded on
     * this application side yet, nor woken by another rank: the first use
     * wakes it. Set and cleared under the lock; read without it first. */
    _Atomic int dormant_app;

    /* locked */
    int app_closed;
    int app_freed;
    int failed_known; /* a failure is agreed: further writes are refused */
    int complete_delivered;
    /* the node-local tier (local/local_tier.h): a drain runs after complete;
     * the drained callback has run; the drained status and its text (set
     * once, before drained is delivered) */
    int drain_pending;
    int drained_delivered;
    int drain_status;
    fwdioi_errinfo_t drain_error;
    char drain_text[256];
    int ready_returned; /* the ready callback ran (or there was none): fwdio_wait_ready */
    fwdioi_errinfo_t known_error;
    fwdioi_commit_set_t commit; /* fwdio_set_commit since the last step end (or open) */
    char error_text[256];
    fwdio_file_stats_t stats;     /* app fields live; writer fields published */
    uint64_t staged_file;         /* bytes of this file staged now */
    uint64_t *writer_bytes_agreed; /* [nwriters], set when closing is agreed */
    fwdioi_combine_t *combine;     /* [nwriters] open messages (combine.c) */
    int combine_copies;            /* copies into them under way (combine.c) */
    /* When the oldest open message got its first byte (fwdioi_now_ns), 0 when
     * none is open: written under the lock, read by the progress thread's poll
     * without it. */
    _Atomic uint64_t combine_since;
    TAILQ_ENTRY(fwdio_file) combine_link; /* in the runtime's `combining` (locked) */
    double t_open;
    /* streams: steps ended here, steps whose callback has run, and the first
     * step that failed (UINT64_MAX: none) with its status */
    uint64_t steps_ended, steps_done, step_fail_from;
    int step_fail_status;
    /* a stream of the node-local tier: steps whose drain is agreed, the
     * first whose drain failed (UINT64_MAX: none), its failure and text
     * (local/step_drain.c) */
    uint64_t steps_drained, step_drain_fail_from;
    fwdioi_errinfo_t step_drain_error;
    char step_drain_text[256];
    fwdioi_append_list_t appends; /* fwdio_append since the last step end */
    /* a read file: its size and plan are set (after ready, when the open
     * succeeded); reads accepted */
    int size_known;
    LIST_ENTRY(fwdio_file) live_link; /* in the runtime's `live` (locked) */

    /* progress */
    fwdioi_session_t s;
    fwdioi_task_t open_task, close_task, finish_task, wake_task;
    fwdioi_call_t ready_call, complete_call, drained_call;
};

#endif
