/*
 * Agreement on a file's status: every rank contributes what it saw, a
 * nonblocking MPI_Iallreduce with our own operation keeps the error of the
 * lowest rank that reported one, and every rank ends up with the same answer.
 */
#ifndef FWDIOI_AGREE_H
#define FWDIOI_AGREE_H

#include "fwdio.h"
#include "sysio.h"

/* Laid out as int64s so MPI can reduce it as MPI_INT64_T[FWDIOI_ERRINFO_INTS]. */
typedef struct fwdioi_errinfo {
    int64_t status;    /* FWDIO_OK or an error */
    int64_t rank;      /* who saw it, -1 if nobody */
    int64_t sys_errno; /* errno of the failing call */
    int64_t offset;    /* file offset concerned */
    int64_t call;      /* the failing system call (fwdioi_syscall_t), or FWDIOI_CALL_NONE */
} fwdioi_errinfo_t;

#define FWDIOI_ERRINFO_INTS 5
#define FWDIOI_ERRINFO_OK ((fwdioi_errinfo_t){FWDIO_OK, -1, 0, 0, FWDIOI_CALL_NONE})

/** Create / free the MPI reduction operation (collective-free, local). */
int fwdioi_agree_op_create(MPI_Op *op);
void fwdioi_agree_op_free(MPI_Op *op);

/** Record an error in `info` unless one is there already (first error wins). */
void fwdioi_errinfo_set(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                        uint64_t offset);

/** fwdioi_errinfo_set for the failure of system call `call` (fwdioi_syscall_t). */
void fwdioi_errinfo_set_call(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                             uint64_t offset, int call);

/**
 * One-line text for an agreed error of the file at `path` (see
 * fwdio_file_error), e.g. "pwrite of /x/y failed on rank 1 at offset 4194304:
 * No space left on device (errno 28)". `written` is the file the writers
 * open (the temporary with atomic_replace; NULL: `path`); the calls on it
 * are named with it, and a rename with both.
 */
void fwdioi_errinfo_format(const fwdioi_errinfo_t *info, const char *path, const char *written,
                           char *buf, size_t len);

#endif
