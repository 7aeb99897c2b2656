/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's session (session/session.c) through its phases, against the fake
 * runtime seam and fake communicator calls (fake/): rank 1 of 2, a writer.
 * The test plays rank 0 in every agreement (it writes what MPI would reduce
 * of both ranks' contributions, then completes the request) and the writer
 * role through the role table (its open, its data done). Covered: the
 * phases in order (duplication, check, open, close, final agreement); a
 * close asked for before the file is open; a rank whose check disagrees;
 * a file fwdio_open refused here (its stand-in) or on the other rank;
 * a rank at a step where this one closed (the close's tags differ);
 * an MPI call failing at each agreement, refused at its start or failing
 * on completion; a failed duplication, which breaks the runtime for later
 * files; another rank's abort heard in the middle of a phase; and what
 * comes after the end (a late abort, a file no longer found by sequence
 * number, the communicator kept for late data). The modules around the
 * session (abort messages, steps, sender, requester, node-shared path,
 * node-local tier) are faked below, as a file without a stream, without the
 * area and without the tier sees them. No MPI launch.
 */
#include "fake_comm.h"
#include "fake_file.h"
#include "fake_runtime.h"
#include "minloc.h"
#include "unit_check.h"

#include "local/local_life.h"
#include "local/local_restart.h"
#include "local/local_tier.h"
#include "node/shared_path.h"
#include "read/requester.h"
#include "agreement/abort.h"
#include "agreement/agree.h"
#include "session/file_life.h"
#include "agreement/open_check.h"
#include "session/role.h"
#include "session/session.h"
#include "session/watchdog.h"
#include "state.h"
#include "stream/steps.h"
#include "write/combine.h"
#include "write/sender.h"

#include <stdlib.h>
#include <string.h>

enum { NRANKS = 2, NWRITERS = 2, ME = 1, OTHER = 0, NSUMS = NWRITERS + FWDIOI_CLOSE_EXTRA };

/* What the modules around the session were told, in order where it matters. */
typedef struct world {
    fwdio_config_t cfg;
    struct fwdio_runtime o;
    fwdio_file_t f, g; /* g: a second file, opened after f */
    int writer_ranks[NWRITERS], g_writer_ranks[NWRITERS];
    char events[64]; /* role and callback events of f, one letter each */
    int nevents;
    int ready, ready_status, complete, complete_status;
    int g_complete, g_complete_status;
    int announced, zombies, kept_zombies, heard;
    int tags_differ; /* another rank agreed on a step where this one closed */
    uint64_t tag_set; /* the tag this rank's close put in its sums */
    fwdioi_errinfo_t announced_why;
    fwdioi_step_outcome_t heard_steps;
} world_t;

static world_t *W;

static void event(char c)
{
    if (W->nevents < (int)sizeof W->events - 1)
        W->events[W->nevents++] = c;
}

/* ---- the writer role, played by the test ---- */

static void role_open(fwdio_file_t *f) { (void)f; event('o'); }
static int role_may_receive(const fwdio_file_t *f) { (void)f; return 0; }
static int role_probe(fwdio_file_t *f) { (void)f; return 0; }
static void role_close_agreed(fwdio_file_t *f) { (void)f; event('c'); }
static int role_done(fwdio_file_t *f) { (void)f; return 1; }
static void role_close_aborted(fwdio_file_t *f) { (void)f; event('x'); }
static void role_drop_deferred(fwdio_file_t *f) { (void)f; event('d'); }
static void role_end(fwdio_file_t *f) { (void)f; event('e'); }

static const fwdioi_role_ops_t test_role = {
    .open = role_open,
    .may_receive = role_may_receive,
    .probe = role_probe,
    .close_agreed = role_close_agreed,
    .done = role_done,
    .close_aborted = role_close_aborted,
    .drop_deferred = role_drop_deferred,
    .end = role_end,
};

/* ---- the application's callbacks ---- */

static void on_ready(fwdio_file_t *f, int status, void *user)
{
    world_t *w = user;
    if (f == &w->g)
        return;
    event('R');
    w->ready++;
    w->ready_status = status;
}

static void on_complete(fwdio_file_t *f, int status, void *user)
{
    world_t *w = user;
    if (f == &w->g) {
        w->g_complete++;
        w->g_complete_status = status;
        return;
    }
    event('C');
    w->complete++;
    w->complete_status = status;
}

/* ---- set-up ---- */

static void file_init(world_t *w, fwdio_file_t *f, char *path, int *writer_ranks, uint64_t seq)
{
    fake_file_shape_t shape = {1 << 20, 1 << 16, 1 << 16, NRANKS, NWRITERS, ME,
                               FWDIO_LAYOUT_CYCLIC};
    fake_file_init(f, &w->o, path, &shape, writer_ranks);
    LIST_REMOVE(f, s.links.active); /* the session's open task puts it there */
    f->role = &test_role;
    f->seq = seq;
    f->path_key = path;
    f->path_hash = fwdioi_hash(FWDIOI_HASH_INIT, path, strlen(path));
    f->s.sent_bytes = calloc(NSUMS, sizeof *f->s.sent_bytes);
    f->writer_bytes_agreed = calloc(NWRITERS, sizeof *f->writer_bytes_agreed);
    if (!f->s.sent_bytes || !f->writer_bytes_agreed)
        abort();
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++)
        f->check_fields[i] = 1000 + 7 * i;
    f->known_error = f->open_refusal = FWDIOI_ERRINFO_OK;
    f->cbs.ready = on_ready;
    f->cbs.complete = on_complete;
    f->cbs.user = w;
    fwdioi_session_init(f);
}

static void world_init(world_t *w)
{
    memset(w, 0, sizeof *w);
    W = w;
    w->cfg.files_in_flight = 1; /* no duplicate made ahead: one in flight at a time */
    w->cfg.watchdog = FWDIO_WATCHDOG_OFF;
    w->o.engine = fake_rt_create(ME, NRANKS, &w->cfg);
    w->o.session_ops = &fwdioi_session_ops;
    LIST_INIT(&w->o.active);
    LIST_INIT(&w->o.polled);
    LIST_INIT(&w->o.draining);
    STAILQ_INIT(&w->o.dups);
    STAILQ_INIT(&w->o.area_blocked);
    w->o.dup_next = w->o.spare = MPI_COMM_NULL;
    w->o.broken = FWDIOI_ERRINFO_OK;
    fake_comm_reset();
    file_init(w, &w->f, "unit-session", w->writer_ranks, 0);
}

static void file_free(fwdio_file_t *f)
{
    free(f->s.sent_bytes);
    free(f->s.expected_bytes);
    free(f->writer_bytes_agreed);
}

static void world_free(world_t *w)
{
    /* the duplication made ahead for the next file (finish_session starts
     * it once the file gave its communicator back) completes; nothing else
     * is left behind */
    if (w->o.dup_in_flight) {
        fake_coll_t c;
        CHECK(fake_comm_take(&c) && c.call == FAKE_COMM_IDUP);
        fake_rt_complete_oldest(MPI_SUCCESS);
    }
    CHECK(fake_rt_requests() == 0 && fake_comm_started() == 0);
    file_free(&w->f);
    file_free(&w->g);
    if (w->o.spare != MPI_COMM_NULL)
        MPI_Comm_free(&w->o.spare);
    fwdioi_u64map_free(&w->o.active_by_seq);
    fwdioi_u64map_free(&w->o.active_by_path);
    fake_rt_destroy(w->o.engine);
    W = NULL;
}

static int same(const fwdioi_errinfo_t *a, const fwdioi_errinfo_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* ---- rank 0's side of the collectives ---- */

/* The oldest collective started, which must be of kind `call`. */
static fake_coll_t take(fake_comm_call_t call)
{
    fake_coll_t c = {FAKE_COMM_NCALLS, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL};
    CHECK(fake_comm_take(&c));
    CHECK(c.call == call);
    return c;
}

/* The duplication in flight completes (with `mpi_error`). */
static void finish_dup(int mpi_error)
{
    take(FAKE_COMM_IDUP);
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(mpi_error);
}

/* The open check in flight: rank 0 passed `fields` and its local error
 * `local`; reduced, completed. */
static void answer_check_with(const int64_t *fields, const fwdioi_errinfo_t *local)
{
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE);
    CHECK(c.count == FWDIOI_OPEN_CHECK_PAIRS && c.type == MPI_LONG_INT && c.op == MPI_MINLOC);
    fwdioi_agree_pair_t other[FWDIOI_OPEN_CHECK_PAIRS];
    fwdioi_open_check_pack(other, OTHER, fields, local);
    memcpy(c.out, c.in, sizeof other);
    minloc(other, c.out, FWDIOI_OPEN_CHECK_PAIRS);
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(MPI_SUCCESS);
}

/* ... rank 0 found nothing wrong locally. */
static void answer_check(const int64_t *fields)
{
    const fwdioi_errinfo_t ok = FWDIOI_ERRINFO_OK;
    answer_check_with(fields, &ok);
}

/* The status agreement in flight: rank 0 saw `other`; reduced, completed. */
static void answer_status(fwdioi_errinfo_t other)
{
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE);
    CHECK(c.count == FWDIOI_ERRINFO_PAIRS && c.type == MPI_LONG_INT && c.op == MPI_MINLOC);
    fwdioi_agree_pair_t pairs[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_pack(&other, OTHER, pairs);
    memcpy(c.out, c.in, sizeof pairs);
    minloc(pairs, c.out, FWDIOI_ERRINFO_PAIRS);
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(MPI_SUCCESS);
}

/* The close agreement in flight: this rank's sums plus rank 0's `other`
 * (bytes per writer; its commit block and tag as a closing rank's). */
static void answer_close(const uint64_t *mine_want, const uint64_t *other_bytes)
{
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE);
    CHECK(c.count == NSUMS && c.type == MPI_UINT64_T && c.op == MPI_SUM);
    const uint64_t *in = c.in;
    uint64_t *out = c.out;
    for (int i = 0; i < NWRITERS; i++)
        CHECK(in[i] == mine_want[i]);
    CHECK(in[NWRITERS + FWDIOI_SUM_COMMITS] == 0 && in[NWRITERS + FWDIOI_SUM_COMMITTER] == 0);
    uint64_t other[NSUMS] = {0};
    memcpy(other, other_bytes, NWRITERS * sizeof *other);
    for (int i = 0; i < NSUMS; i++)
        out[i] = in[i] + other[i];
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(MPI_SUCCESS);
}

static const fwdioi_errinfo_t OK = FWDIOI_ERRINFO_OK;

/* ---- driving a file ---- */

static void open_file(world_t *w, fwdio_file_t *f)
{
    fwdioi_rt_submit(w->o.engine, &f->open_task);
}

static void close_file(world_t *w, fwdio_file_t *f)
{
    fwdioi_rt_submit(w->o.engine, &f->close_task);
}

/* The file through its duplication and check (rank 0 agreeing) to the role's
 * open. */
static void drive_to_role_open(world_t *w)
{
    fwdio_file_t *f = &w->f;
    open_file(w, f);
    CHECK(f->s.phase == FWDIOI_PHASE_DUP && fake_comm_dups() == 1);
    finish_dup(MPI_SUCCESS);
    CHECK(f->s.phase == FWDIOI_PHASE_CHECKING && f->s.comm != MPI_COMM_NULL);
    answer_check(f->check_fields);
    CHECK(f->s.phase == FWDIOI_PHASE_CHECKING && !strcmp(w->events, "o"));
}

/* ... and on, through the open agreement, to ready. */
static void drive_to_open(world_t *w)
{
    fwdio_file_t *f = &w->f;
    drive_to_role_open(w);
    fwdioi_outcome_opened(f); /* the writer's open job is done */
    CHECK(f->s.phase == FWDIOI_PHASE_OPENING);
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_OPEN && w->ready == 1 && w->ready_status == FWDIO_OK);
}

/* ... closed here, with its close agreement in flight. */
static void drive_to_closing(world_t *w)
{
    fwdio_file_t *f = &w->f;
    drive_to_open(w);
    f->s.sent_bytes[0] = 300; /* what this rank sent each writer */
    f->s.sent_bytes[1] = 500;
    close_file(w, f);
    CHECK(f->s.phase == FWDIOI_PHASE_CLOSING && fake_comm_started() == 1);
}

/* ---- the tests ---- */

/* Every phase in order: duplication, check, the role's open, the open
 * agreement and ready, the close agreement with the bytes per writer, the
 * role's drain, the final agreement, complete; the communicator freed, the
 * file out of the runtime's lists. */
static void test_phases_in_order(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_closing(&w);
    uint64_t mine[NWRITERS] = {300, 500}, other[NWRITERS] = {40, 2};
    answer_close(mine, other);
    CHECK(f->s.phase == FWDIOI_PHASE_SYNCING && !strcmp(w.events, "oRc"));
    CHECK(f->writer_bytes_agreed[0] == 340 && f->writer_bytes_agreed[1] == 502);
    CHECK(f->s.commit.committer == -1 && fake_comm_started() == 0);
    fwdioi_outcome_data_done(f); /* the writer drained, wrote and synced */
    CHECK(f->s.phase == FWDIOI_PHASE_SYNCING && f->s.final_started);
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_DONE && !strcmp(w.events, "oRceC"));
    CHECK(w.complete == 1 && w.complete_status == FWDIO_OK && same(&f->known_error, &OK));
    /* its communicator freed; the next file's made ahead */
    CHECK(fake_comm_dups() == 2 && fake_comm_frees() == 1 && w.zombies == 0);
    CHECK(w.o.dup_in_flight && fake_comm_started() == 1);
    CHECK(f->s.comm == MPI_COMM_NULL && LIST_EMPTY(&w.o.active) && LIST_EMPTY(&w.o.polled));
    CHECK(w.o.comms_held == 0 && fwdioi_outcome_active_file(&w.o, f->seq) == NULL);
    CHECK(w.announced == 0);
    world_free(&w);
}

/* A close asked for before the file is open waits for the open agreement,
 * then starts the close agreement. */
static void test_close_before_open(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_role_open(&w);
    close_file(&w, f);
    CHECK(f->s.close_requested && f->s.phase == FWDIOI_PHASE_CHECKING &&
          fake_comm_started() == 0);
    fwdioi_outcome_opened(f);
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_CLOSING && w.ready == 1 && fake_comm_started() == 1);
    uint64_t zero[NWRITERS] = {0, 0};
    answer_close(zero, zero);
    fwdioi_outcome_data_done(f);
    answer_status(OK);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_OK && !strcmp(w.events, "oRceC"));
    world_free(&w);
}

/* Rank 0 passed another size: the check fails on every rank with
 * FWDIO_EINVAL naming the field; the role never opens, ready reports it,
 * and the close completes the file without a further agreement. */
static void test_check_disagrees(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    open_file(&w, f);
    finish_dup(MPI_SUCCESS);
    int64_t other[FWDIOI_OPEN_FIELDS];
    memcpy(other, f->check_fields, sizeof other);
    other[FWDIOI_FIELD_SIZE] -= 1; /* rank 0's is the smaller */
    answer_check(other);
    CHECK(f->s.check.failed && w.ready == 1 && w.ready_status == FWDIO_EINVAL);
    CHECK(f->s.outcome.open_agreed.other_rank == ME || f->s.outcome.open_agreed.rank == OTHER);
    CHECK(f->failed_known && f->known_error.status == FWDIO_EINVAL);
    CHECK(fake_comm_started() == 0 && w.complete == 0);
    close_file(&w, f);
    /* the plans may differ: nothing more is agreed than the check */
    CHECK(fake_comm_count(FAKE_COMM_ALLREDUCE) == 1 && fake_rt_requests_of(f) == 0);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EINVAL && !strcmp(w.events, "ReC"));
    CHECK(w.announced == 0 && fake_comm_frees() == 1);
    world_free(&w);
}

/* fwdio_open refused the file on this rank (session/refused.h): its
 * stand-in, closed at once, goes through the duplication and the check like
 * any file, carrying the refusal, which becomes every rank's status; the
 * session ends after the check, with no further agreement. */
static void test_refused_here(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    const fwdioi_errinfo_t refusal = {FWDIO_ERANGE, ME, 0, 0, FWDIOI_REASON_REFUSED, -1, 0};
    f->open_refusal = refusal;
    open_file(&w, f);
    close_file(&w, f); /* a stand-in is queued closed */
    CHECK(f->s.close_requested && f->s.phase == FWDIOI_PHASE_DUP);
    finish_dup(MPI_SUCCESS);
    answer_check(f->check_fields); /* rank 0 passed the same fields: the refusal decides */
    CHECK(f->s.check.failed && same(&f->s.outcome.open_agreed, &refusal) && w.ready == 1 &&
          w.ready_status == FWDIO_ERANGE);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_ERANGE && !strcmp(w.events, "ReC"));
    CHECK(fake_comm_count(FAKE_COMM_ALLREDUCE) == 1 && fake_rt_requests_of(f) == 0);
    CHECK(w.announced == 0 && fake_comm_frees() == 1 && LIST_EMPTY(&w.o.active));
    world_free(&w);
}

/* fwdio_open refused the file on rank 0 only: this rank's file fails the
 * check with rank 0's status, its text naming rank 0, instead of waiting;
 * written to and closed afterwards, it completes with no further agreement. */
static void test_refused_elsewhere(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    open_file(&w, f);
    finish_dup(MPI_SUCCESS);
    const fwdioi_errinfo_t refusal = {FWDIO_EINVAL, OTHER, 0, 0, FWDIOI_REASON_REFUSED, -1, 0};
    int64_t zeros[FWDIOI_OPEN_FIELDS] = {0}; /* a stand-in's fields */
    answer_check_with(zeros, &refusal);
    CHECK(f->s.check.failed && same(&f->s.outcome.open_agreed, &refusal) && w.ready == 1 &&
          w.ready_status == FWDIO_EINVAL && f->failed_known);
    CHECK(strstr(f->error_text, "refused at the call on rank 0") != NULL);
    close_file(&w, f);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EINVAL && !strcmp(w.events, "ReC"));
    CHECK(fake_comm_count(FAKE_COMM_ALLREDUCE) == 1 && fake_rt_requests_of(f) == 0);
    world_free(&w);
}

/* Rank 0 agreed on a step where this rank closed (the close's tags
 * differ): every rank gives up the file alike with FWDIO_EINVAL, without
 * telling the others (they saw the same sums). */
static void test_close_tags_differ(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_closing(&w);
    w.tags_differ = 1;
    uint64_t mine[NWRITERS] = {300, 500}, other[NWRITERS] = {0, 0};
    answer_close(mine, other);
    fwdioi_errinfo_t want = {FWDIO_EINVAL, -1, 0, 0, FWDIOI_REASON_STEPS, -1, 0};
    CHECK(f->s.outcome.aborted && same(&f->s.outcome.abort_info, &want) && w.announced == 0);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EINVAL && !strcmp(w.events, "oRdxeC"));
    CHECK(f->writer_bytes_agreed[0] == 0 && w.zombies == 1);
    world_free(&w);
}

/* Where an agreement's MPI call fails. */
enum stage { AT_CHECK, AT_OPEN, AT_CLOSE, AT_FINAL, NSTAGES };

static const int stage_call[NSTAGES] = {FWDIOI_MPI_AGREE_CHECK, FWDIOI_MPI_AGREE_OPEN,
                                        FWDIOI_MPI_AGREE_CLOSE, FWDIOI_MPI_AGREE_FINAL};

/* An MPI call of one agreement fails on this rank, refused at its start
 * (`refused`) or failing on completion: the file aborts with FWDIO_EMPI
 * naming that call and the MPI error, tells the other ranks, reports it
 * in ready (before the open) and complete, and keeps its communicator for
 * late data; nothing is left in flight. */
static void mpi_failure_at(enum stage at, int refused)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    const int rc = MPI_ERR_OTHER;
    open_file(&w, f);
    if (at == AT_CHECK && refused) /* the check starts at the duplication's end */
        fake_comm_fail(FAKE_COMM_ALLREDUCE, rc);
    finish_dup(MPI_SUCCESS);
    if (at == AT_CHECK && !refused) {
        take(FAKE_COMM_ALLREDUCE);
        fake_rt_complete_oldest(rc);
    } else if (at > AT_CHECK) {
        answer_check(f->check_fields);
        if (at == AT_OPEN && refused)
            fake_comm_fail(FAKE_COMM_ALLREDUCE, rc);
        fwdioi_outcome_opened(f);
        if (at == AT_OPEN && !refused) {
            take(FAKE_COMM_ALLREDUCE);
            fake_rt_complete_oldest(rc);
        } else if (at > AT_OPEN) {
            answer_status(OK);
            if (at == AT_CLOSE && refused)
                fake_comm_fail(FAKE_COMM_ALLREDUCE, rc);
            close_file(&w, f);
            if (at == AT_CLOSE && !refused) {
                take(FAKE_COMM_ALLREDUCE);
                fake_rt_complete_oldest(rc);
            } else if (at == AT_FINAL) {
                uint64_t zero[NWRITERS] = {0, 0};
                answer_close(zero, zero);
                if (refused)
                    fake_comm_fail(FAKE_COMM_ALLREDUCE, rc);
                fwdioi_outcome_data_done(f);
                if (!refused) {
                    take(FAKE_COMM_ALLREDUCE);
                    fake_rt_complete_oldest(rc);
                }
            }
        }
    }
    fwdioi_errinfo_t want = {FWDIO_EMPI, ME, rc, 0, FWDIOI_REASON_MPI + stage_call[at], -1, 0};
    CHECK(f->s.outcome.aborted && same(&f->s.outcome.abort_info, &want));
    CHECK(w.announced == 1 && same(&w.announced_why, &want));
    CHECK(w.ready == 1 && w.ready_status == (at <= AT_OPEN ? FWDIO_EMPI : FWDIO_OK));
    CHECK(f->failed_known && same(&f->known_error, &want));
    CHECK(strstr(f->error_text, fwdioi_mpi_call_name(stage_call[at])) != NULL);
    CHECK(fake_rt_requests_of(f) == 0); /* the file's agreement given up */
    if (!f->s.close_requested) {
        CHECK(w.complete == 0); /* the application's close comes first */
        close_file(&w, f);
    }
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EMPI);
    CHECK(f->s.phase == FWDIOI_PHASE_DONE && same(&f->known_error, &want));
    /* a writer's aborted file: data may still come, its communicator drains it */
    CHECK(w.zombies == 1 && fake_comm_frees() == 0 && f->s.comm == MPI_COMM_NULL);
    CHECK((strchr(w.events, 'c') != NULL) == (at == AT_FINAL)); /* the role's drain */
    CHECK((strchr(w.events, 'x') != NULL) == (at >= AT_OPEN));
    world_free(&w);
}

static void test_mpi_failure_at_each_agreement(void)
{
    for (int at = 0; at < NSTAGES; at++) {
        mpi_failure_at((enum stage)at, 1);
        mpi_failure_at((enum stage)at, 0);
    }
}

/* The communicator's duplication fails on this rank: the file fails with
 * FWDIO_EMPI naming MPI_Comm_idup, the runtime is broken, and a file
 * opened later fails at once, without a duplication. */
static void test_dup_fails(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f, *g = &w.g;
    fake_comm_fail(FAKE_COMM_IDUP, MPI_ERR_OTHER);
    open_file(&w, f);
    fwdioi_errinfo_t want = {FWDIO_EMPI, ME, MPI_ERR_OTHER, 0,
                             FWDIOI_REASON_MPI + FWDIOI_MPI_COMM_IDUP, -1, 0};
    CHECK(f->s.outcome.aborted && same(&f->s.outcome.abort_info, &want) && w.announced == 1);
    CHECK(w.o.broken.status == FWDIO_EMPI && w.o.broken_known);
    CHECK(w.ready == 1 && w.ready_status == FWDIO_EMPI && fake_comm_dups() == 0);
    close_file(&w, f);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EMPI && w.zombies == 0);
    file_init(&w, g, "unit-session-2", w.g_writer_ranks, 1);
    open_file(&w, g);
    CHECK(g->s.outcome.aborted && g->s.outcome.abort_info.call == FWDIOI_REASON_BROKEN);
    CHECK(g->s.outcome.abort_info.status == FWDIO_EMPI && fake_comm_dups() == 0);
    close_file(&w, g);
    CHECK(w.g_complete == 1 && w.g_complete_status == FWDIO_EMPI);
    CHECK(w.announced == 1); /* the later file's failure is every rank's own */
    world_free(&w);
}

/* Rank 0's abort is heard while the close is being agreed: its steps'
 * outcome counts, this rank does not announce it again, the agreement is
 * given up (with the communicator and the file, MPI's now), the role closes,
 * and complete reports rank 0's error whole. */
static void test_abort_heard_while_closing(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_closing(&w);
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE); /* never answered */
    (void)c;
    fwdioi_errinfo_t why = {FWDIO_EWRITE, OTHER, 5, 4096, 0, -1, 0};
    fwdioi_step_outcome_t steps = {3, 2, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &why, &steps);
    CHECK(w.heard == 1 && w.heard_steps.complete == 3 && w.heard_steps.ok == 2);
    CHECK(w.announced == 0 && fake_rt_requests_of(f) == 0);
    /* the role dropped what it kept for later steps, and closed */
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EWRITE && same(&f->known_error, &why));
    CHECK(!strcmp(w.events, "oRdxeC") && w.ready == 1);
    if (strcmp(w.events, "oRdxeC"))
        fprintf(stderr, "  events: %s\n", w.events);
    fwdioi_outcome_abort_heard(f, &why, &steps); /* heard again: the file is done */
    CHECK(w.heard == 1 && w.complete == 1);
    /* the close agreement given up: MPI may still progress it, so the file
     * and its communicator are MPI's from now on (file_life.c) */
    CHECK(f->s.outcome.abandoned && w.zombies == 1 && w.kept_zombies == 1 && fake_comm_frees() == 0);
    world_free(&w);
}

/* Rank 0's abort is heard while this rank's duplication is in flight: the
 * duplication still completes (every rank pairs the same ones), then the
 * communicator is freed, no check starts, and the file completes once
 * closed. */
static void test_abort_heard_during_dup(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    open_file(&w, f);
    fwdioi_errinfo_t why = {FWDIO_EMPI, OTHER, MPI_ERR_OTHER, 0,
                            FWDIOI_REASON_MPI + FWDIOI_MPI_AGREE_CHECK, -1, 0};
    fwdioi_step_outcome_t steps = {0, 0, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &why, &steps);
    CHECK(f->s.outcome.aborted && w.ready == 1 && w.ready_status == FWDIO_EMPI);
    CHECK(fake_rt_requests() == 1 && w.o.broken.status == FWDIO_OK); /* still duplicating */
    close_file(&w, f);
    CHECK(w.complete == 0); /* the duplication is this rank's own, in flight */
    finish_dup(MPI_SUCCESS);
    CHECK(fake_comm_count(FAKE_COMM_ALLREDUCE) == 0 && fake_comm_frees() == 1); /* no check */
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EMPI && same(&f->known_error, &why));
    world_free(&w);
}

/* After the end: a late abort changes nothing (the first outcome stays,
 * nothing fires again), the file is no longer found by its sequence number
 * (abort.c keeps a late message pending instead), and a request completing
 * late reaches nobody. */
static void test_late_after_end(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_closing(&w);
    uint64_t mine[NWRITERS] = {300, 500}, zero[NWRITERS] = {0, 0};
    answer_close(mine, zero);
    fwdioi_outcome_data_done(f);
    answer_status(OK);
    CHECK(w.complete == 1 && f->s.phase == FWDIOI_PHASE_DONE);
    CHECK(fake_comm_started() == 1); /* the next file's duplication, made ahead */
    fwdioi_errinfo_t late = {FWDIO_EMPI, OTHER, MPI_ERR_OTHER, 0,
                             FWDIOI_REASON_MPI + FWDIOI_MPI_AGREE_FINAL, -1, 0};
    fwdioi_step_outcome_t steps = {0, 0, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &late, &steps);
    fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_AGREE_FINAL, MPI_ERR_OTHER);
    CHECK(!f->s.outcome.aborted && w.announced == 0 && !f->failed_known);
    CHECK(w.complete == 1 && w.ready == 1 && same(&f->known_error, &OK));
    CHECK(fwdioi_outcome_active_file(&w.o, f->seq) == NULL);
    CHECK(fake_rt_requests() == 1); /* the duplication: no request of the file's is left */
    world_free(&w);
}

int main(void)
{
    test_phases_in_order();
    test_close_before_open();
    test_check_disagrees();
    test_refused_here();
    test_refused_elsewhere();
    test_close_tags_differ();
    test_mpi_failure_at_each_agreement();
    test_dup_fails();
    test_abort_heard_while_closing();
    test_abort_heard_during_dup();
    test_late_after_end();
    return unit_result("unit_session");
}

/* ---- the modules around the session: a file without a stream, the
 * node-shared area or the node-local tier; abort messages recorded ---- */

void fwdioi_abort_announce(struct fwdio_runtime *o, uint64_t seq, const fwdioi_errinfo_t *why,
                           const fwdioi_step_outcome_t *steps)
{
    (void)o;
    (void)seq;
    (void)steps;
    W->announced++;
    W->announced_why = *why;
}

void fwdioi_abort_announce_drain(struct fwdio_runtime *o, uint64_t seq,
                                 const fwdioi_errinfo_t *why)
{
    (void)o;
    (void)seq;
    (void)why;
    CHECK(!"no drain here");
}

int fwdioi_abort_receive(struct fwdio_runtime *o) { (void)o; return 0; }

int fwdioi_abort_take_pending(struct fwdio_runtime *o, uint64_t seq, int drain,
                              fwdioi_errinfo_t *why)
{
    (void)o;
    (void)seq;
    (void)drain;
    (void)why;
    return 0;
}

void fwdioi_zombie_add(struct fwdio_runtime *o, MPI_Comm comm, int kept)
{
    (void)o;
    CHECK(comm != MPI_COMM_NULL);
    W->zombies++;
    W->kept_zombies += kept != 0;
}

int fwdioi_zombie_drain(struct fwdio_runtime *o, int *active)
{
    (void)o;
    (void)active;
    return 0;
}

int fwdioi_abort_drain(struct fwdio_runtime *o, MPI_Comm comm)
{
    (void)o;
    (void)comm;
    return 0;
}

int fwdioi_local_session_done(fwdio_file_t *f, const fwdioi_errinfo_t *final, MPI_Comm *comm,
                              void (*path_free)(fwdio_file_t *f),
                              void (*announce)(fwdio_file_t *f, const fwdioi_errinfo_t *why))
{
    (void)f;
    (void)final;
    (void)comm;
    (void)path_free;
    (void)announce;
    return 0; /* not of the tier: no drain */
}

int fwdioi_local_defers_commit(const fwdio_file_t *f) { (void)f; return 0; }
/* no tier: a read file opens its target at once */
int fwdioi_local_restart_look(fwdio_file_t *f, void (*then)(fwdio_file_t *f))
{
    (void)f;
    (void)then;
    return 0;
}
/* no partner copies without the tier: the session finishes at once */
int fwdioi_local_replicate(fwdio_file_t *f,
                           void (*then)(fwdio_file_t *f, const fwdioi_errinfo_t *copies))
{
    (void)f;
    (void)then;
    return -1;
}
void fwdioi_local_abort_heard(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    (void)f;
    (void)why;
    CHECK(!"no drain here");
}

const char *fwdioi_local_error_path(const fwdio_file_t *f, const fwdioi_errinfo_t *e, char *buf,
                                    size_t len)
{
    (void)f;
    (void)e;
    (void)buf;
    (void)len;
    return NULL;
}

void fwdioi_requester_open_decided(fwdio_file_t *f) { (void)f; }
int fwdioi_requester_probe(fwdio_file_t *f) { (void)f; return 0; }
int fwdioi_requester_pending(const fwdio_file_t *f) { (void)f; return 0; }
void fwdioi_requester_abort(fwdio_file_t *f) { (void)f; }
void fwdioi_requester_free(fwdio_file_t *f) { (void)f; }

void fwdioi_sender_release_held(fwdio_file_t *f) { (void)f; }
void fwdioi_sender_drop(fwdio_file_t *f, fwdioi_msg_t *m, int status)
{
    (void)f;
    (void)m;
    (void)status;
    CHECK(!"no write was held");
}
int fwdioi_sender_retry_blocked(struct fwdio_runtime *o) { (void)o; return 0; }

int fwdioi_shared_poll(struct fwdio_runtime *o) { (void)o; return 0; }
int fwdioi_shared_settle(struct fwdio_runtime *o) { (void)o; return 0; }

/* A file without a stream: no step pending, the close may start at once. */
void fwdioi_steps_pump(fwdio_file_t *f)
{
    if (!f->s.outcome.aborted && f->s.phase == FWDIOI_PHASE_OPEN)
        fwdioi_outcome_try_close(f);
}
int fwdioi_steps_pending(const fwdio_file_t *f) { (void)f; return 0; }
void fwdioi_steps_data_done(fwdio_file_t *f) { (void)f; CHECK(!"no step"); }
void fwdioi_steps_fail_all(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    (void)f;
    (void)why;
}
void fwdioi_steps_end(fwdio_file_t *f, const fwdioi_errinfo_t *final)
{
    (void)f;
    (void)final;
}
void fwdioi_steps_outcome(const fwdio_file_t *f, fwdioi_step_outcome_t *out)
{
    (void)f;
    *out = (fwdioi_step_outcome_t){0, 0, FWDIOI_ERRINFO_OK};
}
void fwdioi_steps_abort_heard(fwdio_file_t *f, const fwdioi_step_outcome_t *o)
{
    (void)f;
    W->heard++;
    W->heard_steps = *o;
}
int fwdioi_steps_defer_abort(fwdio_file_t *f, int call, const fwdioi_errinfo_t *why)
{
    (void)f;
    (void)call;
    (void)why;
    return 0; /* no step being agreed */
}
int fwdioi_steps_close_scanned(fwdio_file_t *f) { (void)f; return 1; }
uint64_t fwdioi_steps_close_appended(const fwdio_file_t *f) { (void)f; return 0; }

/* The close's tag (steps.c: whether every rank closed, or one is at a
 * step): recorded, and agreed unless the test says otherwise. */
void fwdioi_steps_set_tag(uint64_t *sums, int nwriters, uint64_t tag)
{
    (void)sums;
    (void)nwriters;
    W->tag_set = tag;
}
int fwdioi_steps_tags_agree(const uint64_t *sums, int nwriters, int nranks, uint64_t tag)
{
    (void)sums;
    (void)nwriters;
    CHECK(nranks == NRANKS && tag == FWDIOI_CLOSE_TAG && W->tag_set == FWDIOI_CLOSE_TAG);
    return !W->tags_differ;
}

void fwdioi_watchdog_check(fwdio_file_t *f, double now)
{
    (void)f;
    (void)now;
}

int fwdioi_combine_flush_stale(struct fwdio_runtime *o, uint64_t age_ns, int *open_left)
{
    (void)o;
    (void)age_ns;
    *open_left = 0;
    return 0;
}

void fwdioi_file_unlink_locked(fwdio_file_t *f) { (void)f; CHECK(!"the test owns the file"); }
void fwdioi_file_release(fwdio_file_t *f) { (void)f; CHECK(!"the test owns the file"); }
