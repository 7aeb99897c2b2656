/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio — nonblocking forwarded output for MPI applications.
 *
 * Every rank hands chunks of a shared file to fwdio_write() and goes back to
 * computing. The chunks travel, split at stripe boundaries, to a few writer
 * ranks that assemble whole write units and pwrite() them. Completion is
 * reported through callbacks and fwdio_wait()/fwdio_test().
 *
 * Threads. Every rank runs one progress thread (a libevent loop) that owns all
 * of fwdio's MPI traffic, on private duplicates of the communicator given to
 * fwdio_init(), and one I/O thread on writer ranks (created on demand) that
 * does the pwrite()/fdatasync() calls. The application may call every function
 * below from any of its threads unless a function says otherwise; calls on the
 * same file handle from several threads at once are serialised internally.
 *
 * Errors. Every int-returning function returns FWDIO_OK (0) or a negative
 * FWDIO_E* code; fwdio_strerror() names it. A bad argument is refused at the
 * call, with no change of state. Errors that can only be known later (a path
 * that cannot be opened, a failed pwrite, overlapping writes found by a
 * writer) become the file's final status, agreed on by every rank, delivered
 * to the callbacks and returned by fwdio_wait(); fwdio_file_error() gives the
 * writer rank, offset and errno. fwdio never aborts the application.
 *
 * Storage faults. A writer's failed open or ftruncate (FWDIO_EOPEN), pwrite
 * (FWDIO_EWRITE: disk full, file too large, I/O error, or a pwrite that
 * writes nothing, which is not retried), fdatasync or close (FWDIO_ESYNC),
 * or in the commit step the commit block's write, the rename or the
 * directory sync (FWDIO_ECOMMIT) ends that file only. It completes on every rank, once every rank has
 * closed it, with the same status, writer rank, errno, offset and text
 * ("pwrite of /x/y failed on rank 1 at offset 4194304: No space left on
 * device (errno 28)"); the writer keeps receiving and dropping the file's
 * data, so no sender blocks; other files and later ones go on normally.
 * Short writes are continued where they stopped. fwdio does not change
 * signal dispositions: a process with a file-size limit (RLIMIT_FSIZE) must
 * ignore or handle SIGXFSZ to get EFBIG instead of being killed.
 *
 * MPI failures. fwdio's communicators return MPI errors instead of calling
 * the application's error handler, and every MPI call is checked. One that
 * fails in a file's session (an agreement, the choice or duplication of its
 * communicator, a send, probe or receive) ends that file with FWDIO_EMPI on this rank; the
 * rank tells the others with a small message, and they give up the file's
 * collectives and complete it with the same status, so no rank waits for
 * ever. fwdio_file_error() names the call, the rank and the MPI error
 * ("MPI_Iallreduce (final status) failed on rank 1 for /x/y: MPI_ERR_OTHER:
 * ..."). A send that fails to start only loses its bytes: the file fails
 * through the usual final agreement. Other files go on, except after a failed
 * choice or duplication of a file's communicator, which leaves the runtime's communicator out of
 * step between ranks: every later file of that runtime then fails with
 * FWDIO_EMPI at once, and fwdio_finalize() still returns. A writer checks every
 * piece it receives against its own plan before it touches memory; a piece
 * that does not belong there fails the file with FWDIO_EPROTO.
 *
 * Fault injection. FWDIO_FAULT, read by fwdio_init, makes the writers'
 * file-system calls misbehave on purpose, to test how an application (and
 * fwdio) handles storage errors. It holds rules separated by ';', each
 *   CALL:EFFECT[:CONDITION]...
 * CALL is open, ftruncate, pwrite, pread, fdatasync, close, rename, unlink
 * or fsync_dir (the directory sync after a rename), mkdir (the node-local
 * tier makes its directory: options.local_dir), statvfs (the tier asks its
 * local store's free space at a writer's open: an error there reports the
 * store full, and the writer writes to the target), or shm_commit (the
 * node-shared area commits memory in /dev/shm: an error there is a full
 * /dev/shm, and the message goes over MPI). EFFECT is one of
 *   eio, enospc, efbig, erofs, edquot, errno=N  fail with that errno without
 *       making the call (close releases the descriptor all the same);
 *   short     pwrite writes (pread reads) half the bytes asked (the file must
 *             come out whole, and reads fill: fwdio continues the call);
 *   stall     pwrite writes nothing and returns 0 (the file fails with
 *             FWDIO_EWRITE and errno 0); pread reads nothing and returns 0,
 *             as at the end of the file (FWDIO_EREAD, errno 0);
 *   slow=MS   sleep MS milliseconds, then make the call.
 * CONDITIONs narrow a rule: rank=R (only on rank R of the fwdio_init
 * communicator), nth=N (only the N-th matching call of this process),
 * from=N (every matching call from the N-th; the default is every call),
 * path=TEXT (only calls on a path containing TEXT; a rename matches by
 * either path). Example:
 *   FWDIO_FAULT="pwrite:enospc:nth=3:rank=1;fdatasync:eio:path=ckpt"
 * The node-local tier's files are named "*.fwdio-local" (options.local_dir),
 * so "pwrite:enospc:path=fwdio-local:nth=3" is a local store that fills on
 * the third write into it (the writer's file then moves to its target), and
 * path=fwdio-tmp reaches the temporaries of atomic_replace.
 * The delays of all firing slow rules add up; of the other firing rules the
 * first wins. Every fwdio_init replaces the rules and restarts their counts;
 * they apply to every runtime of the process. A malformed value makes
 * fwdio_init fail with FWDIO_EINVAL, and so does any FWDIO_FAULT in a build
 * configured with -DFWDIO_FAULT_INJECTION=OFF (default ON; off, the calls
 * carry no check at all). FWDIO_VERBOSE=2 logs each rule that fires.
 *
 * Timelines. With FWDIO_TRACE set to a directory when fwdio_init() runs, every
 * rank records what fwdio did (open, each write call, sends and receives from
 * post to completion, assembly, the collective agreements, pwrite, fdatasync,
 * callbacks, waits) and fwdio_finalize() writes it to
 * <dir>/fwdio-trace.<rank>.json in Chrome trace-event format (pid = rank;
 * threads app, progress, io; times in microseconds). bench/trace_merge.py
 * merges the ranks into one trace for Perfetto or chrome://tracing and draws a
 * per-rank timeline. At most FWDIO_TRACE_MAX_EVENTS events (default 1000000)
 * are kept per thread; the rest are counted as dropped in the file. Unset, the
 * tracing hooks cost one predictable branch each.
 */
#ifndef FWDIO_H
#define FWDIO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fwdio_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FWDIO_BUILDING_LIBRARY) && defined(__GNUC__)
#define FWDIO_API __attribute__((visibility("default")))
#else
#define FWDIO_API
#endif

/*
 * Versions. fwdio_version.h (generated by CMake from the one place the
 * version is written, project(fwdio VERSION ...) in CMakeLists.txt, and
 * installed beside this header) defines FWDIO_VERSION_MAJOR, _MINOR, _PATCH,
 * FWDIO_VERSION_STRING ("0.1.0") and FWDIO_VERSION_NUMBER (MAJOR * 1000000 +
 * MINOR * 1000 + PATCH), the version this code is compiled against;
 * fwdio_version() and fwdio_version_number() give the version of the library
 * it runs with.
 *
 * Growing the structs. Every public struct ends in a reserved tail; fields
 * added later take their room from it, so the structs keep their size and a
 * program built against an older fwdio.h keeps working with a newer library.
 * The rule for callers: initialise every struct you pass in with its init
 * function (fwdio_config_init(), fwdio_options_init()) or fill it with zeros
 * (`= {0}`, memset, a designated initialiser) before setting fields, never
 * leave it uninitialised, and do not touch `reserved`. fwdio_init() and
 * fwdio_open() refuse a struct whose reserved tail is not zero (FWDIO_EINVAL,
 * with a message), so a field set by a newer program is never silently
 * ignored by an older library. Structs fwdio fills in (stats, error info)
 * have their reserved tail zeroed.
 */

/*
 * The one list of status codes: FWDIO_X(NAME, value, "text"). The enum and
 * fwdio_strerror() are both generated from it, so they cannot drift apart.
 */
#define FWDIO_STATUS_LIST(FWDIO_X)                                                         \
    FWDIO_X(FWDIO_OK, 0, "success")                                                       \
    FWDIO_X(FWDIO_EINVAL, -1, "invalid argument")                                          \
    FWDIO_X(FWDIO_ENOMEM, -2, "out of memory")                                             \
    FWDIO_X(FWDIO_ETHREAD, -3, "MPI was not initialised with MPI_THREAD_MULTIPLE")          \
    FWDIO_X(FWDIO_EMPI, -4, "an MPI call failed")                                          \
    FWDIO_X(FWDIO_ESYSTEM, -5, "a system call (thread, event loop) failed")                \
    FWDIO_X(FWDIO_ERANGE, -6, "write or read extends past the end of the file")             \
    FWDIO_X(FWDIO_ECLOSED, -7, "file already closed on this rank")                         \
    FWDIO_X(FWDIO_ENOTCLOSED, -8, "file not closed on this rank: call fwdio_close first")   \
    FWDIO_X(FWDIO_EOVERLAP, -9, "two writes overlap the same bytes of the file")           \
    FWDIO_X(FWDIO_EOPEN, -10, "a writer could not open or size the file")                  \
    FWDIO_X(FWDIO_EWRITE, -11, "a writer's pwrite failed")                                 \
    FWDIO_X(FWDIO_ESYNC, -12, "a writer's fdatasync or close failed")                      \
    FWDIO_X(FWDIO_EFAILED, -13, "the file has already failed; see fwdio_file_error")       \
    FWDIO_X(FWDIO_ECONTEXT, -14, "function may not be called from this thread or callback") \
    FWDIO_X(FWDIO_EAGAIN, -15, "resource temporarily full; try again")                      \
    FWDIO_X(FWDIO_ETOOBIG, -16, "write larger than the staging budget; use fwdio_write")     \
    FWDIO_X(FWDIO_ECOMMIT, -17, "writing the commit block or renaming the file into place failed") \
    FWDIO_X(FWDIO_EPROTO, -18, "a writer received data that does not match the file's plan") \
    FWDIO_X(FWDIO_EBUSY, -19, "the buffer is still lent to a write that has not completed") \
    FWDIO_X(FWDIO_EREAD, -20, "a reader's pread failed or the file ended early")         \
    FWDIO_X(FWDIO_ENOCKPT, -21, "no complete, intact version of the checkpoint set")       \
    FWDIO_X(FWDIO_ECHECKSUM, -22, "the checkpoint's bytes do not match its manifest's checksum")

/** Status codes: FWDIO_OK is 0, every error is negative. */
typedef enum fwdio_status {
#define FWDIO_X_ENUM(name, value, text) name = (value),
    FWDIO_STATUS_LIST(FWDIO_X_ENUM)
#undef FWDIO_X_ENUM
} fwdio_status_t;

/** Runtime handle: one per fwdio_init(), owned by the caller until fwdio_finalize(). */
typedef struct fwdio_runtime fwdio_runtime_t;

/** File handle: one per fwdio_open(), owned by the caller until fwdio_file_free(). */
typedef struct fwdio_file fwdio_file_t;

/** Where the ready/complete callbacks run. */
typedef enum fwdio_callback_mode {
    /** Default. Callbacks are queued and run on an application thread inside
     *  fwdio_poll(), fwdio_test() or fwdio_wait(). A callback may call any fwdio
     *  function except the blocking ones, fwdio_wait() and fwdio_finalize(),
     *  which return FWDIO_ECONTEXT there (they would wait for the callback).
     *  Callbacks never nest: a fwdio call made inside a callback runs no
     *  queued callback (fwdio_poll() there returns 0); the queued ones run,
     *  in order, once the callback has returned. */
    FWDIO_CALLBACKS_ON_POLL = 0,
    /** Callbacks run on the progress thread as soon as the status is known. They
     *  must be short and thread-safe against the application. They may call the
     *  calls that never wait: fwdio_write() (which there refuses to wait for
     *  staging room, as fwdio_try_write() does), fwdio_try_write(),
     *  fwdio_write_lent(), fwdio_set_commit(), fwdio_close(), fwdio_test(),
     *  fwdio_file_free(), fwdio_file_error*(), fwdio_file_stats() and
     *  fwdio_strerror(); fwdio_open(), fwdio_poll(), fwdio_wait() and
     *  fwdio_finalize() return FWDIO_ECONTEXT there. */
    FWDIO_CALLBACKS_ON_PROGRESS = 1
} fwdio_callback_mode_t;

/*
 * Where settings come from. Every field of fwdio_config_t and fwdio_options_t
 * has a key: its field name (writer_buffer, stripe_size, layout, ...). The
 * code sets a field by giving it a value other than 0, or by pinning it: a
 * field whose FWDIO_PIN_<KEY> bit is set in the struct's `pinned` mask is
 * used as the code gives it, even 0, where 0 means what it always means, the
 * documented default (block layout, durable off, first writer rank 0,
 * callbacks on poll, ...):
 *
 *     opts.layout = FWDIO_LAYOUT_BLOCK;   (0)
 *     opts.pinned |= FWDIO_PIN_LAYOUT;    block, whatever FWDIO_LAYOUT says
 *
 * (FWDIO_PIN_ALL pins every field: the code alone decides.) A field the code
 * does not set (0 and not pinned) takes, first found:
 *   1. the environment variable FWDIO_<KEY>, e.g. FWDIO_STRIPE_SIZE=1M,
 *      FWDIO_LAYOUT=cyclic, FWDIO_WRITER_LIST=0,4,8;
 *   2. the `key = value` line of the file named by FWDIO_CONFIG (# comments);
 *      rank 0 reads it once in fwdio_init() and sends it to the other ranks,
 *      so every rank sees the same content (rank 0's FWDIO_CONFIG names it);
 *   3. the documented default.
 * A zero-filled struct therefore means "everything from the environment, the
 * file or the defaults". MPI-IO hints (fwdio_options_set_info) write and pin
 * the fields they name, so they count as code. Sizes take K/M/G/T suffixes
 * (powers of 1024; "8M", "8MiB" and "8MB" alike); choices are spelled as in
 * the enum names (poll|progress, block|cyclic|targets, spread|stride|list);
 * flags are 0 or 1. Unknown FWDIO_* variables are reported by rank 0.
 * FWDIO_VERBOSE=1 prints the effective configuration at init and each file's
 * plan at open (rank 0).
 *
 * Refusals. Every setting fwdio refuses (FWDIO_EINVAL) is named on stderr in
 * one line: the field, its value, where the value came from (set in code,
 * FWDIO_<KEY>, the config file and line, or the default) and what is allowed.
 * fwdio_init() refuses bad values of `cfg` at the call, before it talks to
 * other ranks, as it does any bad argument; values from the environment or
 * the config file make fwdio_init fail on every rank (it is collective), and
 * the lowest rank that refused them says why, once. A config file that
 * cannot be read (missing, a directory, unreadable) fails fwdio_init on every
 * rank the same way. fwdio_open() checks its options at the call, without
 * talking to other ranks: a refusal whose values are the same on every rank
 * (defaults, the config file, an environment every rank shares) is reported by
 * rank 0 only; one that involves a value set in code, or an environment that
 * differs from rank to rank, by every rank that refuses it, with its rank.
 * A refused fwdio_open() (or fwdio_open_read()) returns the error at the call
 * and hands out no handle, but it still takes the file's place in the open
 * order, in the background: the ranks that opened the file get a file that
 * fails at its open check with the same status (FWDIO_EINVAL for a refused
 * option or argument, FWDIO_ERANGE, FWDIO_ENOMEM, ...), and
 * fwdio_file_error() / fwdio_file_error_info() name the refusing rank,
 * instead of waiting for a rank that never joins; the files opened after it
 * still match across ranks, and fwdio_finalize() waits for that background
 * part. So a refused call counts as that rank's call for the file: retrying
 * it with other options opens the next file. A refusal on every rank alike
 * returns at once too; it costs the choice of a communicator (a kept one, or
 * a duplication) and one reduction on the progress thread, since no rank can know alone that the
 * others refused as well. Only a call with no runtime (`rt` NULL), from the
 * progress thread (FWDIO_ECONTEXT) or after MPI_Finalize takes no place.
 */

/**
 * Runtime configuration for fwdio_init(). Initialise it with
 * fwdio_config_init() (or zeros, or pass NULL): every field left at 0 and not
 * pinned means "from the environment, the config file, or the documented
 * default".
 */
typedef struct fwdio_config {
    /** Where callbacks run; default FWDIO_CALLBACKS_ON_POLL. */
    fwdio_callback_mode_t callback_mode;
    /** Shortest interval, in microseconds, between two polls of MPI requests while
     *  data is in flight and an application thread waits in fwdio (while none
     *  waits, poll_background_us); default 20. */
    unsigned poll_min_us;
    /** Longest interval between two polls while files are open but quiet; the
     *  interval doubles from poll_min_us up to this. Default 2000. With no file
     *  open the progress thread sleeps until the application calls fwdio. */
    unsigned poll_max_us;
    /** Largest MPI message fwdio sends, in bytes: a write larger than this goes
     *  to its writer as several messages, so the writer can start assembling
     *  before the whole write has arrived. Default 8 MiB, at most 1 GiB; lowered
     *  to writer_buffer / 4 (but not below 64 KiB) so a writer always has room
     *  for several messages. */
    size_t max_message_size;
    /** Bytes a writer rank may hold for assembly, over all its files: unit
     *  buffers, received messages and buffers waiting for pwrite, with the
     *  record of which bytes have arrived (a few hundred bytes per unit in
     *  progress) and the storage jobs. A writer at its budget stops receiving,
     *  so MPI holds the senders back. 0: the environment variable
     *  FWDIO_WRITER_BUFFER (bytes, K/M/G suffixes), else
     *  FWDIO_DEFAULT_WRITER_BUFFER. At least 256 KiB: a smaller value is raised,
     *  with a message on stderr, so that a writer has room for several messages.
     *  At most budget + one message (and a segment of 24 bytes for each of its
     *  pieces) is ever held, unless the writes leave so many gaps open at once
     *  that their record alone passes the budget: the writer then goes on, one
     *  message at a time, and says so on stderr. Per rank, not per node:
     *  only the ranks that are writers (or readers) of some file hold any of
     *  it, so a node holds at most this times its ranks that are writers (2
     *  with the default placement, fwdio_options_t.writers_per_node),
     *  whatever its ranks. */
    size_t writer_buffer;
    /** Bytes of copied writes a rank may hold before they are sent (its staging
     *  memory). fwdio_write waits for room beyond it; fwdio_try_write returns
     *  FWDIO_EAGAIN instead. A value set here or in FWDIO_STAGING_BUFFER is
     *  this rank's, whatever the ranks per node. 0 and no FWDIO_STAGING_BUFFER:
     *  a share of the node's staging, so that the node's ranks together hold
     *  no more whatever their number: the node's staging (1/32 of the node's
     *  memory, at most FWDIO_DEFAULT_NODE_STAGING_CAP) divided by the ranks of
     *  this runtime on the node, at most FWDIO_DEFAULT_STAGING_BUFFER and at
     *  least FWDIO_MIN_DEFAULT_STAGING_BUFFER (64 MiB up to 8 ranks per node,
     *  8 MiB at 64, 4 MiB at 128 on a node of 16 GiB or more). At least
     *  64 KiB: a write is cut into messages no larger than this budget, and
     *  smaller messages cost more to send than their bytes, so a smaller
     *  value is raised, with a message on stderr. combine_size and
     *  shared_buffer by default follow the value in force. */
    size_t staging_buffer;
    /** Non-zero: writers call pwrite/fdatasync on the progress thread instead of
     *  a separate I/O thread (receiving then waits for the disk). For measuring
     *  the pipeline; default 0. FWDIO_IO_INLINE=1 sets it too. */
    int io_inline;
    /** Seconds after which a file that waits is reported on stderr, then again
     *  at doubling intervals: opened on a rank but not yet on every rank (each
     *  rank that opened it says so: fwdio_open must be called on every rank,
     *  in the same order); closed on a rank but not on every rank (each rank
     *  that closed it says so, with its rank); closed everywhere but not
     *  complete (which writers wait for how many bytes, from which ranks, and
     *  what each rank still has in flight). Reporting only: the file keeps
     *  waiting. 0: the environment variable FWDIO_WATCHDOG (seconds, or
     *  "off"), else FWDIO_DEFAULT_WATCHDOG. FWDIO_WATCHDOG_OFF turns the
     *  report off. */
    unsigned watchdog;
    /** Write combining: copied writes of at most this many bytes (fwdio_write,
     *  fwdio_try_write) are appended to one open message per file and writer
     *  instead of becoming messages of their own; pieces adjacent in the file
     *  merge. An open message of this many bytes (header and piece table
     *  included) is sent when full, when the file is closed on this rank, when
     *  fwdio_poll(), fwdio_test() or fwdio_wait() runs, when fwdio_write has to
     *  wait for staging room that the messages already sent cannot free, when
     *  fwdio_try_write finds no room, and otherwise by the progress thread no
     *  later than
     *  2 x poll_max_us after its first byte (4 ms by default, once the progress
     *  thread gets the CPU). Its bytes count as staged. Larger writes and
     *  fwdio_write_lent() are not combined. 0: the environment variable
     *  FWDIO_COMBINE_SIZE (where 0 turns combining off), else
     *  FWDIO_DEFAULT_COMBINE_SIZE; 1 turns it off. Clamped to
     *  [64, max_message_size], and lowered to staging_buffer (with a message on
     *  stderr when it was given). */
    size_t combine_size;
    /** Fields the code pins (FWDIO_PIN_* bits of the config keys): used as
     *  given, even 0 (the default), never taken from the environment or the
     *  config file. See "Where settings come from". Default 0: none. */
    uint64_t pinned;
    /** The node-shared area, this rank's part: the most bytes of the node's
     *  area (node_buffer) this rank may hold at once, for the messages it
     *  sends to writers on its own node and for fwdio_alloc() buffers. A
     *  writer on the same node writes such a message straight from the
     *  sender's memory: fwdio_write costs one copy before pwrite instead of
     *  two (MPI's copy is gone), fwdio_alloc + fwdio_write_lent none. Nothing
     *  is reserved at fwdio_init: memory is committed in /dev/shm as it is
     *  used, under the node's budget, and given back when idle. A message that
     *  finds no room (this rank's part full, the node's budget spent, or
     *  /dev/shm full) goes over MPI, a buffer that finds none is ordinary
     *  memory. The area is off on a node where any of its ranks cannot make
     *  it (the reason is logged at FWDIO_VERBOSE=2); that node then sends
     *  everything over MPI. Every rank of a node must use the same value.
     *  0: the environment variable FWDIO_SHARED_BUFFER (where 0 or "off" turn
     *  the area off), else staging_buffer + max_message_size + 64 KiB, room
     *  for every message the staging budget admits; 1 turns it off. At least
     *  max_message_size plus 64 KiB: a smaller value is raised. At most
     *  node_buffer: a larger value is lowered to it at fwdio_init. (Until
     *  0.1 each rank reserved this many bytes at fwdio_init; the node's total
     *  is now node_buffer.) */
    size_t shared_buffer;
    /** Shortest interval, in microseconds, between two polls while no
     *  application thread waits in fwdio (fwdio_wait, fwdio_step_wait, a
     *  write waiting for staging room, ...): the application is computing or
     *  in MPI calls of its own, which move MPI's transfers too, so the
     *  progress thread keeps data moving without competing with it for the
     *  CPU and for MPI. As soon as a thread waits, polls go back to
     *  poll_min_us. 0: the environment variable FWDIO_POLL_BACKGROUND_US, else
     *  1000; a value at or below poll_min_us polls at poll_min_us throughout,
     *  one above poll_max_us is lowered to it. */
    unsigned poll_background_us;
    /** How long, in microseconds, the progress thread polls without sleeping
     *  while an application thread waits in fwdio (fwdio_wait, fwdio_step_wait,
     *  fwdio_wait_ready, a write waiting for room, the MPI-IO layer's blocking
     *  calls) and MPI requests are in flight: after each poll that moved
     *  something it polls again at once (yielding the CPU between polls) for
     *  this long before it goes back to timed polls from poll_min_us. A
     *  blocking MPI call polls the same way, and a timed poll costs about
     *  50 us on Linux (the timer's slack), several per agreement round of a
     *  file. Worth it on a node with a CPU for every rank (a small file
     *  through the MPI-IO layer: 1.8x faster at 2 ranks); where ranks share
     *  CPUs spinning threads take them from the others. 0: the environment
     *  variable FWDIO_POLL_SPIN_US, else automatic: FWDIO_AUTO_POLL_SPIN_US
     *  on a node whose ranks of this communicator are no more than the CPUs
     *  hwloc finds usable there (one job per node, a rank per core), off on
     *  a node with more ranks than CPUs; every node decides for itself at
     *  fwdio_init. fwdio cannot see other jobs sharing the node: set 1 there.
     *  1 turns spinning off. */
    unsigned poll_spin_us;
    /** The node's budget for the node-shared area: bytes of /dev/shm the
     *  ranks of one node (of this runtime) may hold together for their
     *  messages to writers of the node and their fwdio_alloc() buffers,
     *  whatever their number. Committed as used (fallocate, so a full
     *  /dev/shm is "no room", never a SIGBUS), given back when a rank's part
     *  has been idle node_buffer_idle seconds; until then each rank keeps up
     *  to node_buffer / (ranks of the node) committed between messages and
     *  between files (the rest goes back at once). Besides
     *  the budget, the area's rings cost each rank at most 512 KiB from
     *  fwdio_init on. Local rank 0's value is the node's. 0: the environment
     *  variable FWDIO_NODE_BUFFER (where 0 or "off" turn the area off), else
     *  FWDIO_DEFAULT_NODE_BUFFER_CAP or 1/64 of the node's memory, whichever
     *  is smaller (the node's memory: its physical memory, or the memory
     *  limit of the process's control group when lower, as a batch system's
     *  job or a container has); 1 turns the area off. At least 1 MiB: a smaller value is
     *  raised. */
    size_t node_buffer;
    /** The most files of this runtime that hold their own MPI communicator
     *  at once: a file takes one (a duplicate of the runtime's) at its open
     *  and gives it back when it is complete, or with the node-local tier
     *  when its drain is over (kept for a later file, up to
     *  64 kept per runtime and freed by fwdio_finalize, when nothing of the
     *  file can still arrive on it: not after an MPI failure; a file of the
     *  node-local tier's once its drain succeeded), and MPI libraries have few
     *  (MPICH 4.0: 2046 per process, Open MPI 4.1: 65532, counting the
     *  application's own and MPI-IO's, one per open MPI file). A file opened
     *  while this many are in flight waits for an earlier one to complete
     *  before it is checked and its writers open it; writes to it are held
     *  meanwhile, as for any file not ready yet, so close files in the order
     *  you open them, or raise this, when more are in flight at once. 0: the
     *  environment variable FWDIO_FILES_IN_FLIGHT, else
     *  FWDIO_DEFAULT_FILES_IN_FLIGHT. */
    unsigned files_in_flight;
    /** Seconds a rank's part of the node-shared area stays committed after
     *  its heap last held a message (each rank's own value): a file written
     *  within this time after the previous one reuses the committed memory
     *  instead of committing it again inside fwdio_write (a commit costs about
     *  ten copies of the bytes: 3.5-4.9x a memcpy of blocked time at 8 ranks,
     *  docs/results/restructure.md), and a rank that stops writing gives it
     *  back this long after. 0: the environment variable
     *  FWDIO_NODE_BUFFER_IDLE (seconds, or "off"), else
     *  FWDIO_DEFAULT_NODE_BUFFER_IDLE. FWDIO_NODE_BUFFER_IDLE_KEEP ("off")
     *  keeps it until fwdio_finalize. */
    unsigned node_buffer_idle;
    /** The node-local tier (fwdio_options_t.local_dir, local_capacity): the
     *  most milliseconds a writer whose file does not fit local_capacity
     *  waits for room before it writes that file straight to the target.
     *  It waits only when the room can come: the file is no larger than
     *  local_capacity (than its rank's share where the node-shared area is
     *  off), and files of the node (of this rank where the area is off)
     *  still being written or drained, and drained copies that can be
     *  evicted for it (any rank's of the node; this rank's where the area is
     *  off), hold enough of the count that the file would fit once their
     *  drains end and the copies are evicted;
     *  a file that could never fit, or finds nothing in flight to wait
     *  for, goes to the target at once, and so does one still waiting when
     *  the limit passes (logged at FWDIO_VERBOSE=2 with the time it waited).
     *  The wait holds only that writer's open: the application's calls,
     *  the file's other writers and every other file go on (the file's
     *  writes are held as for any file not ready yet, so a rank whose
     *  staging_buffer fills with them blocks in fwdio_write until the wait
     *  ends, and its ready callback comes once the writer opened), and the
     *  drains it waits for run meanwhile. A wait longer than watchdog is
     *  reported by the watchdog as an open not agreed. Waiting trades a later ready for a checkpoint
     *  complete at the local store's speed rather than the target's. A
     *  runtime setting rather than a file option: it is each writer's own
     *  policy (ranks may differ; it does not shape the plan, nothing
     *  compares it) and fwdio_options_t has little room left. Key
     *  local_wait, environment FWDIO_LOCAL_WAIT, in seconds ("10", "0.2")
     *  or "0"/"off". 0: the environment, else FWDIO_DEFAULT_LOCAL_WAIT_MS;
     *  FWDIO_LOCAL_WAIT_OFF never waits (a file that does not fit goes to
     *  the target at once). */
    uint64_t local_wait_ms;
    /** Room for fields of later versions: leave it zero. */
    uint64_t reserved[3];
} fwdio_config_t;

/*
 * FWDIO_PIN_<KEY>: the bits of fwdio_config_t.pinned and
 * fwdio_options_t.pinned, one per key. The config keys and the option keys
 * have bits of their own, so a bit set in the wrong struct pins nothing.
 */
#define FWDIO_PIN_CALLBACK_MODE ((uint64_t)1 << 0)    /**< fwdio_config_t.callback_mode */
#define FWDIO_PIN_POLL_MIN_US ((uint64_t)1 << 1)      /**< fwdio_config_t.poll_min_us */
#define FWDIO_PIN_POLL_MAX_US ((uint64_t)1 << 2)      /**< fwdio_config_t.poll_max_us */
#define FWDIO_PIN_MAX_MESSAGE_SIZE ((uint64_t)1 << 3) /**< fwdio_config_t.max_message_size */
#define FWDIO_PIN_WRITER_BUFFER ((uint64_t)1 << 4)    /**< fwdio_config_t.writer_buffer */
#define FWDIO_PIN_STAGING_BUFFER ((uint64_t)1 << 5)   /**< fwdio_config_t.staging_buffer */
#define FWDIO_PIN_IO_INLINE ((uint64_t)1 << 6)        /**< fwdio_config_t.io_inline */
#define FWDIO_PIN_WATCHDOG ((uint64_t)1 << 7)         /**< fwdio_config_t.watchdog */
#define FWDIO_PIN_COMBINE_SIZE ((uint64_t)1 << 8)     /**< fwdio_config_t.combine_size */
#define FWDIO_PIN_SHARED_BUFFER ((uint64_t)1 << 9)    /**< fwdio_config_t.shared_buffer */
#define FWDIO_PIN_POLL_BACKGROUND_US ((uint64_t)1 << 10) /**< fwdio_config_t.poll_background_us */
#define FWDIO_PIN_POLL_SPIN_US ((uint64_t)1 << 11)    /**< fwdio_config_t.poll_spin_us */
#define FWDIO_PIN_NODE_BUFFER ((uint64_t)1 << 12)     /**< fwdio_config_t.node_buffer */
#define FWDIO_PIN_FILES_IN_FLIGHT ((uint64_t)1 << 13) /**< fwdio_config_t.files_in_flight */
#define FWDIO_PIN_NODE_BUFFER_IDLE ((uint64_t)1 << 14) /**< fwdio_config_t.node_buffer_idle */
#define FWDIO_PIN_LOCAL_WAIT ((uint64_t)1 << 15)      /**< fwdio_config_t.local_wait_ms */
#define FWDIO_PIN_WRITE_SIZE ((uint64_t)1 << 32)       /**< fwdio_options_t.write_size */
#define FWDIO_PIN_STRIPE_SIZE ((uint64_t)1 << 33)      /**< fwdio_options_t.stripe_size */
#define FWDIO_PIN_WRITERS ((uint64_t)1 << 34)          /**< fwdio_options_t.writers */
#define FWDIO_PIN_FIRST_WRITER ((uint64_t)1 << 35)     /**< fwdio_options_t.first_writer */
#define FWDIO_PIN_WRITER_STRIDE ((uint64_t)1 << 36)    /**< fwdio_options_t.writer_stride */
#define FWDIO_PIN_LAYOUT ((uint64_t)1 << 37)           /**< fwdio_options_t.layout */
#define FWDIO_PIN_DURABLE ((uint64_t)1 << 38)          /**< fwdio_options_t.durable */
#define FWDIO_PIN_PLACEMENT ((uint64_t)1 << 39)        /**< fwdio_options_t.placement */
#define FWDIO_PIN_WRITERS_PER_NODE ((uint64_t)1 << 40) /**< fwdio_options_t.writers_per_node */
#define FWDIO_PIN_WRITER_LIST ((uint64_t)1 << 41)      /**< fwdio_options_t.writer_list(_len) */
#define FWDIO_PIN_TARGETS ((uint64_t)1 << 42)          /**< fwdio_options_t.targets */
#define FWDIO_PIN_ATOMIC_REPLACE ((uint64_t)1 << 43)   /**< fwdio_options_t.atomic_replace */
#define FWDIO_PIN_APPEND_START ((uint64_t)1 << 44)     /**< fwdio_options_t.append_start */
#define FWDIO_PIN_LOCAL_DIR ((uint64_t)1 << 45)        /**< fwdio_options_t.local_dir */
#define FWDIO_PIN_DRAIN_BANDWIDTH ((uint64_t)1 << 46)  /**< fwdio_options_t.drain_bandwidth */
#define FWDIO_PIN_LOCAL_CAPACITY ((uint64_t)1 << 47)   /**< fwdio_options_t.local_capacity */
#define FWDIO_PIN_LOCAL_COPIES ((uint64_t)1 << 48)     /**< fwdio_options_t.local_copies */
/** Every key of both structs: the code decides everything; the environment
 *  and the config file are not read for this struct. */
#define FWDIO_PIN_ALL (~(uint64_t)0)

/** poll_spin_us chosen automatically (poll_spin_us 0) on a node with a CPU
 *  for every rank: 200 us (docs/results/mpiio-layer.md, "A file's fixed
 *  cost": 1.4-1.8x faster small files through the MPI-IO layer). */
#define FWDIO_AUTO_POLL_SPIN_US 200u

/** Default combine_size: 256 KiB (see docs/results/write-combining.md). */
#define FWDIO_DEFAULT_COMBINE_SIZE ((size_t)256 << 10)

/** Default watchdog: 300 s, longer than a healthy file takes to drain. */
#define FWDIO_DEFAULT_WATCHDOG 300u
/** fwdio_config_t.watchdog value that turns the watchdog off. */
#define FWDIO_WATCHDOG_OFF 0xffffffffu

/** Default node_buffer_idle: 30 s, longer than the interval between the
 *  frames of a trajectory or the files of a run that writes one per step. */
#define FWDIO_DEFAULT_NODE_BUFFER_IDLE 30u
/** fwdio_config_t.node_buffer_idle value ("off") that keeps a rank's part of
 *  the node-shared area committed until fwdio_finalize. */
#define FWDIO_NODE_BUFFER_IDLE_KEEP 0xffffffffu

/** Default local_wait_ms: 10 s. Long enough for the drain of an earlier
 *  checkpoint of a few GiB per writer at a parallel file system's usual
 *  0.5-1 GB/s per writer, after which the waiting file completes at the
 *  local store's speed; short enough that a file that waits in vain is not
 *  much later than one written straight to a slow target. */
#define FWDIO_DEFAULT_LOCAL_WAIT_MS 10000u
/** fwdio_config_t.local_wait_ms value ("0" or "off") that never waits for
 *  room in the local store. */
#define FWDIO_LOCAL_WAIT_OFF UINT64_MAX

/** Default writer_buffer: 64 MiB, 16 write units of the default size; enough for
 *  a writer to receive the next units while the I/O thread writes the last
 *  ones (see docs/results/writer-pipeline.md). */
#define FWDIO_DEFAULT_WRITER_BUFFER ((size_t)64 << 20)
/** The most staging_buffer is by default: 64 MiB; a rank's output step up to
 *  this size is copied without waiting. By default a rank gets its share of
 *  the node's staging (FWDIO_DEFAULT_NODE_STAGING_CAP), at most this. */
#define FWDIO_DEFAULT_STAGING_BUFFER ((size_t)64 << 20)
/** The node's staging by default: 1/32 of the node's memory, at most this,
 *  512 MiB, shared out among the node's ranks (each rank's default
 *  staging_buffer is it divided by the ranks of the node), so that the
 *  staging memory of a node does not grow with its ranks: 64 MiB each up to
 *  8 ranks per node, 4 MiB each at 128. */
#define FWDIO_DEFAULT_NODE_STAGING_CAP ((size_t)512 << 20)
/** The least staging_buffer is by default, 1 MiB (four combined messages of
 *  the default size), whatever the ranks per node: past 512 ranks per node
 *  the node's staging grows again, by 1 MiB per rank. */
#define FWDIO_MIN_DEFAULT_STAGING_BUFFER ((size_t)1 << 20)
/** Default node_buffer: 1/64 of the node's memory, at most this, 256 MiB (32
 *  messages of the default size in flight to the node's writers, whatever the
 *  ranks per node; docs/results/node-memory.md). */
#define FWDIO_DEFAULT_NODE_BUFFER_CAP ((size_t)256 << 20)
/** Default files_in_flight: 1000, half of MPICH's communicators, so that the
 *  application and MPI-IO keep the rest. */
#define FWDIO_DEFAULT_FILES_IN_FLIGHT 1000u

/** How the stripes of a file map to writers. */
typedef enum fwdio_layout {
    /** Default. Each writer owns one contiguous run of stripes; the runs differ
     *  in length by at most one stripe (CkIO's long-stripe arrangement). */
    FWDIO_LAYOUT_BLOCK = 0,
    /** Stripe s goes to writer s mod W (with W equal to the storage stripe count,
     *  each writer talks to one storage target). */
    FWDIO_LAYOUT_CYCLIC = 1,
    /** Storage-target aware: stripe s lives on target s mod T (T =
     *  fwdio_options_t.targets, stripe_size = the storage stripe unit, as on
     *  Lustre). With W <= T each writer owns ceil(T/W) or floor(T/W) whole
     *  targets; with W > T each target's stripes are shared out among the
     *  writers assigned to it. Either way no writer touches more than ceil(T/W)
     *  targets (one each when W = T: the 1-OST pattern). */
    FWDIO_LAYOUT_TARGETS = 2
} fwdio_layout_t;

/** Which ranks become writers. */
typedef enum fwdio_placement {
    /** Default. Writers spread evenly over nodes, then over packages and NUMA
     *  domains within a node, then cores; ranks whose binding is unknown are
     *  spaced evenly over their node (the stride rule of aggregator placement). */
    FWDIO_PLACEMENT_SPREAD = 0,
    /** first_writer + i * writer_stride (CkIO's basePE/skipPEs). */
    FWDIO_PLACEMENT_STRIDE = 1,
    /** Exactly the ranks in writer_list. */
    FWDIO_PLACEMENT_LIST = 2
} fwdio_placement_t;

/**
 * Per-file options. Call fwdio_options_init() and then change what you need;
 * a zero-filled struct also means "all defaults" (the environment, the config
 * file, the documented defaults). Sizes are in bytes.
 */
typedef struct fwdio_options {
    /** Bytes a writer gathers before one pwrite (CkIO's writeStripe); should match
     *  the file system's stripe unit. Default 4 MiB (FWDIO_DEFAULT_WRITE_SIZE),
     *  or stripe_size when that is set and no multiple of 4 MiB. At least 4 KiB
     *  or the stripe, if smaller: a smaller value is raised, with a message on
     *  stderr (once per process), to its smallest multiple of 4 KiB or more
     *  that divides stripe_size (up to 256 KiB; a stripe without one keeps the
     *  unit), as the bookkeeping of a unit being assembled (~200 bytes) would
     *  outweigh it. */
    uint64_t write_size;
    /** Unit of the file that maps to one writer (CkIO's peStripe); a multiple of
     *  write_size. Default 4 x write_size. At least 512 bytes: a smaller value is
     *  raised to the smallest multiple of itself that is 512 or more, with a
     *  message on stderr (once per process), as every stripe costs a piece in
     *  a message and a pwrite of its own. */
    uint64_t stripe_size;
    /** Number of writer ranks (CkIO's activePEs); clamped to what the placement
     *  can give. 0 (default): FWDIO_DEFAULT_WRITERS_PER_NODE per node up to
     *  FWDIO_DEFAULT_MAX_WRITERS (32) writers, one per node on more than 32
     *  nodes, and at most the number of ranks (fwdio_default_writers). */
    int writers;
    /** Rank of the first writer (CkIO's basePE); default 0. */
    int first_writer;
    /** Distance in ranks between consecutive writers (CkIO's skipPEs). 0 (default):
     *  spread the writers evenly, stride = max(1, (P - first_writer) / writers). */
    int writer_stride;
    /** Stripe-to-writer mapping; default FWDIO_LAYOUT_BLOCK. */
    fwdio_layout_t layout;
    /** Non-zero: every writer fdatasync()s the file before the file is reported
     *  complete. Default 0 (data is in the page cache when complete fires). */
    int durable;
    /** How writers are chosen; default FWDIO_PLACEMENT_SPREAD, or LIST when
     *  writer_list is given, or STRIDE when first_writer or writer_stride is
     *  (a pinned placement is kept as it is). */
    fwdio_placement_t placement;
    /** Spread: writers per node (0: writers / nodes, or the default). */
    int writers_per_node;
    /** List: the writer ranks (copied by fwdio_open) and their number. A list
     *  from FWDIO_WRITER_LIST, the config file or the fwdio_writer_list hint is
     *  kept by fwdio (see fwdio_options_set_info). */
    const int *writer_list;
    int writer_list_len;
    /** Storage stripe count T for FWDIO_LAYOUT_TARGETS (0: the number of
     *  writers). */
    int targets;
    /** Non-zero: replace the file atomically. Writers write a temporary file
     *  beside it, "<dir>/.<name>.fwdio-tmp", and the file is renamed over `path`
     *  (and the directory synced) only once every writer's data and the commit
     *  block (fwdio_set_commit) are durable; implies durable. A file that fails
     *  leaves `path` as it was and its temporary removed; a killed job leaves at
     *  most the temporary, which the next run writing `path` reuses. Default 0. */
    int atomic_replace;
    /** Fields the code pins (FWDIO_PIN_* bits of the option keys): used as
     *  given, even 0 (the default), never taken from the environment or the
     *  config file. See "Where settings come from". Default 0: none. */
    uint64_t pinned;
    /** Streams (FWDIO_SIZE_GROWS) only: where the first appended byte goes
     *  (fwdio_append), and the length the first writer cuts the file to at
     *  the open: an existing file keeps its first append_start bytes (a
     *  trajectory continued after a restart, a dump appended to), a shorter
     *  one is extended with zeros. Default 0: the stream starts empty.
     *  Ignored for a file with a size. */
    uint64_t append_start;
    /** Streams (FWDIO_SIZE_GROWS) only: non-zero lets a step write bytes that
     *  earlier steps wrote (fwdio_write or fwdio_append); the later step's
     *  bytes are what the file holds. Bytes of one step must still not
     *  overlap (FWDIO_EOVERLAP). The price: a rank sends a step's bytes only
     *  once every step before it is complete here, so they wait in staging
     *  (and writes may wait for room) while the step before is agreed on.
     *  Every rank must pass the same value (FWDIO_EINVAL naming "rewrites"
     *  otherwise). Set by the code only: it describes the writes the code
     *  makes, so no environment variable or config key changes it.
     *  fwdio_open of a file with a size refuses it (FWDIO_EINVAL); reads
     *  ignore it. Default 0: every byte of a stream is written once. */
    int rewrites;
    /** Non-zero lets writes of the same step (of a stream; of the whole file
     *  otherwise) overlap, as MPI-IO lets ranks write the same bytes without
     *  a sync between: every byte written lands, and a byte written more
     *  than once holds the bytes of one of those writes, which one is not
     *  defined (not even for two writes of one rank). Every rank must pass
     *  the same value (FWDIO_EINVAL naming "overlaps" otherwise). Set by the
     *  code only, as rewrites is. Reads ignore it. Default 0: an overlap
     *  fails the file with FWDIO_EOVERLAP. */
    int overlaps;
    /** Streams (FWDIO_SIZE_GROWS) only: non-zero leaves the file as the open
     *  finds it: nothing is cut and nothing added (append_start is then only
     *  where fwdio_append starts), as MPI_File_open leaves a file that other
     *  handles or processes may be writing. Every rank must pass the same
     *  value (FWDIO_EINVAL naming "keep_contents" otherwise). Set by the code
     *  only. Default 0: the file is cut or extended to append_start. */
    int keep_contents;
    /** Streams (FWDIO_SIZE_GROWS) only: non-zero promises that every byte
     *  goes at an explicit offset (fwdio_write and its kin), none through
     *  fwdio_append, which then returns FWDIO_EINVAL. A step's end and the
     *  close then skip the collective round that places appended bytes
     *  (an MPI_Iexscan each), so a step and the close complete one round
     *  sooner. Every rank must pass the same value (FWDIO_EINVAL naming
     *  "offsets_only" otherwise). Set by the code only, as rewrites is;
     *  ignored for a file with a size and for reads. Default 0: appends
     *  are allowed. */
    int offsets_only;
    /**
     * The node-local tier (AHPIOS, SCR/VeloC-style checkpoints): a directory
     * that exists, or can be made, on every node (a node-local SSD,
     * /dev/shm, a burst-buffer mount); "%h" in it is replaced by the host
     * name, "%%" by '%' (no other '%' sequence). Key local_dir, environment
     * FWDIO_LOCAL_DIR, hint fwdio_local_dir; NULL or "" (default): off.
     * Every rank must pass the same value before expansion (FWDIO_EINVAL
     * naming "local_dir" otherwise). The string is copied by fwdio_open.
     *
     * With it, each writer of a file opened with a size writes its stripes
     * into a file of its own in that directory,
     * "<dir>/<name>.<hash of the path>.w<writer>.fwdio-local" (its units at
     * their target offsets, a sparse file, then an index of the target
     * bytes it holds, the file's version and geometry), made if missing
     * (its directories too). The file is complete (fwdio_wait, fwdio_test,
     * the complete callback) once every byte and the index are durable
     * there (fdatasync, whatever `durable` says); a local store that cannot
     * be made fails the file on every rank. A local store that fails under
     * a writer once its file is admitted (a pwrite, the fdatasync or the
     * index's write on its local file fails: ENOSPC, EDQUOT, EIO, ...;
     * another job filled the device, the free-space estimate was wrong)
     * does not lose the file: that writer's file *moves to the target*.
     * The writer opens the target (its temporary with atomic_replace;
     * O_CREAT, never O_TRUNC, writer 0 sets the length), copies the units
     * it already wrote locally there, writes the rest there too, makes it
     * durable, and removes its local file and version record (nothing
     * partial is left for a drain or a restart). Complete (fwdio_wait, the
     * callback) then means: that writer's bytes durable at the target, the
     * other writers' in their local stores, status OK on every rank; the
     * drain copies the others' units and commits (rename, commit block) as
     * always, so fwdio_drain_wait reports OK once every byte is at the
     * target (at once, with nothing else to copy); a restart reads the
     * target for that version (a writer's copy is missing locally, so no
     * reader chooses the local copies). Only when the target fails too is
     * the file failed (its error then names the target's call). The move is
     * logged (FWDIO_VERBOSE); fwdio_file_stats_t has no field left for it.
     * The writers then
     * *drain* it to `path` in the background: whole write units read back
     * and written to the target (to its temporary with atomic_replace,
     * renamed over `path` only after the drain; with durable, or a commit
     * block or atomic_replace, the target is fdatasync'ed first), the
     * commit block last. fwdio_drain_test, fwdio_drain_wait and the
     * drained callback report the drain's status, agreed on every rank; a
     * successful drain keeps the local files for a restart (their version
     * record, "<local file>.ver", then says drained), a failed one keeps
     * them too (the only whole copy) and with atomic_replace leaves `path`
     * as it was; a file whose local phase failed (a local store that
     * cannot be made, a failure beyond a local store's: a store without
     * room at the open is written around, see local_capacity, and one
     * that fails later moves the writer to the target, above) leaves
     * what its writers wrote there, named by fwdio_file_error, until the
     * next version of the path overwrites it (removing it is the later
     * eviction stage's). One file of a path at a time: a later fwdio_open of the path
     * waits for the drain before it opens. The target's own errors (it
     * cannot be created, its disk is full) are the drain's.
     *
     * Reads: fwdio_open_read with local_dir reads the newest version from
     * the local copies when every reader reaches them, else the target
     * (see fwdio_open_read, "Restart from the nearest copy").
     *
     * Streams (FWDIO_SIZE_GROWS) take the tier only when local_dir is set
     * in code or by the hint fwdio_local_dir (FWDIO_LOCAL_DIR and
     * FWDIO_CONFIG, meant for checkpoints, leave a stream writing its path
     * as it grows, since through the tier its bytes reach the path only
     * after the close). Then each writer writes the steps into its local
     * file at the target's offsets (no room counted at the open: each
     * write takes room for the bytes it adds against local_capacity, and
     * one that does not fit moves that writer's file to the target, as a
     * full store does; a stream's writes neither wait for room nor evict
     * drained copies kept for restarts); a step completes (fwdio_step_wait, the step
     * callback) when its bytes are in the local stores (durable there with
     * durable); the open creates `path` and, unless keep_contents, cuts it
     * to append_start as a stream's open does. Each complete step then
     * *drains* in the background, in step order, while the stream is
     * written: its writers copy to `path` exactly the bytes they wrote
     * locally during the step (the path's other bytes stay), paced by
     * drain_bandwidth, and every rank agrees on the step's drain status
     * (on a duplicate of the file's communicator, named "fwdio step
     * drains", made right after the open agreement); fwdio_step_drain_test
     * and fwdio_step_drain_wait report it, so a reader may read a step at
     * the path while the stream grows. After the close the drain copies
     * what was written after the last step, once every step's drain is
     * over, and removes the local files; a failed step drain fails every
     * later one and the drain after the close (the local files stay). The
     * drains never create the path again: one removed since the open (a
     * program's unlink) is left removed, the bytes not drained yet going
     * nowhere, as writes to an unlinked file. A
     * stream's local file is never a restart's copy (reads of the path
     * read the target; fwdio_open_read of it waits for the drain as any
     * later open), so a job killed before the drain ends leaves at the
     * path only what was drained (the rest is in the writers' local files,
     * under the local file names, for a person to recover: nothing reads
     * them). Such a stream refuses local_copies 2 (FWDIO_EINVAL at
     * fwdio_open) and commit blocks (fwdio_set_commit: FWDIO_EINVAL). The
     * MPI-IO layer uses the tier for its files when FWDIO_LOCAL_DIR (or the
     * hint fwdio_local_dir) is set (mpiio/README.md).
     * (Checkpoint sets, fwdio_ckpt_*, use the tier: a version is complete
     * once drained, and found in the local stores before.)
     */
    const char *local_dir;
    /** The node-local tier: the most bytes per second each writer drains
     *  (a cap that leaves the application its cores and its node's
     *  bandwidth). Key drain_bandwidth, environment FWDIO_DRAIN_BANDWIDTH, a
     *  size ("200M"); 0 or "off" (default): no cap. Not part of the open
     *  check (each rank paces its own writers). */
    uint64_t drain_bandwidth;
    /**
     * The node-local tier: the most bytes its files may hold in each node's
     * local store at once (the writers' local files of every file of the
     * runtime not yet drained, counted per node: the node's ranks share one
     * count, in the node-shared area; where the area is off, each rank
     * counts alone against its share, local_capacity divided by the node's
     * ranks). A writer takes its file's bytes (its units and the index)
     * from the count when it opens its local file; after its drain the
     * copy is kept for restarts and stays counted until it is evicted:
     * when a new file of the same writer rank does not fit, that rank's
     * drained copies are removed, oldest version first, as many as hold
     * the new file's bytes (their room passes straight to it), or if they
     * hold less, as many as cover the shortfall (none if all of them would
     * not); when that rank's copies cannot make the room, the node's
     * drained copies go, oldest version first whichever rank of the node
     * wrote them (each rank removes its own when asked through the
     * node-shared area; where the area is off, only this rank's own go),
     * until the room is there; files not yet drained are never evicted,
     * nor copies an earlier runtime left (not counted). A new
     * version of a path takes its old copy's place. A failed file's bytes
     * come back when it is freed. A writer whose
     * bytes do not fit waits for room while drains in flight or evictions
     * can make it,
     * at most fwdio_config_t.local_wait_ms (default 10 s; see there: only
     * that writer's open waits, and only when the file is no larger than
     * local_capacity and the node's files not yet drained hold enough).
     * A writer whose bytes still do not fit, or whose local store has less
     * free space than they need (statvfs at the open; nothing waits for
     * that), writes that file straight to the target
     * path instead (to its temporary with atomic_replace), made durable
     * before complete: the file still completes and drains, that writer's
     * part already at the target (the limit: a file larger than what
     * eviction can free once the files in flight are drained, or than
     * local_capacity). A store that fills after
     * the check (another program writing there) moves that writer's file
     * to the target (see local_dir): never a lost checkpoint. With
     * local_copies 2 the partner copies a rank keeps are counted too, from
     * the copying until the drain removes them (evicting that rank's
     * drained copies as a writer does); one that does not fit is not kept,
     * never waited for (the file completes with that writer's own copy
     * alone until it is drained, as with a full store; logged). Without local_capacity kept copies are bounded by
     * the free-space check only (and replaced by their path's next
     * version; every new path adds one: on /dev/shm, which is memory, set
     * local_capacity). Key local_capacity, environment
     * FWDIO_LOCAL_CAPACITY, hint fwdio_local_capacity, a size ("8G"); 0 or
     * "off" (default): no bound (the free-space check still applies). Every
     * rank must pass the same value (FWDIO_EINVAL naming "local_capacity"
     * otherwise).
     */
    uint64_t local_capacity;
    /**
     * The node-local tier: copies of each writer's local file, 1 or 2 (0,
     * the default: 1). With 2, each writer forwards its local file, once it
     * is durable, to its partner, a rank on another node (the next writer,
     * in writer order, on another node; else the next rank on another
     * node), which keeps it in its own local store under the same name and
     * makes it durable; the file is complete (fwdio_wait, the complete
     * callback) only when both copies are, or when a partner copy cannot
     * be written (the partner's store is full or broken: its open, a
     * pwrite, its index or fdatasync fails): then the partner removes the
     * partial copy and the file completes OK with that writer's own copy
     * alone until it is drained (the writer's copy is whole and durable:
     * failing the file would lose a checkpoint that exists), said in the
     * log (FWDIO_VERBOSE); the drain takes that writer's units from its own
     * copy. A writer that cannot read its own copy back for its partner,
     * or a partial partner copy that cannot be removed, fails the file on
     * every rank. A writer whose file moved to the target (see local_dir)
     * sends its partner nothing. The drain then takes each
     * writer's units from the writer's copy, or from the partner's when the
     * writer's copy is missing or damaged (its index is read back first),
     * so a node whose local store is lost after the local completion loses
     * no checkpoint; with 1 copy the drain fails (FWDIO_EREAD naming the
     * local file, on every rank) and with atomic_replace the target keeps
     * its previous version. A successful drain removes both copies, a
     * failed one keeps them. With every rank on one node there is no other
     * node to hold a partner copy: local_copies 2 fails the file at
     * fwdio_open with FWDIO_EINVAL (a partner on the same node would not
     * survive the node's loss; set 1 there). Partner copies are not counted
     * in local_capacity in this version. Key local_copies, environment
     * FWDIO_LOCAL_COPIES, hint fwdio_local_copies. Every rank must pass the
     * same value (FWDIO_EINVAL naming "local_copies" otherwise).
     */
    int local_copies;
    /** Streams (FWDIO_SIZE_GROWS) only: non-zero opens the path as it is
     *  and never creates it: where it is missing at the writers' open (another
     *  process renamed or deleted it) the open fails with FWDIO_EOPEN
     *  (ENOENT), and nothing is made in its place. For a file another open
     *  made (the MPI-IO layer's: MPI_File_open created it), whose stream may
     *  open the path after the code has moved on. Every rank must pass the
     *  same value (FWDIO_EINVAL naming "must_exist" otherwise). Not with the
     *  node-local tier, whose writers make their local files (FWDIO_EINVAL).
     *  Set by the code only; ignored for a file with a size and for reads.
     *  Default 0: the open creates the path. */
    int must_exist;
    /** Room for fields of later versions: leave it zero (see "Growing the
     *  structs"). */
    uint64_t reserved[1];
} fwdio_options_t;

/** Default write_size, chosen by measurement (see docs/results/fwdio-bench.md). */
#define FWDIO_DEFAULT_WRITE_SIZE ((uint64_t)4 << 20)
/** Default stripe_size in write units. */
#define FWDIO_DEFAULT_STRIPE_UNITS 4
/** Default number of writers per node when options.writers is 0. */
#define FWDIO_DEFAULT_WRITERS_PER_NODE 2
/** Where the default writer count stops taking FWDIO_DEFAULT_WRITERS_PER_NODE
 *  per node: at most this many writers, and past this many nodes one writer
 *  per node. */
#define FWDIO_DEFAULT_MAX_WRITERS 32

/**
 * The writer count fwdio chooses for a file over `nranks` ranks on `nnodes`
 * nodes when fwdio_options_t.writers, writers_per_node and writer_list are
 * not set: FWDIO_DEFAULT_WRITERS_PER_NODE per node up to
 * FWDIO_DEFAULT_MAX_WRITERS writers, one per node on more than
 * FWDIO_DEFAULT_MAX_WRITERS nodes, and at most `nranks` (the rule of
 * fwdio_options_t.writers' default, from the same code). A stride placement
 * (first_writer or writer_stride set) may place fewer, as many as fit.
 * For tools and tests that predict a plan without opening a file
 * (fwdio_plan_describe prints a whole plan).
 * @return the writer count (1 or more), or FWDIO_EINVAL when `nranks` or
 *         `nnodes` is below 1. Any thread, before fwdio_init too; no MPI.
 */
FWDIO_API int fwdio_default_writers(int nranks, int nnodes);

/**
 * Callback for file events. `status` is the status agreed on by every rank
 * (FWDIO_OK or an error); `user` is fwdio_callbacks_t.user.
 */
typedef void (*fwdio_file_cb_t)(fwdio_file_t *file, int status, void *user);

/**
 * Callback for the completion of step `step` (0, 1, ...) of a stream (see
 * fwdio_step_end): `status` is agreed on by every rank; FWDIO_OK means every
 * byte of the step and of the steps before it is in the file (durable, with
 * options.durable) and the step's commit block, if one was set, is written
 * and durable.
 */
typedef void (*fwdio_step_cb_t)(fwdio_file_t *file, uint64_t step, int status, void *user);

/** Callbacks of one file; any may be NULL. Each fires exactly once on every rank
 *  (step once per step this rank ended). */
typedef struct fwdio_callbacks {
    /** The writers have opened and sized the file (or failed to). */
    fwdio_file_cb_t ready;
    /** Every byte is in the file (and durable, with options.durable), or the file
     *  failed. Fires after ready, and after every step callback. */
    fwdio_file_cb_t complete;
    /** Passed to every callback. */
    void *user;
    /** Streams: a step is complete, or failed (after ready, in step order). */
    fwdio_step_cb_t step;
    /** The file's bytes are at its target path, or they will never be: with
     *  options.local_dir (the node-local tier), once the drain is over, with
     *  its status agreed on every rank (after complete; see
     *  fwdio_drain_test); otherwise right after complete, with its status. */
    fwdio_file_cb_t drained;
    /** Room for callbacks of later versions: leave it NULL (see "Growing the
     *  structs"). */
    void *reserved[2];
} fwdio_callbacks_t;

/** The size to give fwdio_open for a stream, a file that grows (fwdio_step_end). */
#define FWDIO_SIZE_GROWS UINT64_MAX
/** The largest a stream may grow to: 2^62 bytes (writes past it are
 *  FWDIO_ERANGE). */
#define FWDIO_STREAM_MAX_SIZE ((uint64_t)1 << 62)

/** Detail of a file's failure, the same on every rank. */
typedef struct fwdio_error_info {
    int status;      /**< the final status (FWDIO_OK if the file did not fail) */
    int rank;        /**< rank (in the fwdio_init communicator) that found the error, or -1 */
    int sys_errno;   /**< errno of the failing system call; 0 if none failed
                          (overlap, ...) or a pwrite wrote nothing */
    uint64_t offset; /**< file offset concerned */
    uint64_t reserved[4]; /**< zeros; room for fields of later versions */
} fwdio_error_info_t;

/**
 * The version of the fwdio library in use, "MAJOR.MINOR.PATCH" (compare with
 * FWDIO_VERSION_STRING, the version of the header compiled against). A
 * static string; any thread, before fwdio_init too.
 */
FWDIO_API const char *fwdio_version(void);

/**
 * The version of the fwdio library in use as one number, MAJOR * 1000000 +
 * MINOR * 1000 + PATCH (compare with FWDIO_VERSION_NUMBER). Any thread.
 */
FWDIO_API int fwdio_version_number(void);

/**
 * Fill `cfg` with defaults: zeros, which fwdio_init replaces by the
 * environment, the config file or the documented defaults (see "Where
 * settings come from" above fwdio_config_t). NULL is ignored.
 */
FWDIO_API void fwdio_config_init(fwdio_config_t *cfg);

/**
 * Start fwdio on every rank of `comm` (collective over comm). MPI must have been
 * initialised with MPI_THREAD_MULTIPLE, otherwise FWDIO_ETHREAD. Starts the
 * progress thread and duplicates `comm` for fwdio's own traffic.
 * @param comm  the ranks that will open files together; it is duplicated, so
 *              the caller may free it after this call.
 * @param cfg   runtime configuration, or NULL for the defaults.
 * @param rt    receives the runtime handle.
 * @return FWDIO_OK, FWDIO_EINVAL (NULL arguments, MPI not initialized or already
 *         finalized, an intercommunicator or an invalid communicator, a bad
 *         setting), FWDIO_ETHREAD, FWDIO_EMPI, FWDIO_ESYSTEM, FWDIO_ENOMEM.
 *         A bad value in `cfg` (reason on stderr) is refused on the calling
 *         rank before any communication; a bad value from the environment or
 *         the config file, or a config file that cannot be read, makes every
 *         rank return FWDIO_EINVAL (see "Refusals").
 * Call from one application thread per rank.
 */
FWDIO_API int fwdio_init(MPI_Comm comm, const fwdio_config_t *cfg, fwdio_runtime_t **rt);

/**
 * Stop fwdio (collective over the init communicator). Files not yet closed on
 * this rank are closed, every file is waited for (and every drain of the
 * node-local tier: fwdio_drain_wait; a rank still waiting for drains after
 * 10 s says so on stderr, once, with how many), file handles still held are
 * released (do not use them afterwards), and the threads are joined. Call
 * from an application thread, not from a callback.
 * @return FWDIO_OK, FWDIO_EINVAL, FWDIO_ECONTEXT (from a callback), FWDIO_EMPI
 *         (the closing barrier failed; everything is released all the same).
 */
FWDIO_API int fwdio_finalize(fwdio_runtime_t *rt);

/**
 * Fill `opts` with defaults: zeros, which fwdio_open replaces by the
 * environment, the config file or the documented defaults (see "Where settings
 * come from" above fwdio_config_t). NULL is ignored.
 */
FWDIO_API void fwdio_options_init(fwdio_options_t *opts);

/**
 * Set file options from MPI-IO hints, under the names MPI-IO users know:
 * cb_nodes -> writers, cb_config_list "*:N" -> writers_per_node,
 * striping_unit -> stripe_size, striping_factor -> targets, and
 * fwdio_<key> for any option key of fwdio_options_t (e.g. fwdio_layout =
 * targets, fwdio_writer_list = 0,4,8). Other hints are ignored. The hints
 * overwrite the fields they name and pin them (so block layout from a hint
 * wins over FWDIO_LAYOUT). The list of a fwdio_writer_list hint is kept by
 * fwdio for the life of the process (identical lists share one copy), so
 * `opts` may be copied and the info freed; the caller's own writer_list is
 * replaced, not freed. Nothing is changed when a hint is refused.
 * @return FWDIO_OK; FWDIO_EINVAL for a NULL opts or a malformed value or
 *         unknown fwdio_ key (reason on stderr); FWDIO_ENOMEM.
 */
FWDIO_API int fwdio_options_set_info(fwdio_options_t *opts, MPI_Info info);

/**
 * Open `path` for writing `size` bytes (collective, nonblocking). Every rank of
 * the runtime calls fwdio_open for the same files in the same order with the
 * same size and options. The handle is usable at once: writes are accepted
 * before the file is ready. The writers create the file if needed and set its
 * length to exactly `size` (an existing file is truncated first).
 *
 * The collective contract is checked, not assumed. Before anything touches
 * storage, every rank's path, size, write_size, stripe_size, writer count and
 * ranks, layout, targets, atomic_replace, durable, local_dir, local_capacity and local_copies are compared; if ranks
 * disagree (or opened files in different orders) the file fails on every rank
 * with FWDIO_EINVAL, nothing is created or truncated, and fwdio_file_error()
 * names the first field that differs and two ranks that passed different
 * values. Such a file completes once it is closed on this rank.
 *
 * One path, one file at a time: a path (its directory resolved, so "a" and
 * "./a" are one path) is written by one file of the runtime at a time. A file
 * opened while an earlier file of the runtime still writes its path waits:
 * its writers open (and truncate, or reuse the atomic_replace temporary) only
 * once the earlier file is complete, so versions of a checkpoint opened back
 * to back are written one after the other and each completes whole. The
 * earlier file must have been closed (fwdio_close) on this rank before the
 * new one is opened; otherwise the new file fails on every rank with
 * FWDIO_EINVAL ("still open"), since its bytes could never follow the earlier
 * file's. Files of different runtimes are not ordered.
 *
 * @param opts  options, or NULL for the defaults.
 * @param cbs   callbacks (copied), or NULL for none.
 * @param file  receives the handle.
 * @return FWDIO_OK; FWDIO_EINVAL for a NULL path or handle, MPI already
 *         finalized, or options fwdio refuses (a stripe_size that is not a
 *         multiple of write_size, a first_writer outside the communicator, a
 *         bad writer list, ...: the reason is on stderr, see "Refusals");
 *         FWDIO_ERANGE for a size larger than a file can be (off_t);
 *         FWDIO_ECONTEXT from a callback on the progress thread. A path that
 *         cannot be opened is reported later as FWDIO_EOPEN through the
 *         callbacks and fwdio_wait(), and so are the mismatches above. Any
 *         refusal but FWDIO_ECONTEXT, a NULL `rt` and a finalized MPI takes
 *         the file's place in the open order: the other ranks' file fails
 *         with the same status, naming this rank (see "Refusals").
 */
/*
 * Streams. fwdio_open with size FWDIO_SIZE_GROWS opens a stream: a file
 * without a final size, for output that comes a step at a time (a
 * trajectory's frames). The first writer cuts the file to
 * options.append_start bytes at the open (0 by default: nothing is kept);
 * after that the file's size is the end of the highest byte
 * written (a hole at the end is not part of it), and nothing but the
 * stream's own bytes is ever written or cut. Writes (fwdio_write,
 * fwdio_try_write, fwdio_write_lent) go anywhere below
 * FWDIO_STREAM_MAX_SIZE. Stripes map to writers without a total: the
 * cyclic and targets layouts as for any file; the block layout, which needs
 * the final size to cut the file into one run per writer, means cyclic for
 * a stream. atomic_replace does not apply to a stream (FWDIO_EINVAL): a
 * stream is read while it grows.
 *
 * Steps. fwdio_step_end() (collective, returns at once) ends the step on
 * this rank: the bytes this rank wrote since its previous step end belong to
 * step k (0, 1, ... in order of the calls). Step k completes once every rank
 * has ended it and every byte of it is in the file: writers flush their
 * partly filled write units at each step end, so no step waits for the next.
 * Steps complete in order; then callbacks.step runs and fwdio_step_test() /
 * fwdio_step_wait() answer. With options.durable, or when the step has a
 * commit block, the writers fdatasync before the step completes.
 *
 * Commit blocks of a stream. fwdio_set_commit during a step (on one rank)
 * gives that step commit blocks (up to 8): they are written, in order, and
 * made durable, only after every other byte of the step is durable on every
 * writer, and before the step completes. A later step's block at the same
 * offset replaces it. Writers also keep every byte of a later step out of
 * the file until the steps before it are complete (at most half of
 * writer_buffer of them; beyond that they are written early, with a warning,
 * rather than stall). So a header that counts the steps (a DCD's frame
 * count) always describes complete steps, each whole, whenever the job is
 * killed, and the file reaches no further than the step being written: make
 * the step's last bytes a commit block too, before the header, and the file's
 * size covers only whole steps (readers that count frames by size). Keep the
 * blocks' bytes out of every fwdio_write. Blocks set after the last step end
 * are written at the close, as for any file.
 *
 * A step that fails (a writer's pwrite, the commit block, an MPI failure)
 * fails the stream: it and every later step report the error, agreed on by
 * every rank; later writes return FWDIO_EFAILED and the file's complete
 * status is the error. Bytes written after the last fwdio_step_end belong
 * to no step: they are in the file when it completes. Every rank must end
 * the same number of steps before fwdio_close; ranks that do not fail the
 * stream with FWDIO_EINVAL ("ranks disagree on the steps").
 */

FWDIO_API int fwdio_open(fwdio_runtime_t *rt, const char *path, uint64_t size,
                         const fwdio_options_t *opts, const fwdio_callbacks_t *cbs,
                         fwdio_file_t **file);

/**
 * Write `len` bytes of `buf` at `offset` of the file (nonblocking). Returns as
 * soon as `buf` may be reused: the bytes are copied. Ranks may write any
 * disjoint pieces of the file in any order; bytes nobody writes stay holes
 * (they read as zeros).
 *
 * Writes of at most fwdio_config_t.combine_size bytes are combined with
 * other small writes of the file to the same writer into one message.
 *
 * Backpressure: the copies count against the rank's staging budget
 * (fwdio_config_t.staging_buffer) until they are sent. When it is full, the
 * call waits until enough has been sent; a write larger than the budget
 * streams through it. From a callback on the progress thread it cannot wait
 * and returns FWDIO_EAGAIN instead. Writes to a file that is not ready yet are
 * held (and count) until every rank has opened it, so a rank must not block in
 * fwdio_wait on a file that another rank will only close after writing to a
 * later file.
 * @return FWDIO_OK; FWDIO_EINVAL (NULL file, NULL buf with len > 0);
 *         FWDIO_ERANGE (offset + len > size); FWDIO_ECLOSED (after fwdio_close);
 *         FWDIO_EFAILED (the file is already known to have failed: the bytes are
 *         dropped); FWDIO_ENOMEM; FWDIO_EAGAIN (see above). If another thread
 *         closes the file or it fails while a large write streams, the part
 *         already accepted stays and the error is returned.
 */
FWDIO_API int fwdio_write(fwdio_file_t *file, const void *buf, size_t len, uint64_t offset);

/**
 * Called once per fwdio_write_lent() when `buf` may be reused: its bytes are in
 * the writers' hands (status FWDIO_OK), or were dropped because the file failed
 * (the file's error). Runs where the callback mode says.
 */
typedef void (*fwdio_lent_cb_t)(fwdio_file_t *file, const void *buf, int status, void *arg);

/**
 * Write without copying: the bytes are sent straight from `buf`, which the
 * caller must leave untouched until `done` is called (exactly once, unless this
 * call returns an error, in which case it is not called). Does not count
 * against the staging budget and never waits for it.
 * A buffer from fwdio_alloc() is the cheapest to lend: a writer on the same
 * node writes it from where it is, with no copy at all before pwrite.
 * @return as fwdio_write, except FWDIO_EAGAIN/FWDIO_ETOOBIG; FWDIO_EINVAL also
 *         for a NULL `done`, and for bytes that start in a fwdio_alloc buffer
 *         and run past its end.
 */
FWDIO_API int fwdio_write_lent(fwdio_file_t *file, const void *buf, size_t len, uint64_t offset,
                               fwdio_lent_cb_t done, void *arg);

/**
 * Memory for output the application packs in place, to hand to
 * fwdio_write_lent(): `len` bytes (64-byte aligned) from this rank's part of
 * the node-shared area (fwdio_config_t.shared_buffer, within the node's
 * node_buffer; committed now, given back after fwdio_release), which writers
 * on this node read directly, so a lent write of it costs no copy before the page
 * cache; ordinary memory when the area is off or full (a lent write of it then
 * travels as any other). Any thread; no MPI.
 * @return FWDIO_OK (*buf set); FWDIO_EINVAL (NULL runtime or buf, len 0; a
 *         reason on stderr); FWDIO_ENOMEM.
 */
FWDIO_API int fwdio_alloc(fwdio_runtime_t *rt, size_t len, void **buf);

/**
 * Give back a buffer from fwdio_alloc() of the same runtime. Once the done
 * callbacks of every lent write of it have run; fwdio_finalize() releases
 * every buffer still allocated. Any thread.
 * @return FWDIO_OK; FWDIO_EINVAL (NULL, a pointer fwdio_alloc did not return,
 *         one inside such a buffer, or one released already: nothing is
 *         freed, and stderr says which); FWDIO_EBUSY (lent writes of it are
 *         still in flight: nothing is freed).
 */
FWDIO_API int fwdio_release(fwdio_runtime_t *rt, void *buf);

/**
 * Like fwdio_write, but never waits for staging memory: the whole write is
 * copied now, or nothing is.
 * @return as fwdio_write, plus FWDIO_EAGAIN when the rank's staging budget
 *         (fwdio_config_t.staging_buffer) has no room for `len` bytes now (try
 *         again after some output has been sent, e.g. after fwdio_poll), and
 *         FWDIO_ETOOBIG when `len` exceeds the whole budget.
 */
FWDIO_API int fwdio_try_write(fwdio_file_t *file, const void *buf, size_t len, uint64_t offset);

/**
 * Give the file a commit block (CkIO's session commit data): `len` bytes,
 * copied here, that are written at `offset` only after every other byte of
 * the file is durable on every writer, and are made durable themselves before
 * complete fires. A reader that finds a valid commit block (a checkpoint's
 * trailing record, say) therefore knows the rest of the file is whole. The
 * rank that calls this writes the block itself (it need not be a writer).
 * Call it on one rank only, before fwdio_close() on that rank; the block is
 * written after, so it wins over any fwdio_write() of the same bytes.
 * Set on several ranks, the file fails with FWDIO_EINVAL. If the file fails
 * before the commit, the block is not written. In a stream a block belongs to
 * the current step (see "Commit blocks of a stream" above fwdio_open): up to
 * 8 per step, written in the order they were set (a frame's last bytes, then
 * the header that counts the frame, say).
 * @return FWDIO_OK; FWDIO_EINVAL (NULL file, NULL buf with len > 0, len 0, a
 *         block already set on this rank, or a stream's 9th block of a step);
 *         FWDIO_ERANGE (offset + len > size); FWDIO_ECLOSED (after
 *         fwdio_close); FWDIO_ENOMEM.
 */
FWDIO_API int fwdio_set_commit(fwdio_file_t *file, const void *buf, size_t len, uint64_t offset);

/**
 * End this rank's current step of a stream (collective over the runtime's
 * ranks, nonblocking: it returns at once). The bytes this rank wrote to the
 * file since its previous fwdio_step_end (or the open) and the commit block
 * set since then are step k, where k counts this rank's earlier calls; the
 * step completes as described under "Streams" above fwdio_open. Open
 * combined messages of the file are sent now. A step may be empty on any
 * rank.
 * @return FWDIO_OK; FWDIO_EINVAL (NULL file, or a file that is not a stream:
 *         the reason is on stderr); FWDIO_ECLOSED (after fwdio_close);
 *         FWDIO_ENOMEM (nothing ended); FWDIO_EFAILED (the stream has failed:
 *         the step is ended all the same, so ranks stay in step, and its
 *         callback reports the error).
 */
FWDIO_API int fwdio_step_end(fwdio_file_t *file);

/**
 * Append `len` bytes of `buf` to a stream in order (nonblocking: the bytes
 * are copied, and wait in the staging budget until the step ends). At the
 * end of the step fwdio places every rank's appends of the step one after
 * the other, in rank order and, within a rank, in the order of its calls,
 * after everything the earlier steps appended; a nonblocking exclusive scan
 * of the ranks' appended bytes gives each its offset, so the application
 * exchanges no lengths. Appends start at options.append_start (default
 * 0); they and fwdio_write at explicit offsets may be mixed in a stream,
 * and it is the application's part to keep them apart: a header written at
 * explicit offsets below append_start with frames appended after it, say. Bytes appended after the last fwdio_step_end are placed at the
 * close.
 * Appends held on a rank, of every stream, may take at most half the
 * staging budget (fwdio_config_t.staging_buffer): the other half keeps
 * fwdio_write flowing, as only step ends can send them. The appends of the
 * steps not ended yet must fit in that half (else FWDIO_ETOOBIG); those of
 * steps this rank ended but other ranks have not are sent once every rank
 * ended them, and fwdio_append waits for that when they fill the half
 * (backpressure, as fwdio_write waits for staging room).
 * @return FWDIO_OK; FWDIO_EINVAL (NULL file, NULL buf with len > 0, not a
 *         stream); FWDIO_ETOOBIG (the appends of the steps not ended yet
 *         would pass half the staging budget: nothing is taken; end the
 *         step first); FWDIO_ECLOSED; FWDIO_EFAILED; FWDIO_ENOMEM;
 *         FWDIO_EAGAIN (from a callback on the progress thread when it
 *         would have to wait).
 */
FWDIO_API int fwdio_append(fwdio_file_t *file, const void *buf, size_t len);

/**
 * Check without blocking whether step `step` of a stream is complete (its
 * callback has run on this rank). Runs queued callbacks first, as
 * fwdio_test does.
 * @param done  set to 1 when complete, else 0.
 * @return the step's status when *done is 1, else FWDIO_OK; FWDIO_EINVAL
 *         (NULL arguments, not a stream, or a step this rank has not ended).
 */
FWDIO_API int fwdio_step_test(fwdio_file_t *file, uint64_t step, int *done);

/**
 * Block until step `step` of a stream is complete and its callback has run
 * on this rank; return its status. Runs queued callbacks while waiting.
 * @return the step's status; FWDIO_EINVAL (NULL file, not a stream, or a
 *         step this rank has not ended: waiting could never end);
 *         FWDIO_ECONTEXT (from a callback).
 */
FWDIO_API int fwdio_step_wait(fwdio_file_t *file, uint64_t step);

/**
 * A stream of the node-local tier (local_dir; see fwdio_options_t.local_dir):
 * check without blocking whether steps 0..`step` are *drained*, every byte
 * they wrote copied from the writers' local files to the path (fdatasync'ed
 * there with durable), as agreed on every rank. Each step drains in the
 * background once it is complete, in step order; a byte a later step wrote
 * again may be at the path with that step's value. A stream not in the
 * tier: the same as fwdio_step_test (its steps are written at the path).
 * @param done  set to 1 when drained (or its drain failed), else 0.
 * @return the step's drain status when *done is 1, else FWDIO_OK: the
 *         step's own failure, or the agreed failure of its drain or of an
 *         earlier step's (every later step's drain fails with it, as does
 *         the stream's drain after the close); FWDIO_EINVAL (NULL
 *         arguments, not a stream, or a step this rank has not ended).
 */
FWDIO_API int fwdio_step_drain_test(fwdio_file_t *file, uint64_t step, int *done);

/**
 * Block until steps 0..`step` of a stream of the node-local tier are drained
 * (fwdio_step_drain_test) and return the drain's status; for a stream not
 * in the tier, fwdio_step_wait. Runs queued callbacks while waiting.
 * @return as fwdio_step_drain_test; FWDIO_EINVAL (NULL file, not a stream,
 *         or a step this rank has not ended); FWDIO_ECONTEXT (from a
 *         callback).
 */
FWDIO_API int fwdio_step_drain_wait(fwdio_file_t *file, uint64_t step);

/*
 * Reads. fwdio_open_read opens an existing file for collective,
 * nonblocking reads through the same few ranks and the same plan that would
 * write it (options.writers, placement, layout, stripe_size and write_size;
 * here they are *readers*). A reader pread()s whole write units, stripe
 * aligned, from its I/O thread and sends each rank the pieces it asked for,
 * so the file system sees few, large, aligned requests however the ranks
 * cut up the file, and a unit wanted by several ranks is read once while it
 * stays in the reader's memory (options' writer_buffer bounds it, as for
 * writes; a unit that had to make room is read again). Ranks receive their
 * pieces straight into their buffers: fwdio holds no copy of them.
 *
 * The file may have been written by any number of ranks, with fwdio or
 * anything else: the plan depends on the options and the rank count of the
 * runtime that reads it, not of the one that wrote it (restart on M ranks of
 * a checkpoint written by N). Holes read as zeros. The file is not expected
 * to change while it is read: its size is taken when the readers open it,
 * and a file that ends early fails the reads past its new end with
 * FWDIO_EREAD.
 *
 * Reads and writes of one path are ordered as opens are (see fwdio_open,
 * "One path, one file at a time"): a read of a path opened after a write of
 * it waits for that file to complete, and sees its bytes.
 */

/**
 * Callback of fwdio_read(): the read of `buf` ended. FWDIO_OK: every byte
 * asked for is in `buf`. Otherwise `buf` holds any of the bytes, and the
 * status says why: FWDIO_EREAD (a reader's pread failed, or the file ended
 * early), FWDIO_ERANGE (issued before the size was known, and past it), the
 * file's open status (FWDIO_EOPEN, FWDIO_EINVAL, ...) when it could not be
 * opened, or the file's failure (FWDIO_EMPI, FWDIO_EPROTO) when it failed
 * first. `arg` is what was passed to fwdio_read. Runs as the callbacks of
 * the file do (fwdio_config_t.callbacks), before the file's complete.
 */
typedef void (*fwdio_read_cb_t)(fwdio_file_t *file, void *buf, int status, void *arg);

/**
 * Open the existing file `path` for reading (collective, nonblocking). Every
 * rank of the runtime calls it for the same files in the same order as
 * fwdio_open, with the same plan-shaping options (write_size, stripe_size,
 * writers and their placement, layout, targets); options that concern
 * writing only (durable, atomic_replace, append_start) are ignored. The
 * contract is checked as for fwdio_open: ranks that disagree, or that open
 * the path for writing on some ranks and for reading on others, fail the
 * file on every rank with FWDIO_EINVAL naming the field.
 *
 * The handle is usable at once: reads are accepted before the file is
 * ready. Ready reports the agreed status: FWDIO_OK, or FWDIO_EOPEN with the
 * detail (a missing file, a directory, no permission; errno and reader rank
 * in fwdio_file_error). Then fwdio_file_size() gives its size. Close it
 * (fwdio_close) on every rank after the last fwdio_read; the file completes
 * once every read of every rank has ended, with the agreed status: FWDIO_OK,
 * or the first failure of any rank's read (every rank sees the same).
 *
 * Restart from the nearest copy. With options.local_dir (the node-local
 * tier) the readers read the path's newest complete version from the local
 * copies the tier's writers kept, when they can, else the target. A reader
 * looks only in its own host's local store (local_dir with "%h" its host
 * name: another node's storage is out of reach) for local files of the path
 * with an intact index (one cut short or still being written is ignored)
 * and a version record the target does not contradict: the record says
 * what the target was when the version was sealed and, after its drain,
 * what the drain left; the copy is taken only while the target is exactly
 * one of those (stat: size, mtime, ctime, inode; the predecessor only
 * before the drain ended), so a later version written another way, a
 * removed or rewritten target, wins, and no clocks are compared. It takes
 * the newest version whose copies there hold every unit it reads (any rank
 * count, any reader count, with a stripe_size the written one is a
 * multiple of). Then every rank agrees (one more small reduction before
 * the open's): the local copies are read only if every reader chose the
 * same version; otherwise every reader reads the target. A copy newer than
 * the target (its drain failed, or the job was killed during it) is read
 * from the local stores, whose bytes are not checksummed here (checkpoint
 * sets check theirs).
 *
 * @return FWDIO_OK; FWDIO_EINVAL for a NULL path or handle, MPI finalized, or
 *         options fwdio refuses (reason on stderr); FWDIO_ECONTEXT from a
 *         callback on the progress thread. As for fwdio_open, a refusal with
 *         a runtime takes the file's place in the open order (see
 *         "Refusals").
 */
FWDIO_API int fwdio_open_read(fwdio_runtime_t *rt, const char *path, const fwdio_options_t *opts,
                              const fwdio_callbacks_t *cbs, fwdio_file_t **file);

/**
 * Read `len` bytes of the file at `offset` into `buf` (nonblocking). Returns
 * at once; `done(file, buf, status, arg)` runs when `buf` is filled, or the
 * read failed (NULL: no callback; the read still ends before the file
 * completes). `buf` belongs to fwdio until then: do not touch or free it.
 * Any number of reads per rank, of any sizes and offsets, overlapping each
 * other's or other ranks' reads, in any order; they may end in any order.
 * A read of 0 bytes ends at once (done still runs). Any thread; from a
 * callback in either mode too.
 * @return FWDIO_OK; FWDIO_EINVAL (NULL file, NULL buf with len > 0, a file
 *         opened for writing); FWDIO_ERANGE when the read reaches past the
 *         end of the file and its size is known (after ready; before it,
 *         the read ends with FWDIO_ERANGE in done, and the file's status is
 *         not affected: it is this read's error, as a refusal at the call
 *         would have been); FWDIO_ECLOSED after fwdio_close on this rank;
 *         FWDIO_EFAILED once the file has failed (its open too). When it
 *         returns an error, done is not called.
 */
FWDIO_API int fwdio_read(fwdio_file_t *file, void *buf, size_t len, uint64_t offset,
                         fwdio_read_cb_t done, void *arg);

/**
 * The size of a file opened with fwdio_open_read, once it is ready (taken by
 * the readers at the open, the same on every rank); for a file opened with
 * fwdio_open, the size it was given.
 * @return FWDIO_OK with *size set; FWDIO_EAGAIN before the file is ready;
 *         the open status when it could not be opened; FWDIO_EINVAL for NULL
 *         arguments or a stream (it has no final size).
 */
FWDIO_API int fwdio_file_size(const fwdio_file_t *file, uint64_t *size);

/**
 * Declare that this rank has written all it will to the file (nonblocking);
 * for a file opened with fwdio_open_read, that it will issue no more reads.
 * The file completes once every rank has closed it and the writers are done
 * (the reads of every rank have ended).
 * @return FWDIO_OK; FWDIO_EINVAL; FWDIO_ECLOSED if already closed.
 */
FWDIO_API int fwdio_close(fwdio_file_t *file);

/**
 * Block until the file is ready: the writers have opened it (or failed to;
 * for fwdio_open_read, the readers know its size) and the ready callback, if
 * any, has run on this rank. Runs queued callbacks while waiting (ON_POLL).
 * Needs no fwdio_close first: a code that must not go on before the file
 * exists calls it right after fwdio_open.
 * @return the open status, the same on every rank (the ready callback's);
 *         FWDIO_EINVAL for NULL; FWDIO_ECONTEXT from a callback or the
 *         progress thread.
 */
FWDIO_API int fwdio_wait_ready(fwdio_file_t *file);

/**
 * Block until the file is complete or failed and its callbacks have run on this
 * rank; return the final status. Runs queued callbacks while waiting.
 * @return the final status (FWDIO_OK or an error), FWDIO_ENOTCLOSED if this
 *         rank has not closed the file (waiting could never end), FWDIO_EINVAL,
 *         FWDIO_ECONTEXT (from a callback, in either mode).
 */
FWDIO_API int fwdio_wait(fwdio_file_t *file);

/**
 * Check without blocking whether the file is complete (its callbacks run on this
 * rank). Runs queued callbacks first.
 * @param done  set to 1 when complete, else 0.
 * @return the final status when *done is 1, else FWDIO_OK; FWDIO_EINVAL.
 */
FWDIO_API int fwdio_test(fwdio_file_t *file, int *done);

/**
 * The node-local tier's second completion (options.local_dir): check
 * without blocking whether the file's drain to its target path is over on
 * this rank (its drained callback has run). Runs queued callbacks first.
 * The status is agreed on every rank: FWDIO_OK means every byte is at the
 * target (durable there with durable, atomic_replace or a commit block),
 * renamed into place with atomic_replace, and the local files are removed;
 * a failure on any writer (the target cannot be opened, a pwrite or
 * fdatasync fails, the local copy cannot be read) is every rank's status,
 * with fwdio_file_error() naming the call, rank, offset and errno, and never
 * FWDIO_OK over missing bytes. A writer whose local store failed and whose
 * file moved to the target (options.local_dir) has nothing to drain: its
 * bytes were at the target at completion; the drain is the other writers'
 * and the commit (with every writer moved, it is over at once, OK). An MPI failure of one of the drain's
 * agreements on one rank ends the drain on every rank with FWDIO_EMPI
 * naming it (no rank waits for ever). A file without the tier, or one whose local
 * phase failed, is drained as soon as it is complete, with complete's
 * status. Any thread, any callback mode; fwdio_file_free() does not stop a
 * drain (the runtime keeps what it needs), but the handle is then gone.
 * @param done  set to 1 when the drain is over, else 0.
 * @return the drained status when *done is 1, else FWDIO_OK; FWDIO_EINVAL.
 */
FWDIO_API int fwdio_drain_test(fwdio_file_t *file, int *done);

/**
 * Block until the file's drain is over on this rank (see fwdio_drain_test)
 * and return its agreed status. Runs queued callbacks while waiting.
 * @return the drained status, FWDIO_ENOTCLOSED if this rank has not closed
 *         the file, FWDIO_EINVAL, FWDIO_ECONTEXT (from a callback).
 */
FWDIO_API int fwdio_drain_wait(fwdio_file_t *file);

/**
 * Run the callbacks queued for the application (FWDIO_CALLBACKS_ON_POLL mode)
 * on the calling thread, without blocking. Also sends the rank's open combined
 * messages (fwdio_config_t.combine_size), as fwdio_test and fwdio_wait do.
 * @return the number of callbacks run (>= 0), FWDIO_EINVAL, or FWDIO_ECONTEXT
 *         from a callback on the progress thread.
 */
FWDIO_API int fwdio_poll(fwdio_runtime_t *rt);

/**
 * Release a file handle. A file that is not complete yet is closed on this rank
 * if needed and goes on in the background; its callbacks still fire, and its
 * memory is released once it completes (and its drain, with the node-local
 * tier, is over). The handle may not be used afterwards.
 */
FWDIO_API void fwdio_file_free(fwdio_file_t *file);

/** Name of a status code, e.g. "a writer's pwrite failed"; never NULL. */
FWDIO_API const char *fwdio_strerror(int status);

/**
 * A one-line description of why the file failed: the failing call, the path,
 * the rank, the offset where it matters and the errno, e.g. "pwrite of
 * /x/y failed on rank 2 at offset 8388608: No space left on device (errno
 * 28)", "fdatasync of /x/y failed on rank 1: Input/output error (errno 5)";
 * without a failing call the status and where, e.g. "two writes overlap the
 * same bytes of the file (/x/y, rank 0, offset 100000)". A path too long
 * for the text loses its beginning. "success" while the file has not failed.
 * A file of the node-local tier that completed and whose drain failed
 * gives the drain's failure here (its complete status stays FWDIO_OK); a
 * stream of the tier whose step's drain failed (fwdio_step_drain_test) gives
 * that failure while the stream itself has not failed.
 * Valid until fwdio_file_free().
 */
FWDIO_API const char *fwdio_file_error(const fwdio_file_t *file);

/** Structured form of fwdio_file_error(): fills `info`; FWDIO_OK or FWDIO_EINVAL. */
FWDIO_API int fwdio_file_error_info(const fwdio_file_t *file, fwdio_error_info_t *info);

/** What one rank saw of one file. Times in seconds; writer fields are 0 on
 *  ranks that do not write the file. Final once the file is complete. */
typedef struct fwdio_file_stats {
    uint64_t bytes_written;     /**< bytes this rank passed to fwdio_write* */
    uint64_t write_calls;       /**< fwdio_write* calls that were accepted */
    uint64_t messages_sent;     /**< data messages this rank sent (to itself too) */
    double time_blocked;        /**< time inside fwdio_open/write/close for it */
    double time_to_ready;       /**< from fwdio_open to the ready status */
    double time_to_complete;    /**< from fwdio_open to the complete status */
    uint64_t writer_bytes;      /**< bytes this writer received for the file */
    uint64_t messages_received; /**< messages this writer took in */
    uint64_t pwrite_calls;      /**< extents written (a reader: units pread) */
    uint64_t partial_flushes;   /**< partly filled units flushed to make room */
    double pwrite_time;         /**< time in pwrite (a reader: in pread) */
    double sync_time;           /**< time in fdatasync + close */
    uint64_t peak_writer_bytes; /**< peak bytes this writer held for the file */
    uint64_t peak_staged_bytes; /**< peak bytes this rank had staged for the file */
    /* Where the bytes went on this rank, to read copies per output byte off a
     * run: (bytes_copied + bytes_to_mpi + bytes_to_pwrite) summed over ranks,
     * divided by the file's bytes. A byte MPI moves within a node costs one
     * copy (shared-memory transport); pwrite copies into the page cache. */
    uint64_t bytes_copied;      /**< bytes fwdio itself copied: fwdio_write into
                                     messages, a writer into its write units */
    uint64_t bytes_to_mpi;      /**< data bytes this rank handed to MPI sends */
    uint64_t bytes_to_pwrite;   /**< bytes this writer handed to pwrite */
    uint64_t bytes_shared;      /**< data bytes this rank handed to writers on its
                                     node through the node-shared area (no copy) */
    /* A file opened with fwdio_open_read (the write fields above stay 0,
     * except those a reader shares: pwrite_calls, pwrite_time,
     * peak_writer_bytes, messages_sent, bytes_to_mpi). */
    uint64_t bytes_read;        /**< bytes this rank asked for with fwdio_read */
    uint64_t read_calls;        /**< fwdio_read calls that were accepted */
    uint64_t bytes_from_storage; /**< bytes this reader pread (whole units; each
                                      unit once while it stays in memory) */
    /* Taken from the reserved tail in 0.1: the struct has no room left; a
     * later field needs a versioned call. */
    double time_to_failure;     /**< from fwdio_open to the return of this rank's
                                     first failed file-system call for the file
                                     (open, pwrite, fdatasync, close, rename,
                                     pread, ... of its storage jobs, real or
                                     injected by FWDIO_FAULT); 0 if none failed */
} fwdio_file_stats_t;

/** Fill `stats` for `file` on this rank; FWDIO_OK or FWDIO_EINVAL. */
FWDIO_API int fwdio_file_stats(const fwdio_file_t *file, fwdio_file_stats_t *stats);

/**
 * Bytes each writer of the file receives, in writer order, as agreed when every
 * rank has closed it (zeros before). @return the number of writers, or
 * FWDIO_EINVAL.
 */
FWDIO_API int fwdio_file_writer_bytes(const fwdio_file_t *file, uint64_t *bytes, int max);

/** Memory of one rank's runtime, over all files. */
typedef struct fwdio_runtime_stats {
    uint64_t writer_budget; /**< fwdio_config_t.writer_buffer in force */
    uint64_t staging_budget; /**< fwdio_config_t.staging_buffer in force */
    uint64_t max_message;   /**< largest data message (max_message_size in force) */
    uint64_t writer_peak;   /**< peak bytes held by this rank as a writer */
    uint64_t staging_peak;  /**< peak bytes of copied writes waiting to be sent */
    uint64_t staged;        /**< bytes staged now */
    uint64_t combine_size;  /**< fwdio_config_t.combine_size in force (1: off) */
    /* What fwdio's own threads cost this rank so far (their CPU time as the
     * kernel counts it, and how often each woke up): the price of a
     * non-dedicated runtime on a core the application computes on. */
    double progress_cpu_time;  /**< CPU seconds of the progress thread */
    double io_cpu_time;        /**< CPU seconds of the I/O thread (0 if never started) */
    uint64_t progress_wakeups; /**< times the progress thread woke (tasks, timer, I/O) */
    uint64_t io_wakeups;       /**< times the I/O thread woke for jobs */
    uint64_t shared_budget;    /**< the most bytes of the node-shared area this rank
                                    may hold (shared_buffer in force; 0: off here) */
    uint64_t shared_peak;      /**< peak bytes of it in use: messages to writers on
                                    the node and fwdio_alloc buffers */
    /* Taken from the reserved tail in 0.1: the struct has no room left; a
     * later field needs a versioned call. */
    uint64_t node_committed;   /**< bytes of the node-shared area committed on this
                                    node now, by all its ranks (rings not counted;
                                    at most node_buffer; 0: area off here) */
    uint64_t node_peak;        /**< the most bytes of it committed at once so far */
} fwdio_runtime_stats_t;

/** Fill `stats`; FWDIO_OK or FWDIO_EINVAL. Any thread. */
FWDIO_API int fwdio_runtime_stats(fwdio_runtime_t *rt, fwdio_runtime_stats_t *stats);

/**
 * Print the plan fwdio would use for a file of `size` bytes with `opts`
 * (NULL: defaults): which ranks write (with their node, package, NUMA domain
 * and core), the stripes and storage targets each writer owns, bytes per
 * writer, and the largest number of targets any writer touches. As a short
 * table, or as JSON when `json` is non-zero.
 *
 * The ranks are either the runtime's own (`rt` non-NULL, `nranks` 0: its real
 * topology), or a what-if: `nranks` ranks, `ranks_per_node` per node, on nodes
 * of the hwloc synthetic shape `synthetic` (e.g. "package:2 numa:2 core:8
 * pu:1"; NULL: binding unknown), filled node by node and core by core.
 * @return FWDIO_OK, FWDIO_EINVAL (bad options, counts or description; a
 *         reason is printed to `out`), FWDIO_ENOMEM. Any thread; no MPI.
 */
FWDIO_API int fwdio_plan_describe(fwdio_runtime_t *rt, uint64_t size, const fwdio_options_t *opts,
                                  int nranks, int ranks_per_node, const char *synthetic, int json,
                                  FILE *out);

/**
 * The writer ranks of an open file, in writer order. `ranks` may be NULL to ask
 * for the count only. @return the number of writers, or FWDIO_EINVAL.
 */
FWDIO_API int fwdio_file_writers(const fwdio_file_t *file, int *ranks, int max_ranks);

/**
 * A duplicate of the communicator given to fwdio_init, made by fwdio_init
 * (same ranks, same order; errors return, MPI_ERRORS_RETURN) and freed by
 * fwdio_finalize, for the collectives that layers above fwdio make from
 * application threads: the checkpoint sets below make their few blocking
 * collectives on it, never on the caller's communicator (whose collectives
 * and error handler are the application's) nor on fwdio's own.
 * @return FWDIO_OK with *comm set; FWDIO_EINVAL for NULL arguments. Any thread.
 */
FWDIO_API int fwdio_runtime_comm(const fwdio_runtime_t *rt, MPI_Comm *comm);

/*
 * Checkpoint sets (checkpoint/, a layer on the calls above, as SCR and
 * VeloC offer): versions of a named checkpoint, a checksum per version that
 * a restart verifies, a count of complete versions kept, and the newest
 * intact version found for a restart, so codes do not hand-roll them.
 *
 * Names and paths. A set is a name in a directory (fwdio_ckpt_options_t.dir,
 * which must exist). Version v of set N is two files:
 *   <dir>/N.v<v>.ckpt      the data, an ordinary fwdio file (atomic_replace);
 *   <dir>/N.v<v>.manifest  "fwdio-ckpt 1", the name, version, size and CRC-32
 *                          of the data, and a CRC-32 of the manifest itself.
 * A name is 1 to FWDIO_CKPT_NAME_MAX characters of A-Z a-z 0-9 . _ -, not
 * starting with '.'; others are refused at the call (FWDIO_EINVAL, the reason
 * on stderr). Versions are any uint64, chosen by the code (a step number).
 *
 * Completeness. A version is complete when its manifest is in place. The
 * manifest is written only after the data file's agreed FWDIO_OK (with the
 * node-local tier, after its drain: a version is complete at the target),
 * through fwdio with atomic_replace (durable, renamed into place, directory
 * synced), so a job killed at any moment, or a version that failed, never
 * leaves a complete-looking version: at worst a data file without manifest,
 * which fwdio_ckpt_latest ignores and the next write of that version
 * replaces. Rewriting a complete version removes its manifest first. (The
 * manifest's file is opened with the data, fwdio_open being collective in
 * call order; after a failure it completes holding zeros, which do not
 * parse, and rank 0 removes it as the failure is agreed.)
 *
 * Checksum. The CRC-32 of zlib (the gzip polynomial) of the whole data file,
 * holes as zeros. No pass over the file is made to compute it: each
 * fwdio_ckpt_write takes the crc32 of the bytes it is given (one read of
 * them, on the calling thread, beside the copy fwdio_write makes) and, as
 * CRC-32 is affine, turns it into a term that depends on the piece's offset
 * and the file's size; the terms of every write of every rank XOR into the
 * file's CRC in any order, with one 4-byte MPI_BXOR reduction at the
 * completion (fwdio_ckpt_test or fwdio_ckpt_wait). Verifying reads the file once (fwdio_ckpt_verify). A
 * 32-bit check finds damage (torn, truncated, flipped or zeroed bytes), not
 * an adversary; the manifest also records the size.
 *
 * Collectives. Every rank of the runtime calls fwdio_ckpt_open,
 * fwdio_ckpt_wait, fwdio_ckpt_latest(_upto), fwdio_ckpt_verify and
 * fwdio_ckpt_open_read in the same order, as MPI collectives
 * (fwdio_ckpt_test is nonblocking and needs no order: see there). Each makes
 * small blocking MPI collectives on the runtime's duplicate of its communicator
 * (fwdio_runtime_comm) from the calling thread (open and open_read one
 * reduction before they open, open one more after; latest and verify a few
 * more; test and wait two nonblocking ones on the version's own duplicate,
 * made by fwdio_ckpt_open and freed by fwdio_ckpt_free), so they
 * are called from the application thread, never from a callback, and by
 * every rank in the same order.
 * Ranks that disagree (name, version, size, dir, keep) get the same error on
 * every rank, FWDIO_EINVAL, nothing is opened, no version is marked
 * complete, and no rank hangs: the first reduction of each call compares a
 * digest of those arguments and whether every rank accepted its own.
 *
 * Restart from the node-local tier's copies. With opts->file->local_dir,
 * once every rank's data is complete and some rank's drain still runs, rank
 * 0 puts the manifest of the version, complete in the local stores but not
 * yet drained, in place as "<name>.v<version>.local" (fwdio_ckpt_test's and
 * fwdio_ckpt_wait's step after the data's completion; removed
 * once the real manifest is in place; kept when the drain fails, the local
 * copies being the version's whole copy). fwdio_ckpt_latest and
 * fwdio_ckpt_open_read take such a version too, and read it through
 * fwdio_open_read with opts->file, from the local copies when they are
 * reachable (see fwdio_open_read); fwdio_ckpt_latest verifies its checksum
 * and goes to the next older version when the copies cannot be read or are
 * damaged.
 */

/** A version of a checkpoint set being written (fwdio_ckpt_open). */
typedef struct fwdio_ckpt fwdio_ckpt_t;

/** Longest set name. */
#define FWDIO_CKPT_NAME_MAX 128
/** Default fwdio_ckpt_options_t.keep. */
#define FWDIO_CKPT_DEFAULT_KEEP 2

/** Options of a checkpoint set: initialise with fwdio_ckpt_options_init or
 *  zeros. Every rank passes the same values. */
typedef struct fwdio_ckpt_options {
    /** The set's directory (must exist). NULL or "" (default): ".". */
    const char *dir;
    /** Complete versions kept per name: once a version is complete, older
     *  complete versions beyond the `keep` newest are removed (manifest
     *  first, then data), by rank 0. The newest complete version is never
     *  removed; versions without a manifest (in flight, or left by a killed
     *  job) are never touched. 0 (default): FWDIO_CKPT_DEFAULT_KEEP. */
    unsigned keep;
    /** Options of the data file and of its reads (NULL: defaults), as for
     *  fwdio_open; atomic_replace is forced on, overlaps refused
     *  (FWDIO_EINVAL: the checksum needs every byte written once). */
    const fwdio_options_t *file;
    /** Room for fields of later versions: leave it zero. */
    uint64_t reserved[4];
} fwdio_ckpt_options_t;

/** Fill `opts` with the defaults (zeros). */
FWDIO_API void fwdio_ckpt_options_init(fwdio_ckpt_options_t *opts);

/**
 * Start writing version `version` of set `name` (collective: one small
 * blocking reduction that checks every rank passed the same name, version,
 * size, dir and keep, then nonblocking as fwdio_open; from the application
 * thread, never from a callback): opens <dir>/<name>.v<version>.ckpt of `size` bytes
 * (atomic_replace) and removes that version's manifest if one exists (rank
 * 0). Write it with fwdio_ckpt_write, close it with fwdio_ckpt_close, and
 * complete the version with fwdio_ckpt_wait. fwdio_ckpt_file gives the
 * ordinary fwdio file for the calls that do not write (fwdio_test,
 * fwdio_wait_ready, fwdio_file_stats, fwdio_file_error, ...).
 * @return FWDIO_OK with *ck set; FWDIO_EINVAL (NULL arguments, a bad name,
 *         a stream size, options.overlaps, a non-zero reserved tail, options
 *         fwdio_open refuses; the reason on stderr), on every rank when a
 *         rank refused its arguments or ranks disagree, *ck then NULL; a
 *         rank where fwdio_open refused the version's files (options.file
 *         set on that rank only, say) returns fwdio_open's error and every
 *         other rank FWDIO_EINVAL, with no version opened anywhere;
 *         FWDIO_ENOMEM; FWDIO_EMPI.
 */
FWDIO_API int fwdio_ckpt_open(fwdio_runtime_t *rt, const char *name, uint64_t version,
                              uint64_t size, const fwdio_ckpt_options_t *opts, fwdio_ckpt_t **ck);

/** The fwdio file of a checkpoint version (owned by `ck`; NULL for NULL). */
FWDIO_API fwdio_file_t *fwdio_ckpt_file(fwdio_ckpt_t *ck);

/**
 * fwdio_write of `len` bytes at `offset`, and the bytes' part of the
 * version's checksum (a crc32 of them on the calling thread). Bytes written
 * to fwdio_ckpt_file(ck) with fwdio_write, fwdio_write_lent or
 * fwdio_set_commit directly are not in the checksum: the version then fails
 * verification. Any thread.
 * @return what fwdio_write returns; the bytes count only when FWDIO_OK.
 */
FWDIO_API int fwdio_ckpt_write(fwdio_ckpt_t *ck, const void *buf, size_t len, uint64_t offset);

/**
 * fwdio_write_lent of `len` bytes of `buf` at `offset` (the buffer is lent
 * until `done`, as there), and the bytes' part of the checksum, taken from
 * `buf` before it is lent. Any thread.
 * @return what fwdio_write_lent returns; the bytes count only when FWDIO_OK.
 */
FWDIO_API int fwdio_ckpt_write_lent(fwdio_ckpt_t *ck, const void *buf, size_t len,
                                    uint64_t offset, fwdio_lent_cb_t done, void *arg);

/**
 * fwdio_set_commit of the version's file (a commit record written last,
 * once every other byte is durable; one rank), and its part of the
 * checksum. Its bytes must not be written by any fwdio_ckpt_write too (the
 * block would win in the file, and the checksum would count both: the
 * version would then fail verification).
 * @return what fwdio_set_commit returns; the block counts only when FWDIO_OK.
 */
FWDIO_API int fwdio_ckpt_set_commit(fwdio_ckpt_t *ck, const void *buf, size_t len,
                                    uint64_t offset);

/** fwdio_close of the version's file (nonblocking). @return as fwdio_close. */
FWDIO_API int fwdio_ckpt_close(fwdio_ckpt_t *ck);

/**
 * Complete the version (collective, blocking; after fwdio_ckpt_close):
 * waits for the data file (its drain, with the node-local tier), combines
 * the ranks' checksum terms, writes the manifest (through fwdio,
 * atomic_replace; its file was opened by fwdio_ckpt_open) and applies
 * `keep`: fwdio_ckpt_test until done, from wherever earlier tests left it.
 * @return the same on every rank: FWDIO_OK (the version is complete: the
 *         data and its manifest are durable in place); the data file's
 *         agreed error (FWDIO_EWRITE, FWDIO_EINVAL for ranks that disagree
 *         on name, version or size, ...); FWDIO_EINVAL when ranks disagree
 *         on dir or keep; the manifest file's agreed error; FWDIO_EMPI. No
 *         manifest exists after an error, except the ".local" one of a
 *         version complete in the node-local stores whose drain failed
 *         (see "Restart from the node-local tier's copies"). A failed removal of an old
 *         version is not an error (rank 0 says it on stderr; the next
 *         completion tries again). FWDIO_ENOTCLOSED (this rank has not
 *         closed the file), FWDIO_EINVAL (NULL), FWDIO_ECONTEXT (from a
 *         callback): this rank only, at once.
 */
FWDIO_API int fwdio_ckpt_wait(fwdio_ckpt_t *ck);

/**
 * Check without blocking whether the version is complete, and take its
 * completion one step further when it can: the same steps as
 * fwdio_ckpt_wait (the data file complete, the ranks' checksum terms
 * combined, with the node-local tier the ".local" manifest, the data
 * drained, the manifest written and drained, the outcome agreed, `keep`
 * applied by rank 0), each reduction a nonblocking MPI collective on a
 * communicator of the version's own, so no call waits for another rank.
 * The ranks see the version complete at different calls, with the same
 * status. Runs queued callbacks first (fwdio_poll). Every rank calls it
 * (or fwdio_ckpt_wait, which goes on from where the tests left it) until
 * the version is done: a rank that stops short, or frees the version
 * before it is done, leaves the others' tests at done = 0 for ever (their
 * reductions wait for its part). Versions may complete in any order, and
 * other ckpt calls (fwdio_ckpt_open of the next version, ...) may come in
 * between. From an application thread (a callback in the poll mode
 * included); rank 0's step applying `keep` lists and removes files there.
 * @param done  set to 1 when the version is complete or failed, else 0.
 * @return when *done is 1, what fwdio_ckpt_wait returns (the same on every
 *         rank; again on every later call); else FWDIO_OK; at once, this
 *         rank only: FWDIO_ENOTCLOSED (fwdio_ckpt_close not called or
 *         failed on this rank), FWDIO_EINVAL (NULL), FWDIO_ECONTEXT (on the
 *         progress thread).
 */
FWDIO_API int fwdio_ckpt_test(fwdio_ckpt_t *ck, int *done);

/** Release a checkpoint version and its file (fwdio_file_free); before it
 *  is done (fwdio_ckpt_wait, or fwdio_ckpt_test's done), the version stays
 *  incomplete, and every rank must then free it without completing it (see
 *  fwdio_ckpt_test). Where this rank's fwdio_ckpt_test posted a reduction,
 *  the free waits for the other ranks' parts of it. */
FWDIO_API void fwdio_ckpt_free(fwdio_ckpt_t *ck);

/**
 * The newest intact version of set `name` (collective, blocking): rank 0
 * lists the manifests in dir, newest version first, skips those that do not
 * parse, whose data file is missing or of another size, and every rank
 * verifies the first candidate left (fwdio_ckpt_verify: reads it once);
 * a damaged one is skipped (rank 0 says why on stderr) and the next older is
 * tried. The answer is the same on every rank.
 * @return FWDIO_OK with *version set; FWDIO_ENOCKPT when no version is
 *         complete and intact (also when dir cannot be read); FWDIO_EINVAL
 *         (NULL arguments, a bad name, ranks passing different names or
 *         dir); FWDIO_EMPI.
 */
FWDIO_API int fwdio_ckpt_latest(fwdio_runtime_t *rt, const char *name,
                                const fwdio_ckpt_options_t *opts, uint64_t *version);

/**
 * fwdio_ckpt_latest bounded by a version: the newest intact version of set
 * `name` that is at most `max_version` (a restart whose other outputs, a
 * trajectory, reach only that far). Versions above the bound are passed
 * over without reading them or saying anything; only the candidates at or
 * below it are verified, newest first, until one is intact (each costs a
 * read of its data file; with `keep` there are at most keep of them, plus
 * older versions whose removal failed). UINT64_MAX: fwdio_ckpt_latest.
 * Every rank passes the same bound (FWDIO_EINVAL on every rank otherwise).
 * @return as fwdio_ckpt_latest; FWDIO_ENOCKPT when no complete, intact
 *         version is at or below the bound.
 */
FWDIO_API int fwdio_ckpt_latest_upto(fwdio_runtime_t *rt, const char *name,
                                     const fwdio_ckpt_options_t *opts, uint64_t max_version,
                                     uint64_t *version);

/**
 * Check version `version` of set `name` against its manifest (collective,
 * blocking): its manifest parses and matches, its data file has the size,
 * and the CRC-32 of its bytes, read once through fwdio_open_read (each rank
 * a share, in pieces of up to 8 MiB), is the manifest's.
 * @return the same on every rank: FWDIO_OK; FWDIO_ENOCKPT (no manifest, or
 *         a bad one, or no data file of its size); FWDIO_ECHECKSUM (the
 *         bytes differ); the read's agreed error (FWDIO_EOPEN, FWDIO_EREAD);
 *         FWDIO_EINVAL; FWDIO_EMPI.
 */
FWDIO_API int fwdio_ckpt_verify(fwdio_runtime_t *rt, const char *name, uint64_t version,
                                const fwdio_ckpt_options_t *opts);

/**
 * fwdio_open_read of version `version` of set `name` (collective,
 * nonblocking as fwdio_open_read), with opts->file and `cbs`, once rank 0
 * found its manifest (a small agreement first: blocking). It does not
 * verify the bytes again: a version from fwdio_ckpt_latest is verified;
 * call fwdio_ckpt_verify for another.
 * @return FWDIO_OK with *file set (free it with fwdio_file_free);
 *         FWDIO_ENOCKPT (no complete version of that number) on every rank;
 *         what fwdio_open_read returns; FWDIO_EINVAL; FWDIO_EMPI.
 */
FWDIO_API int fwdio_ckpt_open_read(fwdio_runtime_t *rt, const char *name, uint64_t version,
                                   const fwdio_ckpt_options_t *opts, const fwdio_callbacks_t *cbs,
                                   fwdio_file_t **file);

/**
 * The path of a version's data file, "<dir>/<name>.v<version>.ckpt", into
 * buf (for tools and for reading it by other means). No I/O.
 * @return FWDIO_OK; FWDIO_EINVAL (a bad name, NULL buf, or cap too small).
 */
FWDIO_API int fwdio_ckpt_path(const char *name, uint64_t version, const fwdio_ckpt_options_t *opts,
                              char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* FWDIO_H */
