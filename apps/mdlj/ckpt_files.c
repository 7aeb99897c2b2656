/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "ckpt_files.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ckpt_path(char *out, size_t cap, const char *base, int64_t step)
{
    int len = snprintf(out, cap, "%s.%" PRId64, base, step);
    return len < 0 || (size_t)len >= cap ? -1 : 0;
}

void ckpt_split_base(const char *base, char *dir, size_t cap, const char **name)
{
    const char *slash = strrchr(base, '/');
    if (!slash) {
        snprintf(dir, cap, ".");
        *name = base;
    } else if (slash == base) {
        snprintf(dir, cap, "/");
        *name = slash + 1;
    } else {
        snprintf(dir, cap, "%.*s", (int)(slash - base), base);
        *name = slash + 1;
    }
}

static int compare_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

long ckpt_list(const char *base, int64_t **steps)
{
    char dir[4096];
    const char *name;
    ckpt_split_base(base, dir, sizeof dir, &name);
    *steps = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t len = strlen(name), n = 0, cap = 0;
    int64_t *out = NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, name, len) != 0 || s[len] != '.' || s[len + 1] == '\0')
            continue;
        const char *digits = s + len + 1;
        if (strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 18)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(out, cap * sizeof *out);
            if (!grown) {
                free(out);
                closedir(d);
                return -1;
            }
            out = grown;
        }
        out[n++] = strtoll(digits, NULL, 10);
    }
    closedir(d);
    qsort(out, n, sizeof *out, compare_desc);
    *steps = out;
    return (long)n;
}

void ledger_init(md_ckpt_ledger_t *l, const char *base, int64_t resumed_from)
{
    memset(l, 0, sizeof *l);
    l->base = base;
    l->newest[0] = resumed_from;
    l->newest[1] = -1;
}

void ledger_free(md_ckpt_ledger_t *l)
{
    free(l->in_flight);
    l->in_flight = NULL;
    l->n_in_flight = l->cap_in_flight = 0;
}

int ledger_started(md_ckpt_ledger_t *l, int64_t step)
{
    if (l->n_in_flight == l->cap_in_flight) {
        size_t cap = l->cap_in_flight ? 2 * l->cap_in_flight : 8;
        int64_t *grown = realloc(l->in_flight, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->in_flight = grown;
        l->cap_in_flight = cap;
    }
    l->in_flight[l->n_in_flight++] = step;
    return 0;
}

static void remove_older(const md_ckpt_ledger_t *l, int64_t keep_from)
{
    int64_t *steps;
    long n = ckpt_list(l->base, &steps);
    for (long i = 0; i < n; i++) {
        if (steps[i] >= keep_from)
            continue;
        char path[4096];
        if (ckpt_path(path, sizeof path, l->base, steps[i]) == 0 && unlink(path) != 0 &&
            errno != ENOENT)
            fprintf(stderr, "mdlj: warning: cannot remove old checkpoint %s: %s\n", path,
                    strerror(errno));
    }
    free(steps);
}

void ledger_finished(md_ckpt_ledger_t *l, int64_t step, int ok, int remove_old)
{
    for (size_t i = 0; i < l->n_in_flight; i++) {
        if (l->in_flight[i] == step) {
            l->in_flight[i] = l->in_flight[--l->n_in_flight];
            break;
        }
    }
    if (!ok)
        return;
    if (step > l->newest[0]) {
        l->newest[1] = l->newest[0];
        l->newest[0] = step;
    } else if (step > l->newest[1]) {
        l->newest[1] = step;
    }
    if (!remove_old || l->newest[1] < 0)
        return;
    int64_t keep_from = l->newest[1];
    for (size_t i = 0; i < l->n_in_flight; i++)
        if (l->in_flight[i] < keep_from)
            keep_from = l->in_flight[i];
    remove_older(l, keep_from);
}
