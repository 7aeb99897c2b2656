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

/* The message of `info`: `path` is the file, `written` what the writers
 * open (its temporary with atomic_replace). Returns the snprintf result. */
static int format_with(const fwdioi_errinfo_t *info, const char *path, const char *written,
                       char *buf, size_t len)
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
                            written, rank, offset);
        return snprintf(buf, len, "pwrite of %s failed on rank %lld at offset %llu: %s (errno %lld)",
                        written, rank, offset, reason, err);
    case FWDIOI_CALL_FTRUNCATE:
        return snprintf(buf, len, "ftruncate of %s to %llu bytes failed on rank %lld: %s (errno %lld)",
                        written, offset, rank, reason, err);
    case FWDIOI_CALL_RENAME:
        return snprintf(buf, len, "rename of %s to %s failed on rank %lld: %s (errno %lld)",
                        written, path, rank, reason, err);
    case FWDIOI_CALL_FSYNC_DIR:
        return snprintf(buf, len, "fsync of the directory of %s failed on rank %lld: %s (errno %lld)",
                        path, rank, reason, err);
    default:
        return snprintf(buf, len, "%s of %s failed on rank %lld: %s (errno %lld)", call, written,
                        rank, reason, err);
    }
}

/* `path` cut to its last `keep` characters behind "...", in out (cap > keep + 3). */
static const char *shorten(const char *path, size_t keep, char *out, size_t cap)
{
    size_t n = strlen(path);
    if (n <= keep)
        return path;
    snprintf(out, cap, "...%s", path + n - keep);
    return out;
}

void fwdioi_errinfo_format(const fwdioi_errinfo_t *info, const char *path, const char *written,
                           char *buf, size_t len)
{
    if (info->status == FWDIO_OK) {
        snprintf(buf, len, "%s", fwdio_strerror(FWDIO_OK));
        return;
    }
    if (!path)
        path = "(unknown file)";
    if (!written)
        written = path;
    /* Paths too long for the buffer lose their beginnings, not the rank and
     * errno that follow them. */
    int rest = format_with(info, "", "", NULL, 0);
    size_t npaths = info->call == FWDIOI_CALL_RENAME ? 2 : 1;
    if (rest >= 0 && (size_t)rest + 4 * npaths < len) {
        size_t keep = (len - 1 - (size_t)rest) / npaths - 3;
        char p[4096], w[4096];
        if (keep > sizeof p - 4)
            keep = sizeof p - 4;
        format_with(info, shorten(path, keep, p, sizeof p), shorten(written, keep, w, sizeof w),
                    buf, len);
        return;
    }
    format_with(info, path, written, buf, len);
}
