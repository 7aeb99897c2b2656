/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A set's directory: listing its versions, reading a manifest, removing a
 * version. Plain POSIX calls, made on one rank (rank 0 of the runtime's
 * communicator), whose answer the callers send to the others.
 */
#ifndef FWDIOI_CKPT_DIR_H
#define FWDIOI_CKPT_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt_manifest.h"
#include "ckpt_name.h"

/** The versions of set `name` in `dir` that have a `kind` file, into a
 *  malloc'd array (*versions; free it), unsorted. 0, or -errno (the
 *  directory cannot be read, or out of memory). */
int fwdioi_ckpt_list(const char *dir, const char *name, fwdioi_ckpt_kind_t kind,
                     uint64_t **versions, size_t *n);

/** Read and parse the manifest of (name, version) in dir, and check that it
 *  names that set and version and that the data file has its size. NULL
 *  when it does, else why not (a static text). */
const char *fwdioi_ckpt_manifest_load(const char *dir, const char *name, uint64_t version,
                                      fwdioi_ckpt_manifest_t *m);
/** The same for the manifest of `kind` (FWDIOI_CKPT_MANIFEST, or
 *  FWDIOI_CKPT_LOCAL: a version complete in the node-local stores, whose
 *  data file at dir need not exist: the restart reads the local copies, and
 *  its checksum says whether it got the version). */
const char *fwdioi_ckpt_manifest_load_kind(const char *dir, const char *name, uint64_t version,
                                           fwdioi_ckpt_kind_t kind, fwdioi_ckpt_manifest_t *m);

/** Remove version `version` of `name`: its manifests first (it stops looking
 *  complete), then its data file. 0, or -errno of the first failure
 *  (a missing file is no failure). */
int fwdioi_ckpt_remove(const char *dir, const char *name, uint64_t version);

#endif
