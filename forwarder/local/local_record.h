/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The version record beside a writer's local file, "<local file>.ver"
 * (local_version.h has its format and the rule), and the look at a target
 * it records: system calls only, any thread (the I/O threads: the seal, the
 * drain's KEEP, eviction; a restart's LOOK).
 */
#ifndef FWDIOI_LOCAL_RECORD_H
#define FWDIOI_LOCAL_RECORD_H

#include "local/local_version.h"

#include <stddef.h>

/** "<local_path>.ver" into `out`; 0, or -1 when it does not fit. */
int fwdioi_local_record_path(const char *local_path, char *out, size_t len);
/** The target as it is now: `id->exists` 0 when it is not there (or cannot
 *  be looked at) (any thread). */
void fwdioi_target_id_of(const char *path, fwdioi_target_id_t *id);

/* The record's writes: 0, or -1 (errno set): a copy without its record is
 * never read by a restart, so a failure costs the restart its local copy,
 * not the file. */
/** At the seal, after the index is durable: version `version` of writer
 *  `writer`, the target as it is now (its predecessor); durable. */
int fwdioi_local_record_seal(const char *local_path, const char *target, uint64_t version,
                             uint32_t writer);
/** After the drain is agreed: the record says drained, with the target as
 *  the drain left it; durable. */
int fwdioi_local_record_drained(const char *local_path, const char *target);
/** Remove the record (an eviction, before the local file goes). */
int fwdioi_local_record_remove(const char *local_path);

#endif
