/* SPDX-License-Identifier: BSD-3-Clause */
#include "scratch_mounts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

static int make_dir(const char *dir)
{
    return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : errno;
}

int scratch_mount_tmpfs(const char *dir, uint64_t bytes)
{
    char data[64];
    snprintf(data, sizeof data, "size=%" PRIu64, bytes);
    int err = make_dir(dir);
    if (err)
        return err;
    return mount("fwdio-scratch", dir, "tmpfs", 0, data) == 0 ? 0 : errno;
}

int scratch_mount_read_only(const char *dir)
{
    char src[4200];
    snprintf(src, sizeof src, "%s.src", dir);
    int err = make_dir(src);
    if (!err)
        err = make_dir(dir);
    if (err)
        return err;
    if (mount(src, dir, NULL, MS_BIND, NULL) != 0)
        return errno;
    if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
        err = errno;
        umount2(dir, MNT_DETACH);
        return err;
    }
    return 0;
}
