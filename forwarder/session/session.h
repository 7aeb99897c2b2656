/* SPDX-License-Identifier: BSD-3-Clause */
/* A file's session (session.c): its phases and agreements, run on the
 * progress thread. The roles below it report to it through outcome.h (the
 * table fwdioi_session_ops), never by name. */
#ifndef FWDIOI_SESSION_H
#define FWDIOI_SESSION_H

#include "agreement/outcome.h"
#include "state.h"

/** What the session does with the roles' reports: the table the runtime
 *  holds (struct fwdio_runtime's session_ops, set by fwdio_init). */
extern const fwdioi_session_ops_t fwdioi_session_ops;

/** Set up the session of a new file (fwdio_open). */
void fwdioi_session_init(fwdio_file_t *f);
/** Free what the session holds (at its end) (progress thread). */
void fwdioi_session_free(fwdio_file_t *f);
/** The runtime's client poll hook, run on every tick of its loop (runtime.h)
 *  (progress thread). */
int fwdioi_session_poll(void *runtime, int *active);

#endif
