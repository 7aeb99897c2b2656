/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Names in the node-local tier (local_dir): the directory a rank uses, with
 * "%h" replaced by its host name, and the file each writer of a file keeps
 * there. Pure functions, any thread.
 */
#ifndef FWDIOI_LOCAL_NAME_H
#define FWDIOI_LOCAL_NAME_H

#include <stddef.h>

/**
 * Expand `pattern` into `out` (`len` bytes): "%h" becomes `host`, "%%" a
 * single '%'. Returns 0, or -1 when the pattern holds another '%' sequence
 * (or ends in '%'), is empty, or does not fit in `len` (out is then "").
 */
int fwdioi_local_expand(const char *pattern, const char *host, char *out, size_t len);

/**
 * The local file of writer `writer` of the file whose resolved path is
 * `path_key`, in directory `dir`: "<dir>/<name>.<hash>.w<writer>.fwdio-local",
 * <name> the path's last component and <hash> 16 hex digits of the whole path
 * (two targets with one name do not share a local file). The same on every
 * run, so a later stage's restart finds it. Returns 0, or -1 when it does
 * not fit in `len`.
 */
int fwdioi_local_file_name(const char *dir, const char *path_key, int writer, char *out,
                           size_t len);

#endif
