/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_streams cases: steps. Random steps written and lent by random ranks,
 * with and without a header per step (random, commit), a step whose
 * fdatasync fails (fault), ranks that end different numbers of steps
 * (mismatch), and misuse refused at the call (args).
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

/* ---- cases ---- */

void case_random(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                 fwdio_layout_t layout, uint64_t max_piece, int commit, int offsets_only)
{
    stream_case_t c = {0};
    fwdio_options_t o = stream_options(writers, layout);
    o.offsets_only = offsets_only;
    open_stream(rt, &c, commit ? "commit" : offsets_only ? "offsets" : "random", seed, &o);
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

void case_fault(int nsteps, uint64_t seed)
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

void case_mismatch(fwdio_runtime_t *rt, uint64_t seed)
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

void case_args(fwdio_runtime_t *rt)
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
