/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The outcome module (agreement/outcome.c) against the fake runtime seam: the
 * first error a file sees is the one it keeps, with its detail; a later
 * abort, or one after the file is done, does not reach the session; another
 * rank's abort is heard once; a failure is published once, and the error text is
 * the first failure's; every report of a role reaches the session's table.
 * The session is the test's table: it records what it is told. (An MPI
 * failure's report, through the session's own table, is test_session's:
 * it fakes MPI_Error_class, which refuses before MPI_Init.)
 */
#include "fake_file.h"
#include "fake_runtime.h"
#include "unit_check.h"

#include "agreement/outcome.h"
#include "state.h"

#include <stdlib.h>
#include <string.h>

typedef struct world {
    fwdio_config_t cfg;
    struct fwdio_runtime o;
    fwdio_file_t f;
    int writer_ranks[4];
    /* what reached the session's table */
    int aborted, notified, heard;
    int finish, opened, data_done, step_data_done, read_check_done, try_close;
    fwdioi_errinfo_t aborted_why;
    fwdioi_step_outcome_t heard_steps;
} world_t;

static world_t *W;

static void t_aborted(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    CHECK(f == &W->f && f->s.outcome.aborted); /* recorded before the session is told */
    W->aborted++;
    W->notified += notify;
    W->aborted_why = *why;
}

static int t_defer_abort(fwdio_file_t *f, int call, const fwdioi_errinfo_t *why)
{
    (void)f;
    (void)call;
    (void)why;
    CHECK(!"no MPI failure is reported here");
    return 0;
}

static void t_abort_heard(fwdio_file_t *f, const fwdioi_step_outcome_t *steps)
{
    CHECK(!f->s.outcome.aborted); /* told before the abort is recorded */
    W->heard++;
    W->heard_steps = *steps;
}

static void t_finish(fwdio_file_t *f) { (void)f; W->finish++; }
static void t_opened(fwdio_file_t *f) { (void)f; W->opened++; }
static void t_data_done(fwdio_file_t *f) { (void)f; W->data_done++; }
static void t_step_data_done(fwdio_file_t *f) { (void)f; W->step_data_done++; }
static void t_read_check_done(fwdio_file_t *f) { (void)f; W->read_check_done++; }
static void t_try_close(fwdio_file_t *f) { (void)f; W->try_close++; }

static const fwdioi_session_ops_t test_ops = {
    .aborted = t_aborted,
    .defer_abort = t_defer_abort,
    .abort_heard = t_abort_heard,
    .finish_if_aborted = t_finish,
    .opened = t_opened,
    .data_done = t_data_done,
    .step_data_done = t_step_data_done,
    .read_check_done = t_read_check_done,
    .try_close = t_try_close,
};

static void world_init(world_t *w, int rank)
{
    memset(w, 0, sizeof *w);
    W = w;
    w->o.engine = fake_rt_create(rank, 4, &w->cfg);
    w->o.session_ops = &test_ops;
    LIST_INIT(&w->o.active);
    fake_file_shape_t shape = {1 << 20, 1 << 16, 1 << 16, 4, 2, rank, FWDIO_LAYOUT_CYCLIC};
    fake_file_init(&w->f, &w->o, "unit-outcome", &shape, w->writer_ranks);
    w->f.s.phase = FWDIOI_PHASE_OPEN;
}

static void world_free(world_t *w)
{
    free(w->f.s.expected_bytes);
    fwdioi_u64map_free(&w->o.active_by_seq);
    fake_rt_destroy(w->o.engine);
    W = NULL;
}

static int same(const fwdioi_errinfo_t *a, const fwdioi_errinfo_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static fwdioi_errinfo_t error(int status, int rank, int64_t offset)
{
    fwdioi_errinfo_t e = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&e, status, rank, 5, (uint64_t)offset);
    return e;
}

/* The first abort is kept whole (abort_info, and local_error when none came
 * before); later ones reach neither the file nor the session. */
static void test_first_error_wins(void)
{
    world_t w;
    world_init(&w, 1);
    fwdio_file_t *f = &w.f;
    fwdioi_errinfo_t first = error(FWDIO_EWRITE, 1, 4096), later = error(FWDIO_EMPI, 3, 0);
    fwdioi_outcome_abort(f, &first, 1);
    CHECK(fwdioi_file_aborted(f) && w.aborted == 1 && w.notified == 1);
    CHECK(same(&w.aborted_why, &first) && same(&f->s.outcome.abort_info, &first));
    CHECK(same(&f->s.outcome.local_error, &first));
    fwdioi_outcome_abort(f, &later, 0);
    fwdioi_outcome_nomem(f, 99);
    CHECK(w.aborted == 1 && same(&f->s.outcome.abort_info, &first) && same(&f->s.outcome.local_error, &first));
    world_free(&w);
}

/* An error this rank saw before the abort stays its local error; the abort's
 * own detail is abort_info. */
static void test_local_error_kept(void)
{
    world_t w;
    world_init(&w, 0);
    fwdio_file_t *f = &w.f;
    fwdioi_errinfo_t before = error(FWDIO_ESYNC, 0, 12), why = error(FWDIO_EMPI, 2, 0);
    f->s.outcome.local_error = before;
    fwdioi_outcome_abort(f, &why, 0);
    CHECK(w.aborted == 1 && w.notified == 0);
    CHECK(same(&f->s.outcome.local_error, &before) && same(&f->s.outcome.abort_info, &why));
    world_free(&w);
}

/* A file whose session is over keeps its outcome. */
static void test_done_file_ignores(void)
{
    world_t w;
    world_init(&w, 0);
    fwdio_file_t *f = &w.f;
    f->s.phase = FWDIOI_PHASE_DONE;
    fwdioi_errinfo_t why = error(FWDIO_EMPI, 0, 0);
    fwdioi_outcome_abort(f, &why, 1);
    CHECK(!fwdioi_file_aborted(f) && w.aborted == 0);
    CHECK(same(&f->s.outcome.abort_info, &FWDIOI_ERRINFO_OK) && f->s.outcome.local_error.status == FWDIO_OK);
    world_free(&w);
}

/* No memory: this rank's ENOMEM at the offset, told to the others. */
static void test_nomem(void)
{
    world_t w;
    world_init(&w, 2);
    fwdio_file_t *f = &w.f;
    fwdioi_outcome_nomem(f, 1234);
    CHECK(w.aborted == 1 && w.notified == 1);
    CHECK(f->s.outcome.abort_info.status == FWDIO_ENOMEM && f->s.outcome.abort_info.rank == 2 &&
          f->s.outcome.abort_info.offset == 1234);
    world_free(&w);
}

/* Another rank's abort: its steps' outcome reaches the session once (the
 * first heard counts), and the abort is not told on. */
static void test_abort_heard(void)
{
    world_t w;
    world_init(&w, 0);
    fwdio_file_t *f = &w.f;
    fwdioi_errinfo_t why = error(FWDIO_EMPI, 1, 0), again = error(FWDIO_EWRITE, 2, 0);
    fwdioi_step_outcome_t steps = {3, 2, FWDIOI_ERRINFO_OK};
    fwdioi_step_outcome_t other = {9, 9, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &why, &steps);
    CHECK(w.heard == 1 && w.heard_steps.complete == 3 && w.heard_steps.ok == 2);
    CHECK(w.aborted == 1 && w.notified == 0 && same(&f->s.outcome.abort_info, &why));
    fwdioi_outcome_abort_heard(f, &again, &other);
    CHECK(w.heard == 1 && w.aborted == 1 && same(&f->s.outcome.abort_info, &why));
    world_free(&w);
}

/* A failure is published once: writes refused, the first failure's text;
 * a success publishes nothing. */
static void test_publish_once(void)
{
    world_t w;
    world_init(&w, 1);
    fwdio_file_t *f = &w.f;
    fwdioi_outcome_publish_error(f, &FWDIOI_ERRINFO_OK);
    CHECK(!f->failed_known && f->error_text[0] == '\0');
    fwdioi_errinfo_t first = error(FWDIO_EWRITE, 1, 4096), later = error(FWDIO_ESYNC, 0, 0);
    fwdioi_outcome_publish_error(f, &first);
    CHECK(f->failed_known && same(&f->known_error, &first) && f->error_text[0] != '\0');
    CHECK(strstr(f->error_text, "unit-outcome") != NULL);
    char text[sizeof f->error_text];
    memcpy(text, f->error_text, sizeof text);
    fwdioi_outcome_publish_error(f, &later);
    CHECK(same(&f->known_error, &first) && !memcmp(text, f->error_text, sizeof text));
    world_free(&w);
}

/* Each report of a role reaches the session's table, once. */
static void test_reports_reach_session(void)
{
    world_t w;
    world_init(&w, 0);
    fwdio_file_t *f = &w.f;
    fwdioi_outcome_opened(f);
    fwdioi_outcome_data_done(f);
    fwdioi_outcome_step_data_done(f);
    fwdioi_outcome_read_check_done(f);
    fwdioi_outcome_try_close(f);
    fwdioi_outcome_finish_if_aborted(f);
    CHECK(w.opened == 1 && w.data_done == 1 && w.step_data_done == 1);
    CHECK(w.read_check_done == 1 && w.try_close == 1 && w.finish == 1 && w.aborted == 0);
    world_free(&w);
}

/* The phase queries the roles read. */
static void test_phase_queries(void)
{
    world_t w;
    world_init(&w, 0);
    fwdio_file_t *f = &w.f;
    f->s.phase = FWDIOI_PHASE_OPENING;
    CHECK(fwdioi_file_before_open(f) && !fwdioi_file_open_ok(f) && !fwdioi_file_open_failed(f));
    CHECK(!fwdioi_file_closing(f) && !fwdioi_file_in_open_phase(f));
    f->s.phase = FWDIOI_PHASE_OPEN;
    CHECK(!fwdioi_file_before_open(f) && fwdioi_file_open_ok(f) && fwdioi_file_in_open_phase(f));
    f->s.outcome.open_agreed = error(FWDIO_EOPEN, 1, 0);
    CHECK(!fwdioi_file_open_ok(f) && fwdioi_file_open_failed(f));
    f->s.outcome.open_agreed = FWDIOI_ERRINFO_OK;
    f->s.phase = FWDIOI_PHASE_CLOSING;
    CHECK(fwdioi_file_closing(f) && fwdioi_file_open_ok(f) && !fwdioi_file_in_open_phase(f));
    f->s.phase = FWDIOI_PHASE_SYNCING;
    CHECK(fwdioi_file_closing(f));
    world_free(&w);
}

/* The file a report names by sequence number: the active one, or none. */
static void test_active_file(void)
{
    world_t w;
    world_init(&w, 0);
    w.f.seq = 41;
    CHECK(fwdioi_u64map_put(&w.o.active_by_seq, 41, &w.f) == 0);
    CHECK(fwdioi_outcome_active_file(&w.o, 41) == &w.f);
    CHECK(fwdioi_outcome_active_file(&w.o, 42) == NULL);
    world_free(&w);
}

int main(void)
{
    test_first_error_wins();
    test_local_error_kept();
    test_done_file_ignores();
    test_nomem();
    test_abort_heard();
    test_publish_once();
    test_reports_reach_session();
    test_phase_queries();
    test_active_file();
    return unit_result("test_outcome");
}

/* The node-local tier (local/local_life.h): this file has none. */
const char *fwdioi_local_error_path(const fwdio_file_t *f, const fwdioi_errinfo_t *e, char *buf,
                                    size_t cap)
{
    (void)f;
    (void)e;
    (void)buf;
    (void)cap;
    return NULL;
}
