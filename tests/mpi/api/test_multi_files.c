/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several files in flight at once on one runtime.
 *
 * Each round opens --files files (default 4) with different layouts, writer
 * counts, stripe sizes and sizes (one of them empty, one smaller than a
 * stripe, some with holes); every rank then issues its extents of all the
 * files interleaved in one random order, closes the files in a rank-dependent
 * order, and the next round's files are opened before this round's are waited
 * for, so up to 2 x --files files are in flight. Files are waited for in
 * different ways (fwdio_wait in reverse order, or fwdio_test loops) and every
 * byte of every file is verified; callbacks must run once each, in order, with
 * FWDIO_OK on every rank.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

typedef struct mfile {
    char path[4096];
    char name[64];
    uint64_t size;
    uint64_t seed;
    fwdio_options_t opts;
    tc_extent_t *ext;
    size_t n_ext;
    tc_cbstate_t cb;
    fwdio_file_t *f;
} mfile_t;

typedef struct job {
    int file;
    size_t ext;
} job_t;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

static void open_round(fwdio_runtime_t *rt, mfile_t *files, int nfiles, int round, uint64_t seed)
{
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 7919 + (uint64_t)round);
    for (int i = 0; i < nfiles; i++) {
        mfile_t *m = &files[i];
        snprintf(m->name, sizeof m->name, "round%d_file%d.dat", round, i);
        tc_path(m->path, sizeof m->path, m->name);
        m->seed = seed * 1000 + (uint64_t)round * 100 + (uint64_t)i;
        fwdio_options_init(&m->opts);
        m->opts.layout = (i + round) % 2 ? FWDIO_LAYOUT_CYCLIC : FWDIO_LAYOUT_BLOCK;
        static const int writer_choice[4] = {1, 2, 3, -1};
        int w = writer_choice[(i + round) % 4];
        m->opts.writers = w < 0 ? tc_size : w;
        m->opts.write_size = (i % 2) ? (8 << 10) : (16 << 10);
        m->opts.stripe_size = m->opts.write_size * (i % 3 ? 4 : 2);
        int holes = 0;
        switch (i % 4) {
        case 0: m->size = (1 << 20) + tc_rng_below(&rng, 1 << 20); break;
        case 1: m->size = (round == 0) ? 0 : 500000 + tc_rng_below(&rng, 1000); holes = 1; break;
        case 2: m->size = 1 + tc_rng_below(&rng, m->opts.stripe_size - 1); break;
        default: m->size = (512 << 10) + tc_rng_below(&rng, 300000); holes = 1; break;
        }
        tc_random_extents(&rng, m->size, 50000, holes ? 4 : 0, &m->ext, &m->n_ext);
        tc_cb_init(&m->cb);
        fwdio_callbacks_t cbs = tc_cb_callbacks(&m->cb);
        m->f = NULL;
        tc_phase("open %s", m->name);
        int rc = fwdio_open(rt, m->path, m->size, &m->opts, &cbs, &m->f);
        if (rc != FWDIO_OK || !m->f) {
            tc_fail("fwdio_open(%s) returned %d (%s)", m->path, rc, fwdio_strerror(rc));
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (tc_rank == 0) {
        for (int i = 0; i < nfiles; i++)
            tc_note("%s: size %" PRIu64 ", %s, writers %d, stripe %" PRIu64 ", write %" PRIu64
                    ", %zu extents",
                    files[i].name, files[i].size,
                    files[i].opts.layout == FWDIO_LAYOUT_BLOCK ? "block" : "cyclic",
                    files[i].opts.writers, files[i].opts.stripe_size, files[i].opts.write_size,
                    files[i].n_ext);
    }
}

static void write_round(mfile_t *files, int nfiles, uint64_t seed, int round)
{
    size_t njobs = 0;
    for (int i = 0; i < nfiles; i++)
        for (size_t e = 0; e < files[i].n_ext; e++)
            njobs += files[i].ext[e].owner == tc_rank;
    job_t *jobs = malloc((njobs + 1) * sizeof *jobs);
    size_t k = 0;
    for (int i = 0; i < nfiles; i++)
        for (size_t e = 0; e < files[i].n_ext; e++)
            if (files[i].ext[e].owner == tc_rank)
                jobs[k++] = (job_t){i, e};
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 31 + (uint64_t)round * 1009 + (uint64_t)tc_rank);
    for (size_t i = njobs; i > 1; i--) {
        size_t j = (size_t)tc_rng_below(&rng, i);
        job_t t = jobs[i - 1];
        jobs[i - 1] = jobs[j];
        jobs[j] = t;
    }
    tc_phase("round %d: %zu interleaved writes", round, njobs);
    for (size_t i = 0; i < njobs; i++) {
        mfile_t *m = &files[jobs[i].file];
        const tc_extent_t *e = &m->ext[jobs[i].ext];
        int rc = tc_write_pattern(m->f, e->offset, e->len, m->seed, 0);
        if (rc != FWDIO_OK)
            tc_fail("%s: fwdio_write(offset %" PRIu64 ", len %" PRIu64 ") returned %d (%s)",
                    m->name, e->offset, e->len, rc, fwdio_strerror(rc));
    }
    free(jobs);
    /* Close in an order that differs between ranks. */
    for (int i = 0; i < nfiles; i++) {
        mfile_t *m = &files[(i + tc_rank) % nfiles];
        tc_phase("round %d: close %s", round, m->name);
        TC_EXPECT(fwdio_close(m->f), FWDIO_OK, m->name);
    }
}

static void finish_round(mfile_t *files, int nfiles, int round)
{
    /* Odd files by polling fwdio_test, then the rest by fwdio_wait in reverse order. */
    struct timespec ts = {0, 200 * 1000};
    int pending = 1;
    int st[64];
    for (int i = 0; i < nfiles; i++)
        st[i] = 1; /* not done */
    tc_phase("round %d: fwdio_test loop", round);
    while (pending) {
        pending = 0;
        for (int i = 1; i < nfiles; i += 2) {
            if (st[i] != 1)
                continue;
            int done = 0;
            int rc = fwdio_test(files[i].f, &done);
            if (done)
                st[i] = rc;
            else if (rc != FWDIO_OK) {
                tc_fail("%s: fwdio_test returned %d (%s) with done=0", files[i].name, rc,
                        fwdio_strerror(rc));
                st[i] = rc;
            } else
                pending = 1;
        }
        if (pending)
            nanosleep(&ts, NULL);
    }
    for (int i = nfiles - 1; i >= 0; i--) {
        if (i % 2 == 0) {
            tc_phase("round %d: fwdio_wait %s", round, files[i].name);
            st[i] = fwdio_wait(files[i].f);
        }
    }
    for (int i = 0; i < nfiles; i++) {
        mfile_t *m = &files[i];
        TC_EXPECT(st[i], FWDIO_OK, m->name);
        tc_phase("round %d: check %s", round, m->name);
        tc_cb_check(MPI_COMM_WORLD, &m->cb, m->name, FWDIO_OK, FWDIO_OK, g_mode, m->f);
        if (tc_verify_extents(MPI_COMM_WORLD, m->path, m->size, m->seed, m->ext, m->n_ext) == 0 &&
            tc_rank == 0)
            tc_note("%s verified", m->name);
        fwdio_file_free(m->f);
        free(m->ext);
    }
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    int nfiles = 4, rounds = 2;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--files") && i + 1 < argc)
            nfiles = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = tc_parse_size(argv[++i]);
        else if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        else {
            fprintf(stderr, "usage: %s [--files N] [--rounds R] [--seed N] "
                            "[--callback-mode poll|progress] [--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    if (nfiles < 1 || nfiles > 64 || rounds < 1) {
        fprintf(stderr, "--files must be 1..64 and --rounds >= 1\n");
        return 2;
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();

    tc_phase("fwdio_init");
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);

    mfile_t *prev = NULL;
    for (int r = 0; r < rounds; r++) {
        mfile_t *cur = calloc((size_t)nfiles, sizeof *cur);
        open_round(rt, cur, nfiles, r, seed);
        write_round(cur, nfiles, seed, r);
        /* This round's files are open and closed; now finish the previous round. */
        if (prev) {
            finish_round(prev, nfiles, r - 1);
            free(prev);
        }
        prev = cur;
    }
    finish_round(prev, nfiles, rounds - 1);
    free(prev);

    tc_phase("fwdio_finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_multi_files");
}
