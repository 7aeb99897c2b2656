/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reader (forwarder/read/reader.c) on its own, against the fake runtime
 * seam (tests/unit/fake): read requests of other ranks arrive on a fake
 * wire, the reader cuts them at its units, reads each unit from a queue of
 * I/O jobs this test drains (filling the buffer from a pattern that stands
 * for the file), and answers every piece: its bytes, then the header that
 * names them, taken off the fake MPI_Isend queue and checked byte by byte.
 * The session around it is faked: it records what the reader tells it.
 *
 * Cases: pieces of several ranks' requests cut at units, a unit wanted twice
 * read once; a request for bytes another reader owns, one past the end, a
 * malformed request message; a pread that fails (answered with its status,
 * the unit read again when wanted again); units that wait for writer_buffer;
 * the close once every announced request is answered; an abort with preads
 * in flight, the descriptor closed after them. Milliseconds, no mpiexec,
 * MPI never initialized.
 */
#include "fake_file.h"
#include "fake_runtime.h"
#include "unit_check.h"

#include "read/read_wire.h"
#include "read/reader.h"
#include "agreement/outcome.h"
#include "state.h"
#include "storage/storage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct world {
    fwdio_config_t cfg;
    struct fwdio_runtime o;
    fwdio_file_t f;
    int writer_ranks[8];
    uint64_t size;
    /* what the reader told the session */
    int opened, aborts, abort_notified, check_done, mpi_failures;
    fwdioi_errinfo_t abort_why;
    /* storage */
    int reads, finishes, durable_finish;
    int fail_read; /* the next READ job fails (EIO) */
} world_t;

static world_t *W;

/* The file's bytes. */
static uint8_t pattern(uint64_t offset) { return (uint8_t)(offset * 29u + 3u); }

/* Reader `reader` (on rank `reader`) of a file of `size` bytes read by
 * `nranks` ranks through `nreaders` readers, cyclic stripes of `stripe`
 * bytes, units of `unit` bytes, writer_buffer `budget`; open. */
static void world_init(world_t *w, uint64_t size, uint64_t unit, uint64_t stripe, int nranks,
                       int nreaders, int reader, uint64_t budget)
{
    memset(w, 0, sizeof *w);
    W = w;
    w->size = size;
    w->cfg.writer_buffer = budget;
    w->o.engine = fake_rt_create(reader, nranks, &w->cfg);
    LIST_INIT(&w->o.active);
    fwdioi_wbudget_init(&w->o.wbuf, budget);
    fwdio_file_t *f = &w->f;
    fake_file_shape_t shape = {size, unit, stripe, nranks, nreaders, reader, FWDIO_LAYOUT_CYCLIC};
    fake_file_init(f, &w->o, "unit-reader", &shape, w->writer_ranks);
    f->reading = 1;
    if (fwdioi_reader_create(f) != 0)
        abort();
}

static void world_free(world_t *w)
{
    fwdioi_reader_free(&w->f);
    free(w->f.s.expected_bytes);
    fake_rt_destroy(w->o.engine);
    W = NULL;
}

/* The I/O threads' part: run every queued job as storage.c would, a READ
 * from the pattern. */
static void drain_io(void)
{
    fwdioi_io_job_t *io;
    while ((io = fake_rt_io_take()) != NULL) {
        fwdioi_storage_job_t *job = (fwdioi_storage_job_t *)io;
        switch (job->kind) {
        case FWDIOI_STORAGE_OPEN:
            CHECK(job->read_only);
            job->fd = 7;
            job->size = W->size;
            break;
        case FWDIOI_STORAGE_READ:
            W->reads++;
            CHECK(job->fd == 7 && job->base % W->f.plan.write_size == 0);
            if (W->fail_read) {
                W->fail_read = 0;
                job->status = FWDIO_EREAD;
                job->sys_errno = EIO;
                job->err_offset = job->base;
                break;
            }
            for (uint64_t b = 0; b < job->len; b++)
                job->dst[b] = pattern(job->base + b);
            job->bytes_written = job->len;
            break;
        case FWDIOI_STORAGE_FINISH:
            W->finishes++;
            W->durable_finish = job->durable;
            CHECK(job->fd == 7);
            break;
        default:
            CHECK(!"a job a reader does not make");
            break;
        }
        fake_rt_io_done(io);
    }
}

/* Open the file: the OPEN job, then the session's part (faked) makes it OPEN. */
static void open_file(void)
{
    fwdioi_reader_open(&W->f);
    CHECK(W->f.s.phase == FWDIOI_PHASE_OPENING && fake_rt_io_queued() == 1);
    drain_io();
    CHECK(W->opened == 1 && W->f.s.fd == 7);
    CHECK(W->f.s.outcome.open_local.status == FWDIO_OK &&
          W->f.s.outcome.open_local.offset == (int64_t)W->size); /* the size it found */
    W->f.s.phase = FWDIOI_PHASE_OPEN;
}

/* Rank `source` asks for [offset, offset + len) as its read `id`. */
static void request(int source, uint64_t id, uint64_t offset, uint64_t len)
{
    fwdioi_read_request_t q = {id, offset, len};
    fake_mpi_arrive(source, &q, sizeof q);
}

/* What the progress thread does for the file: take requests, their
 * receives complete, the units are read, the answers' sends complete. */
static void tick(void)
{
    fwdioi_reader_probe(&W->f);
    fake_rt_complete_requests(MPI_SUCCESS);
    drain_io();
    fake_rt_complete_requests(MPI_SUCCESS);
}

/* One answer as a requester sees it. */
typedef struct answer {
    int dest;
    fwdioi_read_header_t h;
    int bytes_ok; /* the bytes before the header were the piece's, in full */
} answer_t;

/* Take every answer sent: each piece's bytes (DATA) come right before its
 * header (HDR) to the same rank; a failed piece has a header only. */
static int take_answers(answer_t *out, int cap)
{
    static uint8_t buf[1 << 16];
    int n = 0, dest, tag;
    size_t len;
    int have_data = 0, data_dest = -1;
    size_t data_len = 0;
    static uint8_t data[1 << 16];
    while (fake_mpi_sent_take(&dest, &tag, buf, sizeof buf, &len)) {
        if (tag == FWDIOI_TAG_READ_DATA) {
            CHECK(!have_data);
            have_data = 1;
            data_dest = dest;
            data_len = len;
            memcpy(data, buf, len < sizeof data ? len : sizeof data);
            continue;
        }
        CHECK(tag == FWDIOI_TAG_READ_HDR && len == sizeof(fwdioi_read_header_t));
        answer_t a = {dest, {0}, 0};
        memcpy(&a.h, buf, sizeof a.h);
        if (a.h.status == FWDIO_OK) {
            CHECK(have_data && data_dest == dest && data_len == a.h.len);
            a.bytes_ok = have_data && data_dest == dest && data_len == a.h.len;
            for (uint64_t b = 0; a.bytes_ok && b < a.h.len; b++)
                a.bytes_ok = data[b] == pattern(a.h.offset + b);
        } else {
            CHECK(!have_data);
        }
        have_data = 0;
        if (n < cap)
            out[n] = a;
        n++;
    }
    CHECK(!have_data);
    return n;
}

/* The answer to (dest, id) at `offset`, or NULL. */
static const answer_t *find(const answer_t *a, int n, int dest, uint64_t id, uint64_t offset)
{
    for (int i = 0; i < n; i++)
        if (a[i].dest == dest && a[i].h.id == id && a[i].h.offset == offset)
            return &a[i];
    return NULL;
}

/* ---- the cases ---- */

/* Two ranks' requests: each is answered piece by piece, a piece the
 * request's bytes within one of this reader's units, with the file's
 * bytes; a unit both want is read once; bytes of the other reader's
 * stripes are not this reader's to answer. Then the close: once every
 * announced request was taken and answered, the descriptor is closed. */
static void test_pieces_and_units(void)
{
    world_t w;
    /* units of 4 KiB, stripes of 8 KiB over 2 readers: reader 0 has
     * [0, 8192), [16384, 24576), ... */
    world_init(&w, 65536, 4096, 8192, 3, 2, 0, 1 << 20);
    open_file();
    request(1, 11, 0, 20000);  /* its units 0, 1 and 4 (to 20000) */
    request(2, 22, 4000, 400); /* units 0 and 1 again */
    tick();
    CHECK(w.reads == 3);
    answer_t a[16];
    int n = take_answers(a, 16);
    CHECK(n == 5);
    const answer_t *p;
    p = find(a, n, 1, 11, 0);
    CHECK(p && p->h.len == 4096 && p->h.status == FWDIO_OK && p->bytes_ok);
    p = find(a, n, 1, 11, 4096);
    CHECK(p && p->h.len == 4096 && p->bytes_ok);
    p = find(a, n, 1, 11, 16384);
    CHECK(p && p->h.len == 20000 - 16384 && p->bytes_ok);
    p = find(a, n, 2, 22, 4000);
    CHECK(p && p->h.len == 96 && p->bytes_ok); /* to the end of unit 0 */
    p = find(a, n, 2, 22, 4096);
    CHECK(p && p->h.len == 304 && p->bytes_ok);
    CHECK(w.aborts == 0 && w.f.s.sends_pending == 0 && w.f.s.recvs_pending == 0);
    CHECK(fwdioi_reader_busy(&w.f));
    /* the close: two requests announced to this reader */
    w.f.s.expected_bytes[0] = 3; /* request messages */
    w.f.s.close_agreed = 1;
    CHECK(!fwdioi_reader_done(&w.f)); /* one more to come */
    request(1, 12, 24000, 10); /* in its unit 5 */
    tick();
    n = take_answers(a, 16);
    CHECK(n == 1 && a[0].h.offset == 24000 && a[0].h.len == 10 && a[0].bytes_ok);
    CHECK(w.reads == 4);
    CHECK(!fwdioi_reader_done(&w.f) && w.finishes == 0); /* its close job starts */
    drain_io();
    CHECK(w.finishes == 1 && !w.durable_finish && w.f.s.fd == -1);
    CHECK(fwdioi_reader_done(&w.f) && w.check_done > 0);
    CHECK(w.o.wbuf.held == 0);
    world_free(&w);
}

/* Requests that cannot be this reader's fail the file everywhere (their
 * requester would wait for ever): bytes only another reader owns, bytes past
 * the end, a message that is no list of requests. */
static void test_bad_requests(void)
{
    for (int c = 0; c < 3; c++) {
        world_t w;
        world_init(&w, 65536, 4096, 8192, 3, 2, 0, 1 << 20);
        open_file();
        if (c == 0) {
            request(1, 1, 8192, 100); /* reader 1's stripe */
        } else if (c == 1) {
            request(1, 1, 65000, 1000); /* past the end */
        } else {
            uint8_t junk[sizeof(fwdioi_read_request_t) + 3] = {0};
            fake_mpi_arrive(2, junk, sizeof junk);
        }
        tick();
        CHECK(w.aborts == 1 && w.abort_notified && w.abort_why.status == FWDIO_EPROTO &&
              w.abort_why.call == FWDIOI_REASON_BAD_READ);
        CHECK(w.abort_why.other_rank == (c == 2 ? 2 : 1));
        CHECK(fake_mpi_sent() == 0 && w.reads == 0);
        world_free(&w);
    }
}

/* A pread that fails: the pieces waiting for the unit are answered with
 * its status and no bytes, this rank's error says where, and the unit is
 * not kept: wanted again, it is read again. */
static void test_pread_fails(void)
{
    world_t w;
    world_init(&w, 32768, 4096, 4096, 2, 1, 0, 1 << 20);
    open_file();
    w.fail_read = 1;
    request(1, 5, 100, 200);
    tick();
    answer_t a[4];
    int n = take_answers(a, 4);
    CHECK(n == 1 && a[0].h.status == FWDIO_EREAD && a[0].h.offset == 100 && a[0].h.len == 200);
    CHECK(w.f.s.outcome.local_error.status == FWDIO_EREAD && w.f.s.outcome.local_error.offset == 0);
    CHECK(w.o.wbuf.held == 0 && w.aborts == 0);
    request(1, 6, 100, 200);
    tick();
    n = take_answers(a, 4);
    CHECK(w.reads == 2 && n == 1 && a[0].h.status == FWDIO_OK && a[0].bytes_ok);
    world_free(&w);
}

/* writer_buffer holds two units: the reader reads at most two at once, the
 * others wait; idle units make room for the waiting ones; every piece is
 * answered in the end, within the budget. */
static void test_budget(void)
{
    world_t w;
    world_init(&w, 32768, 4096, 4096, 2, 1, 0, 8192);
    open_file();
    request(1, 1, 0, 24576); /* six units */
    fwdioi_reader_probe(&w.f);
    fake_rt_complete_requests(MPI_SUCCESS);
    CHECK(fake_rt_io_queued() == 2 && w.o.wbuf.held == 8192);
    int answered = 0, rounds = 0;
    answer_t a[16];
    while (answered < 6 && rounds++ < 10) {
        drain_io();
        CHECK(w.o.wbuf.held <= 8192);
        fake_rt_complete_requests(MPI_SUCCESS); /* the answers' sends: units idle */
        fwdioi_reader_probe(&w.f);              /* memory back: the next units */
        int n = take_answers(a, 16);
        for (int i = 0; i < n && i < 16; i++)
            CHECK(a[i].bytes_ok && a[i].h.len == 4096 && a[i].h.offset % 4096 == 0);
        answered += n;
    }
    CHECK(answered == 6 && w.reads == 6);
    CHECK(w.o.wbuf.held <= 8192 && w.aborts == 0);
    world_free(&w);
}

/* The file aborts while preads run on the I/O pool: the descriptor is
 * closed (no sync) only once they are done. */
static void test_abort_with_preads(void)
{
    world_t w;
    world_init(&w, 32768, 4096, 4096, 2, 1, 0, 1 << 20);
    open_file();
    request(1, 1, 0, 12000);
    fwdioi_reader_probe(&w.f);
    fake_rt_complete_requests(MPI_SUCCESS);
    CHECK(fake_rt_io_queued() == 3);
    w.f.s.outcome.aborted = 1; /* as fwdioi_outcome_abort: the reader's part */
    fwdioi_reader_abort(&w.f);
    fwdioi_reader_close_aborted(&w.f);
    CHECK(fake_rt_io_queued() == 3 && w.f.s.fd == 7); /* not while they read */
    drain_io();
    CHECK(w.reads == 3 && w.finishes == 1 && !w.durable_finish && w.f.s.fd == -1);
    CHECK(fake_mpi_sent() == 0 && w.f.s.io_pending == 0);
    fwdioi_reader_close_aborted(&w.f); /* closed once */
    CHECK(fake_rt_io_queued() == 0);
    /* the units read for pieces nobody is answered now stay until the
     * session frees the reader */
    CHECK(w.o.wbuf.held == 3 * 4096);
    fwdioi_reader_free(&w.f);
    CHECK(w.o.wbuf.held == 0);
    world_free(&w);
}

int main(void)
{
    test_pieces_and_units();
    test_bad_requests();
    test_pread_fails();
    test_budget();
    test_abort_with_preads();
    return unit_result("unit_reader");
}

/* ---- the session around the reader, faked: what the reader tells it is
 * recorded in the world, and the cases check it ---- */

void fwdioi_outcome_opened(fwdio_file_t *f)
{
    (void)f;
    W->opened++;
}

void fwdioi_outcome_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    if (f->s.outcome.aborted)
        return;
    W->aborts++;
    W->abort_why = *why;
    W->abort_notified = notify;
    f->s.outcome.aborted = 1;
    f->s.outcome.abort_info = *why;
}

void fwdioi_outcome_nomem(fwdio_file_t *f, uint64_t offset)
{
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&why, FWDIO_ENOMEM, f->rank, 0, offset);
    fwdioi_outcome_abort(f, &why, 1);
}

void fwdioi_outcome_mpi_failed(fwdio_file_t *f, int call, int mpi_rc)
{
    (void)f;
    (void)call;
    (void)mpi_rc;
    W->mpi_failures++;
}

void fwdioi_outcome_finish_if_aborted(fwdio_file_t *f) { (void)f; }

void fwdioi_outcome_read_check_done(fwdio_file_t *f)
{
    (void)f;
    W->check_done++;
}

/* The node-local tier, faked too: the world's files have none, so the
 * reader opens and reads the target (local_restart.h's answers then). */

int fwdioi_local_restart_open(fwdio_file_t *f)
{
    (void)f;
    return 0;
}

int fwdioi_local_restart_fd(const fwdio_file_t *f, uint64_t base, uint64_t len, int target_fd)
{
    (void)f;
    (void)base;
    (void)len;
    return target_fd;
}
