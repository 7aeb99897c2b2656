/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_streams: what its cases share (streams.h): a stream's plan of steps,
 * opening it with a step callback that checks every step, writing a step's
 * pieces, the header of the commit block, closing and checking the callbacks.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "streams.h"
#include "test_common.h"

const char MAGIC[8] = "FWSTREAM";

/* The header a commit block carries: magic, steps complete, end of data. */
static void make_header(uint8_t *h, uint64_t steps, uint64_t end)
{
    memset(h, 0, HEADER);
    memcpy(h, MAGIC, sizeof MAGIC);
    memcpy(h + 8, &steps, sizeof steps);
    memcpy(h + 16, &end, sizeof end);
}

/* Steps of random sizes after the header; one in five is empty. */
void plan_steps(stream_case_t *c, int nsteps, uint64_t max_step)
{
    c->nsteps = nsteps;
    c->base = calloc((size_t)nsteps, sizeof *c->base);
    c->len = calloc((size_t)nsteps, sizeof *c->len);
    tc_rng_t rng;
    tc_rng_seed(&rng, c->seed);
    uint64_t at = HEADER;
    for (int k = 0; k < nsteps; k++) {
        c->base[k] = at;
        c->len[k] = tc_rng_below(&rng, 5) == 0 ? 0 : 1 + tc_rng_below(&rng, max_step);
        at += c->len[k];
    }
}

uint64_t data_end(const stream_case_t *c, int steps)
{
    return steps == 0 ? HEADER : c->base[steps - 1] + c->len[steps - 1];
}

/* Step k's bytes are in the file (a rank that did not write them checks). */
int step_in_file(const stream_case_t *c, int k)
{
    int fd = open(c->path, O_RDONLY);
    if (fd < 0)
        return 0;
    uint64_t bad = 0;
    int ok = pattern_check_fd(fd, c->base[k], c->len[k], c->seed, 0, &bad) == 0;
    if (!ok)
        tc_fail("%s: step %d: byte %llu is not in the file", c->path, k, (unsigned long long)bad);
    close(fd);
    return ok;
}

void check_header(const stream_case_t *c, uint64_t complete, uint64_t ended)
{
    int fd = open(c->path, O_RDONLY);
    uint8_t h[HEADER];
    if (fd < 0 || pread(fd, h, HEADER, 0) != HEADER) {
        tc_fail("%s: no header", c->path);
        if (fd >= 0)
            close(fd);
        return;
    }
    close(fd);
    uint64_t steps, end;
    memcpy(&steps, h + 8, sizeof steps);
    memcpy(&end, h + 16, sizeof end);
    TC_CHECK(!memcmp(h, MAGIC, sizeof MAGIC), "%s: header magic missing", c->path);
    TC_CHECK(steps >= complete && steps <= ended,
             "%s: header counts %llu steps; %llu are complete, %llu ended", c->path,
             (unsigned long long)steps, (unsigned long long)complete, (unsigned long long)ended);
    if (steps <= (uint64_t)c->nsteps)
        TC_CHECK(end == data_end(c, (int)steps), "%s: header end %llu, want %llu", c->path,
                 (unsigned long long)end, (unsigned long long)data_end(c, (int)steps));
}

static void on_step(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    stream_case_t *c = ((tc_cbstate_t *)user)->user;
    int seen = atomic_load(&c->steps_seen);
    if (step != (uint64_t)seen || f != c->f)
        atomic_fetch_add(&c->step_order_bad, 1);
    int want = (int)step >= c->want_from_fail ? c->want_fail : FWDIO_OK;
    TC_CHECK(status == want, "%s: step %llu completed with %s, want %s", c->path,
             (unsigned long long)step, fwdio_strerror(status), fwdio_strerror(want));
    TC_CHECK(atomic_load(&c->cb.complete_count) == 0, "%s: step %llu after complete", c->path,
             (unsigned long long)step);
    if (status == FWDIO_OK) {
        atomic_fetch_add(&c->steps_ok, 1);
        if ((int)step < c->nsteps)
            step_in_file(c, (int)step);
    }
    atomic_fetch_add(&c->steps_seen, 1);
}

void open_stream(fwdio_runtime_t *rt, stream_case_t *c, const char *name, uint64_t seed,
                 const fwdio_options_t *opts)
{
    tc_path(c->path, sizeof c->path, name);
    c->seed = seed;
    c->want_from_fail = 1 << 30;
    tc_cb_init(&c->cb);
    c->cb.user = c;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c->cb);
    cbs.step = on_step;
    tc_phase("open %s", name);
    TC_EXPECT(fwdio_open(rt, c->path, FWDIO_SIZE_GROWS, opts, &cbs, &c->f), FWDIO_OK,
              "fwdio_open (stream)");
}

static void lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    (void)status;
    (void)arg;
    free((void *)buf);
}

/* This rank's pieces of step k, written or lent at random. */
void write_step(stream_case_t *c, int k, uint64_t max_piece, tc_rng_t *mine)
{
    tc_rng_t rng;
    tc_rng_seed(&rng, c->seed * 1000003u + (uint64_t)k);
    for (uint64_t off = 0; off < c->len[k];) {
        uint64_t len = 1 + tc_rng_below(&rng, max_piece);
        if (len > c->len[k] - off)
            len = c->len[k] - off;
        int owner = (int)tc_rng_below(&rng, (uint64_t)tc_size);
        uint64_t at = c->base[k] + off;
        off += len;
        if (owner != tc_rank)
            continue;
        if (tc_rng_below(mine, 4) == 0) {
            uint8_t *buf = malloc(len);
            pattern_fill(buf, len, at, c->seed);
            int rc = fwdio_write_lent(c->f, buf, len, at, lent_done, NULL);
            TC_EXPECT(rc, FWDIO_OK, "fwdio_write_lent");
            if (rc != FWDIO_OK)
                free(buf);
        } else {
            TC_EXPECT(tc_write_pattern(c->f, at, len, c->seed, 0), FWDIO_OK, "fwdio_write");
        }
    }
    if (c->commit && tc_rank == 0) {
        uint8_t h[HEADER];
        make_header(h, (uint64_t)k + 1, data_end(c, k + 1));
        TC_EXPECT(fwdio_set_commit(c->f, h, HEADER, 0), FWDIO_OK, "fwdio_set_commit (step)");
    }
}

void finish_stream(fwdio_runtime_t *rt, stream_case_t *c, int want, int ended)
{
    tc_phase("%s: close and wait", c->path);
    TC_EXPECT(fwdio_close(c->f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(c->f), want, "fwdio_wait (stream)");
    (void)rt;
    TC_CHECK(atomic_load(&c->steps_seen) == ended, "%s: %d step callbacks, %d steps ended",
             c->path, atomic_load(&c->steps_seen), ended);
    TC_CHECK(atomic_load(&c->step_order_bad) == 0, "%s: step callbacks out of order", c->path);
    tc_cb_check(MPI_COMM_WORLD, &c->cb, c->path, FWDIO_OK, want, g_mode, c->f);
}

fwdio_options_t stream_options(int writers, fwdio_layout_t layout)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = writers < tc_size ? writers : tc_size;
    o.layout = layout;
    o.pinned |= FWDIO_PIN_LAYOUT;
    o.stripe_size = 16 << 10;
    o.write_size = 4 << 10;
    return o;
}
