/* SPDX-License-Identifier: BSD-3-Clause */
/* The system calls' names (syscall.h). */
#include "storage/syscall.h"

#include <string.h>

static const char *const call_names[FWDIOI_CALL_COUNT] = {
    [FWDIOI_CALL_NONE] = "",           [FWDIOI_CALL_OPEN] = "open",
    [FWDIOI_CALL_FTRUNCATE] = "ftruncate", [FWDIOI_CALL_PWRITE] = "pwrite",
    [FWDIOI_CALL_FDATASYNC] = "fdatasync", [FWDIOI_CALL_CLOSE] = "close",
    [FWDIOI_CALL_RENAME] = "rename",   [FWDIOI_CALL_UNLINK] = "unlink",
    [FWDIOI_CALL_FSYNC_DIR] = "fsync_dir", [FWDIOI_CALL_PREAD] = "pread",
    [FWDIOI_CALL_FSTAT] = "fstat",     [FWDIOI_CALL_SHM_COMMIT] = "shm_commit",
    [FWDIOI_CALL_MKDIR] = "mkdir", [FWDIOI_CALL_STATVFS] = "statvfs",
};

const char *fwdioi_syscall_name(int call)
{
    return call > FWDIOI_CALL_NONE && call < FWDIOI_CALL_COUNT ? call_names[call] : "";
}

fwdioi_syscall_t fwdioi_syscall_from_name(const char *name)
{
    for (int c = FWDIOI_CALL_NONE + 1; c < FWDIOI_CALL_COUNT; c++)
        if (!strcmp(name, call_names[c]))
            return (fwdioi_syscall_t)c;
    return FWDIOI_CALL_NONE;
}
