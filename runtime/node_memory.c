/* SPDX-License-Identifier: BSD-3-Clause */
#include "node_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Limits at or above this are "no limit" (cgroup v1 writes 2^63 - 1 rounded
 * down to a page). */
#define NO_LIMIT_FLOOR ((uint64_t)1 << 62)

/* The limit in file `path` (a number, or "max"): 0 when none or unreadable. */
static uint64_t read_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char text[64] = "";
    int got = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    if (!got || strncmp(text, "max", 3) == 0)
        return 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || v >= NO_LIMIT_FLOOR)
        return 0;
    return (uint64_t)v;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static uint64_t lower(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* The lowest `file` limit from `base`/`path` up to `base` itself; a `path`
 * not under `base` (another namespace's view) counts from `base` alone. */
static uint64_t walk_up(const char *base, const char *path, const char *file)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s%s", base, path) >= (int)sizeof dir || !is_dir(dir))
        snprintf(dir, sizeof dir, "%s", base);
    size_t base_len = strlen(base);
    uint64_t limit = 0;
    for (;;) {
        char at[4200];
        snprintf(at, sizeof at, "%s/%s", dir, file);
        limit = lower(limit, read_limit(at));
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= base_len || !slash || (size_t)(slash - dir) < base_len)
            break;
        *slash = '\0';
    }
    return limit;
}

/* Whether the comma-separated `list` (of length n) names `name`. */
static int names(const char *list, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i + len <= n;) {
        size_t j = i;
        while (j < n && list[j] != ',')
            j++;
        if (j - i == len && strncmp(list + i, name, len) == 0)
            return 1;
        i = j + 1;
    }
    return 0;
}

uint64_t fwdioi_cgroup_memory_limit(const char *proc_cgroup, const char *root)
{
    uint64_t limit = 0;
    for (const char *line = proc_cgroup; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        const char *c1 = memchr(line, ':', n);
        const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            char path[2048];
            size_t plen = n - (size_t)(c2 + 1 - line);
            if (plen < sizeof path) {
                memcpy(path, c2 + 1, plen);
                path[plen] = '\0';
                if (strcmp(path, "/") == 0)
                    path[0] = '\0';
                char base[2048];
                if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0') { /* v2 */
                    const char *mounts[] = {"", "/unified"};
                    for (int m = 0; m < 2; m++) {
                        snprintf(base, sizeof base, "%s%s", root, mounts[m]);
                        char probe[2100];
                        snprintf(probe, sizeof probe, "%s/cgroup.controllers", base);
                        if (access(probe, R_OK) == 0)
                            limit = lower(limit, walk_up(base, path, "memory.max"));
                    }
                } else if (names(c1 + 1, (size_t)(c2 - c1 - 1), "memory")) { /* v1 */
                    snprintf(base, sizeof base, "%s/memory", root);
                    limit = lower(limit, walk_up(base, path, "memory.limit_in_bytes"));
                }
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    return limit;
}

uint64_t fwdioi_node_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t physical = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    char text[8192];
    size_t got = 0;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f) {
        got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
    }
    text[got] = '\0';
    return lower(physical, fwdioi_cgroup_memory_limit(text, "/sys/fs/cgroup"));
}
