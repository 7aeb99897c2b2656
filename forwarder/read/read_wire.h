/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The messages of reads between a requester (requester.c) and a reader
 * (reader.c), on the file's communicator: a request (FWDIOI_TAG_READ_REQ),
 * then per piece its bytes (FWDIOI_TAG_READ_DATA) and the header that names
 * them (FWDIOI_TAG_READ_HDR); requester.h tells the exchange.
 */
#ifndef FWDIOI_READ_WIRE_H
#define FWDIOI_READ_WIRE_H

#include <stdint.h>

/* A read request as it travels: the read's number on its rank, and the bytes. */
typedef struct fwdioi_read_request {
    uint64_t id;
    uint64_t offset;
    uint64_t len;
} fwdioi_read_request_t;

/* What a reader says after the bytes of one piece (status OK), or instead
 * of them (its pread failed: no bytes follow). A request the reader cannot
 * take aborts the file instead (reader.c). */
typedef struct fwdioi_read_header {
    uint64_t id;
    uint64_t offset;
    uint64_t len;
    int64_t status;
} fwdioi_read_header_t;

#endif
