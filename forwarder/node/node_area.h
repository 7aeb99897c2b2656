/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-shared area: every rank of a node owns one POSIX shared-memory
 * segment that every other rank of the node maps too. A segment holds a ring
 * of small entries for each other rank of the node (entries *to* the owner)
 * and a heap (area_heap.h) that the owner cuts messages and fwdio_alloc
 * buffers from. A rank tells a peer something by pushing an entry onto the
 * ring for it in the peer's segment and ringing the peer's doorbell: a
 * datagram to a socket the peer's progress thread sleeps on, so that local
 * traffic wakes it without any polling. What the entries mean is
 * shared_path.c's business; this file is only the mechanism.
 *
 * Set up at fwdio_init, collectively per node; where any rank of a node cannot
 * make or map its segment (no /dev/shm, no room in it, ...) the area is off on
 * that whole node and everything goes over MPI as before. The segments are
 * unlinked as soon as every rank has mapped them, so a killed job leaves
 * nothing behind in /dev/shm.
 *
 * Memory is a node's (node_buffer), committed as it is used:
 * - A segment is its header, its rings and its heap. Only the header and the
 *   rings are allocated at init (posix_fallocate): at most RING_BYTES
 *   (512 KiB) per rank whatever the number of ranks on the node (each ring
 *   holds 256 entries, fewer on a crowded node, at least 16), so a full
 *   /dev/shm is found at init, never as a SIGBUS.
 * - A heap is address space (ftruncate makes a hole, MAP_NORESERVE maps it):
 *   at most shared_buffer bytes per rank, and never more than the node's
 *   budget. Its chunks (FWDIOI_AREA_CHUNK) are committed as blocks are cut
 *   from them (area_heap.h): the bytes are first taken from the node's count
 *   of committed heap bytes, an atomic in local rank 0's segment header that
 *   never passes node_buffer, then allocated with posix_fallocate. Either
 *   refusal is "no room", as a full heap: the message goes over MPI, a
 *   fwdio_alloc buffer is ordinary memory. Backpressure, never a crash.
 * - Chunks no block touches are given back (fallocate PUNCH_HOLE, and the
 *   count lowered) beyond the rank's share of the budget (node_buffer / ranks
 *   of the node) at once, and all of them once the rank's heap has been empty
 *   for node_buffer_idle seconds (fwdioi_area_idle; default 30), also when no
 *   file is active: then the progress thread ticks slowly until they are back
 *   (at most FWDIOI_SLOW_TICK_US later), so that files written one after the
 *   other (a frame, a checkpoint) reuse the chunks instead of committing them
 *   again inside fwdio_write for each file.
 * So the node's heaps together never hold more than node_buffer, whichever
 * ranks write, and a rank that writes alone may use the whole budget (up to
 * its shared_buffer). One heap per rank, not one for the node: each heap's
 * allocator stays private to its owner (nothing a peer writes decides what is
 * free) and needs no lock across processes; only the count is shared.
 */
#ifndef FWDIOI_NODE_AREA_H
#define FWDIOI_NODE_AREA_H

#include "node/area_heap.h"

#include <mpi.h>
#include <stdint.h>

/* The heap's commit granularity. A commit, its page faults and a punch cost
 * about ten copies of the bytes whatever the chunk (docs/results/
 * node-memory.md), so the size only decides the waste: a message of 1 MiB and
 * its header take 1.25 MiB of 256 KiB chunks, 2 MiB of 1 MiB ones. */
#define FWDIOI_AREA_CHUNK ((uint64_t)256 << 10)

/* What an entry says (shared_path.c): a message by reference, a message given
 * back, or a message coming over MPI after all (so its writer probes). */
enum { FWDIOI_AREA_DATA = 1, FWDIOI_AREA_RELEASE = 2, FWDIOI_AREA_NOTE = 3 };

/* One ring entry: 64 bytes, one cache line. */
typedef struct fwdioi_area_entry {
    uint32_t kind;    /* FWDIOI_AREA_DATA, _RELEASE or _NOTE */
    uint32_t writer;  /* DATA, NOTE: the writer index the message is for */
    uint64_t seq;     /* DATA, NOTE: the file's sequence number */
    uint64_t token;   /* the message's block (offset in the sender's segment) */
    uint64_t wire_off, wire_len; /* DATA: the wire, in the sender's segment */
    uint64_t data_off; /* DATA, lent: offset of file byte data_file_offset; else ~0 */
    uint64_t data_file_offset;
    uint64_t payload; /* DATA: data bytes, as the sender counted them */
} fwdioi_area_entry_t;

typedef struct fwdioi_area {
    int enabled;       /* segments mapped on every rank of this node */
    MPI_Comm node;     /* the ranks of this node (MPI_COMM_TYPE_SHARED) */
    int nlocal, local; /* their number, and this rank's index among them */
    int *rank_of_local;  /* [nlocal]: rank in the runtime's communicator */
    int *local_of_rank;  /* [size of the runtime's communicator]: index, or -1 */
    uint8_t **seg;       /* [nlocal]: every segment of the node, mapped */
    uint64_t seg_size, heap_off, heap_size, ring_cap;
    uint64_t marks_off;  /* the marks of the heap's committed chunks, one bit each */
    uint64_t node_budget; /* heap bytes the node's ranks may commit together */
    fwdioi_heap_t heap;  /* of this rank's own segment */
    int own_fd;          /* this rank's segment, for fallocate */
    int bell_fd;         /* this rank's doorbell (nonblocking datagram socket) */
    int told_no_room;    /* under the heap's lock: "no room" was logged */
    uint64_t empty_since_ns; /* progress thread: when the heap was last seen busy */
    uint64_t idle_ns;    /* a heap empty this long gives its idle chunks back
                          * (UINT64_MAX: never; node_buffer_idle) */
    void *bell_addr;     /* [nlocal] struct sockaddr_un of every doorbell */
    char why_off[160];   /* why the area is off, for the log and fwdio-plan */
    /* the node-local tier's bytes of this rank while the area is off
     * (fwdioi_area_local_take) */
    _Atomic uint64_t local_alone;
    _Atomic uint64_t local_alone_pending; /* of it: files not drained yet */
} fwdioi_area_t;

/**
 * Collective over `comm`: set up the area with a heap of at most `heap_size`
 * bytes per rank, the ranks of a node committing at most `node_budget` bytes
 * together (either 0: no area, everything over MPI; a budget under one chunk
 * is raised to one chunk), this rank's heap giving its idle chunks back once
 * empty for `idle_s` seconds (FWDIO_NODE_BUFFER_IDLE_KEEP: never). FWDIO_OK whether or not the area could be made
 * (a->enabled says; a->why_off says why not), FWDIO_EMPI when an MPI call
 * failed.
 */
int fwdioi_area_setup(fwdioi_area_t *a, MPI_Comm comm, uint64_t heap_size, uint64_t node_budget,
                      unsigned idle_s);
/** Unmap and close everything (after the last use on every rank of the node). */
void fwdioi_area_teardown(fwdioi_area_t *a);

/** Index among this node's ranks of `rank`, or -1 (another node, or no area). */
int fwdioi_area_local_index(const fwdioi_area_t *a, int rank);

/** Push `e` onto the ring for this rank in the segment of local rank `to`, and
 *  ring its doorbell. 0, or -1 when that ring is full (progress thread). */
int fwdioi_area_push(fwdioi_area_t *a, int to, const fwdioi_area_entry_t *e);
/** Take the oldest entry local rank `from` pushed to this rank: 1, or 0 if
 *  none (progress thread). */
int fwdioi_area_pop(fwdioi_area_t *a, int from, fwdioi_area_entry_t *e);
/** Read every pending doorbell, before looking at the rings, so that no entry
 *  pushed after the look goes unnoticed (progress thread). */
void fwdioi_area_drain_bell(fwdioi_area_t *a);

/** Bytes [off, off + len) of the heap of local rank `local`'s segment, or NULL
 *  when the range is not inside that heap or not all in chunks its owner has
 *  committed (a peer's entry is never trusted: reading a chunk given back
 *  would commit /dev/shm behind the node budget's back, or raise SIGBUS when
 *  /dev/shm is full). */
/** Mark the chunks holding bytes [off, off + len) of this rank's heap as
 *  committed (1: after they became memory) or not (0: before they are given
 *  back), for peers to read (the heap's backing calls it). */
void fwdioi_area_mark_chunks(fwdioi_area_t *a, uint64_t off, uint64_t len, int committed);
/** Whether [p, p + len) lies in chunks of local rank `local`'s heap that its
 *  owner has committed (p inside its segment; len 0: the chunk holding p). */
int fwdioi_area_peer_committed(const fwdioi_area_t *a, int local, const uint8_t *p,
                               uint64_t len);
const uint8_t *fwdioi_area_peer_bytes(const fwdioi_area_t *a, int local, uint64_t off,
                                      uint64_t len);
/** Give this rank's idle chunks back when its heap has been empty for
 *  node_buffer_idle seconds (progress thread). Returns 1 while idle chunks are
 *  still committed (a later call will give them back), else 0. */
int fwdioi_area_idle(fwdioi_area_t *a);
/** Heap bytes committed on the node now and at most (0 without the area; any
 *  thread). */
void fwdioi_area_node_memory(const fwdioi_area_t *a, uint64_t *committed, uint64_t *peak);

/**
 * The node-local tier's count of the bytes its files hold in the node's
 * local store (local_capacity), kept like the heap's commitment: an atomic
 * in local rank 0's segment header that a compare-and-swap never lets pass
 * `capacity`. Take `len` bytes: 0, or -1 when they do not fit. Without the
 * area (off on this node) the rank counts alone against `share` (its part
 * of the capacity). Any thread.
 */
int fwdioi_area_local_take(fwdioi_area_t *a, uint64_t capacity, uint64_t share,
                           uint64_t len);
/** Give back `len` bytes taken with fwdioi_area_local_take. Any thread. */
void fwdioi_area_local_give(fwdioi_area_t *a, uint64_t len);
/** The tier's bytes on the node now and at most (peak 0 without the area). */
void fwdioi_area_local_usage(fwdioi_area_t *a, uint64_t *used, uint64_t *peak);

/**
 * The part of the tier's count held by files not drained yet (being written
 * or draining; node-wide, or this rank's without the area): a writer adds
 * its file's bytes when it takes them and takes them off when its drain is
 * over or they are given back. A writer waiting for room (local_capacity)
 * learns from it whether drains may still free some. Any thread.
 */
void fwdioi_area_local_pending(fwdioi_area_t *a, uint64_t add, uint64_t sub);
/** The count's bytes of files not drained yet, now. Any thread. */
uint64_t fwdioi_area_local_pending_now(fwdioi_area_t *a);

/*
 * Node-wide eviction of the tier's drained local copies (local_keep.h): each
 * rank publishes in its own segment the bytes its kept copies hold and the
 * oldest one's version, and what its waiting writer lacks; a rank whose
 * copy is the node's oldest evicts it while some rank lacks room. Without
 * the area (off on the node) these do nothing and read as none: each rank
 * evicts only its own copies for its own files. Any thread.
 */
/** Publish this rank's kept copies: their bytes, the oldest's version, and
 *  the bytes of its copies being evicted (no longer listed, still counted
 *  until their files are removed). */
void fwdioi_area_kept_publish(fwdioi_area_t *a, uint64_t bytes, uint64_t oldest,
                              uint64_t evicting);
/** The bytes of the node's drained copies, kept or being evicted (all of
 *  them room that is coming or can be made); *evicting (if not NULL) the
 *  part being evicted. */
uint64_t fwdioi_area_kept_node(const fwdioi_area_t *a, uint64_t *evicting);
/** The local index of the rank holding the node's oldest kept copy (ties:
 *  the lowest index), or -1 when none; *oldest its version, *next the
 *  oldest version any other rank holds (UINT64_MAX: none). */
int fwdioi_area_kept_oldest(const fwdioi_area_t *a, uint64_t *oldest, uint64_t *next);
/** Publish what this rank's waiting writer lacks (0: none waits). */
void fwdioi_area_room_short_set(fwdioi_area_t *a, uint64_t bytes);
/** What this rank has published as lacking, less what others covered. */
uint64_t fwdioi_area_room_short_mine(const fwdioi_area_t *a);
/** What the node's waiting writers lack, summed. */
uint64_t fwdioi_area_room_short_node(const fwdioi_area_t *a);
/** `freed` bytes went back to the count: take them off the ranks' published
 *  shortfalls (lowest index first) and ring those ranks, so that their
 *  writers try again now and no second copy is evicted for room already
 *  made. */
void fwdioi_area_room_short_cover(fwdioi_area_t *a, uint64_t freed);
/** Ring the doorbell of local rank `local`: its progress thread wakes. */
void fwdioi_area_ring(fwdioi_area_t *a, int local);

/** Offset within this rank's segment of p (inside its heap), or UINT64_MAX. */
uint64_t fwdioi_area_own_offset(const fwdioi_area_t *a, const void *p, uint64_t len);

#endif
