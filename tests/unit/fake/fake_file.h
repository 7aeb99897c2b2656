/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file as the role tests need it (fake_file.c): its options resolved, its
 * plan, this rank's writer index, and the session as session.c leaves it once
 * the file is checked, owned by `owner` on the fake runtime. Every role test
 * (test_writer, test_stream, test_reader) starts from one.
 */
#ifndef FWDIO_FAKE_FILE_H
#define FWDIO_FAKE_FILE_H

#include "state.h"

/** The file's shape: `nwriters` writers on ranks 0.., stride 1, `layout`. */
typedef struct fake_file_shape {
    uint64_t size, unit, stripe;
    int nranks, nwriters, rank;
    fwdio_layout_t layout;
} fake_file_shape_t;

/**
 * Fill `f` (zeroed by the caller) for `shape` on `owner` (its rt made with
 * fake_rt_create): options, plan, `writer_ranks` (room for nwriters), path,
 * the session checked with `expected_bytes` allocated and the file in the
 * owner's active list. Aborts on failure (a test's set-up).
 */
void fake_file_init(fwdio_file_t *f, struct fwdio_runtime *owner, char *path,
                    const fake_file_shape_t *shape, int *writer_ranks);

#endif
