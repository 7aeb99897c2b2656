/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio_alloc / fwdio_release: buffers filled in place and lent, and every way
 * a user can get them wrong.
 *
 *   use       each rank packs its share straight into fwdio_alloc buffers and
 *             lends them (several per rank, more than the area holds, so some
 *             are ordinary memory); the file is checked byte for byte and each
 *             buffer is released in its done callback
 *   misuse    NULL runtime, NULL out pointer, 0 bytes; release of NULL, of
 *             memory from malloc, of a pointer inside a buffer, twice; a lent
 *             write that runs past the end of its buffer: each a clear error
 *             that frees nothing
 *   busy      a buffer lent to a write that cannot have completed (the other
 *             ranks have not opened the file yet) cannot be released
 *             (FWDIO_EBUSY), and can be once its done callback ran
 *   leftover  buffers never released are freed by fwdio_finalize (the ASan
 *             build would report them otherwise)
 */
#define _GNU_SOURCE
#include "test_common.h"

#include "pattern.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static fwdio_runtime_t *g_rt;

static atomic_int g_done, g_release_failed;

/* The buffer is ours again: release it right here. */
static void release_when_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    (void)arg;
    if (status != FWDIO_OK)
        tc_fail("lent write done with %s", fwdio_strerror(status));
    if (fwdio_release(g_rt, (void *)buf) != FWDIO_OK)
        atomic_fetch_add(&g_release_failed, 1);
    atomic_fetch_add(&g_done, 1);
}

static void count_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    (void)buf;
    (void)status;
    (void)arg;
    atomic_fetch_add(&g_done, 1);
}

static fwdio_file_t *open_one(const char *name, uint64_t size, char *path, size_t path_len)
{
    tc_path(path, path_len, name);
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = tc_size > 1 ? 2 : 1;
    o.stripe_size = 256 << 10;
    o.write_size = 64 << 10;
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(g_rt, path, size, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    return f;
}

static void section_use(void)
{
    tc_phase("use: pack in place, lend, release in the callback");
    enum { PIECES = 12 };
    const uint64_t piece = (5 << 20) + 4093; /* 12 x 5 MiB: more than a 64 MiB area */
    const uint64_t size = (uint64_t)tc_size * PIECES * piece, seed = 601;
    char path[4096];
    fwdio_file_t *f = open_one("alloc_use.dat", size, path, sizeof path);
    if (!f)
        return;
    atomic_store(&g_done, 0);
    atomic_store(&g_release_failed, 0);
    int accepted = 0;
    for (int k = 0; k < PIECES; k++) {
        void *buf = NULL;
        TC_EXPECT(fwdio_alloc(g_rt, piece, &buf), FWDIO_OK, "fwdio_alloc");
        if (!buf)
            continue;
        TC_CHECK(((uintptr_t)buf & 63) == 0, "fwdio_alloc gave an unaligned %p", buf);
        /* ranks interleave by piece, so every writer gets bytes of every rank */
        uint64_t offset = ((uint64_t)k * (uint64_t)tc_size + (uint64_t)tc_rank) * piece;
        pattern_fill(buf, piece, offset, seed);
        int rc = fwdio_write_lent(f, buf, piece, offset, release_when_done, NULL);
        TC_EXPECT(rc, FWDIO_OK, "fwdio_write_lent");
        if (rc == FWDIO_OK)
            accepted++;
        else
            fwdio_release(g_rt, buf);
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_CHECK(atomic_load(&g_done) == accepted, "%d done callbacks for %d lent writes",
             atomic_load(&g_done), accepted);
    TC_CHECK(atomic_load(&g_release_failed) == 0, "%d releases in the callback failed",
             atomic_load(&g_release_failed));
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(g_rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(rs.shared_peak <= rs.shared_budget, "area peak %llu over its %llu bytes",
             (unsigned long long)rs.shared_peak, (unsigned long long)rs.shared_budget);
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
}

static void section_misuse(void)
{
    tc_phase("misuse: clear errors, nothing freed");
    void *buf = (void *)1;
    TC_EXPECT(fwdio_alloc(NULL, 64, &buf), FWDIO_EINVAL, "fwdio_alloc(NULL runtime)");
    TC_CHECK(buf == NULL, "a failed fwdio_alloc left *buf set");
    TC_EXPECT(fwdio_alloc(g_rt, 64, NULL), FWDIO_EINVAL, "fwdio_alloc(NULL buf)");
    TC_EXPECT(fwdio_alloc(g_rt, 0, &buf), FWDIO_EINVAL, "fwdio_alloc(0 bytes)");
    TC_EXPECT(fwdio_release(g_rt, NULL), FWDIO_EINVAL, "fwdio_release(NULL)");
    TC_EXPECT(fwdio_release(NULL, &buf), FWDIO_EINVAL, "fwdio_release(NULL runtime)");
    void *foreign = malloc(100);
    TC_EXPECT(fwdio_release(g_rt, foreign), FWDIO_EINVAL, "fwdio_release(malloc'd)");
    free(foreign); /* still ours: fwdio must not have freed it */

    void *a = NULL;
    TC_EXPECT(fwdio_alloc(g_rt, 4096, &a), FWDIO_OK, "fwdio_alloc");
    if (!a)
        return;
    memset(a, 0x11, 4096);
    TC_EXPECT(fwdio_release(g_rt, (char *)a + 100), FWDIO_EINVAL, "fwdio_release(inside)");

    /* a lent write that runs past the buffer's end is refused at the call */
    char path[4096];
    fwdio_file_t *f = open_one("alloc_misuse.dat", 1 << 20, path, sizeof path);
    atomic_store(&g_done, 0);
    if (f) {
        TC_EXPECT(fwdio_write_lent(f, (char *)a + 4000, 200, 0, count_done, NULL), FWDIO_EINVAL,
                  "fwdio_write_lent past the end of its buffer");
        TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
        TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
        TC_CHECK(atomic_load(&g_done) == 0, "a refused lent write called back");
        fwdio_file_free(f);
    }
    TC_CHECK(((unsigned char *)a)[4095] == 0x11, "the buffer changed under a failed release");
    TC_EXPECT(fwdio_release(g_rt, a), FWDIO_OK, "fwdio_release");
    TC_EXPECT(fwdio_release(g_rt, a), FWDIO_EINVAL, "fwdio_release twice");
}

static void section_busy(void)
{
    tc_phase("busy: no release while lent");
    const uint64_t size = (uint64_t)tc_size << 20, seed = 602;
    char path[4096];
    tc_path(path, sizeof path, "alloc_busy.dat");
    void *buf = NULL;
    TC_EXPECT(fwdio_alloc(g_rt, 1 << 20, &buf), FWDIO_OK, "fwdio_alloc");
    if (!buf)
        return;
    const uint64_t offset = (uint64_t)tc_rank << 20;
    pattern_fill(buf, 1 << 20, offset, seed);
    atomic_store(&g_done, 0);
    fwdio_file_t *f = NULL;
    /* Rank 0 opens and lends first; the others open only after its release
     * attempt, so its write cannot have gone anywhere yet. */
    if (tc_rank == 0) {
        f = open_one("alloc_busy.dat", size, path, sizeof path);
        TC_EXPECT(fwdio_write_lent(f, buf, 1 << 20, offset, count_done, NULL), FWDIO_OK,
                  "fwdio_write_lent");
        if (tc_size > 1)
            TC_EXPECT(fwdio_release(g_rt, buf), FWDIO_EBUSY, "fwdio_release while lent");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tc_rank != 0) {
        f = open_one("alloc_busy.dat", size, path, sizeof path);
        TC_EXPECT(fwdio_write_lent(f, buf, 1 << 20, offset, count_done, NULL), FWDIO_OK,
                  "fwdio_write_lent");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_CHECK(atomic_load(&g_done) == 1, "done ran %d times", atomic_load(&g_done));
    TC_EXPECT(fwdio_release(g_rt, buf), FWDIO_OK, "fwdio_release after done");
    fwdio_file_free(f);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
}

static void section_leftover(void)
{
    tc_phase("leftover: finalize frees what was not released");
    for (int k = 0; k < 3; k++) {
        void *buf = NULL;
        TC_EXPECT(fwdio_alloc(g_rt, (size_t)(k + 1) << 20, &buf), FWDIO_OK, "fwdio_alloc");
    }
    void *big = NULL; /* larger than any area: ordinary memory */
    TC_EXPECT(fwdio_alloc(g_rt, (size_t)200 << 20, &big), FWDIO_OK, "fwdio_alloc(200 MiB)");
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    for (int i = 1; i < argc; i++) {
        if (!tc_common_option(argc, argv, &i, &timeout, &g_mode)) {
            fprintf(stderr, "usage: %s [--callback-mode poll|progress] [--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    g_rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    section_use();
    section_misuse();
    section_busy();
    section_leftover();
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    return tc_finish("test_alloc");
}
