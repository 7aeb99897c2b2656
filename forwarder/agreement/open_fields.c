/* SPDX-License-Identifier: BSD-3-Clause */
/* The open check's fields by name (open_fields.h). */
#include "agreement/open_fields.h"

static const char *const field_names[FWDIOI_OPEN_FIELDS] = {
    [FWDIOI_FIELD_PATH] = "path",
    [FWDIOI_FIELD_ACCESS] = "access (0: fwdio_open, 1: fwdio_open_read)",
    [FWDIOI_FIELD_SIZE] = "size",
    [FWDIOI_FIELD_WRITE_SIZE] = "write_size",
    [FWDIOI_FIELD_STRIPE_SIZE] = "stripe_size",
    [FWDIOI_FIELD_WRITERS] = "number of writers",
    [FWDIOI_FIELD_WRITER_RANKS] = "writer ranks",
    [FWDIOI_FIELD_LAYOUT] = "layout",
    [FWDIOI_FIELD_TARGETS] = "targets",
    [FWDIOI_FIELD_DURABLE] = "durable",
    [FWDIOI_FIELD_ATOMIC_REPLACE] = "atomic_replace",
    [FWDIOI_FIELD_APPEND_START] = "append_start",
    [FWDIOI_FIELD_REWRITES] = "rewrites",
    [FWDIOI_FIELD_OVERLAPS] = "overlaps",
    [FWDIOI_FIELD_KEEP_CONTENTS] = "keep_contents",
    [FWDIOI_FIELD_OFFSETS_ONLY] = "offsets_only",
    [FWDIOI_FIELD_LOCAL_DIR] = "local_dir",
    [FWDIOI_FIELD_LOCAL_CAPACITY] = "local_capacity",
    [FWDIOI_FIELD_LOCAL_COPIES] = "local_copies",
    [FWDIOI_FIELD_MUST_EXIST] = "must_exist",
};

const char *fwdioi_open_field_name(int field)
{
    return field >= 0 && field < FWDIOI_OPEN_FIELDS ? field_names[field] : "an option";
}

int fwdioi_open_field_hashed(int field)
{
    return field == FWDIOI_FIELD_PATH || field == FWDIOI_FIELD_WRITER_RANKS ||
           field == FWDIOI_FIELD_LOCAL_DIR;
}
