/* SPDX-License-Identifier: BSD-3-Clause */
#include "local/local_name.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int fwdioi_local_expand(const char *pattern, const char *host, char *out, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return -1;
    out[0] = '\0';
    if (!pattern || !*pattern)
        return -1;
    for (const char *p = pattern; *p; p++) {
        const char *piece = p;
        size_t n = 1;
        if (*p == '%') {
            if (p[1] == 'h') {
                piece = host;
                n = strlen(host);
            } else if (p[1] != '%') {
                out[0] = '\0'; /* "%x" or a lone '%' at the end: a typo, not a name */
                return -1;
            }
            p++;
        }
        if (used + n >= len) {
            out[0] = '\0';
            return -1;
        }
        memcpy(out + used, piece, n);
        used += n;
    }
    out[used] = '\0';
    return 0;
}

int fwdioi_local_file_name(const char *dir, const char *path_key, int writer, char *out,
                           size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: stable across runs and builds */
    for (const char *c = path_key; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    const char *slash = strrchr(path_key, '/');
    const char *name = slash ? slash + 1 : path_key;
    int n = snprintf(out, len, "%s%s%s.%016" PRIx64 ".w%d.fwdio-local", dir,
                     dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name, h, writer);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}
