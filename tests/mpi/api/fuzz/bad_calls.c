/* SPDX-License-Identifier: BSD-3-Clause */
/* The calls that must be refused, and how a refusal is checked. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* got must be `want`, or `alt` when the file is one that fails anyway. */
void fuzz_check_rc(const ffile_t *m, const char *call, int got, int want_rc, int alt)
{
    if (got == want_rc || (alt != NO_ALT && got == alt && m && m->kind != KIND_GOOD))
        return;
    tc_fail("%s%s%s: got %d (%s), expected %d (%s)", m ? m->name : "", m ? ": " : "", call, got,
            fwdio_strerror(got), want_rc, fwdio_strerror(want_rc));
}

/* A refused call on a file must leave its write counters as they were. */
static void check_unchanged(const ffile_t *m, const char *call)
{
    fwdio_file_stats_t s;
    if (fwdio_file_stats(m->f, &s) != FWDIO_OK) {
        tc_fail("%s: fwdio_file_stats failed after refused %s", m->name, call);
        return;
    }
    TC_CHECK(s.bytes_written == m->accepted_bytes && s.write_calls == m->accepted_calls,
             "%s: after refused %s the file counts %" PRIu64 " bytes in %" PRIu64
             " calls, expected %" PRIu64 " in %" PRIu64,
             m->name, call, s.bytes_written, s.write_calls, m->accepted_bytes,
             m->accepted_calls);
}

void fuzz_refused(fuzz_t *z, ffile_t *m, const char *call, int got, int want_rc, int alt)
{
    z->n.calls++;
    z->n.refused++;
    fuzz_check_rc(m, call, got, want_rc, alt);
    if (m && m->f)
        check_unchanged(m, call);
}

/* A fwdio_set_commit that is wrong in exactly one way. */
static void bad_commit(fuzz_t *z, ffile_t *m)
{
    static uint8_t junk[64];
    tc_rng_t *r = &z->mine;
    uint64_t n = 1 + tc_rng_below(r, sizeof junk);
    uint64_t past = m->size - (n <= m->size ? n : m->size) + 1 + tc_rng_below(r, 1000);
    uint64_t fits = n <= m->size ? n : m->size; /* > 0 unless the file is empty */
    switch (tc_rng_below(r, 5)) {
    case 0:
        fuzz_refused(z, m, "fwdio_set_commit(NULL file)", fwdio_set_commit(NULL, junk, 1, 0),
                FWDIO_EINVAL, NO_ALT);
        break;
    case 1:
        fuzz_refused(z, m, "fwdio_set_commit(NULL buf)",
                fwdio_set_commit(m->f, NULL, (size_t)fits, 0), FWDIO_EINVAL, NO_ALT);
        break;
    case 2:
        fuzz_refused(z, m, "fwdio_set_commit(len 0)", fwdio_set_commit(m->f, junk, 0, 0), FWDIO_EINVAL,
                NO_ALT);
        break;
    case 3:
        fuzz_refused(z, m, "fwdio_set_commit(past the end)",
                fwdio_set_commit(m->f, junk, (size_t)n, past), FWDIO_ERANGE, NO_ALT);
        break;
    default:
        if (m->closed && fits > 0)
            fuzz_refused(z, m, "fwdio_set_commit after close",
                    fwdio_set_commit(m->f, junk, (size_t)fits, 0), FWDIO_ECLOSED, NO_ALT);
        else if (m->commit_set && fits > 0)
            fuzz_refused(z, m, "second fwdio_set_commit on this rank",
                    fwdio_set_commit(m->f, junk, (size_t)fits, 0), FWDIO_EINVAL, NO_ALT);
        break;
    }
}

void fuzz_bad_write(fuzz_t *z, ffile_t *m)
{
    static uint8_t junk[64];
    static lent_t stray;
    tc_rng_t *r = &z->mine;
    uint64_t n = 1 + tc_rng_below(r, sizeof junk);
    uint64_t past = m->size - (n <= m->size ? n : m->size) + 1 + tc_rng_below(r, 1000);
    switch (tc_rng_below(r, 10)) {
    case 0:
        fuzz_refused(z, m, "fwdio_write(NULL buf)", fwdio_write(m->f, NULL, (size_t)n, 0),
                FWDIO_EINVAL, NO_ALT);
        break;
    case 1:
        fuzz_refused(z, m, "fwdio_try_write(NULL buf)", fwdio_try_write(m->f, NULL, (size_t)n, 0),
                FWDIO_EINVAL, NO_ALT);
        break;
    case 2:
        fuzz_refused(z, m, "fwdio_write_lent(NULL done)",
                fwdio_write_lent(m->f, junk, (size_t)n, 0, NULL, NULL), FWDIO_EINVAL, NO_ALT);
        break;
    case 3:
        fuzz_refused(z, m, "fwdio_write(past the end)", fwdio_write(m->f, junk, (size_t)n, past),
                FWDIO_ERANGE, NO_ALT);
        break;
    case 4: /* if it were accepted, its callback would find this record */
        stray.buf = junk;
        stray.len = sizeof junk;
        fuzz_refused(z, m, "fwdio_write_lent(past the end)",
                fwdio_write_lent(m->f, junk, (size_t)n, past, fuzz_on_lent_done, &stray), FWDIO_ERANGE,
                NO_ALT);
        break;
    case 5:
        fuzz_refused(z, m, "fwdio_try_write(offset + len overflows)",
                fwdio_try_write(m->f, junk, (size_t)n, UINT64_MAX - tc_rng_below(r, n)),
                FWDIO_ERANGE, NO_ALT);
        break;
    case 6:
        if (m->closed) {
            uint64_t len = n <= m->size ? n : m->size;
            fuzz_refused(z, m, "fwdio_write after close",
                    fwdio_write(m->f, junk, (size_t)len, m->size - len), FWDIO_ECLOSED,
                    FWDIO_EFAILED);
        } else {
            fuzz_refused(z, m, "fwdio_wait before close", fwdio_wait(m->f), FWDIO_ENOTCLOSED, NO_ALT);
            int done = -1;
            z->n.calls++;
            fuzz_check_rc(m, "fwdio_test before close", fwdio_test(m->f, &done), FWDIO_OK, NO_ALT);
            TC_CHECK(done == 0, "%s: fwdio_test before this rank closed it says done=%d", m->name,
                     done);
        }
        break;
    case 7:
        if (!m->closed && m->size > z->staging_budget) {
            uint8_t *big = calloc(1, (size_t)z->staging_budget + 1);
            fuzz_refused(z, m, "fwdio_try_write(more than the staging budget)",
                    fwdio_try_write(m->f, big, (size_t)z->staging_budget + 1, 0), FWDIO_ETOOBIG,
                    FWDIO_EFAILED);
            free(big);
        } else if (m->closed) {
            fuzz_refused(z, m, "second fwdio_close", fwdio_close(m->f), FWDIO_ECLOSED, NO_ALT);
        }
        break;
    case 8:
        bad_commit(z, m);
        break;
    default: {
        int done = 0;
        fwdio_error_info_t info;
        fwdio_file_stats_t st;
        fuzz_refused(z, m, "fwdio_test(done NULL)", fwdio_test(m->f, NULL), FWDIO_EINVAL, NO_ALT);
        fuzz_refused(z, m, "fwdio_file_writers(max -1)", fwdio_file_writers(m->f, NULL, -1),
                FWDIO_EINVAL, NO_ALT);
        fuzz_refused(z, m, "fwdio_file_writer_bytes(max -1)", fwdio_file_writer_bytes(m->f, NULL, -1),
                FWDIO_EINVAL, NO_ALT);
        fuzz_refused(z, m, "fwdio_file_stats(NULL)", fwdio_file_stats(m->f, NULL), FWDIO_EINVAL,
                NO_ALT);
        fuzz_refused(z, m, "fwdio_file_error_info(NULL)", fwdio_file_error_info(m->f, NULL),
                FWDIO_EINVAL, NO_ALT);
        fuzz_refused(z, m, "fwdio_test(NULL file)", fwdio_test(NULL, &done), FWDIO_EINVAL, NO_ALT);
        fuzz_refused(z, m, "fwdio_file_stats(NULL file)", fwdio_file_stats(NULL, &st), FWDIO_EINVAL,
                NO_ALT);
        fuzz_refused(z, m, "fwdio_file_error_info(NULL file)", fwdio_file_error_info(NULL, &info),
                FWDIO_EINVAL, NO_ALT);
        break;
    }
    }
}

/* An fwdio_open the documentation says is refused: EINVAL, no handle. Each
 * takes its place in the open order (fwdio.h, "Refusals"), so every rank
 * calls this at the same point, each with a bad call of its own. */
void fuzz_bad_open(fuzz_t *z)
{
    tc_rng_t *r = &z->mine;
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.write_size = 8 << 10;
    o.stripe_size = 32 << 10;
    int list[3] = {0, 0, tc_size};
    const char *what;
    char path[4096];
    tc_path(path, sizeof path, "refused.dat");
    const char *p = path;
    fwdio_file_t *sentinel = (fwdio_file_t *)&o, *f = sentinel;
    switch (tc_rng_below(r, 11)) {
    case 0: what = "stripe not a multiple of write_size"; o.stripe_size = 12 << 10; break;
    case 1: what = "write_size over 2 GiB"; o.write_size = o.stripe_size = (3ull << 30); break;
    case 2: what = "layout 3"; o.layout = (fwdio_layout_t)(3 + tc_rng_below(r, 100)); break;
    case 3: what = "placement 3"; o.placement = (fwdio_placement_t)3; break;
    case 4: what = "writers -1"; o.writers = -1 - (int)tc_rng_below(r, 10); break;
    case 5: what = "negative stride"; o.writer_stride = -2; break;
    case 6: what = "negative targets"; o.layout = FWDIO_LAYOUT_TARGETS; o.targets = -3; break;
    case 7: what = "first_writer = P"; o.first_writer = tc_size; break;
    case 8:
        what = "writer list: rank P";
        o.writer_list = &list[2];
        o.writer_list_len = 1;
        break;
    case 9:
        what = "writer list: rank twice";
        o.writer_list = list;
        o.writer_list_len = 2;
        break;
    default: what = "NULL path"; p = tc_rng_below(r, 2) ? NULL : ""; break;
    }
    char call[128];
    snprintf(call, sizeof call, "fwdio_open(%s)", what);
    fuzz_refused(z, NULL, call, fwdio_open(z->rt, p, 1000, &o, NULL, &f), FWDIO_EINVAL, NO_ALT);
    TC_CHECK(f == sentinel, "refused %s handed out a handle", call);
    fuzz_refused(z, NULL, "fwdio_open(file NULL)", fwdio_open(z->rt, path, 10, NULL, NULL, NULL),
            FWDIO_EINVAL, NO_ALT);
}

/* A configuration fwdio_init must refuse (checked before any collective). */
static void bad_init(fuzz_t *z)
{
    fwdio_config_t c;
    memset(&c, 0, sizeof c);
    switch (tc_rng_below(&z->mine, 4)) {
    case 0: c.callback_mode = (fwdio_callback_mode_t)2; break;
    case 1: c.callback_mode = (fwdio_callback_mode_t)-1; break;
    case 2: c.max_message_size = 1 + (size_t)tc_rng_below(&z->mine, 4095); break;
    default: c.max_message_size = ((size_t)1 << 30) + 1; break;
    }
    fwdio_runtime_t *sentinel = (fwdio_runtime_t *)&c, *rt = sentinel;
    fuzz_refused(z, NULL, "fwdio_init(invalid config)", fwdio_init(MPI_COMM_WORLD, &c, &rt),
            FWDIO_EINVAL, NO_ALT);
    TC_CHECK(rt == sentinel, "a refused fwdio_init handed out a runtime");
}

void fuzz_junk_calls(fuzz_t *z)
{
    int code = (int)tc_rng_next(&z->mine);
    int codes[] = {code, INT_MIN, INT_MAX, -18, 1, code % 40};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *s = fwdio_strerror(codes[i]);
        TC_CHECK(s && s[0], "fwdio_strerror(%d) is NULL or empty", codes[i]);
    }
    fwdio_runtime_stats_t rs;
    int done = 0;
    fuzz_refused(z, NULL, "fwdio_poll(NULL)", fwdio_poll(NULL), FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_runtime_stats(NULL)", fwdio_runtime_stats(NULL, &rs), FWDIO_EINVAL,
            NO_ALT);
    fuzz_refused(z, NULL, "fwdio_runtime_stats(rt, NULL)", fwdio_runtime_stats(z->rt, NULL),
            FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_close(NULL)", fwdio_close(NULL), FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_wait(NULL)", fwdio_wait(NULL), FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_test(NULL)", fwdio_test(NULL, &done), FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_write(NULL file)", fwdio_write(NULL, &done, 1, 0), FWDIO_EINVAL,
            NO_ALT);
    fuzz_refused(z, NULL, "fwdio_finalize(NULL)", fwdio_finalize(NULL), FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_plan_describe(out NULL)",
            fwdio_plan_describe(z->rt, 100, NULL, 0, 0, NULL, 0, NULL), FWDIO_EINVAL, NO_ALT);
    fuzz_refused(z, NULL, "fwdio_plan_describe(nranks -1)",
            fwdio_plan_describe(NULL, 100, NULL, -1, 0, NULL, 0, stderr), FWDIO_EINVAL, NO_ALT);
    fwdio_file_free(NULL);
    fwdio_options_init(NULL);
    TC_CHECK(fwdio_file_error(NULL) != NULL, "fwdio_file_error(NULL) is NULL");
    if (want(z, 2)) { /* without a runtime: no place in any open order is taken */
        fwdio_file_t *sentinel = (fwdio_file_t *)&rs, *f = sentinel;
        fuzz_refused(z, NULL, "fwdio_open(NULL runtime)",
                fwdio_open(NULL, "refused.dat", 1000, NULL, NULL, &f), FWDIO_EINVAL, NO_ALT);
        TC_CHECK(f == sentinel, "fwdio_open(NULL runtime) handed out a handle");
    } else {
        bad_init(z);
    }
}

/* The ready callback tries the calls a callback may not make (fwdio.h,
 * fwdio_callback_mode_t): each must be refused with FWDIO_ECONTEXT. */
void fuzz_calls_from_callback(tc_cbstate_t *st, fwdio_file_t *f, int status)
{
    (void)status;
    fuzz_t *z = st->user;
    int rc = fwdio_wait(f);
    TC_CHECK(rc == FWDIO_ECONTEXT, "fwdio_wait in a callback returned %d (%s)", rc,
             fwdio_strerror(rc));
    rc = fwdio_finalize(z->rt);
    TC_CHECK(rc == FWDIO_ECONTEXT, "fwdio_finalize in a callback returned %d (%s)", rc,
             fwdio_strerror(rc));
    if (z->mode == FWDIO_CALLBACKS_ON_PROGRESS) {
        fwdio_file_t *g = NULL;
        rc = fwdio_poll(z->rt);
        TC_CHECK(rc == FWDIO_ECONTEXT, "fwdio_poll in a progress callback returned %d (%s)", rc,
                 fwdio_strerror(rc));
        rc = fwdio_open(z->rt, "never-opened.dat", 1, NULL, NULL, &g);
        TC_CHECK(rc == FWDIO_ECONTEXT && g == NULL,
                 "fwdio_open in a progress callback returned %d (%s)", rc, fwdio_strerror(rc));
    }
    atomic_fetch_add(&z->context_checks, 1);
}
