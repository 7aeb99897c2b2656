/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FWDIO_FAULT: the rule grammar (accepted and refused specs), which calls a
 * rule fires on (nth, from, rank, path), and the injected calls of sysio.c on
 * real files in a temporary directory (short writes still write the right
 * bytes, close releases the descriptor even when it fails, path rules follow
 * descriptors).
 */
#include "storage/fault.h"
#include "storage/sysio.h"
#include "fwdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                            \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fputc('\n', stderr);                                                            \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)

static fwdioi_fault_rules_t rules;

static int parse(const char *spec, int rank)
{
    char why[512] = "";
    int rc = fwdioi_fault_parse(spec, rank, &rules, why, sizeof why);
    if (rc != 0)
        CHECK(why[0], "no reason given for refusing \"%s\"", spec);
    return rc;
}

static void test_accepted(void)
{
    CHECK(parse("pwrite:eio:nth=3:rank=1", 0) == 0 && rules.n == 1, "nth rule refused");
    fwdioi_fault_rule_t *r = &rules.rule[0];
    CHECK(r->call == FWDIOI_CALL_PWRITE && r->kind == FWDIOI_FAULT_ERROR && r->err == EIO &&
              r->first == 3 && r->last == 3 && r->rank == 1 && !r->path[0],
          "pwrite:eio:nth=3:rank=1 parsed wrong");

    CHECK(parse("fdatasync:errno=122:from=2:path=ckpt/a=b", 0) == 0 && rules.n == 1,
          "from/path rule refused");
    r = &rules.rule[0];
    CHECK(r->call == FWDIOI_CALL_FDATASYNC && r->err == 122 && r->first == 2 && r->last == 0 &&
              r->rank == -1 && !strcmp(r->path, "ckpt/a=b"),
          "fdatasync:errno=122:from=2:path=ckpt/a=b parsed wrong");

    CHECK(parse(" pwrite:short ; pwrite:stall:nth=2;open:slow=250;", 0) == 0 && rules.n == 3,
          "three rules with blanks and a trailing ';' refused");
    CHECK(rules.rule[0].kind == FWDIOI_FAULT_SHORT && rules.rule[1].kind == FWDIOI_FAULT_STALL &&
              rules.rule[2].kind == FWDIOI_FAULT_SLOW && rules.rule[2].delay_ms == 250 &&
              rules.rule[2].call == FWDIOI_CALL_OPEN,
          "short/stall/slow parsed wrong");

    static const char *const calls[] = {"open",  "ftruncate", "pwrite", "fdatasync",
                                        "close", "rename",    "unlink", "fsync_dir"};
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "%s:erofs", calls[i]);
        CHECK(parse(spec, 0) == 0 && rules.rule[0].call == fwdioi_syscall_from_name(calls[i]) &&
                  !strcmp(fwdioi_syscall_name(rules.rule[0].call), calls[i]),
              "%s refused or misnamed", spec);
    }
    static const struct {
        const char *name;
        int err;
    } errs[] = {{"eio", EIO}, {"enospc", ENOSPC}, {"efbig", EFBIG}, {"erofs", EROFS},
                {"edquot", EDQUOT}, {"errno=4", EINTR}};
    for (size_t i = 0; i < sizeof errs / sizeof *errs; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "close:%s", errs[i].name);
        CHECK(parse(spec, 0) == 0 && rules.rule[0].err == errs[i].err, "%s parsed wrong", spec);
    }
    CHECK(parse(NULL, 0) == 0 && rules.n == 0, "NULL spec");
    CHECK(parse("  ;; ", 0) == 0 && rules.n == 0, "blank spec");
}

static void test_refused(void)
{
    static const char *const bad[] = {
        "pwrit:eio",          "pwrite",           "pwrite:",           "pwrite:eoi",
        "fdatasync:short",    "open:stall",       "pwrite:eio:nth=0",  "pwrite:eio:nth=x",
        "pwrite:eio:nth=1:from=2", "pwrite:eio:rank=-1", "pwrite:eio:when=3", "pwrite:errno=0",
        "pwrite:errno=5000",  "pwrite:slow=0",    "pwrite:slow=10ms",  "pwrite:eio:path=",
        "pwrite:eio:nth",     "pwrite:eio:nth=3x", ":eio",             "pwrite:eio::",
        "pwrite:eio;fsync:eio",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(parse(bad[i], 0) != 0, "\"%s\" accepted", bad[i]);

    char many[2048] = "";
    for (int i = 0; i <= FWDIOI_FAULT_MAX_RULES; i++)
        strcat(many, "pwrite:eio;");
    CHECK(parse(many, 0) != 0, "%d rules accepted", FWDIOI_FAULT_MAX_RULES + 1);

    char long_path[FWDIOI_FAULT_MAX_PATH + 64] = "pwrite:eio:path=";
    size_t used = strlen(long_path);
    memset(long_path + used, 'x', FWDIOI_FAULT_MAX_PATH);
    long_path[used + FWDIOI_FAULT_MAX_PATH] = '\0';
    CHECK(parse(long_path, 0) != 0, "a path of %d characters accepted", FWDIOI_FAULT_MAX_PATH);

    char why[512] = "";
    fwdioi_fault_parse("pwrite:eio;close:enospace", 0, &rules, why, sizeof why);
    CHECK(strstr(why, "rule 2") && strstr(why, "enospace"), "reason \"%s\" does not say where",
          why);
}

static fwdioi_fault_t decide(fwdioi_syscall_t call, const char *path)
{
    return fwdioi_fault_decide(&rules, call, path, NULL);
}

static void test_matching(void)
{
    parse("pwrite:eio:nth=3", 0);
    for (int i = 1; i <= 5; i++) {
        fwdioi_fault_t f = decide(FWDIOI_CALL_PWRITE, "f");
        CHECK((f.kind == FWDIOI_FAULT_ERROR) == (i == 3) && (i != 3 || f.err == EIO),
              "nth=3: call %d got kind %d", i, f.kind);
        CHECK(decide(FWDIOI_CALL_FDATASYNC, "f").kind == FWDIOI_FAULT_NONE,
              "a pwrite rule fired on fdatasync");
    }

    parse("pwrite:stall:from=2", 0);
    for (int i = 1; i <= 4; i++)
        CHECK((decide(FWDIOI_CALL_PWRITE, NULL).kind == FWDIOI_FAULT_STALL) == (i >= 2),
              "from=2: call %d", i);

    parse("pwrite:eio:rank=1", 0);
    CHECK(decide(FWDIOI_CALL_PWRITE, NULL).kind == FWDIOI_FAULT_NONE, "rank=1 fired on rank 0");
    CHECK(rules.rule[0].calls == 0, "rank=1 counted a call of rank 0");
    parse("pwrite:eio:rank=1", 1);
    CHECK(decide(FWDIOI_CALL_PWRITE, NULL).kind == FWDIOI_FAULT_ERROR, "rank=1 did not fire");

    parse("pwrite:enospc:nth=2:path=ckpt", 0);
    CHECK(decide(FWDIOI_CALL_PWRITE, "/d/other").kind == FWDIOI_FAULT_NONE, "path: other file");
    CHECK(decide(FWDIOI_CALL_PWRITE, NULL).kind == FWDIOI_FAULT_NONE, "path: unknown file");
    CHECK(decide(FWDIOI_CALL_PWRITE, "/d/ckpt.1").kind == FWDIOI_FAULT_NONE,
          "path: first matching call");
    CHECK(decide(FWDIOI_CALL_PWRITE, "/d/other").kind == FWDIOI_FAULT_NONE, "path: other again");
    CHECK(decide(FWDIOI_CALL_PWRITE, "/d/ckpt.1").kind == FWDIOI_FAULT_ERROR,
          "path: second matching call did not fire");

    parse("rename:eio:path=target", 0);
    CHECK(fwdioi_fault_decide(&rules, FWDIOI_CALL_RENAME, "/d/.tmp", "/d/target").kind ==
              FWDIOI_FAULT_ERROR,
          "rename: the target path did not match");

    parse("pwrite:slow=30;pwrite:eio:nth=2;pwrite:enospc;pwrite:slow=20:nth=2", 0);
    fwdioi_fault_t f = decide(FWDIOI_CALL_PWRITE, NULL);
    CHECK(f.kind == FWDIOI_FAULT_ERROR && f.err == ENOSPC && f.delay_ms == 30 && f.rule == 3,
          "call 1: kind %d err %d delay %u rule %d", f.kind, f.err, f.delay_ms, f.rule);
    f = decide(FWDIOI_CALL_PWRITE, NULL);
    CHECK(f.kind == FWDIOI_FAULT_ERROR && f.err == EIO && f.delay_ms == 50 && f.rule == 2,
          "call 2: the first firing error rule must win, delays add up (kind %d err %d delay "
          "%u rule %d)",
          f.kind, f.err, f.delay_ms, f.rule);
}

/* ---- the installed rules, through sysio.c ---- */

static char dir[] = "/tmp/fwdio-unit-fault-XXXXXX";

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static int open_file(const char *name)
{
    char path[256];
    path_of(path, sizeof path, name);
    return fwdioi_sys_open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
}

static int file_matches(int fd, const unsigned char *want, size_t len)
{
    unsigned char got[4096];
    if (len > sizeof got || pread(fd, got, len, 0) != (ssize_t)len)
        return 0;
    return memcmp(got, want, len) == 0;
}

static void test_installed(void)
{
    unsigned char data[4096];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7 + 3);

    CHECK(fwdioi_fault_configure("pwrite:bogus", 0) == FWDIO_EINVAL, "bad spec installed");

    /* short: every call makes progress, the bytes end up right */
    CHECK(fwdioi_fault_configure("pwrite:short", 0) == FWDIO_OK, "short");
    int fd = open_file("short");
    CHECK(fwdioi_sys_pwrite(fd, data, 1000, 0) == 500, "short write of 1000 bytes");
    size_t done = 0;
    int calls = 0;
    while (done < sizeof data) {
        ssize_t n = fwdioi_sys_pwrite(fd, data + done, sizeof data - done, (off_t)done);
        if (n <= 0)
            break;
        done += (size_t)n;
        calls++;
    }
    CHECK(done == sizeof data && calls > 1 && file_matches(fd, data, sizeof data),
          "short writes: %zu bytes in %d calls, or wrong bytes", done, calls);
    CHECK(fwdioi_sys_close(fd) == 0, "close");

    /* stall: nothing written, 0 returned, noted as a failure */
    fwdioi_sys_failure_reset();
    CHECK(fwdioi_sys_first_failure() == 0.0, "failure time not reset");
    CHECK(fwdioi_fault_configure("pwrite:stall:nth=1", 0) == FWDIO_OK, "stall");
    fd = open_file("stall");
    CHECK(fwdioi_sys_pwrite(fd, data, 100, 0) == 0, "stalled pwrite did not return 0");
    CHECK(fwdioi_sys_first_failure() > 0.0, "a stalled pwrite is not noted as a failure");
    CHECK(fwdioi_sys_pwrite(fd, data, 100, 0) == 100 && file_matches(fd, data, 100),
          "the pwrite after nth=1 failed");
    fwdioi_sys_close(fd);

    /* path rules follow descriptors; close fails but releases the descriptor */
    CHECK(fwdioi_fault_configure("pwrite:enospc:path=victim;close:eio:path=victim;"
                                 "fdatasync:efbig:path=victim",
                                 0) == FWDIO_OK,
          "path rules");
    int victim = open_file("victim.dat");
    int other = open_file("other.dat");
    errno = 0;
    CHECK(fwdioi_sys_pwrite(victim, data, 10, 0) == -1 && errno == ENOSPC, "victim pwrite");
    CHECK(fwdioi_sys_pwrite(other, data, 10, 0) == 10, "other pwrite");
    errno = 0;
    CHECK(fwdioi_sys_fdatasync(victim) == -1 && errno == EFBIG, "victim fdatasync");
    CHECK(fwdioi_sys_fdatasync(other) == 0, "other fdatasync");
    errno = 0;
    CHECK(fwdioi_sys_close(victim) == -1 && errno == EIO, "victim close");
    CHECK(fcntl(victim, F_GETFD) == -1 && errno == EBADF, "a failed close left the fd open");
    /* the number is free again: a new file under it is not the victim */
    int reused = open_file("third.dat");
    CHECK(reused == victim, "descriptor %d not reused (got %d)", victim, reused);
    CHECK(fwdioi_sys_pwrite(reused, data, 10, 0) == 10, "a reused descriptor kept the old path");
    CHECK(fwdioi_sys_close(reused) == 0 && fwdioi_sys_close(other) == 0, "close");

    /* the other calls */
    char from[256], to[256];
    path_of(from, sizeof from, "other.dat");
    path_of(to, sizeof to, "renamed.dat");
    CHECK(fwdioi_fault_configure("rename:erofs:nth=1;unlink:errno=13;fsync_dir:eio;"
                                 "open:edquot:path=nope;ftruncate:efbig",
                                 0) == FWDIO_OK,
          "other calls");
    errno = 0;
    CHECK(fwdioi_sys_rename(from, to) == -1 && errno == EROFS && access(from, F_OK) == 0,
          "injected rename failure renamed");
    CHECK(fwdioi_sys_rename(from, to) == 0 && access(to, F_OK) == 0, "second rename");
    errno = 0;
    CHECK(fwdioi_sys_unlink(to) == -1 && errno == EACCES && access(to, F_OK) == 0, "unlink");
    errno = 0;
    CHECK(fwdioi_sys_fsync_dir(dir) == -1 && errno == EIO, "fsync_dir");
    errno = 0;
    CHECK(open_file("nope") == -1 && errno == EDQUOT, "open");
    fd = open_file("yes");
    errno = 0;
    CHECK(fd >= 0 && fwdioi_sys_ftruncate(fd, 100) == -1 && errno == EFBIG, "ftruncate");
    fwdioi_sys_close(fd);

    /* no rules: everything passes through */
    CHECK(fwdioi_fault_configure(NULL, 0) == FWDIO_OK && !fwdioi_fault_armed(), "clear");
    CHECK(fwdioi_sys_unlink(to) == 0 && fwdioi_sys_fsync_dir(dir) == 0, "calls after clear");
    static const char *const names[] = {"short", "stall", "victim.dat", "third.dat", "yes"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[256];
        path_of(p, sizeof p, names[i]);
        unlink(p);
    }
}

int main(void)
{
    test_accepted();
    test_refused();
    test_matching();
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_installed();
    if (rmdir(dir) != 0)
        CHECK(0, "%s not empty: %s", dir, strerror(errno));
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("PASS test_fault\n");
    return 0;
}
