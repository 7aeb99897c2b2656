/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdioi_cgroup_memory_limit against made-up control group trees: cgroup v1
 * (the memory controller alone or with others in one hierarchy), v2 (at the
 * root or under unified/, in a hybrid layout), nested limits (the lowest
 * ancestor wins), "max" and v1's 2^63 - 1 as no limit, a path seen from
 * another namespace, and files that are missing or unreadable.
 */
#include "node_memory.h"

#include "unit_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

/* Creates every directory of root/`rel` and writes `text` into root/`rel`/`file`. */
static void put(const char *rel, const char *file, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
    if (!file)
        return;
    char at[1200];
    snprintf(at, sizeof at, "%s/%s", path, file);
    FILE *f = fopen(at, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void fresh_root(void)
{
    if (root[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        CHECK(system(cmd) == 0);
    }
    snprintf(root, sizeof root, "/tmp/fwdio-unit-cgroup-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
}

static uint64_t limit(const char *proc)
{
    return fwdioi_cgroup_memory_limit(proc, root);
}

int main(void)
{
    const uint64_t G = (uint64_t)1 << 30;

    /* v1, memory controller alone: the job's limit, below the parent's */
    fresh_root();
    put("memory", "memory.limit_in_bytes", "9223372036854771712\n");
    put("memory/slurm", "memory.limit_in_bytes", "68719476736\n");
    put("memory/slurm/uid_0/job_7", "memory.limit_in_bytes", "8589934592\n");
    const char *v1 = "11:pids:/\n4:memory:/slurm/uid_0/job_7\n3:cpu,cpuacct:/\n0::/\n";
    CHECK(limit(v1) == 8 * G);
    /* a parent's lower limit bounds the child */
    put("memory/slurm", "memory.limit_in_bytes", "4294967296\n");
    CHECK(limit(v1) == 4 * G);
    /* no limit anywhere: 0 */
    put("memory/slurm", "memory.limit_in_bytes", "9223372036854771712\n");
    put("memory/slurm/uid_0/job_7", "memory.limit_in_bytes", "9223372036854771712\n");
    CHECK(limit(v1) == 0);
    /* the controller named among others in one hierarchy */
    put("memory/slurm/uid_0/job_7", "memory.limit_in_bytes", "1073741824\n");
    CHECK(limit("5:cpuset,memory:/slurm/uid_0/job_7\n") == G);
    /* "memoryx" is not "memory" */
    CHECK(limit("5:memoryx:/slurm/uid_0/job_7\n") == 0);
    /* a path from another namespace: the root's own limit counts */
    put("memory", "memory.limit_in_bytes", "2147483648\n");
    CHECK(limit("4:memory:/process_api/4238f38d\n") == 2 * G);
    CHECK(limit("4:memory:/\n") == 2 * G);

    /* v2 at the root of a unified mount */
    fresh_root();
    put("", "cgroup.controllers", "cpu memory pids\n");
    put("system.slice/job.scope", "memory.max", "3221225472\n");
    put("system.slice", "memory.max", "max\n");
    CHECK(limit("0::/system.slice/job.scope\n") == 3 * G);
    put("system.slice", "memory.max", "1073741824\n");
    CHECK(limit("0::/system.slice/job.scope\n") == G);
    put("system.slice/job.scope", "memory.max", "max\n");
    put("system.slice", "memory.max", "max\n");
    CHECK(limit("0::/system.slice/job.scope\n") == 0);
    /* no cgroup.controllers: not a v2 mount, nothing read */
    fresh_root();
    put("system.slice/job.scope", "memory.max", "1073741824\n");
    CHECK(limit("0::/system.slice/job.scope\n") == 0);

    /* hybrid: v2 under unified/, v1's memory controller beside it; the lower wins */
    fresh_root();
    put("unified", "cgroup.controllers", "\n");
    put("unified/a", "memory.max", "5368709120\n");
    put("memory/a", "memory.limit_in_bytes", "6442450944\n");
    CHECK(limit("4:memory:/a\n0::/a\n") == 5 * G);

    /* nothing usable: empty text, garbage, no line end, unreadable values */
    CHECK(limit("") == 0);
    CHECK(limit("garbage without colons") == 0);
    CHECK(limit("4:memory") == 0);
    fresh_root();
    put("memory/a", "memory.limit_in_bytes", "not a number\n");
    CHECK(limit("4:memory:/a") == 0);

    /* this machine: whatever it has, never above its physical memory */
    uint64_t node = fwdioi_node_memory();
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    CHECK(node > 0 && node <= (uint64_t)pages * (uint64_t)page);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
    return unit_result("test_cgroup_memory");
}
