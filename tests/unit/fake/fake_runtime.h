/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fake of the runtime seam (runtime/runtime.h) for unit tests of the
 * forwarder's roles, and of the few point-to-point MPI calls a writer or a
 * reader or a requester makes (MPI_Improbe, MPI_Get_count, MPI_Imrecv, MPI_Mrecv, MPI_Irecv,
 * MPI_Isend), so that a role runs in the
 * test's own thread, in milliseconds, without mpiexec. The test program
 * links MPI for its types and constants but never initializes it.
 *
 * - The calling thread is the progress thread, and holds the runtime lock
 *   (the checks of runtime.h pass; they are compiled in): taking the lock
 *   does nothing, and a sleep under it (which nothing could end) aborts.
 * - Tasks run inline when submitted; so do callbacks delivered.
 * - Tracked requests wait until the test completes them
 *   (fake_rt_complete_requests).
 * - I/O jobs wait in a FIFO instead of going to the I/O thread: the test
 *   takes the oldest (fake_rt_io_take), looks at what it would do, sets its
 *   result, and runs its second half (fake_rt_io_done).
 * - Message buffers are malloc'd; the configuration is the test's.
 * - fake_node.c beside it: a rank without the node-shared area; fake_comm.c:
 *   the communicator calls of a file's session (its duplication and
 *   agreements), for the session's test.
 * - Data messages "on the wire" are queued by the test (fake_mpi_arrive);
 *   MPI_Improbe matches the oldest (of its tag, fake_mpi_arrive_tag),
 *   MPI_Imrecv/MPI_Mrecv copy it into the role's buffer (MPI_Imrecv's request
 *   completes with fake_rt_complete_requests). MPI_Irecv takes the oldest
 *   message of its source and tag at the call (one must be there: a
 *   requester receives only bytes a header announced), and its request's
 *   status gives its source and count (MPI_ERR_TRUNCATE if it was longer).
 *   MPI_Isend copies what the role sends into a queue the test takes
 *   (fake_mpi_sent_take).
 */
#ifndef FWDIO_FAKE_RUNTIME_H
#define FWDIO_FAKE_RUNTIME_H

#include "runtime.h"

#include <stddef.h>
#include <stdint.h>

/** A fake runtime of rank `rank` among `size` with configuration `cfg`
 *  (copied); one at a time. */
fwdioi_engine_t *fake_rt_create(int rank, int size, const fwdio_config_t *cfg);
void fake_rt_destroy(fwdioi_engine_t *rt);

/** I/O jobs submitted and not yet taken. */
size_t fake_rt_io_queued(void);
/** The oldest submitted I/O job, taken off the queue, or NULL. */
fwdioi_io_job_t *fake_rt_io_take(void);
/** Run the second half (`done`) of a taken job, as the progress thread
 *  would once the I/O thread is done with it. */
void fake_rt_io_done(fwdioi_io_job_t *job);

/** Tracked requests not yet completed. */
size_t fake_rt_requests(void);
/** Tracked requests not yet completed whose callback argument is `arg`. */
size_t fake_rt_requests_of(const void *arg);
/** Complete every tracked request (in order, including those their
 *  callbacks track) with MPI_ERROR `error`; returns how many completed. */
size_t fake_rt_complete_requests(int error);
/** Complete the oldest tracked request only (those its callback tracks
 *  wait); 0 when none was tracked. */
int fake_rt_complete_oldest(int error);
/** Complete the newest tracked request only; 0 when none was tracked. */
int fake_rt_complete_newest(int error);
/** Make fwdioi_rt_track_reserve fail `n` times (no memory to track). */
void fake_rt_fail_track_reserve(int n);
/** Make the next `n` fwdioi_rt_buf_get calls fail (out of memory). */
void fake_rt_fail_buf_get(int n);
/** Message buffers handed out and not given back. */
long fake_rt_bufs_out(void);

/** A data message of `len` bytes from rank `source` arrives (copied). */
void fake_mpi_arrive(int source, const void *bytes, size_t len);
/** The same, with MPI tag `tag`: MPI_Improbe and MPI_Irecv match it by tag
 *  and source (one queued by fake_mpi_arrive matches any tag). */
void fake_mpi_arrive_tag(int source, int tag, const void *bytes, size_t len);
/** Messages that arrived and were not matched yet. */
size_t fake_mpi_unmatched(void);

/** Messages this rank sent (MPI_Isend, bytes copied at the call; its request
 *  completes with fake_rt_complete_requests) and not taken yet. */
size_t fake_mpi_sent(void);
/** Take the oldest sent message: its destination, tag and length, and its
 *  bytes into buf (at most cap). 0 when none is left. */
int fake_mpi_sent_take(int *dest, int *tag, void *buf, size_t cap, size_t *len);

#endif
