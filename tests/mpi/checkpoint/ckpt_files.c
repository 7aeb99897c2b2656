/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt_files.h"

#include "test_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ckpt_exists(const char *dir, const char *name, uint64_t version, const char *suffix)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.v%llu.%s", dir, name, (unsigned long long)version, suffix);
    return access(p, F_OK) == 0;
}

void ckpt_check_bytes(const char *dir, const char *name, uint64_t version, uint64_t size,
                      unsigned char (*byte_of)(uint64_t version, uint64_t offset))
{
    if (tc_rank != 0)
        return;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.v%llu.ckpt", dir, name, (unsigned long long)version);
    FILE *f = fopen(p, "rb");
    if (!f) {
        tc_fail("%s: cannot open: %s", p, strerror(errno));
        return;
    }
    uint64_t bad = 0, n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        bad += (unsigned char)c != byte_of(version, n++);
    fclose(f);
    TC_CHECK(n == size && bad == 0, "%s: %llu bytes (want %llu), %llu wrong", p,
             (unsigned long long)n, (unsigned long long)size, (unsigned long long)bad);
}
