/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fake of the MPI calls a file's session makes on communicators
 * (fake_comm.c), beside the fake runtime seam (fake_runtime.h), so that the
 * session's phases run in the test's thread without MPI_Init: its
 * communicator's choice (an MPI_Iallreduce of the pool's slots, kept apart
 * from the agreements as FAKE_COMM_PICK) and duplication (MPI_Comm_idup),
 * error handler and free, its
 * agreements (MPI_Iallreduce, MPI_Iexscan), and the error class and text of
 * a failed call (MPI_Error_class, MPI_Error_string refuse before MPI_Init).
 * These definitions take the place of the MPI library's in the test program.
 *
 * - A collective started is recorded (fake_comm_take) with its buffers; the
 *   test writes what the other ranks' contributions make of it into `out`,
 *   as MPI would, then completes its request (fake_rt_complete_requests).
 * - A duplicate is MPI_COMM_SELF (the fake wire ignores communicators);
 *   duplicates made and freed are counted.
 * - fake_comm_fail(call, rc) makes the next call of that kind return rc.
 */
#ifndef FWDIO_FAKE_COMM_H
#define FWDIO_FAKE_COMM_H

#include <mpi.h>

#include <stddef.h>

typedef enum fake_comm_call {
    FAKE_COMM_IDUP,
    FAKE_COMM_PICK, /* MPI_Iallreduce of one uint64 with MPI_BAND: the
                     * choice of a kept communicator (comm_pool.h) */
    FAKE_COMM_ALLREDUCE,
    FAKE_COMM_EXSCAN,
    FAKE_COMM_SET_ERRHANDLER,
    FAKE_COMM_NCALLS
} fake_comm_call_t;

/** A collective started and not taken yet. */
typedef struct fake_coll {
    fake_comm_call_t call;
    const void *in;
    void *out;
    int count;
    MPI_Datatype type;
    MPI_Op op;
} fake_coll_t;

/** Collectives (duplications and reductions) started and not taken. */
size_t fake_comm_started(void);
/** Take the oldest collective started; 0 when none is left. */
int fake_comm_take(fake_coll_t *out);
/** Calls of kind `call` started (returned MPI_SUCCESS) since the reset. */
int fake_comm_count(fake_comm_call_t call);
/** Make the next call of kind `call` return `rc` (not MPI_SUCCESS). */
void fake_comm_fail(fake_comm_call_t call, int rc);
/** Duplicates handed out (MPI_Comm_idup started) and freed (MPI_Comm_free). */
int fake_comm_dups(void);
int fake_comm_frees(void);
/** Forget everything recorded (between tests). */
void fake_comm_reset(void);

#endif
