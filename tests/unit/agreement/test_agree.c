/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The agreements' reduction (agreement/agree.h, agreement/open_check.h): every
 * rank packs what it saw as MPI_LONG_INT pairs, MPI reduces them with
 * MPI_MINLOC (done here as the MPI standard defines it, in every order of
 * the contributions, since MPI may combine them in any), and the unpacked
 * result is the lowest rank's error, whole, or the successes' largest
 * offset and other_value; the open check names the first field that
 * differs with the lowest ranks that passed its smallest and largest value.
 * No MPI launch.
 */
#include "agreement/agree.h"
#include "agreement/open_check.h"
#include "minloc.h"
#include "unit_check.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

enum { MAX_RANKS = 5, MAX_PAIRS = FWDIOI_OPEN_CHECK_PAIRS };

/* Reduce nranks contributions of n pairs in the order `order` into out. */
static void reduce(fwdioi_agree_pair_t pairs[][MAX_PAIRS], int nranks, int n, const int *order,
                   fwdioi_agree_pair_t *out)
{
    memcpy(out, pairs[order[0]], (size_t)n * sizeof *out);
    for (int i = 1; i < nranks; i++)
        minloc(pairs[order[i]], out, n);
}

static int same(const fwdioi_errinfo_t *a, const fwdioi_errinfo_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* CHECK that `got` is `want`, saying what came out otherwise. */
static void check_same(const char *what, const fwdioi_errinfo_t *got,
                       const fwdioi_errinfo_t *want)
{
    CHECK(same(got, want));
    if (!same(got, want))
        fprintf(stderr, "  %s: got status %lld rank %lld errno %lld offset %lld call %lld "
                        "other_rank %lld other_value %lld\n",
                what, (long long)got->status, (long long)got->rank, (long long)got->sys_errno,
                (long long)got->offset, (long long)got->call, (long long)got->other_rank,
                (long long)got->other_value);
}

/* Every order of the ranks' errinfos agrees on `want`. */
static void check_agreed(const fwdioi_errinfo_t *infos, int nranks, const fwdioi_errinfo_t *want)
{
    fwdioi_agree_pair_t pairs[MAX_RANKS][MAX_PAIRS];
    for (int r = 0; r < nranks; r++)
        fwdioi_errinfo_pack(&infos[r], r, pairs[r]);
    int order[MAX_RANKS], c[MAX_RANKS] = {0};
    for (int i = 0; i < nranks; i++)
        order[i] = i;
    /* Heap's algorithm: every permutation */
    for (int i = 0;;) {
        fwdioi_agree_pair_t out[MAX_PAIRS];
        fwdioi_errinfo_t got;
        reduce(pairs, nranks, FWDIOI_ERRINFO_PAIRS, order, out);
        fwdioi_errinfo_unpack(out, &got);
        check_same("agreement", &got, want);
        while (i < nranks && c[i] >= i) {
            c[i] = 0;
            i++;
        }
        if (i >= nranks)
            break;
        int j = i % 2 ? c[i] : 0, t = order[j];
        order[j] = order[i];
        order[i] = t;
        c[i]++;
        i = 0;
    }
}

static void test_successes(void)
{
    /* a read file's open: its size in offset, minus it in other_value */
    fwdioi_errinfo_t ok[4];
    int64_t sizes[4] = {4096, (int64_t)1 << 40, 0, 77};
    for (int r = 0; r < 4; r++) {
        ok[r] = FWDIOI_ERRINFO_OK;
        ok[r].offset = sizes[r];
        ok[r].other_value = -sizes[r];
    }
    fwdioi_errinfo_t want = FWDIOI_ERRINFO_OK;
    want.offset = (int64_t)1 << 40;
    want.other_value = 0; /* minus the smallest */
    check_agreed(ok, 4, &want);
    /* one rank alone */
    check_agreed(ok, 1, &ok[0]);
    fwdioi_errinfo_t plain[3] = {FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK};
    want = FWDIOI_ERRINFO_OK;
    check_agreed(plain, 3, &want);
}

static void test_errors(void)
{
    /* the lowest rank's error, every field whole, 64-bit values included */
    fwdioi_errinfo_t e[5] = {FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK,
                             FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK};
    e[0].offset = (int64_t)1 << 50; /* a success's offset counts for nothing */
    e[3] = (fwdioi_errinfo_t){FWDIO_EWRITE, 3, 28, ((int64_t)5 << 33) + 12345,
                              FWDIOI_REASON_BAD_STEP, 4, -((int64_t)9 << 35) - 1};
    e[1] = (fwdioi_errinfo_t){FWDIO_EMPI, 1, 15, INT64_MAX, FWDIOI_REASON_MPI + 3, -1,
                              INT64_MIN};
    check_agreed(e, 5, &e[1]);
    /* without rank 1's, rank 3's */
    e[1] = FWDIOI_ERRINFO_OK;
    check_agreed(e, 5, &e[3]);
    /* an error of nobody's rank (-1: ranks disagree on steps) comes first */
    e[4] = (fwdioi_errinfo_t){FWDIO_EINVAL, -1, 0, 0, FWDIOI_REASON_STEPS, -1, 0};
    check_agreed(e, 5, &e[4]);
    /* two ranks report an error of the same rank (one heard of it): one of
     * them whole, the lower contributor's, never fields of both */
    fwdioi_errinfo_t h[3] = {FWDIOI_ERRINFO_OK,
                             {FWDIO_EWRITE, 0, 5, 4096, 1, -1, 0},
                             {FWDIO_EMPI, 0, 1, 100, FWDIOI_REASON_MPI, 2, -3}};
    check_agreed(h, 3, &h[1]);
}

static void pack_check(fwdioi_agree_pair_t out[MAX_PAIRS], int rank, const int64_t *fields,
                       const fwdioi_errinfo_t *local)
{
    fwdioi_open_check_pack(out, rank, fields, local);
}

/* The open check of nranks ranks' fields, in order 0..n-1 and reversed. */
static void check_open(int64_t fields[][FWDIOI_OPEN_FIELDS], const fwdioi_errinfo_t *local,
                       int nranks, const fwdioi_errinfo_t *want)
{
    fwdioi_agree_pair_t pairs[MAX_RANKS][MAX_PAIRS];
    for (int r = 0; r < nranks; r++)
        pack_check(pairs[r], r, fields[r], &local[r]);
    int fwd[MAX_RANKS], back[MAX_RANKS];
    for (int i = 0; i < nranks; i++) {
        fwd[i] = i;
        back[i] = nranks - 1 - i;
    }
    const int *orders[2] = {fwd, back};
    for (int o = 0; o < 2; o++) {
        fwdioi_agree_pair_t out[MAX_PAIRS];
        fwdioi_errinfo_t got;
        reduce(pairs, nranks, FWDIOI_OPEN_CHECK_PAIRS, orders[o], out);
        fwdioi_open_check_result(out, &got);
        check_same("open check", &got, want);
    }
}

static void test_open_check(void)
{
    int64_t fields[4][FWDIOI_OPEN_FIELDS];
    fwdioi_errinfo_t local[4] = {FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK, FWDIOI_ERRINFO_OK,
                                 FWDIOI_ERRINFO_OK};
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++)
            fields[r][i] = i == FWDIOI_FIELD_PATH ? (int64_t)0xcbf29ce484222325ull : i * 1000;
    fwdioi_errinfo_t want = FWDIOI_ERRINFO_OK;
    check_open(fields, local, 4, &want);
    /* the size differs (and a hash, later): the size, with the lowest rank
     * that passed the smallest and the lowest that passed the largest */
    fields[2][FWDIOI_FIELD_SIZE] = INT64_MIN;
    fields[3][FWDIOI_FIELD_SIZE] = INT64_MIN;
    fields[1][FWDIOI_FIELD_SIZE] = INT64_MAX;
    fields[3][FWDIOI_FIELD_WRITER_RANKS] = -5;
    want = (fwdioi_errinfo_t){FWDIO_EINVAL, 2, 0, INT64_MIN,
                              FWDIOI_REASON_MISMATCH + FWDIOI_FIELD_SIZE, 1, INT64_MAX};
    check_open(fields, local, 4, &want);
    /* a hash with its top bit set differs first */
    fields[1][FWDIOI_FIELD_PATH] = 5;
    want = (fwdioi_errinfo_t){FWDIO_EINVAL, 0, 0, (int64_t)0xcbf29ce484222325ull,
                              FWDIOI_REASON_MISMATCH + FWDIOI_FIELD_PATH, 1, 5};
    check_open(fields, local, 4, &want);
    /* a rank's own refusal wins over any mismatch: the lowest rank's */
    local[3] = (fwdioi_errinfo_t){FWDIO_EINVAL, 3, 0, 0, FWDIOI_REASON_PATH_OPEN, -1, 0};
    local[2] = (fwdioi_errinfo_t){FWDIO_EOPEN, 2, 17, 0, 2, -1, 0};
    check_open(fields, local, 4, &local[2]);
    /* a refused fwdio_open's stand-in (zeros for its fields) on rank 1 */
    local[1] = (fwdioi_errinfo_t){FWDIO_ERANGE, 1, 0, 0, FWDIOI_REASON_REFUSED, -1, 0};
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++)
        fields[1][i] = 0;
    check_open(fields, local, 4, &local[1]);
    char text[256];
    fwdioi_errinfo_format(&local[1], "/x/y", NULL, text, sizeof text);
    CHECK(strstr(text, "fwdio_open of /x/y was refused at the call on rank 1") != NULL);
    CHECK(strstr(text, fwdio_strerror(FWDIO_ERANGE)) != NULL);
}

int main(void)
{
    test_successes();
    test_errors();
    test_open_check();
    return unit_result("test_agree");
}
