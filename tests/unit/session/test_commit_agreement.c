/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The commit of a file (session/session.c: COMMITTING), against the fake
 * runtime seam and fake communicator calls (session_world.h): rank 1, a
 * writer; the test plays the other ranks in every agreement. The close
 * agreement sums who set a commit block (fwdio_set_commit) and their ranks;
 * after the final status is agreed, the committer (the one rank that set a
 * block, else writer 0 with atomic_replace or several blocks) runs one
 * COMMIT job, and every rank agrees on its status before complete fires.
 * Covered: this rank commits (its block, in the job, written before the
 * agreement); another rank commits, rank 0 too (its rank sums to 0); the
 * commit block fails to be written, here or on the committer; the data
 * failed (the block is not written, the temporary removed, complete
 * reports the data's error); atomic_replace without a block (writer 0
 * renames); two and three ranks set a block (FWDIO_EINVAL naming them);
 * a stream's several blocks set after its last step, in order; the commit
 * agreement's MPI call failing, refused or on completion, on the committer
 * and on another rank; another rank's abort heard while the commit block
 * is being written and while its status is agreed. No MPI launch.
 */
#include "fake_runtime.h"
#include "session_world.h"
#include "unit_check.h"

#include "plan/plan.h"
#include "agreement/agree.h"
#include "agreement/outcome.h"
#include "storage/storage.h"
#include "storage/syscall.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t MINE[NWRITERS] = {300, 500}, NONE[NWRITERS] = {0, 0};

/* fwdio_set_commit on this rank: `len` bytes of `text` at `offset`. */
static void set_block(fwdio_file_t *f, const char *text, size_t len, uint64_t offset)
{
    uint8_t *copy = malloc(len);
    if (!copy || f->commit.n >= FWDIOI_MAX_COMMIT_BLOCKS)
        abort();
    memcpy(copy, text, len);
    f->commit.b[f->commit.n++] = (fwdioi_commit_block_t){copy, len, offset};
}

/* The file closed with its close agreed (this rank set `mine_commits`
 * blocks' worth, `other_commits` other ranks summing to `other_ranks`),
 * its data done here, its final status agreement in flight. */
static void drive_to_final(world_t *w, int mine_commits, int other_commits,
                           uint64_t other_ranks)
{
    fwdio_file_t *f = &w->f;
    drive_to_closing(w);
    answer_close_commits(MINE, mine_commits, NONE, other_commits, other_ranks);
    CHECK(f->s.phase == FWDIOI_PHASE_SYNCING && !strcmp(w->events, "oRc"));
    fwdioi_outcome_data_done(f); /* the writer drained, wrote and synced */
    CHECK(f->s.final_started && fake_comm_started() == 1);
}

/* The COMMIT job this rank submitted, taken off the I/O queue. */
static fwdioi_storage_job_t *take_commit_job(fwdio_file_t *f)
{
    CHECK(fake_rt_io_queued() == 1 && f->s.io_pending == 1);
    fwdioi_storage_job_t *job = (fwdioi_storage_job_t *)fake_rt_io_take();
    if (!job)
        abort();
    CHECK(job->kind == FWDIOI_STORAGE_COMMIT && job->owner == f);
    CHECK(job->path == f->write_path && job->len == 0);
    return job;
}

/* Whether the job writes `text` (len bytes) at `offset` as its segment i. */
static int job_writes(const fwdioi_storage_job_t *job, size_t i, const char *text, size_t len,
                      uint64_t offset)
{
    return i < job->nsegs && job->segs[i].offset == offset && job->segs[i].len == len &&
           memcmp(job->segs[i].src, text, len) == 0;
}

/* atomic_replace: the writers write the temporary `tmp`. */
static char tmp[] = ".unit-session.fwdio-tmp";

static void make_atomic(fwdio_file_t *f)
{
    f->opts.atomic_replace = 1;
    f->write_path = tmp;
}

/* The file completed with `status` (its error `want`, unless NULL), the
 * commit agreement the last collective of it. */
static void check_complete(world_t *w, int status, const fwdioi_errinfo_t *want)
{
    fwdio_file_t *f = &w->f;
    CHECK(w->complete == 1 && w->complete_status == status);
    CHECK(f->s.phase == FWDIOI_PHASE_DONE && f->s.io_pending == 0);
    if (want)
        CHECK(same(&f->known_error, want));
    CHECK(fake_rt_requests_of(f) == 0 && fake_rt_io_queued() == 0);
}

/* This rank's COMMIT job (taken) done as the I/O thread left it, and the
 * commit status agreed a success here and on the other ranks: the file
 * completes with `status` and `want`; the world ends. */
static void finish_commit(world_t *w, fwdioi_storage_job_t *job, int status,
                          const fwdioi_errinfo_t *want)
{
    fake_rt_io_done(&job->io);
    answer_status_checked(&OK, OK);
    check_complete(w, status, want);
    world_free(w);
}

/* This rank set a block ("HEADER!!" at 1000), the only one: it commits.
 * The file driven through its final status (a success) to the COMMIT job,
 * taken; no commit agreement before it. */
static fwdioi_storage_job_t *drive_to_commit_job(world_t *w)
{
    fwdio_file_t *f = &w->f;
    set_block(f, "HEADER!!", 8, 1000);
    drive_to_final(w, 1, 0, 0);
    CHECK(f->s.commit.committers == 1 && f->s.commit.committer == ME && same(&f->s.outcome.local_error, &OK));
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_COMMITTING && w->complete == 0);
    CHECK(fake_comm_started() == 0); /* the block first */
    return take_commit_job(f);
}

/* This rank set the block: after the final status it writes the block (a
 * COMMIT job of its bytes at its offset, no rename), and only then is the
 * commit's status agreed; complete waits for that agreement. */
static void test_this_rank_commits(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_storage_job_t *job = drive_to_commit_job(&w);
    CHECK(!job->discard && job->target == NULL && job->nsegs == 1);
    CHECK(job_writes(job, 0, "HEADER!!", 8, 1000));
    fake_rt_io_done(&job->io);
    CHECK(f->s.io_pending == 0 && w.complete == 0 && fake_comm_started() == 1);
    answer_status_checked(&OK, OK);
    check_complete(&w, FWDIO_OK, &OK);
    CHECK(!strcmp(w.events, "oRceC"));
    world_free(&w);
}

/* Rank 0 set the block (the sum of the committers' ranks is 0): this rank
 * writes nothing and goes straight to the commit agreement; complete
 * carries rank 0's commit status, `fails`: its failed pwrite. */
static void other_rank_commits(int fails)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_final(&w, 0, 1, OTHER);
    CHECK(f->s.commit.committers == 1 && f->s.commit.committer == OTHER);
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_COMMITTING && w.complete == 0);
    CHECK(fake_rt_io_queued() == 0 && fake_comm_started() == 1);
    fwdioi_errinfo_t theirs = OK;
    if (fails)
        theirs = (fwdioi_errinfo_t){FWDIO_ECOMMIT, OTHER, ENOSPC, 1000, FWDIOI_CALL_PWRITE, -1, 0};
    answer_status_checked(&OK, theirs);
    check_complete(&w, fails ? FWDIO_ECOMMIT : FWDIO_OK, &theirs);
    if (fails)
        CHECK(strstr(f->error_text, "pwrite of unit-session failed on rank 0 at offset 1000") !=
              NULL);
    world_free(&w);
}

static void test_other_rank_commits(void)
{
    other_rank_commits(0);
    other_rank_commits(1);
}

/* Writing the block fails on this rank (a pwrite, EIO): the job's error is
 * this rank's commit status, agreed, and every rank completes with it. */
static void test_commit_write_fails(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_storage_job_t *job = drive_to_commit_job(&w);
    job->status = FWDIO_ECOMMIT;
    job->sys_errno = EIO;
    job->err_offset = 1004;
    job->err_call = FWDIOI_CALL_PWRITE;
    job->fail_time = 2.5;
    fake_rt_io_done(&job->io);
    fwdioi_errinfo_t want = {FWDIO_ECOMMIT, ME, EIO, 1004, FWDIOI_CALL_PWRITE, -1, 0};
    CHECK(same(&f->s.commit.local, &want) && w.complete == 0);
    CHECK(f->s.stats.first_failure == 2.5); /* fwdio_file_stats_t.time_to_failure */
    answer_status_checked(&want, OK);
    check_complete(&w, FWDIO_ECOMMIT, &want);
    CHECK(strstr(f->error_text, "pwrite of unit-session failed on rank 1 at offset 1004") != NULL);
    CHECK(w.announced == 0); /* agreed, not aborted */
    world_free(&w);
}

/* The data failed (rank 0's final status) with atomic_replace and this
 * rank's block: the committer writes no block and removes the temporary
 * (a discarding job on the temporary, the target named); complete reports
 * the data's error, not the commit agreement's success. */
static void test_data_failed(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    make_atomic(f);
    set_block(f, "HEADER!!", 8, 1000);
    drive_to_final(&w, 1, 0, 0);
    fwdioi_errinfo_t data = {FWDIO_EWRITE, OTHER, ENOSPC, 4096, FWDIOI_CALL_PWRITE, -1, 0};
    answer_status(data);
    CHECK(same(&f->s.outcome.final_agreed, &data) && w.complete == 0);
    fwdioi_storage_job_t *job = take_commit_job(f);
    CHECK(job->discard && job->target == f->path && job->path == tmp);
    finish_commit(&w, job, FWDIO_EWRITE, &data);
}

/* atomic_replace and no block set anywhere: writer 0 (this rank, with the
 * writers' ranks swapped) renames the temporary over the target and writes
 * no block; the commit is agreed all the same. */
static void test_atomic_without_block(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    make_atomic(f);
    w.writer_ranks[0] = ME;
    w.writer_ranks[1] = OTHER;
    fwdioi_plan_init(&f->plan, f->size, &f->opts, w.nranks, w.writer_ranks, NWRITERS);
    f->my_writer = fwdioi_plan_writer_of_rank(&f->plan, ME);
    CHECK(f->my_writer == 0);
    drive_to_final(&w, 0, 0, 0);
    CHECK(f->s.commit.committers == 0 && f->s.commit.committer == ME);
    answer_status(OK);
    fwdioi_storage_job_t *job = take_commit_job(f);
    CHECK(!job->discard && job->target == f->path && job->path == tmp && job->nsegs == 0);
    finish_commit(&w, job, FWDIO_OK, &OK);
}

/* This rank and rank 0 both set a block: each says so in its final status
 * (FWDIO_EINVAL, naming the other, the count), rank 0's is agreed; writer 0
 * (rank 0) cleans up without a block, its commit still agreed here. */
static void test_two_committers(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    set_block(f, "HEADER!!", 8, 1000);
    drive_to_final(&w, 1, 1, OTHER);
    fwdioi_errinfo_t mine = {FWDIO_EINVAL, ME, 0, 1000, FWDIOI_REASON_COMMITTERS, OTHER, 2};
    fwdioi_errinfo_t theirs = {FWDIO_EINVAL, OTHER, 0, 2000, FWDIOI_REASON_COMMITTERS, ME, 2};
    CHECK(f->s.commit.committers == 2 && f->s.commit.committer == OTHER && same(&f->s.outcome.local_error, &mine));
    answer_status_checked(&mine, theirs);
    CHECK(same(&f->s.outcome.final_agreed, &theirs) && f->s.phase == FWDIOI_PHASE_COMMITTING);
    CHECK(fake_rt_io_queued() == 0 && w.complete == 0);
    answer_status_checked(&OK, OK);
    check_complete(&w, FWDIO_EINVAL, &theirs);
    CHECK(strstr(f->error_text, "on more than one rank (ranks 0 and 1)") != NULL);
    world_free(&w);
}

/* Of 4 ranks, this one and ranks 2 and 3 set a block: the sum of their
 * ranks names none of the others, so this rank's error (the lowest
 * committer's, agreed) gives their count. */
static void test_three_committers(void)
{
    world_t w;
    world_init_ranks(&w, 4);
    fwdio_file_t *f = &w.f;
    set_block(f, "HEADER!!", 8, 1000);
    drive_to_final(&w, 1, 2, 2 + 3);
    fwdioi_errinfo_t mine = {FWDIO_EINVAL, ME, 0, 1000, FWDIOI_REASON_COMMITTERS, -1, 3};
    fwdioi_errinfo_t rank2 = {FWDIO_EINVAL, 2, 0, 3000, FWDIOI_REASON_COMMITTERS, -1, 3};
    CHECK(f->s.commit.committers == 3 && f->s.commit.committer == OTHER && same(&f->s.outcome.local_error, &mine));
    answer_status_checked(&mine, rank2);
    CHECK(same(&f->s.outcome.final_agreed, &mine) && fake_rt_io_queued() == 0);
    answer_status(OK);
    check_complete(&w, FWDIO_EINVAL, &mine);
    CHECK(strstr(f->error_text, "on 3 ranks (rank 1 among them)") != NULL);
    world_free(&w);
}

/* A stream's blocks set after its last step end (several on one rank): one
 * job writes them all, in the order they were set. */
static void test_several_blocks_in_order(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    set_block(f, "third!", 6, 9000);
    set_block(f, "first", 5, 0);
    set_block(f, "second", 6, 4096);
    drive_to_final(&w, 1, 0, 0);
    answer_status(OK);
    fwdioi_storage_job_t *job = take_commit_job(f);
    CHECK(!job->discard && job->nsegs == 3);
    CHECK(job_writes(job, 0, "third!", 6, 9000) && job_writes(job, 1, "first", 5, 0) &&
          job_writes(job, 2, "second", 6, 4096));
    finish_commit(&w, job, FWDIO_OK, &OK);
}

/* The commit agreement's MPI call fails on this rank, `refused` at its
 * start or failing on completion, this rank the committer (`commits`) or
 * not: the file aborts with FWDIO_EMPI naming the commit agreement, tells
 * the other ranks, completes with it and keeps its communicator for late
 * data. */
static void commit_agreement_fails(int commits, int refused)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    const int rc = MPI_ERR_OTHER;
    if (commits)
        set_block(f, "HEADER!!", 8, 1000);
    drive_to_final(&w, commits, !commits, OTHER);
    if (refused && !commits) /* it starts as the final status is agreed */
        fake_comm_fail(FAKE_COMM_ALLREDUCE, rc);
    answer_status(OK);
    if (commits) {
        fwdioi_storage_job_t *job = take_commit_job(f);
        if (refused)
            fake_comm_fail(FAKE_COMM_ALLREDUCE, rc);
        fake_rt_io_done(&job->io);
    }
    if (!refused) {
        take(FAKE_COMM_ALLREDUCE);
        fake_rt_complete_oldest(rc);
    }
    fwdioi_errinfo_t want = {FWDIO_EMPI, ME, rc, 0, FWDIOI_REASON_MPI + FWDIOI_MPI_AGREE_COMMIT,
                             -1, 0};
    CHECK(f->s.outcome.aborted && same(&f->s.outcome.abort_info, &want));
    CHECK(w.announced == 1 && same(&w.announced_why, &want));
    check_complete(&w, FWDIO_EMPI, &want);
    CHECK(strstr(f->error_text, fwdioi_mpi_call_name(FWDIOI_MPI_AGREE_COMMIT)) != NULL);
    CHECK(w.zombies == 1 && fake_comm_frees() == 0);
    CHECK(!strcmp(w.events, "oRcdxeC"));
    world_free(&w);
}

static void test_commit_agreement_fails(void)
{
    for (int commits = 0; commits < 2; commits++) {
        commit_agreement_fails(commits, 1);
        commit_agreement_fails(commits, 0);
    }
}

/* Rank 0's abort is heard while this rank writes the block: no commit
 * agreement starts, and the file completes with rank 0's error once the
 * job is back (its block is in the job's hands until then). */
static void test_abort_heard_while_writing_block(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    fwdioi_storage_job_t *job = drive_to_commit_job(&w);
    fwdioi_errinfo_t why = {FWDIO_EMPI, OTHER, MPI_ERR_OTHER, 0,
                            FWDIOI_REASON_MPI + FWDIOI_MPI_AGREE_COMMIT, -1, 0};
    fwdioi_step_outcome_t steps = {0, 0, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &why, &steps);
    CHECK(f->s.outcome.aborted && w.announced == 0 && w.complete == 0 && f->s.io_pending == 1);
    CHECK(job_writes(job, 0, "HEADER!!", 8, 1000)); /* the block still whole */
    fake_rt_io_done(&job->io);
    /* check, open, close, final: no commit agreement */
    CHECK(fake_comm_count(FAKE_COMM_ALLREDUCE) == 4);
    check_complete(&w, FWDIO_EMPI, &why);
    CHECK(!f->s.outcome.abandoned && w.zombies == 1 && w.kept_zombies == 0);
    world_free(&w);
}

/* Rank 0's abort is heard while the commit status is agreed (rank 0 wrote
 * the block): the agreement is given up (with the communicator, MPI's
 * now), and the file completes with rank 0's error. */
static void test_abort_heard_while_agreeing(void)
{
    world_t w;
    world_init(&w);
    fwdio_file_t *f = &w.f;
    drive_to_final(&w, 0, 1, OTHER);
    answer_status(OK);
    take(FAKE_COMM_ALLREDUCE); /* the commit agreement, never answered */
    CHECK(fake_rt_requests_of(f) == 1);
    fwdioi_errinfo_t why = {FWDIO_ECOMMIT, OTHER, EIO, 0, FWDIOI_CALL_RENAME, -1, 0};
    fwdioi_step_outcome_t steps = {0, 0, FWDIOI_ERRINFO_OK};
    fwdioi_outcome_abort_heard(f, &why, &steps);
    check_complete(&w, FWDIO_ECOMMIT, &why);
    CHECK(w.announced == 0 && f->s.outcome.abandoned && w.zombies == 1 && w.kept_zombies == 1);
    world_free(&w);
}

int main(void)
{
    test_this_rank_commits();
    test_other_rank_commits();
    test_commit_write_fails();
    test_data_failed();
    test_atomic_without_block();
    test_two_committers();
    test_three_committers();
    test_several_blocks_in_order();
    test_commit_agreement_fails();
    test_abort_heard_while_writing_block();
    test_abort_heard_while_agreeing();
    unit_failures += world_failures();
    return unit_result("unit_commit_agreement");
}
