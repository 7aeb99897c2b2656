/* SPDX-License-Identifier: BSD-3-Clause */
/* A file's lifetime (file_life.c): its names, what it agrees on, and its
 * release. */
#ifndef FWDIOI_FILE_LIFE_H
#define FWDIOI_FILE_LIFE_H

#include "state.h"

/** "dir/name" -> "dir/.name.fwdio-tmp" (malloc'd), the atomic_replace temporary. */
char *fwdioi_temporary_path(const char *path);
/** The path with its directory resolved (malloc'd): one file per path at a time. */
char *fwdioi_path_key(const char *path);
/** Fill f->check_fields from the file's path, size, options and plan. */
void fwdioi_file_fill_check(fwdio_file_t *f);
/** Take a file off the runtime's list (runtime lock held). */
void fwdioi_file_unlink_locked(fwdio_file_t *f);
/** Free a file (any thread, once nothing else can reach it); one whose
 *  agreements were given up is kept for MPI instead (file_life.c). */
void fwdioi_file_release(fwdio_file_t *f);

#endif
