/* One table of keys drives the environment, the config file and the hints. */
#include "settings.h"

#include "config.h"
#include "log.h"
#include "parse_size.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* K_SIZE_OFF: a size where 0 or "off" means off, stored as 1 (0 in a field
 * means "not set"). */
typedef enum { K_SIZE, K_SIZE_OFF, K_INT, K_SECONDS, K_BOOL, K_CHOICE, K_LIST } key_kind_t;
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
} setting_t;

#define CFG(name, kind, field, choices) \
    {name, kind, S_CONFIG, offsetof(fwdio_config_t, field), sizeof(((fwdio_config_t *)0)->field), choices}
#define OPT(name, kind, field, choices) \
    {name, kind, S_OPTIONS, offsetof(fwdio_options_t, field), sizeof(((fwdio_options_t *)0)->field), choices}

static const setting_t keys[] = {
    CFG("callback_mode", K_CHOICE, callback_mode, callback_modes),
    CFG("poll_min_us", K_INT, poll_min_us, NULL),
    CFG("poll_max_us", K_INT, poll_max_us, NULL),
    CFG("max_message_size", K_SIZE, max_message_size, NULL),
    CFG("writer_buffer", K_SIZE, writer_buffer, NULL),
    CFG("staging_buffer", K_SIZE, staging_buffer, NULL),
    CFG("io_inline", K_BOOL, io_inline, NULL),
    CFG("watchdog", K_SECONDS, watchdog, NULL),
    CFG("combine_size", K_SIZE_OFF, combine_size, NULL),
    OPT("write_size", K_SIZE, write_size, NULL),
    OPT("stripe_size", K_SIZE, stripe_size, NULL),
    OPT("writers", K_INT, writers, NULL),
    OPT("first_writer", K_INT, first_writer, NULL),
    OPT("writer_stride", K_INT, writer_stride, NULL),
    OPT("layout", K_CHOICE, layout, layouts),
    OPT("durable", K_BOOL, durable, NULL),
    OPT("placement", K_CHOICE, placement, placements),
    OPT("writers_per_node", K_INT, writers_per_node, NULL),
    OPT("writer_list", K_LIST, writer_list, NULL),
    OPT("targets", K_INT, targets, NULL),
    OPT("atomic_replace", K_BOOL, atomic_replace, NULL),
};
enum { NKEYS = sizeof keys / sizeof keys[0] };

/* FWDIO_* variables that are not keys but are ours. */
static const char *const other_vars[] = {"FWDIO_CONFIG", "FWDIO_VERBOSE", "FWDIO_TRACE",
                                           "FWDIO_TRACE_MAX_EVENTS", "FWDIO_FAULT", NULL};

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

static int field_is_zero(const setting_t *k, const void *base)
{
    const unsigned char *field = (const unsigned char *)base + k->offset;
    for (size_t i = 0; i < k->width; i++)
        if (field[i])
            return 0;
    return 1;
}

static void describe_choices(const setting_t *k, char *out, size_t len)
{
    switch (k->kind) {
    case K_SIZE: snprintf(out, len, "a size in bytes, e.g. 8M"); return;
    case K_SIZE_OFF: snprintf(out, len, "a size in bytes, e.g. 256K, or 0 or off"); return;
    case K_INT: snprintf(out, len, "a whole number >= 0"); return;
    case K_SECONDS: snprintf(out, len, "seconds (a whole number) or off"); return;
    case K_BOOL: snprintf(out, len, "0 or 1"); return;
    case K_LIST: snprintf(out, len, "ranks separated by commas, e.g. 0,4,8"); return;
    case K_CHOICE: break;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; k->choices[i] && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "|" : "", k->choices[i]);
}

static void report_bad(const setting_t *k, const char *where, const char *value)
{
    char expect[80];
    describe_choices(k, expect, sizeof expect);
    fwdioi_report("%s: \"%s\" is not valid for %s (expected %s)", where, value, k->name, expect);
}

/* Fill the zero fields of one scope from the environment, then the file. */
static int apply(const fwdioi_settings_file_t *file, key_scope_t scope, void *base, int **list)
{
    for (int i = 0; i < NKEYS; i++) {
        const setting_t *k = &keys[i];
        if (k->scope != scope || !field_is_zero(k, base))
            continue;
        char name[64];
        env_name(k, name, sizeof name);
        const char *v = getenv(name);
        if (v && *v) {
            if (store(k, v, base, list) != 0) {
                report_bad(k, name, v);
                return FWDIO_EINVAL;
            }
            continue;
        }
        for (int j = 0; file && j < file->n; j++) {
            if (strcmp(file->keys[j], k->name))
                continue;
            if (store(k, file->values[j], base, list) != 0) {
                char where[600];
                snprintf(where, sizeof where, "%s:%d", file->path, file->lines[j]);
                report_bad(k, where, file->values[j]);
                return FWDIO_EINVAL;
            }
        }
    }
    return FWDIO_OK;
}

int fwdioi_settings_apply_config(const fwdioi_settings_file_t *file, fwdio_config_t *cfg)
{
    return apply(file, S_CONFIG, cfg, NULL);
}

int fwdioi_settings_apply_options(const fwdioi_settings_file_t *file, fwdio_options_t *opts,
                                  int **list_storage)
{
    *list_storage = NULL;
    int rc = apply(file, S_OPTIONS, opts, list_storage);
    if (rc != FWDIO_OK) {
        free(*list_storage);
        *list_storage = NULL;
    }
    return rc;
}

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
    if (!f->keys[f->n] || !f->values[f->n])
        return -1;
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

static int read_file(fwdioi_settings_file_t *f, const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fwdioi_report("FWDIO_CONFIG=%s cannot be read: %s", path, strerror(errno));
        return FWDIO_EINVAL;
    }
    f->path = strdup(path);
    char buf[1024];
    int line = 0, rc = f->path ? FWDIO_OK : FWDIO_ENOMEM;
    while (rc == FWDIO_OK && fgets(buf, sizeof buf, in)) {
        line++;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *text = trim(buf);
        if (!*text)
            continue;
        char *eq = strchr(text, '=');
        if (!eq) {
            fwdioi_report("%s:%d: expected `key = value`", path, line);
            rc = FWDIO_EINVAL;
            break;
        }
        *eq = '\0';
        char *key = trim(text), *value = trim(eq + 1);
        const setting_t *k = find_key(key);
        if (!k) {
            fwdioi_report("%s:%d: unknown key \"%s\"", path, line, key);
            rc = FWDIO_EINVAL;
        } else if (!value_ok(k, value)) {
            char where[600];
            snprintf(where, sizeof where, "%s:%d", path, line);
            report_bad(k, where, value);
            rc = FWDIO_EINVAL;
        } else if (add_pair(f, key, value, line) != 0) {
            rc = FWDIO_ENOMEM;
        }
    }
    fclose(in);
    return rc;
}

extern char **environ;

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

int fwdioi_settings_load(fwdioi_settings_file_t *file, int report)
{
    memset(file, 0, sizeof *file);
    if (report)
        report_unknown_env();
    const char *path = getenv("FWDIO_CONFIG");
    if (!path || !*path)
        return FWDIO_OK;
    int rc = read_file(file, path);
    if (rc != FWDIO_OK)
        fwdioi_settings_free(file);
    return rc;
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

void fwdioi_settings_print_config(const fwdio_config_t *c, FILE *out)
{
    fprintf(out,
            "fwdio: config: callback_mode=%s poll_min_us=%u poll_max_us=%u max_message_size=%zu "
            "writer_buffer=%zu staging_buffer=%zu io_inline=%d watchdog=%u "
            "combine_size=%zu%s\n",
            callback_modes[c->callback_mode], c->poll_min_us, c->poll_max_us,
            c->max_message_size, c->writer_buffer, c->staging_buffer, c->io_inline, c->watchdog,
            c->combine_size, c->combine_size <= 1 ? " (off)" : "");
}

int fwdio_options_set_info(fwdio_options_t *opts, MPI_Info info)
{
    if (!opts)
        return FWDIO_EINVAL;
    if (info == MPI_INFO_NULL)
        return FWDIO_OK;
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char hint[MPI_MAX_INFO_KEY + 1], value[256];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, hint);
        MPI_Info_get(info, hint, (int)sizeof value - 1, value, &flag);
        if (!flag)
            continue;
        const char *key = NULL;
        char converted[64];
        if (!strcmp(hint, "cb_nodes"))
            key = "writers";
        else if (!strcmp(hint, "striping_unit"))
            key = "stripe_size";
        else if (!strcmp(hint, "striping_factor"))
            key = "targets";
        else if (!strcmp(hint, "cb_config_list")) {
            /* "*:N": N writers on every node; other forms name hosts. */
            int n;
            if (strncmp(value, "*:", 2) || parse_nonneg_int(value + 2, &n) != 0 || n == 0) {
                fwdioi_report("hint cb_config_list=\"%s\": only \"*:N\" is supported", value);
                return FWDIO_EINVAL;
            }
            snprintf(converted, sizeof converted, "%d", n);
            snprintf(value, sizeof value, "%s", converted);
            key = "writers_per_node";
        } else if (!strncmp(hint, "fwdio_", 6)) {
            key = hint + 6;
        }
        if (!key)
            continue; /* an MPI-IO hint fwdio has no use for */
        const setting_t *k = find_key(key);
        if (!k || k->scope != S_OPTIONS || k->kind == K_LIST) {
            fwdioi_report("hint %s: no such file option", hint);
            return FWDIO_EINVAL;
        }
        if (store(k, value, opts, NULL) != 0) {
            char where[MPI_MAX_INFO_KEY + 8];
            snprintf(where, sizeof where, "hint %s", hint);
            report_bad(k, where, value);
            return FWDIO_EINVAL;
        }
    }
    return FWDIO_OK;
}
