/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counting MPI calls through the profiling interface: a shared library that
 * stands in for the nonblocking point-to-point calls and the collectives
 * fwdio makes, counts them per rank (calls and the bytes of their buffers)
 * and passes them on to PMPI_*. Linked into a test program (the test reads
 * the counters between phases) or LD_PRELOADed into any MPI program; with
 * FWDIO_MPI_COUNTS=<prefix> set, MPI_Finalize writes this rank's totals to
 * <prefix>.<rank> as `name calls bytes` lines, plus the peak resident set.
 * Thread-safe (atomics): fwdio calls MPI from its progress thread.
 */
#ifndef FWDIO_MPI_COUNTS_H
#define FWDIO_MPI_COUNTS_H

#include <stdint.h>

#define MPI_COUNTS_LIST(X)                                                              \
    X(ISEND) X(ISSEND) X(IRECV) X(IMPROBE) X(IMPROBE_MATCHED) X(IMRECV)                   \
    X(IALLREDUCE) X(IEXSCAN) X(IBARRIER) X(IBCAST) X(IALLGATHER) X(IREDUCE_SCATTER)       \
    X(COMM_IDUP) X(COMM_DUP) X(COMM_FREE) X(ALLREDUCE) X(ALLGATHER) X(BCAST) X(BARRIER)   \
    X(COMM_SPLIT_TYPE)

enum {
#define MPI_COUNTS_ENUM(n) MPI_COUNTS_##n,
    MPI_COUNTS_LIST(MPI_COUNTS_ENUM)
#undef MPI_COUNTS_ENUM
    MPI_COUNTS_N
};

typedef struct mpi_counts {
    uint64_t calls[MPI_COUNTS_N];
    uint64_t bytes[MPI_COUNTS_N]; /* count x type size of the (send) buffer */
} mpi_counts_t;

/** This rank's counters so far. */
__attribute__((visibility("default"))) void mpi_counts_get(mpi_counts_t *out);

/** `b - a`, into out. */
__attribute__((visibility("default"))) void mpi_counts_diff(const mpi_counts_t *a,
                                                            const mpi_counts_t *b,
                                                            mpi_counts_t *out);

/** The name of counter i ("ISSEND", ...). */
__attribute__((visibility("default"))) const char *mpi_counts_name(int i);

#endif
