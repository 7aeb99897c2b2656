/* SPDX-License-Identifier: BSD-3-Clause */
/* The fields every rank passes to the open check (open_check.h), and their
 * names for error texts (open_fields.c): below both the check and the
 * agreements' error texts (agree.c). */
#ifndef FWDIOI_OPEN_FIELDS_H
#define FWDIOI_OPEN_FIELDS_H

typedef enum fwdioi_open_field {
    FWDIOI_FIELD_PATH,         /* hash of the path as given */
    FWDIOI_FIELD_ACCESS,       /* 0: fwdio_open, 1: fwdio_open_read */
    FWDIOI_FIELD_SIZE,
    FWDIOI_FIELD_WRITE_SIZE,
    FWDIOI_FIELD_STRIPE_SIZE,
    FWDIOI_FIELD_WRITERS,      /* number of writers placed */
    FWDIOI_FIELD_WRITER_RANKS, /* hash of the writer ranks in order */
    FWDIOI_FIELD_LAYOUT,
    FWDIOI_FIELD_TARGETS,
    FWDIOI_FIELD_ATOMIC_REPLACE, /* before durable, which it implies */
    FWDIOI_FIELD_DURABLE,
    FWDIOI_FIELD_APPEND_START,
    FWDIOI_FIELD_REWRITES,
    FWDIOI_FIELD_OVERLAPS,
    FWDIOI_FIELD_KEEP_CONTENTS,
    FWDIOI_FIELD_OFFSETS_ONLY,
    FWDIOI_FIELD_LOCAL_DIR,    /* hash of local_dir as given (0: none) */
    FWDIOI_FIELD_LOCAL_CAPACITY, /* local_capacity (0 without the tier) */
    FWDIOI_FIELD_LOCAL_COPIES, /* local_copies (0 without the tier, else 1 or 2) */
    FWDIOI_FIELD_MUST_EXIST,
    FWDIOI_OPEN_FIELDS
} fwdioi_open_field_t;

/** "size", "write_size", ... */
const char *fwdioi_open_field_name(int field);
/** Whether the field is compared as a hash (its values mean nothing to a user). */
int fwdioi_open_field_hashed(int field);

#endif
