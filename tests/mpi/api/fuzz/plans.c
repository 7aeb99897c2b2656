/* SPDX-License-Identifier: BSD-3-Clause */
/* What every rank does alike: configurations, file options, write plans
 * and commit blocks, drawn from the generator seeded the same everywhere. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static const char *const kind_name[] = {"good", "overlap", "bad-path", "two-commits",
                                        "rename-fails"};

void fuzz_random_config(fuzz_t *z, fwdio_config_t *c)
{
    static const size_t staging[] = {0, 64 << 10, 256 << 10, 1 << 20};
    static const size_t writer[] = {0, 256 << 10, 1 << 20};
    static const size_t message[] = {0, 4096, 64 << 10};
    tc_rng_t *r = &z->shared;
    memset(c, 0, sizeof *c);
    c->callback_mode = z->force_mode >= 0 ? (fwdio_callback_mode_t)z->force_mode
                                          : (fwdio_callback_mode_t)tc_rng_below(r, 2);
    c->staging_buffer = staging[tc_rng_below(r, 4)];
    c->writer_buffer = writer[tc_rng_below(r, 3)];
    c->max_message_size = message[tc_rng_below(r, 3)];
    c->io_inline = tc_rng_below(r, 4) == 0;
    c->poll_min_us = (unsigned)tc_rng_below(r, 50);
    c->poll_max_us = (unsigned)tc_rng_below(r, 3000);
}

static void random_options(fuzz_t *z, ffile_t *m)
{
    static const uint64_t units[] = {4 << 10, 8 << 10, 16 << 10, 64 << 10, 0};
    tc_rng_t *r = &z->shared;
    fwdio_options_t *o = &m->opts;
    fwdio_options_init(o);
    o->write_size = units[tc_rng_below(r, 5)];
    o->stripe_size = o->write_size * (1 + tc_rng_below(r, 4));
    o->writers = (int)tc_rng_below(r, (uint64_t)tc_size + 3); /* 0: default; > P: clamped */
    o->layout = (fwdio_layout_t)tc_rng_below(r, 3);
    if (o->layout == FWDIO_LAYOUT_TARGETS)
        o->targets = (int)tc_rng_below(r, 6);
    o->durable = tc_rng_below(r, 8) == 0;
    switch (tc_rng_below(r, 3)) {
    case 1:
        o->placement = FWDIO_PLACEMENT_STRIDE;
        o->first_writer = (int)tc_rng_below(r, (uint64_t)tc_size);
        o->writer_stride = (int)tc_rng_below(r, 4);
        break;
    case 2: { /* distinct ranks in random order */
        int n = 1 + (int)tc_rng_below(r, (uint64_t)(tc_size < MAX_LIST ? tc_size : MAX_LIST));
        int *all = malloc((size_t)tc_size * sizeof *all);
        for (int i = 0; i < tc_size; i++)
            all[i] = i;
        for (int i = 0; i < n; i++) {
            int j = i + (int)tc_rng_below(r, (uint64_t)(tc_size - i));
            int t = all[i];
            all[i] = all[j];
            all[j] = t;
            m->list[i] = all[i];
        }
        free(all);
        o->placement = FWDIO_PLACEMENT_LIST;
        o->writer_list = m->list;
        o->writer_list_len = n;
        o->writers = n;
        break;
    }
    default:
        break; /* spread */
    }
}

/* Extents of random length for random owners over [0, size), some holes. */
static void random_plan(fuzz_t *z, ffile_t *m)
{
    static const uint64_t chunks[] = {16, 512, 8 << 10, 64 << 10, 300 << 10};
    tc_rng_t *r = &z->shared;
    uint64_t max_chunk = chunks[tc_rng_below(r, 5)];
    if (max_chunk < m->size / 1500) /* keep the plan to a few thousand extents */
        max_chunk = m->size / 1500;
    int holes = tc_rng_below(r, 3) == 0;
    tc_random_extents(r, m->size, max_chunk, holes ? 5 : 0, &m->ext, &m->n_ext);
}

/* This rank's jobs: its extents, and the rewrite if the overlap falls to it. */
static void make_jobs(fuzz_t *z, ffile_t *m, int ov_rank, uint64_t ov_off, uint64_t ov_len)
{
    m->jobs = malloc((m->n_ext + 1) * sizeof *m->jobs);
    m->n_jobs = 0;
    for (size_t e = 0; e < m->n_ext; e++)
        if (m->ext[e].owner == tc_rank)
            m->jobs[m->n_jobs++] = (job_t){e, m->ext[e].offset, m->ext[e].len, 0};
    if (ov_rank == tc_rank)
        m->jobs[m->n_jobs++] = (job_t){SIZE_MAX, ov_off, ov_len, 0};
    m->pending = m->n_jobs;
    m->may_skip = m->kind == KIND_BADPATH || (m->kind == KIND_GOOD && want(z, 6));
    m->commit_pending = m->committer[0] == tc_rank || m->committer[1] == tc_rank;
}

/* Shared: a commit block on one random rank (two for KIND_TWO_COMMITS). */
static void random_commit(fuzz_t *z, ffile_t *m)
{
    tc_rng_t *r = &z->shared;
    m->committer[0] = m->committer[1] = -1;
    int two = m->kind == KIND_TWO_COMMITS;
    if (m->size == 0 || (two && tc_size < 2)) {
        if (two)
            m->kind = KIND_GOOD;
        return;
    }
    if (!two && (m->kind != KIND_GOOD || tc_rng_below(r, 4) != 0))
        return;
    uint64_t room;
    m->commit_off = tc_rng_below(r, m->size);
    room = m->size - m->commit_off;
    m->commit_len = 1 + tc_rng_below(r, room < 4096 ? room : 4096);
    m->committer[0] = (int)tc_rng_below(r, (uint64_t)tc_size);
    if (two)
        m->committer[1] =
            (m->committer[0] + 1 + (int)tc_rng_below(r, (uint64_t)tc_size - 1)) % tc_size;
}

/* The target of KIND_RENAME_FAILS: a directory with a file in it, which no
 * rename can replace. Collective (the plan says so on every rank). */
static void make_blocking_dir(const ffile_t *m)
{
    if (tc_rank == 0) {
        char inner[4160];
        snprintf(inner, sizeof inner, "%s/keep", m->path);
        FILE *fp = NULL;
        if (mkdir(m->path, 0755) != 0 || !(fp = fopen(inner, "w")))
            tc_fail("cannot create %s: %s", inner, strerror(errno));
        if (fp)
            fclose(fp);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

void fuzz_open_file(fuzz_t *z, int epoch, int epochs)
{
    if (z->nfiles == MAX_FILES)
        return;
    tc_rng_t *r = &z->shared;
    int idx = z->nfiles;
    ffile_t *m = &z->files[idx];
    memset(m, 0, sizeof *m);
    switch (tc_rng_below(r, 10)) {
    case 0: m->size = 0; break;
    case 1: m->size = 1 + tc_rng_below(r, 100); break;
    case 2: case 3: case 4: m->size = 1 + tc_rng_below(r, 64 << 10); break;
    default: m->size = 1 + tc_rng_below(r, 1 << 20); break;
    }
    m->seed = z->seed * 1000003 + (uint64_t)z->round * 101 + (uint64_t)idx;
    random_options(z, m);
    random_plan(z, m);
    m->deadline = epoch + (int)tc_rng_below(r, (uint64_t)(epochs - epoch));
    static const kind_t kinds[20] = {KIND_BADPATH, KIND_BADPATH, KIND_OVERLAP, KIND_OVERLAP,
                                     KIND_TWO_COMMITS, KIND_RENAME_FAILS};
    m->kind = kinds[tc_rng_below(r, 20)]; /* the rest: KIND_GOOD */
    int ov_rank = -1;
    uint64_t ov_off = 0, ov_len = 0;
    if (m->kind == KIND_OVERLAP) {
        size_t e = (size_t)tc_rng_below(r, m->n_ext + 1);
        while (e < m->n_ext && m->ext[e].owner < 0)
            e++;
        if (e >= m->n_ext) {
            m->kind = KIND_GOOD; /* nothing written, nothing to overlap */
        } else {
            ov_rank = (int)tc_rng_below(r, (uint64_t)tc_size);
            ov_off = m->ext[e].offset + tc_rng_below(r, m->ext[e].len);
            ov_len = 1 + tc_rng_below(r, m->ext[e].offset + m->ext[e].len - ov_off);
        }
    }
    random_commit(z, m);
    m->opts.atomic_replace = m->kind == KIND_RENAME_FAILS || tc_rng_below(r, 6) == 0;
    snprintf(m->name, sizeof m->name, "r%d_f%d_%s", z->round, idx, kind_name[m->kind]);
    char rel[96];
    if (m->kind == KIND_BADPATH)
        snprintf(rel, sizeof rel, "missing_r%d_f%d/file.dat", z->round, idx);
    else
        snprintf(rel, sizeof rel, "%s.dat", m->name);
    tc_path(m->path, sizeof m->path, rel);
    make_jobs(z, m, ov_rank, ov_off, ov_len);
    if (m->kind == KIND_RENAME_FAILS)
        make_blocking_dir(m);

    tc_cb_init(&m->cb);
    m->cb.on_ready = fuzz_calls_from_callback;
    m->cb.user = z;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&m->cb);
    tc_phase("round %d epoch %d: open %s", z->round, epoch, m->name);
    int rc = fwdio_open(z->rt, m->path, m->size, &m->opts, &cbs, &m->f);
    z->n.calls++;
    if (rc != FWDIO_OK || !m->f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", m->path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    z->nfiles++;
}
