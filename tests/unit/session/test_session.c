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
 * node-local tier) are faked in session_world.c, as a file without a
 * stream, without the area and without the tier sees them. No MPI launch.
 */
#include "fake_runtime.h"
#include "session_world.h"

#include "session/dormant.h"
#include "unit_check.h"

#include "agreement/agree.h"
#include "agreement/open_check.h"
#include "agreement/outcome.h"

#include <string.h>

/* ---- the tests ---- */

/* Every phase in order: the communicator's choice and duplication, check,
 * the role's open, the open agreement and ready, the close agreement with
 * the bytes per writer, the role's drain, the final agreement, complete;
 * the communicator kept idle in the pool, the file out of the runtime's
 * lists; the next file takes the kept communicator, without a duplication. */
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
    /* its communicator kept idle in slot 0; the next file's choice made ahead */
    CHECK(fake_comm_dups() == 1 && fake_comm_frees() == 0 && w.zombies == 0);
    CHECK(w.o.comm_pool.idle == 1 && w.o.comm_pool.made == 1);
    CHECK(w.o.dup_in_flight && fake_comm_started() == 1);
    /* the other rank holds slot 0 idle too: the choice takes it */
    CHECK(answer_pick(1) == 1 && !w.o.dup_in_flight && w.o.spare_slot == 0);
    CHECK(w.o.spare != MPI_COMM_NULL && w.o.comm_pool.idle == 0 && fake_comm_dups() == 1);
    CHECK(f->s.comm == MPI_COMM_NULL && LIST_EMPTY(&w.o.active) && LIST_EMPTY(&w.o.polled));
    CHECK(w.o.comms_held == 0 && fwdioi_outcome_active_file(&w.o, f->seq) == NULL);
    CHECK(w.announced == 0);
    world_free(&w);
}

/* Closing early: a close asked for before the file is open starts its
 * agreement right behind the open agreement, counting the writes held for
 * the open as sent; they go once the open succeeds, and are not counted
 * again. */
static void test_close_before_open(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_role_open(&w);
    fwdioi_msg_t held[3];
    memset(held, 0, sizeof held);
    held[0].writer = 0, held[0].payload = 100;
    held[1].writer = 1, held[1].payload = 7;
    held[2].writer = 0, held[2].payload = 20;
    for (int i = 0; i < 3; i++)
        STAILQ_INSERT_TAIL(&f->s.held, &held[i].task, link);
    close_file(&w, f);
    /* the writer's open job runs (OPENING): the close must not start before
     * the open agreement, which every other rank starts first */
    CHECK(f->s.close_requested && f->s.phase == FWDIOI_PHASE_OPENING && !f->s.close_early &&
          fake_comm_started() == 0);
    fwdioi_outcome_opened(f);
    CHECK(f->s.phase == FWDIOI_PHASE_OPENING && f->s.close_early && fake_comm_started() == 2);
    CHECK(fwdioi_file_closing(f));
    answer_status_among(OK, 2); /* the open's, the oldest */
    CHECK(f->s.phase == FWDIOI_PHASE_CLOSING && w.ready == 1 && fake_comm_started() == 1);
    CHECK(w.held_sent[0] == 120 && w.held_sent[1] == 7 && w.held_dropped == 0);
    uint64_t mine[NWRITERS] = {120, 7}, other[NWRITERS] = {3, 4};
    answer_close(mine, other);
    CHECK(f->writer_bytes_agreed[0] == 123 && f->writer_bytes_agreed[1] == 11);
    fwdioi_outcome_data_done(f);
    answer_status(OK);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_OK && !strcmp(w.events, "oRceC"));
    world_free(&w);
}

/* Closing early, the close agreed before the open: its result waits for the
 * open's; the open fails, so the held writes are dropped, and no writer
 * waits for the bytes the close counted of them. */
static void test_close_early_open_fails(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_role_open(&w);
    fwdioi_msg_t held;
    memset(&held, 0, sizeof held);
    held.writer = 1, held.payload = 4096;
    STAILQ_INSERT_TAIL(&f->s.held, &held.task, link);
    close_file(&w, f);
    fwdioi_errinfo_t eopen = {FWDIO_EOPEN, ME, 13, 0, 0, -1, 0};
    f->s.outcome.open_local = eopen; /* this rank's writer could not open */
    fwdioi_outcome_opened(f);
    CHECK(f->s.close_early && fake_comm_started() == 2);
    fake_coll_t open = take(FAKE_COMM_ALLREDUCE), close = take(FAKE_COMM_ALLREDUCE);
    CHECK(close.count == NSUMS && close.op == MPI_SUM);
    CHECK(((const uint64_t *)close.in)[1] == 4096 && ((const uint64_t *)close.in)[0] == 0);
    for (int i = 0; i < NSUMS; i++)
        ((uint64_t *)close.out)[i] = ((const uint64_t *)close.in)[i] + (i == 0 ? 50 : 0);
    fake_rt_complete_newest(MPI_SUCCESS); /* the close's result first */
    CHECK(f->s.phase == FWDIOI_PHASE_OPENING && f->s.close_result_waits && w.ready == 0);
    CHECK(!strcmp(w.events, "o")); /* the role not told of the close yet */
    memcpy(open.out, open.in, FWDIOI_ERRINFO_PAIRS * sizeof(fwdioi_agree_pair_t));
    fake_rt_complete_oldest(MPI_SUCCESS);
    CHECK(w.ready == 1 && w.ready_status == FWDIO_EOPEN && w.held_dropped == 4096);
    CHECK(w.held_sent[0] == 0 && w.held_sent[1] == 0);
    /* nothing was sent anywhere: the writers expect no bytes */
    CHECK(f->writer_bytes_agreed[0] == 0 && f->writer_bytes_agreed[1] == 0);
    CHECK(f->s.phase == FWDIOI_PHASE_SYNCING && !strcmp(w.events, "oRc"));
    fwdioi_outcome_data_done(f);
    answer_status(eopen);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EOPEN);
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
    /* nothing of the file can still arrive: its communicator is kept */
    CHECK(w.announced == 0 && fake_comm_frees() == 0 && w.o.comm_pool.idle == 1);
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
    CHECK(w.announced == 0 && fake_comm_frees() == 0 && w.o.comm_pool.idle == 1 &&
          LIST_EMPTY(&w.o.active));
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
    CHECK(answer_pick(~(uint64_t)0) == 0); /* nothing kept: a duplication */
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
    /* no check; the communicator freed, not kept: the file was aborted */
    CHECK(fake_comm_count(FAKE_COMM_ALLREDUCE) == 0 && fake_comm_frees() == 1);
    CHECK(w.o.comm_pool.idle == 0 && w.o.comm_pool.made == 1);
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
    CHECK(fake_comm_started() == 1); /* the next file's choice, made ahead */
    fwdioi_errinfo_t late = {FWDIO_EMPI, OTHER, MPI_ERR_OTHER, 0,
                             FWDIOI_REASON_MPI + FWDIOI_MPI_AGREE_FINAL, -1, 0};
    fwdioi_step_outcome_t steps = {0, 0, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &late, &steps);
    fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_AGREE_FINAL, MPI_ERR_OTHER);
    CHECK(!f->s.outcome.aborted && w.announced == 0 && !f->failed_known);
    CHECK(w.complete == 1 && w.ready == 1 && same(&f->known_error, &OK));
    CHECK(fwdioi_outcome_active_file(&w.o, f->seq) == NULL);
    CHECK(fake_rt_requests() == 1); /* the choice: no request of the file's is left */
    world_free(&w);
}

/* A file ended well and kept its communicator in slot 0, but the other rank
 * still holds its slot 0 (its file not over there): the choice agrees on no
 * slot, so the next communicator is duplicated into slot 1 on both ranks;
 * slot 0 stays idle here for a later choice. */
static void test_kept_comm_busy_elsewhere(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f, *g = &w.g;
    drive_to_closing(&w);
    uint64_t mine[NWRITERS] = {300, 500}, zero[NWRITERS] = {0, 0};
    answer_close(mine, zero);
    fwdioi_outcome_data_done(f);
    answer_status(OK);
    CHECK(w.complete == 1 && w.o.comm_pool.idle == 1 && w.o.dup_in_flight);
    CHECK(answer_pick(0) == 0 && fake_comm_dups() == 2); /* not idle on rank 0: a new one */
    take(FAKE_COMM_IDUP);
    fake_rt_complete_oldest(MPI_SUCCESS);
    CHECK(fake_comm_dups() == 2 && w.o.spare_slot == 1 && w.o.comm_pool.made == 3);
    CHECK(w.o.comm_pool.idle == 1 && !w.o.dup_in_flight);
    file_init(&w, g, "unit-session-2", w.g_writer_ranks, 1);
    /* two files may hold communicators now, so that g's successor's is
     * chosen ahead (the fake runtime keeps its own copy of the settings) */
    ((fwdio_config_t *)fwdioi_rt_config(w.o.engine))->files_in_flight = 2;
    open_file(&w, g);
    CHECK(g->s.phase == FWDIOI_PHASE_CHECKING && g->s.links.comm_slot == 1);
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE); /* g's check, left unanswered */
    (void)c;
    CHECK(fwdioi_rt_forget(w.o.engine, g) == 1);
    /* the next choice, made ahead, offers slot 0, idle on both ranks */
    fake_coll_t pick = take(FAKE_COMM_PICK);
    CHECK(*(const uint64_t *)pick.in == 1);
    *(uint64_t *)pick.out = 1;
    fake_rt_complete_oldest(MPI_SUCCESS);
    CHECK(w.o.spare_slot == 0 && w.o.comm_pool.idle == 0 && fake_comm_dups() == 2);
    MPI_Comm_free(&g->s.comm);
    world_free(&w);
}

/* The choice's reduction fails on this rank: the file fails with FWDIO_EMPI
 * naming it, and the runtime is broken (the runtime's communicator is out of
 * step between ranks). */
static void test_pick_fails(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fake_comm_fail(FAKE_COMM_PICK, MPI_ERR_OTHER);
    open_file(&w, f);
    fwdioi_errinfo_t want = {FWDIO_EMPI, ME, MPI_ERR_OTHER, 0,
                             FWDIOI_REASON_MPI + FWDIOI_MPI_COMM_PICK, -1, 0};
    CHECK(f->s.outcome.aborted && same(&f->s.outcome.abort_info, &want) && w.announced == 1);
    CHECK(w.o.broken.status == FWDIO_EMPI && fake_comm_dups() == 0);
    close_file(&w, f);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_EMPI);
    world_free(&w);
}

/* ---- dormant files (dormant.c) ---- */

/* The woken file's check fails (another rank passed other fields): it fails
 * everywhere and completes once closed here. */
static void fail_check_and_close(world_t *w)
{
    fwdio_file_t *f = &w->f;
    int64_t other[FWDIOI_OPEN_FIELDS];
    for (int i = 0; i < FWDIOI_OPEN_FIELDS; i++)
        other[i] = f->check_fields[i] + (i == 0);
    answer_check(other);
    close_file(w, f);
    CHECK(w->complete == 1 && w->complete_status == FWDIO_EINVAL);
}

/* A dormant file's session stops once it holds its communicator: no check
 * starts (nothing to answer) until the application here uses the file, which
 * tells the neighbours (once) and starts the check; from there on the file
 * goes the usual way. */
static void test_dormant_used_here(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_dormant_init(f, 1);
    open_file(&w, f);
    CHECK(f->s.phase == FWDIOI_PHASE_DUP && w.o.ndormant == 1);
    finish_dup(MPI_SUCCESS);
    CHECK(f->s.phase == FWDIOI_PHASE_CHECKING && f->s.comm != MPI_COMM_NULL);
    CHECK(fake_comm_started() == 0 && w.wakes_told == 0 && f->s.dormant);
    fwdioi_dormant_use(f); /* a write, say */
    CHECK(!f->s.dormant && w.o.ndormant == 0 && !atomic_load(&f->dormant_app));
    CHECK(w.wakes_told == 1 && w.wake_except == -1 && fake_comm_started() == 1);
    answer_check(f->check_fields);
    CHECK(f->s.phase == FWDIOI_PHASE_OPENING && !strcmp(w.events, "o"));
    fwdioi_dormant_use(f); /* used again: nothing more to tell */
    fwdioi_dormant_wake(f, OTHER); /* a neighbour's wake heard late: carried on once only */
    CHECK(w.wakes_told == 1);
    fwdioi_outcome_opened(f);
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_OPEN && w.ready == 1 && w.ready_status == FWDIO_OK);
    close_file(&w, f);
    uint64_t mine[NWRITERS] = {0, 0}, zero[NWRITERS] = {0, 0};
    answer_close(mine, zero);
    fwdioi_outcome_data_done(f);
    answer_status(OK);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_OK && f->s.phase == FWDIOI_PHASE_DONE);
    world_free(&w);
}

/* Woken by another rank's wake (heard on the runtime's communicator): told
 * on to the other neighbours (not back to the one it came from), the check
 * starts, and the application's use later tells nobody again. */
static void test_dormant_woken_by_other(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_dormant_init(f, 1);
    open_file(&w, f);
    finish_dup(MPI_SUCCESS);
    int64_t seq = (int64_t)f->seq;
    fake_mpi_arrive_tag(OTHER, FWDIOI_TAG_WAKE, &seq, sizeof seq);
    CHECK(fwdioi_dormant_receive(&w.o) == 1 && fake_mpi_unmatched() == 0);
    CHECK(!f->s.dormant && w.o.ndormant == 0 && !atomic_load(&f->dormant_app));
    CHECK(w.wakes_told == 1 && w.wake_except == OTHER && fake_comm_started() == 1);
    fwdioi_dormant_use(f);
    CHECK(w.wakes_told == 1 && fake_comm_started() == 1);
    fail_check_and_close(&w);
    world_free(&w);
}

/* A wake heard before this rank opened the file is kept and told on at
 * once; the file opens woken (its check starts as soon as it holds its
 * communicator) and tells nobody again. */
static void test_dormant_wake_before_open(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_dormant_init(f, 1);
    int64_t seq = (int64_t)f->seq;
    fake_mpi_arrive_tag(OTHER, FWDIOI_TAG_WAKE, &seq, sizeof seq);
    CHECK(fwdioi_dormant_receive(&w.o) == 1 && w.wakes_told == 1 && w.wake_except == OTHER);
    CHECK(w.o.npending_wakes == 1);
    open_file(&w, f);
    CHECK(!f->s.dormant && w.o.ndormant == 0 && w.o.npending_wakes == 0);
    finish_dup(MPI_SUCCESS);
    CHECK(fake_comm_started() == 1 && w.wakes_told == 1);
    fail_check_and_close(&w);
    world_free(&w);
}

/* Discarded (closed while dormant here): it completes with FWDIO_OK, ready
 * first, without any agreement, and its communicator goes back to the pool
 * for the next file; before it holds one, it completes once it takes one
 * (the choice is every rank's, in open order). A wake heard after that
 * finds no file and is dropped. */
static void test_dormant_discarded(int before_comm)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_dormant_init(f, 1);
    open_file(&w, f);
    if (before_comm) {
        close_file(&w, f);
        CHECK(w.complete == 0 && w.ready == 0 && f->s.phase == FWDIOI_PHASE_DUP);
    }
    finish_dup(MPI_SUCCESS);
    if (!before_comm)
        close_file(&w, f);
    CHECK(w.ready == 1 && w.ready_status == FWDIO_OK);
    CHECK(w.complete == 1 && w.complete_status == FWDIO_OK && f->s.phase == FWDIOI_PHASE_DONE);
    /* no agreement of its own: the one collective in flight is the next
     * file's choice, made ahead once the communicator came back */
    CHECK(w.o.dup_in_flight && fake_comm_started() == 1);
    CHECK(w.wakes_told == 0 && w.o.ndormant == 0);
    CHECK(w.o.comm_pool.idle == 1 && fake_comm_frees() == 0);
    CHECK(fwdioi_outcome_active_file(&w.o, f->seq) == NULL);
    int64_t seq = (int64_t)f->seq;
    fake_mpi_arrive_tag(OTHER, FWDIOI_TAG_WAKE, &seq, sizeof seq);
    CHECK(fwdioi_dormant_receive(&w.o) == 1 && w.wakes_told == 0 && w.o.npending_wakes == 0);
    world_free(&w);
}

int main(void)
{
    test_phases_in_order();
    test_close_before_open();
    test_close_early_open_fails();
    test_check_disagrees();
    test_refused_here();
    test_refused_elsewhere();
    test_close_tags_differ();
    test_mpi_failure_at_each_agreement();
    test_dup_fails();
    test_kept_comm_busy_elsewhere();
    test_pick_fails();
    test_abort_heard_while_closing();
    test_abort_heard_during_dup();
    test_late_after_end();
    test_dormant_used_here();
    test_dormant_woken_by_other();
    test_dormant_wake_before_open();
    test_dormant_discarded(0);
    test_dormant_discarded(1);
    unit_failures += world_failures();
    return unit_result("unit_session");
}
