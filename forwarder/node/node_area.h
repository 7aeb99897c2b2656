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
 * nothing behind in /dev/shm. Memory is reserved up front (posix_fallocate),
 * so a full /dev/shm is found at init and never as a SIGBUS later.
 */
#ifndef FWDIOI_NODE_AREA_H
#define FWDIOI_NODE_AREA_H

#include "node/area_heap.h"

#include <mpi.h>
#include <stdint.h>

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
    fwdioi_heap_t heap;  /* of this rank's own segment */
    int bell_fd;         /* this rank's doorbell (nonblocking datagram socket) */
    void *bell_addr;     /* [nlocal] struct sockaddr_un of every doorbell */
    char why_off[160];   /* why the area is off, for the log and fwdio-plan */
} fwdioi_area_t;

/**
 * Collective over `comm`: set up the area with a heap of `heap_size` bytes per
 * rank (0: no area, everything over MPI). FWDIO_OK whether or not the area
 * could be made (a->enabled says; a->why_off says why not), FWDIO_EMPI when
 * an MPI call failed.
 */
int fwdioi_area_setup(fwdioi_area_t *a, MPI_Comm comm, uint64_t heap_size);
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
 *  when the range is not inside that heap. */
const uint8_t *fwdioi_area_peer_bytes(const fwdioi_area_t *a, int local, uint64_t off,
                                      uint64_t len);
/** Offset within this rank's segment of p (inside its heap), or UINT64_MAX. */
uint64_t fwdioi_area_own_offset(const fwdioi_area_t *a, const void *p, uint64_t len);

#endif
