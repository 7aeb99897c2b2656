/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where settings come from, and in which order: code (a value, or a pinned 0)
 * > MPI-IO hints (which write and pin the fields) > FWDIO_<KEY> environment >
 * FWDIO_CONFIG file (read by rank 0, broadcast) > defaults; that bad values
 * and unknown keys are refused, not ignored; and that every refusal says why
 * on stderr, from the ranks fwdio.h ("Refusals") says. The effect of each
 * setting is read back from what the library does with it (writer count and
 * ranks, bytes per writer, budgets), and one file per case is written and
 * verified.
 */
#define _GNU_SOURCE
#include "test_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every rank sets the same environment; the runtime reads it on its own thread
 * only at init and open, which the test calls from this thread. */
static void set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static void write_config_file(const char *path, const char *text)
{
    if (tc_rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f) {
            tc_fail("cannot write %s", path);
            return;
        }
        fputs(text, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Open a file of `size` bytes with `opts`, write it, verify it; return its
 * writer count, and (if not NULL) its first writers' ranks and bytes. */
static int run_file(fwdio_runtime_t *rt, const fwdio_options_t *opts, const char *name,
                    uint64_t size, int *ranks, uint64_t *bytes, int max)
{
    char path[4096];
    tc_path(path, sizeof path, name);
    const uint64_t seed = 77;
    fwdio_file_t *f = NULL;
    int rc = fwdio_open(rt, path, size, opts, NULL, &f);
    TC_EXPECT(rc, FWDIO_OK, name);
    if (rc != FWDIO_OK)
        return -1;
    int n = fwdio_file_writers(f, ranks, max);
    uint64_t first = size * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t last = size * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    TC_EXPECT(tc_write_pattern(f, first, last - first, seed, 10000), FWDIO_OK, "write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "wait");
    if (bytes)
        fwdio_file_writer_bytes(f, bytes, max);
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
    return n;
}

/* Open a small file with `opts`, write it, verify it; return its writer count. */
static int writers_of(fwdio_runtime_t *rt, const fwdio_options_t *opts, const char *name)
{
    return run_file(rt, opts, name, 256 << 10, NULL, NULL, 0);
}

static void section_precedence(void)
{
    tc_phase("precedence");
    char conf[4096];
    tc_path(conf, sizeof conf, "fwdio.conf");
    write_config_file(conf, "# test config\nwriters = 1\nstaging_buffer = 3M  # comment\n"
                            "stripe_size=128K\n");
    set_env("FWDIO_CONFIG", conf);
    set_env("FWDIO_WRITER_BUFFER", "5M");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    fwdio_runtime_stats_t rs;
    fwdio_runtime_stats(rt, &rs);
    TC_CHECK(rs.staging_budget == (3u << 20), "staging budget from the file: %llu",
             (unsigned long long)rs.staging_budget);
    TC_CHECK(rs.writer_budget == (5u << 20), "writer budget from the environment: %llu",
             (unsigned long long)rs.writer_budget);

    fwdio_options_t o;
    fwdio_options_init(&o);
    TC_CHECK(writers_of(rt, &o, "file_only.dat") == 1, "writers from the file");
    set_env("FWDIO_WRITERS", "2");
    TC_CHECK(writers_of(rt, &o, "env_over_file.dat") == (tc_size < 2 ? 1 : 2),
             "the environment over the file");
    o.writers = 1;
    TC_CHECK(writers_of(rt, &o, "code_over_env.dat") == 1, "code over the environment");

    /* MPI-IO hints write the fields they name */
    fwdio_options_init(&o);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_nodes", "1");
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "romio_cb_write", "enable"); /* not ours: ignored */
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_OK, "fwdio_options_set_info");
    TC_CHECK(o.writers == 1 && o.stripe_size == 65536, "hints: writers %d stripe %llu",
             o.writers, (unsigned long long)o.stripe_size);
    TC_CHECK(writers_of(rt, &o, "hints_over_env.dat") == 1, "hints over the environment");
    MPI_Info_free(&info);

    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_config_list", "*:1");
    MPI_Info_set(info, "striping_factor", "3");
    MPI_Info_set(info, "fwdio_layout", "targets");
    fwdio_options_init(&o);
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_OK, "set_info (config list, targets)");
    TC_CHECK(o.writers_per_node == 1 && o.targets == 3 && o.layout == FWDIO_LAYOUT_TARGETS,
             "hints: per node %d targets %d layout %d", o.writers_per_node, o.targets,
             (int)o.layout);
    TC_CHECK(writers_of(rt, &o, "per_node.dat") == tc_node_count(MPI_COMM_WORLD),
             "cb_config_list *:1: one writer per node");
    MPI_Info_free(&info);

    /* malformed hints are refused */
    const char *bad[][2] = {{"cb_nodes", "many"}, {"cb_config_list", "host1:2"},
                            {"striping_unit", "-5"}, {"fwdio_no_such_key", "1"},
                            {"fwdio_layout", "diagonal"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        MPI_Info_create(&info);
        MPI_Info_set(info, bad[i][0], bad[i][1]);
        fwdio_options_init(&o);
        TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_EINVAL, bad[i][0]);
        MPI_Info_free(&info);
    }

    /* a malformed environment value fails the open, not silently */
    set_env("FWDIO_LAYOUT", "diagonal");
    fwdio_file_t *f = NULL;
    char path[4096];
    tc_path(path, sizeof path, "bad_env.dat");
    fwdio_options_init(&o);
    TC_EXPECT(fwdio_open(rt, path, 1024, &o, NULL, &f), FWDIO_EINVAL, "FWDIO_LAYOUT=diagonal");
    set_env("FWDIO_LAYOUT", NULL);
    set_env("FWDIO_WRITER_LIST", "0");
    TC_CHECK(writers_of(rt, &o, "env_list.dat") == 1, "FWDIO_WRITER_LIST=0 with placement list");
    set_env("FWDIO_WRITER_LIST", NULL);
    set_env("FWDIO_WRITERS", NULL);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    set_env("FWDIO_WRITER_BUFFER", NULL);
    set_env("FWDIO_CONFIG", NULL);
}

/* fwdio_init refuses bad settings on every rank. */
static void section_bad_init(void)
{
    tc_phase("bad settings at init");
    char conf[4096];
    tc_path(conf, sizeof conf, "bad.conf");
    const char *cases[][2] = {
        {"FWDIO_WRITER_BUFFER", "lots"},
        {"FWDIO_CALLBACK_MODE", "sometimes"},
        {"FWDIO_IO_INLINE", "yes"},
        {"FWDIO_COMBINE_SIZE", "-1"},
        {"FWDIO_POLL_BACKGROUND_US", "soon"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        set_env(cases[i][0], cases[i][1]);
        fwdio_runtime_t *rt = NULL;
        TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, cases[i][0]);
        set_env(cases[i][0], NULL);
    }
    write_config_file(conf, "writers = 2\nno_such_key = 1\n");
    set_env("FWDIO_CONFIG", conf);
    fwdio_runtime_t *rt = NULL;
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, "unknown key in the file");
    write_config_file(conf, "stripe_size = big\n");
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, "bad value in the file");
    set_env("FWDIO_CONFIG", "/nonexistent/fwdio.conf");
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, "missing config file");
    set_env("FWDIO_CONFIG", NULL);
    /* and with nothing wrong, init works again */
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* combine_size: default, FWDIO_COMBINE_SIZE (0 is off), code over it, and the
 * bounds, as fwdio_runtime_stats reports what is in force. */
static void section_combine_size(void)
{
    tc_phase("combine_size");
    const struct {
        const char *env;
        size_t code;
        uint64_t want;
    } cases[] = {
        {NULL, 0, FWDIO_DEFAULT_COMBINE_SIZE},
        {"0", 0, 1},              /* off */
        {"100K", 0, 100 << 10},
        {"100K", 1, 1},           /* code over the environment */
        {"10", 0, 64},            /* raised to the smallest useful size */
        {"1G", 0, 8 << 20},       /* no larger than max_message_size (8 MiB) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        set_env("FWDIO_COMBINE_SIZE", cases[i].env);
        fwdio_config_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.combine_size = cases[i].code;
        fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
        fwdio_runtime_stats_t rs;
        TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
        TC_CHECK(rs.combine_size == cases[i].want,
                 "FWDIO_COMBINE_SIZE=%s, code %zu: combine_size %llu, expected %llu",
                 cases[i].env ? cases[i].env : "(unset)", cases[i].code,
                 (unsigned long long)rs.combine_size, (unsigned long long)cases[i].want);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    set_env("FWDIO_COMBINE_SIZE", NULL);
}

/* A pinned field keeps the code's value, even 0 (the default), whatever the
 * environment says; so does a field an MPI-IO hint wrote. */
static void section_pinned(void)
{
    tc_phase("pinned settings");
    set_env("FWDIO_COMBINE_SIZE", "100K");
    set_env("FWDIO_WRITER_BUFFER", "5M");
    const struct {
        uint64_t pinned;
        uint64_t combine, writer;
    } cases[] = {
        {0, 100 << 10, 5 << 20}, /* not pinned: the environment */
        {FWDIO_PIN_COMBINE_SIZE, FWDIO_DEFAULT_COMBINE_SIZE, 5 << 20},
        {FWDIO_PIN_ALL, FWDIO_DEFAULT_COMBINE_SIZE, FWDIO_DEFAULT_WRITER_BUFFER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fwdio_config_t cfg;
        memset(&cfg, 0xff, sizeof cfg);
        fwdio_config_init(&cfg);
        TC_CHECK(cfg.combine_size == 0 && cfg.pinned == 0 && cfg.shared_buffer == 0 &&
                     cfg.poll_background_us == 0 && cfg.poll_spin_us == 0 && cfg.node_buffer == 0 && cfg.files_in_flight == 0 &&
                     cfg.node_buffer_idle == 0 && cfg.local_wait_ms == 0 && cfg.reserved[2] == 0,
                 "fwdio_config_init left fields set");
        cfg.pinned = cases[i].pinned;
        fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
        fwdio_runtime_stats_t rs;
        TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
        TC_CHECK(rs.combine_size == cases[i].combine && rs.writer_budget == cases[i].writer,
                 "pinned %#llx: combine_size %llu writer budget %llu, expected %llu and %llu",
                 (unsigned long long)cases[i].pinned, (unsigned long long)rs.combine_size,
                 (unsigned long long)rs.writer_budget, (unsigned long long)cases[i].combine,
                 (unsigned long long)cases[i].writer);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    set_env("FWDIO_COMBINE_SIZE", NULL);
    set_env("FWDIO_WRITER_BUFFER", NULL);
    if (tc_size < 2) {
        tc_note("pinned options need 2 ranks: skipped");
        return;
    }

    /* Block layout (0) against FWDIO_LAYOUT=cyclic: 3 stripes on 2 writers
     * are 2 + 1 (cyclic) or 1 + 2 (block, the long run last). */
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    set_env("FWDIO_LAYOUT", "cyclic");
    const uint64_t stripe = 64 << 10, size = 3 * stripe;
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = 2;
    o.stripe_size = o.write_size = stripe;
    uint64_t bytes[2] = {0, 0};
    run_file(rt, &o, "layout_env.dat", size, NULL, bytes, 2);
    TC_CHECK(bytes[0] == 2 * stripe && bytes[1] == stripe,
             "FWDIO_LAYOUT=cyclic not in force: writer bytes %llu %llu",
             (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
    o.layout = FWDIO_LAYOUT_BLOCK;
    o.pinned = FWDIO_PIN_LAYOUT;
    run_file(rt, &o, "layout_pinned.dat", size, NULL, bytes, 2);
    TC_CHECK(bytes[0] == stripe && bytes[1] == 2 * stripe,
             "pinned block layout lost to FWDIO_LAYOUT=cyclic: writer bytes %llu %llu",
             (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
    /* the same through a hint */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "fwdio_layout", "block");
    fwdio_options_init(&o);
    o.writers = 2;
    o.stripe_size = o.write_size = stripe;
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_OK, "set_info fwdio_layout=block");
    MPI_Info_free(&info);
    TC_CHECK(o.pinned == FWDIO_PIN_LAYOUT, "the hint did not pin the layout: %#llx",
             (unsigned long long)o.pinned);
    run_file(rt, &o, "layout_hint.dat", size, NULL, bytes, 2);
    TC_CHECK(bytes[0] == stripe && bytes[1] == 2 * stripe,
             "hint layout=block lost to FWDIO_LAYOUT=cyclic: writer bytes %llu %llu",
             (unsigned long long)bytes[0], (unsigned long long)bytes[1]);
    set_env("FWDIO_LAYOUT", NULL);

    /* First writer 0 against FWDIO_FIRST_WRITER=1. */
    set_env("FWDIO_FIRST_WRITER", "1");
    fwdio_options_init(&o);
    o.writers = 1;
    int writer = -1;
    run_file(rt, &o, "first_env.dat", 64 << 10, &writer, NULL, 1);
    TC_CHECK(writer == 1, "FWDIO_FIRST_WRITER=1 not in force: writer rank %d", writer);
    o.placement = FWDIO_PLACEMENT_STRIDE;
    o.first_writer = 0;
    o.pinned = FWDIO_PIN_FIRST_WRITER;
    run_file(rt, &o, "first_pinned.dat", 64 << 10, &writer, NULL, 1);
    TC_CHECK(writer == 0, "pinned first_writer 0 lost to FWDIO_FIRST_WRITER=1: writer rank %d",
             writer);
    set_env("FWDIO_FIRST_WRITER", NULL);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* The fwdio_writer_list hint: kept by fwdio, so the options outlive the info
 * and may be copied; identical lists share one copy; a refused hint changes
 * nothing. */
static void section_hint_list(void)
{
    tc_phase("writer list hint");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    const int n = tc_size >= 2 ? 2 : 1;
    const int want[2] = {tc_size >= 2 ? 1 : 0, 0};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "fwdio_writer_list", n == 2 ? "1,0" : "0");
    fwdio_options_t o, again;
    fwdio_options_init(&o);
    fwdio_options_init(&again);
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_OK, "set_info fwdio_writer_list");
    TC_EXPECT(fwdio_options_set_info(&again, info), FWDIO_OK, "set_info fwdio_writer_list again");
    MPI_Info_free(&info);
    TC_CHECK(o.writer_list && o.writer_list_len == n && o.writer_list[0] == want[0] &&
                 (o.pinned & FWDIO_PIN_WRITER_LIST),
             "the hint's list: %d ranks, pinned %#llx", o.writer_list_len,
             (unsigned long long)o.pinned);
    TC_CHECK(again.writer_list == o.writer_list, "the same list was kept twice");
    fwdio_options_t copy = o;
    int ranks[2] = {-1, -1};
    TC_CHECK(run_file(rt, &copy, "hint_list.dat", 256 << 10, ranks, NULL, 2) == n &&
                 ranks[0] == want[0] && (n == 1 || ranks[1] == want[1]),
             "writers from the hint's list: %d %d", ranks[0], ranks[1]);

    MPI_Info_create(&info);
    MPI_Info_set(info, "fwdio_writers", "2");
    MPI_Info_set(info, "fwdio_layout", "diagonal");
    fwdio_options_init(&o);
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_EINVAL, "set_info with a bad layout");
    TC_CHECK(o.writers == 0 && o.pinned == 0, "a refused set_info changed the options");
    MPI_Info_free(&info);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* The config file is rank 0's, sent to the others: ranks whose own
 * FWDIO_CONFIG names nothing readable get rank 0's file. */
static void section_file_broadcast(void)
{
    tc_phase("config file read by rank 0");
    char conf[4096];
    tc_path(conf, sizeof conf, "rank0.conf");
    write_config_file(conf, "writers = 1\n");
    set_env("FWDIO_CONFIG", tc_rank == 0 ? conf : "/nonexistent/elsewhere.conf");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    fwdio_options_t o;
    fwdio_options_init(&o);
    TC_CHECK(writers_of(rt, &o, "broadcast.dat") == 1, "writers from rank 0's file");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    set_env("FWDIO_CONFIG", NULL);
}

static int has(const char *text, const char *what) { return text && strstr(text, what) != NULL; }

/* What this rank printed in `text` must hold `what` (every rank), or hold it
 * on rank `printer` and nothing of `absent` elsewhere. */
static void expect_said(const char *case_name, const char *text, int printer, const char *what,
                        const char *absent)
{
    if (!text)
        text = "";
    if (printer < 0 || tc_rank == printer)
        TC_CHECK(has(text, what), "%s: expected \"%s\" on stderr; it was:\n%s", case_name, what,
                 text);
    else
        TC_CHECK(!has(text, absent), "%s: rank %d should be silent; it printed:\n%s", case_name,
                 tc_rank, text);
}

/* Every refusal says why, naming the source, from the ranks fwdio.h says. */
static void section_refusals(void)
{
    tc_phase("refusals say why");
    tc_capture_t cap;
    char *text, mine[32], line[9000];
    snprintf(mine, sizeof mine, "rank %d: ", tc_rank);
    fwdio_runtime_t *rt = NULL;

    /* Bad values in code: refused at the call (no collective) on every rank,
     * each saying so with its rank. */
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    tc_capture_begin(&cap, "code_config");
    cfg.max_message_size = 100;
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, &cfg, &rt), FWDIO_EINVAL, "max_message_size 100");
    fwdio_config_init(&cfg);
    cfg.callback_mode = (fwdio_callback_mode_t)7;
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, &cfg, &rt), FWDIO_EINVAL, "callback_mode 7");
    fwdio_config_init(&cfg);
    cfg.reserved[2] = 1;
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, &cfg, &rt), FWDIO_EINVAL, "reserved[2] = 1");
    fwdio_config_init(&cfg);
    cfg.poll_spin_us = 100001;
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, &cfg, &rt), FWDIO_EINVAL, "poll_spin_us = 100001");
    text = tc_capture_end(&cap);
    expect_said("code config", text, -1, "max_message_size 100 (set in code) is out of range", "");
    expect_said("code config", text, -1, "callback_mode 7 (set in code) is not a callback mode",
                "");
    expect_said("code config", text, -1, "fwdio_config_t.reserved[2] is not 0", "");
    expect_said("code config", text, -1, "poll_spin_us 100001 (set in code) is out of range", "");
    if (tc_rank > 0)
        expect_said("code config", text, -1, mine, "");
    free(text);

    /* A bad value in an environment every rank shares: init fails on every
     * rank, rank 0 alone says why. */
    set_env("FWDIO_MAX_MESSAGE_SIZE", "1K");
    tc_capture_begin(&cap, "env_config");
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, "FWDIO_MAX_MESSAGE_SIZE=1K");
    text = tc_capture_end(&cap);
    expect_said("shared environment", text, 0,
                "max_message_size 1024 (from FWDIO_MAX_MESSAGE_SIZE) is out of range",
                "max_message_size");
    free(text);
    set_env("FWDIO_MAX_MESSAGE_SIZE", NULL);

    /* The same on rank 1 alone: init still fails on every rank, and rank 1
     * says why. */
    if (tc_size >= 2) {
        if (tc_rank == 1)
            set_env("FWDIO_MAX_MESSAGE_SIZE", "1K");
        tc_capture_begin(&cap, "env_config_rank1");
        TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL,
                  "FWDIO_MAX_MESSAGE_SIZE=1K on rank 1");
        text = tc_capture_end(&cap);
        expect_said("rank 1's environment", text, 1,
                    "rank 1: max_message_size 1024 (from FWDIO_MAX_MESSAGE_SIZE)",
                    "max_message_size");
        free(text);
        set_env("FWDIO_MAX_MESSAGE_SIZE", NULL);
    }

    /* Every variable fwdio or its MPI-IO layer reads is known; a typo is
     * not: rank 0 names it, init goes on. */
    set_env("FWDIO_MPIIO_READBACK", "1M");
    set_env("FWDIO_MPIIO_SYNC", "sync");
    set_env("FWDIO_STRIPE_SIZ", "1M");
    set_env("FWDIO_RESULTS_DIR", "/tmp"); /* the bench scripts' */
    set_env("FWDIO_NODE_BUFFER_IDLE", "30");
    tc_capture_begin(&cap, "unknown_env");
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_OK, "a typo in the environment");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "finalize after a typo");
    rt = NULL;
    text = tc_capture_end(&cap);
    expect_said("unknown variable", text, 0, "unknown environment variable FWDIO_STRIPE_SIZ",
                "FWDIO_STRIPE_SIZ");
    TC_CHECK(!has(text, "FWDIO_MPIIO"), "the layer's variables are fwdio's: rank %d said:\n%s",
             tc_rank, text ? text : "");
    TC_CHECK(!has(text, "FWDIO_RESULTS_DIR") && !has(text, "FWDIO_NODE_BUFFER_IDLE"),
             "a known variable named unknown: rank %d said:\n%s", tc_rank, text ? text : "");
    free(text);
    set_env("FWDIO_RESULTS_DIR", NULL);
    set_env("FWDIO_NODE_BUFFER_IDLE", NULL);
    set_env("FWDIO_MPIIO_READBACK", NULL);
    set_env("FWDIO_MPIIO_SYNC", NULL);
    set_env("FWDIO_STRIPE_SIZ", NULL);

    /* FWDIO_CONFIG naming a directory. */
    set_env("FWDIO_CONFIG", tc_tmpdir());
    tc_capture_begin(&cap, "config_dir");
    TC_EXPECT(fwdio_init(MPI_COMM_WORLD, NULL, &rt), FWDIO_EINVAL, "FWDIO_CONFIG a directory");
    text = tc_capture_end(&cap);
    snprintf(line, sizeof line, "FWDIO_CONFIG=%s is a directory", tc_tmpdir());
    expect_said("config directory", text, 0, line, "FWDIO_CONFIG");
    free(text);
    set_env("FWDIO_CONFIG", NULL);

    /* Options in code: every rank refuses them at the call and says why. */
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    char path[4096];
    tc_path(path, sizeof path, "refused.dat");
    fwdio_file_t *f = NULL;
    int list[2] = {0, 0};
    struct {
        const char *field;
        long value;
        const char *said;
    } bad[] = {
        {"stripe_size", 6000, "stripe_size 6000 (set in code or by a hint) is not a multiple of "
                              "write_size 4096 (set in code or by a hint)"},
        {"stripe_size", 2048, "write_size 4096 (set in code or by a hint) is larger than "
                              "stripe_size 2048 (set in code or by a hint)"},
        {"first_writer", tc_size, "is outside the communicator: a rank from 0 to"},
        {"writer_list", 0,
         tc_size > 1 ? "writer_list[1] = 0 (set in code or by a hint) is listed twice"
                     : "writer_list_len 2 (set in code or by a hint) is more than the 1 ranks"},
        {"writer_list", tc_size, "is outside the communicator: a rank from 0 to"},
        {"layout", 5, "layout 5 (set in code or by a hint) is not a layout"},
        {"writers", -1, "writers -1 (set in code or by a hint) is negative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fwdio_options_t o;
        fwdio_options_init(&o);
        if (!strcmp(bad[i].field, "stripe_size")) {
            o.write_size = 4096;
            o.stripe_size = (uint64_t)bad[i].value;
        } else if (!strcmp(bad[i].field, "first_writer")) {
            o.first_writer = (int)bad[i].value;
        } else if (!strcmp(bad[i].field, "writer_list")) {
            list[0] = (int)bad[i].value;
            o.writer_list = list; /* {P} alone, or {0, 0} */
            o.writer_list_len = bad[i].value ? 1 : 2;
        } else if (!strcmp(bad[i].field, "layout")) {
            o.layout = (fwdio_layout_t)bad[i].value;
        } else {
            o.writers = (int)bad[i].value;
        }
        tc_capture_begin(&cap, "code_options");
        TC_EXPECT(fwdio_open(rt, path, 1000, &o, NULL, &f), FWDIO_EINVAL, bad[i].said);
        text = tc_capture_end(&cap);
        expect_said("options in code", text, -1, bad[i].said, "");
        if (tc_rank > 0)
            expect_said("options in code", text, -1, mine, "");
        free(text);
    }
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");

    /* Options from an environment every rank shares since init, and from the
     * config file: every rank refuses, rank 0 alone says why. */
    set_env("FWDIO_WRITE_SIZE", "4K");
    set_env("FWDIO_STRIPE_SIZE", "6000");
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    tc_capture_begin(&cap, "env_options");
    TC_EXPECT(fwdio_open(rt, path, 1000, NULL, NULL, &f), FWDIO_EINVAL, "stripe from FWDIO_*");
    text = tc_capture_end(&cap);
    expect_said("options from the environment", text, 0,
                "stripe_size 6000 (from FWDIO_STRIPE_SIZE) is not a multiple of write_size 4096 "
                "(from FWDIO_WRITE_SIZE)",
                "stripe_size");
    free(text);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    set_env("FWDIO_WRITE_SIZE", NULL);
    set_env("FWDIO_STRIPE_SIZE", NULL);

    char conf[4096];
    tc_path(conf, sizeof conf, "sizes.conf");
    write_config_file(conf, "write_size = 4K\nstripe_size = 6000\n");
    set_env("FWDIO_CONFIG", conf);
    rt = tc_start_runtime(MPI_COMM_WORLD, FWDIO_CALLBACKS_ON_POLL);
    tc_capture_begin(&cap, "file_options");
    TC_EXPECT(fwdio_open(rt, path, 1000, NULL, NULL, &f), FWDIO_EINVAL, "stripe from the file");
    text = tc_capture_end(&cap);
    snprintf(line, sizeof line,
             "stripe_size 6000 (from %s:2) is not a multiple of write_size 4096 (from %s:1)", conf,
             conf);
    expect_said("options from the file", text, 0, line, "stripe_size");
    free(text);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    set_env("FWDIO_CONFIG", NULL);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = (unsigned)tc_parse_long(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    section_bad_init();
    section_precedence();
    section_combine_size();
    section_pinned();
    section_hint_list();
    section_file_broadcast();
    section_refusals();
    return tc_finish("test_config");
}
