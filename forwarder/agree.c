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

void fwdioi_errinfo_set_call(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                             uint64_t offset, int call)
{
    if (info->status != FWDIO_OK)
        return;
    *info = (fwdioi_errinfo_t){status, rank, sys_errno, (int64_t)offset, call};
}

void fwdioi_errinfo_set(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                        uint64_t offset)
{
    fwdioi_errinfo_set_call(info, status, rank, sys_errno, offset, FWDIOI_CALL_NONE);
}

/* The message of `info` with the path as `path`; the snprintf result. */
static int format_with(const fwdioi_errinfo_t *info, const char *path, char *buf, size_t len)
{
    const char *call = fwdioi_syscall_name((int)info->call);
    long long rank = (long long)info->rank, err = (long long)info->sys_errno;
    unsigned long long offset = (unsigned long long)info->offset;
    const char *reason = strerror((int)info->sys_errno);
    switch (info->call) {
    case FWDIOI_CALL_NONE:
        if (info->sys_errno == 0)
            return snprintf(buf, len, "%s (%s, rank %lld, offset %llu)",
                            fwdio_strerror((int)info->status), path, rank, offset);
        return snprintf(buf, len, "%s (%s, rank %lld, offset %llu): %s (errno %lld)",
                        fwdio_strerror((int)info->status), path, rank, offset, reason, err);
    case FWDIOI_CALL_PWRITE:
        if (info->sys_errno == 0)
            return snprintf(buf, len,
                            "pwrite of %s wrote nothing on rank %lld at offset %llu "
                            "(no progress, no error code)",
                            path, rank, offset);
        return snprintf(buf, len, "pwrite of %s failed on rank %lld at offset %llu: %s (errno %lld)",
                        path, rank, offset, reason, err);
    case FWDIOI_CALL_FTRUNCATE:
        return snprintf(buf, len, "ftruncate of %s to %llu bytes failed on rank %lld: %s (errno %lld)",
                        path, offset, rank, reason, err);
    default:
        return snprintf(buf, len, "%s of %s failed on rank %lld: %s (errno %lld)", call, path, rank,
                        reason, err);
    }
}

void fwdioi_errinfo_format(const fwdioi_errinfo_t *info, const char *path, char *buf, size_t len)
{
    if (info->status == FWDIO_OK) {
        snprintf(buf, len, "%s", fwdio_strerror(FWDIO_OK));
        return;
    }
    if (!path)
        path = "(unknown file)";
    /* A path too long for the buffer loses its beginning, not the rank and
     * errno that follow it. */
    int rest = format_with(info, "", NULL, 0);
    size_t plen = strlen(path);
    if (rest >= 0 && (size_t)rest + plen >= len && (size_t)rest + 4 < len) {
        size_t keep = len - 1 - (size_t)rest - 3;
        char shortened[4096];
        if (keep > sizeof shortened - 4)
            keep = sizeof shortened - 4;
        snprintf(shortened, sizeof shortened, "...%s", path + plen - keep);
        format_with(info, shortened, buf, len);
        return;
    }
    format_with(info, path, buf, len);
}
