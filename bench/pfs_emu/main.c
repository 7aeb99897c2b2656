/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-pfs: the parallel file system emulator's command line (bench/pfs is
 * a wrapper that finds this program in a build tree).
 *
 *   fwdio-pfs up DIR --targets T --stripe S --bw B --latency MS [...]
 *   fwdio-pfs down DIR [--json] [--lazy] [--timeout SEC]
 *   fwdio-pfs stats DIR [--json] [--reset]
 *
 * `up` returns once DIR is mounted and answers (a daemon serves it);
 * `down` unmounts, waits for the daemon to finish and prints the statistics
 * as they were just before the unmount. Exit status: 0 success, 1 failure,
 * 2 bad usage, 3 FUSE unavailable here (no usable /dev/fuse).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "fs.h"

enum { EXIT_USAGE = 2, EXIT_UNAVAILABLE = 3 };
#define FSTYPE "fuse.fwdio-pfs"
/* How long `up` waits for the new mount to answer before giving up. */
#define UP_ANSWER_TIMEOUT_S 60

/* A bad command line: one line (unless the parser printed it), exit 2. */
static void die_usage(const char *why) __attribute__((noreturn));
static void die_usage(const char *why)
{
    if (why) {
        cli_t c = {.prog = "bench/pfs"};
        cli_error(&c, "%s", why);
    }
    exit(EXIT_USAGE);
}

/* The options of down and stats. */
enum { OPT_JSON = 256, OPT_LAZY, OPT_TIMEOUT, OPT_RESET };

/* Reads the options of down (with_reset 0) or stats (1) after DIR = argv[0];
 * exits 0 after --help, 2 after a bad option. */
static void parse_down_stats(int argc, char **argv, int with_reset, int *json, int *lazy,
                             unsigned *timeout_s, int *reset)
{
    static const struct option down_options[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"lazy", no_argument, NULL, OPT_LAZY},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        CLI_HELP_OPTION,
        {0}};
    static const struct option stats_options[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"reset", no_argument, NULL, OPT_RESET},
        CLI_HELP_OPTION,
        {0}};
    cli_t c;
    cli_begin(&c, "bench/pfs", argc, argv, with_reset ? stats_options : down_options, 0);
    int seconds;
    for (int key; (key = cli_next(&c)) != CLI_END;) {
        switch (key) {
        case OPT_JSON: *json = 1; break;
        case OPT_LAZY: *lazy = 1; break;
        case OPT_RESET: *reset = 1; break;
        case OPT_TIMEOUT:
            if (cli_int(&c, 1, 1 << 30, &seconds))
                die_usage(NULL);
            *timeout_s = (unsigned)seconds;
            break;
        case CLI_HELP: pfs_usage(stdout); exit(0);
        default: die_usage(NULL);
        }
    }
    if (cli_no_operands(&c))
        die_usage(NULL);
}

/* ---- paths and mounts -------------------------------------------------------- */

/* Absolute path of `arg` into out[PATH_MAX]. A mount point whose daemon died
 * cannot be stat'ed, so resolve its parent and append the last name. */
static int resolve_path(const char *arg, char *out)
{
    if (realpath(arg, out))
        return 0;
    char a[PATH_MAX], b[PATH_MAX], parent[PATH_MAX];
    if (strlen(arg) >= sizeof a)
        return -1;
    strcpy(a, arg);
    strcpy(b, arg);
    const char *base = basename(a);
    if (!realpath(dirname(b), parent) || !strcmp(base, ".") || !strcmp(base, "..") ||
        !strcmp(base, "/"))
        return -1;
    if ((size_t)snprintf(out, PATH_MAX, "%s/%s", strcmp(parent, "/") ? parent : "", base) >=
        PATH_MAX)
        return -1;
    return 0;
}

/* Undo the octal escapes (\040 for a space) of /proc/self/mountinfo. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* File system type mounted on absolute path `dir` (the last mount there)
 * into fstype[64]; 1 if mounted, 0 if not, -1 if mountinfo is unreadable. */
static int mount_type(const char *dir, char *fstype)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (getline(&line, &cap, f) > 0) {
        char point[PATH_MAX], type[64];
        const char *sep = strstr(line, " - ");
        if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
            sscanf(sep + 3, "%63s", type) != 1)
            continue;
        unescape(point);
        if (!strcmp(point, dir)) {
            found = 1;
            strcpy(fstype, type);
        }
    }
    free(line);
    fclose(f);
    return found;
}

/* 0 if `dir` is mounted by this emulator, else -1 after saying why. */
static int check_ours(const char *dir)
{
    char type[64];
    int m = mount_type(dir, type);
    if (m < 0) {
        fprintf(stderr, "pfs: cannot read /proc/self/mountinfo: %s\n", strerror(errno));
        return -1;
    }
    if (m == 0) {
        fprintf(stderr, "pfs: %s is not mounted\n", dir);
        return -1;
    }
    if (strcmp(type, FSTYPE) != 0) {
        fprintf(stderr, "pfs: %s is a %s mount, not this emulator's; left alone\n", dir, type);
        return -1;
    }
    return 0;
}

/* Whether absolute path `inner` is `outer` or lies below it. */
static int path_within(const char *inner, const char *outer)
{
    size_t n = strlen(outer);
    if (n == 1) /* "/" */
        return 1;
    return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

/* ---- up --------------------------------------------------------------------------- */

/* Absolute mount point and backing directory (made if missing, or a fresh
 * one under $TMPDIR), checked not to contain each other. */
static int prepare_paths(pfs_config_t *cfg)
{
    char path[PATH_MAX];
    struct stat st;
    if (!realpath(cfg->mountpoint, path) || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "pfs: %s is not a directory\n", cfg->mountpoint);
        return -1;
    }
    strcpy(cfg->mountpoint, path);
    char type[64];
    if (mount_type(cfg->mountpoint, type) == 1) {
        fprintf(stderr, "pfs: %s is already a mount point (%s)\n", cfg->mountpoint, type);
        return -1;
    }
    if (cfg->backing[0]) {
        if (mkdir(cfg->backing, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "pfs: mkdir %s: %s\n", cfg->backing, strerror(errno));
            return -1;
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(cfg->backing, sizeof cfg->backing, "%s/fwdio-pfs-backing-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(cfg->backing)) {
            fprintf(stderr, "pfs: mkdtemp %s: %s\n", cfg->backing, strerror(errno));
            return -1;
        }
        cfg->backing_owned = 1;
    }
    if (!realpath(cfg->backing, path) || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "pfs: backing %s is not a directory\n", cfg->backing);
        return -1;
    }
    strcpy(cfg->backing, path);
    if (path_within(cfg->backing, cfg->mountpoint) || path_within(cfg->mountpoint, cfg->backing)) {
        fprintf(stderr, "pfs: the backing directory %s and the mount point %s must not contain "
                        "each other\n", cfg->backing, cfg->mountpoint);
        return -1;
    }
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0)
        fprintf(stderr, "pfs: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

static void remove_owned_backing(const pfs_config_t *cfg)
{
    if (cfg->backing_owned)
        nftw(cfg->backing, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Daemon side after a successful mount: detach stdio (stderr to the log),
 * serve until unmounted, clean up. Never returns. */
static void daemon_serve(pfs_fs_t *fs, const pfs_config_t *cfg, int log_fd)
{
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
        dup2(null_fd, STDIN_FILENO);
        dup2(null_fd, STDOUT_FILENO);
        dup2(log_fd >= 0 ? log_fd : null_fd, STDERR_FILENO);
        close(null_fd);
    }
    if (log_fd >= 0)
        close(log_fd);
    int rc = pfs_fs_serve(fs);
    pfs_fs_free(fs);
    remove_owned_backing(cfg);
    _exit(rc == 0 ? 0 : 1);
}

/* Parent side: wait for the daemon's "mounted" byte, then for the mount to
 * answer a read of its statistics. */
static int wait_for_daemon(pid_t child, int ready_fd, const pfs_config_t *cfg)
{
    char c;
    ssize_t n;
    while ((n = read(ready_fd, &c, 1)) < 0 && errno == EINTR)
        ;
    close(ready_fd);
    if (n != 1) { /* the daemon failed and said why on stderr */
        int status;
        if (waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status))
            return WEXITSTATUS(status);
        return 1;
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/.pfs-stats", cfg->mountpoint);
    alarm(UP_ANSWER_TIMEOUT_S); /* a mount that never answers kills us, not the caller */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char buf[256];
    ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
    int err = errno;
    if (fd >= 0)
        close(fd);
    alarm(0);
    if (got <= 0) {
        fprintf(stderr, "pfs: %s was mounted but does not answer: %s\n", cfg->mountpoint,
                got < 0 ? strerror(err) : "empty statistics");
        return 1;
    }
    printf("pfs: mounted %s (daemon %d): %u targets, stripe %llu B, %llu B/s per target, "
           "latency %.3f ms%s; backing %s\n",
           cfg->mountpoint, (int)child, cfg->targets, (unsigned long long)cfg->stripe,
           (unsigned long long)cfg->bw, (double)cfg->latency_ns / 1e6,
           cfg->durable ? ", durable" : "", cfg->backing);
    return 0;
}

static int cmd_up(int argc, char **argv)
{
    pfs_config_t cfg;
    int parsed = pfs_config_parse(argc, argv, &cfg);
    if (parsed == 1) {
        pfs_usage(stdout);
        return 0;
    }
    if (parsed != 0)
        die_usage(NULL);
    int fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fuse_fd < 0) {
        fprintf(stderr, "pfs: FUSE is not available here: /dev/fuse: %s\n", strerror(errno));
        return EXIT_UNAVAILABLE;
    }
    close(fuse_fd);
    if (prepare_paths(&cfg) != 0)
        return 1;
    int log_fd = -1;
    if (cfg.log[0] && (log_fd = open(cfg.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
        fprintf(stderr, "pfs: --log %s: %s\n", cfg.log, strerror(errno));
        remove_owned_backing(&cfg);
        return 1;
    }
    umask(0); /* the kernel applied the caller's umask to every mode already */
    pfs_fs_t *fs = NULL;
    if (cfg.foreground) {
        int rc = pfs_fs_mount(&cfg, &fs) == 0 && pfs_fs_serve(fs) == 0 ? 0 : 1;
        pfs_fs_free(fs);
        remove_owned_backing(&cfg);
        return rc;
    }
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        fprintf(stderr, "pfs: pipe: %s\n", strerror(errno));
        return 1;
    }
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "pfs: fork: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0) {
        close(pipefd[0]);
        if (setsid() < 0 || chdir("/") != 0 || pfs_fs_mount(&cfg, &fs) != 0) {
            pfs_fs_free(fs);
            remove_owned_backing(&cfg);
            _exit(1);
        }
        char ok = 'R';
        if (write(pipefd[1], &ok, 1) != 1)
            _exit(1); /* the parent is gone; fusermount3 -u cleans up */
        close(pipefd[1]);
        daemon_serve(fs, &cfg, log_fd);
    }
    close(pipefd[1]);
    if (log_fd >= 0)
        close(log_fd);
    return wait_for_daemon(child, pipefd[0], &cfg);
}

/* ---- down and stats ------------------------------------------------------------------ */

/* Read all of `path` into a malloc'd string; NULL (errno set) on failure. */
static char *read_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len = 0, cap = 8192;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            free(buf);
            buf = NULL;
            errno = err;
            break;
        }
        if (n == 0) {
            buf[len] = '\0';
            break;
        }
        len += (size_t)n;
    }
    int err = errno;
    close(fd);
    errno = err;
    return buf;
}

static char *read_stats(const char *dir, int json)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, json ? ".pfs-stats.json" : ".pfs-stats");
    return read_file(path);
}

/* Run `fusermount3 -u [-z] dir`; as root without fusermount3, umount2. */
static int unmount_dir(const char *dir, int lazy)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (lazy)
            execlp("fusermount3", "fusermount3", "-u", "-z", "--", dir, (char *)NULL);
        else
            execlp("fusermount3", "fusermount3", "-u", "--", dir, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && geteuid() == 0)
        return umount2(dir, lazy ? MNT_DETACH : 0);
    return -1;
}

/* Wait up to timeout_s for process `pid` to end (it is not our child). */
static int wait_gone(pid_t pid, unsigned timeout_s)
{
    struct timespec tick = {.tv_nsec = 50 * 1000000L};
    for (unsigned i = 0; i < timeout_s * 20; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return 0;
        nanosleep(&tick, NULL);
    }
    return -1;
}

static long stats_pid(const char *text)
{
    const char *p = text ? strstr(text, " pid=") : NULL;
    return p ? strtol(p + 5, NULL, 10) : -1;
}

static int cmd_down(int argc, char **argv)
{
    int json = 0, lazy = 0, reset = 0;
    unsigned timeout_s = 60;
    if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
        pfs_usage(stdout);
        return 0;
    }
    if (argc < 1 || argv[0][0] == '-')
        die_usage("down needs the mounted directory");
    parse_down_stats(argc, argv, 0, &json, &lazy, &timeout_s, &reset);
    char dir[PATH_MAX];
    if (resolve_path(argv[0], dir) != 0) {
        fprintf(stderr, "pfs: %s: no such directory\n", argv[0]);
        return 1;
    }
    if (check_ours(dir) != 0)
        return 1;
    char *text = read_stats(dir, 0);
    int read_err = errno;
    long pid = stats_pid(text);
    char *shown = json && text ? read_stats(dir, 1) : NULL;
    if (unmount_dir(dir, lazy) != 0) {
        fprintf(stderr, "pfs: unmounting %s failed%s\n", dir,
                lazy ? "" : " (busy? `down --lazy` detaches it anyway)");
        free(text);
        free(shown);
        return 1;
    }
    int rc = 0;
    if (!text) {
        fprintf(stderr, "pfs: the daemon of %s did not answer (%s); unmounted it anyway, "
                        "no statistics\n", dir, strerror(read_err));
        rc = 1;
    } else if (pid <= 0 || wait_gone((pid_t)pid, timeout_s) != 0) {
        fprintf(stderr, "pfs: daemon %ld of %s still runs %u s after the unmount\n", pid, dir,
                timeout_s);
        rc = 1;
    }
    if (text)
        fputs(json && shown ? shown : text, stdout);
    free(text);
    free(shown);
    return rc;
}

static int cmd_stats(int argc, char **argv)
{
    int json = 0, lazy = 0, reset = 0;
    unsigned timeout_s = 0;
    if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
        pfs_usage(stdout);
        return 0;
    }
    if (argc < 1 || argv[0][0] == '-')
        die_usage("stats needs the mounted directory");
    parse_down_stats(argc, argv, 1, &json, &lazy, &timeout_s, &reset);
    char dir[PATH_MAX];
    if (resolve_path(argv[0], dir) != 0 || check_ours(dir) != 0)
        return 1;
    char *text = read_stats(dir, json);
    if (!text) {
        fprintf(stderr, "pfs: reading the statistics of %s: %s\n", dir, strerror(errno));
        return 1;
    }
    fputs(text, stdout);
    free(text);
    if (!reset)
        return 0;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/.pfs-reset", dir);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "1\n", 2) != 2) {
        fprintf(stderr, "pfs: resetting the statistics of %s: %s\n", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        die_usage("missing the command: up, down or stats");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "up"))
        return cmd_up(argc - 2, argv + 2);
    if (!strcmp(cmd, "down"))
        return cmd_down(argc - 2, argv + 2);
    if (!strcmp(cmd, "stats"))
        return cmd_stats(argc - 2, argv + 2);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        pfs_usage(stdout);
        return 0;
    }
    if (cmd[0] == '-') {
        cli_t c = {.prog = "bench/pfs"};
        cli_error(&c, "unknown option '%s': the first argument is up, down or stats", cmd);
        die_usage(NULL);
    }
    die_usage("the first argument is up, down or stats");
}
