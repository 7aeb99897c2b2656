/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A version's manifest: the small text file whose presence marks the version
 * complete. Written only after the data file's agreed OK (renamed into
 * place, durable), so a killed job never leaves a complete-looking version.
 *
 *   fwdio-ckpt 1
 *   name <name>
 *   version <version>
 *   size <bytes of the data file>
 *   crc32 <8 hex digits: the data file's CRC-32>
 *   end <8 hex digits: CRC-32 of every byte above, through "crc32 ...\n">
 *
 * The last line guards the manifest itself: a torn, truncated or edited
 * manifest does not parse. Pure (tests/unit/checkpoint/test_ckpt_manifest).
 */
#ifndef FWDIOI_CKPT_MANIFEST_H
#define FWDIOI_CKPT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "fwdio.h"

/** Longest manifest text: the fields, a name of FWDIO_CKPT_NAME_MAX. */
#define FWDIOI_CKPT_MANIFEST_MAX 512

typedef struct fwdioi_ckpt_manifest {
    char name[FWDIO_CKPT_NAME_MAX + 1];
    uint64_t version;
    uint64_t size;
    uint32_t crc;
} fwdioi_ckpt_manifest_t;

/** The text of `m` into out (not NUL-terminated beyond its length): its
 *  length, or 0 when the name is invalid or cap too small. The same bytes on
 *  every rank for the same fields. */
size_t fwdioi_ckpt_manifest_format(const fwdioi_ckpt_manifest_t *m, char *out, size_t cap);

/** Parse `len` bytes of text into *m: NULL when it is a whole, intact
 *  manifest, else why not (a static text). */
const char *fwdioi_ckpt_manifest_parse(const char *text, size_t len, fwdioi_ckpt_manifest_t *m);

#endif
