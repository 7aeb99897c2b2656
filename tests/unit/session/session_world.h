/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file's session (session/session.c) as its unit tests drive it
 * (session_world.c), against the fake runtime seam and fake communicator
 * calls (fake/): this rank is rank ME, a writer (writer 1 of NWRITERS, on
 * ranks 0 and 1). The test plays the other ranks in every agreement (it
 * writes what MPI would reduce of every rank's contribution, then completes
 * the request) and the writer role through the role table (its open, its
 * data done). The modules around the session (abort messages, steps,
 * sender, requester, node-shared path, node-local tier) are faked in
 * session_world.c, as a file without a stream, without the area and without
 * the tier sees them. test_session.c drives the phases and aborts,
 * test_commit_agreement.c the commit. No MPI launch.
 */
#ifndef FWDIO_UNIT_SESSION_WORLD_H
#define FWDIO_UNIT_SESSION_WORLD_H

#include "fake_comm.h"
#include "state.h"
#include "stream/steps.h"

enum { NWRITERS = 2, ME = 1, OTHER = 0, NSUMS = NWRITERS + FWDIOI_CLOSE_EXTRA };

/* What the modules around the session were told, in order where it matters. */
typedef struct world {
    fwdio_config_t cfg;
    struct fwdio_runtime o;
    int nranks;
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
    /* writes held for the open (the test queues them in f's s.held): the
     * bytes the fake sender sent once released, or dropped */
    uint64_t held_sent[NWRITERS], held_dropped;
    /* wakes (session/dormant.c): told to the neighbours (and the one left
     * out of the last); one heard is queued with fake_mpi_arrive_tag */
    int wakes_told, wake_except;
} world_t;

/** The world of the test running (the fakes record into it). */
extern world_t *W;
/** FWDIOI_ERRINFO_OK as an object. */
extern const fwdioi_errinfo_t OK;

/** A world of 2 ranks, its file f initialized (not opened). */
void world_init(world_t *w);
/** The same with `nranks` ranks (at least 2; the writers stay ranks 0, 1). */
void world_init_ranks(world_t *w, int nranks);
/** Initialize another file of the world (g), of sequence number `seq`. */
void file_init(world_t *w, fwdio_file_t *f, char *path, int *writer_ranks, uint64_t seq);
/** Check that nothing is left in flight, and free the world. */
void world_free(world_t *w);
/** Checks that failed inside the world's functions and fakes (their
 *  CHECKs count apart from the test file's): add to unit_failures. */
int world_failures(void);

int same(const fwdioi_errinfo_t *a, const fwdioi_errinfo_t *b);

/* ---- the other ranks' side of the collectives ---- */

/** The oldest collective started, which must be of kind `call`. */
fake_coll_t take(fake_comm_call_t call);
/** The status agreement in flight among `pending` tracked requests (the
 *  oldest, as answer_status): rank 0 saw `other`. */
void answer_status_among(fwdioi_errinfo_t other, size_t pending);
/** The choice of a communicator in flight: the other rank offers
 *  `other_offer` (pool slots); returns the AND, which the choice takes. */
uint64_t answer_pick(uint64_t other_offer);
/** The choice in flight completes: a kept communicator idle here is taken,
 *  else the duplication follows and completes with `mpi_error`. */
void finish_dup(int mpi_error);
/** The open check in flight: rank 0 passed `fields`; reduced, completed. */
void answer_check(const int64_t *fields);
/** ... and with rank 0's local error `local` (a refusal, say). */
void answer_check_with(const int64_t *fields, const fwdioi_errinfo_t *local);
/** The status agreement in flight: rank 0 saw `other`; reduced, completed. */
void answer_status(fwdioi_errinfo_t other);
/** The same, where this rank must contribute `mine_want` (NULL: anything). */
void answer_status_checked(const fwdioi_errinfo_t *mine_want, fwdioi_errinfo_t other);
/** The close agreement in flight: this rank's sums (`mine_want` per writer,
 *  no commit block) plus the other ranks' `other_bytes` (none set one). */
void answer_close(const uint64_t *mine_want, const uint64_t *other_bytes);
/** The same where this rank set a commit block (`mine_commits` 1) or not
 *  (0), and `other_commits` other ranks did, their ranks summing to
 *  `other_ranks`: the sums of who commits as MPI_SUM makes them. */
void answer_close_commits(const uint64_t *mine_want, int mine_commits,
                          const uint64_t *other_bytes, int other_commits, uint64_t other_ranks);

/* ---- driving a file ---- */

void open_file(world_t *w, fwdio_file_t *f);
void close_file(world_t *w, fwdio_file_t *f);
/** The file through its duplication and check (rank 0 agreeing) to the
 *  role's open. */
void drive_to_role_open(world_t *w);
/** ... and on, through the open agreement, to ready. */
void drive_to_open(world_t *w);
/** ... closed here (300 and 500 bytes sent to the writers), with its close
 *  agreement in flight. */
void drive_to_closing(world_t *w);

#endif
