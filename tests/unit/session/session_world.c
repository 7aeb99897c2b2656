/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The session's unit tests' world (session_world.h): the file and its
 * runtime, the writer role and the application's callbacks played by the
 * test, the other ranks' side of the collectives, and the modules around
 * the session faked as a file without a stream, the node-shared area or the
 * node-local tier sees them.
 */
#include "session_world.h"

#include "fake_file.h"
#include "fake_runtime.h"
#include "agreement/minloc.h"
#include "unit_check.h"

#include "local/local_life.h"
#include "local/local_restart.h"
#include "local/local_tier.h"
#include "node/shared_path.h"
#include "read/requester.h"
#include "agreement/abort.h"
#include "agreement/agree.h"
#include "agreement/relay_send.h"
#include "session/dormant.h"
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

world_t *W;
const fwdioi_errinfo_t OK = FWDIOI_ERRINFO_OK;

int world_failures(void) { return unit_failures; }

static void event(char c)
{
    if (W->nevents < (int)sizeof W->events - 1)
        W->events[W->nevents++] = c;
}

/* ---- the writer role, played by the test ---- */

/* as the writer does: OPENING while its open job runs (writer.c) */
static void role_open(fwdio_file_t *f)
{
    f->s.phase = FWDIOI_PHASE_OPENING;
    event('o');
}
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

void file_init(world_t *w, fwdio_file_t *f, char *path, int *writer_ranks, uint64_t seq)
{
    fake_file_shape_t shape = {1 << 20, 1 << 16, 1 << 16, w->nranks, NWRITERS, ME,
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

void world_init(world_t *w) { world_init_ranks(w, 2); }

void world_init_ranks(world_t *w, int nranks)
{
    memset(w, 0, sizeof *w);
    W = w;
    w->nranks = nranks;
    w->cfg.files_in_flight = 1; /* no duplicate made ahead: one in flight at a time */
    w->cfg.watchdog = FWDIO_WATCHDOG_OFF;
    w->o.engine = fake_rt_create(ME, nranks, &w->cfg);
    w->o.session_ops = &fwdioi_session_ops;
    LIST_INIT(&w->o.active);
    LIST_INIT(&w->o.polled);
    LIST_INIT(&w->o.draining);
    STAILQ_INIT(&w->o.dups);
    STAILQ_INIT(&w->o.area_blocked);
    w->o.dup_next = w->o.spare = MPI_COMM_NULL;
    w->o.dup_slot = w->o.spare_slot = -1;
    fwdioi_comm_pool_init(&w->o.comm_pool);
    w->o.broken = FWDIOI_ERRINFO_OK;
    fake_comm_reset();
    file_init(w, &w->f, "unit-session", w->writer_ranks, 0);
}

static void file_free(fwdio_file_t *f)
{
    fwdioi_commit_set_free(&f->commit); /* file_life.c frees it with the file */
    free(f->s.sent_bytes);
    free(f->s.expected_bytes);
    free(f->writer_bytes_agreed);
}

static void free_comm(MPI_Comm *comm) { MPI_Comm_free(comm); }

void world_free(world_t *w)
{
    /* the communicator chosen ahead for the next file (finish_session
     * starts the choice once the file gave its communicator back) is
     * chosen; nothing else is left behind */
    if (w->o.dup_in_flight)
        finish_dup(MPI_SUCCESS);
    CHECK(fake_rt_requests() == 0 && fake_comm_started() == 0);
    file_free(&w->f);
    file_free(&w->g);
    if (w->o.spare != MPI_COMM_NULL)
        MPI_Comm_free(&w->o.spare);
    fwdioi_comm_pool_drain(&w->o.comm_pool, free_comm);
    fwdioi_u64map_free(&w->o.active_by_seq);
    fwdioi_u64map_free(&w->o.active_by_path);
    fwdioi_dormant_free(&w->o);
    fake_rt_destroy(w->o.engine);
    W = NULL;
}

int same(const fwdioi_errinfo_t *a, const fwdioi_errinfo_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* ---- the other ranks' side of the collectives ---- */

/* The oldest collective started, which must be of kind `call`. */
fake_coll_t take(fake_comm_call_t call)
{
    fake_coll_t c = {FAKE_COMM_NCALLS, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL};
    CHECK(fake_comm_take(&c));
    CHECK(c.call == call);
    return c;
}

/* The choice of a communicator in flight: the other rank offers
 * `other_offer`; the AND completed. */
uint64_t answer_pick(uint64_t other_offer)
{
    fake_coll_t c = take(FAKE_COMM_PICK);
    const uint64_t *in = c.in;
    uint64_t *out = c.out;
    *out = *in & other_offer;
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(MPI_SUCCESS);
    return *out;
}

/* The choice in flight completes: the other rank offers every slot, so a
 * slot idle here is taken; else the duplication follows and completes with
 * `mpi_error` (MPI_SUCCESS when a kept communicator was taken). */
void finish_dup(int mpi_error)
{
    if (answer_pick(~(uint64_t)0) != 0) {
        CHECK(mpi_error == MPI_SUCCESS);
        return;
    }
    take(FAKE_COMM_IDUP);
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(mpi_error);
}

/* The open check in flight: rank 0 passed `fields`; reduced, completed. */
void answer_check_with(const int64_t *fields, const fwdioi_errinfo_t *local)
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

void answer_check(const int64_t *fields)
{
    const fwdioi_errinfo_t ok = FWDIOI_ERRINFO_OK;
    answer_check_with(fields, &ok);
}

/* The status agreement in flight: rank 0 saw `other`; reduced, completed. */
void answer_status(fwdioi_errinfo_t other) { answer_status_checked(NULL, other); }

void answer_status_among(fwdioi_errinfo_t other, size_t pending)
{
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE);
    CHECK(c.count == FWDIOI_ERRINFO_PAIRS && c.type == MPI_LONG_INT && c.op == MPI_MINLOC);
    fwdioi_agree_pair_t pairs[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_pack(&other, OTHER, pairs);
    memcpy(c.out, c.in, sizeof pairs);
    minloc(pairs, c.out, FWDIOI_ERRINFO_PAIRS);
    CHECK(fake_rt_requests() == pending);
    fake_rt_complete_oldest(MPI_SUCCESS);
}

void answer_status_checked(const fwdioi_errinfo_t *mine_want, fwdioi_errinfo_t other)
{
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE);
    CHECK(c.count == FWDIOI_ERRINFO_PAIRS && c.type == MPI_LONG_INT && c.op == MPI_MINLOC);
    if (mine_want) {
        fwdioi_errinfo_t mine;
        fwdioi_errinfo_unpack(c.in, &mine);
        CHECK(same(&mine, mine_want));
    }
    fwdioi_agree_pair_t pairs[FWDIOI_ERRINFO_PAIRS];
    fwdioi_errinfo_pack(&other, OTHER, pairs);
    memcpy(c.out, c.in, sizeof pairs);
    minloc(pairs, c.out, FWDIOI_ERRINFO_PAIRS);
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(MPI_SUCCESS);
}

void answer_close_commits(const uint64_t *mine_want, int mine_commits,
                          const uint64_t *other_bytes, int other_commits, uint64_t other_ranks)
{
    fake_coll_t c = take(FAKE_COMM_ALLREDUCE);
    CHECK(c.count == NSUMS && c.type == MPI_UINT64_T && c.op == MPI_SUM);
    const uint64_t *in = c.in;
    uint64_t *out = c.out;
    for (int i = 0; i < NWRITERS; i++)
        CHECK(in[i] == mine_want[i]);
    CHECK(in[NWRITERS + FWDIOI_SUM_COMMITS] == (uint64_t)mine_commits);
    CHECK(in[NWRITERS + FWDIOI_SUM_COMMITTER] == (mine_commits ? (uint64_t)ME : 0));
    uint64_t other[NSUMS] = {0};
    memcpy(other, other_bytes, NWRITERS * sizeof *other);
    other[NWRITERS + FWDIOI_SUM_COMMITS] = (uint64_t)other_commits;
    other[NWRITERS + FWDIOI_SUM_COMMITTER] = other_ranks;
    for (int i = 0; i < NSUMS; i++)
        out[i] = in[i] + other[i];
    CHECK(fake_rt_requests() == 1);
    fake_rt_complete_oldest(MPI_SUCCESS);
}

void answer_close(const uint64_t *mine_want, const uint64_t *other_bytes)
{
    answer_close_commits(mine_want, 0, other_bytes, 0, 0);
}

/* ---- driving a file ---- */

void open_file(world_t *w, fwdio_file_t *f)
{
    fwdioi_rt_submit(w->o.engine, &f->open_task);
}

void close_file(world_t *w, fwdio_file_t *f)
{
    fwdioi_rt_submit(w->o.engine, &f->close_task);
}

/* The file through its duplication and check (rank 0 agreeing) to the role's
 * open. */
void drive_to_role_open(world_t *w)
{
    fwdio_file_t *f = &w->f;
    open_file(w, f);
    /* the choice first (the pool is empty: nothing idle), then the duplication */
    CHECK(f->s.phase == FWDIOI_PHASE_DUP && fake_comm_count(FAKE_COMM_PICK) == 1 &&
          fake_comm_dups() == 0);
    finish_dup(MPI_SUCCESS);
    CHECK(f->s.phase == FWDIOI_PHASE_CHECKING && f->s.comm != MPI_COMM_NULL);
    CHECK(fake_comm_dups() == 1 && f->s.links.comm_slot == 0 && w->o.comm_pool.made == 1);
    answer_check(f->check_fields);
    CHECK(f->s.phase == FWDIOI_PHASE_OPENING && !strcmp(w->events, "o"));
}

/* ... and on, through the open agreement, to ready. */
void drive_to_open(world_t *w)
{
    fwdio_file_t *f = &w->f;
    drive_to_role_open(w);
    fwdioi_outcome_opened(f); /* the writer's open job is done */
    CHECK(f->s.phase == FWDIOI_PHASE_OPENING);
    answer_status(OK);
    CHECK(f->s.phase == FWDIOI_PHASE_OPEN && w->ready == 1 && w->ready_status == FWDIO_OK);
}

/* ... closed here, with its close agreement in flight. */
void drive_to_closing(world_t *w)
{
    fwdio_file_t *f = &w->f;
    drive_to_open(w);
    f->s.sent_bytes[0] = 300; /* what this rank sent each writer */
    f->s.sent_bytes[1] = 500;
    close_file(w, f);
    CHECK(f->s.phase == FWDIOI_PHASE_CLOSING && fake_comm_started() == 1);
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

void fwdioi_relay_send(struct fwdio_runtime *o, const int64_t *msg, int n, int tag, int except,
                       const char *what)
{
    (void)o;
    (void)what;
    CHECK(n == 1 && tag == FWDIOI_TAG_WAKE && msg[0] >= 0);
    W->wakes_told++;
    W->wake_except = except;
}


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
                              void (*announce)(fwdio_file_t *f, const fwdioi_errinfo_t *why),
                              void (*comm_done)(fwdio_file_t *f, MPI_Comm *comm, int reusable))
{
    (void)f;
    (void)final;
    (void)comm;
    (void)path_free;
    (void)announce;
    (void)comm_done;
    return 0; /* not of the tier: no drain */
}

int fwdioi_step_drains_start(fwdio_file_t *f, MPI_Comm file_comm,
                             void (*resume)(fwdio_file_t *f),
                             void (*fail)(fwdio_file_t *f, const fwdioi_errinfo_t *why))
{
    (void)f;
    (void)file_comm;
    (void)resume;
    (void)fail;
    return MPI_SUCCESS; /* not a stream of the tier */
}

int fwdioi_step_drains_dup_pending(const fwdio_file_t *f)
{
    (void)f;
    return 0;
}

void fwdioi_step_drains_give_up(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    (void)f;
    (void)why;
}

void fwdioi_local_drain_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why)
{
    (void)f;
    (void)why;
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
int fwdioi_local_drain_abort_heard(struct fwdio_runtime *o, uint64_t seq,
                                   const fwdioi_errinfo_t *why)
{
    (void)o;
    (void)seq;
    (void)why;
    CHECK(!"no drain here");
    return 0;
}
/* No file of the tier here: no writer waits for room. */
int fwdioi_local_room_poll(struct fwdio_runtime *o)
{
    (void)o;
    return 0;
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

/* The held writes go (the open succeeded): sent to their writers. */
void fwdioi_sender_release_held(fwdio_file_t *f)
{
    while (!STAILQ_EMPTY(&f->s.held)) {
        fwdioi_msg_t *m = (fwdioi_msg_t *)STAILQ_FIRST(&f->s.held);
        STAILQ_REMOVE_HEAD(&f->s.held, link);
        CHECK(m->writer >= 0 && m->writer < NWRITERS);
        W->held_sent[m->writer] += m->payload;
    }
}
void fwdioi_sender_drop(fwdio_file_t *f, fwdioi_msg_t *m, int status)
{
    (void)f;
    CHECK(status != FWDIO_OK);
    W->held_dropped += m->payload;
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
    CHECK(nranks == W->nranks && tag == FWDIOI_CLOSE_TAG && W->tag_set == FWDIOI_CLOSE_TAG);
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
