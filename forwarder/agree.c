#include "agree.h"

#include <stdio.h>
#include <string.h>

/* Keep, element-wise, the error reported by the lowest rank; OK loses to any
 * error. Commutative and associative, as MPI requires. */
static void combine(void *invec, void *inoutvec, int *len, MPI_Datatype *type)
{
    (void)type;
    int64_t *in = invec, *io = inoutvec;
    for (int i = 0; i + FWDIOI_ERRINFO_INTS <= *len; i += FWDIOI_ERRINFO_INTS) {
        int64_t *a = in + i, *b = io + i;
        int take = (a[0] != FWDIO_OK && b[0] == FWDIO_OK) ||
                   (a[0] != FWDIO_OK && b[0] != FWDIO_OK && a[1] < b[1]);
        if (take)
            memcpy(b, a, FWDIOI_ERRINFO_INTS * sizeof *a);
    }
}

int fwdioi_agree_op_create(MPI_Op *op)
{
    return MPI_Op_create(combine, 1, op) == MPI_SUCCESS ? FWDIO_OK : FWDIO_EMPI;
}

void fwdioi_agree_op_free(MPI_Op *op)
{
    if (*op != MPI_OP_NULL)
        MPI_Op_free(op);
}

void fwdioi_errinfo_set(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                        uint64_t offset)
{
    if (info->status != FWDIO_OK)
        return;
    *info = (fwdioi_errinfo_t){status, rank, sys_errno, (int64_t)offset};
}

void fwdioi_errinfo_format(const fwdioi_errinfo_t *info, char *buf, size_t len)
{
    if (info->status == FWDIO_OK) {
        snprintf(buf, len, "%s", fwdio_strerror(FWDIO_OK));
        return;
    }
    int n = snprintf(buf, len, "%s: writer rank %lld, offset %lld", fwdio_strerror((int)info->status),
                     (long long)info->rank, (long long)info->offset);
    if (info->sys_errno != 0 && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ": %s (errno %lld)", strerror((int)info->sys_errno),
                 (long long)info->sys_errno);
}
