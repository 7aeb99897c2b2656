/* SPDX-License-Identifier: BSD-3-Clause */
#include "dump_binary.h"

#include <stdio.h>
#include <string.h>

/* Fields are copied byte for byte (memcpy), so no alignment is assumed. */
#define PUT(out, offset, value) memcpy((out) + (offset), &(value), sizeof(value))
#define GET(in, offset, var) memcpy(&(var), (in) + (offset), sizeof(var))

enum {
    OFF_MAGIC = 0,
    OFF_BOM = 8,
    OFF_HEADER_SIZE = 12,
    OFF_RECORD_SIZE = 16,
    OFF_NTYPES = 20,
    OFF_STEP = 24,
    OFF_NATOMS = 32,
    OFF_BOX = 40,
    OFF_ID = 0,
    OFF_TYPE = 4,
    OFF_X = 8
};

_Static_assert(OFF_BOX + 6 * sizeof(double) == LFW_BIN_HEADER_SIZE, "header layout");
_Static_assert(OFF_X + 3 * sizeof(double) == LFW_BIN_RECORD_SIZE, "record layout");

void lfw_bin_header_encode(unsigned char *out, const lfw_bin_header_t *h)
{
    const uint32_t bom = LFW_BIN_BYTE_ORDER_MARK, header_size = LFW_BIN_HEADER_SIZE,
                   record_size = LFW_BIN_RECORD_SIZE;
    memcpy(out + OFF_MAGIC, LFW_BIN_MAGIC, LFW_BIN_MAGIC_LEN);
    PUT(out, OFF_BOM, bom);
    PUT(out, OFF_HEADER_SIZE, header_size);
    PUT(out, OFF_RECORD_SIZE, record_size);
    PUT(out, OFF_NTYPES, h->ntypes);
    PUT(out, OFF_STEP, h->step);
    PUT(out, OFF_NATOMS, h->natoms);
    for (int d = 0; d < 3; d++) {
        PUT(out, OFF_BOX + (2 * d) * sizeof(double), h->box.lo[d]);
        PUT(out, OFF_BOX + (2 * d + 1) * sizeof(double), h->box.hi[d]);
    }
}

int lfw_bin_header_decode(const unsigned char *in, lfw_bin_header_t *h, char *why, size_t cap)
{
    uint32_t bom, header_size, record_size;
    GET(in, OFF_BOM, bom);
    GET(in, OFF_HEADER_SIZE, header_size);
    GET(in, OFF_RECORD_SIZE, record_size);
    if (memcmp(in + OFF_MAGIC, LFW_BIN_MAGIC, LFW_BIN_MAGIC_LEN) != 0) {
        snprintf(why, cap, "no \"%s\" magic: not a lammps-fwdio binary dump", LFW_BIN_MAGIC);
        return -1;
    }
    if (bom != LFW_BIN_BYTE_ORDER_MARK) {
        snprintf(why, cap, "byte-order mark 0x%08x: written on a machine of the other byte order",
                 (unsigned)bom);
        return -1;
    }
    if (header_size != LFW_BIN_HEADER_SIZE || record_size != LFW_BIN_RECORD_SIZE) {
        snprintf(why, cap, "header/record size %u/%u, expected %u/%u", (unsigned)header_size,
                 (unsigned)record_size, (unsigned)LFW_BIN_HEADER_SIZE,
                 (unsigned)LFW_BIN_RECORD_SIZE);
        return -1;
    }
    GET(in, OFF_NTYPES, h->ntypes);
    GET(in, OFF_STEP, h->step);
    GET(in, OFF_NATOMS, h->natoms);
    for (int d = 0; d < 3; d++) {
        GET(in, OFF_BOX + (2 * d) * sizeof(double), h->box.lo[d]);
        GET(in, OFF_BOX + (2 * d + 1) * sizeof(double), h->box.hi[d]);
    }
    return 0;
}

void lfw_bin_record_encode(unsigned char *out, int32_t id, int32_t type, const double x[3])
{
    PUT(out, OFF_ID, id);
    PUT(out, OFF_TYPE, type);
    memcpy(out + OFF_X, x, 3 * sizeof(double));
}

void lfw_bin_record_decode(const unsigned char *in, int32_t *id, int32_t *type, double x[3])
{
    GET(in, OFF_ID, *id);
    GET(in, OFF_TYPE, *type);
    memcpy(x, in + OFF_X, 3 * sizeof(double));
}
