/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Agreement on a file's status: every rank contributes what it saw, a
 * nonblocking MPI_Iallreduce keeps the error of the lowest rank that reported
 * one, and every rank ends up with the same answer.
 *
 * The reduction is MPI's own MPI_MINLOC over MPI_LONG_INT pairs (an errinfo
 * packed as below), never an operation of ours: Open MPI 4.1 retains a
 * user-defined operation for a nonblocking collective only after starting it
 * (ompi_coll_base_retain_op), so when another thread's MPI progress completes
 * the collective in between, the operation is never released and outlives
 * MPI_Op_free (LeakSanitizer's report: a leak from MPI_Op_create). With the
 * MPI-IO layer the application thread is in MPI while the progress thread
 * starts agreements (ctest mpiio_layer_np3_sync_async reported it once).
 */
#ifndef FWDIOI_AGREE_H
#define FWDIOI_AGREE_H

#include "fwdio.h"
#include "storage/sysio.h"

/* Laid out as int64s so MPI can reduce it as MPI_INT64_T[FWDIOI_ERRINFO_INTS].
 * Of two successes the agreement keeps the largest offset and other_value:
 * a read file's open carries its size and minus its size there, so every
 * rank learns the largest and the smallest size its readers found. */
typedef struct fwdioi_errinfo {
    int64_t status;    /* FWDIO_OK or an error */
    int64_t rank;      /* who saw it, -1 if nobody */
    int64_t sys_errno; /* errno of the failing call; the MPI error class for an MPI call */
    int64_t offset;    /* file offset concerned; for a mismatch, the value `rank` passed */
    int64_t call;      /* the failing call or the reason (fwdioi_syscall_t or FWDIOI_REASON_*) */
    int64_t other_rank;  /* mismatch: a rank that passed something else; bad piece: sender */
    int64_t other_value; /* mismatch: what other_rank passed; bad piece: the piece's length */
} fwdioi_errinfo_t;

#define FWDIOI_ERRINFO_INTS 7
#define FWDIOI_ERRINFO_OK ((fwdioi_errinfo_t){FWDIO_OK, -1, 0, 0, FWDIOI_CALL_NONE, -1, 0})

/* One element of an agreement as MPI reduces it: MPI_LONG_INT with the
 * predefined MPI_MINLOC (the smallest key, and of equal keys the smallest
 * val). `long` is 64 bits (fwdio builds on LP64 systems only). */
typedef struct fwdioi_agree_pair {
    long key;
    int val;
} fwdioi_agree_pair_t;

/*
 * An errinfo as pairs: the first FWDIOI_ERRINFO_KEYED pairs carry its fields
 * (32 bits each; offset and other_value in two) under one key, the error's
 * rank then the contributing rank (unique), or LONG_MAX for no error, so the
 * lowest rank's error comes out whole; the last two carry ~offset and
 * ~other_value of a success (LONG_MAX for an error), whose minima give the
 * largest of each when no rank failed.
 */
#define FWDIOI_ERRINFO_KEYED 8
#define FWDIOI_ERRINFO_PAIRS (FWDIOI_ERRINFO_KEYED + 2)

/** Pack `e` as contributed by rank `me` of the agreement's communicator. */
void fwdioi_errinfo_pack(const fwdioi_errinfo_t *e, int me,
                         fwdioi_agree_pair_t out[FWDIOI_ERRINFO_PAIRS]);
/** The agreed errinfo of reduced pairs: the error of the lowest `rank` (of
 *  equal ones, the lowest contributor's), or FWDIO_OK with the largest
 *  offset and other_value any rank passed. */
void fwdioi_errinfo_unpack(const fwdioi_agree_pair_t in[FWDIOI_ERRINFO_PAIRS],
                           fwdioi_errinfo_t *out);

/*
 * Reasons an errinfo can give besides a failed system call (sysio.h), in its
 * `call` field.
 */
enum {
    /* + fwdioi_mpi_call_t: an MPI call failed; sys_errno is its error class */
    FWDIOI_REASON_MPI = 100,
    /* + fwdioi_open_field_t (open_check.h): ranks passed different values */
    FWDIOI_REASON_MISMATCH = 200,
    /* an earlier file of the same path was not closed on `rank` yet */
    FWDIOI_REASON_PATH_OPEN = 300,
    /* a writer received a piece its plan does not give it (other_rank sent it) */
    FWDIOI_REASON_BAD_PIECE,
    /* fwdio_set_commit was called on other_value ranks (rank one of them;
     * other_rank another when there are two, else -1) */
    FWDIOI_REASON_COMMITTERS,
    /* an earlier MPI failure left the runtime's communicator unusable */
    FWDIOI_REASON_BROKEN,
    /* ranks ended different numbers of a stream's steps before closing it */
    FWDIOI_REASON_STEPS,
    /* a writer received bytes for a step of a stream that cannot be theirs
     * (other_rank sent them; other_value: the step in the message) */
    FWDIOI_REASON_BAD_STEP,
    /* a read request or answer that the plan does not give its receiver
     * (other_rank sent it; offset, other_value: the bytes) */
    FWDIOI_REASON_BAD_READ,
    /* the readers found the file of different sizes (offset: the largest,
     * other_value: the smallest) */
    FWDIOI_REASON_READ_SIZES,
    /* fwdio_open refused the file at the call on `rank`, with `status`
     * (session/refused.h): every rank's file fails the open check with it */
    FWDIOI_REASON_REFUSED
};

/* The MPI calls a session makes, as error reports name them. */
typedef enum fwdioi_mpi_call {
    FWDIOI_MPI_COMM_IDUP,
    FWDIOI_MPI_AGREE_CHECK,  /* MPI_Iallreduce of the open check */
    FWDIOI_MPI_AGREE_OPEN,   /* MPI_Iallreduce of the open status */
    FWDIOI_MPI_AGREE_CLOSE,  /* MPI_Iallreduce of the bytes per writer */
    FWDIOI_MPI_AGREE_FINAL,  /* MPI_Iallreduce of the final status */
    FWDIOI_MPI_AGREE_COMMIT, /* MPI_Iallreduce of the commit status */
    FWDIOI_MPI_ISEND,
    FWDIOI_MPI_IMPROBE,
    FWDIOI_MPI_IMRECV,
    FWDIOI_MPI_GET_COUNT,
    FWDIOI_MPI_TYPE,         /* building the datatype of a lent message */
    FWDIOI_MPI_AGREE_STEP,   /* MPI_Iallreduce of a step's bytes per writer */
    FWDIOI_MPI_AGREE_STEP_FINAL,  /* MPI_Iallreduce of a step's status */
    FWDIOI_MPI_AGREE_STEP_COMMIT, /* MPI_Iallreduce of a step's commit status */
    FWDIOI_MPI_SCAN_APPEND,  /* MPI_Iexscan of the bytes each rank appended */
    FWDIOI_MPI_READ_ISEND,   /* MPI_Isend of a read request or answer */
    FWDIOI_MPI_READ_IRECV,   /* MPI_Irecv of a read piece's bytes */
    FWDIOI_MPI_READ_MRECV,   /* MPI_Mrecv of a read answer's header */
    FWDIOI_MPI_AGREE_DRAIN,  /* MPI_Iallreduce of a drain's status (node-local tier) */
    FWDIOI_MPI_AGREE_DRAIN_COMMIT, /* MPI_Iallreduce of a drain's commit status */
    FWDIOI_MPI_AGREE_COPIES, /* MPI_Iallreduce of the partner copies' status */
    FWDIOI_MPI_COPY_ISEND,   /* MPI_Isend of a writer's local file to its partner */
    FWDIOI_MPI_COPY_IRECV,   /* MPI_Irecv of a partner copy */
    FWDIOI_MPI_AGREE_INTACT, /* MPI_Iallreduce of the copies a drain finds intact */
    FWDIOI_MPI_AGREE_LOCAL_COPY, /* MPI_Iallreduce of a restart's local copy (node-local tier) */
    FWDIOI_MPI_COMM_PICK,    /* MPI_Iallreduce choosing a kept communicator (comm_pool.h) */
    FWDIOI_MPI_AGREE_STEP_DRAIN, /* MPI_Iallreduce of a stream step's drain status */
    FWDIOI_MPI_CALL_COUNT
} fwdioi_mpi_call_t;

/** "MPI_Iallreduce (open status)", ...; "an MPI call" for a bad value. */
const char *fwdioi_mpi_call_name(int call);

/** Record an error in `info` unless one is there already (first error wins). */
void fwdioi_errinfo_set(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                        uint64_t offset);

/** fwdioi_errinfo_set for the failure of system call `call` (fwdioi_syscall_t)
 *  or a reason (FWDIOI_REASON_*). */
void fwdioi_errinfo_set_call(fwdioi_errinfo_t *info, int status, int rank, int sys_errno,
                             uint64_t offset, int call);

/** The error of rank `me`, which set a commit block (its first at `offset`)
 *  where the counts (the close's, or a step's) say `committers` ranks did,
 *  their ranks summing to `rank_sum`: FWDIO_EINVAL for
 *  FWDIOI_REASON_COMMITTERS, other_value the count, other_rank the other
 *  rank when there are two (the sum names it), else -1. */
fwdioi_errinfo_t fwdioi_errinfo_committers(int me, int committers, uint64_t rank_sum,
                                           uint64_t offset);

/** Record the failure of MPI call `call` (fwdioi_mpi_call_t) with return code
 *  `mpi_rc` on `rank` as FWDIO_EMPI, unless an error is there already. */
void fwdioi_errinfo_set_mpi(fwdioi_errinfo_t *info, int rank, int call, int mpi_rc);

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
