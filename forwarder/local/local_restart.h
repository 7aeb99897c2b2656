/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Restart from the nearest copy (node-local tier): fwdio_open_read of a
 * path with local_dir set reads the newest complete version from the local
 * stores when every reader can reach it, else from the target.
 *
 * Reachable: a reader looks only in its own host's local store (local_dir
 * with "%h" its host name), as on a cluster where another node's SSD is out
 * of reach. There it finds the local files of the path (local_name.h), each
 * with an intact index (local_index.h) and a version record that the target
 * does not contradict (local_version.h). It takes the newest version whose
 * files there hold every unit it reads (units of its read plan, each inside
 * one run of one local file; any rank count, any writer count the version
 * was written with, as long as its units fall inside the writers' stripes:
 * the same stripe_size, or one that the written one is a multiple of).
 * Then every rank agrees (one MPI_Iallreduce on the file's communicator,
 * before the open's own agreement): the local copies are read only if
 * every reader chose the same version; otherwise (a reader that cannot
 * reach its part, a copy missing, truncated or older than the target)
 * every reader reads the target, as without the tier.
 */
#ifndef FWDIOI_LOCAL_RESTART_H
#define FWDIOI_LOCAL_RESTART_H

#include "local/local_version.h"
#include "state.h"

struct fwdioi_restart; /* local_restart.c */

/**
 * The session is about to open a read file (after its check): with the
 * tier, look in this host's local store (a reader) and agree on the copy to
 * read, then then(f); returns 1. 0 for a file without the tier: the caller
 * goes on at once (progress thread).
 */
int fwdioi_local_restart_look(fwdio_file_t *f, void (*then)(fwdio_file_t *f));
/**
 * The reader's open: when the local copies were chosen, nothing to open
 * (they are open): report the version's size for the open's agreement and
 * return 1; 0: open the target (progress thread).
 */
int fwdioi_local_restart_open(fwdio_file_t *f);
/** The descriptor to pread the unit [base, base + len) from: a local
 *  file's when the local copies were chosen, else `target_fd` (progress
 *  thread). */
int fwdioi_local_restart_fd(const fwdio_file_t *f, uint64_t base, uint64_t len, int target_fd);
/** Close what the restart holds (the file's release; any thread, nothing
 *  of it in flight). */
void fwdioi_local_restart_free(struct fwdioi_restart *r);
#endif
