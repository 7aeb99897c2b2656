/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One shared file written by every rank through fwdio, then verified byte for
 * byte against the pattern (holes against zeros).
 *
 * The write plan is a pure function of the options and the seed, so every rank
 * knows who writes which extent (for verification) without talking:
 *   --chunk random      extents of random size (some tiny, many crossing
 *                       stripes) given to random ranks, each rank issuing its
 *                       extents in a random order;
 *   --chunk block       each active rank one contiguous region, written in
 *                       pieces of --max-chunk bytes, in order;
 *   --chunk roundrobin  pieces of --max-chunk bytes dealt to the ranks in turn;
 *   --chunk tiny        records of 1..--max-chunk bytes in runs of 1..16 for one
 *                       random rank (atoms ordered by id after migration), each
 *                       rank writing its records one call each in file order,
 *                       so consecutive calls are often adjacent in the file and
 *                       often not.
 * --holes leaves some extents (always the first and the last) unwritten;
 * --idle-rank R makes rank R write nothing (it still opens and closes);
 * --durable asks the writers to fdatasync before complete.
 *
 * Write combining: --combine-size off|S sets fwdio_config_t.combine_size;
 * --expect-combined checks through fwdio_file_stats that a rank with at least
 * 100 calls sent at most a quarter as many messages (small writes were
 * combined), --expect-uncombined that it sent at least one message per call.
 * The progress thread also sends open messages that are poll_max_us old, up to
 * one per writer each time, so a slow write loop on a loaded machine sends
 * more of them: --poll-max-us 50000 makes that need a loop of minutes.
 * Always checked: bytes_written and write_calls match the calls made, and no
 * byte is left counted as staged once the file is complete.
 *
 * Placement and layout: --policy spread|stride|list (--writers-per-node N for
 * spread, --first-writer/--stride for stride, --list R,R,... for list) and
 * --layout block|cyclic|targets (--targets T for targets).
 *
 * The writes are issued right after fwdio_open, before the file is ready (in
 * ON_POLL mode no callback may have run before the application polls).
 * Also checked: fwdio_open/write/close return FWDIO_OK, the final status is
 * FWDIO_OK on every rank, ready and complete run once each and in order with
 * the same status everywhere, fwdio_file_error reports success, and
 * fwdio_file_writers gives the placement the header documents, and
 * fwdio_file_writer_bytes gives each writer exactly the bytes of the stripes
 * the documented layout (fwdio.h, forwarder/plan/plan.h) assigns to it.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

enum chunk_mode { CHUNK_RANDOM, CHUNK_BLOCK, CHUNK_ROUNDROBIN, CHUNK_TINY };
enum combine_expectation { EXPECT_ANY, EXPECT_COMBINED, EXPECT_UNCOMBINED };
enum wait_mode { WAIT_WAIT, WAIT_TEST, WAIT_POLL };
enum { POLICY_UNSET = -1 };
#define MAX_LIST 64

typedef struct opts {
    fwdio_layout_t layout;
    int writers; /* 0: default, -1: every rank */
    int first_writer;
    int stride;
    int policy; /* POLICY_UNSET or a fwdio_placement_t */
    int writers_per_node;
    int list[MAX_LIST];
    int list_len;
    int targets;
    uint64_t size;
    uint64_t stripe_size;
    uint64_t write_size;
    uint64_t max_chunk;
    uint64_t max_message;
    uint64_t combine_size; /* fwdio_config_t.combine_size: 0 default, 1 off */
    unsigned poll_max_us;  /* fwdio_config_t.poll_max_us: 0 default */
    enum combine_expectation expect;
    enum chunk_mode chunk;
    uint64_t seed;
    int holes;
    int durable;
    int idle_rank;
    fwdio_callback_mode_t cb_mode;
    enum wait_mode wait;
    unsigned timeout;
} opts_t;

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--layout block|cyclic|targets] [--targets T] [--writers N|P]\n"
            "          [--policy spread|stride|list] [--writers-per-node N] [--list R,R,...]\n"
            "          [--first-writer N] [--stride N]\n"
            "          [--size S] [--stripe-size S] [--write-size S]\n"
            "          [--chunk random|block|roundrobin|tiny] [--max-chunk S] [--max-message S]\n"
            "          [--combine-size off|S] [--expect-combined | --expect-uncombined]\n"
            "          [--poll-max-us N]\n"
            "          [--seed N] [--holes] [--durable] [--idle-rank R]\n"
            "          [--callback-mode poll|progress] [--wait wait|test|poll] [--timeout SEC]\n"
            "sizes accept K/M/G suffixes\n",
            prog);
}

/* "7,2,5" into out[0..max); returns 0, or -1 for a bad or too long list. */
static int parse_list(const char *text, int *out, int max, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 1 << 20 || *n == max || (*end && *end != ',') ||
            (*end == ',' && end[1] == '\0'))
            return -1;
        out[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return *n > 0 ? 0 : -1;
}

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->layout = FWDIO_LAYOUT_BLOCK;
    o->size = 1 << 20;
    o->max_chunk = 100000;
    o->chunk = CHUNK_RANDOM;
    o->seed = 1;
    o->idle_rank = -1;
    o->cb_mode = FWDIO_CALLBACKS_ON_POLL;
    o->wait = WAIT_WAIT;
    o->timeout = 100;
    o->policy = POLICY_UNSET;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
#define NEEDV()                                                                            \
    do {                                                                                   \
        if (!v) {                                                                          \
            fprintf(stderr, "%s needs a value\n", a);                                      \
            return -1;                                                                     \
        }                                                                                  \
        i++;                                                                               \
    } while (0)
        if (!strcmp(a, "--layout")) {
            NEEDV();
            if (!strcmp(v, "block"))
                o->layout = FWDIO_LAYOUT_BLOCK;
            else if (!strcmp(v, "cyclic"))
                o->layout = FWDIO_LAYOUT_CYCLIC;
            else if (!strcmp(v, "targets"))
                o->layout = FWDIO_LAYOUT_TARGETS;
            else
                return -1;
        } else if (!strcmp(a, "--targets")) {
            NEEDV();
            o->targets = (int)tc_parse_long(v);
            if (o->targets < 1)
                return -1;
        } else if (!strcmp(a, "--policy")) {
            NEEDV();
            if (!strcmp(v, "spread"))
                o->policy = FWDIO_PLACEMENT_SPREAD;
            else if (!strcmp(v, "stride"))
                o->policy = FWDIO_PLACEMENT_STRIDE;
            else if (!strcmp(v, "list"))
                o->policy = FWDIO_PLACEMENT_LIST;
            else
                return -1;
        } else if (!strcmp(a, "--writers-per-node")) {
            NEEDV();
            o->writers_per_node = (int)tc_parse_long(v);
            if (o->writers_per_node < 1)
                return -1;
        } else if (!strcmp(a, "--list")) {
            NEEDV();
            if (parse_list(v, o->list, MAX_LIST, &o->list_len) != 0)
                return -1;
        } else if (!strcmp(a, "--writers")) {
            NEEDV();
            o->writers = (!strcmp(v, "P") || !strcmp(v, "all")) ? -1 : (int)tc_parse_long(v);
        } else if (!strcmp(a, "--first-writer")) {
            NEEDV();
            o->first_writer = (int)tc_parse_long(v);
        } else if (!strcmp(a, "--stride")) {
            NEEDV();
            o->stride = (int)tc_parse_long(v);
        } else if (!strcmp(a, "--size")) {
            NEEDV();
            o->size = tc_parse_size(v);
        } else if (!strcmp(a, "--stripe-size")) {
            NEEDV();
            o->stripe_size = tc_parse_size(v);
        } else if (!strcmp(a, "--write-size")) {
            NEEDV();
            o->write_size = tc_parse_size(v);
        } else if (!strcmp(a, "--max-chunk")) {
            NEEDV();
            o->max_chunk = tc_parse_size(v);
        } else if (!strcmp(a, "--max-message")) {
            NEEDV();
            o->max_message = tc_parse_size(v);
        } else if (!strcmp(a, "--combine-size")) {
            NEEDV();
            o->combine_size = !strcmp(v, "off") ? 1 : tc_parse_size(v);
        } else if (!strcmp(a, "--poll-max-us")) {
            NEEDV();
            o->poll_max_us = (unsigned)tc_parse_long(v);
        } else if (!strcmp(a, "--expect-combined")) {
            o->expect = EXPECT_COMBINED;
        } else if (!strcmp(a, "--expect-uncombined")) {
            o->expect = EXPECT_UNCOMBINED;
        } else if (!strcmp(a, "--chunk")) {
            NEEDV();
            if (!strcmp(v, "random"))
                o->chunk = CHUNK_RANDOM;
            else if (!strcmp(v, "block"))
                o->chunk = CHUNK_BLOCK;
            else if (!strcmp(v, "roundrobin"))
                o->chunk = CHUNK_ROUNDROBIN;
            else if (!strcmp(v, "tiny"))
                o->chunk = CHUNK_TINY;
            else
                return -1;
        } else if (!strcmp(a, "--seed")) {
            NEEDV();
            o->seed = tc_parse_size(v);
        } else if (!strcmp(a, "--holes")) {
            o->holes = 1;
        } else if (!strcmp(a, "--durable")) {
            o->durable = 1;
        } else if (!strcmp(a, "--idle-rank")) {
            NEEDV();
            o->idle_rank = (int)tc_parse_long(v);
        } else if (!strcmp(a, "--callback-mode")) {
            NEEDV();
            if (!strcmp(v, "poll"))
                o->cb_mode = FWDIO_CALLBACKS_ON_POLL;
            else if (!strcmp(v, "progress"))
                o->cb_mode = FWDIO_CALLBACKS_ON_PROGRESS;
            else
                return -1;
        } else if (!strcmp(a, "--wait")) {
            NEEDV();
            if (!strcmp(v, "wait"))
                o->wait = WAIT_WAIT;
            else if (!strcmp(v, "test"))
                o->wait = WAIT_TEST;
            else if (!strcmp(v, "poll"))
                o->wait = WAIT_POLL;
            else
                return -1;
        } else if (!strcmp(a, "--timeout")) {
            NEEDV();
            o->timeout = (unsigned)tc_parse_long(v);
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return -1;
        }
#undef NEEDV
    }
    if (o->max_chunk == 0)
        return -1;
    if (o->list_len > 0 && o->policy == POLICY_UNSET)
        o->policy = FWDIO_PLACEMENT_LIST;
    if ((o->policy == FWDIO_PLACEMENT_LIST) != (o->list_len > 0)) {
        fprintf(stderr, "--policy list and --list go together\n");
        return -1;
    }
    if (o->targets && o->layout != FWDIO_LAYOUT_TARGETS) {
        fprintf(stderr, "--targets needs --layout targets\n");
        return -1;
    }
    return 0;
}

/* The whole write plan, identical on every rank. */
typedef struct plan {
    tc_extent_t *ext;
    size_t n;
    size_t cap;
} plan_t;

static void plan_push(plan_t *p, uint64_t off, uint64_t len, int owner)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->ext = realloc(p->ext, p->cap * sizeof *p->ext);
        if (!p->ext) {
            fprintf(stderr, "out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    p->ext[p->n].offset = off;
    p->ext[p->n].len = len;
    p->ext[p->n].owner = owner;
    p->n++;
}

static void make_plan(const opts_t *o, int nprocs, plan_t *p)
{
    memset(p, 0, sizeof *p);
    int *active = malloc(sizeof(int) * (size_t)nprocs);
    int n_active = 0;
    for (int r = 0; r < nprocs; r++)
        if (r != o->idle_rank)
            active[n_active++] = r;
    tc_rng_t rng;
    tc_rng_seed(&rng, o->seed);

    if (o->chunk == CHUNK_RANDOM) {
        for (uint64_t off = 0; off < o->size;) {
            uint64_t len = (tc_rng_below(&rng, 4) == 0) ? 1 + tc_rng_below(&rng, 64)
                                                         : 1 + tc_rng_below(&rng, o->max_chunk);
            if (len > o->size - off)
                len = o->size - off;
            int owner = n_active ? active[tc_rng_below(&rng, (uint64_t)n_active)] : -1;
            plan_push(p, off, len, owner);
            off += len;
        }
    } else if (o->chunk == CHUNK_BLOCK) {
        int parts = n_active ? n_active : 1;
        for (int i = 0; i < parts; i++) {
            uint64_t lo = o->size * (uint64_t)i / (uint64_t)parts;
            uint64_t hi = o->size * (uint64_t)(i + 1) / (uint64_t)parts;
            for (uint64_t off = lo; off < hi; off += o->max_chunk) {
                uint64_t len = hi - off < o->max_chunk ? hi - off : o->max_chunk;
                plan_push(p, off, len, n_active ? active[i] : -1);
            }
        }
    } else if (o->chunk == CHUNK_TINY) {
        int owner = -1;
        uint64_t run_left = 0;
        for (uint64_t off = 0; off < o->size;) {
            if (run_left == 0) {
                owner = n_active ? active[tc_rng_below(&rng, (uint64_t)n_active)] : -1;
                run_left = 1 + tc_rng_below(&rng, 16);
            }
            uint64_t len = 1 + tc_rng_below(&rng, o->max_chunk);
            if (len > o->size - off)
                len = o->size - off;
            plan_push(p, off, len, owner);
            off += len;
            run_left--;
        }
    } else {
        uint64_t k = 0;
        for (uint64_t off = 0; off < o->size; off += o->max_chunk, k++) {
            uint64_t len = o->size - off < o->max_chunk ? o->size - off : o->max_chunk;
            plan_push(p, off, len, n_active ? active[k % (uint64_t)n_active] : -1);
        }
    }
    if (o->holes) {
        for (size_t i = 0; i < p->n; i++)
            if (tc_rng_below(&rng, 5) == 0)
                p->ext[i].owner = -1;
        if (p->n >= 3) {
            p->ext[0].owner = -1;
            p->ext[p->n - 1].owner = -1;
        }
    }
    free(active);
}

/* Check fwdio_file_writers against the placement documented in fwdio.h. */
static void check_writers(const opts_t *o, const fwdio_file_t *f, int nprocs)
{
    int n = fwdio_file_writers(f, NULL, 0);
    int valid = n > 0 && n <= nprocs;
    int *ranks = calloc(valid ? (size_t)n : 1, sizeof(int));
    long sig = -1 - tc_rank; /* differs between ranks unless the list is valid */
    if (!valid) {
        tc_fail("fwdio_file_writers(count) returned %d with %d ranks", n, nprocs);
    } else {
        int n2 = fwdio_file_writers(f, ranks, n);
        TC_CHECK(n2 == n, "fwdio_file_writers returned %d then %d", n, n2);
        for (int i = 0; i < n; i++) {
            TC_CHECK(ranks[i] >= 0 && ranks[i] < nprocs, "writer %d is rank %d, outside [0, %d)",
                     i, ranks[i], nprocs);
            for (int j = 0; j < i; j++)
                TC_CHECK(ranks[i] != ranks[j], "rank %d is listed twice as a writer", ranks[i]);
        }
        sig = n;
        for (int i = 0; i < n; i++)
            sig = sig * 131 + ranks[i];
    }
    /* The same collectives on every rank, whatever this rank found. */
    if (!tc_all_same(MPI_COMM_WORLD, sig))
        tc_fail("the writer list differs between ranks");
    int nodes = tc_node_count(MPI_COMM_WORLD);
    if (!valid) {
        free(ranks);
        return;
    }

    int avail = nprocs - o->first_writer;
    int w;
    if (o->policy == FWDIO_PLACEMENT_LIST)
        w = o->list_len;
    else if (o->writers_per_node > 0 && o->policy != FWDIO_PLACEMENT_STRIDE &&
             !o->first_writer && !o->stride)
        w = o->writers_per_node * nodes; /* spread: writers_per_node per node */
    else if (o->writers > 0)
        w = o->writers;
    else if (o->writers < 0)
        w = nprocs;
    else
        w = fwdio_default_writers(nprocs, nodes);
    /* List placement: exactly the list, in its order. Stride placement (asked
     * for, or implied by a first writer or a stride): first + i * stride.
     * Spread on one node whose ranks are not bound (mpiexec --oversubscribe
     * does not bind): the stride rule, writer i at floor(i * P / W). */
    int list_placement = o->policy == FWDIO_PLACEMENT_LIST;
    int stride_placement = !list_placement && (o->policy == FWDIO_PLACEMENT_STRIDE ||
                                               o->stride > 0 || o->first_writer > 0);
    int stride = o->stride > 0 ? o->stride : (avail / w > 1 ? avail / w : 1);
    int can = stride_placement ? (avail + stride - 1) / stride : nprocs;
    int want_n = w < can ? w : can;
    int *want = malloc((size_t)(want_n > 0 ? want_n : 1) * sizeof *want);
    for (int i = 0; i < want_n; i++)
        want[i] = list_placement     ? o->list[i]
                  : stride_placement ? o->first_writer + i * stride
                                     : (int)((long)i * nprocs / want_n);
    const char *policy_name = list_placement ? "list" : stride_placement ? "stride" : "spread";
    if (list_placement || stride_placement ||
        (nodes == 1 && !tc_ranks_bound(MPI_COMM_WORLD))) {
        int same = (n == want_n);
        for (int i = 0; same && i < n; i++)
            same = ranks[i] == want[i];
        if (!same) {
            char got[256] = "", exp[256] = "";
            for (int i = 0; i < n && strlen(got) < 200; i++)
                snprintf(got + strlen(got), sizeof got - strlen(got), " %d", ranks[i]);
            for (int i = 0; i < want_n && strlen(exp) < 200; i++)
                snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %d", want[i]);
            tc_fail("writers are [%s ] but fwdio.h's %s placement (writers %d, first %d, "
                    "stride %d, %d node(s)) gives [%s ]",
                    got, policy_name, w, o->first_writer, stride, nodes, exp);
        }
    } else {
        TC_CHECK(n == want_n || o->writers == 0 || o->writers_per_node > 0,
                 "%d writers, expected %d", n, want_n);
        if (o->writers_per_node > 0) {
            /* No node holds more writers than writers_per_node. */
            int mine = 0, node_writers = 0;
            for (int i = 0; i < n; i++)
                mine |= ranks[i] == tc_rank;
            MPI_Comm node;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
            MPI_Allreduce(&mine, &node_writers, 1, MPI_INT, MPI_SUM, node);
            MPI_Comm_free(&node);
            TC_CHECK(node_writers <= o->writers_per_node,
                     "rank %d's node holds %d writers, writers_per_node is %d", tc_rank,
                     node_writers, o->writers_per_node);
        }
    }
    free(want);
    if (tc_rank == 0) {
        char got[256] = "";
        for (int i = 0; i < n && strlen(got) < 200; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " %d", ranks[i]);
        tc_note("writer ranks:%s", got);
    }
    free(ranks);
}

/*
 * Writer (index) of stripe s as documented: block — contiguous runs, the last
 * nstripes mod W writers one stripe longer; cyclic — s mod W; targets — stripe
 * s on target t = s mod T; with W <= T writer w owns a contiguous group of
 * floor(T/W) targets, the last T mod W groups one longer; with W > T target t
 * is served by writers t, t + T, t + 2T, ... (< W), which take its stripes in
 * turn.
 */
static uint64_t layout_writer(fwdio_layout_t layout, uint64_t s, uint64_t nstripes, uint64_t W,
                              uint64_t T)
{
    if (layout == FWDIO_LAYOUT_CYCLIC)
        return s % W;
    uint64_t items = layout == FWDIO_LAYOUT_BLOCK ? nstripes : T;
    uint64_t item = layout == FWDIO_LAYOUT_BLOCK ? s : s % T;
    if (layout == FWDIO_LAYOUT_TARGETS && W > T) {
        uint64_t t = s % T, serving = W / T + (t < W % T ? 1 : 0);
        return t + ((s / T) % serving) * T;
    }
    uint64_t q = items / W, nshort = W - items % W;
    return item < nshort * q ? item / q : nshort + (item - nshort * q) / (q + 1);
}

/* Check fwdio_file_writer_bytes against the bytes the plan's extents put in
 * each writer's stripes under the documented layout. */
static void check_layout(const opts_t *o, const fwdio_file_t *f, const plan_t *plan)
{
    int n = fwdio_file_writers(f, NULL, 0);
    if (n <= 0)
        return; /* reported by check_writers */
    uint64_t *got = calloc((size_t)n, sizeof *got), *want = calloc((size_t)n, sizeof *want);
    if (!got || !want) {
        tc_fail("out of memory");
        free(got);
        free(want);
        return;
    }
    TC_CHECK(fwdio_file_writer_bytes(f, got, n) == n, "fwdio_file_writer_bytes count");
    uint64_t write_size = o->write_size ? o->write_size
                          : o->stripe_size % FWDIO_DEFAULT_WRITE_SIZE == 0
                              ? FWDIO_DEFAULT_WRITE_SIZE
                              : o->stripe_size;
    uint64_t stripe = o->stripe_size ? o->stripe_size : write_size * FWDIO_DEFAULT_STRIPE_UNITS;
    uint64_t nstripes = (o->size + stripe - 1) / stripe;
    uint64_t W = (uint64_t)n, T = o->targets ? (uint64_t)o->targets : W;
    for (size_t i = 0; i < plan->n; i++) {
        const tc_extent_t *e = &plan->ext[i];
        if (e->owner < 0)
            continue;
        for (uint64_t off = e->offset; off < e->offset + e->len;) {
            uint64_t s = off / stripe, end = (s + 1) * stripe;
            if (end > e->offset + e->len)
                end = e->offset + e->len;
            want[layout_writer(o->layout, s, nstripes, W, T)] += end - off;
            off = end;
        }
    }
    char line[512] = "";
    int bad = 0;
    for (int w = 0; w < n; w++) {
        bad |= got[w] != want[w];
        if (strlen(line) < 400)
            snprintf(line + strlen(line), sizeof line - strlen(line), " %" PRIu64 "/%" PRIu64,
                     got[w], want[w]);
    }
    if (bad)
        tc_fail("bytes per writer (got/documented) differ from the %s layout (W %d, T %" PRIu64
                ", %" PRIu64 " stripes):%s",
                o->layout == FWDIO_LAYOUT_BLOCK ? "block"
                : o->layout == FWDIO_LAYOUT_CYCLIC ? "cyclic" : "targets",
                n, T, nstripes, line);
    else if (tc_rank == 0)
        tc_note("bytes per writer as documented (%" PRIu64 " stripes, T %" PRIu64 "):%s",
                nstripes, T, line);
    free(got);
    free(want);
}

/* The complete file's counters on this rank: every call and byte counted,
 * nothing left staged, and as many messages as combining (on or off) implies. */
static void check_stats(const opts_t *o, fwdio_runtime_t *rt, const fwdio_file_t *f,
                        uint64_t calls, uint64_t bytes)
{
    fwdio_file_stats_t st;
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    TC_CHECK(st.write_calls == calls && st.bytes_written == bytes,
             "stats: %" PRIu64 " calls of %" PRIu64 " bytes, made %" PRIu64 " of %" PRIu64,
             st.write_calls, st.bytes_written, calls, bytes);
    TC_CHECK(rs.staged == 0, "%" PRIu64 " bytes still counted as staged after complete",
             rs.staged);
    if (o->combine_size == 1 || o->expect == EXPECT_UNCOMBINED)
        TC_CHECK(rs.combine_size == 1, "combining off, but combine_size %" PRIu64 " in force",
                 rs.combine_size);
    if (o->expect == EXPECT_COMBINED && calls >= 100)
        TC_CHECK(st.messages_sent * 4 <= calls,
                 "combining on: %" PRIu64 " messages for %" PRIu64 " calls", st.messages_sent,
                 calls);
    if (o->expect == EXPECT_UNCOMBINED)
        TC_CHECK(st.messages_sent >= calls,
                 "combining off: %" PRIu64 " messages for %" PRIu64 " calls", st.messages_sent,
                 calls);
    long all_calls = tc_sum(MPI_COMM_WORLD, (long)st.write_calls);
    long all_msgs = tc_sum(MPI_COMM_WORLD, (long)st.messages_sent);
    if (tc_rank == 0)
        tc_note("%ld write calls sent as %ld messages (combine_size %" PRIu64 ")", all_calls,
                all_msgs, rs.combine_size);
}

int main(int argc, char **argv)
{
    opts_t o;
    int bad_args = 0;
    if (parse(argc, argv, &o) != 0)
        bad_args = 1;
    tc_mpi_init(&argc, &argv, bad_args ? 0 : o.timeout);
    if (bad_args) {
        if (tc_rank == 0)
            usage(argv[0]);
        MPI_Finalize();
        return 2;
    }
    int P = tc_size;
    for (int i = 0; i < o.list_len; i++)
        if (o.list[i] >= P) {
            if (tc_rank == 0)
                fprintf(stderr, "--list rank %d needs at least %d ranks\n", o.list[i],
                        o.list[i] + 1);
            MPI_Finalize();
            return 2;
        }
    if (o.idle_rank >= P) {
        if (tc_rank == 0)
            fprintf(stderr, "--idle-rank %d needs at least %d ranks\n", o.idle_rank,
                    o.idle_rank + 1);
        MPI_Finalize();
        return 2;
    }

    plan_t plan;
    make_plan(&o, P, &plan);
    size_t mine = 0, holes = 0;
    uint64_t my_bytes = 0;
    for (size_t i = 0; i < plan.n; i++) {
        if (plan.ext[i].owner == tc_rank) {
            mine++;
            my_bytes += plan.ext[i].len;
        }
        if (plan.ext[i].owner < 0)
            holes++;
    }
    size_t *order = malloc(sizeof(size_t) * (mine + 1));
    size_t k = 0;
    for (size_t i = 0; i < plan.n; i++)
        if (plan.ext[i].owner == tc_rank)
            order[k++] = i;
    if (o.chunk == CHUNK_RANDOM) {
        tc_rng_t rng;
        tc_rng_seed(&rng, o.seed * 1000003u + (uint64_t)tc_rank + 1);
        for (size_t i = mine; i > 1; i--) {
            size_t j = (size_t)tc_rng_below(&rng, i);
            size_t t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
    }
    if (tc_rank == 0)
        tc_note("size %" PRIu64 ", %zu extents (%zu holes), layout %s (targets %d), policy %s, "
                "writers %d (per node %d, list of %d), stripe %" PRIu64 ", write %" PRIu64
                ", seed %" PRIu64,
                o.size, plan.n, holes,
                o.layout == FWDIO_LAYOUT_BLOCK    ? "block"
                : o.layout == FWDIO_LAYOUT_CYCLIC ? "cyclic"
                                                  : "targets",
                o.targets,
                o.policy == FWDIO_PLACEMENT_LIST     ? "list"
                : o.policy == FWDIO_PLACEMENT_STRIDE ? "stride"
                : o.policy == FWDIO_PLACEMENT_SPREAD ? "spread"
                                                     : "default",
                o.writers < 0 ? P : o.writers, o.writers_per_node, o.list_len, o.stripe_size,
                o.write_size, o.seed);
    long total = tc_sum(MPI_COMM_WORLD, (long)my_bytes);
    if (o.idle_rank == tc_rank)
        TC_CHECK(mine == 0, "test bug: idle rank owns %zu extents", mine);

    tc_phase("fwdio_init");
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.callback_mode = o.cb_mode;
    cfg.max_message_size = (size_t)o.max_message;
    cfg.combine_size = (size_t)o.combine_size;
    cfg.poll_max_us = o.poll_max_us;
    fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);

    char path[4096];
    tc_path(path, sizeof path, "out.dat");
    fwdio_options_t fo;
    fwdio_options_init(&fo);
    fo.layout = o.layout;
    fo.writers = o.writers < 0 ? P : o.writers;
    fo.first_writer = o.first_writer;
    fo.writer_stride = o.stride;
    if (o.policy != POLICY_UNSET)
        fo.placement = (fwdio_placement_t)o.policy;
    fo.writers_per_node = o.writers_per_node;
    fo.writer_list = o.list_len ? o.list : NULL;
    fo.writer_list_len = o.list_len;
    fo.targets = o.targets;
    fo.durable = o.durable;
    if (o.stripe_size)
        fo.stripe_size = o.stripe_size;
    if (o.write_size)
        fo.write_size = o.write_size;

    tc_cbstate_t cbs_state;
    tc_cb_init(&cbs_state);
    fwdio_callbacks_t cbs = tc_cb_callbacks(&cbs_state);
    fwdio_file_t *f = NULL;
    tc_phase("fwdio_open");
    int rc = fwdio_open(rt, path, o.size, &fo, &cbs, &f);
    if (rc != FWDIO_OK || !f) {
        tc_fail("fwdio_open(%s, %" PRIu64 ") returned %d (%s)", path, o.size, rc,
                fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* Writes go out at once, typically before the file is ready. */
    tc_phase("writing %zu extents", mine);
    for (size_t i = 0; i < mine; i++) {
        const tc_extent_t *e = &plan.ext[order[i]];
        rc = tc_write_pattern(f, e->offset, e->len, o.seed, 0);
        if (rc != FWDIO_OK) {
            tc_fail("fwdio_write(offset %" PRIu64 ", len %" PRIu64 ") returned %d (%s)",
                    e->offset, e->len, rc, fwdio_strerror(rc));
            break;
        }
    }
    if (o.cb_mode == FWDIO_CALLBACKS_ON_POLL)
        TC_CHECK(atomic_load(&cbs_state.ready_count) == 0 &&
                     atomic_load(&cbs_state.complete_count) == 0,
                 "ON_POLL callbacks ran before the application polled (ready %d, complete %d)",
                 atomic_load(&cbs_state.ready_count), atomic_load(&cbs_state.complete_count));
    tc_phase("fwdio_close");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");

    tc_phase("waiting for completion");
    int status = FWDIO_OK;
    if (o.wait == WAIT_WAIT) {
        status = fwdio_wait(f);
    } else if (o.wait == WAIT_TEST) {
        struct timespec ts = {0, 200 * 1000};
        int done = 0;
        for (;;) {
            status = fwdio_test(f, &done);
            if (done || status != FWDIO_OK)
                break;
            nanosleep(&ts, NULL);
        }
        TC_CHECK(done == 1, "fwdio_test returned %d (%s) with done=%d", status,
                 fwdio_strerror(status), done);
    } else {
        tc_poll_until_complete(rt, &cbs_state);
        status = fwdio_wait(f);
        TC_CHECK(status == atomic_load(&cbs_state.complete_status),
                 "fwdio_wait returned %d but the complete callback got %d", status,
                 atomic_load(&cbs_state.complete_status));
    }
    TC_EXPECT(status, FWDIO_OK, "final status");
    /* Asking again returns the same final status. */
    TC_EXPECT(fwdio_wait(f), status, "second fwdio_wait");

    tc_phase("checking callbacks and error info");
    tc_cb_check(MPI_COMM_WORLD, &cbs_state, "out.dat", FWDIO_OK, FWDIO_OK, o.cb_mode, f);
    fwdio_error_info_t info;
    memset(&info, 0x7f, sizeof info);
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.status == FWDIO_OK, "fwdio_file_error_info status %d (%s) for a good file",
             info.status, fwdio_strerror(info.status));
    const char *es = fwdio_file_error(f);
    TC_CHECK(es && strcmp(es, fwdio_strerror(FWDIO_OK)) == 0,
             "fwdio_file_error of a good file is '%s', expected '%s'", es ? es : "(null)",
             fwdio_strerror(FWDIO_OK));
    check_writers(&o, f, P);
    check_layout(&o, f, &plan);
    check_stats(&o, rt, f, mine, my_bytes);

    tc_phase("verifying %s", path);
    int bad = tc_verify_extents(MPI_COMM_WORLD, path, o.size, o.seed, plan.ext, plan.n);
    if (tc_rank == 0 && bad == 0)
        tc_note("verified %" PRIu64 " bytes (%ld written, the rest holes)", o.size, total);

    fwdio_file_free(f);
    tc_phase("fwdio_finalize");
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    free(order);
    free(plan.ext);
    return tc_finish("test_write_patterns");
}
