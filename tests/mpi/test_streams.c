/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams: files opened with FWDIO_SIZE_GROWS that grow step by step
 * (fwdio_step_end), with per-step completion.
 *
 * The file is a run of steps; step k's bytes are [base_k, base_k + len_k),
 * drawn from the seed (some steps are empty), cut into random pieces owned
 * by random ranks, so most steps are empty on some ranks. Each rank writes
 * its pieces with fwdio_write or, at random, fwdio_write_lent, then ends the
 * step without waiting. Every step's callback checks it runs once, in order,
 * with FWDIO_OK, and that the step's bytes are in the file already. Cases:
 *   random       the above, over --steps steps; at the end the file's size
 *                is the end of the last byte written and every byte matches;
 *                fwdio_step_test / fwdio_step_wait agree with the callbacks;
 *   commit       rank 0 sets a header (commit block at offset 0: the number
 *                of steps) in every step; after each step completes the
 *                header counts at least the steps complete and at most those
 *                ended, and every step it counts is whole;
 *   fault        a durable stream on one writer whose 4th fdatasync fails
 *                (FWDIO_FAULT): steps 0-2 complete and stay intact, step 3
 *                and the later ones fail with FWDIO_ESYNC on every rank,
 *                later writes are FWDIO_EFAILED, the file completes with
 *                FWDIO_ESYNC;
 *   append       every rank appends (fwdio_append) 0 to 3 pieces of random
 *                length per step after a header below options.append_start,
 *                whose first half an existing file holds (kept; its bytes
 *                past append_start are cut) and whose second half the ranks
 *                write at explicit offsets; the file is every
 *                step's appends in rank order, each rank's in call order,
 *                checked after every step and at the end, with its size;
 *                appends after the last step end land at the close;
 *   ahead        a staging budget of 64 KiB; rank 0 appends 12 KiB per step
 *                and ends its steps at once, the other ranks 4 KiB each after
 *                a nap, so rank 0 is steps ahead with more than half the
 *                budget appended in ended steps: its appends wait (they are
 *                not refused), one larger than half the budget in one step
 *                is FWDIO_ETOOBIG, and the file is every step's appends in
 *                rank order;
 *   keep         options.keep_contents: an existing file longer than
 *                append_start, which another process extends while the
 *                stream is open, keeps every byte (nothing cut at the open);
 *                the ranks' writes land over it; ranks that disagree on the
 *                option: FWDIO_EINVAL naming "keep_contents";
 *   mismatch     rank 0 ends one step more than the others: FWDIO_EINVAL on
 *                every rank, its extra step's callback reports it;
 *   args         misuse is refused at the call.
 * With --kill DIR the program writes a stream with a header per step into
 * DIR and every rank dies (SIGKILL) at a moment drawn from --seed; with
 * --after-kill DIR it checks what the kill left (tests/stream_kill.cmake).
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
#include "test_common.h"

enum { HEADER = 64 };
static const char MAGIC[8] = "FWSTREAM";

typedef struct stream_case {
    char path[4096];
    uint64_t seed;
    int nsteps;
    uint64_t *base, *len; /* [nsteps] each step's bytes */
    int commit;           /* rank 0 sets a header commit block each step */
    fwdio_file_t *f;
    atomic_int steps_seen; /* step callbacks run */
    atomic_int step_order_bad;
    atomic_int steps_ok;   /* of them with FWDIO_OK */
    int want_from_fail;    /* steps from this one on must fail with want_fail */
    int want_fail;
    tc_cbstate_t cb;
} stream_case_t;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

/* The header a commit block carries: magic, steps complete, end of data. */
static void make_header(uint8_t *h, uint64_t steps, uint64_t end)
{
    memset(h, 0, HEADER);
    memcpy(h, MAGIC, sizeof MAGIC);
    memcpy(h + 8, &steps, sizeof steps);
    memcpy(h + 16, &end, sizeof end);
}

/* Steps of random sizes after the header; one in five is empty. */
static void plan_steps(stream_case_t *c, int nsteps, uint64_t max_step)
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

static uint64_t data_end(const stream_case_t *c, int steps)
{
    return steps == 0 ? HEADER : c->base[steps - 1] + c->len[steps - 1];
}

/* Step k's bytes are in the file (a rank that did not write them checks). */
static int step_in_file(const stream_case_t *c, int k)
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

static void check_header(const stream_case_t *c, uint64_t complete, uint64_t ended)
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

static void open_stream(fwdio_runtime_t *rt, stream_case_t *c, const char *name, uint64_t seed,
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
static void write_step(stream_case_t *c, int k, uint64_t max_piece, tc_rng_t *mine)
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

static void finish_stream(fwdio_runtime_t *rt, stream_case_t *c, int want, int ended)
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

static fwdio_options_t stream_options(int writers, fwdio_layout_t layout)
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

/* ---- cases ---- */

static void case_random(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                        fwdio_layout_t layout, uint64_t max_piece, int commit)
{
    stream_case_t c = {0};
    fwdio_options_t o = stream_options(writers, layout);
    open_stream(rt, &c, commit ? "commit" : "random", seed, &o);
    c.commit = commit;
    plan_steps(&c, nsteps, 200000);
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + 77 + (uint64_t)tc_rank);
    if (!commit && tc_rank == 0) /* the header is ordinary data of step 0 */
        TC_EXPECT(tc_write_pattern(c.f, 0, HEADER, seed, 0), FWDIO_OK, "fwdio_write header");
    for (int k = 0; k < nsteps; k++) {
        tc_phase("%s: step %d", c.path, k);
        write_step(&c, k, max_piece, &mine);
        TC_EXPECT(fwdio_step_end(c.f), FWDIO_OK, "fwdio_step_end");
        int done = 0;
        int rc = fwdio_step_test(c.f, (uint64_t)k, &done);
        TC_CHECK(rc == FWDIO_OK, "fwdio_step_test: %s", fwdio_strerror(rc));
        if (k % 5 == 4) { /* now and then the application waits for a step */
            TC_EXPECT(fwdio_step_wait(c.f, (uint64_t)k - 2), FWDIO_OK, "fwdio_step_wait");
            TC_CHECK(atomic_load(&c.steps_seen) >= k - 1, "step_wait returned before its callback");
            if (commit)
                check_header(&c, (uint64_t)atomic_load(&c.steps_seen), (uint64_t)k + 1);
        }
        fwdio_poll(rt);
    }
    TC_EXPECT(fwdio_step_wait(c.f, (uint64_t)nsteps - 1), FWDIO_OK, "fwdio_step_wait (last)");
    if (commit)
        check_header(&c, (uint64_t)nsteps, (uint64_t)nsteps);
    int done = 0;
    TC_EXPECT(fwdio_step_test(c.f, 0, &done), FWDIO_OK, "fwdio_step_test (first)");
    TC_CHECK(done == 1, "step 0 not complete after the last one");
    finish_stream(rt, &c, FWDIO_OK, nsteps);
    tc_phase("%s: verify", c.path);
    uint64_t end = data_end(&c, nsteps), bad = 0;
    if (tc_rank == 0) {
        struct stat st;
        TC_CHECK(stat(c.path, &st) == 0 && (uint64_t)st.st_size == end,
                 "%s: size %lld, want %llu", c.path, (long long)st.st_size,
                 (unsigned long long)end);
        TC_CHECK(pattern_check_file(c.path, end, HEADER, end - HEADER, seed, 0, &bad) == 0,
                 "%s: byte %llu wrong", c.path, (unsigned long long)bad);
        if (commit)
            check_header(&c, (uint64_t)nsteps, (uint64_t)nsteps);
    }
    fwdio_file_free(c.f);
    free(c.base);
    free(c.len);
}

static void case_fault(int nsteps, uint64_t seed)
{
    /* the writer's 4th fdatasync of this path fails: step 3 */
    setenv("FWDIO_FAULT", "fdatasync:eio:from=4:path=stream-fault", 1);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    stream_case_t c = {0};
    fwdio_options_t o = stream_options(1, FWDIO_LAYOUT_CYCLIC);
    o.durable = 1;
    open_stream(rt, &c, "stream-fault", seed, &o);
    c.want_from_fail = 3;
    c.want_fail = FWDIO_ESYNC;
    plan_steps(&c, nsteps, 100000);
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank);
    for (int k = 0; k < nsteps; k++) {
        tc_phase("%s: step %d", c.path, k);
        if (k <= 3) {
            write_step(&c, k, 30000, &mine);
            TC_EXPECT(fwdio_step_end(c.f), FWDIO_OK, "fwdio_step_end");
            TC_EXPECT(fwdio_step_wait(c.f, (uint64_t)k), k < 3 ? FWDIO_OK : FWDIO_ESYNC,
                      "fwdio_step_wait");
        } else { /* the stream has failed: writes refused, steps still end */
            uint8_t b[16] = {0};
            TC_EXPECT(fwdio_write(c.f, b, sizeof b, c.base[k]), FWDIO_EFAILED,
                      "fwdio_write after a failed step");
            TC_EXPECT(fwdio_step_end(c.f), FWDIO_EFAILED, "fwdio_step_end after a failed step");
        }
    }
    finish_stream(rt, &c, FWDIO_ESYNC, nsteps);
    TC_CHECK(atomic_load(&c.steps_ok) == 3, "%d steps OK, want 3", atomic_load(&c.steps_ok));
    fwdio_error_info_t info;
    fwdio_file_error_info(c.f, &info);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, info.rank) && tc_all_same(MPI_COMM_WORLD, info.sys_errno),
             "ranks report different errors: %s", fwdio_file_error(c.f));
    for (int k = 0; k < 3 && tc_rank == 0; k++)
        step_in_file(&c, k);
    fwdio_file_free(c.f);
    free(c.base);
    free(c.len);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize (fault)");
}

enum { AHEAD_STEPS = 12, AHEAD_BUDGET = 64 << 10 };

/* Rank r's appended bytes per step in the `ahead` case. */
static uint64_t ahead_len(int r) { return r == 0 ? 12 << 10 : 4 << 10; }

static void case_ahead(uint64_t seed)
{
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = g_mode;
    cfg.staging_buffer = AHEAD_BUDGET;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    char path[4096];
    tc_path(path, sizeof path, "stream-ahead");
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    fwdio_file_t *f = NULL;
    tc_phase("ahead: open");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "open");
    uint8_t *buf = malloc(AHEAD_BUDGET);
    uint64_t base = 0, step_bytes = 0;
    for (int r = 0; r < tc_size; r++)
        step_bytes += ahead_len(r);
    for (int k = 0; k < AHEAD_STEPS; k++) {
        tc_phase("ahead: step %d", k);
        uint64_t off = base;
        for (int r = 0; r < tc_rank; r++)
            off += ahead_len(r);
        if (tc_rank != 0)
            usleep(30000); /* rank 0 runs ahead, its appends of ended steps held */
        pattern_fill(buf, ahead_len(tc_rank), off, seed);
        TC_EXPECT(fwdio_append(f, buf, ahead_len(tc_rank)), FWDIO_OK, "fwdio_append");
        if (k == 0)
            TC_EXPECT(fwdio_append(f, buf, AHEAD_BUDGET / 2 + 1), FWDIO_ETOOBIG,
                      "an append past half the budget within one step");
        TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
        base += step_bytes;
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "ahead: fwdio_wait");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize (ahead)");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) { /* the file: every step's appends in rank order */
        uint64_t bad = 0;
        TC_CHECK(pattern_check_file(path, base, 0, base, seed, 0, &bad) == 0,
                 "ahead: the file is wrong at offset %llu", (unsigned long long)bad);
    }
    free(buf);
}

static void case_mismatch(fwdio_runtime_t *rt, uint64_t seed)
{
    if (tc_size < 2)
        return;
    stream_case_t c = {0};
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    open_stream(rt, &c, "mismatch", seed, &o);
    plan_steps(&c, 3, 50000);
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank);
    int mine_steps = tc_rank == 0 ? 3 : 2;
    c.want_from_fail = 2;
    c.want_fail = FWDIO_EINVAL;
    for (int k = 0; k < mine_steps; k++) {
        write_step(&c, k, 20000, &mine);
        TC_EXPECT(fwdio_step_end(c.f), FWDIO_OK, "fwdio_step_end");
    }
    /* steps 0 and 1 agree (and may already be complete); 2 meets the close */
    finish_stream(rt, &c, FWDIO_EINVAL, mine_steps);
    TC_CHECK(strstr(fwdio_file_error(c.f), "steps") != NULL, "error text: %s",
             fwdio_file_error(c.f));
    fwdio_file_free(c.f);
    free(c.base);
    free(c.len);
}

static void case_args(fwdio_runtime_t *rt)
{
    char path[4096];
    tc_path(path, sizeof path, "args");
    fwdio_file_t *f = NULL;
    tc_phase("args");
    TC_EXPECT(fwdio_step_end(NULL), FWDIO_EINVAL, "fwdio_step_end(NULL)");
    int done;
    TC_EXPECT(fwdio_step_test(NULL, 0, &done), FWDIO_EINVAL, "fwdio_step_test(NULL)");
    TC_EXPECT(fwdio_step_wait(NULL, 0), FWDIO_EINVAL, "fwdio_step_wait(NULL)");
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.atomic_replace = 1;
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_EINVAL,
              "atomic_replace on a stream");
    /* a file with a size is not a stream */
    TC_EXPECT(fwdio_open(rt, path, 1000, NULL, NULL, &f), FWDIO_OK, "fwdio_open");
    TC_EXPECT(fwdio_step_end(f), FWDIO_EINVAL, "fwdio_step_end on a fixed-size file");
    TC_EXPECT(fwdio_step_wait(f, 0), FWDIO_EINVAL, "fwdio_step_wait on a fixed-size file");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, NULL, NULL, &f), FWDIO_OK, "open stream");
    TC_EXPECT(fwdio_step_wait(f, 0), FWDIO_EINVAL, "fwdio_step_wait of a step not ended");
    TC_EXPECT(fwdio_step_test(f, 0, &done), FWDIO_EINVAL, "fwdio_step_test of a step not ended");
    uint8_t b[8] = {0};
    TC_EXPECT(fwdio_write(f, b, sizeof b, FWDIO_STREAM_MAX_SIZE), FWDIO_ERANGE,
              "a write past the largest stream");
    TC_EXPECT(fwdio_write(f, b, sizeof b, (uint64_t)tc_rank * 8), FWDIO_OK, "fwdio_write");
    TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
    TC_EXPECT(fwdio_step_wait(f, 0), FWDIO_OK, "fwdio_step_wait");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_step_end(f), FWDIO_ECLOSED, "fwdio_step_end after close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_EXPECT(fwdio_step_wait(f, 0), FWDIO_OK, "fwdio_step_wait after complete");
    struct stat st;
    if (tc_rank == 0)
        TC_CHECK(stat(path, &st) == 0 && st.st_size == 8 * tc_size, "args stream: size %lld",
                 (long long)st.st_size);
    fwdio_file_free(f);
}

/* ---- ordered appends ---- */

/* Rank r's appends in step k: their count and lengths, from the seed alone
 * (so every rank knows every rank's). */
static int appends_of(uint64_t seed, int k, int r, uint64_t *lens)
{
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 7919u + (uint64_t)k * 131u + (uint64_t)r);
    int n = (int)tc_rng_below(&rng, 4);
    for (int i = 0; i < n; i++)
        lens[i] = 1 + tc_rng_below(&rng, tc_rng_below(&rng, 3) == 0 ? 100000 : 3000);
    return n;
}

/* The content of append i of rank r in step k does not depend on where it
 * lands: a pattern keyed by (k, r, i). */
static uint64_t append_key(int k, int r, int i) { return ((uint64_t)(k * 64 + r) * 4 + (uint64_t)i) << 24; }

typedef struct append_case {
    stream_case_t c;
    uint64_t *step_end; /* [nsteps] where each step's appends end */
} append_case_t;

/* Check step k's appended bytes in the file (every rank's, in rank order). */
static int check_appends(const append_case_t *ac, int k)
{
    int fd = open(ac->c.path, O_RDONLY);
    if (fd < 0)
        return 0;
    uint64_t at = k == 0 ? HEADER : ac->step_end[k - 1];
    int ok = 1;
    for (int r = 0; r < tc_size && ok; r++) {
        uint64_t lens[4];
        int n = appends_of(ac->c.seed, k, r, lens);
        for (int i = 0; i < n && ok; i++) {
            uint8_t *want = malloc(lens[i]), *got = malloc(lens[i]);
            pattern_fill(want, lens[i], append_key(k, r, i), ac->c.seed);
            ok = pread(fd, got, lens[i], (off_t)at) == (ssize_t)lens[i] &&
                 !memcmp(want, got, lens[i]);
            if (!ok)
                tc_fail("%s: step %d: append %d of rank %d at %llu is wrong", ac->c.path, k, i,
                        r, (unsigned long long)at);
            at += lens[i];
            free(want);
            free(got);
        }
    }
    close(fd);
    return ok;
}

static void on_append_step(fwdio_file_t *f, uint64_t step, int status, void *user)
{
    append_case_t *ac = ((tc_cbstate_t *)user)->user;
    if (step != (uint64_t)atomic_load(&ac->c.steps_seen) || f != ac->c.f)
        atomic_fetch_add(&ac->c.step_order_bad, 1);
    TC_CHECK(status == FWDIO_OK, "%s: step %llu: %s", ac->c.path, (unsigned long long)step,
             fwdio_strerror(status));
    if (status == FWDIO_OK && (int)step < ac->c.nsteps)
        check_appends(ac, (int)step);
    atomic_fetch_add(&ac->c.steps_seen, 1);
}

static void case_append(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                        fwdio_layout_t layout)
{
    append_case_t ac = {0};
    stream_case_t *c = &ac.c;
    tc_path(c->path, sizeof c->path, "append");
    c->seed = seed;
    c->nsteps = nsteps;
    /* [nsteps]: what is appended after the last step end, placed at the close */
    ac.step_end = calloc((size_t)nsteps + 1, sizeof *ac.step_end);
    uint64_t at = HEADER;
    for (int k = 0; k <= nsteps; k++) {
        for (int r = 0; r < tc_size; r++) {
            uint64_t lens[4];
            int n = appends_of(seed, k, r, lens);
            for (int i = 0; i < n; i++)
                at += lens[i];
        }
        ac.step_end[k] = at;
    }
    /* an existing file: the header's first half, then debris to be cut */
    if (tc_rank == 0) {
        uint8_t old[HEADER + 5000];
        pattern_fill(old, HEADER / 2, 0, seed);
        memset(old + HEADER / 2, 0xab, sizeof old - HEADER / 2);
        int fd = open(c->path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        TC_CHECK(fd >= 0 && write(fd, old, sizeof old) == (ssize_t)sizeof old,
                 "cannot write %s", c->path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_options_t o = stream_options(writers, layout);
    o.append_start = HEADER;
    tc_cb_init(&c->cb);
    c->cb.user = &ac;
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c->cb);
    cbs.step = on_append_step;
    tc_phase("open %s", c->path);
    TC_EXPECT(fwdio_open(rt, c->path, FWDIO_SIZE_GROWS, &o, &cbs, &c->f), FWDIO_OK,
              "fwdio_open (append)");
    /* the header's second half, at explicit offsets, a piece per rank */
    const uint64_t half = HEADER / 2;
    uint64_t share = (half + (uint64_t)tc_size - 1) / (uint64_t)tc_size;
    uint64_t h0 = half + share * (uint64_t)tc_rank;
    if (h0 < HEADER)
        TC_EXPECT(tc_write_pattern(c->f, h0, h0 + share > HEADER ? HEADER - h0 : share, seed, 0),
                  FWDIO_OK, "fwdio_write header");
    for (int k = 0; k <= nsteps; k++) {
        tc_phase("%s: step %d", c->path, k);
        uint64_t lens[4];
        int n = appends_of(seed, k, tc_rank, lens);
        for (int i = 0; i < n; i++) {
            uint8_t *buf = malloc(lens[i]);
            pattern_fill(buf, lens[i], append_key(k, tc_rank, i), seed);
            TC_EXPECT(fwdio_append(c->f, buf, lens[i]), FWDIO_OK, "fwdio_append");
            memset(buf, 0xee, lens[i]); /* copied: the buffer is ours again */
            free(buf);
        }
        if (k == nsteps)
            break; /* the last appends go with the close */
        TC_EXPECT(fwdio_step_end(c->f), FWDIO_OK, "fwdio_step_end");
        if (k % 7 == 6)
            TC_EXPECT(fwdio_step_wait(c->f, (uint64_t)k), FWDIO_OK, "fwdio_step_wait");
    }
    finish_stream(rt, c, FWDIO_OK, nsteps);
    struct stat st;
    uint64_t end = ac.step_end[nsteps];
    TC_CHECK(stat(c->path, &st) == 0 && (uint64_t)st.st_size == end, "%s: size %lld, want %llu",
             c->path, (long long)st.st_size, (unsigned long long)end);
    uint64_t bad;
    TC_CHECK(pattern_check_file(c->path, end, 0, HEADER, seed, 0, &bad) == 0,
             "%s: header byte %llu wrong", c->path, (unsigned long long)bad);
    for (int k = 0; k <= nsteps; k++)
        check_appends(&ac, k);
    fwdio_file_free(c->f);
    free(ac.step_end);
}

/* ---- keep_contents ---- */

static void case_keep(fwdio_runtime_t *rt, uint64_t seed)
{
    enum { OLD = 20000, LATER = 9000, PIECE = 1000 };
    char path[4096];
    tc_path(path, sizeof path, "keep");
    uint8_t *old = malloc(OLD + LATER);
    pattern_fill(old, OLD + LATER, 0, seed);
    if (tc_rank == 0) {
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        TC_CHECK(fd >= 0 && write(fd, old, OLD) == OLD, "cannot write %s", path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    o.append_start = 100; /* far below the file's end: would cut it */
    o.keep_contents = 1;
    fwdio_file_t *f = NULL;
    tc_phase("keep: open");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    /* another process writes past the end while the stream is open */
    if (tc_rank == 0) {
        int fd = open(path, O_WRONLY);
        TC_CHECK(fd >= 0 && pwrite(fd, old + OLD, LATER, OLD) == LATER, "cannot extend %s",
                 path);
        if (fd >= 0)
            close(fd);
    }
    uint8_t piece[PIECE];
    memset(piece, 0x5a + tc_rank, sizeof piece);
    uint64_t at = 2000 + (uint64_t)tc_rank * 3000;
    TC_EXPECT(fwdio_write(f, piece, sizeof piece, at), FWDIO_OK, "fwdio_write");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "keep: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank == 0) {
        uint64_t end = OLD + LATER;
        for (int r = 0; r < tc_size; r++) {
            uint64_t e = 2000 + (uint64_t)r * 3000 + PIECE;
            for (uint64_t i = e - PIECE; i < e; i++)
                if (i < OLD + LATER)
                    old[i] = (uint8_t)(0x5a + r);
            end = e > end ? e : end;
        }
        uint8_t *got = calloc(end, 1);
        int fd = open(path, O_RDONLY);
        ssize_t n = fd < 0 ? -1 : pread(fd, got, end + 1, 0);
        if (fd >= 0)
            close(fd);
        TC_CHECK(n == (ssize_t)end, "keep: %s has %zd bytes, want %llu", path, n,
                 (unsigned long long)end);
        for (uint64_t i = 0; i < OLD + LATER && i < end; i++)
            if (got[i] != old[i]) {
                tc_fail("keep: byte %llu of %s is %u, want %u (cut at the open?)",
                        (unsigned long long)i, path, got[i], old[i]);
                break;
            }
        free(got);
    }
    free(old);
    if (tc_size < 2)
        return;
    tc_phase("keep: ranks that disagree");
    o.keep_contents = tc_rank == 1;
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "keep_contents");
}

/* ---- a killed job ---- */

/* Every rank writes steps with a header until it kills itself at a moment
 * drawn from the seed; rank 0 notes each step that completes. */
static void killed_run(fwdio_runtime_t *rt, const char *dir, uint64_t seed)
{
    stream_case_t c = {0};
    fwdio_options_t o = stream_options(2, FWDIO_LAYOUT_CYCLIC);
    tc_cb_init(&c.cb);
    c.cb.user = &c;
    c.seed = seed;
    c.commit = 1;
    c.want_from_fail = 1 << 30;
    snprintf(c.path, sizeof c.path, "%s/stream", dir);
    plan_steps(&c, 400, 60000);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&c.cb);
    TC_EXPECT(fwdio_open(rt, c.path, FWDIO_SIZE_GROWS, &o, &cbs, &c.f), FWDIO_OK, "open");
    char notes[4200];
    snprintf(notes, sizeof notes, "%s/complete", dir);
    int note_fd = tc_rank == 0 ? open(notes, O_CREAT | O_WRONLY | O_TRUNC, 0644) : -1;
    tc_rng_t when;
    tc_rng_seed(&when, seed);
    /* everyone dies at about the same time, each on its own */
    double die_at = MPI_Wtime() + 0.05 + (double)tc_rng_below(&when, 600) / 1000.0;
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank);
    for (int k = 0; k < c.nsteps; k++) {
        write_step(&c, k, 20000, &mine);
        fwdio_step_end(c.f);
        for (int j = 0; j <= k; j++) { /* note what is complete */
            int done = 0;
            if (fwdio_step_test(c.f, (uint64_t)j, &done) == FWDIO_OK && done && note_fd >= 0 &&
                j == atomic_load(&c.steps_seen)) {
                char line[32];
                int n = snprintf(line, sizeof line, "%d\n", j);
                if (write(note_fd, line, (size_t)n) != n)
                    tc_fail("cannot note step %d", j);
                atomic_fetch_add(&c.steps_seen, 1);
            }
        }
        if (MPI_Wtime() >= die_at)
            raise(SIGKILL);
        usleep(2000);
    }
    raise(SIGKILL);
}

/* What the kill left: the header counts n steps; at least every step noted
 * complete; each of the n whole; and the file reaches no further than the
 * step after them (a step's bytes go to the file only once the steps
 * before it are complete). */
static void after_kill(const char *dir, uint64_t seed)
{
    if (tc_rank != 0)
        return;
    stream_case_t c = {0};
    c.seed = seed;
    snprintf(c.path, sizeof c.path, "%s/stream", dir);
    plan_steps(&c, 400, 60000);
    char notes[4200];
    snprintf(notes, sizeof notes, "%s/complete", dir);
    FILE *nf = fopen(notes, "r");
    int last = -1, k;
    while (nf && fscanf(nf, "%d", &k) == 1)
        last = k;
    if (nf)
        fclose(nf);
    int fd = open(c.path, O_RDONLY);
    uint8_t h[HEADER] = {0};
    uint64_t steps = 0;
    if (fd >= 0 && pread(fd, h, HEADER, 0) == HEADER && !memcmp(h, MAGIC, sizeof MAGIC))
        memcpy(&steps, h + 8, sizeof steps);
    if (fd >= 0)
        close(fd);
    tc_note("killed stream: header counts %llu steps, %d noted complete",
            (unsigned long long)steps, last + 1);
    TC_CHECK(steps >= (uint64_t)(last + 1), "header counts %llu steps, %d were complete",
             (unsigned long long)steps, last + 1);
    TC_CHECK(steps <= (uint64_t)c.nsteps, "header counts %llu steps", (unsigned long long)steps);
    for (uint64_t s = 0; s < steps && s < (uint64_t)c.nsteps; s++)
        if (!step_in_file(&c, (int)s))
            break;
    struct stat st;
    if (steps < (uint64_t)c.nsteps && stat(c.path, &st) == 0) {
        uint64_t limit = data_end(&c, (int)steps + 1);
        tc_note("killed stream: %lld bytes, the steps counted end at %llu, the next at %llu",
                (long long)st.st_size, (unsigned long long)data_end(&c, (int)steps),
                (unsigned long long)limit);
        TC_CHECK((uint64_t)st.st_size <= limit,
                 "the file has %lld bytes, past the end of the step after the %llu counted (%llu)",
                 (long long)st.st_size, (unsigned long long)steps, (unsigned long long)limit);
    }
    free(c.base);
    free(c.len);
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    int nsteps = 24, writers = 2;
    uint64_t seed = 1, max_piece = 30000;
    fwdio_layout_t layout = FWDIO_LAYOUT_CYCLIC;
    const char *kill_dir = NULL, *after_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            nsteps = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--writers") && i + 1 < argc)
            writers = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--max-piece") && i + 1 < argc)
            max_piece = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
            const char *l = argv[++i];
            layout = !strcmp(l, "targets") ? FWDIO_LAYOUT_TARGETS
                     : !strcmp(l, "block") ? FWDIO_LAYOUT_BLOCK
                                           : FWDIO_LAYOUT_CYCLIC;
        } else if (!strcmp(argv[i], "--kill") && i + 1 < argc)
            kill_dir = argv[++i];
        else if (!strcmp(argv[i], "--after-kill") && i + 1 < argc)
            after_dir = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--steps N] [--seed S] [--writers W] [--max-piece B] "
                            "[--layout cyclic|targets|block] [--kill DIR | --after-kill DIR]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (after_dir) {
        after_kill(after_dir, seed);
        return tc_finish("test_streams --after-kill");
    }
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (kill_dir)
        killed_run(rt, kill_dir, seed);
    case_args(rt);
    case_random(rt, nsteps, seed, writers, layout, max_piece, 0);
    case_random(rt, nsteps, seed + 1, writers, layout, max_piece, 1);
    case_append(rt, nsteps, seed + 4, writers, layout);
    case_mismatch(rt, seed + 2);
    case_keep(rt, seed + 6);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    case_fault(7, seed + 3);
    case_ahead(seed + 5);
    return tc_finish("test_streams");
}
