/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress cases (ctest label `stress`), each verified byte for byte:
 *
 *   --case many-ranks   every rank (64 in ctest, oversubscribed) writes random
 *                       extents of one file with small stripes;
 *   --case many-files   --files files (100) opened, written by every rank in
 *                       one interleaved random order and closed before any of
 *                       them is waited for, so all are in flight at once;
 *   --case tiny-writes  every rank issues --writes (10,000) writes of 8 to 64
 *                       bytes, scattered over the file in random order;
 *   --case one-writer   one writer; every rank sends --per-rank bytes (more
 *                       than the writer's whole budget) in pieces dealt
 *                       round-robin, so every write unit is filled by several
 *                       ranks; the writer must stay within its budget and
 *                       every rank within its staging budget.
 *
 * Every case also checks that the files end FWDIO_OK on every rank with ready
 * and complete run once each, and that the writers received exactly the
 * bytes the plan writes. The plans come from --seed, the same on every rank.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

typedef struct sfile {
    char name[48], path[4096];
    uint64_t size, seed;
    fwdio_options_t opts;
    tc_extent_t *ext;
    size_t n_ext;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} sfile_t;

/* One extent this rank writes. */
typedef struct job {
    sfile_t *file;
    size_t ext;
} job_t;

typedef struct params {
    const char *name;
    uint64_t seed;
    int files;         /* many-files */
    long writes;       /* tiny-writes, per rank */
    uint64_t per_rank; /* many-ranks, one-writer: bytes per rank */
    uint64_t piece;    /* one-writer: bytes per write call */
    fwdio_callback_mode_t mode;
} params_t;

static void small_stripes(fwdio_options_t *o, uint64_t write_size, int stripe_units)
{
    fwdio_options_init(o);
    o->write_size = write_size;
    o->stripe_size = write_size * (uint64_t)stripe_units;
}

static void open_file(fwdio_runtime_t *rt, sfile_t *s, const char *name)
{
    snprintf(s->name, sizeof s->name, "%s", name);
    tc_path(s->path, sizeof s->path, name);
    tc_cb_init(&s->cb);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&s->cb);
    tc_phase("open %s", name);
    int rc = fwdio_open(rt, s->path, s->size, &s->opts, &cbs, &s->f);
    if (rc != FWDIO_OK || !s->f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", s->path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* This rank's extents of the files, in one random order (seeded per rank). */
static job_t *my_jobs(sfile_t *files, int nfiles, uint64_t seed, size_t *n_out)
{
    size_t n = 0;
    for (int i = 0; i < nfiles; i++)
        for (size_t e = 0; e < files[i].n_ext; e++)
            n += files[i].ext[e].owner == tc_rank;
    job_t *jobs = malloc((n + 1) * sizeof *jobs);
    size_t k = 0;
    for (int i = 0; i < nfiles; i++)
        for (size_t e = 0; e < files[i].n_ext; e++)
            if (files[i].ext[e].owner == tc_rank)
                jobs[k++] = (job_t){&files[i], e};
    tc_rng_t r;
    tc_rng_seed(&r, seed * 977 + (uint64_t)tc_rank);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)tc_rng_below(&r, i);
        job_t t = jobs[i - 1];
        jobs[i - 1] = jobs[j];
        jobs[j] = t;
    }
    *n_out = n;
    return jobs;
}

static void write_jobs(const job_t *jobs, size_t n, uint64_t piece)
{
    for (size_t i = 0; i < n; i++) {
        sfile_t *s = jobs[i].file;
        const tc_extent_t *e = &s->ext[jobs[i].ext];
        int rc = tc_write_pattern(s->f, e->offset, e->len, s->seed, (size_t)piece);
        if (rc != FWDIO_OK) {
            tc_fail("%s: write of %" PRIu64 " bytes at %" PRIu64 " returned %d (%s)", s->name,
                    e->len, e->offset, rc, fwdio_strerror(rc));
            return;
        }
    }
}

/* Wait (or, every other file, poll fwdio_test) until complete. */
static void await_file(sfile_t *s, int by_test)
{
    tc_phase("waiting for %s", s->name);
    int rc, done = 0;
    if (by_test) {
        struct timespec ts = {0, 500 * 1000};
        while ((rc = fwdio_test(s->f, &done)) == FWDIO_OK && !done)
            nanosleep(&ts, NULL);
    } else {
        rc = fwdio_wait(s->f);
    }
    TC_EXPECT(rc, FWDIO_OK, s->name);
}

/* Collective: callbacks, bytes per writer, contents; then the file goes. */
static void check_file(sfile_t *s, fwdio_callback_mode_t mode)
{
    tc_phase("checking %s", s->name);
    tc_cb_check(MPI_COMM_WORLD, &s->cb, s->name, FWDIO_OK, FWDIO_OK, mode, s->f);
    uint64_t planned = 0, received = 0;
    for (size_t e = 0; e < s->n_ext; e++)
        planned += s->ext[e].owner >= 0 ? s->ext[e].len : 0;
    int nw = fwdio_file_writer_bytes(s->f, NULL, 0);
    uint64_t *wb = calloc((size_t)(nw > 0 ? nw : 1), sizeof *wb);
    nw = fwdio_file_writer_bytes(s->f, wb, nw);
    for (int w = 0; w < nw; w++)
        received += wb[w];
    free(wb);
    TC_CHECK(received == planned, "%s: the writers received %" PRIu64 " bytes, %" PRIu64
             " were written", s->name, received, planned);
    tc_verify_extents(MPI_COMM_WORLD, s->path, s->size, s->seed, s->ext, s->n_ext);
    fwdio_file_free(s->f);
    free(s->ext);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0)
        unlink(s->path);
}

/* ---- the cases ----------------------------------------------------------- */

static void case_many_ranks(fwdio_runtime_t *rt, const params_t *p)
{
    tc_rng_t r;
    tc_rng_seed(&r, p->seed);
    sfile_t s;
    memset(&s, 0, sizeof s);
    s.size = p->per_rank * (uint64_t)tc_size;
    s.seed = p->seed;
    small_stripes(&s.opts, 16 << 10, 4);
    tc_random_extents(&r, s.size, 64 << 10, 0, &s.ext, &s.n_ext);
    open_file(rt, &s, "many_ranks.dat");
    size_t n;
    job_t *jobs = my_jobs(&s, 1, p->seed, &n);
    tc_phase("%zu writes", n);
    write_jobs(jobs, n, 0);
    free(jobs);
    TC_EXPECT(fwdio_close(s.f), FWDIO_OK, "fwdio_close");
    await_file(&s, 0);
    int nw = fwdio_file_writers(s.f, NULL, 0);
    if (tc_rank == 0)
        tc_note("%s: %" PRIu64 " bytes, %zu extents, %d writers, %d ranks", s.name, s.size,
                s.n_ext, nw, tc_size);
    check_file(&s, p->mode);
}

static void case_many_files(fwdio_runtime_t *rt, const params_t *p)
{
    tc_rng_t r;
    tc_rng_seed(&r, p->seed);
    sfile_t *files = calloc((size_t)p->files, sizeof *files);
    uint64_t total = 0;
    for (int i = 0; i < p->files; i++) {
        sfile_t *s = &files[i];
        s->size = (16 << 10) + tc_rng_below(&r, 240 << 10);
        s->seed = p->seed * 1000 + (uint64_t)i;
        small_stripes(&s->opts, (uint64_t)(4 << 10) << tc_rng_below(&r, 3),
                      1 + (int)tc_rng_below(&r, 4));
        s->opts.layout = (fwdio_layout_t)(i % 3);
        s->opts.writers = 1 + (int)tc_rng_below(&r, (uint64_t)tc_size);
        tc_random_extents(&r, s->size, 20000, 0, &s->ext, &s->n_ext);
        char name[48];
        snprintf(name, sizeof name, "file%03d.dat", i);
        open_file(rt, s, name);
        total += s->size;
    }
    size_t n;
    job_t *jobs = my_jobs(files, p->files, p->seed, &n);
    tc_phase("%zu writes over %d files", n, p->files);
    write_jobs(jobs, n, 0);
    free(jobs);
    for (int i = 0; i < p->files; i++) { /* in an order that differs between ranks */
        sfile_t *s = &files[(i + tc_rank * 7) % p->files];
        TC_EXPECT(fwdio_close(s->f), FWDIO_OK, s->name);
    }
    /* Every file is open, written and closed here: all of them in flight. */
    for (int i = p->files - 1; i >= 0; i--)
        await_file(&files[i], i % 2);
    if (tc_rank == 0)
        tc_note("%d files in flight at once, %" PRIu64 " bytes in all", p->files, total);
    for (int i = 0; i < p->files; i++)
        check_file(&files[i], p->mode);
    free(files);
}

static void case_tiny_writes(fwdio_runtime_t *rt, const params_t *p)
{
    tc_rng_t r;
    tc_rng_seed(&r, p->seed);
    sfile_t s;
    memset(&s, 0, sizeof s);
    s.seed = p->seed;
    small_stripes(&s.opts, 64 << 10, 4);
    /* Exactly --writes extents per rank, dealt in a shuffled order. */
    size_t n_ext = (size_t)p->writes * (size_t)tc_size;
    s.ext = malloc((n_ext + 1) * sizeof *s.ext);
    s.n_ext = n_ext;
    for (size_t i = 0; i < n_ext; i++)
        s.ext[i].owner = (int)(i % (size_t)tc_size);
    for (size_t i = n_ext; i > 1; i--) {
        size_t j = (size_t)tc_rng_below(&r, i);
        int t = s.ext[i - 1].owner;
        s.ext[i - 1].owner = s.ext[j].owner;
        s.ext[j].owner = t;
    }
    for (size_t i = 0; i < n_ext; i++) {
        s.ext[i].offset = s.size;
        s.ext[i].len = 8 + tc_rng_below(&r, 57);
        s.size += s.ext[i].len;
    }
    open_file(rt, &s, "tiny_writes.dat");
    size_t n;
    job_t *jobs = my_jobs(&s, 1, p->seed, &n);
    TC_CHECK(n == (size_t)p->writes, "test bug: %zu writes for this rank", n);
    tc_phase("%zu tiny writes", n);
    write_jobs(jobs, n, 0);
    free(jobs);
    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(s.f, &st), FWDIO_OK, "fwdio_file_stats");
    TC_CHECK(st.write_calls == (uint64_t)p->writes, "fwdio counted %" PRIu64 " write calls, %ld "
             "were made", st.write_calls, p->writes);
    TC_EXPECT(fwdio_close(s.f), FWDIO_OK, "fwdio_close");
    await_file(&s, 1);
    TC_EXPECT(fwdio_file_stats(s.f, &st), FWDIO_OK, "fwdio_file_stats");
    long msgs = tc_sum(MPI_COMM_WORLD, (long)st.messages_sent);
    if (tc_rank == 0)
        tc_note("%s: %ld writes of 8-64 bytes per rank, %" PRIu64 " bytes, %ld data messages "
                "from all ranks", s.name, p->writes, s.size, msgs);
    check_file(&s, p->mode);
}

static void case_one_writer(fwdio_runtime_t *rt, const params_t *p)
{
    sfile_t s;
    memset(&s, 0, sizeof s);
    s.size = p->per_rank * (uint64_t)tc_size;
    s.seed = p->seed;
    small_stripes(&s.opts, 256 << 10, 4);
    s.opts.writers = 1;
    /* Pieces dealt round-robin: each write unit is shared by several ranks. */
    s.n_ext = (size_t)((s.size + p->piece - 1) / p->piece);
    s.ext = malloc((s.n_ext + 1) * sizeof *s.ext);
    for (size_t i = 0; i < s.n_ext; i++) {
        uint64_t off = (uint64_t)i * p->piece;
        s.ext[i] = (tc_extent_t){off, s.size - off < p->piece ? s.size - off : p->piece,
                                 (int)(i % (size_t)tc_size)};
    }
    open_file(rt, &s, "one_writer.dat");
    size_t n;
    job_t *jobs = my_jobs(&s, 1, p->seed, &n);
    tc_phase("%zu writes of %" PRIu64 " bytes to one writer", n, p->piece);
    write_jobs(jobs, n, 0);
    free(jobs);
    TC_EXPECT(fwdio_close(s.f), FWDIO_OK, "fwdio_close");
    await_file(&s, 0);
    int writer = -1;
    TC_CHECK(fwdio_file_writers(s.f, &writer, 1) == 1, "%s: more than one writer", s.name);
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(rs.writer_peak <= rs.writer_budget + rs.max_message,
             "the writer held %" PRIu64 " bytes, budget %" PRIu64 " + one message %" PRIu64,
             rs.writer_peak, rs.writer_budget, rs.max_message);
    TC_CHECK(rs.staging_peak <= rs.staging_budget, "staged %" PRIu64 " bytes, budget %" PRIu64,
             rs.staging_peak, rs.staging_budget);
    TC_CHECK(p->per_rank > rs.writer_budget, "test bug: a rank sends %" PRIu64
             " bytes, no more than the writer budget %" PRIu64, p->per_rank, rs.writer_budget);
    if (tc_rank == writer)
        tc_note("%s: %" PRIu64 " bytes from %d ranks through writer rank %d; its peak %" PRIu64
                " bytes of a %" PRIu64 "-byte budget", s.name, s.size, tc_size, writer,
                rs.writer_peak, rs.writer_budget);
    check_file(&s, p->mode);
}

int main(int argc, char **argv)
{
    unsigned timeout = 280;
    params_t p = {NULL, 1, 100, 10000, 256 << 10, 64 << 10, FWDIO_CALLBACKS_ON_POLL};
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--case") && i + 1 < argc)
            p.name = argv[++i];
        else if (!strcmp(a, "--seed") && i + 1 < argc)
            p.seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(a, "--files") && i + 1 < argc)
            p.files = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(a, "--writes") && i + 1 < argc)
            p.writes = tc_parse_long(argv[++i]);
        else if (!strcmp(a, "--per-rank") && i + 1 < argc)
            p.per_rank = tc_parse_size(argv[++i]);
        else if (!strcmp(a, "--piece") && i + 1 < argc)
            p.piece = tc_parse_size(argv[++i]);
        else if (!strcmp(a, "--writer-buffer") && i + 1 < argc)
            cfg.writer_buffer = (size_t)tc_parse_size(argv[++i]);
        else if (!strcmp(a, "--staging-buffer") && i + 1 < argc)
            cfg.staging_buffer = (size_t)tc_parse_size(argv[++i]);
        else if (tc_common_option(argc, argv, &i, &timeout, &p.mode))
            continue;
        else {
            p.name = NULL; /* unknown option: print the usage */
            break;
        }
    }
    static const char *const cases[] = {"many-ranks", "many-files", "tiny-writes", "one-writer"};
    int which = -1;
    for (int c = 0; p.name && c < 4; c++)
        if (!strcmp(p.name, cases[c]))
            which = c;
    if (which < 0 || p.files < 1 || p.writes < 1 || p.piece < 1) {
        fprintf(stderr,
                "usage: %s --case many-ranks|many-files|tiny-writes|one-writer [--seed N]\n"
                "  [--files N] [--writes N] [--per-rank SIZE] [--piece SIZE]\n"
                "  [--writer-buffer SIZE] [--staging-buffer SIZE]\n"
                "  [--callback-mode poll|progress] [--timeout SEC]\n",
                argv[0]);
        return 2;
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    cfg.callback_mode = p.mode;
    tc_phase("fwdio_init");
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    switch (which) {
    case 0: case_many_ranks(rt, &p); break;
    case 1: case_many_files(rt, &p); break;
    case 2: case_tiny_writes(rt, &p); break;
    default: case_one_writer(rt, &p); break;
    }
    tc_phase("fwdio_finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    char name[64];
    snprintf(name, sizeof name, "test_stress --case %s", p.name);
    return tc_finish(name);
}
