/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_name.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fwdio.h"

static const char *suffix(fwdioi_ckpt_kind_t kind)
{
    return kind == FWDIOI_CKPT_DATA ? ".ckpt" : kind == FWDIOI_CKPT_LOCAL ? ".local" : ".manifest";
}

const char *fwdioi_ckpt_name_check(const char *name)
{
    if (!name || !*name)
        return "the name is empty";
    size_t len = strlen(name);
    if (len > FWDIO_CKPT_NAME_MAX)
        return "the name is longer than FWDIO_CKPT_NAME_MAX (128) characters";
    if (name[0] == '.')
        return "the name starts with '.'";
    if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != len)
        return "the name holds a character other than A-Z a-z 0-9 . _ -";
    return NULL;
}

int fwdioi_ckpt_path(char *out, size_t cap, const char *dir, const char *name, uint64_t version,
                     fwdioi_ckpt_kind_t kind)
{
    if (fwdioi_ckpt_name_check(name))
        return -1;
    if (!dir || !*dir)
        dir = ".";
    int n = snprintf(out, cap, "%s/%s.v%" PRIu64 "%s", dir, name, version, suffix(kind));
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A canonical decimal uint64 of exactly `len` characters at s. */
static int parse_version(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int fwdioi_ckpt_parse_entry(const char *entry, const char *name, fwdioi_ckpt_kind_t kind,
                            uint64_t *version)
{
    size_t elen = strlen(entry), nlen = strlen(name), slen = strlen(suffix(kind));
    /* name ".v" digits suffix */
    if (elen < nlen + 2 + 1 + slen || strncmp(entry, name, nlen) != 0 ||
        strncmp(entry + nlen, ".v", 2) != 0 || strcmp(entry + elen - slen, suffix(kind)) != 0)
        return 0;
    return parse_version(entry + nlen + 2, elen - slen - nlen - 2, version);
}
