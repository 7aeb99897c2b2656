/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file-system calls writers (and readers) make, in one place: storage jobs and the
 * commit step call these instead of the system directly, so that the fault
 * injection of FWDIO_FAULT (fault.h) can stand in for any of them. Each
 * behaves as the system call of the same name: -1 with errno on failure.
 * Any thread.
 */
#ifndef FWDIOI_SYSIO_H
#define FWDIOI_SYSIO_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

/** The calls, as error reports and FWDIO_FAULT rules name them. */
typedef enum fwdioi_syscall {
    FWDIOI_CALL_NONE = 0, /* no system call (overlap, out of memory, ...) */
    FWDIOI_CALL_OPEN,
    FWDIOI_CALL_FTRUNCATE,
    FWDIOI_CALL_PWRITE,
    FWDIOI_CALL_FDATASYNC,
    FWDIOI_CALL_CLOSE,
    FWDIOI_CALL_RENAME,
    FWDIOI_CALL_UNLINK,
    FWDIOI_CALL_FSYNC_DIR,
    FWDIOI_CALL_PREAD,
    FWDIOI_CALL_FSTAT,
    FWDIOI_CALL_SHM_COMMIT, /* the node-shared area commits memory (node_area.c) */
    FWDIOI_CALL_MKDIR,      /* the node-local tier makes its directory */
    FWDIOI_CALL_STATVFS,    /* the node-local tier asks its store's free space */
    FWDIOI_CALL_COUNT
} fwdioi_syscall_t;

/** "pwrite", "fsync_dir", ...; "" for FWDIOI_CALL_NONE or a bad value. */
const char *fwdioi_syscall_name(int call);
/** The call named `name` (as fwdioi_syscall_name spells it), or FWDIOI_CALL_NONE. */
fwdioi_syscall_t fwdioi_syscall_from_name(const char *name);

int fwdioi_sys_open(const char *path, int flags, mode_t mode);
int fwdioi_sys_ftruncate(int fd, off_t length);
/** pwrite; returning 0 for len > 0 (no progress) counts as a failure below. */
ssize_t fwdioi_sys_pwrite(int fd, const void *buf, size_t len, off_t offset);
/** pread; the fault rules' short and stall effects apply (stall returns 0,
 *  as at the end of the file). */
ssize_t fwdioi_sys_pread(int fd, void *buf, size_t len, off_t offset);
/** fstat (no fault rules: it is how a reader learns the size). */
int fwdioi_sys_fstat(int fd, struct stat *st);
int fwdioi_sys_fdatasync(int fd);
/** close; the descriptor is released even when it fails, as Linux does. */
int fwdioi_sys_close(int fd);
int fwdioi_sys_rename(const char *from, const char *to);
int fwdioi_sys_unlink(const char *path);
int fwdioi_sys_mkdir(const char *path, mode_t mode);
/** statvfs; a fault rule's error makes it report a full file system (no
 *  free blocks) instead of failing, as a full local store looks. */
int fwdioi_sys_statvfs(const char *path, struct statvfs *st);
/** open(dir) + fsync + close: makes a rename in `dir` durable. */
int fwdioi_sys_fsync_dir(const char *dir);

/**
 * When the first of these calls failed in this process (returned -1 other
 * than EINTR, or a pwrite that wrote nothing), as CLOCK_MONOTONIC seconds;
 * 0 if none failed since fwdioi_sys_failure_reset(). Lets bench/fault_report
 * time a fault, real or injected, to its report.
 */
double fwdioi_sys_first_failure(void);
void fwdioi_sys_failure_reset(void);

#endif
