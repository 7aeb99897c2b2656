/*
 * Where settings come from, and in which order: code > MPI-IO hints (which
 * write the fields) > FWDIO_<KEY> environment > FWDIO_CONFIG file > defaults;
 * and that bad values and unknown keys are refused, not ignored. The effect of
 * each setting is read back from what the library does with it (writer count,
 * budgets, plan), and one file per case is written and verified.
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

/* Open a small file with `opts`, write it, verify it; return its writer count. */
static int writers_of(fwdio_runtime_t *rt, const fwdio_options_t *opts, const char *name)
{
    char path[4096];
    tc_path(path, sizeof path, name);
    const uint64_t size = 256 << 10, seed = 77;
    fwdio_file_t *f = NULL;
    int rc = fwdio_open(rt, path, size, opts, NULL, &f);
    TC_EXPECT(rc, FWDIO_OK, name);
    if (rc != FWDIO_OK)
        return -1;
    int n = fwdio_file_writers(f, NULL, 0);
    uint64_t first = size * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t last = size * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    TC_EXPECT(tc_write_pattern(f, first, last - first, seed, 10000), FWDIO_OK, "write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "wait");
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
    return n;
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
    return tc_finish("test_config");
}
