/* SPDX-License-Identifier: BSD-3-Clause */
/* One table of keys drives the environment, the config file and the hints. */
#include "settings/settings.h"

#include "config.h"
#include "log.h"
#include "parse_size.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* K_SIZE_OFF: a size where 0 or "off" means off, stored as 1 (0 in a field
 * means "not set"). */
/* K_STRING: a const char * field pointing at the value (the environment's,
 * the file's for the runtime's life, a hint's kept: keep_hint_string). */
/* K_WAIT_MS: seconds with a fraction ("0.2"), or "0"/"off"
 * (FWDIO_LOCAL_WAIT_OFF), kept in a uint64_t field of milliseconds. */
typedef enum {
    K_SIZE,
    K_SIZE_OFF,
    K_INT,
    K_SECONDS,
    K_WAIT_MS,
    K_BOOL,
    K_CHOICE,
    K_LIST,
    K_STRING
} key_kind_t;
typedef enum { S_CONFIG, S_OPTIONS } key_scope_t;

static const char *const callback_modes[] = {"poll", "progress", NULL};
static const char *const layouts[] = {"block", "cyclic", "targets", NULL};
static const char *const placements[] = {"spread", "stride", "list", NULL};

typedef struct key {
    const char *name;
    key_kind_t kind;
    key_scope_t scope;
    size_t offset;
    size_t width; /* of a K_SIZE field: sizeof(size_t) or sizeof(uint64_t) */
    const char *const *choices;
    uint64_t pin; /* its FWDIO_PIN_* bit */
} setting_t;

#define CFG(name, kind, field, choices, pin)                                                \
    {name, kind, S_CONFIG, offsetof(fwdio_config_t, field),                                   \
     sizeof(((fwdio_config_t *)0)->field), choices, pin}
#define OPT(name, kind, field, choices, pin)                                                \
    {name, kind, S_OPTIONS, offsetof(fwdio_options_t, field),                                 \
     sizeof(((fwdio_options_t *)0)->field), choices, pin}

static const setting_t keys[] = {
    CFG("callback_mode", K_CHOICE, callback_mode, callback_modes, FWDIO_PIN_CALLBACK_MODE),
    CFG("poll_min_us", K_INT, poll_min_us, NULL, FWDIO_PIN_POLL_MIN_US),
    CFG("poll_max_us", K_INT, poll_max_us, NULL, FWDIO_PIN_POLL_MAX_US),
    CFG("poll_background_us", K_INT, poll_background_us, NULL, FWDIO_PIN_POLL_BACKGROUND_US),
    CFG("poll_spin_us", K_INT, poll_spin_us, NULL, FWDIO_PIN_POLL_SPIN_US),
    CFG("max_message_size", K_SIZE, max_message_size, NULL, FWDIO_PIN_MAX_MESSAGE_SIZE),
    CFG("writer_buffer", K_SIZE, writer_buffer, NULL, FWDIO_PIN_WRITER_BUFFER),
    CFG("staging_buffer", K_SIZE, staging_buffer, NULL, FWDIO_PIN_STAGING_BUFFER),
    CFG("io_inline", K_BOOL, io_inline, NULL, FWDIO_PIN_IO_INLINE),
    CFG("watchdog", K_SECONDS, watchdog, NULL, FWDIO_PIN_WATCHDOG),
    CFG("combine_size", K_SIZE_OFF, combine_size, NULL, FWDIO_PIN_COMBINE_SIZE),
    CFG("shared_buffer", K_SIZE_OFF, shared_buffer, NULL, FWDIO_PIN_SHARED_BUFFER),
    CFG("node_buffer", K_SIZE_OFF, node_buffer, NULL, FWDIO_PIN_NODE_BUFFER),
    CFG("files_in_flight", K_INT, files_in_flight, NULL, FWDIO_PIN_FILES_IN_FLIGHT),
    CFG("node_buffer_idle", K_SECONDS, node_buffer_idle, NULL, FWDIO_PIN_NODE_BUFFER_IDLE),
    CFG("local_wait", K_WAIT_MS, local_wait_ms, NULL, FWDIO_PIN_LOCAL_WAIT),
    OPT("write_size", K_SIZE, write_size, NULL, FWDIO_PIN_WRITE_SIZE),
    OPT("stripe_size", K_SIZE, stripe_size, NULL, FWDIO_PIN_STRIPE_SIZE),
    OPT("writers", K_INT, writers, NULL, FWDIO_PIN_WRITERS),
    OPT("first_writer", K_INT, first_writer, NULL, FWDIO_PIN_FIRST_WRITER),
    OPT("writer_stride", K_INT, writer_stride, NULL, FWDIO_PIN_WRITER_STRIDE),
    OPT("layout", K_CHOICE, layout, layouts, FWDIO_PIN_LAYOUT),
    OPT("durable", K_BOOL, durable, NULL, FWDIO_PIN_DURABLE),
    OPT("placement", K_CHOICE, placement, placements, FWDIO_PIN_PLACEMENT),
    OPT("writers_per_node", K_INT, writers_per_node, NULL, FWDIO_PIN_WRITERS_PER_NODE),
    OPT("writer_list", K_LIST, writer_list, NULL, FWDIO_PIN_WRITER_LIST),
    OPT("targets", K_INT, targets, NULL, FWDIO_PIN_TARGETS),
    OPT("atomic_replace", K_BOOL, atomic_replace, NULL, FWDIO_PIN_ATOMIC_REPLACE),
    OPT("append_start", K_SIZE, append_start, NULL, FWDIO_PIN_APPEND_START),
    OPT("local_dir", K_STRING, local_dir, NULL, FWDIO_PIN_LOCAL_DIR),
    OPT("drain_bandwidth", K_SIZE_OFF, drain_bandwidth, NULL, FWDIO_PIN_DRAIN_BANDWIDTH),
    OPT("local_capacity", K_SIZE_OFF, local_capacity, NULL, FWDIO_PIN_LOCAL_CAPACITY),
    OPT("local_copies", K_INT, local_copies, NULL, FWDIO_PIN_LOCAL_COPIES),
};
enum { NKEYS = sizeof keys / sizeof keys[0] };
_Static_assert((int)NKEYS <= (int)FWDIOI_SETTINGS_MAX_KEYS, "raise FWDIOI_SETTINGS_MAX_KEYS");

/* Where a key's value came from (fwdioi_settings_origins_t.from). */
enum { FROM_DEFAULT, FROM_CODE, FROM_ENV, FROM_FILE };

/* FWDIO_* variables that are not keys but are ours. */
static const char *const other_vars[] = {"FWDIO_CONFIG", "FWDIO_VERBOSE", "FWDIO_TRACE",
                                           "FWDIO_TRACE_MAX_EVENTS", "FWDIO_FAULT",
                                           /* libfwdio-mpiio.so's (mpiio/README.md) */
                                           "FWDIO_MPIIO", "FWDIO_MPIIO_CLOSE", "FWDIO_MPIIO_SYNC",
                                           "FWDIO_MPIIO_READBACK", "FWDIO_MPIIO_HOLD",
                                           /* the bench scripts' (bench/README.md): a user
                                            * exports it beside the runs */
                                           "FWDIO_RESULTS_DIR", NULL};

/* The config file may be no larger: a bigger one is not a configuration. */
enum { MAX_FILE_BYTES = 1 << 20 };

static const setting_t *find_key(const char *name)
{
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(keys[i].name, name))
            return &keys[i];
    return NULL;
}

/* "FWDIO_STRIPE_SIZE" for "stripe_size". */
static void env_name(const setting_t *k, char *out, size_t len)
{
    snprintf(out, len, "FWDIO_%s", k->name);
    for (char *c = out; *c; c++)
        *c = (char)toupper((unsigned char)*c);
}

static int parse_nonneg_int(const char *v, int *out)
{
    errno = 0;
    char *end;
    long n = strtol(v, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || end == v || *end || n < 0 || n > 1 << 30)
        return -1;
    *out = (int)n;
    return 0;
}

/* Seconds, with a fraction ("10", "0.2"), at most a day, into
 * milliseconds rounded up; 0 is FWDIO_LOCAL_WAIT_OFF. 0, or -1. */
static int parse_millis(const char *v, uint64_t *out)
{
    errno = 0;
    char *end;
    double s = strtod(v, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || end == v || *end || !(s >= 0) || s > 86400)
        return -1;
    uint64_t ms = (uint64_t)(s * 1000.0);
    if ((double)ms < s * 1000.0)
        ms++;
    *out = ms == 0 ? FWDIO_LOCAL_WAIT_OFF : ms;
    return 0;
}

/* Parse "0,4,8" into a new array. */
static int parse_list(const char *v, int **out, int *n)
{
    int count = 1;
    for (const char *c = v; *c; c++)
        count += *c == ',';
    int *list = malloc((size_t)count * sizeof *list);
    if (!list)
        return -1;
    int i = 0;
    const char *p = v;
    while (*p) {
        char item[32];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item || i == count)
            break;
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_nonneg_int(item, &list[i]) != 0)
            break;
        i++;
        p += len;
        if (*p == ',')
            p++;
        else if (*p)
            break;
    }
    if (*p || i == 0) {
        free(list);
        return -1;
    }
    *out = list;
    *n = i;
    return 0;
}

/*
 * Store `value` into the field of `k` in `base` (a config or options struct).
 * Returns 0, or -1 for a malformed value. K_LIST allocates into *list.
 */
static int store(const setting_t *k, const char *value, void *base, int **list)
{
    char *field = (char *)base + k->offset;
    uint64_t size;
    int n;
    switch (k->kind) {
    case K_SIZE:
    case K_SIZE_OFF:
        if (k->kind == K_SIZE_OFF && !strcmp(value, "off"))
            size = 0;
        else if (fwdioi_parse_size(value, &size) != 0 || (size == 0 && k->kind == K_SIZE))
            return -1;
        if (size == 0)
            size = 1;
        if (k->width == sizeof(uint64_t))
            memcpy(field, &size, sizeof size);
        else {
            size_t s = (size_t)size;
            memcpy(field, &s, sizeof s);
        }
        return 0;
    case K_INT:
        if (parse_nonneg_int(value, &n) != 0)
            return -1;
        memcpy(field, &n, sizeof n);
        return 0;
    case K_SECONDS: { /* seconds, or "off" */
        unsigned secs = FWDIO_WATCHDOG_OFF;
        if (strcmp(value, "off")) {
            if (parse_nonneg_int(value, &n) != 0)
                return -1;
            secs = (unsigned)n;
        }
        memcpy(field, &secs, sizeof secs);
        return 0;
    }
    case K_WAIT_MS: { /* seconds, with a fraction, or 0 / "off" */
        uint64_t ms = FWDIO_LOCAL_WAIT_OFF;
        if (strcmp(value, "off") && parse_millis(value, &ms) != 0)
            return -1;
        memcpy(field, &ms, sizeof ms);
        return 0;
    }
    case K_BOOL:
        if (strcmp(value, "0") && strcmp(value, "1"))
            return -1;
        n = value[0] == '1';
        memcpy(field, &n, sizeof n);
        return 0;
    case K_CHOICE:
        for (n = 0; k->choices[n]; n++)
            if (!strcmp(value, k->choices[n])) {
                memcpy(field, &n, sizeof n); /* enums are int-sized */
                return 0;
            }
        return -1;
    case K_STRING: {
        const char *text = value;
        memcpy(field, &text, sizeof text);
        return 0;
    }
    case K_LIST: {
        if (!list)
            return -1;
        int *values, count;
        if (parse_list(value, &values, &count) != 0)
            return -1;
        free(*list);
        *list = values;
        fwdio_options_t *o = base;
        o->writer_list = values;
        o->writer_list_len = count;
        return 0;
    }
    }
    return -1;
}

static uint64_t pinned_of(key_scope_t scope, const void *base)
{
    return scope == S_CONFIG ? ((const fwdio_config_t *)base)->pinned
                             : ((const fwdio_options_t *)base)->pinned;
}

/* Whether the code set the field of `k`: a value other than 0, or a pin. */
static int set_in_code(const setting_t *k, const void *base)
{
    if (pinned_of(k->scope, base) & k->pin)
        return 1;
    const unsigned char *field = (const unsigned char *)base + k->offset;
    for (size_t i = 0; i < k->width; i++)
        if (field[i])
            return 1;
    return 0;
}

static void describe_choices(const setting_t *k, char *out, size_t len)
{
    switch (k->kind) {
    case K_SIZE: snprintf(out, len, "a size in bytes, e.g. 8M"); return;
    case K_SIZE_OFF: snprintf(out, len, "a size in bytes, e.g. 256K, or 0 or off"); return;
    case K_INT: snprintf(out, len, "a whole number >= 0"); return;
    case K_SECONDS: snprintf(out, len, "seconds (a whole number) or off"); return;
    case K_WAIT_MS: snprintf(out, len, "seconds (e.g. 10 or 0.2), or 0 or off"); return;
    case K_BOOL: snprintf(out, len, "0 or 1"); return;
    case K_LIST: snprintf(out, len, "ranks separated by commas, e.g. 0,4,8"); return;
    case K_STRING: snprintf(out, len, "a directory"); return;
    case K_CHOICE: break;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; k->choices[i] && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "|" : "", k->choices[i]);
}

/* A malformed value of `k` from `where`; `why` decides who prints (NULL:
 * this rank). */
static int report_bad(fwdioi_origins_t *why, const setting_t *k, const char *where,
                      const char *value)
{
    char expect[80];
    describe_choices(k, expect, sizeof expect);
    return fwdioi_refuse(why, "%s: \"%s\" is not valid for %s (expected %s)", where, value,
                         k->name, expect);
}

/* ---- origins ---- */

static int describe_origin(const fwdioi_origins_t *base, const char *key, char *out, size_t len)
{
    const fwdioi_settings_origins_t *o = (const fwdioi_settings_origins_t *)base;
    const setting_t *k = find_key(!strcmp(key, "writer_list_len") ? "writer_list" : key);
    int i = k ? (int)(k - keys) : -1;
    switch (i < 0 ? FROM_CODE : o->from[i]) {
    case FROM_ENV: {
        char name[64];
        env_name(k, name, sizeof name);
        snprintf(out, len, "from %s", name);
        return o->env_shared;
    }
    case FROM_FILE:
        snprintf(out, len, "from %s:%d", o->file && o->file->path ? o->file->path : "FWDIO_CONFIG",
                 o->line[i]);
        return 1; /* rank 0 read it for every rank */
    case FROM_DEFAULT:
        snprintf(out, len, "default");
        return 1;
    default:
        snprintf(out, len, k && k->scope == S_OPTIONS ? "set in code or by a hint" : "set in code");
        return 0;
    }
}

/* FNV-1a of one string, from `h`. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

extern char **environ;

/* The FWDIO_* variables of this process, as a sum of hashes: the same on two
 * ranks with the same variables in any order. */
static uint64_t env_hash(void)
{
    uint64_t sum = 0;
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "FWDIO_", 6))
            sum += fnv1a(0xcbf29ce484222325ull, *e);
    return sum;
}

void fwdioi_settings_origins_init(fwdioi_settings_origins_t *o, const fwdioi_settings_file_t *file,
                                  int rank, int rank0_only_if_shared)
{
    memset(o, 0, sizeof *o);
    fwdioi_origins_init(&o->base, rank, rank0_only_if_shared, NULL);
    o->base.describe = describe_origin;
    o->file = file;
    /* An environment changed since init (setenv on some ranks) is no longer
     * known to be everyone's. */
    o->env_shared = file && file->env_shared && env_hash() == file->env_hash;
}

/* ---- applying ---- */

/* Fill the fields of one scope the code did not set from the environment,
 * then the file, noting in `why` where each came from. */
static int apply(const fwdioi_settings_file_t *file, key_scope_t scope, void *base, int **list,
                 fwdioi_settings_origins_t *why)
{
    for (int i = 0; i < NKEYS; i++) {
        const setting_t *k = &keys[i];
        if (k->scope != scope)
            continue;
        if (set_in_code(k, base)) {
            why->from[i] = FROM_CODE;
            continue;
        }
        char name[64];
        env_name(k, name, sizeof name);
        const char *v = getenv(name);
        if (v && *v) {
            why->from[i] = FROM_ENV;
            if (store(k, v, base, list) != 0) {
                fwdioi_origins_t *o = &why->base;
                o->shared = why->env_shared;
                return report_bad(o, k, name, v);
            }
            continue;
        }
        for (int j = 0; file && j < file->n; j++) {
            if (strcmp(file->keys[j], k->name))
                continue;
            why->from[i] = FROM_FILE;
            why->line[i] = file->lines[j];
            if (store(k, file->values[j], base, list) != 0) { /* checked when read */
                char where[600];
                snprintf(where, sizeof where, "%s:%d", file->path, file->lines[j]);
                return report_bad(&why->base, k, where, file->values[j]);
            }
        }
    }
    return FWDIO_OK;
}

int fwdioi_settings_from_code(const fwdioi_settings_origins_t *o, const char *key)
{
    const setting_t *k = find_key(key);
    return k && o->from[k - keys] == FROM_CODE;
}

int fwdioi_settings_check_args(const fwdio_config_t *cfg, int rank)
{
    if (!cfg)
        return FWDIO_OK;
    fwdioi_settings_origins_t why;
    fwdioi_settings_origins_init(&why, NULL, rank, 0);
    for (int i = 0; i < NKEYS; i++)
        why.from[i] = FROM_CODE;
    return fwdioi_config_check(cfg, &why.base);
}

int fwdioi_settings_apply_config(const fwdioi_settings_file_t *file, fwdio_config_t *cfg, int rank)
{
    fwdioi_settings_origins_t why;
    fwdioi_settings_origins_init(&why, file, rank, 0);
    int rc = apply(file, S_CONFIG, cfg, NULL, &why);
    return rc != FWDIO_OK ? rc : fwdioi_config_check(cfg, &why.base);
}

int fwdioi_settings_apply_options(const fwdioi_settings_file_t *file, fwdio_options_t *opts,
                                  int **list_storage, fwdioi_settings_origins_t *why)
{
    *list_storage = NULL;
    int rc = apply(file, S_OPTIONS, opts, list_storage, why);
    if (rc != FWDIO_OK) {
        free(*list_storage);
        *list_storage = NULL;
    }
    return rc;
}

/* ---- the config file ---- */

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

static int add_pair(fwdioi_settings_file_t *f, const char *key, const char *value, int line)
{
    char **keys_ = realloc(f->keys, (size_t)(f->n + 1) * sizeof *keys_);
    if (keys_)
        f->keys = keys_;
    char **values = realloc(f->values, (size_t)(f->n + 1) * sizeof *values);
    if (values)
        f->values = values;
    int *lines = realloc(f->lines, (size_t)(f->n + 1) * sizeof *lines);
    if (lines)
        f->lines = lines;
    if (!keys_ || !values || !lines)
        return -1;
    f->keys[f->n] = strdup(key);
    f->values[f->n] = strdup(value);
    f->lines[f->n] = line;
    if (!f->keys[f->n] || !f->values[f->n]) {
        free(f->keys[f->n]);
        free(f->values[f->n]);
        return -1;
    }
    f->n++;
    return 0;
}

/* Check a value the way applying it would, without keeping it. */
static int value_ok(const setting_t *k, const char *value)
{
    fwdio_config_t c;
    fwdio_options_t o;
    int *list = NULL;
    memset(&c, 0, sizeof c);
    memset(&o, 0, sizeof o);
    int rc = store(k, value, k->scope == S_CONFIG ? (void *)&c : (void *)&o, &list);
    free(list);
    return rc == 0;
}

/* Rank 0: the whole file named by `path` into *text (NUL-terminated). */
static int read_whole(const char *path, char **text, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fwdioi_report("FWDIO_CONFIG=%s cannot be read: %s", path, strerror(errno));
        return FWDIO_EINVAL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        fwdioi_report("FWDIO_CONFIG=%s is a directory: it must name a file of `key = value` lines",
                      path);
        close(fd);
        return FWDIO_EINVAL;
    }
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    int rc = buf ? FWDIO_OK : FWDIO_ENOMEM;
    while (rc == FWDIO_OK) {
        if (used + 1 == cap) {
            if (cap > MAX_FILE_BYTES) {
                fwdioi_report("FWDIO_CONFIG=%s is larger than %d bytes: not a configuration file",
                              path, MAX_FILE_BYTES);
                rc = FWDIO_EINVAL;
                break;
            }
            char *more = realloc(buf, cap * 2);
            if (!more) {
                rc = FWDIO_ENOMEM;
                break;
            }
            buf = more;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + used, cap - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fwdioi_report("FWDIO_CONFIG=%s cannot be read: %s", path, strerror(errno));
            rc = FWDIO_EINVAL;
        } else if (n == 0) {
            break;
        } else {
            used += (size_t)n;
        }
    }
    close(fd);
    if (rc != FWDIO_OK) {
        free(buf);
        return rc;
    }
    buf[used] = '\0';
    *text = buf;
    *len = used;
    return FWDIO_OK;
}

/* Every rank: the pairs of the file's text (changed in place). */
static int parse_file(fwdioi_settings_file_t *f, char *text, size_t len)
{
    int line = 0, rc = FWDIO_OK;
    for (char *p = text; rc == FWDIO_OK && p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        char *next = nl ? nl + 1 : text + len;
        if (nl)
            *nl = '\0';
        line++;
        char *hash = strchr(p, '#');
        if (hash)
            *hash = '\0';
        char *body = trim(p);
        p = next;
        if (!*body)
            continue;
        char *eq = strchr(body, '=');
        if (!eq) {
            fwdioi_report("%s:%d: expected `key = value`", f->path, line);
            rc = FWDIO_EINVAL;
            break;
        }
        *eq = '\0';
        char *key = trim(body), *value = trim(eq + 1);
        const setting_t *k = find_key(key);
        if (!k) {
            fwdioi_report("%s:%d: unknown key \"%s\"", f->path, line, key);
            rc = FWDIO_EINVAL;
        } else if (!value_ok(k, value)) {
            char where[600];
            snprintf(where, sizeof where, "%s:%d", f->path, line);
            rc = report_bad(NULL, k, where, value);
        } else if (add_pair(f, key, value, line) != 0) {
            rc = FWDIO_ENOMEM;
        }
    }
    return rc;
}

/* Unknown FWDIO_* variables are most likely typos: say so. */
static void report_unknown_env(void)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "FWDIO_", 6))
            continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        if (len >= sizeof name)
            continue;
        memcpy(name, *e, len);
        name[len] = '\0';
        int known = 0;
        for (int i = 0; other_vars[i] && !known; i++)
            known = !strcmp(name, other_vars[i]);
        for (int i = 0; i < NKEYS && !known; i++) {
            char k[64];
            env_name(&keys[i], k, sizeof k);
            known = !strcmp(name, k);
        }
        if (!known)
            fwdioi_report("unknown environment variable %s ignored", name);
    }
}

/* What rank 0 tells the others about the file, before its text. */
enum { FILE_NONE, FILE_READ, FILE_FAILED };

int fwdioi_settings_load(fwdioi_settings_file_t *file, MPI_Comm comm)
{
    memset(file, 0, sizeof *file);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    /* Rank 0 reads; the others get its bytes, so every rank parses the same
     * text (and a file only rank 0 can see works). Sent as "path\0text". */
    int64_t head[2] = {FILE_NONE, 0}; /* what, bytes */
    char *buf = NULL;
    int rc = FWDIO_OK;
    if (rank == 0) {
        report_unknown_env();
        const char *path = getenv("FWDIO_CONFIG");
        if (path && *path) {
            char *text = NULL;
            size_t len = 0;
            rc = read_whole(path, &text, &len);
            size_t plen = strlen(path) + 1;
            if (rc == FWDIO_OK && (buf = malloc(plen + len + 1)) == NULL)
                rc = FWDIO_ENOMEM;
            if (rc == FWDIO_OK) {
                memcpy(buf, path, plen);
                memcpy(buf + plen, text, len + 1);
                head[0] = FILE_READ;
                head[1] = (int64_t)(plen + len);
            } else {
                head[0] = FILE_FAILED;
            }
            free(text);
        }
    }
    if (MPI_Bcast(head, 2, MPI_INT64_T, 0, comm) != MPI_SUCCESS) {
        free(buf);
        return FWDIO_EMPI;
    }
    if (head[0] == FILE_FAILED)
        return rc != FWDIO_OK ? rc : FWDIO_EINVAL; /* rank 0 says why */
    if (head[0] == FILE_NONE)
        return FWDIO_OK;
    if (rank != 0 && (buf = malloc((size_t)head[1] + 1)) == NULL)
        rc = FWDIO_ENOMEM;
    /* In pieces of known size, so that a rank without the memory for the
     * text still takes part (into `drop`) and fails after, not before. */
    char drop[4096];
    for (int64_t off = 0; off < head[1]; off += (int64_t)sizeof drop) {
        int n = head[1] - off < (int64_t)sizeof drop ? (int)(head[1] - off) : (int)sizeof drop;
        if (MPI_Bcast(buf ? buf + off : drop, n, MPI_CHAR, 0, comm) != MPI_SUCCESS) {
            free(buf);
            return FWDIO_EMPI;
        }
    }
    if (rc != FWDIO_OK) {
        free(buf);
        return rc;
    }
    buf[head[1]] = '\0';
    size_t plen = strlen(buf) + 1;
    file->path = strdup(buf);
    rc = file->path ? parse_file(file, buf + plen, (size_t)head[1] - plen) : FWDIO_ENOMEM;
    free(buf);
    if (rc != FWDIO_OK)
        fwdioi_settings_free(file);
    return rc;
}

int fwdioi_settings_agree(fwdioi_settings_file_t *file, MPI_Comm comm, int rc)
{
    int rank = 0, nranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    uint64_t h = env_hash();
    /* [0]: the lowest failing rank and its status, as the largest
     * (nranks - rank) << 8 | -status; [1], [2]: max of the hash and of its
     * complement, which are this rank's own on every rank only if all
     * hashes are equal. */
    uint64_t v[3] = {0, h, ~h};
    if (rc != FWDIO_OK)
        v[0] = (uint64_t)(nranks - rank) << 8 | (uint64_t)(-rc & 0xff);
    if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS) {
        fwdioi_report_release(1);
        return rc != FWDIO_OK ? rc : FWDIO_EMPI;
    }
    int lowest = v[0] ? nranks - (int)(v[0] >> 8) : -1;
    fwdioi_report_release(lowest < 0 || lowest == rank);
    file->env_hash = h;
    file->env_shared = v[1] == h && ~v[2] == h;
    if (rc != FWDIO_OK)
        return rc;
    return lowest < 0 ? FWDIO_OK : -(int)(v[0] & 0xff);
}

void fwdioi_settings_free(fwdioi_settings_file_t *file)
{
    for (int i = 0; i < file->n; i++) {
        free(file->keys[i]);
        free(file->values[i]);
    }
    free(file->keys);
    free(file->values);
    free(file->lines);
    free(file->path);
    memset(file, 0, sizeof *file);
}

int fwdioi_settings_check_callbacks(const fwdio_callbacks_t *cbs)
{
    for (size_t i = 0; cbs && i < sizeof cbs->reserved / sizeof cbs->reserved[0]; i++)
        if (cbs->reserved[i])
            return fwdioi_refuse(NULL, "fwdio_callbacks_t.reserved[%zu] is not NULL: fill the "
                                       "struct with zeros before setting callbacks",
                                 i);
    return FWDIO_OK;
}

void fwdioi_settings_print_config(const fwdio_config_t *c, FILE *out)
{
    char idle[16] = "off";
    if (c->node_buffer_idle != FWDIO_NODE_BUFFER_IDLE_KEEP)
        snprintf(idle, sizeof idle, "%u", c->node_buffer_idle);
    char wait[32] = "off";
    if (c->local_wait_ms != FWDIO_LOCAL_WAIT_OFF)
        snprintf(wait, sizeof wait, "%.3f", (double)c->local_wait_ms / 1000.0);
    fprintf(out,
            "fwdio: config: callback_mode=%s poll_min_us=%u poll_max_us=%u poll_background_us=%u "
            "poll_spin_us=%u%s max_message_size=%zu writer_buffer=%zu staging_buffer=%zu io_inline=%d watchdog=%u "
            "combine_size=%zu%s shared_buffer=%zu%s node_buffer=%zu%s node_buffer_idle=%s "
            "local_wait=%s\n",
            callback_modes[c->callback_mode], c->poll_min_us, c->poll_max_us,
            c->poll_background_us, c->poll_spin_us, c->poll_spin_us == 0 ? " (auto)" : c->poll_spin_us == 1 ? " (off)" : "",
            c->max_message_size, c->writer_buffer, c->staging_buffer,
            c->io_inline, c->watchdog, c->combine_size, c->combine_size <= 1 ? " (off)" : "", c->shared_buffer,
            c->shared_buffer <= 1 ? " (off)" : "", c->node_buffer,
            c->node_buffer <= 1 ? " (off)" : "", idle, wait);
}

/* ---- the public struct helpers ---- */

void fwdio_config_init(fwdio_config_t *cfg)
{
    if (cfg)
        memset(cfg, 0, sizeof *cfg);
}

void fwdio_options_init(fwdio_options_t *opts)
{
    if (opts)
        memset(opts, 0, sizeof *opts);
}

/* Writer lists given by fwdio_writer_list hints. The options only point to
 * their list, and options are plain structs the caller copies and drops as it
 * likes, so the lists are kept for the life of the process; identical lists
 * share one copy, so a program that sets the same hints for every file keeps
 * one list, not one per file. */
typedef struct hint_list {
    struct hint_list *next;
    int n;
    int ranks[];
} hint_list_t;

static hint_list_t *hint_lists;
static pthread_mutex_t hint_lists_lock = PTHREAD_MUTEX_INITIALIZER;

static const int *keep_hint_list(const int *ranks, int n)
{
    pthread_mutex_lock(&hint_lists_lock);
    hint_list_t *l = hint_lists;
    while (l && (l->n != n || memcmp(l->ranks, ranks, (size_t)n * sizeof *ranks)))
        l = l->next;
    if (!l && (l = malloc(sizeof *l + (size_t)n * sizeof *ranks)) != NULL) {
        l->n = n;
        memcpy(l->ranks, ranks, (size_t)n * sizeof *ranks);
        l->next = hint_lists;
        hint_lists = l;
    }
    pthread_mutex_unlock(&hint_lists_lock);
    return l ? l->ranks : NULL;
}

/* Strings given by hints (local_dir), kept for the life of the process as
 * the writer lists are; identical ones share a copy. */
typedef struct hint_string {
    struct hint_string *next;
    char text[];
} hint_string_t;

static hint_string_t *hint_strings;

static const char *keep_hint_string(const char *text)
{
    pthread_mutex_lock(&hint_lists_lock);
    hint_string_t *h = hint_strings;
    while (h && strcmp(h->text, text))
        h = h->next;
    if (!h && (h = malloc(sizeof *h + strlen(text) + 1)) != NULL) {
        strcpy(h->text, text);
        h->next = hint_strings;
        hint_strings = h;
    }
    pthread_mutex_unlock(&hint_lists_lock);
    return h ? h->text : NULL;
}

int fwdio_options_set_info(fwdio_options_t *opts, MPI_Info info)
{
    if (!opts)
        return FWDIO_EINVAL;
    if (info == MPI_INFO_NULL)
        return FWDIO_OK;
    int nkeys = 0;
    if (MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return FWDIO_EINVAL;
    fwdio_options_t next = *opts; /* copied back only if every hint is good */
    for (int i = 0; i < nkeys; i++) {
        char hint[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (MPI_Info_get_nthkey(info, i, hint) != MPI_SUCCESS ||
            MPI_Info_get(info, hint, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS)
            return FWDIO_EINVAL;
        if (!flag)
            continue;
        const char *key = NULL;
        if (!strcmp(hint, "cb_nodes"))
            key = "writers";
        else if (!strcmp(hint, "striping_unit"))
            key = "stripe_size";
        else if (!strcmp(hint, "striping_factor"))
            key = "targets";
        else if (!strcmp(hint, "cb_config_list")) {
            /* "*:N": N writers on every node; other forms name hosts. */
            int n;
            if (strncmp(value, "*:", 2) || parse_nonneg_int(value + 2, &n) != 0 || n == 0)
                return fwdioi_refuse(NULL, "hint cb_config_list=\"%s\": only \"*:N\" (N > 0 "
                                           "writers on every node) is supported",
                                     value);
            memmove(value, value + 2, strlen(value + 2) + 1);
            key = "writers_per_node";
        } else if (!strncmp(hint, "fwdio_", 6)) {
            key = hint + 6;
        }
        if (!key)
            continue; /* an MPI-IO hint fwdio has no use for */
        const setting_t *k = find_key(key);
        if (!k || k->scope != S_OPTIONS)
            return fwdioi_refuse(NULL, "hint %s: no such file option (the fwdio_ hints are the "
                                       "keys of fwdio_options_t)",
                                 hint);
        char where[MPI_MAX_INFO_KEY + 8];
        snprintf(where, sizeof where, "hint %s", hint);
        int *list = NULL;
        if (store(k, value, &next, &list) != 0) {
            free(list);
            return report_bad(NULL, k, where, value);
        }
        if (k->kind == K_STRING) { /* value is ours only until we return */
            const char *kept = keep_hint_string(value);
            if (!kept)
                return FWDIO_ENOMEM;
            memcpy((char *)&next + k->offset, &kept, sizeof kept);
        }
        if (list) { /* a writer list: kept by fwdio, see keep_hint_list */
            next.writer_list = keep_hint_list(list, next.writer_list_len);
            free(list);
            if (!next.writer_list)
                return FWDIO_ENOMEM;
        }
        next.pinned |= k->pin;
    }
    *opts = next;
    return FWDIO_OK;
}
