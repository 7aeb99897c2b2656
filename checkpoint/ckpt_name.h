/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoint sets: how a name and a version map to paths, and back. Pure
 * functions, no I/O (tests/unit/checkpoint/test_ckpt_name).
 *
 *   <dir>/<name>.v<version>.ckpt      the data file (an ordinary fwdio file)
 *   <dir>/<name>.v<version>.manifest  its manifest: present = complete
 *   <dir>/<name>.v<version>.local     the same manifest while the version
 *                                     is complete in the node-local stores
 *                                     only (its drain not over, or failed):
 *                                     a restart may read it from there
 *
 * A name is 1..FWDIO_CKPT_NAME_MAX characters of [A-Za-z0-9._-], not
 * starting with '.'; a version is a decimal uint64 without leading zeros.
 * A file name parses back by its last ".v", so names may hold ".v" too.
 */
#ifndef FWDIOI_CKPT_NAME_H
#define FWDIOI_CKPT_NAME_H

#include <stddef.h>
#include <stdint.h>

/** The files of a version. */
typedef enum fwdioi_ckpt_kind {
    FWDIOI_CKPT_DATA,
    FWDIOI_CKPT_MANIFEST,
    FWDIOI_CKPT_LOCAL
} fwdioi_ckpt_kind_t;

/** NULL when `name` is a valid set name, else why not (a static text). */
const char *fwdioi_ckpt_name_check(const char *name);

/** "<dir>/<name>.v<version>.<ckpt|manifest|local>" into out (dir NULL or "": ".");
 *  0, or -1 when the name is invalid or the path does not fit in cap. */
int fwdioi_ckpt_path(char *out, size_t cap, const char *dir, const char *name, uint64_t version,
                     fwdioi_ckpt_kind_t kind);

/** The version of directory entry `entry` when it is the `kind` file of set
 *  `name`: 1 with *version set, else 0 (another set, another kind, a
 *  temporary, a malformed or non-canonical version). */
int fwdioi_ckpt_parse_entry(const char *entry, const char *name, fwdioi_ckpt_kind_t kind,
                            uint64_t *version);

#endif
