/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reads' requester (forwarder/read/requester.c) on its own, against the
 * fake runtime seam (tests/unit/fake): this rank's fwdio_reads are cut by
 * the plan into requests, taken off the fake MPI_Isend queue; the test plays
 * the readers, putting each piece's bytes (FWDIOI_TAG_READ_DATA) and then
 * its header (FWDIOI_TAG_READ_HDR) on the fake wire, as a reader sends them;
 * the requester probes the headers and receives the bytes straight into the
 * caller's buffer, whose bytes the cases check. The session around it is
 * faked: it records what the requester tells it, and an abort ends the reads
 * as session.c's does (fwdioi_requester_abort at once).
 *
 * Cases: a read cut into one request per reader, in the order of their
 * first bytes; pieces of several readers in any order, landing in place,
 * the callback once after the last; zero-length reads and reads past the
 * end; reads held until the open is decided (sent, or ended with the open's
 * failure, or with an abort); headers that do not match the plan or the
 * request, refused (EPROTO naming the sender) with nothing written; bytes
 * shorter than their header; a failed receive; a reader's error answer;
 * an abort with receives in flight; hundreds of reads in flight; the
 * watchdog's report. Milliseconds, no mpiexec, MPI never initialized.
 */
#include "fake_file.h"
#include "fake_runtime.h"
#include "unit_check.h"

#include "agreement/outcome.h"
#include "read/read_wire.h"
#include "read/reader.h"
#include "read/requester.h"
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SENTINEL = 0xEE };

typedef struct world {
    fwdio_config_t cfg;
    struct fwdio_runtime o;
    fwdio_file_t f;
    int writer_ranks[8];
    /* what the requester told the session */
    int aborts, abort_notified, finish_checks, check_done, mpi_failures, mpi_call;
    fwdioi_errinfo_t abort_why;
    /* the reader role of this rank, faked */
    int reader_created, reader_aborts, reader_freed;
} world_t;

static world_t *W;

/* The file's bytes. */
static uint8_t pattern(uint64_t offset) { return (uint8_t)(offset * 31u + 7u); }

/* The requester of rank `rank` among `nranks`, readers on ranks
 * 0..nreaders-1, cyclic stripes of `stripe` bytes cut in units of `unit`,
 * a file of `size` bytes; the open decided and OK unless `held`. */
static void world_init(world_t *w, uint64_t size, uint64_t unit, uint64_t stripe, int nranks,
                       int nreaders, int rank, int held)
{
    memset(w, 0, sizeof *w);
    W = w;
    w->cfg.writer_buffer = 1 << 20;
    w->o.engine = fake_rt_create(rank, nranks, &w->cfg);
    LIST_INIT(&w->o.active);
    fwdio_file_t *f = &w->f;
    fake_file_shape_t shape = {size, unit, stripe, nranks, nreaders, rank, FWDIO_LAYOUT_CYCLIC};
    fake_file_init(f, &w->o, "unit-requester", &shape, w->writer_ranks);
    f->reading = 1;
    f->s.sent_bytes = calloc((size_t)nreaders + FWDIOI_CLOSE_EXTRA, sizeof *f->s.sent_bytes);
    if (!f->s.sent_bytes || fwdioi_requester_create(f) != 0)
        abort();
    if (!held)
        f->s.phase = FWDIOI_PHASE_OPEN;
}

static void world_free(world_t *w)
{
    CHECK(!fwdioi_requester_pending(&w->f));
    fwdioi_requester_free(&w->f);
    CHECK(w->f.s.requests == NULL && w->reader_freed == 1);
    free(w->f.s.sent_bytes);
    free(w->f.s.expected_bytes);
    fake_rt_destroy(w->o.engine);
    W = NULL;
}

/* ---- the application's side ---- */

/* One fwdio_read and what its callback saw. */
typedef struct app_read {
    uint8_t *buf;
    uint64_t len, offset;
    int calls, status;
    void *cb_buf;
} app_read_t;

static void read_done(fwdio_file_t *f, void *buf, int status, void *arg)
{
    app_read_t *a = arg;
    CHECK(f == &W->f);
    a->calls++;
    a->status = status;
    a->cb_buf = buf;
}

/* fwdio_read of [offset, offset + len) into a new buffer of sentinels. */
static void app_read(app_read_t *a, uint64_t offset, uint64_t len)
{
    memset(a, 0, sizeof *a);
    a->len = len;
    a->offset = offset;
    a->status = 1; /* no status yet */
    if (len > 0) {
        a->buf = malloc(len);
        if (!a->buf)
            abort();
        memset(a->buf, SENTINEL, len);
    }
    CHECK(fwdioi_requester_submit(&W->f, a->buf, len, offset, read_done, a) == FWDIO_OK);
}

/* Whether the buffer holds the file's bytes over [from, to) (file offsets). */
static int landed(const app_read_t *a, uint64_t from, uint64_t to)
{
    for (uint64_t o = from; o < to; o++)
        if (a->buf[o - a->offset] != pattern(o))
            return 0;
    return 1;
}

/* Whether the buffer still holds its sentinels over [from, to). */
static int untouched(const app_read_t *a, uint64_t from, uint64_t to)
{
    for (uint64_t o = from; o < to; o++)
        if (a->buf[o - a->offset] != SENTINEL)
            return 0;
    return 1;
}

static void app_free(app_read_t *a) { free(a->buf); }

/* ---- the readers' side ---- */

typedef struct sent_request {
    int dest;
    fwdioi_read_request_t q;
} sent_request_t;

/* Take the requests sent (each must be a READ_REQ of the right size). */
static int take_requests(sent_request_t *out, int cap)
{
    int n = 0, dest, tag;
    size_t len;
    uint8_t buf[64];
    while (fake_mpi_sent_take(&dest, &tag, buf, sizeof buf, &len)) {
        CHECK(tag == FWDIOI_TAG_READ_REQ && len == sizeof(fwdioi_read_request_t));
        if (n < cap) {
            out[n].dest = dest;
            memcpy(&out[n].q, buf, sizeof out[n].q);
        }
        n++;
    }
    return n;
}

/* Reader rank `source` answers piece [offset, offset + len) of read `id`:
 * its bytes (unless `status` is an error, or `data_len` says fewer), then
 * its header. */
static void answer_n(int source, uint64_t id, uint64_t offset, uint64_t len, int status,
                     uint64_t data_len)
{
    if (status == FWDIO_OK) {
        uint8_t *bytes = malloc(data_len ? data_len : 1);
        if (!bytes)
            abort();
        for (uint64_t b = 0; b < data_len; b++)
            bytes[b] = pattern(offset + b);
        fake_mpi_arrive_tag(source, FWDIOI_TAG_READ_DATA, bytes, data_len);
        free(bytes);
    }
    fwdioi_read_header_t h = {id, offset, len, status};
    fake_mpi_arrive_tag(source, FWDIOI_TAG_READ_HDR, &h, sizeof h);
}

static void answer(int source, uint64_t id, uint64_t offset, uint64_t len)
{
    answer_n(source, id, offset, len, FWDIO_OK, len);
}

/* What the progress thread does: take the headers (a poll takes a few
 * dozen at most), receive their bytes. */
static void tick(void)
{
    while (fwdioi_requester_probe(&W->f) > 0)
        fake_rt_complete_requests(MPI_SUCCESS);
    fake_rt_complete_requests(MPI_SUCCESS);
}

/* Answer every piece of [offset, offset + len) of read `id`, unit by unit,
 * from the reader that owns it (writer w on rank w). */
static int answer_all(uint64_t id, uint64_t offset, uint64_t len)
{
    const fwdioi_plan_t *p = &W->f.plan;
    uint64_t unit = p->write_size, end = offset + len;
    int n = 0;
    for (uint64_t o = offset; o < end; n++) {
        uint64_t hi = (o / unit + 1) * unit;
        if (hi > end)
            hi = end;
        int w = fwdioi_plan_stripe_writer(p, o / p->stripe_size);
        answer(fwdioi_plan_writer_rank(p, w), id, o, hi - o);
        o = hi;
    }
    return n;
}

/* ---- the cases ---- */

/* A read is cut by the plan into one request per reader that owns some of
 * its bytes, in the order of their first bytes; each request names the
 * read (its id on this rank) and its whole range (the reader answers its
 * own bytes of it). A read within one stripe asks one reader only. */
static void test_cut_by_plan(void)
{
    world_t w;
    /* stripes of 4 KiB over 3 readers (ranks 0-2); this rank is 5 of 6 */
    world_init(&w, 65536, 1024, 4096, 6, 3, 5, 0);
    CHECK(w.f.my_writer < 0 && w.reader_created == 0);
    app_read_t a, b, c;
    app_read(&a, 9000, 12000); /* stripes 2, 3, 4, 5: readers 2, 0, 1 */
    sent_request_t q[8];
    int n = take_requests(q, 8);
    CHECK(n == 3);
    CHECK(q[0].dest == 2 && q[1].dest == 0 && q[2].dest == 1);
    for (int i = 0; i < n && i < 8; i++)
        CHECK(q[i].q.id == 0 && q[i].q.offset == 9000 && q[i].q.len == 12000);
    CHECK(w.f.s.sent_bytes[0] == 1 && w.f.s.sent_bytes[1] == 1 && w.f.s.sent_bytes[2] == 1);
    CHECK(w.f.s.sends_pending == 3 && w.f.s.stats.messages_sent == 3);
    app_read(&b, 4096 + 100, 200); /* within stripe 1: reader 1 only */
    n = take_requests(q, 8);
    CHECK(n == 1 && q[0].dest == 1 && q[0].q.id == 1 && q[0].q.offset == 4196 &&
          q[0].q.len == 200);
    app_read(&c, 12288, 4096); /* exactly stripe 3: reader 0 */
    n = take_requests(q, 8);
    CHECK(n == 1 && q[0].dest == 0 && q[0].q.id == 2);
    CHECK(w.f.s.sent_bytes[0] == 2 && w.f.s.sent_bytes[1] == 2 && w.f.s.sent_bytes[2] == 1);
    fake_rt_complete_requests(MPI_SUCCESS); /* the sends */
    CHECK(w.f.s.sends_pending == 0 && w.check_done == 5);
    CHECK(fwdioi_requester_pending(&w.f) && a.calls == 0 && b.calls == 0 && c.calls == 0);
    /* the answers, and the reads end */
    answer_all(0, 9000, 12000);
    answer_all(1, 4196, 200);
    answer_all(2, 12288, 4096);
    tick();
    CHECK(a.calls == 1 && a.status == FWDIO_OK && a.cb_buf == a.buf && landed(&a, 9000, 21000));
    CHECK(b.calls == 1 && b.status == FWDIO_OK && landed(&b, 4196, 4396));
    CHECK(c.calls == 1 && c.status == FWDIO_OK && landed(&c, 12288, 16384));
    CHECK(w.aborts == 0 && w.f.s.recvs_pending == 0 && fake_mpi_unmatched() == 0);
    CHECK(w.f.s.stats.writer_bytes == 12000 + 200 + 4096);
    app_free(&a);
    app_free(&b);
    app_free(&c);
    world_free(&w);
}

/* A read over units and readers: its pieces arrive in any order across the
 * readers (each reader's own in order, as MPI keeps it), each lands at its
 * place, and the callback runs once, after the last byte. */
static void test_pieces_any_order(void)
{
    world_t w;
    /* units of 1 KiB, stripes of 2 KiB over 2 readers; this rank is 3 of 4 */
    world_init(&w, 32768, 1024, 2048, 4, 2, 3, 0);
    app_read_t a;
    app_read(&a, 1500, 5000); /* [1500, 6500): 0:[1500,2048) 1:[2048,4096) 0:[4096,6144) 1:... */
    sent_request_t q[4];
    CHECK(take_requests(q, 4) == 2);
    fake_rt_complete_requests(MPI_SUCCESS);
    /* reader 1's pieces before reader 0's first, interleaved */
    answer(1, 0, 2048, 1024);
    answer(0, 0, 5120, 1024);
    answer(1, 0, 3072, 1024);
    answer(0, 0, 1500, 548);
    tick();
    CHECK(a.calls == 0 && landed(&a, 1500, 2048) && landed(&a, 2048, 4096) &&
          landed(&a, 5120, 6144));
    CHECK(untouched(&a, 4096, 5120) && untouched(&a, 6144, 6500));
    CHECK(w.f.s.stats.messages_received == 4);
    answer(1, 0, 6144, 356);
    tick();
    CHECK(a.calls == 0 && landed(&a, 6144, 6500));
    answer(0, 0, 4096, 1024); /* the last, a hole in the middle */
    fwdioi_requester_probe(&w.f);
    CHECK(a.calls == 0 && w.f.s.recvs_pending == 1); /* its bytes still coming */
    fake_rt_complete_requests(MPI_SUCCESS);
    CHECK(a.calls == 1 && a.status == FWDIO_OK && landed(&a, 1500, 6500));
    CHECK(w.aborts == 0 && !fwdioi_requester_pending(&w.f) && w.f.s.recvs_pending == 0);
    app_free(&a);
    world_free(&w);
}

/* Reads with nothing to ask: zero bytes (anywhere up to the end, even
 * without a buffer) end at once with OK; bytes past the end with ERANGE.
 * No request goes out. */
static void test_nothing_to_ask(void)
{
    world_t w;
    world_init(&w, 8192, 1024, 2048, 3, 2, 2, 0);
    app_read_t a, b, c, d;
    app_read(&a, 100, 0);
    app_read(&b, 8192, 0);
    app_read(&c, 8000, 193); /* one byte past the end */
    app_read(&d, 9000, 0);   /* starts past the end */
    CHECK(a.calls == 1 && a.status == FWDIO_OK && a.cb_buf == NULL);
    CHECK(b.calls == 1 && b.status == FWDIO_OK);
    CHECK(c.calls == 1 && c.status == FWDIO_ERANGE && untouched(&c, 8000, 8193));
    CHECK(d.calls == 1 && d.status == FWDIO_ERANGE);
    CHECK(fake_mpi_sent() == 0 && fake_rt_requests() == 0 && !fwdioi_requester_pending(&w.f));
    app_read_t e;
    app_read(&e, 8191, 1); /* the last byte: asked */
    sent_request_t q[2];
    CHECK(take_requests(q, 2) == 1 && q[0].dest == 1);
    fake_rt_complete_requests(MPI_SUCCESS);
    answer(1, 0, 8191, 1);
    tick();
    CHECK(e.calls == 1 && e.status == FWDIO_OK && landed(&e, 8191, 8192));
    app_free(&c);
    app_free(&e);
    world_free(&w);
}

/* Reads issued before the open is decided wait, in order; then they are
 * sent (the open succeeded), or end with the open's failure, or with the
 * abort's status. A read past the end that waited ends with ERANGE (the
 * size was not known when it was issued). */
static void test_held_until_open(void)
{
    for (int c = 0; c < 3; c++) {
        world_t w;
        world_init(&w, 16384, 1024, 4096, 3, 2, 2, 1);
        app_read_t a, b, z;
        app_read(&a, 5000, 100);  /* reader 1 */
        app_read(&b, 0, 5000);    /* readers 0 and 1 */
        app_read(&z, 16000, 999); /* past the end */
        CHECK(fake_mpi_sent() == 0 && fwdioi_requester_pending(&w.f));
        CHECK(a.calls == 0 && b.calls == 0 && z.calls == 0);
        if (c == 0) { /* the open succeeded */
            w.f.s.phase = FWDIOI_PHASE_OPEN;
            fwdioi_requester_open_decided(&w.f);
            sent_request_t q[4];
            int n = take_requests(q, 4);
            CHECK(n == 3 && q[0].dest == 1 && q[0].q.id == 0 && q[0].q.offset == 5000);
            CHECK(q[1].dest == 0 && q[1].q.id == 1 && q[2].dest == 1 && q[2].q.id == 1);
            CHECK(z.calls == 1 && z.status == FWDIO_ERANGE);
            fake_rt_complete_requests(MPI_SUCCESS);
            answer_all(1, 0, 5000);
            answer_all(0, 5000, 100);
            tick();
            CHECK(a.calls == 1 && a.status == FWDIO_OK && landed(&a, 5000, 5100));
            CHECK(b.calls == 1 && b.status == FWDIO_OK && landed(&b, 0, 5000));
        } else if (c == 1) { /* the open failed on some rank */
            w.f.s.phase = FWDIOI_PHASE_OPEN;
            w.f.s.outcome.open_agreed.status = FWDIO_EOPEN;
            fwdioi_requester_open_decided(&w.f);
            CHECK(fake_mpi_sent() == 0);
            CHECK(a.calls == 1 && a.status == FWDIO_EOPEN && b.calls == 1 &&
                  b.status == FWDIO_EOPEN && z.calls == 1 && z.status == FWDIO_EOPEN);
            app_read_t later;
            app_read(&later, 0, 10); /* after: ends at once too */
            CHECK(later.calls == 1 && later.status == FWDIO_EOPEN && fake_mpi_sent() == 0);
            app_free(&later);
        } else { /* the file aborts before the open is decided */
            fwdioi_errinfo_t why = {FWDIO_EWRITE, 0, 5, 0, 0, -1, 0};
            fwdioi_outcome_abort(&w.f, &why, 0);
            CHECK(fake_mpi_sent() == 0);
            CHECK(a.calls == 1 && a.status == FWDIO_EWRITE && b.calls == 1 &&
                  b.status == FWDIO_EWRITE && z.calls == 1 && z.status == FWDIO_EWRITE);
            app_read_t later;
            app_read(&later, 0, 10); /* not held: the file failed */
            CHECK(later.calls == 1 && later.status == FWDIO_EWRITE && fake_mpi_sent() == 0);
            app_free(&later);
        }
        CHECK(w.aborts == (c == 2));
        app_free(&a);
        app_free(&b);
        app_free(&z);
        world_free(&w);
    }
}

/* Headers the requester must refuse: it never trusts a reader. Each fails
 * the file with EPROTO, BAD_READ, naming the sender (and the piece's offset
 * and length), writes nothing into the buffer, leaves the piece's bytes
 * unreceived, and ends the read once with the abort's status. */
enum {
    BAD_ID,          /* no read of that id */
    BAD_ENDED_ID,    /* a read that has ended already */
    BAD_NOT_READER,  /* a rank that is no reader */
    BAD_NO_PART,     /* a reader asked nothing of this read */
    BAD_BEFORE,      /* bytes before the read */
    BAD_AFTER,       /* bytes past the read's end */
    BAD_NOT_OWNED,   /* bytes of the read another reader owns */
    BAD_ZERO,        /* a piece of no bytes */
    BAD_TWICE,       /* a piece received already */
    BAD_OVERLAP,     /* a piece that overlaps one received */
    BAD_MORE,        /* more bytes than the read asked (its whole length) */
    BAD_ERROR_PIECE, /* an error answer for bytes the sender was not asked */
    BAD_NCASES
};

static void test_bad_headers(void)
{
    for (int c = 0; c < BAD_NCASES; c++) {
        world_t w;
        /* stripes of 4 KiB over 3 readers (ranks 0-2), units of 1 KiB;
         * this rank is 4 of 5, rank 3 is no reader */
        world_init(&w, 65536, 1024, 4096, 5, 3, 4, 0);
        app_read_t a, done;
        app_read(&done, 100, 10); /* read 0: ends before the case */
        app_read(&a, 1024, 6144); /* read 1: [1024, 7168), readers 0 and 1 */
        fake_rt_complete_requests(MPI_SUCCESS);
        sent_request_t q[4];
        CHECK(take_requests(q, 4) == 3);
        answer(0, 0, 100, 10);
        answer(0, 1, 1024, 1024); /* one good piece of read 1 */
        tick();
        CHECK(done.calls == 1 && done.status == FWDIO_OK && landed(&a, 1024, 2048));
        int source = 0;
        uint64_t id = 1, off = 2048, len = 1024;
        int status = FWDIO_OK;
        switch (c) {
        case BAD_ID: id = 9; break;
        case BAD_ENDED_ID: id = 0; off = 100; len = 10; break;
        case BAD_NOT_READER: source = 3; break;
        case BAD_NO_PART: source = 2; break;
        case BAD_BEFORE: off = 0; break;
        case BAD_AFTER: source = 1; off = 6656; break;
        case BAD_NOT_OWNED: off = 4096; break;
        case BAD_ZERO: len = 0; break;
        case BAD_TWICE: off = 1024; break;
        case BAD_OVERLAP: off = 1536; break;
        case BAD_MORE: off = 1024; len = 6144; break;
        case BAD_ERROR_PIECE: off = 4096; status = FWDIO_EREAD; break;
        }
        answer_n(source, id, off, len, status, len);
        fwdioi_requester_probe(&w.f);
        CHECK(w.aborts == 1 && w.abort_notified);
        CHECK(w.abort_why.status == FWDIO_EPROTO && w.abort_why.call == FWDIOI_REASON_BAD_READ);
        CHECK(w.abort_why.rank == 4 && w.abort_why.other_rank == source);
        CHECK(w.abort_why.offset == (int64_t)off && w.abort_why.other_value == (int64_t)len);
        /* its bytes (none for an error answer) were not received */
        CHECK(fake_mpi_unmatched() == (c == BAD_ERROR_PIECE ? 0u : 1u));
        CHECK(fake_rt_requests() == 0 && w.f.s.recvs_pending == 0);
        CHECK(landed(&a, 1024, 2048) && untouched(&a, 2048, 7168));
        CHECK(a.calls == 1 && a.status == FWDIO_EPROTO);
        /* a late good header changes nothing now */
        answer(0, 1, 2048, 1024);
        tick();
        CHECK(untouched(&a, 2048, 7168) && a.calls == 1 && w.aborts == 1);
        if (unit_failures)
            fprintf(stderr, "  (bad header case %d)\n", c);
        app_free(&a);
        app_free(&done);
        world_free(&w);
        if (unit_failures)
            break;
    }
}

/* What arrives must be what a header announced: a header message of the
 * wrong size, or fewer bytes behind a header than it says, fails the file
 * with EPROTO naming the sender; a receive MPI fails fails it with EMPI.
 * Either way the read ends once. */
static void test_bad_messages(void)
{
    for (int c = 0; c < 3; c++) {
        world_t w;
        world_init(&w, 16384, 1024, 4096, 3, 2, 2, 0);
        app_read_t a;
        app_read(&a, 0, 2048); /* reader 0 */
        take_requests(NULL, 0);
        fake_rt_complete_requests(MPI_SUCCESS);
        if (c == 0) {
            uint8_t junk[sizeof(fwdioi_read_header_t) - 1] = {0};
            fake_mpi_arrive_tag(1, FWDIOI_TAG_READ_HDR, junk, sizeof junk);
            tick();
            CHECK(w.aborts == 1 && w.abort_why.status == FWDIO_EPROTO &&
                  w.abort_why.call == FWDIOI_REASON_BAD_READ && w.abort_why.other_rank == 1 &&
                  w.abort_why.other_value == (int64_t)sizeof junk);
        } else if (c == 1) {
            answer_n(0, 0, 0, 1024, FWDIO_OK, 1000); /* 24 bytes short */
            tick();
            CHECK(w.aborts == 1 && w.abort_why.status == FWDIO_EPROTO &&
                  w.abort_why.call == FWDIOI_REASON_BAD_READ && w.abort_why.other_rank == 0 &&
                  w.abort_why.other_value == 1024);
        } else {
            answer(0, 0, 0, 1024);
            fwdioi_requester_probe(&w.f);
            CHECK(fake_rt_complete_oldest(MPI_ERR_OTHER) == 1);
            CHECK(w.mpi_failures == 1 && w.mpi_call == FWDIOI_MPI_READ_IRECV && w.aborts == 1 &&
                  w.abort_why.status == FWDIO_EMPI);
        }
        CHECK(a.calls == 1 && a.status == (c == 2 ? FWDIO_EMPI : FWDIO_EPROTO));
        CHECK(w.f.s.recvs_pending == 0 && fake_rt_requests() == 0);
        CHECK(w.finish_checks > 0 || c == 0);
        if (unit_failures)
            fprintf(stderr, "  (bad message case %d)\n", c);
        app_free(&a);
        world_free(&w);
    }
}

/* A reader's pread failed: its answer carries the error and no bytes. The
 * read ends with that error (the first one) once all its bytes are
 * accounted for, its callback once; the file goes on (the error reaches
 * every rank through the final agreement, not an abort). */
static void test_reader_error(void)
{
    world_t w;
    world_init(&w, 32768, 1024, 2048, 4, 3, 3, 0);
    app_read_t a, b;
    app_read(&a, 0, 6144); /* readers 0, 1, 2 a stripe each */
    app_read(&b, 0, 100);  /* reader 0 */
    take_requests(NULL, 0);
    fake_rt_complete_requests(MPI_SUCCESS);
    answer(0, 0, 0, 1024);
    answer_n(1, 0, 2048, 1024, FWDIO_EREAD, 0);
    answer(1, 0, 3072, 1024);
    fwdioi_requester_probe(&w.f); /* two receives in flight */
    CHECK(a.calls == 0 && w.f.s.recvs_pending == 2);
    answer_n(2, 0, 4096, 2048, FWDIO_ESYNC, 0); /* a second error: the first one counts */
    answer(0, 0, 1024, 1024);
    tick();
    CHECK(a.calls == 1 && a.status == FWDIO_EREAD);
    CHECK(landed(&a, 0, 2048) && untouched(&a, 2048, 3072) && landed(&a, 3072, 4096) &&
          untouched(&a, 4096, 6144));
    CHECK(w.aborts == 0 && b.calls == 0 && fwdioi_requester_pending(&w.f));
    answer(0, 1, 0, 100); /* the other read goes on */
    tick();
    CHECK(b.calls == 1 && b.status == FWDIO_OK && landed(&b, 0, 100));
    CHECK(a.calls == 1 && w.aborts == 0);
    app_free(&a);
    app_free(&b);
    world_free(&w);
}

/* The file aborts while reads are in flight: a read with nothing in flight
 * ends at once with the abort's status; one whose bytes are being received
 * ends when they are in (they are MPI's until then); every callback runs
 * once and nothing is left pending. On a rank that is also a reader, the
 * reader role hears of the abort. */
static void test_abort_in_flight(void)
{
    world_t w;
    /* this rank (1) is reader 1 too */
    world_init(&w, 32768, 1024, 2048, 3, 2, 1, 0);
    CHECK(w.f.my_writer == 1 && w.reader_created == 1);
    app_read_t a, b, c;
    app_read(&a, 0, 2048);    /* reader 0 */
    app_read(&b, 1000, 2000); /* readers 0 and 1 */
    app_read(&c, 4096, 1024); /* reader 0 */
    take_requests(NULL, 0);   /* their sends still in flight */
    answer(0, 0, 0, 1024);
    answer(0, 0, 1024, 1024); /* read a: all its bytes being received */
    answer(0, 1, 1000, 24);   /* read b: one piece being received */
    fwdioi_requester_probe(&w.f);
    CHECK(w.f.s.recvs_pending == 3 && w.f.s.sends_pending == 4);
    fwdioi_errinfo_t why = {FWDIO_ESYNC, 2, 5, 0, 0, -1, 0};
    fwdioi_outcome_abort(&w.f, &why, 0);
    CHECK(w.reader_aborts == 1);
    CHECK(c.calls == 1 && c.status == FWDIO_ESYNC); /* nothing in flight */
    CHECK(a.calls == 0 && b.calls == 0);
    CHECK(fwdioi_requester_pending(&w.f));
    /* a header heard after the abort, of a read not ended yet: not taken */
    answer(1, 1, 2048, 952);
    fwdioi_requester_probe(&w.f);
    CHECK(w.f.s.recvs_pending == 3 && fake_mpi_unmatched() == 1 && w.aborts == 1);
    fake_rt_complete_requests(MPI_SUCCESS); /* the sends, and the bytes come in */
    CHECK(a.calls == 1 && a.status == FWDIO_ESYNC && b.calls == 1 && b.status == FWDIO_ESYNC);
    CHECK(!fwdioi_requester_pending(&w.f) && w.f.s.recvs_pending == 0 &&
          w.f.s.sends_pending == 0);
    CHECK(w.finish_checks >= 2);
    /* nor after the read ended */
    answer(1, 1, 2048, 952);
    tick();
    CHECK(untouched(&b, 2048, 3000) && b.calls == 1 && w.aborts == 1);
    app_read_t d;
    app_read(&d, 0, 10); /* after the abort: ends at once */
    CHECK(d.calls == 1 && d.status == FWDIO_ESYNC && fake_mpi_sent() == 0);
    app_free(&a);
    app_free(&b);
    app_free(&c);
    app_free(&d);
    world_free(&w);
}

/* Hundreds of reads in flight at once, over several rounds: each round's
 * oldest read is answered last (the table of reads under way grows past
 * its first size while its front stays), the others newest first; every
 * read ends once with its own bytes. */
static void test_many_reads(void)
{
    enum { ROUNDS = 3, PER_ROUND = 150 };
    world_t w;
    world_init(&w, 1 << 20, 512, 1024, 5, 4, 4, 0);
    app_read_t *reads = calloc(PER_ROUND, sizeof *reads);
    if (!reads)
        abort();
    uint64_t id = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < PER_ROUND; i++)
            app_read(&reads[i], (uint64_t)(round * 7919 + i * 4391) % ((1 << 20) - 3000),
                     1 + (uint64_t)(i * 37 + round) % 3000);
        take_requests(NULL, 0);
        fake_rt_complete_requests(MPI_SUCCESS);
        for (int i = PER_ROUND - 1; i >= 1; i--)
            answer_all(id + (uint64_t)i, reads[i].offset, reads[i].len);
        tick();
        CHECK(reads[0].calls == 0 && fwdioi_requester_pending(&w.f));
        answer_all(id, reads[0].offset, reads[0].len);
        tick();
        for (int i = 0; i < PER_ROUND; i++) {
            CHECK(reads[i].calls == 1 && reads[i].status == FWDIO_OK &&
                  landed(&reads[i], reads[i].offset, reads[i].offset + reads[i].len));
            app_free(&reads[i]);
        }
        CHECK(!fwdioi_requester_pending(&w.f) && fake_mpi_unmatched() == 0);
        id += PER_ROUND;
    }
    CHECK(w.aborts == 0);
    free(reads);
    world_free(&w);
}

/* What the watchdog says of reads that do not end: how many, the oldest,
 * and the readers it still waits for, with their bytes. */
static void test_report(void)
{
    world_t w;
    world_init(&w, 16384, 1024, 2048, 3, 2, 2, 0);
    app_read_t a, b;
    app_read(&a, 1024, 2560); /* reader 0: [1024, 2048), reader 1: [2048, 3584) */
    app_read(&b, 0, 10);
    take_requests(NULL, 0);
    fake_rt_complete_requests(MPI_SUCCESS);
    answer(0, 0, 1024, 1024);
    tick();
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        abort();
    fwdioi_requester_report(out, &w.f);
    fclose(out);
    CHECK(strstr(text, "2 read(s) of this rank not ended") != NULL);
    CHECK(strstr(text, "2560 bytes at offset 1024, 1024 received, waiting for readers 1 "
                       "(rank 1, 1536 bytes)\n") != NULL);
    free(text);
    answer(1, 0, 2048, 1024);
    answer(1, 0, 3072, 512);
    answer(0, 1, 0, 10);
    tick();
    CHECK(a.calls == 1 && b.calls == 1 && a.status == FWDIO_OK && b.status == FWDIO_OK);
    app_free(&a);
    app_free(&b);
    world_free(&w);
}

int main(void)
{
    test_cut_by_plan();
    test_pieces_any_order();
    test_nothing_to_ask();
    test_held_until_open();
    test_bad_headers();
    test_bad_messages();
    test_reader_error();
    test_abort_in_flight();
    test_many_reads();
    test_report();
    return unit_result("unit_requester");
}

/* ---- the session around the requester, faked as session.c behaves: an
 * abort ends the reads at once (fwdioi_requester_abort) ---- */

void fwdioi_outcome_abort(fwdio_file_t *f, const fwdioi_errinfo_t *why, int notify)
{
    if (f->s.outcome.aborted)
        return;
    W->aborts++;
    W->abort_why = *why;
    W->abort_notified = notify;
    f->s.outcome.aborted = 1;
    f->s.outcome.abort_info = *why;
    if (f->reading)
        fwdioi_requester_abort(f);
}

void fwdioi_outcome_nomem(fwdio_file_t *f, uint64_t offset)
{
    fwdioi_errinfo_t why = FWDIOI_ERRINFO_OK;
    fwdioi_errinfo_set(&why, FWDIO_ENOMEM, f->rank, 0, offset);
    fwdioi_outcome_abort(f, &why, 1);
}

void fwdioi_outcome_mpi_failed(fwdio_file_t *f, int call, int mpi_rc)
{
    W->mpi_failures++;
    W->mpi_call = call;
    fwdioi_errinfo_t why = {FWDIO_EMPI, f->rank, mpi_rc, 0, FWDIOI_REASON_MPI + call, -1, 0};
    fwdioi_outcome_abort(f, &why, 1);
}

void fwdioi_outcome_finish_if_aborted(fwdio_file_t *f)
{
    (void)f;
    W->finish_checks++;
}

void fwdioi_outcome_read_check_done(fwdio_file_t *f)
{
    (void)f;
    W->check_done++;
}

/* The reader role of this rank, faked: its own test is test_reader. */

int fwdioi_reader_create(fwdio_file_t *f)
{
    (void)f;
    W->reader_created++;
    return 0;
}

void fwdioi_reader_abort(fwdio_file_t *f)
{
    (void)f;
    W->reader_aborts++;
}

void fwdioi_reader_report(FILE *out, const fwdio_file_t *f)
{
    (void)out;
    (void)f;
}

void fwdioi_reader_free(fwdio_file_t *f)
{
    (void)f;
    W->reader_freed++;
}
