/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_contract cases: fwdio_open refused on some ranks only (refused_code,
 * refused_env). The refusing rank gets the error at the call; every other
 * rank's file fails with that same status, naming the refusing rank, instead
 * of waiting for it (fwdio.h, "Refusals"), and nothing touches storage.
 * Afterwards a file every rank opens is written whole (the refused opens
 * kept their places in the open order), and fwdio_finalize returns.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract.h"
#include "fwdio.h"
#include "test_common.h"

/* Ways to be refused at the call. */
static void bad_stripe(fwdio_options_t *o, uint64_t *size)
{
    (void)size;
    o->stripe_size = STRIPE + UNIT / 4; /* not a multiple of write_size */
}
static void too_large(fwdio_options_t *o, uint64_t *size)
{
    (void)o;
    *size = (uint64_t)INT64_MAX + 1; /* larger than a file can be: FWDIO_ERANGE */
}
static void no_writers(fwdio_options_t *o, uint64_t *size)
{
    (void)size;
    o->writers = -1;
}
static void bad_env_layout(fwdio_options_t *o, uint64_t *size)
{
    (void)o;
    (void)size;
    setenv("FWDIO_LAYOUT", "diagonal", 1); /* options() leaves layout to it */
}

/*
 * One file (over an old file, which must stay as it is) opened on every rank,
 * refused at the call with `want` on rank `who` (every rank when -1), whose
 * options or size `refuse` spoils. The others write their share, close and
 * wait: `want`, with the refusing rank named.
 */
static void refused_file(fwdio_runtime_t *rt, const char *name, int who, int want,
                         void (*refuse)(fwdio_options_t *, uint64_t *))
{
    char path[4096];
    tc_path(path, sizeof path, name);
    old_file(path, 3 * STRIPE + 17, 99);
    fwdio_options_t o;
    options(&o);
    uint64_t size = SIZE;
    const int mine = who < 0 || tc_rank == who;
    if (mine)
        refuse(&o, &size);
    fwdio_file_t *f = NULL;
    tc_phase("open %s", name);
    int status = fwdio_open(rt, path, size, &o, NULL, &f);
    unsetenv("FWDIO_LAYOUT");
    if (mine) {
        TC_EXPECT(status, want, "the refusing rank's fwdio_open");
        TC_CHECK(f == NULL, "%s: a refused fwdio_open handed out a handle", name);
    } else if (status != FWDIO_OK) {
        tc_fail("%s: fwdio_open returned %d (%s)", name, status, fwdio_strerror(status));
    } else {
        g_writes_may_fail = 1; /* refused once the failed check is known */
        write_share(f, SIZE, 1);
        g_writes_may_fail = 0;
        TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
        tc_phase("wait %s", name);
        status = fwdio_wait(f);
        TC_EXPECT(status, want, name);
        fwdio_error_info_t info;
        TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
        TC_CHECK(info.status == want && info.rank == who,
                 "%s: error info says status %d rank %d, not %d (%s) rank %d", name, info.status,
                 info.rank, want, fwdio_strerror(want), who);
        char named[64];
        snprintf(named, sizeof named, "refused at the call on rank %d", who);
        const char *text = fwdio_file_error(f);
        TC_CHECK(strstr(text, named) != NULL, "%s: error text \"%s\" does not say \"%s\"", name,
                 text, named);
        if (tc_rank == 0)
            tc_note("%s: %s", name, text);
        fwdio_file_free(f);
    }
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, status), "%s: ranks end with different statuses",
             name);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, 3 * STRIPE + 17, 99) == 0,
             "%s: the old file was touched", name);
}

/* A file every rank opens after the refusals: written whole and verified
 * (the refused opens kept their places, so the ranks' files still pair). */
static void file_after(fwdio_runtime_t *rt, const char *name, uint64_t seed)
{
    char path[4096];
    tc_path(path, sizeof path, name);
    fwdio_options_t o;
    options(&o);
    fwdio_file_t *f = NULL;
    tc_phase("open %s", name);
    TC_EXPECT(fwdio_open(rt, path, SIZE, &o, NULL, &f), FWDIO_OK, "fwdio_open after");
    if (!f)
        return;
    write_share(f, SIZE, seed);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close after");
    tc_phase("wait %s", name);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, name);
    fwdio_file_free(f);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, SIZE, seed) == 0, "%s: wrong bytes", name);
}

void case_refused_code(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    /* options set in code on the last rank only */
    refused_file(rt, "refused_stripe", tc_size - 1, FWDIO_EINVAL, bad_stripe);
    file_after(rt, "after_stripe", 2);
    /* a size no file can have on rank 0 only: the others fail with ERANGE */
    refused_file(rt, "refused_size", 0, FWDIO_ERANGE, too_large);
    /* refused on every rank alike, then twice on one rank in a row */
    refused_file(rt, "refused_everywhere", -1, FWDIO_EINVAL, no_writers);
    refused_file(rt, "refused_first", tc_size > 1 ? 1 : 0, FWDIO_EINVAL, bad_stripe);
    refused_file(rt, "refused_second", tc_size > 1 ? 1 : 0, FWDIO_EINVAL, no_writers);
    file_after(rt, "after_refusals", 3);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

void case_refused_env(void)
{
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    /* FWDIO_LAYOUT set to a bad value on the last rank only, after fwdio_init */
    refused_file(rt, "refused_env", tc_size - 1, FWDIO_EINVAL, bad_env_layout);
    file_after(rt, "after_env", 4);
    tc_phase("finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}
