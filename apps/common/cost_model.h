/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cost model of one file and one stream step (docs/scaling.md): for P
 * ranks, W writers, N nodes, the file size and the stripe, how many data
 * messages each rank sends and each writer receives (over MPI, through the
 * node-shared area, or to its own writer), the collective rounds of the file
 * and of a step with the bytes of their buffers, and the memory fwdio holds
 * per rank and per writer.
 *
 * A pure function, no MPI: fwdio-plan --model prints it, and the MPI test
 * test_scaling_counts compares it with the calls a PMPI shim counted
 * (tests/util/mpi_counts.c), so the model and the check share one source.
 *
 * The workload it describes is the simplest collective write: rank r writes
 * its block [r * B, r * B + B) of the file, B = size / P (the last rank also
 * the rest), in one fwdio_write; a stream step does the same at the step's
 * base. Writers are placed by stride from rank 0 (writer w is rank
 * w * max(1, P / W)); rank r is on node r / ceil(P / N), as a block-mapped
 * job places them.
 *
 * The protocol's constants mirror the library's (FWDIOI_OPEN_FIELDS,
 * FWDIOI_ERRINFO_PAIRS, FWDIOI_CLOSE_EXTRA, the wire header and piece); the
 * test checks them against the library's own headers.
 */
#ifndef FWDIO_COST_MODEL_H
#define FWDIO_COST_MODEL_H

#include <stdint.h>

/* forwarder/agreement/agree.h: an error report is 10 MPI_LONG_INT pairs (reduced
 * with MPI_MINLOC), of 12 bytes each as MPI counts them (a long and an int) */
#define COST_ERRINFO_PAIRS 10
#define COST_PAIR_BYTES 12
/* forwarder/agreement/open_check.h: the fields the open check compares (two
 * pairs each, after an error report) */
#define COST_OPEN_FIELDS 20
/* forwarder/state.h: sums beside the bytes per writer in the close and step counts */
#define COST_CLOSE_EXTRA 5
/* forwarder/state.h: fwdioi_wire_header_t and fwdioi_piece_t */
#define COST_WIRE_HEADER 8
#define COST_WIRE_PIECE 16
/* forwarder/plan/topology.h: writer candidates kept per node */
#define COST_TOPOLOGY_CANDIDATES 16

typedef struct cost_input {
    int ranks;              /* P */
    int writers;            /* W */
    int nodes;              /* N */
    uint64_t size;          /* bytes of the file (of one step for a stream) */
    uint64_t stripe_size;
    uint64_t write_size;
    int cyclic;             /* layout: 0 block, 1 cyclic (a stream is always cyclic) */
    int stream;             /* a stream: one step, then the close */
    int area;               /* the node-shared area is on */
    int first_file;         /* the runtime's first file: no communicator kept yet, so its
                               own and the next file's are duplicated */
    int commit;             /* a commit block or atomic_replace: one more agreement */
    uint64_t max_message;   /* max_message_size */
    uint64_t combine_size;  /* writes of at most this many bytes are combined */
    uint64_t staging;       /* staging_buffer: larger writes are routed in chunks of it */
    uint64_t writer_buffer; /* writer_buffer: a writer's assembly budget */
} cost_input_t;

/* One kind of collective call of a file or step. */
typedef struct cost_coll {
    int calls;      /* how many */
    uint64_t bytes; /* bytes of the send buffer, summed over the calls */
} cost_coll_t;

typedef struct cost_rank {
    /* as a sender */
    uint64_t mpi_msgs, mpi_bytes;   /* data messages sent with MPI_Issend, wire bytes */
    uint64_t mpi_data;              /* their data bytes */
    uint64_t area_msgs, area_data;  /* sent by reference through the node-shared area */
    uint64_t self_msgs;             /* to this rank's own writer, no MPI */
    uint64_t data_bytes;            /* the rank's own bytes */
    int writers_touched;            /* writers its block goes to */
    /* as a writer (0 when it is none) */
    int is_writer;
    uint64_t recv_mpi_msgs, recv_mpi_bytes; /* matched by MPI_Improbe, taken by MPI_Imrecv */
    uint64_t recv_area_msgs;
    uint64_t recv_msgs;             /* every message it takes in: MPI, area, its own */
    uint64_t recv_bytes;            /* data bytes the writer assembles */
    int senders;                    /* ranks that send to it, itself included */
    /* control point-to-point: 0 on the path without failures (aborts: P - 1) */
    uint64_t ctl_msgs;
    /* collectives of the file (and of its one step) */
    cost_coll_t idup, iallreduce, iexscan;
    /* memory: bytes fwdio keeps for the file on this rank */
    uint64_t mem_file;      /* every rank: O(W) arrays */
    uint64_t mem_writer;    /* a writer on top: its map of the ranks that sent (O(senders)) */
    uint64_t mem_runtime;   /* per rank, per runtime: the topology (O(N), bound ranks) */
    uint64_t mem_open_temp; /* placing, freed before fwdio_open returns: O(N), on the
                               runtime's first file only (later ones reuse it) */
} cost_rank_t;

/** The model's numbers for rank `r` (0 <= r < P) of the file `in` describes. */
void cost_model_rank(const cost_input_t *in, int r, cost_rank_t *out);

/** Fill the fwdio defaults (stripe 16 MiB, write unit 4 MiB, max message
 *  8 MiB, combine 256 KiB, writer buffer 64 MiB, staging 512 MiB shared by
 *  the ranks of a node, between 1 and 64 MiB each) into the zero fields of
 *  `in`. */
void cost_model_defaults(cost_input_t *in);

/** Writer index of rank r under the stride placement, or -1. */
int cost_model_writer_of(const cost_input_t *in, int r);

#endif
