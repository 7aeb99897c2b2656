/* SPDX-License-Identifier: BSD-3-Clause */
/* A file's agreements (agreements.c): nonblocking collectives on the file's
 * communicator, tracked by the runtime; one that fails aborts the file
 * (outcome.h). Below the roles: the session and a stream's steps use them. */
#ifndef FWDIOI_AGREEMENTS_H
#define FWDIOI_AGREEMENTS_H

#include "state.h"

/** Start one of the file's agreements: `count` elements of `type` of `in`
 *  reduced with `op` into `out` on the file's communicator; `done` runs on
 *  completion (progress thread). 0, or -1 when it could not start (the file
 *  is aborted). */
int fwdioi_session_agree(fwdio_file_t *f, int call, const void *in, void *out, int count,
                         MPI_Datatype type, MPI_Op op, fwdioi_req_cb_t done);
/** Start one of the file's status agreements (one at a time): every rank's
 *  `*in` reduced (agree.h: the lowest rank's error, MPI_MINLOC over pairs)
 *  into `*out`, set before `done` runs (progress thread). 0, or -1 (aborted). */
int fwdioi_session_agree_status(fwdio_file_t *f, int call, const fwdioi_errinfo_t *in,
                                fwdioi_errinfo_t *out, fwdioi_req_cb_t done);
/** Start the exclusive scan of this rank's appended bytes (*mine into
 *  *prefix; undefined on rank 0) (progress thread). 0, or -1 (aborted). */
int fwdioi_session_scan_appends(fwdio_file_t *f, const uint64_t *mine, uint64_t *prefix,
                                fwdioi_req_cb_t done);
/** An agreement completed: whether it succeeded, else the file is aborted
 *  (progress thread). */
int fwdioi_session_agreement_ok(fwdio_file_t *f, int call, const MPI_Status *st);

#endif
