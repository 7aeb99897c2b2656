/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streams with rewrites (fwdio_options_t.rewrites): later steps write bytes
 * that earlier steps wrote, and the file holds the last step's.
 *
 * Every step writes pieces over one span of the file: a run of disjoint
 * pieces from a random start, some gaps between them, each piece owned by a
 * random rank, so each step rewrites much of what the steps before wrote and
 * leaves some of it. The plan comes from the seed alone, so rank 0 knows
 * every byte's last step. The bytes of step k are the pattern of seed + k.
 * Cases:
 *   random     --steps steps, pieces written or lent at random, the
 *              application waiting for a step now and then; after a wait
 *              for step k, every byte whose last writer is a step <= k and
 *              that no step which may be under way touches is checked in
 *              the file; at the end the file's size and every byte (holes:
 *              zeros);
 *   overlap    two ranks write the same bytes in one step: FWDIO_EOVERLAP on
 *              every rank (rewrites do not make one step's overlaps legal);
 *   default    without rewrites, a later step writing a byte again:
 *              FWDIO_EOVERLAP on every rank, as before;
 *   fault      a writer's 3rd pwrite fails (FWDIO_FAULT) while the ranks'
 *              later steps wait to be sent: the steps from the failing one
 *              on fail with FWDIO_EWRITE on every rank and the file does,
 *              with no wait that never ends;
 *   args       rewrites on a file with a size, and ranks that disagree on
 *              it: FWDIO_EINVAL naming "rewrites";
 *   overlaps   options.overlaps: in a stream with rewrites, every rank's
 *              pieces of a step overlap other ranks' and its own; in a file
 *              with a size, the same in one go. Nothing fails; every byte
 *              holds the byte of one of the ranks that wrote it in the last
 *              step that wrote it. Ranks that disagree on it: FWDIO_EINVAL
 *              naming "overlaps".
 * With --mpi-fault only this case runs:
 *   mpi_fault  an MPI call fails (MPI_FAULTS_RULE, tests/util/mpi_faults.h)
 *              while later steps' messages are held: every rank's file
 *              ends with FWDIO_EMPI, every step from the first failed one
 *              on fails, and nothing waits for ever.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fwdio.h"
#include "mpi_faults.h"
#include "pattern.h"
#include "test_common.h"

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;

typedef struct piece {
    uint64_t off, len;
    int owner;
} piece_t;

/* Step k's pieces over [0, span): disjoint, in order; returns their count. */
static size_t plan_step(uint64_t seed, int k, uint64_t span, uint64_t max_piece,
                        piece_t **out)
{
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 1000003u + (uint64_t)k * 7919u);
    size_t n = 0, cap = 64;
    piece_t *p = malloc(cap * sizeof *p);
    uint64_t off = tc_rng_below(&rng, span / 3);
    uint64_t stop = span - tc_rng_below(&rng, span / 3);
    while (off < stop) {
        uint64_t len = 1 + tc_rng_below(&rng, max_piece);
        if (len > stop - off)
            len = stop - off;
        if (n == cap)
            p = realloc(p, (cap *= 2) * sizeof *p);
        p[n++] = (piece_t){off, len, (int)tc_rng_below(&rng, (uint64_t)tc_size)};
        off += len;
        if (tc_rng_below(&rng, 4) == 0) /* a gap: the earlier step's bytes stay */
            off += tc_rng_below(&rng, 3 * max_piece);
    }
    *out = p;
    return n;
}

static void lent_done(fwdio_file_t *f, const void *buf, int status, void *arg)
{
    (void)f;
    (void)status;
    (void)arg;
    free((void *)buf);
}

/* This rank's pieces of step k: written, or lent at random. */
static void write_step(fwdio_file_t *f, const piece_t *p, size_t n, uint64_t seed, int k,
                       tc_rng_t *mine, int allow_failed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i].owner != tc_rank)
            continue;
        int rc;
        if (tc_rng_below(mine, 3) == 0) {
            uint8_t *buf = malloc(p[i].len);
            pattern_fill(buf, p[i].len, p[i].off, seed + (uint64_t)k);
            rc = fwdio_write_lent(f, buf, p[i].len, p[i].off, lent_done, NULL);
            if (rc != FWDIO_OK)
                free(buf);
        } else {
            rc = tc_write_pattern(f, p[i].off, p[i].len, seed + (uint64_t)k, 0);
        }
        if (!(allow_failed && rc == FWDIO_EFAILED))
            TC_EXPECT(rc, FWDIO_OK, "fwdio_write (step)");
    }
}

/* The expected file: for every byte of the span, the last step that wrote
 * it (-1: none). */
typedef struct image {
    uint64_t span;
    int *last; /* [span] */
    uint64_t end; /* the highest byte written, plus one */
} image_t;

static void image_apply(image_t *im, const piece_t *p, size_t n, int k)
{
    for (size_t i = 0; i < n; i++) {
        for (uint64_t b = p[i].off; b < p[i].off + p[i].len; b++)
            im->last[b] = k;
        if (p[i].off + p[i].len > im->end)
            im->end = p[i].off + p[i].len;
    }
}

/* Check the file's bytes against the image; `stable`, if not NULL, says which
 * bytes must be final already (the others are skipped). Returns the first
 * wrong byte, or UINT64_MAX. */
static uint64_t image_check(const char *path, const image_t *im, uint64_t seed,
                            const unsigned char *stable)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return 0;
    uint8_t *buf = malloc(im->end ? im->end : 1);
    size_t got = fread(buf, 1, im->end, fp);
    fclose(fp);
    uint64_t bad = UINT64_MAX;
    for (uint64_t b = 0; b < im->end && bad == UINT64_MAX; b++) {
        if (stable && !stable[b])
            continue;
        if (b >= got) {
            bad = b;
            break;
        }
        int k = im->last[b];
        uint8_t want = k < 0 ? 0 : pattern_byte(seed + (uint64_t)k, b);
        if (buf[b] != want) {
            bad = b;
            tc_note("%s: byte %llu is %u, want %u (step %d's); %zu bytes read", path,
                    (unsigned long long)b, buf[b], want, k, got);
        }
    }
    free(buf);
    return bad;
}

static fwdio_options_t rewrite_options(int writers)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = writers < tc_size ? writers : tc_size;
    o.stripe_size = 16 << 10;
    o.write_size = 4 << 10;
    o.rewrites = 1;
    return o;
}

static void case_random(fwdio_runtime_t *rt, int nsteps, uint64_t seed, int writers,
                        uint64_t span, uint64_t max_piece)
{
    char path[4096];
    tc_path(path, sizeof path, "rewrites-random");
    fwdio_options_t o = rewrite_options(writers);
    fwdio_file_t *f = NULL;
    tc_phase("random: open");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    piece_t **plan = calloc((size_t)nsteps, sizeof *plan);
    size_t *np = calloc((size_t)nsteps, sizeof *np);
    for (int k = 0; k < nsteps; k++)
        np[k] = plan_step(seed, k, span, max_piece, &plan[k]);
    /* Bytes no later step touches: final once their step completes. */
    int *first_after = malloc(span * sizeof *first_after);
    image_t im = {span, malloc(span * sizeof(int)), 0};
    for (uint64_t b = 0; b < span; b++)
        im.last[b] = -1;
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + 99 + (uint64_t)tc_rank);
    for (int k = 0; k < nsteps; k++) {
        tc_phase("random: step %d", k);
        write_step(f, plan[k], np[k], seed, k, &mine, 0);
        TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
        image_apply(&im, plan[k], np[k], k);
        if (k % 4 != 3)
            continue;
        /* now and then the application waits for a step and looks at it */
        int upto = k - 1;
        TC_EXPECT(fwdio_step_wait(f, (uint64_t)upto), FWDIO_OK, "fwdio_step_wait");
        if (tc_rank != 0)
            continue;
        image_t at = {span, malloc(span * sizeof(int)), 0};
        unsigned char *stable = calloc(span, 1);
        for (uint64_t b = 0; b < span; b++)
            at.last[b] = -1, first_after[b] = -1;
        for (int j = 0; j <= upto; j++)
            image_apply(&at, plan[j], np[j], j);
        /* Steps after `upto` may be in the file in part: those ended here,
         * and the next one, which other ranks may write once step k is
         * complete (no later one: it needs this rank's next step end). */
        for (int j = k + 1 < nsteps ? k + 1 : k; j > upto; j--)
            for (size_t i = 0; i < np[j]; i++)
                for (uint64_t b = plan[j][i].off; b < plan[j][i].off + plan[j][i].len; b++)
                    first_after[b] = j;
        for (uint64_t b = 0; b < at.end; b++)
            stable[b] = first_after[b] < 0;
        uint64_t bad = image_check(path, &at, seed, stable);
        TC_CHECK(bad == UINT64_MAX, "random: after step %d, byte %llu is not its last step's",
                 upto, (unsigned long long)bad);
        free(stable);
        free(at.last);
    }
    tc_phase("random: close");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "random: fwdio_wait: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    if (tc_rank == 0) {
        struct stat sb;
        TC_CHECK(stat(path, &sb) == 0 && (uint64_t)sb.st_size == im.end,
                 "random: size %lld, want %llu", (long long)sb.st_size,
                 (unsigned long long)im.end);
        uint64_t bad = image_check(path, &im, seed, NULL);
        TC_CHECK(bad == UINT64_MAX, "random: byte %llu of the file is not its last step's",
                 (unsigned long long)bad);
    }
    for (int k = 0; k < nsteps; k++)
        free(plan[k]);
    free(plan);
    free(np);
    free(first_after);
    free(im.last);
}

/* Rank 0 writes bytes [0, 64) in steps 0 and 1, rank 1 too in step 1 when
 * `second_step`. Every rank sees `want` at the close. */
static void overlap_run(fwdio_runtime_t *rt, const char *name, int rewrites, int second_step,
                        int want)
{
    char path[4096];
    tc_path(path, sizeof path, name);
    fwdio_options_t o = rewrite_options(2);
    o.rewrites = rewrites;
    fwdio_file_t *f = NULL;
    tc_phase("%s", name);
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    uint8_t b[64];
    memset(b, tc_rank + 1, sizeof b);
    if (tc_rank == 0)
        TC_EXPECT(fwdio_write(f, b, sizeof b, 0), FWDIO_OK, "fwdio_write (step 0)");
    TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
    int rc = FWDIO_OK;
    if (tc_rank == 0 || (second_step && tc_rank == 1))
        rc = fwdio_write(f, b, sizeof b, 0);
    TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "%s: fwdio_write: %s", name,
             fwdio_strerror(rc));
    rc = fwdio_step_end(f);
    TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "%s: fwdio_step_end: %s", name,
             fwdio_strerror(rc));
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), want, name);
    int got = fwdio_wait(f);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, got), "%s: ranks differ", name);
    fwdio_file_free(f);
    if (want == FWDIO_OK && tc_rank == 0) {
        uint8_t back[64];
        FILE *fp = fopen(path, "rb");
        size_t n = fp ? fread(back, 1, sizeof back, fp) : 0;
        if (fp)
            fclose(fp);
        TC_CHECK(n == sizeof back && back[0] == 1 && back[63] == 1, "%s: bytes not rank 0's",
                 name);
    }
}

static void case_overlap(fwdio_runtime_t *rt)
{
    if (tc_size < 2)
        return;
    overlap_run(rt, "rewrites-same-step", 1, 1, FWDIO_EOVERLAP);
    overlap_run(rt, "rewrites-next-step", 1, 0, FWDIO_OK);
}

static void case_default(fwdio_runtime_t *rt)
{
    overlap_run(rt, "no-rewrites", 0, 0, FWDIO_EOVERLAP);
}

static void case_fault(uint64_t seed, int nsteps)
{
    /* one writer; its 3rd pwrite of this path fails */
    setenv("FWDIO_FAULT", "pwrite:eio:from=3:path=rewrites-fault", 1);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    char path[4096];
    tc_path(path, sizeof path, "rewrites-fault");
    fwdio_options_t o = rewrite_options(1);
    fwdio_file_t *f = NULL;
    tc_phase("fault");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank);
    for (int k = 0; k < nsteps; k++) {
        piece_t *p;
        size_t n = plan_step(seed, k, 256 << 10, 20000, &p);
        write_step(f, p, n, seed, k, &mine, 1);
        free(p);
        int rc = fwdio_step_end(f);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "fault: fwdio_step_end: %s",
                 fwdio_strerror(rc));
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_EWRITE, "fwdio_wait (fault)");
    int failed_from = -1;
    for (int k = 0; k < nsteps; k++) {
        int rc = fwdio_step_wait(f, (uint64_t)k);
        if (rc != FWDIO_OK && failed_from < 0)
            failed_from = k;
        if (failed_from >= 0)
            TC_CHECK(rc != FWDIO_OK, "fault: step %d OK after step %d failed", k, failed_from);
    }
    TC_CHECK(failed_from >= 0, "fault: no step failed");
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, failed_from), "fault: ranks disagree on the failed step");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize (fault)");
}

static void case_mpi_fault(fwdio_runtime_t *rt, uint64_t seed, int nsteps)
{
    char path[4096];
    tc_path(path, sizeof path, "rewrites-mpi-fault");
    fwdio_options_t o = rewrite_options(2);
    fwdio_file_t *f = NULL;
    tc_phase("mpi_fault");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    tc_rng_t mine;
    tc_rng_seed(&mine, seed + (uint64_t)tc_rank);
    for (int k = 0; k < nsteps; k++) {
        piece_t *p;
        size_t n = plan_step(seed, k, 256 << 10, 20000, &p);
        write_step(f, p, n, seed, k, &mine, 1);
        free(p);
        int rc = fwdio_step_end(f);
        TC_CHECK(rc == FWDIO_OK || rc == FWDIO_EFAILED, "mpi_fault: fwdio_step_end: %s",
                 fwdio_strerror(rc));
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_EMPI, "mpi_fault: fwdio_wait: %s (%s)", fwdio_strerror(rc),
             fwdio_file_error(f));
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc), "mpi_fault: ranks end with different statuses");
    int failed_from = nsteps;
    for (int k = nsteps - 1; k >= 0; k--)
        if (fwdio_step_wait(f, (uint64_t)k) != FWDIO_OK)
            failed_from = k;
    for (int k = failed_from; k < nsteps; k++)
        TC_CHECK(fwdio_step_wait(f, (uint64_t)k) != FWDIO_OK,
                 "mpi_fault: step %d OK after step %d failed", k, failed_from);
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, failed_from), "mpi_fault: ranks disagree on the steps");
    TC_CHECK(tc_sum(MPI_COMM_WORLD, mpi_faults_fired()) >= 1, "mpi_fault: the rule never fired");
    fwdio_file_free(f);
}

static void case_args(fwdio_runtime_t *rt)
{
    char path[4096];
    tc_path(path, sizeof path, "rewrites-args");
    fwdio_options_t o = rewrite_options(2);
    fwdio_file_t *f = NULL;
    tc_phase("args");
    TC_EXPECT(fwdio_open(rt, path, 1 << 20, &o, NULL, &f), FWDIO_EINVAL,
              "rewrites on a file with a size");
    if (tc_size < 2)
        return;
    o.rewrites = tc_rank == tc_size - 1 ? 0 : 7; /* any non-zero is on */
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "rewrites");
}

/* --- overlaps ---------------------------------------------------------------- */

enum { OV_SPAN = 96 << 10, OV_PIECES = 5, OV_STEPS = 4 };

/* Rank q's pieces of step k: OV_PIECES random ones over [0, OV_SPAN), which
 * may overlap each other and every other rank's. */
static void ov_pieces(uint64_t seed, int k, int q, piece_t *p)
{
    tc_rng_t rng;
    tc_rng_seed(&rng, seed * 7919u + (uint64_t)k * 104729u + (uint64_t)q * 31u + 1u);
    for (int i = 0; i < OV_PIECES; i++) {
        uint64_t len = 1 + tc_rng_below(&rng, i == 0 ? OV_SPAN / 2 : 5000);
        p[i] = (piece_t){tc_rng_below(&rng, OV_SPAN - len + 1), len, q};
    }
}

static uint8_t ov_byte(uint64_t seed, int k, int q, uint64_t b)
{
    return pattern_byte(seed + 1000u * (uint64_t)(k + 1) + (uint64_t)q, b);
}

/* Rank 0: each byte holds one of its last step's writers' bytes (zero if
 * none wrote it); the size is the highest byte written. */
static void ov_check(const char *path, uint64_t seed, int nsteps)
{
    if (tc_rank != 0)
        return;
    uint8_t *got = calloc(OV_SPAN, 1);
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(got, 1, OV_SPAN, fp) : 0;
    if (fp)
        fclose(fp);
    uint64_t end = 0;
    int bad = 0;
    piece_t p[OV_PIECES];
    for (uint64_t b = 0; b < OV_SPAN && !bad; b++) {
        int last = -1, one_of = 0;
        for (int k = nsteps - 1; k >= 0 && last < 0; k--)
            for (int q = 0; q < tc_size; q++) {
                ov_pieces(seed, k, q, p);
                for (int i = 0; i < OV_PIECES; i++)
                    if (b >= p[i].off && b < p[i].off + p[i].len) {
                        last = k;
                        one_of |= got[b] == ov_byte(seed, k, q, b);
                    }
            }
        if (last >= 0)
            end = b + 1;
        if (last < 0 ? got[b] != 0 : !one_of) {
            tc_note("overlaps: %s: byte %llu is %u, not a byte of step %d's writers", path,
                    (unsigned long long)b, got[b], last);
            bad = 1;
        }
    }
    TC_CHECK(!bad, "overlaps: %s holds a byte no rank wrote there", path);
    TC_CHECK(n == end, "overlaps: %s has %zu bytes, the writes end at %llu", path, n,
             (unsigned long long)end);
    free(got);
}

/* Step k's pieces of this rank, each from its own buffer. */
static void ov_write(fwdio_file_t *f, uint64_t seed, int k)
{
    piece_t p[OV_PIECES];
    ov_pieces(seed, k, tc_rank, p);
    for (int i = 0; i < OV_PIECES; i++) {
        uint8_t *b = malloc(p[i].len);
        for (uint64_t j = 0; j < p[i].len; j++)
            b[j] = ov_byte(seed, k, tc_rank, p[i].off + j);
        TC_EXPECT(fwdio_write(f, b, p[i].len, p[i].off), FWDIO_OK, "fwdio_write (overlaps)");
        free(b);
    }
}

static void case_overlaps(fwdio_runtime_t *rt, uint64_t seed)
{
    char path[4096];
    fwdio_options_t o = rewrite_options(2);
    o.overlaps = 1;
    fwdio_file_t *f = NULL;
    tc_phase("overlaps: stream");
    tc_path(path, sizeof path, "overlaps-stream");
    TC_EXPECT(fwdio_open(rt, path, FWDIO_SIZE_GROWS, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    for (int k = 0; k < OV_STEPS; k++) {
        ov_write(f, seed, k);
        TC_EXPECT(fwdio_step_end(f), FWDIO_OK, "fwdio_step_end");
    }
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "overlaps: stream: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    ov_check(path, seed, OV_STEPS);

    tc_phase("overlaps: file with a size");
    tc_path(path, sizeof path, "overlaps-sized");
    o.rewrites = 0;
    uint64_t end = 0;
    piece_t p[OV_PIECES];
    for (int q = 0; q < tc_size; q++) {
        ov_pieces(seed + 1, 0, q, p);
        for (int i = 0; i < OV_PIECES; i++)
            end = p[i].off + p[i].len > end ? p[i].off + p[i].len : end;
    }
    TC_EXPECT(fwdio_open(rt, path, end, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    ov_write(f, seed + 1, 0);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_OK, "overlaps: file with a size: %s", fwdio_file_error(f));
    fwdio_file_free(f);
    ov_check(path, seed + 1, 1);

    if (tc_size < 2)
        return;
    tc_phase("overlaps: ranks that disagree");
    tc_path(path, sizeof path, "overlaps-args");
    o.overlaps = tc_rank == 0 ? 0 : 3;
    tc_expect_disagreement(rt, path, FWDIO_SIZE_GROWS, &o, "overlaps");
}

int main(int argc, char **argv)
{
    unsigned timeout = 100;
    int nsteps = 16, writers = 2;
    uint64_t seed = 1, span = 300000, max_piece = 20000;
    int mpi_fault = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            nsteps = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint64_t)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--writers") && i + 1 < argc)
            writers = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--span") && i + 1 < argc)
            span = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--max-piece") && i + 1 < argc)
            max_piece = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--mpi-fault"))
            mpi_fault = 1;
        else {
            fprintf(stderr, "usage: %s [--steps N] [--seed S] [--writers W] [--span B] "
                            "[--max-piece B] [--mpi-fault]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (mpi_fault) {
        case_mpi_fault(rt, seed, nsteps);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        return tc_finish("test_rewrites --mpi-fault");
    }
    case_args(rt);
    case_random(rt, nsteps, seed, writers, span, max_piece);
    case_overlap(rt);
    case_default(rt);
    case_overlaps(rt, seed);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    case_fault(seed + 1, 6);
    return tc_finish("test_rewrites");
}
