/* SPDX-License-Identifier: BSD-3-Clause */
#include "session/open_check.h"

#include <string.h>

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
    [FWDIOI_FIELD_LOCAL_DIR] = "local_dir",
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

uint64_t fwdioi_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void fwdioi_open_check_pack(int64_t out[FWDIOI_OPEN_CHECK_INTS], int rank,
                            const int64_t fields[FWDIOI_OPEN_FIELDS],
                            const fwdioi_errinfo_t *local)
{
    memcpy(out, local, sizeof *local);
    int64_t *q = out + FWDIOI_ERRINFO_INTS;
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++, q += 4) {
        q[0] = q[2] = fields[i];
        q[1] = q[3] = rank;
    }
}

/* Per field: the smaller value (ties: the lower rank) and the larger one. */
static void combine(void *invec, void *inoutvec, int *len, MPI_Datatype *type)
{
    (void)type;
    int64_t *in = invec, *io = inoutvec;
    for (int base = 0; base + FWDIOI_OPEN_CHECK_INTS <= *len; base += FWDIOI_OPEN_CHECK_INTS) {
        int64_t *a = in + base, *b = io + base;
        fwdioi_errinfo_combine(a, b);
        for (int i = FWDIOI_ERRINFO_INTS; i < FWDIOI_OPEN_CHECK_INTS; i += 4) {
            if (a[i] < b[i] || (a[i] == b[i] && a[i + 1] < b[i + 1])) {
                b[i] = a[i];
                b[i + 1] = a[i + 1];
            }
            if (a[i + 2] > b[i + 2] || (a[i + 2] == b[i + 2] && a[i + 3] < b[i + 3])) {
                b[i + 2] = a[i + 2];
                b[i + 3] = a[i + 3];
            }
        }
    }
}

int fwdioi_open_check_op_create(MPI_Op *op)
{
    return MPI_Op_create(combine, 1, op) == MPI_SUCCESS ? FWDIO_OK : FWDIO_EMPI;
}

void fwdioi_open_check_result(const int64_t agreed[FWDIOI_OPEN_CHECK_INTS],
                              fwdioi_errinfo_t *out)
{
    memcpy(out, agreed, sizeof *out);
    if (out->status != FWDIO_OK)
        return;
    const int64_t *q = agreed + FWDIOI_ERRINFO_INTS;
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++, q += 4) {
        if (q[0] == q[2])
            continue;
        *out = (fwdioi_errinfo_t){FWDIO_EINVAL, q[1], 0, q[0], FWDIOI_REASON_MISMATCH + i,
                                  q[3], q[2]};
        return;
    }
}
