/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cluster: fwdio across the simulated hosts of scripts/cluster.sh.
 *
 * Run through mpirun with the options `cluster.sh options` prints, so that
 * the ranks sit on --hosts N different hosts (network namespaces with their
 * own hostnames). Cases (--case):
 *
 *   hosts           The ranks see N distinct hostnames; MPI_Comm_split_type
 *                   (MPI_COMM_TYPE_SHARED) groups exactly the ranks of one
 *                   hostname; every rank sends --size bytes to a rank on the
 *                   next host, the payload arrives intact, and each host's
 *                   network interfaces count at least the bytes its ranks
 *                   sent and received (the messages crossed the veths); then
 *                   the ranks of each host exchange --size bytes in pairs,
 *                   and its interfaces, loopback included, count less than a
 *                   quarter of them (shared memory within a host).
 *   placement       Files written by every rank with the spread placement
 *                   (default writer count, writers_per_node 1, W = 2, W = N,
 *                   W = 6): every writer sits on the host the documented rule
 *                   gives (writers shared out evenly over the nodes, the
 *                   extras to the nodes with the most ranks, ties to the lower
 *                   node; nodes numbered by their lowest rank), the writer
 *                   list runs node by node, and every file verifies byte for
 *                   byte.
 *                   Where every host has a writer, bytes go both ways: to
 *                   writers of the sender's host through the node-shared
 *                   area, to the others over MPI (file stats).
 *   remote-writers  For each host h in turn, a file whose writers are exactly
 *                   the ranks of h (list placement) and whose bytes all come
 *                   from ranks of other hosts: it verifies, each writer
 *                   received what the layout gives it, host h's interfaces
 *                   received at least the file's bytes, and every byte went
 *                   over MPI, none through a node-shared area.
 *
 * Interface counters are read from /sys/class/net/<if>/statistics (the
 * host's own, as `ip netns exec` mounts a sysfs of the namespace); other
 * traffic only adds to them, so the lower bounds cannot fail by noise; the
 * upper bound within a host needs no other job on the cluster at the same time
 * (the ctest RESOURCE_LOCK fwdio_cluster). No timing is measured.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fwdio.h"
#include "pattern.h"
#include "test_common.h"

#define HOSTNAME_LEN 256

enum test_case { CASE_HOSTS, CASE_PLACEMENT, CASE_REMOTE_WRITERS };

typedef struct opts {
    enum test_case which;
    int hosts;
    uint64_t size;
    uint64_t seed;
    fwdio_callback_mode_t cb_mode;
    unsigned timeout;
} opts_t;

/* Where the ranks run: host index of every rank (hosts numbered by their
 * lowest rank, as fwdio numbers nodes), ranks per host. */
typedef struct cluster {
    int nhosts;
    int *host_of;   /* [tc_size] */
    int *host_size; /* [nhosts] */
    char (*names)[HOSTNAME_LEN]; /* [tc_size]: hostname of each rank */
} cluster_t;

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --hosts N [--case hosts|placement|remote-writers] [--size S] [--seed N]\n"
            "          [--callback-mode poll|progress] [--timeout SEC]\n"
            "sizes accept K/M/G suffixes\n",
            prog);
}

static int parse(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->which = CASE_HOSTS;
    o->size = 4 << 20;
    o->seed = 1;
    o->cb_mode = FWDIO_CALLBACKS_ON_POLL;
    o->timeout = 100;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (tc_common_option(argc, argv, &i, &o->timeout, &o->cb_mode))
            continue;
        if (!v) {
            fprintf(stderr, "%s needs a value or is unknown\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--case")) {
            if (!strcmp(v, "hosts"))
                o->which = CASE_HOSTS;
            else if (!strcmp(v, "placement"))
                o->which = CASE_PLACEMENT;
            else if (!strcmp(v, "remote-writers"))
                o->which = CASE_REMOTE_WRITERS;
            else
                return -1;
        } else if (!strcmp(a, "--hosts")) {
            o->hosts = (int)tc_parse_long(v);
        } else if (!strcmp(a, "--size")) {
            o->size = tc_parse_size(v);
        } else if (!strcmp(a, "--seed")) {
            o->seed = tc_parse_size(v);
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return -1;
        }
    }
    return o->hosts >= 2 && o->size > 0 ? 0 : -1;
}

/* ---- where the ranks are -------------------------------------------------- */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "[rank %d] out of memory\n", tc_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Hostnames of every rank, hosts numbered in order of their lowest rank. */
static void find_hosts(cluster_t *c)
{
    char mine[HOSTNAME_LEN] = "";
    if (gethostname(mine, sizeof mine - 1) != 0)
        tc_fail("gethostname failed");
    c->names = xcalloc((size_t)tc_size, sizeof *c->names);
    MPI_Allgather(mine, HOSTNAME_LEN, MPI_CHAR, c->names, HOSTNAME_LEN, MPI_CHAR,
                  MPI_COMM_WORLD);
    c->host_of = xcalloc((size_t)tc_size, sizeof *c->host_of);
    c->host_size = xcalloc((size_t)tc_size, sizeof *c->host_size);
    c->nhosts = 0;
    for (int r = 0; r < tc_size; r++) {
        int h = -1;
        for (int q = 0; q < r && h < 0; q++)
            if (!strcmp(c->names[q], c->names[r]))
                h = c->host_of[q];
        if (h < 0)
            h = c->nhosts++;
        c->host_of[r] = h;
        c->host_size[h]++;
    }
}

static void free_hosts(cluster_t *c)
{
    free(c->names);
    free(c->host_of);
    free(c->host_size);
}

/* The lowest rank of host h. */
static int host_leader(const cluster_t *c, int h)
{
    for (int r = 0; r < tc_size; r++)
        if (c->host_of[r] == h)
            return r;
    return -1;
}

/* The k-th rank (in rank order) of host h, k taken modulo the host's size. */
static int host_rank(const cluster_t *c, int h, int k)
{
    k %= c->host_size[h];
    for (int r = 0; r < tc_size; r++)
        if (c->host_of[r] == h && k-- == 0)
            return r;
    return -1;
}

/* Position of rank r among the ranks of its host. */
static int local_index(const cluster_t *c, int r)
{
    int k = 0;
    for (int q = 0; q < r; q++)
        k += c->host_of[q] == c->host_of[r];
    return k;
}

/* Collective: the ranks sit on o->hosts hosts, and each rank's
 * MPI_COMM_TYPE_SHARED communicator holds exactly the ranks of its host.
 * Returns the number of ranks that found otherwise (the same on every rank). */
static int check_hosts(const opts_t *o, const cluster_t *c)
{
    int bad = 0;
    if (c->nhosts != o->hosts) {
        if (tc_rank == 0)
            tc_fail("the %d ranks run on %d distinct host(s), expected %d: is mpirun using "
                    "the options of scripts/cluster.sh?",
                    tc_size, c->nhosts, o->hosts);
        bad = 1;
    }
    /* The shared-memory communicator of each rank is exactly its host. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0, lowest = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Allreduce(&tc_rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    int h = c->host_of[tc_rank];
    if (node_size != c->host_size[h] || lowest != host_leader(c, h)) {
        tc_fail("MPI_COMM_TYPE_SHARED gives %d rank(s) from rank %d, but host %s has %d from "
                "rank %d",
                node_size, lowest, c->names[tc_rank], c->host_size[h], host_leader(c, h));
        bad = 1;
    }
    int nodes = tc_node_count(MPI_COMM_WORLD);
    if (nodes != c->nhosts) {
        tc_fail("tc_node_count says %d node(s), hostnames say %d", nodes, c->nhosts);
        bad = 1;
    }
    if (tc_rank == 0) {
        for (int j = 0; j < c->nhosts; j++) {
            char line[512] = "";
            for (int r = 0; r < tc_size && strlen(line) < 400; r++)
                if (c->host_of[r] == j)
                    snprintf(line + strlen(line), sizeof line - strlen(line), " %d", r);
            tc_note("host %d %s: ranks%s", j, c->names[host_leader(c, j)], line);
        }
    }
    return (int)tc_sum(MPI_COMM_WORLD, bad);
}

/* ---- interface counters ---------------------------------------------------- */

/* Bytes counted by this network namespace's interfaces: the loopback apart. */
typedef struct net_sample {
    uint64_t rx, tx;       /* every interface but lo */
    uint64_t lo_rx, lo_tx; /* lo */
    int ok;
} net_sample_t;

/* Read /sys/class/net/<if>/statistics/{rx,tx}_bytes of every interface.
 * Returns 0, or -1 (after tc_fail) if no interface but lo could be read. */
static int read_net_bytes(net_sample_t *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir("/sys/class/net");
    if (!d) {
        tc_fail("cannot list /sys/class/net");
        return -1;
    }
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int lo = !strcmp(e->d_name, "lo");
        const char *what[2] = {"rx_bytes", "tx_bytes"};
        uint64_t *sum[2] = {lo ? &s->lo_rx : &s->rx, lo ? &s->lo_tx : &s->tx};
        for (int k = 0; k < 2; k++) {
            char path[512];
            snprintf(path, sizeof path, "/sys/class/net/%s/statistics/%s", e->d_name, what[k]);
            FILE *f = fopen(path, "r");
            unsigned long long v = 0;
            if (f && fscanf(f, "%llu", &v) == 1) {
                *sum[k] += v;
                found += !lo && k == 0;
            }
            if (f)
                fclose(f);
        }
    }
    closedir(d);
    if (!found)
        tc_fail("no network interface but lo in /sys/class/net: is this rank on a host of "
                "the cluster?");
    s->ok = found > 0;
    return found ? 0 : -1;
}

/* The host's counters, read by its leader (lowest rank); ok = 0 elsewhere. */
static net_sample_t sample_if_leader(const cluster_t *c)
{
    net_sample_t s;
    memset(&s, 0, sizeof s);
    if (host_leader(c, c->host_of[tc_rank]) == tc_rank)
        read_net_bytes(&s);
    return s;
}

/* ---- case hosts ------------------------------------------------------------ */

/* Rank r sends to the rank of the same local index (modulo) on the next host. */
static int ring_peer(const cluster_t *c, int r)
{
    return host_rank(c, (c->host_of[r] + 1) % c->nhosts, local_index(c, r));
}

/* Rank r's partner on its own host: local index k ^ 1, or -1 (the last rank of
 * a host with an odd number of ranks). */
static int host_partner(const cluster_t *c, int r)
{
    int k = local_index(c, r) ^ 1;
    return k < c->host_size[c->host_of[r]] ? host_rank(c, c->host_of[r], k) : -1;
}

/*
 * Every rank sends `size` bytes of the pattern (at offset rank * size) to
 * peer_of(rank) and receives from every rank whose peer it is; the payloads
 * are checked. The leader of each host samples its counters before and after.
 */
static void exchange(const opts_t *o, const cluster_t *c, int (*peer_of)(const cluster_t *, int),
                     net_sample_t *before, net_sample_t *after)
{
    int count = (int)o->size;
    int to = peer_of(c, tc_rank);
    int nfrom = 0;
    for (int r = 0; r < tc_size; r++)
        nfrom += peer_of(c, r) == tc_rank;
    unsigned char *out = xcalloc(o->size, 1);
    unsigned char *in = xcalloc(o->size * (size_t)nfrom, 1);
    MPI_Request *req = xcalloc((size_t)nfrom + 1, sizeof *req);
    int *from = xcalloc((size_t)nfrom, sizeof *from);
    pattern_fill(out, o->size, (uint64_t)tc_rank * o->size, o->seed);

    MPI_Barrier(MPI_COMM_WORLD);
    *before = sample_if_leader(c);
    MPI_Barrier(MPI_COMM_WORLD);
    int k = 0;
    for (int r = 0; r < tc_size; r++)
        if (peer_of(c, r) == tc_rank) {
            from[k] = r;
            MPI_Irecv(in + (size_t)k * o->size, count, MPI_BYTE, r, 7, MPI_COMM_WORLD, &req[k]);
            k++;
        }
    req[nfrom] = MPI_REQUEST_NULL;
    if (to >= 0)
        MPI_Isend(out, count, MPI_BYTE, to, 7, MPI_COMM_WORLD, &req[nfrom]);
    MPI_Waitall(nfrom + 1, req, MPI_STATUSES_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    *after = sample_if_leader(c);

    unsigned char *want = xcalloc(o->size, 1);
    for (k = 0; k < nfrom; k++) {
        pattern_fill(want, o->size, (uint64_t)from[k] * o->size, o->seed);
        if (memcmp(want, in + (size_t)k * o->size, o->size) != 0)
            tc_fail("the %" PRIu64 " bytes from rank %d (%s) arrived changed", o->size, from[k],
                    c->names[from[k]]);
    }
    free(want);
    free(out);
    free(in);
    free(req);
    free(from);
}

static void case_hosts(const opts_t *o, const cluster_t *c)
{
    if (o->size > (uint64_t)1 << 30) {
        tc_fail("--size above 1 GiB is too much for one message here");
        return;
    }
    net_sample_t before, after;
    int h = c->host_of[tc_rank];

    /* Between hosts: each host sends and receives host_size * size bytes,
     * which its interfaces (not lo) must count. */
    tc_phase("messages between hosts");
    exchange(o, c, ring_peer, &before, &after);
    if (before.ok && after.ok) {
        uint64_t want = (uint64_t)c->host_size[h] * o->size;
        uint64_t sent = after.tx - before.tx, got = after.rx - before.rx;
        TC_CHECK(sent >= want && got >= want,
                 "host %s: its interfaces sent %" PRIu64 " and received %" PRIu64
                 " bytes, but its ranks exchanged %" PRIu64 " each way with other hosts",
                 c->names[tc_rank], sent, got, want);
        tc_note("host %s: interfaces sent %" PRIu64 ", received %" PRIu64 " bytes for %" PRIu64
                " of messages each way to other hosts",
                c->names[tc_rank], sent, got, want);
    }

    /* Within a host: the pairs exchange size bytes each through shared
     * memory, so no interface, lo included, may count more than a quarter of
     * them (the barriers around add a few hundred bytes of TCP). */
    tc_phase("messages within hosts");
    exchange(o, c, host_partner, &before, &after);
    if (before.ok && after.ok && c->host_size[h] >= 2) {
        uint64_t moved = (uint64_t)(c->host_size[h] / 2 * 2) * o->size;
        uint64_t counted = (after.tx - before.tx) + (after.rx - before.rx) +
                           (after.lo_tx - before.lo_tx) + (after.lo_rx - before.lo_rx);
        TC_CHECK(counted < moved / 4,
                 "host %s: %" PRIu64 " bytes between its own ranks, and its interfaces "
                 "(lo included) counted %" PRIu64 ": not through shared memory?",
                 c->names[tc_rank], moved, counted);
        tc_note("host %s: %" PRIu64 " bytes between its own ranks, %" PRIu64
                " counted by its interfaces",
                c->names[tc_rank], moved, counted);
    }
}

/* ---- files ----------------------------------------------------------------- */

/* One file: open, write this rank's extents, close, wait; returns the handle
 * (NULL after a failure that was reported) with the status checked OK. */
static fwdio_file_t *write_file(fwdio_runtime_t *rt, const char *path, uint64_t size,
                                const fwdio_options_t *fo, const tc_extent_t *ext, size_t n,
                                uint64_t seed)
{
    fwdio_file_t *f = NULL;
    tc_phase("fwdio_open %s", path);
    int rc = fwdio_open(rt, path, size, fo, NULL, &f);
    if (rc != FWDIO_OK || !f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", path, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    tc_phase("writing %s", path);
    for (size_t i = 0; i < n; i++) {
        if (ext[i].owner != tc_rank)
            continue;
        rc = tc_write_pattern(f, ext[i].offset, ext[i].len, seed, 0);
        if (rc != FWDIO_OK) {
            tc_fail("fwdio_write(%s, offset %" PRIu64 ", len %" PRIu64 ") returned %d (%s)",
                    path, ext[i].offset, ext[i].len, rc, fwdio_strerror(rc));
            break;
        }
    }
    tc_phase("closing %s", path);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "final status");
    return f;
}

/* The writer ranks of f (same on every rank, checked); *n their number. */
static int *file_writers(const fwdio_file_t *f, int *n)
{
    *n = fwdio_file_writers(f, NULL, 0);
    if (*n <= 0 || *n > tc_size) {
        tc_fail("fwdio_file_writers returned %d with %d ranks", *n, tc_size);
        *n = 0;
    }
    int *w = xcalloc((size_t)(*n > 0 ? *n : 1), sizeof *w);
    if (*n > 0 && fwdio_file_writers(f, w, *n) != *n)
        tc_fail("fwdio_file_writers gave a different count the second time");
    long sig = *n;
    for (int i = 0; i < *n; i++)
        sig = sig * 131 + w[i];
    if (!tc_all_same(MPI_COMM_WORLD, sig))
        tc_fail("the writer list differs between ranks");
    return w;
}

/* Bytes per writer sum to the bytes written. */
static void check_writer_bytes(const fwdio_file_t *f, int nw, const tc_extent_t *ext, size_t n,
                               const char *what)
{
    uint64_t written = 0, got = 0;
    for (size_t i = 0; i < n; i++)
        if (ext[i].owner >= 0)
            written += ext[i].len;
    uint64_t *b = xcalloc((size_t)nw, sizeof *b);
    TC_CHECK(fwdio_file_writer_bytes(f, b, nw) == nw, "%s: fwdio_file_writer_bytes count", what);
    for (int i = 0; i < nw; i++)
        got += b[i];
    TC_CHECK(got == written, "%s: the writers received %" PRIu64 " bytes, %" PRIu64 " were written",
             what, got, written);
    free(b);
}

/* ---- case placement -------------------------------------------------------- */

/*
 * The documented spread rule, per host: W writers (fwdio.h: writers_per_node
 * x nodes when that is set, else `writers`, else fwdio_default_writers; never
 * more than the ranks) shared out evenly over the nodes, a node taking at most
 * its ranks (and writers_per_node); what is left after equal shares goes one
 * each to the nodes with the most ranks, ties to the lower node.
 */
static void expected_per_host(const cluster_t *c, int writers, int per_node, int *count)
{
    int W = per_node > 0 ? per_node * c->nhosts
            : writers > 0 ? writers
                          : fwdio_default_writers(tc_size, c->nhosts);
    if (W > tc_size)
        W = tc_size;
    int *cap = xcalloc((size_t)c->nhosts, sizeof *cap);
    for (int j = 0; j < c->nhosts; j++) {
        count[j] = 0;
        cap[j] = per_node > 0 && per_node < c->host_size[j] ? per_node : c->host_size[j];
    }
    while (W > 0) {
        int open = 0;
        for (int j = 0; j < c->nhosts; j++)
            open += count[j] < cap[j];
        if (open == 0)
            break;
        int share = W / open;
        if (share == 0) {
            for (; W > 0; W--) { /* one extra: most ranks, then lowest node */
                int best = -1;
                for (int j = 0; j < c->nhosts; j++)
                    if (count[j] < cap[j] &&
                        (best < 0 || c->host_size[j] > c->host_size[best]))
                        best = j;
                count[best]++;
                cap[best] = count[best]; /* one extra each */
            }
            break;
        }
        for (int j = 0; j < c->nhosts; j++) {
            int add = cap[j] - count[j] < share ? cap[j] - count[j] : share;
            count[j] += add;
            W -= add;
        }
    }
    free(cap);
}

static void case_placement(const opts_t *o, const cluster_t *c, fwdio_runtime_t *rt)
{
    struct {
        const char *name;
        int writers, per_node;
        fwdio_layout_t layout;
    } configs[] = {
        {"default", 0, 0, FWDIO_LAYOUT_BLOCK},
        {"writers_per_node_1", 0, 1, FWDIO_LAYOUT_CYCLIC},
        {"writers_2", 2, 0, FWDIO_LAYOUT_BLOCK},
        {"writers_hosts", o->hosts, 0, FWDIO_LAYOUT_TARGETS},
        {"writers_6", 6, 0, FWDIO_LAYOUT_CYCLIC},
    };
    int *want = xcalloc((size_t)c->nhosts, sizeof *want);
    int *got = xcalloc((size_t)c->nhosts, sizeof *got);
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        tc_rng_t rng;
        tc_rng_seed(&rng, o->seed * 1000 + k);
        tc_extent_t *ext = NULL;
        size_t n = 0;
        tc_random_extents(&rng, o->size, 200000, 6, &ext, &n);
        fwdio_options_t fo;
        fwdio_options_init(&fo);
        fo.placement = FWDIO_PLACEMENT_SPREAD;
        fo.writers = configs[k].writers;
        fo.writers_per_node = configs[k].per_node;
        fo.layout = configs[k].layout;
        fo.stripe_size = 64 << 10;
        fo.write_size = 16 << 10;
        char path[4096];
        char name[64];
        snprintf(name, sizeof name, "spread_%s.dat", configs[k].name);
        tc_path(path, sizeof path, name);
        fwdio_file_t *f = write_file(rt, path, o->size, &fo, ext, n, o->seed + k);

        tc_phase("checking the writers of %s", name);
        int nw = 0;
        int *w = file_writers(f, &nw);
        expected_per_host(c, configs[k].writers, configs[k].per_node, want);
        memset(got, 0, (size_t)c->nhosts * sizeof *got);
        for (int i = 0; i < nw; i++) {
            got[c->host_of[w[i]]]++;
            /* Node by node, and in rank order within a node. */
            if (i > 0 && (c->host_of[w[i]] < c->host_of[w[i - 1]] ||
                          (c->host_of[w[i]] == c->host_of[w[i - 1]] && w[i] <= w[i - 1])))
                tc_fail("%s: writer %d (rank %d) comes after rank %d: not node by node in "
                        "rank order", name, i, w[i], w[i - 1]);
        }
        char line[512] = "";
        int same = 1;
        for (int j = 0; j < c->nhosts; j++) {
            same &= got[j] == want[j];
            if (strlen(line) < 400)
                snprintf(line + strlen(line), sizeof line - strlen(line), " %s:%d/%d",
                         c->names[host_leader(c, j)], got[j], want[j]);
        }
        if (!same)
            tc_fail("%s: writers per host (got/documented) differ:%s", name, line);
        else if (tc_rank == 0)
            tc_note("%s: %d writers, per host (got/documented):%s", name, nw, line);
        check_writer_bytes(f, nw, ext, n, name);
        fwdio_file_stats_t st;
        TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
        long shared = tc_sum(MPI_COMM_WORLD, (long)st.bytes_shared);
        long to_mpi = tc_sum(MPI_COMM_WORLD, (long)st.bytes_to_mpi);
        long written = tc_sum(MPI_COMM_WORLD, (long)st.bytes_written);
        int every_host = 1;
        for (int j = 0; j < c->nhosts; j++)
            every_host &= got[j] > 0;
        TC_CHECK(shared + to_mpi <= written, "%s: %ld bytes shared and %ld over MPI of %ld", name,
                 shared, to_mpi, written);
        if (every_host && written > 0)
            TC_CHECK(shared > 0 && to_mpi > 0,
                     "%s: a writer on every host, yet %ld bytes through the node-shared areas "
                     "and %ld over MPI (both expected)",
                     name, shared, to_mpi);
        if (tc_rank == 0)
            tc_note("%s: %ld bytes through the node-shared areas, %ld over MPI, of %ld", name,
                    shared, to_mpi, written);

        tc_phase("verifying %s", name);
        tc_verify_extents(MPI_COMM_WORLD, path, o->size, o->seed + k, ext, n);
        fwdio_file_free(f);
        free(w);
        free(ext);
    }
    free(want);
    free(got);
}

/* ---- case remote-writers --------------------------------------------------- */

static void case_remote_writers(const opts_t *o, const cluster_t *c, fwdio_runtime_t *rt)
{
    for (int h = 0; h < c->nhosts; h++) {
        /* Writers: the ranks of host h. Senders: every other rank. */
        int *list = xcalloc((size_t)c->host_size[h], sizeof *list);
        int *senders = xcalloc((size_t)tc_size, sizeof *senders);
        int nlist = 0, nsenders = 0;
        for (int r = 0; r < tc_size; r++) {
            if (c->host_of[r] == h)
                list[nlist++] = r;
            else
                senders[nsenders++] = r;
        }
        tc_rng_t rng;
        tc_rng_seed(&rng, o->seed * 7919 + (uint64_t)h);
        tc_extent_t *ext = NULL;
        size_t n = 0;
        tc_random_extents(&rng, o->size, 150000, 8, &ext, &n);
        uint64_t sent_bytes = 0;
        for (size_t i = 0; i < n; i++)
            if (ext[i].owner >= 0) {
                ext[i].owner = senders[(size_t)ext[i].owner % (size_t)nsenders];
                sent_bytes += ext[i].len;
            }
        fwdio_options_t fo;
        fwdio_options_init(&fo);
        fo.placement = FWDIO_PLACEMENT_LIST;
        fo.writer_list = list;
        fo.writer_list_len = nlist;
        fo.layout = h % 2 ? FWDIO_LAYOUT_CYCLIC : FWDIO_LAYOUT_BLOCK;
        fo.stripe_size = 64 << 10;
        fo.write_size = 16 << 10;
        char path[4096], name[64];
        snprintf(name, sizeof name, "writers_on_%s.dat", c->names[list[0]]);
        tc_path(path, sizeof path, name);

        MPI_Barrier(MPI_COMM_WORLD);
        net_sample_t before = sample_if_leader(c);
        fwdio_file_t *f = write_file(rt, path, o->size, &fo, ext, n, o->seed + (uint64_t)h);
        MPI_Barrier(MPI_COMM_WORLD);
        net_sample_t after = sample_if_leader(c);

        tc_phase("checking the writers of %s", name);
        int nw = 0;
        int *w = file_writers(f, &nw);
        int same = nw == nlist;
        for (int i = 0; same && i < nw; i++)
            same = w[i] == list[i];
        TC_CHECK(same, "%s: the writers are not the list of host %s's ranks", name,
                 c->names[list[0]]);
        for (size_t i = 0; i < n; i++)
            TC_CHECK(ext[i].owner < 0 || c->host_of[ext[i].owner] != h,
                     "test bug: rank %d on the writers' host writes", ext[i].owner);
        check_writer_bytes(f, nw, ext, n, name);
        fwdio_file_stats_t st;
        TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
        long shared = tc_sum(MPI_COMM_WORLD, (long)st.bytes_shared);
        long to_mpi = tc_sum(MPI_COMM_WORLD, (long)st.bytes_to_mpi);
        TC_CHECK(shared == 0 && to_mpi == (long)sent_bytes,
                 "%s: writers on another host, yet %ld bytes through a node-shared area and %ld "
                 "over MPI of %" PRIu64,
                 name, shared, to_mpi, sent_bytes);
        if (c->host_of[tc_rank] == h)
            TC_CHECK(st.bytes_written == 0, "%s: rank %d on the writers' host wrote %" PRIu64
                     " bytes", name, tc_rank, st.bytes_written);
        else
            TC_CHECK(st.bytes_written == 0 || st.messages_sent > 0,
                     "%s: %" PRIu64 " bytes written but no message sent", name,
                     st.bytes_written);
        if (c->host_of[tc_rank] == h && before.ok && after.ok) {
            uint64_t got = after.rx - before.rx;
            TC_CHECK(got >= sent_bytes,
                     "%s: the writers' host received %" PRIu64 " bytes on its interfaces, "
                     "but the other hosts wrote %" PRIu64 " into the file",
                     name, got, sent_bytes);
            tc_note("%s: %d writer(s) on %s, %d senders elsewhere wrote %" PRIu64
                    " bytes; the host's interfaces received %" PRIu64,
                    name, nw, c->names[tc_rank], nsenders, sent_bytes, got);
        }

        tc_phase("verifying %s", name);
        tc_verify_extents(MPI_COMM_WORLD, path, o->size, o->seed + (uint64_t)h, ext, n);
        fwdio_file_free(f);
        free(w);
        free(ext);
        free(list);
        free(senders);
    }
}

int main(int argc, char **argv)
{
    opts_t o;
    int bad_args = parse(argc, argv, &o) != 0;
    tc_mpi_init(&argc, &argv, bad_args ? 0 : o.timeout);
    if (bad_args) {
        if (tc_rank == 0)
            usage(argv[0]);
        MPI_Finalize();
        return 2;
    }
    cluster_t c;
    tc_phase("finding the hosts");
    find_hosts(&c);
    if (check_hosts(&o, &c) != 0) {
        free_hosts(&c);
        return tc_finish("test_cluster");
    }
    if (o.which == CASE_HOSTS) {
        case_hosts(&o, &c);
    } else {
        tc_phase("fwdio_init");
        fwdio_config_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.callback_mode = o.cb_mode;
        fwdio_runtime_t *rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
        if (o.which == CASE_PLACEMENT)
            case_placement(&o, &c, rt);
        else
            case_remote_writers(&o, &c, rt);
        tc_phase("fwdio_finalize");
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    }
    free_hosts(&c);
    return tc_finish("test_cluster");
}
