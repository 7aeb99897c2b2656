/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fwdioi_ckpt_list(const char *dir, const char *name, fwdioi_ckpt_kind_t kind,
                     uint64_t **versions, size_t *n)
{
    *versions = NULL;
    *n = 0;
    DIR *d = opendir(dir && *dir ? dir : ".");
    if (!d)
        return -errno;
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        uint64_t v;
        if (!fwdioi_ckpt_parse_entry(e->d_name, name, kind, &v))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            uint64_t *grown = realloc(*versions, cap * sizeof *grown);
            if (!grown) {
                rc = -ENOMEM;
                break;
            }
            *versions = grown;
        }
        (*versions)[(*n)++] = v;
    }
    closedir(d);
    if (rc) {
        free(*versions);
        *versions = NULL;
        *n = 0;
    }
    return rc;
}

const char *fwdioi_ckpt_manifest_load(const char *dir, const char *name, uint64_t version,
                                      fwdioi_ckpt_manifest_t *m)
{
    return fwdioi_ckpt_manifest_load_kind(dir, name, version, FWDIOI_CKPT_MANIFEST, m);
}

const char *fwdioi_ckpt_manifest_load_kind(const char *dir, const char *name, uint64_t version,
                                           fwdioi_ckpt_kind_t kind, fwdioi_ckpt_manifest_t *m)
{
    char path[4096], text[FWDIOI_CKPT_MANIFEST_MAX + 1];
    if (fwdioi_ckpt_path(path, sizeof path, dir, name, version, kind))
        return "path too long";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "no manifest";
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd, text + len, sizeof text - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            close(fd);
            return "the manifest cannot be read";
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len == sizeof text) {
            close(fd);
            return "the manifest is too long";
        }
    }
    close(fd);
    const char *why = fwdioi_ckpt_manifest_parse(text, len, m);
    if (why)
        return why;
    if (strcmp(m->name, name) != 0 || m->version != version)
        return "the manifest names another set or version";
    if (kind == FWDIOI_CKPT_LOCAL)
        return NULL; /* the data may be in the local stores only */
    struct stat st;
    if (fwdioi_ckpt_path(path, sizeof path, dir, name, version, FWDIOI_CKPT_DATA) ||
        stat(path, &st) != 0)
        return "the data file is missing";
    if ((uint64_t)st.st_size != m->size)
        return "the data file's size is not the manifest's";
    return NULL;
}

int fwdioi_ckpt_remove(const char *dir, const char *name, uint64_t version)
{
    char path[4096];
    int rc = 0;
    const fwdioi_ckpt_kind_t order[3] = {FWDIOI_CKPT_MANIFEST, FWDIOI_CKPT_LOCAL,
                                         FWDIOI_CKPT_DATA};
    for (int i = 0; i < 3; i++) {
        if (fwdioi_ckpt_path(path, sizeof path, dir, name, version, order[i]))
            return -ENAMETOOLONG;
        if (unlink(path) != 0 && errno != ENOENT && rc == 0)
            rc = -errno;
    }
    return rc;
}
