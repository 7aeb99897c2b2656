/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routing on its own (forwarder/write/route.h). fwdioi_route_write cuts a write at
 * stripe boundaries into messages for the writers that own the stripes. Plans
 * of every layout (block; cyclic; targets with fewer, as many and more
 * targets than writers), writer counts from 1 to 7, stripes of 512 to 4096
 * bytes and message caps (max_message_size) of 4096, 5000 and 1 MiB get
 * random and edge-case writes, each routed once copied and once lent, and
 * every message is checked without sending it:
 *
 *   - every byte of the write is in exactly one piece of one message, and
 *     that message goes to the writer whose stripe holds the byte;
 *   - the pieces of a message are sorted, disjoint and maximal (adjacent
 *     stripes of one writer are one piece); a message carries at most
 *     max_message_size bytes, a writer's messages are consecutive in the
 *     chain, in file order, each full but the last, so a writer gets
 *     ceil(its bytes / cap) messages;
 *   - the wire format is what a writer parses (state.h): a header with the
 *     piece count, the data back to back (copied writes only), the table;
 *   - a copied message holds its own copy (the source is overwritten before
 *     the check) and counts against the staging budget, which freeing the
 *     messages gives back exactly; a lent message points into the caller's
 *     buffer and counts against nothing, and the lent buffer's callback runs
 *     once, after its last message is freed.
 *
 * The plans need more writers than this one-rank job has ranks, so the files
 * here are not opened: routing reads only a file's plan and its runtime's
 * configuration, and each file is built around a plan over 16 virtual ranks
 * on a real runtime, whose message buffers and staging budget the messages
 * use. They are freed unsent. One file opened for real checks that the same
 * holds for what fwdio_open builds.
 */
#include "forwarder_test.h"

#include "write/message.h"
#include "pattern.h"
#include "write/route.h"
#include "write/sender.h"
#include "write/staging.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NRANKS = 16, MAX_WRITERS = 8, RANDOM_WRITES = 40 };

typedef struct route_case {
    fwdio_layout_t layout;
    int nwriters, targets;
    uint64_t stripe, unit, size;
} route_case_t;

/* The last message of a routed list (glibc's sys/queue.h has no STAILQ_LAST). */
static fwdioi_msg_t *last_msg(fwdioi_task_list_t *list)
{
    fwdioi_task_t *t, *last = NULL;
    STAILQ_FOREACH(t, list, link)
        last = t;
    return (fwdioi_msg_t *)last;
}

static const route_case_t cases[] = {
    {FWDIO_LAYOUT_BLOCK, 1, 0, 4096, 1024, 100000},
    {FWDIO_LAYOUT_BLOCK, 3, 0, 4096, 1024, 200003},
    {FWDIO_LAYOUT_BLOCK, 7, 0, 512, 512, 50001},
    {FWDIO_LAYOUT_BLOCK, 5, 0, 3000, 1000, 7000}, /* 3 stripes: two writers own none */
    {FWDIO_LAYOUT_CYCLIC, 2, 0, 4096, 1024, 200000},
    {FWDIO_LAYOUT_CYCLIC, 3, 0, 512, 512, 65537},
    {FWDIO_LAYOUT_CYCLIC, 7, 0, 3000, 1000, 150000},
    {FWDIO_LAYOUT_CYCLIC, 5, 0, 4096, 4096, 777}, /* smaller than a stripe */
    {FWDIO_LAYOUT_TARGETS, 3, 3, 4096, 1024, 200000}, /* T = W */
    {FWDIO_LAYOUT_TARGETS, 2, 5, 512, 512, 40000},    /* T > W, groups of 2 and 3 */
    {FWDIO_LAYOUT_TARGETS, 4, 6, 1024, 512, 77777},
    {FWDIO_LAYOUT_TARGETS, 7, 3, 3000, 1000, 100000}, /* W > T: targets shared */
    {FWDIO_LAYOUT_TARGETS, 5, 2, 512, 512, 30001},
};

static const char *layout_name(fwdio_layout_t l)
{
    return l == FWDIO_LAYOUT_BLOCK ? "block" : l == FWDIO_LAYOUT_CYCLIC ? "cyclic" : "targets";
}

/* A file that is never opened: its plan, options and runtime, as routing
 * reads them (the rest zero, as after fwdio_open's calloc). */
typedef struct detached {
    fwdio_file_t *f;
    int ranks[MAX_WRITERS];
} detached_t;

static void detached_init(detached_t *d, fwdio_runtime_t *rt, const route_case_t *c)
{
    d->f = calloc(1, sizeof *d->f);
    if (!d->f) {
        tc_fail("out of memory");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fwdio_file_t *f = d->f;
    f->owner = rt;
    f->engine = rt->engine;
    f->size = c->size;
    f->opts = ft_options(c->stripe, c->unit, c->nwriters, c->layout);
    f->opts.targets = c->targets;
    f->my_writer = -1;
    for (int w = 0; w < c->nwriters; w++)
        d->ranks[w] = 2 * w + 1; /* distinct ranks, none of them this one */
    fwdioi_plan_init(&f->plan, c->size, &f->opts, NRANKS, d->ranks, c->nwriters);
    f->writer_ranks = d->ranks;
}

static void detached_free(detached_t *d)
{
    free(d->f);
    d->f = NULL;
}

/* ---- the lent buffer's callback ---- */

static atomic_int g_lent_calls;
static atomic_int g_lent_status;

static void on_lent_done(fwdioi_call_t *call)
{
    fwdioi_lent_t *lent = (fwdioi_lent_t *)call;
    atomic_store(&g_lent_status, lent->status);
    atomic_fetch_add(&g_lent_calls, 1);
}

/* ---- checking one write's messages ---- */

typedef struct write_spec {
    uint64_t offset, len;
} write_spec_t;

/*
 * Check the chain first..last for the write of [offset, offset + len) whose
 * bytes are image[offset ...]; `buf` is the caller's buffer (overwritten
 * already for a copied write), `lent` the lent call or NULL. Returns the
 * number of messages.
 */
static int check_messages(const fwdio_file_t *f, fwdioi_msg_t *first, fwdioi_msg_t *last,
                          uint64_t offset, uint64_t len, const uint8_t *image, const uint8_t *buf,
                          const fwdioi_lent_t *lent, const char *what)
{
    const fwdioi_plan_t *p = &f->plan;
    const uint64_t cap = fwdioi_rt_config(f->engine)->max_message_size;
    const int nw = p->nwriters;
    uint8_t *seen = calloc(len, 1);
    uint64_t expect[MAX_WRITERS] = {0}, got[MAX_WRITERS] = {0};
    int msgs[MAX_WRITERS] = {0}, ended[MAX_WRITERS] = {0};
    int nmsgs = 0, errors = 0, prev_writer = -1;
    uint64_t prev_writer_end = 0; /* end of the last piece of the previous message */
    const fwdioi_msg_t *prev = NULL;
#define ROUTE_CHECK(cond, ...)                                                              \
    do {                                                                                    \
        if (!(cond) && errors++ < 5)                                                        \
            tc_fail(__VA_ARGS__);                                                           \
    } while (0)

    /* The bytes each writer should get, from the stripes the write touches. */
    for (uint64_t a = offset; a < offset + len;) {
        uint64_t s = a / p->stripe_size;
        uint64_t b = (s + 1) * p->stripe_size < offset + len ? (s + 1) * p->stripe_size
                                                             : offset + len;
        expect[fwdioi_plan_stripe_writer(p, s)] += b - a;
        a = b;
    }

    for (fwdioi_msg_t *m = first; m; prev = m, m = (fwdioi_msg_t *)STAILQ_NEXT(&m->task, link)) {
        nmsgs++;
        int w = m->writer;
        ROUTE_CHECK(w >= 0 && w < nw, "%s: message %d for writer %d of %d", what, nmsgs, w, nw);
        if (w < 0 || w >= nw)
            break;
        ROUTE_CHECK(m->file == f, "%s: message %d belongs to another file", what, nmsgs);
        ROUTE_CHECK(m->task.run == fwdioi_msg_task,
                    "%s: message %d is not a task for the progress thread", what, nmsgs);
        if (lent)
            ROUTE_CHECK(m->lent == lent && !m->staged && m->lent_base == buf &&
                            m->lent_offset == offset,
                        "%s: lent message %d: lent %p staged %d base %p offset %llu", what, nmsgs,
                        (const void *)m->lent, m->staged, (const void *)m->lent_base,
                        (unsigned long long)m->lent_offset);
        else
            ROUTE_CHECK(!m->lent && m->staged, "%s: copied message %d: lent %p staged %d", what,
                        nmsgs, (const void *)m->lent, m->staged);
        /* the wire format: header, data (copied only), piece table */
        fwdioi_wire_header_t h;
        memcpy(&h, m->wire, sizeof h);
        size_t data_len = lent ? 0 : (size_t)m->payload;
        ROUTE_CHECK(h.npieces >= 1 && h.step == 0, "%s: message %d header: %u pieces, %u",
                    what, nmsgs, h.npieces, h.step);
        ROUTE_CHECK(m->wire_len == sizeof h + data_len + h.npieces * sizeof(fwdioi_piece_t),
                    "%s: message %d: wire_len %zu for %llu data bytes and %u pieces", what, nmsgs,
                    m->wire_len, (unsigned long long)data_len, h.npieces);
        ROUTE_CHECK(m->alloc_len >= sizeof *m + m->wire_len, "%s: message %d overflows its buffer",
                    what, nmsgs);
        ROUTE_CHECK(m->payload >= 1 && m->payload <= cap, "%s: message %d carries %llu bytes (cap %llu)",
                    what, nmsgs, (unsigned long long)m->payload, (unsigned long long)cap);
        /* a writer's messages are consecutive; all but its last are full */
        if (w != prev_writer) {
            ROUTE_CHECK(!ended[w], "%s: writer %d's messages are not consecutive", what, w);
            if (prev_writer >= 0)
                ended[prev_writer] = 1;
        } else {
            ROUTE_CHECK(prev->payload == cap, "%s: writer %d has a message of %llu < cap %llu before another",
                        what, w, (unsigned long long)prev->payload, (unsigned long long)cap);
        }
        const uint8_t *data = m->wire + sizeof h;
        uint64_t sum = 0, prev_end = 0;
        for (uint32_t i = 0; i < h.npieces; i++) {
            fwdioi_piece_t pc = ft_piece(m, i);
            ROUTE_CHECK(pc.len > 0 && pc.offset >= offset && pc.offset + pc.len <= offset + len,
                        "%s: piece [%llu, +%llu) outside the write [%llu, +%llu)", what,
                        (unsigned long long)pc.offset, (unsigned long long)pc.len,
                        (unsigned long long)offset, (unsigned long long)len);
            if (pc.len == 0 || pc.offset < offset || pc.offset + pc.len > offset + len)
                break;
            if (i > 0)
                ROUTE_CHECK(pc.offset > prev_end,
                            "%s: piece at %llu does not start after the previous one (end %llu): "
                            "unsorted, overlapping or not merged",
                            what, (unsigned long long)pc.offset, (unsigned long long)prev_end);
            else if (w == prev_writer)
                ROUTE_CHECK(pc.offset >= prev_writer_end,
                            "%s: writer %d's next message goes back to %llu (previous ended at %llu)",
                            what, w, (unsigned long long)pc.offset,
                            (unsigned long long)prev_writer_end);
            for (uint64_t s = pc.offset / p->stripe_size; s <= (pc.offset + pc.len - 1) / p->stripe_size;
                 s++)
                ROUTE_CHECK(fwdioi_plan_stripe_writer(p, s) == w,
                            "%s: piece [%llu, +%llu) for writer %d holds stripe %llu of writer %d",
                            what, (unsigned long long)pc.offset, (unsigned long long)pc.len, w,
                            (unsigned long long)s, fwdioi_plan_stripe_writer(p, s));
            const uint8_t *bytes = data;
            if (lent) {
                bytes = fwdioi_msg_piece_data(m, &pc, NULL);
                ROUTE_CHECK(bytes == buf + (pc.offset - offset),
                            "%s: lent piece at %llu does not point into the caller's buffer", what,
                            (unsigned long long)pc.offset);
            }
            ROUTE_CHECK(memcmp(bytes, image + pc.offset, pc.len) == 0,
                        "%s: the bytes of piece [%llu, +%llu) are not the write's", what,
                        (unsigned long long)pc.offset, (unsigned long long)pc.len);
            for (uint64_t j = 0; j < pc.len; j++)
                seen[pc.offset - offset + j]++;
            if (!lent)
                data += pc.len;
            sum += pc.len;
            prev_end = pc.offset + pc.len;
        }
        ROUTE_CHECK(sum == m->payload, "%s: pieces hold %llu bytes, payload %llu", what,
                    (unsigned long long)sum, (unsigned long long)m->payload);
        got[w] += m->payload;
        msgs[w]++;
        prev_writer = w;
        prev_writer_end = prev_end;
    }
    ROUTE_CHECK(first && last == prev && STAILQ_NEXT(&last->task, link) == NULL,
                "%s: the chain does not end at *last", what);
    for (uint64_t j = 0; j < len; j++)
        ROUTE_CHECK(seen[j] == 1, "%s: byte %llu is in %d pieces", what,
                    (unsigned long long)(offset + j), seen[j]);
    for (int w = 0; w < nw; w++) {
        ROUTE_CHECK(got[w] == expect[w], "%s: writer %d got %llu bytes, owns %llu of the write",
                    what, w, (unsigned long long)got[w], (unsigned long long)expect[w]);
        uint64_t want = (expect[w] + cap - 1) / cap;
        ROUTE_CHECK((uint64_t)msgs[w] == want, "%s: writer %d got %d messages, not %llu", what, w,
                    msgs[w], (unsigned long long)want);
    }
    if (lent)
        ROUTE_CHECK(lent->refs == nmsgs, "%s: the lent call counts %d messages, not %d", what,
                    lent->refs, nmsgs);
#undef ROUTE_CHECK
    free(seen);
    return nmsgs;
}

/* Route one write copied: reserve its staging as fwdio_write does, route,
 * overwrite the caller's buffer, check, free; the staging must come back
 * exactly. */
static void route_copied(fwdio_file_t *f, uint64_t offset, uint64_t len, const uint8_t *image,
                         const char *what)
{
    struct fwdio_runtime *o = f->owner;
    uint8_t *buf = malloc(len);
    memcpy(buf, image + offset, len);
    fwdioi_rt_lock(f->engine);
    uint64_t staged0 = o->staged;
    int rc = fwdioi_staging_reserve_locked(f, len, 1);
    fwdioi_rt_unlock(f->engine);
    TC_EXPECT(rc, FWDIO_OK, "staging reserve");
    fwdioi_task_list_t list;
    rc = fwdioi_route_write(f, buf, len, offset, NULL, &list);
    fwdioi_msg_t *first = (fwdioi_msg_t *)STAILQ_FIRST(&list);
    fwdioi_msg_t *last = last_msg(&list);
    TC_EXPECT(rc, FWDIO_OK, what);
    memset(buf, 0x5a, len); /* the messages must hold their own copy */
    if (rc == FWDIO_OK)
        check_messages(f, first, last, offset, len, image, buf, NULL, what);
    fwdioi_msgs_free(f->engine, &list);
    fwdioi_rt_lock(f->engine);
    TC_CHECK(o->staged == staged0 && f->staged_file == 0,
             "%s: after the messages were freed %llu bytes are staged (%llu before), %llu for the file",
             what, (unsigned long long)o->staged, (unsigned long long)staged0,
             (unsigned long long)f->staged_file);
    fwdioi_rt_unlock(f->engine);
    free(buf);
}

/* Free one message on the progress thread, where the library frees sent
 * messages: the last one of a lent write delivers its callback from there. */
static void free_msg(void *arg)
{
    fwdioi_msg_t *m = arg;
    fwdioi_msg_free(m->file->engine, m);
}

/* Route one write lent: check, then free the messages one by one; the lent
 * callback runs once, in fwdio_poll after the last one is freed. */
static void route_lent(fwdio_runtime_t *rt, fwdio_file_t *f, uint64_t offset, uint64_t len,
                       const uint8_t *image, const char *what)
{
    uint8_t *buf = malloc(len);
    memcpy(buf, image + offset, len);
    fwdioi_lent_t *lent = calloc(1, sizeof *lent);
    lent->call.run = on_lent_done;
    lent->file = f;
    lent->buf = buf;
    lent->status = FWDIO_OK;
    uint64_t staged0 = ft_staged(rt);
    fwdioi_task_list_t list;
    int rc = fwdioi_route_write(f, buf, len, offset, lent, &list);
    fwdioi_msg_t *first = (fwdioi_msg_t *)STAILQ_FIRST(&list);
    fwdioi_msg_t *last = last_msg(&list);
    TC_EXPECT(rc, FWDIO_OK, what);
    if (rc == FWDIO_OK)
        check_messages(f, first, last, offset, len, image, buf, lent, what);
    TC_CHECK(ft_staged(rt) == staged0, "%s: a lent write counts against the staging budget", what);
    int calls0 = atomic_load(&g_lent_calls);
    for (fwdioi_msg_t *m = first; m;) {
        fwdioi_msg_t *next = (fwdioi_msg_t *)STAILQ_NEXT(&m->task, link);
        if (!next) { /* before the last: nothing to deliver yet */
            fwdio_poll(rt);
            TC_CHECK(atomic_load(&g_lent_calls) == calls0,
                     "%s: the lent callback ran before the last message was freed", what);
        }
        ft_on_progress(rt, free_msg, m);
        m = next;
    }
    fwdio_poll(rt); /* poll mode: the callback was queued for the application */
    TC_CHECK(atomic_load(&g_lent_calls) == calls0 + 1 && atomic_load(&g_lent_status) == FWDIO_OK,
             "%s: after the last message was freed the lent callback ran %d time(s), status %d",
             what, atomic_load(&g_lent_calls) - calls0, atomic_load(&g_lent_status));
    free(lent); /* the callback does not free it (api.c's does) */
    free(buf);
}

static void route_both(fwdio_runtime_t *rt, fwdio_file_t *f, uint64_t offset, uint64_t len,
                       const uint8_t *image, const char *shape)
{
    char what[256];
    snprintf(what, sizeof what, "%s, write [%llu, +%llu)", shape, (unsigned long long)offset,
             (unsigned long long)len);
    tc_phase("%s copied", what);
    route_copied(f, offset, len, image, what);
    tc_phase("%s lent", what);
    route_lent(rt, f, offset, len, image, what);
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static void run_case(fwdio_runtime_t *rt, const route_case_t *c, tc_rng_t *rng)
{
    const uint64_t cap = fwdioi_rt_config(rt->engine)->max_message_size;
    char shape[160];
    snprintf(shape, sizeof shape, "%s W=%d T=%d stripe %llu size %llu cap %llu",
             layout_name(c->layout), c->nwriters, c->targets, (unsigned long long)c->stripe,
             (unsigned long long)c->size, (unsigned long long)cap);
    detached_t d;
    detached_init(&d, rt, c);
    uint8_t *image = malloc(c->size);
    uint64_t seed = tc_rng_next(rng);
    pattern_fill(image, c->size, 0, seed);

    /* edges: the whole file, its first and last byte, a stripe boundary, one
     * whole stripe, exactly one and just over one message */
    write_spec_t fixed[] = {
        {0, c->size},
        {0, 1},
        {c->size - 1, 1},
        {0, min_u64(c->size, cap)},
        {0, min_u64(c->size, cap + 1)},
        {c->size > c->stripe ? c->stripe - 1 : 0, c->size > c->stripe ? 2 : c->size},
        {c->size > c->stripe ? c->stripe : 0,
         c->size > c->stripe ? min_u64(c->stripe, c->size - c->stripe) : c->size},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        route_both(rt, d.f, fixed[i].offset, fixed[i].len, image, shape);
    /* random writes: a few bytes, about a stripe, up to several messages */
    for (int i = 0; i < RANDOM_WRITES; i++) {
        uint64_t most;
        switch (i % 3) {
        case 0: most = 64; break;
        case 1: most = 2 * c->stripe; break;
        default: most = 3 * cap + 7; break;
        }
        uint64_t len = 1 + tc_rng_below(rng, min_u64(most, c->size));
        uint64_t offset = tc_rng_below(rng, c->size - len + 1);
        route_both(rt, d.f, offset, len, image, shape);
    }
    free(image);
    detached_free(&d);
}

/* The same checks on a file fwdio_open built (one writer: this rank), whose
 * session never sees these messages; then the file is closed and completes. */
static void opened_file(fwdio_runtime_t *rt)
{
    const uint64_t size = 300001;
    fwdio_options_t o = ft_options(8192, 4096, 1, FWDIO_LAYOUT_CYCLIC);
    char path[4096];
    tc_path(path, sizeof path, "route-opened");
    fwdio_file_t *f = NULL;
    tc_phase("opened file");
    TC_EXPECT(fwdio_open(rt, path, size, &o, NULL, &f), FWDIO_OK, "fwdio_open");
    if (!f)
        return;
    TC_CHECK(f->plan.nwriters == 1 && f->plan.stripe_size == 8192, "the opened file's plan");
    uint8_t *image = malloc(size);
    pattern_fill(image, size, 0, 77);
    route_both(rt, f, 0, size, image, "opened file");
    route_both(rt, f, 8191, 20000, image, "opened file");
    free(image);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "the opened file (nothing written)");
    fwdio_file_free(f);
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    for (int i = 1; i < argc; i++) {
        if (!tc_common_option(argc, argv, &i, &timeout, &mode)) {
            fprintf(stderr, "usage: %s [--timeout SEC]\n", argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    if (tc_size != 1) {
        if (tc_rank == 0)
            fprintf(stderr, "test_route runs on one rank\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tc_rng_t rng;
    tc_rng_seed(&rng, 2024);
    /* caps: the smallest allowed, one that divides no stripe, and a large one */
    const size_t caps[] = {4096, 5000, (size_t)1 << 20};
    for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
        fwdio_config_t cfg;
        fwdio_config_init(&cfg);
        cfg.max_message_size = caps[k];
        cfg.callback_mode = FWDIO_CALLBACKS_ON_POLL; /* the lent callback runs in fwdio_poll */
        fwdio_runtime_t *rt = ft_runtime(&cfg);
        TC_CHECK(fwdioi_rt_config(rt->engine)->max_message_size == caps[k],
                 "max_message_size %zu in force, not %zu",
                 fwdioi_rt_config(rt->engine)->max_message_size, caps[k]);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            run_case(rt, &cases[i], &rng);
        if (k == 0)
            opened_file(rt);
        tc_phase("finalize");
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    return tc_finish("test_route");
}
