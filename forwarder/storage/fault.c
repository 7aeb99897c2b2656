/* SPDX-License-Identifier: BSD-3-Clause */
/* FWDIO_FAULT: the rule parser, the matching, and the installed rules. */
#include "storage/fault.h"

#include "fwdio.h"
#include "lock_check.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- parsing ---- */

static const struct {
    const char *name;
    int err;
} named_errors[] = {
    {"eio", EIO}, {"enospc", ENOSPC}, {"efbig", EFBIG}, {"erofs", EROFS}, {"edquot", EDQUOT},
};
enum { NAMED_ERRORS = sizeof named_errors / sizeof named_errors[0] };

#define EFFECTS "eio|enospc|efbig|erofs|edquot|errno=N|short|stall|slow=MS"
#define CONDITIONS "rank=R, nth=N, from=N or path=TEXT"

/* A whole decimal number in [lo, hi]. */
static int parse_number(const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (!isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_effect(const char *tok, fwdioi_fault_rule_t *r)
{
    uint64_t v;
    for (size_t i = 0; i < NAMED_ERRORS; i++) {
        if (!strcmp(tok, named_errors[i].name)) {
            r->kind = FWDIOI_FAULT_ERROR;
            r->err = named_errors[i].err;
            return 0;
        }
    }
    if (!strncmp(tok, "errno=", 6) && parse_number(tok + 6, 1, 4095, &v) == 0) {
        r->kind = FWDIOI_FAULT_ERROR;
        r->err = (int)v;
    } else if (!strcmp(tok, "short")) {
        r->kind = FWDIOI_FAULT_SHORT;
    } else if (!strcmp(tok, "stall")) {
        r->kind = FWDIOI_FAULT_STALL;
    } else if (!strncmp(tok, "slow=", 5) && parse_number(tok + 5, 1, 3600000, &v) == 0) {
        r->kind = FWDIOI_FAULT_SLOW;
        r->delay_ms = (unsigned)v;
    } else {
        return -1;
    }
    return 0;
}

/* One `key=value` condition; *seen_count tells nth= and from= apart. */
static int parse_condition(const char *tok, fwdioi_fault_rule_t *r, int *seen_count, char *why,
                           size_t why_len)
{
    const char *eq = strchr(tok, '=');
    size_t klen = eq ? (size_t)(eq - tok) : 0;
    const char *value = eq ? eq + 1 : "";
    uint64_t v;
    if (klen == 4 && !strncmp(tok, "rank", 4)) {
        if (parse_number(value, 0, 1u << 30, &v) != 0) {
            snprintf(why, why_len, "rank=%.80s is not a rank", value);
            return -1;
        }
        r->rank = (int)v;
    } else if ((klen == 3 && !strncmp(tok, "nth", 3)) || (klen == 4 && !strncmp(tok, "from", 4))) {
        if (parse_number(value, 1, UINT64_MAX, &v) != 0) {
            snprintf(why, why_len, "%.80s needs a count from 1", tok);
            return -1;
        }
        if ((*seen_count)++) {
            snprintf(why, why_len, "give at most one of nth= and from=");
            return -1;
        }
        r->first = v;
        r->last = klen == 3 ? v : 0;
    } else if (klen == 4 && !strncmp(tok, "path", 4)) {
        size_t len = strlen(value);
        if (len == 0 || len >= sizeof r->path) {
            snprintf(why, why_len, "path= needs 1 to %d characters", FWDIOI_FAULT_MAX_PATH - 1);
            return -1;
        }
        memcpy(r->path, value, len + 1);
    } else {
        snprintf(why, why_len, "unknown condition \"%.80s\" (expected %s)", tok, CONDITIONS);
        return -1;
    }
    return 0;
}

/* Parse one rule, "op:effect[:condition]...", written into `text` (modified). */
static int parse_rule(char *text, fwdioi_fault_rule_t *r, char *why, size_t why_len)
{
    memset(r, 0, sizeof *r);
    r->rank = -1;
    r->first = 1;
    char *tokens[8];
    int n = 0;
    for (char *p = text;; p++) {
        if (n == (int)(sizeof tokens / sizeof *tokens)) {
            snprintf(why, why_len, "too many fields");
            return -1;
        }
        tokens[n++] = p;
        p = strchr(p, ':');
        if (!p)
            break;
        *p = '\0';
    }
    r->call = fwdioi_syscall_from_name(tokens[0]);
    if (r->call == FWDIOI_CALL_NONE) {
        snprintf(why, why_len,
                 "unknown call \"%.80s\" (expected open|ftruncate|pwrite|pread|fdatasync|close|"
                 "rename|unlink|fsync_dir|mkdir|statvfs|shm_commit)",
                 tokens[0]);
        return -1;
    }
    if (n < 2 || parse_effect(tokens[1], r) != 0) {
        snprintf(why, why_len, "unknown effect \"%.80s\" (expected " EFFECTS ")",
                 n < 2 ? "" : tokens[1]);
        return -1;
    }
    if ((r->kind == FWDIOI_FAULT_SHORT || r->kind == FWDIOI_FAULT_STALL) &&
        r->call != FWDIOI_CALL_PWRITE && r->call != FWDIOI_CALL_PREAD) {
        snprintf(why, why_len, "%.80s applies to pwrite and pread only", tokens[1]);
        return -1;
    }
    int seen_count = 0;
    for (int i = 2; i < n; i++)
        if (parse_condition(tokens[i], r, &seen_count, why, why_len) != 0)
            return -1;
    return 0;
}

int fwdioi_fault_parse(const char *spec, int rank, fwdioi_fault_rules_t *out, char *why,
                       size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    const char *p = spec ? spec : "";
    for (int index = 1; *p; index++) {
        size_t len = strcspn(p, ";");
        char text[FWDIOI_FAULT_MAX_PATH + 128];
        if (len >= sizeof text) {
            snprintf(why, why_len, "rule %d is too long", index);
            return -1;
        }
        memcpy(text, p, len);
        text[len] = '\0';
        p += len + (p[len] == ';');
        char *start = text, *end = text + len;
        while (isspace((unsigned char)*start))
            start++;
        while (end > start && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (!*start)
            continue; /* empty rule, e.g. after a trailing ';' */
        if (out->n == FWDIOI_FAULT_MAX_RULES) {
            snprintf(why, why_len, "more than %d rules", FWDIOI_FAULT_MAX_RULES);
            return -1;
        }
        char reason[FWDIOI_FAULT_MAX_PATH + 128];
        char copy[sizeof text];
        snprintf(copy, sizeof copy, "%s", start);
        if (parse_rule(start, &out->rule[out->n], reason, sizeof reason) != 0) {
            snprintf(why, why_len, "rule %d \"%.120s\": %.300s", index, copy, reason);
            return -1;
        }
        out->n++;
    }
    return 0;
}

/* ---- matching ---- */

static int path_matches(const fwdioi_fault_rule_t *r, const char *path, const char *path2)
{
    if (!r->path[0])
        return 1;
    return (path && strstr(path, r->path)) || (path2 && strstr(path2, r->path));
}

fwdioi_fault_t fwdioi_fault_decide(fwdioi_fault_rules_t *rules, fwdioi_syscall_t call,
                                   const char *path, const char *path2)
{
    fwdioi_fault_t f = {FWDIOI_FAULT_NONE, 0, 0, 0};
    for (int i = 0; i < rules->n; i++) {
        fwdioi_fault_rule_t *r = &rules->rule[i];
        if (r->call != call || (r->rank >= 0 && r->rank != rules->rank) ||
            !path_matches(r, path, path2))
            continue;
        r->calls++;
        if (r->calls < r->first || (r->last && r->calls > r->last))
            continue;
        if (r->kind == FWDIOI_FAULT_SLOW) {
            f.delay_ms += r->delay_ms;
        } else if (f.kind == FWDIOI_FAULT_NONE) {
            f.kind = r->kind;
            f.err = r->err;
            f.rule = i + 1;
        }
        if (!f.rule)
            f.rule = i + 1;
    }
    return f;
}

/* ---- the installed rules ---- */

atomic_int fwdioi_fault_installed;

/* The rules, their counters, and the paths of the descriptors opened while
 * rules were installed (for path= rules and the log). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static fwdioi_fault_rules_t g_rules;
typedef struct fd_path {
    int fd;
    char *path;
} fd_path_t;
static fd_path_t *g_fds;
static size_t g_nfds, g_fds_cap;

#if FWDIO_FAULT_INJECTION
static int applies_here(const fwdioi_fault_rules_t *rules)
{
    for (int i = 0; i < rules->n; i++)
        if (rules->rule[i].rank < 0 || rules->rule[i].rank == rules->rank)
            return 1;
    return 0;
}
#endif

int fwdioi_fault_configure(const char *spec, int rank)
{
    int set = spec && spec[strspn(spec, " \t;")];
#if FWDIO_FAULT_INJECTION
    fwdioi_fault_rules_t parsed;
    char why[FWDIOI_FAULT_MAX_PATH + 256];
    if (fwdioi_fault_parse(set ? spec : NULL, rank, &parsed, why, sizeof why) != 0) {
        fwdioi_report("FWDIO_FAULT: %s", why);
        return FWDIO_EINVAL;
    }
    fwdioi_mutex_lock(&g_lock);
    g_rules = parsed;
    int armed = applies_here(&g_rules);
    atomic_store_explicit(&fwdioi_fault_installed, armed, memory_order_relaxed);
    fwdioi_mutex_unlock(&g_lock);
    if (armed)
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: FWDIO_FAULT: %d rule(s) installed: %s", rank,
                   parsed.n, spec);
    return FWDIO_OK;
#else
    (void)rank;
    if (set) {
        fwdioi_report("FWDIO_FAULT is set, but this fwdio was built without fault injection "
                      "(CMake option FWDIO_FAULT_INJECTION=OFF)");
        return FWDIO_EINVAL;
    }
    return FWDIO_OK;
#endif
}

static void sleep_ms(unsigned ms)
{
    struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
}

static const char *kind_name(const fwdioi_fault_t *f)
{
    switch (f->kind) {
    case FWDIOI_FAULT_ERROR: return strerror(f->err);
    case FWDIOI_FAULT_SHORT: return "short call";
    case FWDIOI_FAULT_STALL: return "no progress";
    default: return "delay only";
    }
}

/* Count the call, log a firing rule, sleep. Lock held on entry, released. */
static fwdioi_fault_t decide_locked(fwdioi_syscall_t call, const char *path, const char *path2)
{
    FWDIOI_ASSERT_HELD(&g_lock);
    fwdioi_fault_t f = fwdioi_fault_decide(&g_rules, call, path, path2);
    if (f.rule)
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: FWDIO_FAULT rule %d: %s of %s: %s (+%u ms)",
                   g_rules.rank, f.rule, fwdioi_syscall_name(call),
                   path ? path : "(a descriptor opened before the rules)", kind_name(&f),
                   f.delay_ms);
    fwdioi_mutex_unlock(&g_lock);
    int saved = errno;
    if (f.delay_ms)
        sleep_ms(f.delay_ms);
    errno = saved;
    return f;
}

fwdioi_fault_t fwdioi_fault_on_path(fwdioi_syscall_t call, const char *path, const char *path2)
{
    fwdioi_mutex_lock(&g_lock);
    return decide_locked(call, path, path2);
}

static fd_path_t *find_fd_locked(int fd)
{
    FWDIOI_ASSERT_HELD(&g_lock);
    for (size_t i = 0; i < g_nfds; i++)
        if (g_fds[i].fd == fd)
            return &g_fds[i];
    return NULL;
}

fwdioi_fault_t fwdioi_fault_on_fd(fwdioi_syscall_t call, int fd)
{
    fwdioi_mutex_lock(&g_lock);
    fd_path_t *e = find_fd_locked(fd);
    char *path = e ? e->path : NULL;
    if (e && call == FWDIOI_CALL_CLOSE) /* the number may be reused at once */
        *e = g_fds[--g_nfds];
    if (call != FWDIOI_CALL_CLOSE)
        return decide_locked(call, path, NULL);
    fwdioi_fault_t f = decide_locked(call, path, NULL);
    free(path);
    return f;
}

void fwdioi_fault_fd_opened(int fd, const char *path)
{
    char *copy = strdup(path);
    fwdioi_mutex_lock(&g_lock);
    fd_path_t *e = find_fd_locked(fd);
    if (!e && copy && g_nfds == g_fds_cap) {
        size_t cap = g_fds_cap ? 2 * g_fds_cap : 16;
        fd_path_t *grown = realloc(g_fds, cap * sizeof *grown);
        if (grown) {
            g_fds = grown;
            g_fds_cap = cap;
        }
    }
    if (!e && copy && g_nfds < g_fds_cap) {
        e = &g_fds[g_nfds++];
        e->path = NULL;
    }
    if (e) {
        free(e->path);
        e->fd = fd;
        e->path = copy; /* NULL without memory: path rules will not match it */
        copy = NULL;
    }
    fwdioi_mutex_unlock(&g_lock);
    free(copy);
}
