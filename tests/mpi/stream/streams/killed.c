/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_streams: a job killed while it writes a stream with a header per step
 * (--kill DIR), and what the kill left (--after-kill DIR;
 * tests/mpi/stream/stream_kill.cmake runs both).
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

/* ---- a killed job ---- */

/* Every rank writes steps with a header until it kills itself at a moment
 * drawn from the seed; rank 0 notes each step that completes. */
void killed_run(fwdio_runtime_t *rt, const char *dir, uint64_t seed)
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
void after_kill(const char *dir, uint64_t seed)
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
