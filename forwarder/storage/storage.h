/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The storage backend: the POSIX calls a writer makes, wrapped as jobs for the
 * runtime's I/O thread. Each job records the first error with the failing
 * call, its errno and offset; the session turns it into the file's status.
 * Once a write of a file has failed, its later writes and its fdatasync are
 * skipped (the close still runs), so a failed file reaches its report
 * without waiting for more of a full, broken or slow disk: the file's jobs
 * share a flag for it (`write_failed`), kept with the file's descriptor.
 */
#ifndef FWDIOI_STORAGE_H
#define FWDIOI_STORAGE_H

#include "storage/commit_set.h"
#include "storage/failover.h"
#include "storage/sysio.h"
#include "ranges.h"
#include "runtime.h"

#include <stdint.h>

typedef enum fwdioi_storage_kind {
    FWDIOI_STORAGE_OPEN,   /* open (and, for the first writer, truncate + size) */
    FWDIOI_STORAGE_WRITE,  /* pwrite the extents of one assembly buffer */
    FWDIOI_STORAGE_FINISH, /* fdatasync if durable, then close */
    FWDIOI_STORAGE_SYNC,   /* a stream's step end: fdatasync if durable; done after
                              every earlier job of the runtime */
    FWDIOI_STORAGE_COMMIT, /* after all data is durable: commit block, rename */
    FWDIOI_STORAGE_READ    /* a reader: pread one unit (fwdio_open_read) */
} fwdioi_storage_kind_t;

/* File bytes [offset, offset + len) to write from src (not owned). */
typedef struct fwdioi_segment {
    uint64_t offset;
    const uint8_t *src;
    uint64_t len;
} fwdioi_segment_t;

typedef struct fwdioi_storage_job {
    fwdioi_io_job_t io;
    fwdioi_storage_kind_t kind;
    void (*on_done)(struct fwdioi_storage_job *job); /* progress thread */
    void *owner;

    int fd;
    /* WRITE, SYNC, FINISH of a file written: the file's flag that one of its
     * writes failed (the writer's `write_failed`, write/writer.c), set by the WRITE that
     * fails and read by the jobs after it; NULL: no write can fail (a
     * reader's close). The file's jobs run in order, one at a time, so it
     * needs no lock. */
    int *write_failed;
    /* WRITE, SYNC, FINISH of a writer's file in a node-local store: the writer's
     * failover (failover.h), shared by the file's jobs as write_failed is:
     * a local pwrite or fdatasync that fails moves the file to its target
     * instead of failing it. NULL: no failover (a file written straight to
     * its target) */
    fwdioi_failover_t *failover;
    /* OPEN */
    const char *path;
    uint64_t size;
    int sets_length;
    int keeps_prefix; /* the length set keeps the bytes below it (no O_TRUNC) */
    int no_create;    /* the path must exist (no O_CREAT: options.must_exist) */
    int make_dirs;    /* create the missing directories of path first (0777
                         less the umask), as mkdir -p */
    int read_only;    /* a reader's open: O_RDONLY, and `size` is set to the
                         file's (a directory fails with EISDIR) */
    /* the node-local tier: when the file system of `path` has fewer than
     * need_free bytes free (statvfs, after make_dirs), open fallback_path
     * instead (O_CREAT, no make_dirs, its length set to fallback_size with
     * fallback_sets_length) and set fell_back; need_free 0: no check */
    uint64_t need_free;
    const char *fallback_path;
    uint64_t fallback_size;
    int fallback_sets_length, fell_back;
    /* the node-local tier, a stream's writer: once path is open, remove
     * forget_path (NULL: none; missing is fine), create prepare_path
     * (O_CREAT) and, with prepare_sets_length, set its length to
     * prepare_size, as the stream's open would have done to it */
    const char *prepare_path, *forget_path;
    uint64_t prepare_size;
    int prepare_sets_length;
    /* WRITE, buffered: buf (owned) holds file bytes from base; the extents,
     * relative to base, are written */
    uint8_t *buf;
    uint64_t buf_size; /* bytes the owner counts for the job (buf or segments,
                          the job's bookkeeping) until it is done */
    uint64_t base;
    fwdioi_range_t *extents;
    size_t nextents;
    /* WRITE, gathered (nsegs > 0): the segments (the array is owned, their
     * bytes are not), written in order */
    fwdioi_segment_t *segs;
    size_t nsegs, segs_cap;
    /* COMMIT: src (not owned) holds [base, base + len); the segments, if
     * any, are written after it, in order (a stream's blocks of a step) */
    const uint8_t *src;
    uint64_t len;
    void *hold; /* what keeps src or the segments' bytes alive; released by
                   the owner's on_done */
    /* READ: fill dst (not owned) with the file's [base, base + len) */
    uint8_t *dst;
    /* FINISH, SYNC */
    int durable;
    /* SYNC of a stream's writer in a node-local store whose steps drain one
     * by one (take_fresh): out, the bytes the writer's jobs wrote locally
     * since the last step's SYNC (fwdioi_failover_take_fresh; malloc'ed,
     * the taker frees it; NULL when none or the failover moved) */
    int take_fresh;
    fwdioi_range_t *fresh;
    size_t nfresh;
    /* COMMIT: path is the file written. Unless `discard`, write the commit
     * block (src, len at base; len may be 0) and make it durable, then, when
     * `target` is set, rename path over it and sync the directory. With
     * `discard` (the file failed), remove path if `target` is set (it is a
     * temporary), and write nothing. */
    const char *target;
    int discard;

    /* results */
    double seconds; /* time in the system calls */
    uint64_t bytes_written; /* WRITE: bytes pwrite took; READ: bytes pread gave */
    int status;
    int sys_errno;
    uint64_t err_offset;
    int err_call; /* the failing call (fwdioi_syscall_t, sysio.h) */
    int err_on_target; /* with a failover: the failing call was on the target */
    double fail_time; /* when the failing call returned (fwdioi_now), 0 if none */
} fwdioi_storage_job_t;

/** Allocate a job of `kind` that calls on_done(job) on the progress thread. */
fwdioi_storage_job_t *fwdioi_storage_job_new(fwdioi_storage_kind_t kind, void *owner,
                                             void (*on_done)(fwdioi_storage_job_t *));
/** Append a segment to a WRITE job; one that continues the last segment in
 *  the file and in memory extends it. 0, or -1 when out of memory. */
int fwdioi_storage_job_add_segment(fwdioi_storage_job_t *job, uint64_t offset,
                                   const uint8_t *src, uint64_t len);
/** The blocks of `set` as the segments of a COMMIT job, in order (their
 *  bytes stay the set's). 0, or -1 when out of memory. */
int fwdioi_storage_job_add_blocks(fwdioi_storage_job_t *job, const fwdioi_commit_set_t *set);
/** mkdir -p of the directory of `path`: every missing component, in order
 *  (0777 less the umask). 0, or -1 with errno (an existing non-directory is
 *  ENOTDIR) (an I/O thread). */
int fwdioi_make_parents(const char *path);

/** Free a job and the buffers it owns. */
void fwdioi_storage_job_free(fwdioi_storage_job_t *job);

#endif
