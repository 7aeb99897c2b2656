/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The file-system calls fwdio makes, by number and name (syscall.c): as
 * error reports and FWDIO_FAULT rules name them. Below both the calls
 * (sysio.h) and their fault injection (fault.h). Any thread.
 */
#ifndef FWDIOI_SYSCALL_H
#define FWDIOI_SYSCALL_H

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

#endif
