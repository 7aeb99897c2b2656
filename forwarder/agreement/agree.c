/* SPDX-License-Identifier: BSD-3-Clause */
#include "agreement/agree.h"

#include "log.h"
#include "agreement/open_fields.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(long) == 8, "agreements pack 64-bit keys in MPI_LONG_INT");

/* The 32-bit halves of a 64-bit field, as the pairs' int values. */
static int low_half(int64_t v)
{
    uint32_t u = (uint32_t)(uint64_t)v;
    int32_t i;
    memcpy(&i, &u, sizeof i);
    return i;
}

static int high_half(int64_t v) { return low_half((int64_t)((uint64_t)v >> 32)); }

static int64_t join_halves(int low, int high)
{
    uint32_t lo, hi;
    memcpy(&lo, &low, sizeof lo);
    memcpy(&hi, &high, sizeof hi);
    return (int64_t)(((uint64_t)hi << 32) | lo);
}

void fwdioi_errinfo_pack(const fwdioi_errinfo_t *e, int me,
                         fwdioi_agree_pair_t out[FWDIOI_ERRINFO_PAIRS])
{
    int failed = e->status != FWDIO_OK;
    /* rank + 1 >= 0 above, the contributor below: unique per rank */
    long key = failed ? (long)(((uint64_t)(e->rank + 1) << 32) | (uint32_t)me) : LONG_MAX;
    const int vals[FWDIOI_ERRINFO_KEYED] = {
        (int)e->status,         (int)e->sys_errno, low_half(e->offset),
        high_half(e->offset),   (int)e->call,      (int)e->other_rank,
        low_half(e->other_value), high_half(e->other_value)};
    for (int i = 0; i < FWDIOI_ERRINFO_KEYED; i++)
        out[i] = (fwdioi_agree_pair_t){key, failed ? vals[i] : 0};
    out[FWDIOI_ERRINFO_KEYED] = (fwdioi_agree_pair_t){failed ? LONG_MAX : ~(long)e->offset, 0};
    out[FWDIOI_ERRINFO_KEYED + 1] =
        (fwdioi_agree_pair_t){failed ? LONG_MAX : ~(long)e->other_value, 0};
}

void fwdioi_errinfo_unpack(const fwdioi_agree_pair_t in[FWDIOI_ERRINFO_PAIRS],
                           fwdioi_errinfo_t *out)
{
    if (in[0].key == LONG_MAX) { /* nobody failed: the largest offset and other_value */
        *out = FWDIOI_ERRINFO_OK;
        out->offset = ~(int64_t)in[FWDIOI_ERRINFO_KEYED].key;
        out->other_value = ~(int64_t)in[FWDIOI_ERRINFO_KEYED + 1].key;
        return;
    }
    *out = (fwdioi_errinfo_t){in[0].val,
                              (int64_t)((uint64_t)in[0].key >> 32) - 1,
                              in[1].val,
                              join_halves(in[2].val, in[3].val),
                              in[4].val,
                              in[5].val,
                              join_halves(in[6].val, in[7].val)};
}

static const char *const mpi_call_names[FWDIOI_MPI_CALL_COUNT] = {
    [FWDIOI_MPI_COMM_IDUP] = "MPI_Comm_idup",
    [FWDIOI_MPI_AGREE_CHECK] = "MPI_Iallreduce (open check)",
    [FWDIOI_MPI_AGREE_OPEN] = "MPI_Iallreduce (open status)",
    [FWDIOI_MPI_AGREE_CLOSE] = "MPI_Iallreduce (bytes per writer)",
    [FWDIOI_MPI_AGREE_FINAL] = "MPI_Iallreduce (final status)",
    [FWDIOI_MPI_AGREE_COMMIT] = "MPI_Iallreduce (commit status)",
    [FWDIOI_MPI_AGREE_STEP] = "MPI_Iallreduce (a step's bytes per writer)",
    [FWDIOI_MPI_AGREE_STEP_FINAL] = "MPI_Iallreduce (a step's status)",
    [FWDIOI_MPI_AGREE_STEP_COMMIT] = "MPI_Iallreduce (a step's commit status)",
    [FWDIOI_MPI_SCAN_APPEND] = "MPI_Iexscan (appended bytes)",
    [FWDIOI_MPI_ISEND] = "MPI_Issend",
    [FWDIOI_MPI_IMPROBE] = "MPI_Improbe",
    [FWDIOI_MPI_IMRECV] = "MPI_Imrecv",
    [FWDIOI_MPI_GET_COUNT] = "MPI_Get_count",
    [FWDIOI_MPI_TYPE] = "MPI_Type_create_hindexed",
    [FWDIOI_MPI_READ_ISEND] = "MPI_Isend",
    [FWDIOI_MPI_READ_IRECV] = "MPI_Irecv",
    [FWDIOI_MPI_READ_MRECV] = "MPI_Mrecv",
    [FWDIOI_MPI_AGREE_DRAIN] = "MPI_Iallreduce (drain status)",
    [FWDIOI_MPI_AGREE_DRAIN_COMMIT] = "MPI_Iallreduce (drain's commit status)",
    [FWDIOI_MPI_AGREE_COPIES] = "MPI_Iallreduce (partner copies' status)",
    [FWDIOI_MPI_COPY_ISEND] = "MPI_Isend (partner copy)",
    [FWDIOI_MPI_COPY_IRECV] = "MPI_Irecv (partner copy)",
    [FWDIOI_MPI_AGREE_INTACT] = "MPI_Iallreduce (intact local copies)",
    [FWDIOI_MPI_AGREE_LOCAL_COPY] = "MPI_Iallreduce (restart's local copy)",
    [FWDIOI_MPI_COMM_PICK] = "MPI_Iallreduce (a kept communicator)",
    [FWDIOI_MPI_AGREE_STEP_DRAIN] = "MPI_Iallreduce (a step's drain status)",
};

const char *fwdioi_mpi_call_name(int call)
{
    return call >= 0 && call < FWDIOI_MPI_CALL_COUNT ? mpi_call_names[call] : "an MPI call";
}

void fwdioi_errinfo_set_mpi(fwdioi_errinfo_t *info, int rank, int call, int mpi_rc)
{
    int cls = mpi_rc;
    if (MPI_Error_class(mpi_rc, &cls) != MPI_SUCCESS)
        cls = mpi_rc;
    fwdioi_errinfo_set_call(info, FWDIO_EMPI, rank, cls, 0, FWDIOI_REASON_MPI + call);
}

void fwdioi_errinfo_set_call(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                             uint64_t offset, int call)
{
    if (info->status != FWDIO_OK)
        return;
    *info = (fwdioi_errinfo_t){status, rank, sys_errno, (int64_t)offset, call, -1, 0};
}

fwdioi_errinfo_t fwdioi_errinfo_committers(int me, int committers, uint64_t rank_sum,
                                           uint64_t offset)
{
    int64_t other = committers == 2 ? (int64_t)rank_sum - me : -1;
    return (fwdioi_errinfo_t){FWDIO_EINVAL, me, 0, (int64_t)offset, FWDIOI_REASON_COMMITTERS,
                              other, committers};
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
    long long other = (long long)info->other_rank;
    if (info->call >= FWDIOI_REASON_MPI && info->call < FWDIOI_REASON_MPI + FWDIOI_MPI_CALL_COUNT) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int n = 0;
        if (MPI_Error_string((int)info->sys_errno, text, &n) != MPI_SUCCESS)
            snprintf(text, sizeof text, "MPI error class %lld", err);
        return snprintf(buf, len, "%s failed on rank %lld for %s: %s", 
                        fwdioi_mpi_call_name((int)(info->call - FWDIOI_REASON_MPI)), rank, path,
                        text);
    }
    if (info->call >= FWDIOI_REASON_MISMATCH &&
        info->call < FWDIOI_REASON_MISMATCH + FWDIOI_OPEN_FIELDS) {
        int field = (int)(info->call - FWDIOI_REASON_MISMATCH);
        const char *what = fwdioi_open_field_name(field);
        if (fwdioi_open_field_hashed(field))
            return snprintf(buf, len,
                            "ranks disagree on the %s of fwdio_open: rank %lld and rank %lld "
                            "passed different ones (this rank opened %s); every rank must open "
                            "the same files in the same order with the same size and options",
                            what, rank, other, path);
        return snprintf(buf, len,
                        "ranks disagree on the %s of fwdio_open of %s: rank %lld passed %llu, "
                        "rank %lld passed %llu; every rank must open the same files in the same "
                        "order with the same size and options",
                        what, path, rank, offset, other,
                        (unsigned long long)info->other_value);
    }
    switch (info->call) {
    case FWDIOI_REASON_PATH_OPEN:
        return snprintf(buf, len,
                        "%s was opened again while an earlier fwdio file of the same path was "
                        "still open on rank %lld: close (fwdio_close) the earlier file on every "
                        "rank before opening the path again",
                        path, rank);
    case FWDIOI_REASON_BAD_PIECE:
        return snprintf(buf, len,
                        "writer rank %lld of %s received %llu bytes at offset %llu from rank "
                        "%lld that its plan does not give it (ranks disagree on the file's plan)",
                        rank, path, (unsigned long long)info->other_value, offset, other);
    case FWDIOI_REASON_COMMITTERS:
        if (other >= 0)
            return snprintf(buf, len,
                            "fwdio_set_commit was called for %s on more than one rank (ranks "
                            "%lld and %lld): one rank must write the commit block",
                            path, rank, other);
        return snprintf(buf, len,
                        "fwdio_set_commit was called for %s on %lld ranks (rank %lld among "
                        "them): one rank must write the commit block",
                        path, (long long)info->other_value, rank);
    case FWDIOI_REASON_STEPS:
        return snprintf(buf, len,
                        "ranks disagree on the steps of %s: fwdio_step_end must be called the "
                        "same number of times on every rank before fwdio_close",
                        path);
    case FWDIOI_REASON_BAD_STEP:
        return snprintf(buf, len,
                        "writer rank %lld of %s received %llu bytes from rank %lld for step "
                        "%lld, which cannot be theirs (that step is complete, or far ahead)",
                        rank, path, offset, other, (long long)info->other_value);
    case FWDIOI_REASON_BAD_READ:
        return snprintf(buf, len,
                        "rank %lld of %s received a read request or answer from rank %lld for "
                        "%llu bytes at offset %llu that its plan does not give it (ranks "
                        "disagree on the file's plan)",
                        rank, path, other, (unsigned long long)info->other_value, offset);
    case FWDIOI_REASON_READ_SIZES:
        return snprintf(buf, len,
                        "the readers of %s found it of different sizes (%llu and %llu bytes): "
                        "it changed while it was opened for reading",
                        path, offset, (unsigned long long)info->other_value);
    case FWDIOI_REASON_REFUSED:
        return snprintf(buf, len,
                        "fwdio_open of %s was refused at the call on rank %lld (%s; that rank "
                        "said why on its stderr), so the file fails on every rank",
                        path, rank, fwdio_strerror((int)info->status));
    case FWDIOI_CALL_PREAD:
        if (info->sys_errno == 0)
            return snprintf(buf, len,
                            "%s ended at offset %llu on rank %lld, before the size it had when "
                            "it was opened for reading (pread read nothing)",
                            path, offset, rank);
        return snprintf(buf, len, "pread of %s failed on rank %lld at offset %llu: %s (errno %lld)",
                        path, rank, offset, reason, err);
    case FWDIOI_REASON_BROKEN:
        return snprintf(buf, len,
                        "%s cannot be written: an earlier MPI failure on rank %lld left "
                        "fwdio's communicator unusable",
                        path, rank);
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
