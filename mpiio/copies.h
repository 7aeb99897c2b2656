/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies of bytes a rank handed to a stream, with their file offsets, in call
 * order and in one buffer reused until cleared (copies.c; no MPI): the
 * readback copies of a step (readback.c) and the log of a file whose open is
 * not known yet (opening.c). */
#ifndef FWDIO_MPIIO_COPIES_H
#define FWDIO_MPIIO_COPIES_H

#include <stddef.h>
#include <stdint.h>

typedef struct mpiio_copy {
    int64_t off, len;
    size_t at; /* where the bytes are in `data` */
} mpiio_copy_t;

typedef struct mpiio_copies {
    char *data;
    size_t used, data_cap;
    mpiio_copy_t *c;
    size_t n, cap;
} mpiio_copies_t;

/* Would `len` more bytes keep the copies within `limit` bytes? */
int mpiio_copies_fit(const mpiio_copies_t *k, int64_t len, int64_t limit);
/* Keep a copy of len bytes of data at file offset off: 0, or -1 past
 * `limit` bytes in all (or out of memory), the copies unchanged. */
int mpiio_copies_keep(mpiio_copies_t *k, const char *data, int64_t len, int64_t off,
                      int64_t limit);
/* Forget them, keeping the memory for the next ones. */
void mpiio_copies_clear(mpiio_copies_t *k);
/* Forget them and free the memory. */
void mpiio_copies_free(mpiio_copies_t *k);

#endif
