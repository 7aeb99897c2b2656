/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where settings come from (forwarder/settings): a field set in code, or
 * pinned by a hint, keeps its value; any other takes FWDIO_<KEY> from the
 * environment, else the FWDIO_CONFIG file's line, else stays for its
 * default; sizes, choices and seconds are parsed; a bad value is refused
 * (FWDIO_EINVAL) with a line naming the variable or the file and line it
 * came from, the value and what was expected. The file is given as rank 0
 * would have read it (fwdioi_settings_load needs MPI); no MPI call is made.
 */
#include "unit_check.h"

#include "settings/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A config file of `n` `key = value` pairs, on lines 1.. */
static fwdioi_settings_file_t file_of(char *path, char **keys, char **values, int *lines, int n)
{
    fwdioi_settings_file_t f;
    memset(&f, 0, sizeof f);
    f.path = path;
    f.n = n;
    f.keys = keys;
    f.values = values;
    f.lines = lines;
    return f;
}

static void clear_env(void)
{
    unsetenv("FWDIO_STRIPE_SIZE");
    unsetenv("FWDIO_LAYOUT");
    unsetenv("FWDIO_WRITERS");
    unsetenv("FWDIO_WRITER_BUFFER");
    unsetenv("FWDIO_WATCHDOG");
    unsetenv("FWDIO_NODE_BUFFER_IDLE");
    unsetenv("FWDIO_LOCAL_WAIT");
}

/* Apply to `opts` with the refusal's text, if any, into `text`. */
static int apply_opts(const fwdioi_settings_file_t *file, fwdio_options_t *opts, char *text,
                      size_t cap)
{
    fwdioi_settings_origins_t why;
    fwdioi_settings_origins_init(&why, file, -1, 0);
    FILE *out = tmpfile();
    if (!out)
        abort();
    why.base.out = out;
    int *list = NULL;
    int rc = fwdioi_settings_apply_options(file, opts, &list, &why);
    free(list);
    rewind(out);
    size_t n = fread(text, 1, cap - 1, out);
    text[n] = '\0';
    fclose(out);
    return rc;
}

/* Code, environment, file, default: the first found wins. */
static void test_precedence(void)
{
    clear_env();
    char *keys[] = {"stripe_size", "layout", "writers"};
    char *values[] = {"2M", "cyclic", "3"};
    int lines[] = {1, 2, 5};
    fwdioi_settings_file_t file = file_of("/x/fwdio.conf", keys, values, lines, 3);
    char text[1024];

    fwdio_options_t o = {0};
    CHECK(apply_opts(&file, &o, text, sizeof text) == FWDIO_OK && text[0] == '\0');
    CHECK(o.stripe_size == 2u << 20 && o.layout == FWDIO_LAYOUT_CYCLIC && o.writers == 3);

    setenv("FWDIO_STRIPE_SIZE", "512K", 1);
    setenv("FWDIO_LAYOUT", "block", 1);
    fwdio_options_t e = {0};
    CHECK(apply_opts(&file, &e, text, sizeof text) == FWDIO_OK);
    CHECK(e.stripe_size == 512u << 10 && e.layout == FWDIO_LAYOUT_BLOCK && e.writers == 3);

    fwdio_options_t c = {0};
    c.stripe_size = 4096;
    c.writers = 1;
    c.pinned = FWDIO_PIN_LAYOUT; /* a hint set layout to its 0 (block): it stays */
    CHECK(apply_opts(&file, &c, text, sizeof text) == FWDIO_OK);
    CHECK(c.stripe_size == 4096 && c.writers == 1 && c.layout == 0);

    fwdio_options_t d = {0};
    CHECK(apply_opts(NULL, &d, text, sizeof text) == FWDIO_OK); /* no file */
    CHECK(d.stripe_size == 512u << 10 && d.writers == 0); /* 0: its default later */
    clear_env();
    fwdio_options_t z = {0};
    CHECK(apply_opts(NULL, &z, text, sizeof text) == FWDIO_OK);
    CHECK(z.stripe_size == 0 && z.layout == 0 && z.writers == 0);
}

/* A bad value is refused with where it came from, the value and what was
 * expected. */
static void test_bad_values(void)
{
    clear_env();
    char text[1024];
    setenv("FWDIO_STRIPE_SIZE", "12 parsecs", 1);
    fwdio_options_t a = {0};
    CHECK(apply_opts(NULL, &a, text, sizeof text) == FWDIO_EINVAL);
    CHECK(strstr(text, "FWDIO_STRIPE_SIZE") && strstr(text, "12 parsecs") &&
          strstr(text, "stripe_size") && strstr(text, "a size in bytes"));
    clear_env();

    char *keys[] = {"writers", "layout"};
    char *values[] = {"2", "zigzag"};
    int lines[] = {3, 7};
    fwdioi_settings_file_t file = file_of("/x/fwdio.conf", keys, values, lines, 2);
    fwdio_options_t b = {0};
    CHECK(apply_opts(&file, &b, text, sizeof text) == FWDIO_EINVAL);
    CHECK(strstr(text, "/x/fwdio.conf:7") && strstr(text, "zigzag") &&
          strstr(text, "block|cyclic|targets"));

    setenv("FWDIO_WRITERS", "-3", 1);
    fwdio_options_t c = {0};
    CHECK(apply_opts(NULL, &c, text, sizeof text) == FWDIO_EINVAL);
    CHECK(strstr(text, "FWDIO_WRITERS") && strstr(text, "a whole number >= 0"));
    clear_env();
}

/* The runtime's settings: from the environment and the file, then checked
 * (fwdioi_config_check); a refusal says why on stderr. */
static void test_config(void)
{
    clear_env();
    char *keys[] = {"writer_buffer", "watchdog"};
    char *values[] = {"32M", "off"};
    int lines[] = {1, 2};
    fwdioi_settings_file_t file = file_of("/x/fwdio.conf", keys, values, lines, 2);
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    CHECK(fwdioi_settings_apply_config(&file, &cfg, -1) == FWDIO_OK);
    CHECK(cfg.writer_buffer == 32u << 20 && cfg.watchdog == FWDIO_WATCHDOG_OFF);

    setenv("FWDIO_WRITER_BUFFER", "48M", 1);
    setenv("FWDIO_WATCHDOG", "7", 1);
    fwdio_config_init(&cfg);
    CHECK(fwdioi_settings_apply_config(&file, &cfg, -1) == FWDIO_OK);
    CHECK(cfg.writer_buffer == 48u << 20 && cfg.watchdog == 7);

    /* node_buffer_idle: seconds, or off (kept until fwdio_finalize); the
     * code's value stands over the environment's */
    setenv("FWDIO_NODE_BUFFER_IDLE", "off", 1);
    fwdio_config_init(&cfg);
    CHECK(fwdioi_settings_apply_config(NULL, &cfg, -1) == FWDIO_OK);
    CHECK(cfg.node_buffer_idle == FWDIO_NODE_BUFFER_IDLE_KEEP);
    setenv("FWDIO_NODE_BUFFER_IDLE", "5", 1);
    fwdio_config_init(&cfg);
    CHECK(fwdioi_settings_apply_config(NULL, &cfg, -1) == FWDIO_OK);
    CHECK(cfg.node_buffer_idle == 5);
    fwdio_config_init(&cfg);
    cfg.node_buffer_idle = 2;
    CHECK(fwdioi_settings_apply_config(NULL, &cfg, -1) == FWDIO_OK);
    CHECK(cfg.node_buffer_idle == 2);
    unsetenv("FWDIO_NODE_BUFFER_IDLE");

    /* local_wait: seconds with a fraction into local_wait_ms (rounded up),
     * 0 or off never waits; the code's value stands over the environment's */
    static const struct {
        const char *v;
        uint64_t ms;
    } waits[] = {{"10", 10000}, {"0.2", 200}, {"0.0001", 1}, {"off", FWDIO_LOCAL_WAIT_OFF},
                 {"0", FWDIO_LOCAL_WAIT_OFF}};
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
        setenv("FWDIO_LOCAL_WAIT", waits[i].v, 1);
        fwdio_config_init(&cfg);
        CHECK(fwdioi_settings_apply_config(NULL, &cfg, -1) == FWDIO_OK);
        CHECK(cfg.local_wait_ms == waits[i].ms);
    }
    fwdio_config_init(&cfg);
    cfg.local_wait_ms = 300;
    CHECK(fwdioi_settings_apply_config(NULL, &cfg, -1) == FWDIO_OK);
    CHECK(cfg.local_wait_ms == 300);
    unsetenv("FWDIO_LOCAL_WAIT");

    /* refused: stderr (fwdioi_report) into a file for the check */
    setenv("FWDIO_WATCHDOG", "soon", 1);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *err = tmpfile();
    if (saved < 0 || !err || dup2(fileno(err), STDERR_FILENO) < 0)
        abort();
    fwdio_config_init(&cfg);
    int rc = fwdioi_settings_apply_config(&file, &cfg, -1);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char text[1024];
    rewind(err);
    size_t n = fread(text, 1, sizeof text - 1, err);
    text[n] = '\0';
    fclose(err);
    CHECK(rc == FWDIO_EINVAL);
    CHECK(strstr(text, "FWDIO_WATCHDOG") && strstr(text, "soon") && strstr(text, "seconds"));
    unsetenv("FWDIO_WATCHDOG");
    /* a wait that is not a number of seconds, or a negative one */
    static const char *const bad_waits[] = {"soon", "-1", "1e9", "2s"};
    for (size_t i = 0; i < sizeof bad_waits / sizeof bad_waits[0]; i++) {
        setenv("FWDIO_LOCAL_WAIT", bad_waits[i], 1);
        fwdio_config_init(&cfg);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        err = tmpfile();
        if (saved < 0 || !err || dup2(fileno(err), STDERR_FILENO) < 0)
            abort();
        rc = fwdioi_settings_apply_config(NULL, &cfg, -1);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        rewind(err);
        n = fread(text, 1, sizeof text - 1, err);
        text[n] = '\0';
        fclose(err);
        CHECK(rc == FWDIO_EINVAL);
        CHECK(strstr(text, "FWDIO_LOCAL_WAIT") && strstr(text, "seconds"));
    }
    clear_env();
}

int main(void)
{
    test_precedence();
    test_bad_values();
    test_config();
    return unit_result("test_settings");
}
