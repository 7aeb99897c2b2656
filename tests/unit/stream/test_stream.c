/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stream's steps and appends (forwarder/stream/steps.c, appends.c) on
 * their own, against the fake runtime seam (tests/unit/fake): this rank's
 * messages are tagged with their step, fwdio_step_end's records reach the
 * progress thread (tasks run inline), and the test plays the other ranks:
 * it answers each agreement and scan the stream starts (the session's
 * fwdioi_session_agree, _agree_status and _scan_appends, faked below, record
 * them) with the
 * sums every rank would see. The writer, the sender and the session around
 * the stream are faked too: they record what the stream tells them, and the
 * appends' messages "sent" are copied into an image of the file, so the
 * cases check the bytes, their offsets and their step.
 *
 * Cases: steps agreed and completed in order, each message tagged with its
 * step and counted for its writer; a step's appended bytes placed after
 * lower ranks' and earlier steps'; a send of appends failing; appends past
 * the largest stream; ranks at
 * different steps (the tags of the counts disagree); a message untagged from
 * a step already agreed; a failed step failing the later ones without
 * agreements; an abort heard with how the other rank's steps ended; the
 * next step's MPI failure kept until the step being agreed is done; a step's
 * commit block written by its rank after the step is durable; two ranks
 * that set a block in one step; a file that is
 * no stream; a stream with offsets_only (no scan at a step's end or the
 * close). Milliseconds, no mpiexec, MPI never initialized.
 */
#include "fake_file.h"
#include "fake_runtime.h"
#include "unit_check.h"

#include "node/area_heap.h"
#include "node/node_area.h"
#include "agreement/agreements.h"
#include "agreement/outcome.h"
#include "state.h"
#include "storage/storage.h"
#include "stream/appends.h"
#include "stream/steps.h"
#include "stream/stream.h"
#include "write/message.h"
#include "write/sender.h"
#include "write/staging.h"
#include "write/writer.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_AGREES = 16, MAX_SENT = 64, MAX_STEPS = 16 };

/* An agreement or scan the stream started: the test completes it. */
typedef struct agreement {
    int call; /* fwdioi_mpi_call_t */
    const void *in;
    void *out;
    int count;
    fwdioi_req_cb_t done;
} agreement_t;

/* One message the stream handed to the sender. */
typedef struct sent {
    int writer;
    uint32_t wire_step;
    uint64_t payload;
} sent_t;

typedef struct world {
    fwdio_config_t cfg;
    struct fwdio_runtime o;
    fwdio_file_t f;
    int writer_ranks[8];
    uint64_t size;
    uint8_t *image;   /* the appends' bytes as sent */
    uint8_t *written; /* how often each byte was sent */
    /* the agreements started, in order; `next` the first not completed */
    agreement_t agrees[MAX_AGREES];
    int nagrees, next;
    /* what the stream told the others */
    sent_t sent[MAX_SENT];
    int nsent, dropped;
    int fail_send; /* the send of this message (1, 2, ...) fails (MPI_Isend) */
    int drains, data_done_calls, forgets, deferred_releases, held_releases;
    uint64_t drain_expected;
    int aborts, abort_notified, published, close_agreements, mpi_failures;
    fwdioi_errinfo_t abort_why, published_why;
    fwdioi_step_outcome_t announced;
    uint64_t staged; /* staging the appends hold */
    /* the step callbacks, in order */
    uint64_t cb_index[MAX_STEPS];
    int cb_status[MAX_STEPS];
    int ncb;
} world_t;

static world_t *W;

static uint8_t pattern(uint64_t offset) { return (uint8_t)(offset * 37u + 11u); }

/* What fwdioi_errinfo_set_mpi records, without asking MPI for the error's
 * class (MPI is never initialized here). */
static fwdioi_errinfo_t mpi_failure(int rank, int call, int mpi_rc)
{
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set_call(&why, FWDIO_EMPI, rank, mpi_rc, 0, FWDIOI_REASON_MPI + call);
    return why;
}

static void on_step(fwdio_file_t *f, uint64_t index, int status, void *user)
{
    (void)f;
    (void)user;
    if (W->ncb < MAX_STEPS) {
        W->cb_index[W->ncb] = index;
        W->cb_status[W->ncb] = status;
    }
    W->ncb++;
}

/* Rank `rank` of `nranks`, `nwriters` writers on the first ranks (cyclic
 * stripes of `stripe` bytes), a stream of at most `size` bytes whose appends
 * start at `append_start`; the file is open (its open agreed). */
static void world_init(world_t *w, uint64_t size, uint64_t stripe, int nranks, int nwriters,
                       int rank, uint64_t append_start, int stream)
{
    memset(w, 0, sizeof *w);
    W = w;
    w->size = size;
    w->cfg.staging_buffer = 1u << 20;
    w->cfg.max_message_size = 1u << 20;
    w->o.engine = fake_rt_create(rank, nranks, &w->cfg);
    LIST_INIT(&w->o.active);
    fwdio_file_t *f = &w->f;
    fake_file_shape_t shape = {size, stripe, stripe, nranks, nwriters, rank, FWDIO_LAYOUT_CYCLIC};
    fake_file_init(f, &w->o, "unit-stream", &shape, w->writer_ranks);
    f->stream = stream;
    f->cbs.step = on_step;
    fwdioi_append_list_init(&f->appends);
    f->s.phase = FWDIOI_PHASE_OPEN; /* checked and opened */
    w->image = calloc(size, 1);
    w->written = calloc(size, 1);
    if (!w->image || !w->written || (stream && fwdioi_stream_create(f, append_start) != 0))
        abort();
}

static void world_free(world_t *w)
{
    fwdioi_stream_free(&w->f);
    free(w->f.s.expected_bytes);
    fake_rt_destroy(w->o.engine);
    free(w->image);
    free(w->written);
    W = NULL;
}

/* fwdio_step_end on this rank, with `blocks` commit blocks of 8 bytes at
 * `block_at` (as api_steps.c queues it: its record is a task). */
static uint64_t end_step(int blocks, uint64_t block_at)
{
    fwdio_file_t *f = &W->f;
    fwdioi_step_t *step = fwdioi_step_new(f);
    CHECK(step != NULL);
    step->index = f->steps_ended++;
    for (int i = 0; i < blocks; i++) {
        fwdioi_commit_block_t *b = &step->commit.b[step->commit.n++];
        b->len = 8;
        b->offset = block_at + 8u * (uint64_t)i;
        b->buf = malloc(8);
        for (int k = 0; k < 8; k++)
            b->buf[k] = pattern(b->offset + (uint64_t)k);
    }
    fwdioi_append_list_move(&step->appends, &f->appends);
    uint64_t index = step->index;
    fwdioi_rt_submit(f->engine, &step->task);
    return index;
}

/* One of this rank's messages of `payload` bytes for writer `writer`
 * reaching the progress thread: tagged with its step, then "sent". */
static fwdioi_msg_t *message(int writer, uint64_t payload)
{
    fwdioi_msg_t *m = fwdioi_msg_new(&W->f, writer, sizeof(fwdioi_wire_header_t), 0, NULL, 0);
    CHECK(m != NULL);
    fwdioi_wire_header_t h = {0, 0};
    memcpy(m->wire, &h, sizeof h);
    m->payload = payload;
    fwdioi_steps_tag(&W->f, m);
    return m;
}

static uint32_t wire_step(const fwdioi_msg_t *m)
{
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    return h.step;
}

/* The oldest agreement not completed; it must be of `call`. */
static agreement_t *pending(int call)
{
    CHECK(W->next < W->nagrees);
    if (W->next >= W->nagrees)
        abort();
    agreement_t *a = &W->agrees[W->next];
    CHECK(a->call == call);
    return a;
}

static void complete(agreement_t *a, int mpi_error)
{
    W->next++;
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_ERROR = mpi_error;
    a->done(&W->f, &st);
}

/* Complete the next scan of appends: the lower ranks appended `lower`. */
static void answer_scan(uint64_t lower)
{
    agreement_t *a = pending(FWDIOI_MPI_SCAN_APPEND);
    *(uint64_t *)a->out = lower;
    complete(a, MPI_SUCCESS);
}

/* Complete the next counts agreement as every rank would see it: this rank's
 * elements plus `others` (the other ranks' bytes per writer, commits and
 * appended bytes), each rank having passed tag `tag`. */
static void answer_counts(const uint64_t *others, uint64_t tag)
{
    agreement_t *a = pending(FWDIOI_MPI_AGREE_STEP);
    const int nw = W->f.plan.nwriters, p = W->f.plan.nranks;
    const uint64_t *in = a->in;
    uint64_t *out = a->out;
    for (int i = 0; i < nw + FWDIOI_CLOSE_EXTRA; i++)
        out[i] = in[i] + (others ? others[i] : 0);
    out[nw + FWDIOI_SUM_TAG] = in[nw + FWDIOI_SUM_TAG] + (uint64_t)(p - 1) * tag;
    out[nw + FWDIOI_SUM_TAG2] = in[nw + FWDIOI_SUM_TAG2] + (uint64_t)(p - 1) * tag * tag;
    complete(a, MPI_SUCCESS);
}

/* Complete the next status agreement (a step's, or its commit's) with
 * `result`. */
static void answer_status(int call, fwdioi_errinfo_t result)
{
    agreement_t *a = pending(call);
    memcpy(a->out, &result, sizeof result);
    complete(a, MPI_SUCCESS);
}

/* The writer drained the head step (flushed, synced): what writer.c says. */
static void writer_drained(void)
{
    fwdioi_steps_data_done(&W->f);
}

/* fwdio_append on this rank: `len` bytes of the pattern as they will land
 * at file offset `at`. */
static int append(uint64_t at, size_t len)
{
    uint8_t *buf = malloc(len);
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(at + i);
    int rc = fwdioi_append(&W->f, buf, len);
    free(buf);
    return rc;
}

/* The image holds exactly [lo, hi) of the pattern, each byte once. */
static int image_is(uint64_t lo, uint64_t hi)
{
    for (uint64_t o = 0; o < W->size; o++) {
        int want = o >= lo && o < hi;
        if (want ? W->written[o] != 1 || W->image[o] != pattern(o) : W->written[o] != 0) {
            fprintf(stderr, "byte %llu: sent %d times, %d (want %s)\n", (unsigned long long)o,
                    W->written[o], W->image[o], want ? "once" : "none");
            return 0;
        }
    }
    return 1;
}

/* ---- the cases ---- */

/* Two steps of messages: each message carries its step, each step's counts
 * hold this rank's bytes per writer and its tag, the steps drain, agree and
 * complete in order, and the second one's scan starts only once the first
 * one's status agreement has; then the close. */
static void test_steps_in_order(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    const int nw = 2;
    fwdioi_msg_t *a = message(0, 100), *b = message(1, 50);
    CHECK(end_step(0, 0) == 0);
    fwdioi_msg_t *c = message(0, 7);
    CHECK(end_step(0, 0) == 1);
    CHECK(wire_step(a) == 0 && wire_step(b) == 0 && wire_step(c) == 1);
    CHECK(a->step == 0 && c->step == 1);
    CHECK(fwdioi_steps_pending(f) && fwdioi_steps_complete(f) == 0);
    /* only the first step's scan runs: the second waits for its sequence */
    CHECK(w.nagrees == 1);
    answer_scan(0);
    agreement_t *counts = pending(FWDIOI_MPI_AGREE_STEP);
    const uint64_t *in = counts->in;
    CHECK(in[0] == 100 && in[1] == 50 && in[nw + FWDIOI_SUM_COMMITS] == 0);
    CHECK(in[nw + FWDIOI_SUM_TAG] == 1 && in[nw + FWDIOI_SUM_TAG2] == 1);
    CHECK(in[nw + FWDIOI_SUM_APPENDED] == 0);
    uint64_t others[2 + FWDIOI_CLOSE_EXTRA] = {30, 20};
    answer_counts(others, 1);
    /* this rank writes for writer 1: the step's bytes for it are announced */
    CHECK(w.drains == 1 && w.drain_expected == 70);
    CHECK(w.nagrees == 2 && !fwdioi_steps_head_commits(f));
    writer_drained();
    /* the status agreement, then (its collectives all started) the next scan */
    CHECK(w.nagrees == 4 && w.agrees[2].call == FWDIOI_MPI_AGREE_STEP_FINAL &&
          w.agrees[3].call == FWDIOI_MPI_SCAN_APPEND);
    CHECK(w.ncb == 0);
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    CHECK(w.ncb == 1 && w.cb_index[0] == 0 && w.cb_status[0] == FWDIO_OK);
    CHECK(fwdioi_steps_complete(f) == 1 && f->steps_done == 1);
    CHECK(w.deferred_releases == 1); /* the writer may take the next step's bytes */
    answer_scan(0);
    counts = pending(FWDIOI_MPI_AGREE_STEP);
    in = counts->in;
    CHECK(in[0] == 7 && in[1] == 0 && in[nw + FWDIOI_SUM_TAG] == 2 &&
          in[nw + FWDIOI_SUM_TAG2] == 4);
    answer_counts(NULL, 2);
    CHECK(w.drains == 2 && w.drain_expected == 0);
    writer_drained();
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    CHECK(w.ncb == 2 && w.cb_index[1] == 1 && w.cb_status[1] == FWDIO_OK);
    CHECK(!fwdioi_steps_pending(f) && fwdioi_steps_complete(f) == 2);
    /* messages after the last step end belong to the next one */
    fwdioi_msg_t *d = message(1, 3);
    CHECK(wire_step(d) == 2);
    /* the close: a scan of the appends after the last step, then the close
     * agreement; nothing was appended */
    f->s.close_requested = 1;
    fwdioi_outcome_try_close(f);
    CHECK(w.close_agreements == 0);
    answer_scan(0);
    CHECK(w.close_agreements == 1 && fwdioi_steps_close_appended(f) == 0);
    CHECK(w.nagrees == w.next && w.aborts == 0);
    fwdioi_msg_free(f->engine, a);
    fwdioi_msg_free(f->engine, b);
    fwdioi_msg_free(f->engine, c);
    fwdioi_msg_free(f->engine, d);
    CHECK(fake_rt_bufs_out() == 0);
    world_free(&w);
}

/* Appends of a step go after the lower ranks' appends of the step (the
 * scan) and after everything earlier steps appended (the counts), from
 * append_start on; they are sent as the step's messages, counted per
 * writer in its counts, and their copies and staging go back once sent.
 * Those after the last step end are placed by the close's scan. */
static void test_append_bytes(void)
{
    world_t w;
    world_init(&w, 1 << 16, 1024, 3, 2, 1, 64, 1);
    fwdio_file_t *f = &w.f;
    const int nw = 2;
    /* step 0: 300 + 100 bytes here, 1000 below this rank, 500 above */
    const uint64_t at0 = 64 + 1000;
    CHECK(append(at0, 300) == FWDIO_OK && append(at0 + 300, 100) == FWDIO_OK);
    CHECK(w.staged == 400 && f->appends.bytes == 400);
    end_step(0, 0);
    CHECK(w.nsent == 0); /* held until the scan says where */
    answer_scan(1000);
    CHECK(image_is(at0, at0 + 400));
    for (int i = 0; i < w.nsent; i++)
        CHECK(w.sent[i].wire_step == 0);
    agreement_t *counts = pending(FWDIOI_MPI_AGREE_STEP);
    const uint64_t *in = counts->in;
    uint64_t per_writer[2] = {0, 0};
    for (uint64_t o = at0; o < at0 + 400; o++)
        per_writer[fwdioi_plan_stripe_writer(&f->plan, o / f->plan.stripe_size)]++;
    CHECK(in[0] == per_writer[0] && in[1] == per_writer[1]);
    CHECK(in[nw + FWDIOI_SUM_APPENDED] == 400);
    uint64_t others[2 + FWDIOI_CLOSE_EXTRA] = {0};
    others[nw + FWDIOI_SUM_APPENDED] = 1500; /* the other two ranks' appends */
    answer_counts(others, 1);
    CHECK(w.staged == 0); /* the copies went with their messages */
    writer_drained();
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_OK);
    /* step 1: after the 1900 bytes of step 0, and 5 bytes of lower ranks */
    const uint64_t at1 = 64 + 1900 + 5;
    CHECK(append(at1, 10) == FWDIO_OK);
    end_step(0, 0);
    answer_scan(5);
    int before = w.nsent;
    CHECK(before > 0 && w.sent[before - 1].wire_step == 1);
    answer_counts(NULL, 2);
    writer_drained();
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    /* after the last step end: placed by the close's scan, after 20 bytes of
     * lower ranks; the close agreement sums them */
    const uint64_t at2 = 64 + 1900 + 10 + 20; /* the others appended nothing in step 1 */
    CHECK(append(at2, 33) == FWDIO_OK);
    f->s.close_requested = 1;
    fwdioi_outcome_try_close(f);
    CHECK(fwdioi_steps_close_appended(f) == 33 && w.close_agreements == 0);
    answer_scan(20);
    CHECK(w.close_agreements == 1);
    CHECK(w.sent[w.nsent - 1].wire_step == 2); /* the step after the last one */
    uint8_t *expect = calloc(w.size, 1);
    for (uint64_t o = at0; o < at0 + 400; o++)
        expect[o] = 1;
    for (uint64_t o = at1; o < at1 + 10; o++)
        expect[o] = 1;
    for (uint64_t o = at2; o < at2 + 33; o++)
        expect[o] = 1;
    int ok = 1;
    for (uint64_t o = 0; o < w.size && ok; o++)
        ok = expect[o] ? w.written[o] == 1 && w.image[o] == pattern(o) : w.written[o] == 0;
    CHECK(ok);
    free(expect);
    CHECK(w.staged == 0 && w.o.append_held == 0 && fake_rt_bufs_out() == 0);
    CHECK(w.aborts == 0 && f->s.outcome.local_error.status == FWDIO_OK);
    world_free(&w);
}

/* A send of a step's appends fails: the file is aborted (announced), the
 * step's other messages are dropped, not sent, every copy and its staging
 * go back, the step's counts are not agreed, and the step fails with the
 * abort. */
static void test_append_send_fails(void)
{
    world_t w;
    world_init(&w, 1 << 16, 1024, 2, 2, 1, 0, 1);
    CHECK(append(0, 3000) == FWDIO_OK && append(3000, 500) == FWDIO_OK);
    end_step(0, 0);
    w.fail_send = 2;
    answer_scan(0);
    CHECK(w.aborts == 1 && w.abort_notified && w.abort_why.status == FWDIO_EMPI);
    CHECK(w.nsent == 1 && w.dropped >= 2); /* 3500 bytes over 1024-byte stripes */
    CHECK(w.staged == 0 && w.o.append_held == 0 && fake_rt_bufs_out() == 0);
    CHECK(w.nagrees == w.next); /* no counts agreement */
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_EMPI);
    world_free(&w);
}

/* Appends that the scan places past the largest size of the stream are not
 * sent: this rank's status says FWDIO_ERANGE at their offset, their copies
 * go back, and the step is still counted (every rank agrees). */
static void test_appends_past_end(void)
{
    world_t w;
    world_init(&w, 4096, 1024, 2, 1, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    CHECK(append(4000, 100) == FWDIO_OK);
    end_step(0, 0);
    answer_scan(4000); /* 4000 + 100 > 4096 */
    CHECK(w.nsent == 0 && image_is(0, 0));
    CHECK(f->s.outcome.local_error.status == FWDIO_ERANGE && f->s.outcome.local_error.offset == 4000);
    CHECK(w.staged == 0);
    agreement_t *counts = pending(FWDIOI_MPI_AGREE_STEP);
    CHECK(((const uint64_t *)counts->in)[1 + FWDIOI_SUM_APPENDED] == 100);
    answer_counts(NULL, 1);
    /* not a writer (rank 1, one writer): its status goes in at once */
    CHECK(w.drains == 0);
    agreement_t *status = pending(FWDIOI_MPI_AGREE_STEP_FINAL);
    CHECK(((const fwdioi_errinfo_t *)status->in)->status == FWDIO_ERANGE);
    fwdioi_errinfo_t agreed = f->s.outcome.local_error;
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, agreed);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_ERANGE);
    CHECK(w.published == 1 && w.published_why.status == FWDIO_ERANGE);
    world_free(&w);
}

/* Ranks at different steps: the counts' tags do not add up to every rank's
 * tag, so every rank gives up the file alike (FWDIO_EINVAL, steps); the
 * step completes with the abort. A message whose step is agreed already
 * cannot be taken back; one of the step being filled can. */
static void test_steps_out_of_order(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 3, 1, 0, 0, 1);
    fwdio_file_t *f = &w.f;
    fwdioi_msg_t *a = message(0, 10);
    end_step(0, 0);
    fwdioi_msg_t *b = message(0, 4);
    CHECK(fwdioi_steps_untag(f, a) == -1); /* its step's count is on its way */
    CHECK(fwdioi_steps_untag(f, b) == 0);
    fwdioi_msg_t *c = message(0, 6);
    (void)c;
    answer_scan(0);
    answer_counts(NULL, 2); /* the others passed the tag of step 1 */
    CHECK(w.aborts == 1 && w.abort_why.status == FWDIO_EINVAL &&
          w.abort_why.call == FWDIOI_REASON_STEPS && !w.abort_notified);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_EINVAL && !fwdioi_steps_pending(f));
    /* the second step ends after the abort: it fails at once */
    end_step(0, 0);
    CHECK(w.ncb == 2 && w.cb_index[1] == 1 && w.cb_status[1] == FWDIO_EINVAL);
    CHECK(w.nagrees == w.next);
    fwdioi_msg_free(f->engine, a);
    fwdioi_msg_free(f->engine, b);
    fwdioi_msg_free(f->engine, c);
    world_free(&w);
}

/* A step whose status is agreed failed fails the stream: later steps
 * complete with its status after their counts (every rank started those),
 * without a drain or a status agreement; an abort announced then says how
 * this rank's steps ended. */
static void test_failed_step(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    end_step(0, 0);
    end_step(0, 0);
    end_step(0, 0);
    answer_scan(0);
    answer_counts(NULL, 1);
    writer_drained();
    fwdioi_errinfo_t bad = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&bad, FWDIO_EWRITE, 0, 28, 8192);
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, bad);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_EWRITE);
    CHECK(w.published == 1 && w.published_why.status == FWDIO_EWRITE);
    answer_scan(0);
    answer_counts(NULL, 2);
    CHECK(w.ncb == 2 && w.cb_status[1] == FWDIO_EWRITE && w.drains == 1);
    answer_scan(0);
    answer_counts(NULL, 3);
    CHECK(w.ncb == 3 && w.cb_status[2] == FWDIO_EWRITE && w.drains == 1);
    CHECK(w.nagrees == w.next && !fwdioi_steps_pending(f));
    fwdioi_step_outcome_t out;
    fwdioi_steps_outcome(f, &out);
    CHECK(out.complete == 3 && out.ok == 0 && out.failed.status == FWDIO_EWRITE &&
          out.failed.offset == 8192);
    world_free(&w);
}

/* Another rank aborted after completing steps 0 and 1 there, step 1
 * failed: here the steps keep those statuses, and the later ones fail as
 * that one did (a failed step fails the stream). Without a failed step
 * there, the steps it had not completed fail with the abort. */
static void test_abort_heard(void)
{
    fwdioi_errinfo_t failed = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&failed, FWDIO_EWRITE, 0, 5, 0);
    fwdioi_errinfo_t why = mpi_failure(0, FWDIOI_MPI_AGREE_STEP, MPI_ERR_OTHER);
    const fwdioi_step_outcome_t cases[2] = {{2, 1, failed}, {1, 1, FWDIOI_ERRINFO_OK}};
    const int want[2][3] = {{FWDIO_OK, FWDIO_EWRITE, FWDIO_EWRITE},
                            {FWDIO_OK, FWDIO_EMPI, FWDIO_EMPI}};
    for (int c = 0; c < 2; c++) {
        world_t w;
        world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
        fwdio_file_t *f = &w.f;
        for (int i = 0; i < 3; i++)
            end_step(0, 0);
        fwdioi_steps_abort_heard(f, &cases[c]);
        fwdioi_step_outcome_t later = {0, 0, FWDIOI_ERRINFO_OK};
        fwdioi_steps_abort_heard(f, &later); /* the first one heard counts */
        fwdioi_outcome_abort(f, &why, 0);
        CHECK(w.ncb == 3);
        for (int k = 0; k < 3; k++)
            CHECK(w.cb_index[k] == (uint64_t)k && w.cb_status[k] == want[c][k]);
        world_free(&w);
    }
}

/* An MPI failure of the next step's scan while the first step's status is
 * being agreed (every rank takes part in that one) waits for it: the first
 * step completes as on every rank, then the abort is announced, with that
 * step counted as complete. */
static void test_deferred_abort(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    end_step(0, 0);
    end_step(0, 0);
    answer_scan(0);
    answer_counts(NULL, 1);
    writer_drained(); /* status agreement started, then the next scan */
    agreement_t *status = pending(FWDIOI_MPI_AGREE_STEP_FINAL);
    agreement_t *scan = &w.agrees[w.next + 1];
    CHECK(scan->call == FWDIOI_MPI_SCAN_APPEND);
    MPI_Status st;
    memset(&st, 0, sizeof st);
    st.MPI_ERROR = MPI_ERR_OTHER;
    scan->done(f, &st); /* completes first, with an error */
    CHECK(w.mpi_failures == 1 && w.aborts == 0 && w.ncb == 0);
    fwdioi_errinfo_t ok = FWDIOI_ERRINFO_OK;
    memcpy(status->out, &ok, sizeof ok);
    w.next++;
    memset(&st, 0, sizeof st);
    status->done(f, &st);
    CHECK(w.aborts == 1 && w.abort_notified && w.abort_why.status == FWDIO_EMPI);
    CHECK(w.announced.complete == 1 && w.announced.ok == 1);
    CHECK(w.ncb == 2 && w.cb_status[0] == FWDIO_OK && w.cb_status[1] == FWDIO_EMPI);
    world_free(&w);
}

/* A step with a commit block on this rank: the writers sync the step
 * (head_commits), its status is agreed, then this rank writes the block
 * (a COMMIT job of its bytes at its offset), and the commit's status is
 * agreed before the step completes. */
static void test_commit_step(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    end_step(2, 100);
    answer_scan(0);
    agreement_t *counts = pending(FWDIOI_MPI_AGREE_STEP);
    const uint64_t *in = counts->in;
    CHECK(in[2 + FWDIOI_SUM_COMMITS] == 1 && in[2 + FWDIOI_SUM_COMMITTER] == 1);
    answer_counts(NULL, 1);
    CHECK(w.drains == 1 && fwdioi_steps_head_commits(f));
    writer_drained();
    /* the scan of the next step waits: a commit agreement may follow */
    CHECK(w.nagrees == w.next + 1);
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    CHECK(w.ncb == 0 && fake_rt_io_queued() == 1 && f->s.io_pending == 1);
    fwdioi_storage_job_t *job = (fwdioi_storage_job_t *)fake_rt_io_take();
    CHECK(job->kind == FWDIOI_STORAGE_COMMIT && job->nsegs == 2);
    int bytes_ok = 1;
    for (size_t i = 0; i < job->nsegs; i++) {
        CHECK(job->segs[i].offset == 100 + 8 * i && job->segs[i].len == 8);
        for (uint64_t k = 0; k < job->segs[i].len; k++)
            bytes_ok &= job->segs[i].src[k] == pattern(job->segs[i].offset + k);
    }
    CHECK(bytes_ok);
    fake_rt_io_done(&job->io);
    CHECK(f->s.io_pending == 0);
    answer_status(FWDIOI_MPI_AGREE_STEP_COMMIT, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_OK && fwdioi_steps_complete(f) == 1);
    CHECK(w.nagrees == w.next);
    world_free(&w);
}

/* Rank 0 and this rank set commit blocks in the same step: this rank's
 * status says so (FWDIO_EINVAL at its block's offset, naming rank 0 and the
 * count), no block is written, and the step fails with the agreed error
 * (rank 0's, the lower rank's). */
static void test_two_committers_in_step(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    const int nw = 2;
    end_step(1, 100);
    answer_scan(0);
    uint64_t others[2 + FWDIOI_CLOSE_EXTRA] = {0};
    others[nw + FWDIOI_SUM_COMMITS] = 1; /* rank 0's block; its rank adds 0 */
    answer_counts(others, 1);
    fwdioi_errinfo_t mine = {FWDIO_EINVAL, 1, 0, 100, FWDIOI_REASON_COMMITTERS, 0, 2};
    CHECK(memcmp(&f->s.outcome.local_error, &mine, sizeof mine) == 0);
    CHECK(w.drains == 1);
    writer_drained();
    const fwdioi_errinfo_t *in = pending(FWDIOI_MPI_AGREE_STEP_FINAL)->in;
    CHECK(memcmp(in, &mine, sizeof mine) == 0);
    fwdioi_errinfo_t theirs = {FWDIO_EINVAL, 0, 0, 200, FWDIOI_REASON_COMMITTERS, 1, 2};
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, theirs);
    CHECK(fake_rt_io_queued() == 0 && f->s.io_pending == 0);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_EINVAL && fwdioi_steps_complete(f) == 1);
    world_free(&w);
}

/* A file that is no stream has no stream state: the stream's functions
 * answer as for a stream with no step, and leave its messages untagged. */
static void test_not_a_stream(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 0);
    fwdio_file_t *f = &w.f;
    CHECK(f->s.stream == NULL);
    fwdioi_msg_t *m = message(0, 10);
    CHECK(wire_step(m) == 0 && m->step == 0 && fwdioi_steps_untag(f, m) == 0);
    CHECK(!fwdioi_steps_pending(f) && fwdioi_steps_complete(f) == 0);
    CHECK(!fwdioi_steps_head_commits(f) && fwdioi_steps_close_appended(f) == 0);
    CHECK(fwdioi_steps_close_scanned(f) == 1 && w.nagrees == 0);
    fwdioi_step_outcome_t out;
    fwdioi_steps_outcome(f, &out);
    CHECK(out.complete == 0 && out.ok == 0 && out.failed.status == FWDIO_OK);
    f->s.close_requested = 1;
    fwdioi_steps_pump(f); /* straight to the close */
    CHECK(w.close_agreements == 1);
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&why, FWDIO_EWRITE, 0, 5, 0);
    CHECK(fwdioi_steps_defer_abort(f, FWDIOI_MPI_AGREE_STEP, &why) == 0);
    fwdioi_steps_end(f, &why);
    CHECK(w.ncb == 0);
    fwdioi_msg_free(f->engine, m);
    world_free(&w);
}

/* offsets_only: no rank appends, so a step's end agrees on its counts at
 * once and the close places nothing (no MPI_Iexscan at all). */
static void test_offsets_only(void)
{
    world_t w;
    world_init(&w, 1 << 16, 4096, 2, 2, 1, 0, 1);
    fwdio_file_t *f = &w.f;
    f->opts.offsets_only = 1;
    fwdioi_msg_t *a = message(0, 100);
    CHECK(end_step(0, 0) == 0);
    CHECK(w.nagrees == 1 && w.agrees[0].call == FWDIOI_MPI_AGREE_STEP);
    const uint64_t *in = pending(FWDIOI_MPI_AGREE_STEP)->in;
    CHECK(in[0] == 100 && in[1] == 0 && in[2 + FWDIOI_SUM_APPENDED] == 0);
    answer_counts(NULL, 1);
    writer_drained();
    answer_status(FWDIOI_MPI_AGREE_STEP_FINAL, (fwdioi_errinfo_t)FWDIOI_ERRINFO_OK);
    CHECK(w.ncb == 1 && w.cb_status[0] == FWDIO_OK && fwdioi_steps_complete(f) == 1);
    int before = w.nagrees;
    CHECK(fwdioi_steps_close_scanned(f) == 1 && w.nagrees == before);
    for (int i = 0; i < w.nagrees; i++)
        CHECK(w.agrees[i].call != FWDIOI_MPI_SCAN_APPEND);
    fwdioi_msg_free(f->engine, a);
    world_free(&w);
}

int main(void)
{
    test_steps_in_order();
    test_append_bytes();
    test_append_send_fails();
    test_appends_past_end();
    test_steps_out_of_order();
    test_failed_step();
    test_abort_heard();
    test_deferred_abort();
    test_commit_step();
    test_two_committers_in_step();
    test_not_a_stream();
    test_offsets_only();
    return unit_result("unit_stream");
}

/* ---- the modules around the stream, faked: what it tells them is
 * recorded in the world, and the cases check it ---- */

static void record_agreement(int call, const void *in, void *out, int count,
                             fwdioi_req_cb_t done)
{
    CHECK(W->nagrees < MAX_AGREES);
    if (W->nagrees >= MAX_AGREES)
        abort();
    W->agrees[W->nagrees++] = (agreement_t){call, in, out, count, done};
}

int fwdioi_session_agree(fwdio_file_t *f, int call, const void *in, void *out, int count,
                         MPI_Datatype type, MPI_Op op, fwdioi_req_cb_t done)
{
    (void)f;
    (void)type;
    (void)op;
    record_agreement(call, in, out, count, done);
    return 0;
}

/* A status agreement (the session packs it for MPI_MINLOC, session.c): the
 * errinfo in and the errinfo out, which the cases answer whole. */
int fwdioi_session_agree_status(fwdio_file_t *f, int call, const fwdioi_errinfo_t *in,
                                fwdioi_errinfo_t *out, fwdioi_req_cb_t done)
{
    (void)f;
    record_agreement(call, in, out, FWDIOI_ERRINFO_PAIRS, done);
    return 0;
}

int fwdioi_session_scan_appends(fwdio_file_t *f, const uint64_t *mine, uint64_t *prefix,
                                fwdioi_req_cb_t done)
{
    (void)f;
    record_agreement(FWDIOI_MPI_SCAN_APPEND, mine, prefix, 1, done);
    return 0;
}

/* As session.c: a failed MPI call aborts the file (notifying), unless the
 * stream keeps the abort for later. */
void fwdioi_outcome_mpi_failed(fwdio_file_t *f, int call, int mpi_rc)
{
    W->mpi_failures++;
    fwdioi_errinfo_t why = mpi_failure(f->rank, call, mpi_rc);
    if (fwdioi_steps_defer_abort(f, call, &why))
        return;
    fwdioi_outcome_abort(f, &why, 1);
}

int fwdioi_session_agreement_ok(fwdio_file_t *f, int call, const MPI_Status *st)
{
    if (st->MPI_ERROR == MPI_SUCCESS)
        return 1;
    fwdioi_outcome_mpi_failed(f, call, st->MPI_ERROR);
    return 0;
}

/* As session.c, the stream's part: the announced outcome, then its steps
 * complete with the abort. */
void fwdioi_outcome_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    if (f->s.outcome.aborted)
        return;
    W->aborts++;
    W->abort_why = *why;
    W->abort_notified = notify;
    f->s.outcome.aborted = 1;
    f->s.outcome.abort_info = *why;
    if (notify)
        fwdioi_steps_outcome(f, &W->announced);
    fwdioi_steps_fail_all(f, why);
}

void fwdioi_outcome_publish_error(fwdio_file_t *f, const fwdioi_errinfo_t *e)
{
    (void)f;
    W->published++;
    W->published_why = *e;
}

/* As session.c: the close agreement waits for the steps and the close's
 * scan of appends. */
void fwdioi_outcome_try_close(fwdio_file_t *f)
{
    fwdioi_session_t *s = &f->s;
    if (!s->close_requested || s->outcome.aborted || s->phase != FWDIOI_PHASE_OPEN ||
        fwdioi_steps_pending(f))
        return;
    if (!fwdioi_steps_close_scanned(f))
        return;
    W->close_agreements++;
    s->phase = FWDIOI_PHASE_CLOSING;
}

void fwdioi_outcome_finish_if_aborted(fwdio_file_t *f) { (void)f; }

/* No stream of the node-local tier here: its steps do not drain. */
int fwdioi_step_drains_dup_pending(const fwdio_file_t *f)
{
    (void)f;
    return 0;
}

void fwdioi_step_drains_complete(fwdio_file_t *f, uint64_t index, const fwdioi_errinfo_t *status)
{
    (void)f;
    (void)index;
    (void)status;
}

void fwdioi_writer_drain_step(fwdio_file_t *f, uint64_t expected)
{
    (void)f;
    W->drains++;
    W->drain_expected = expected;
}

void fwdioi_writer_forget_step(fwdio_file_t *f)
{
    (void)f;
    W->forgets++;
}

void fwdioi_writer_release_deferred(fwdio_file_t *f)
{
    (void)f;
    W->deferred_releases++;
}

void fwdioi_sender_release_held(fwdio_file_t *f)
{
    (void)f;
    W->held_releases++;
}

/* A message "sent": its pieces' bytes (lent by an append) go into the
 * image; then it is done with, as once its send completes. */
void fwdioi_sender_send(fwdio_file_t *f, fwdioi_msg_t *m)
{
    if (f->s.outcome.aborted) { /* as sender.c: nothing goes out after an abort */
        fwdioi_sender_drop(f, m, (int)f->s.outcome.abort_info.status);
        return;
    }
    if (W->fail_send == W->nsent + 1) {
        W->fail_send = 0;
        fwdioi_outcome_mpi_failed(f, FWDIOI_MPI_ISEND, MPI_ERR_OTHER);
        fwdioi_sender_drop(f, m, (int)f->s.outcome.abort_info.status);
        return;
    }
    CHECK(W->nsent < MAX_SENT);
    fwdioi_wire_header_t h;
    memcpy(&h, m->wire, sizeof h);
    if (W->nsent < MAX_SENT)
        W->sent[W->nsent++] = (sent_t){m->writer, h.step, m->payload};
    CHECK(m->lent != NULL && m->step == h.step);
    fwdioi_piece_t p;
    for (uint32_t i = 0; i < h.npieces; i++) {
        memcpy(&p, m->wire + sizeof h + i * sizeof p, sizeof p);
        CHECK(fwdioi_plan_owns(&f->plan, m->writer, p.offset, p.len));
        for (uint64_t b = 0; b < p.len && p.offset + b < W->size; b++) {
            W->image[p.offset + b] = m->lent_base[p.offset + b - m->lent_offset];
            W->written[p.offset + b]++;
        }
    }
    fwdioi_msg_free(f->engine, m);
}

void fwdioi_sender_drop(fwdio_file_t *f, fwdioi_msg_t *m, int status)
{
    (void)status;
    W->dropped++;
    fwdioi_msg_free(f->engine, m);
}

void fwdioi_msg_task(fwdioi_task_t *task)
{
    (void)task;
    CHECK(!"no message of the test runs as a task");
}

int fwdioi_write_refusal_locked(const fwdio_file_t *f)
{
    return f->app_closed ? FWDIO_ECLOSED : f->failed_known ? FWDIO_EFAILED : FWDIO_OK;
}

int fwdioi_staging_reserve_locked(fwdio_file_t *f, uint64_t bytes, int may_wait)
{
    (void)f;
    (void)may_wait;
    W->staged += bytes;
    return FWDIO_OK;
}

void fwdioi_staging_release(fwdio_file_t *f, uint64_t bytes)
{
    (void)f;
    CHECK(W->staged >= bytes);
    W->staged -= bytes;
}

void fwdioi_staging_release_locked(fwdio_file_t *f, uint64_t bytes)
{
    fwdioi_staging_release(f, bytes);
}

void fwdioi_staging_release_msg(fwdio_file_t *f, const fwdioi_msg_t *m)
{
    (void)f;
    (void)m;
}

