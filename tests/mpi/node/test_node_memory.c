/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What fwdio holds on a node: the node-shared area is a node budget
 * (fwdio_config_t.node_buffer), committed as it is used and given back when
 * idle, never reserved per rank at fwdio_init (docs/ARCHITECTURE.md, "The
 * shared path"; issue 30).
 *
 * Measured, not taken from fwdio's word: rank 0 of each node opens every
 * segment of the area it has mapped (/proc/self/map_files, root) and sums
 * their allocated blocks (fstat st_blocks: what /dev/shm really holds), from
 * a thread that samples them every 2 ms while files are in flight; every rank
 * reads its resident set (/proc/self/status: RssAnon, VmHWM) before
 * fwdio_init, after it, and at the end. Then:
 *   init   the segments hold the rings only (at most 512 KiB + a page per
 *          rank), fwdio_init grew no rank's private memory by more than
 *          --init-rss (4 MiB), and the node's count of committed heap is 0;
 *   large  one file of --size bytes, each rank its block in 1 MiB writes;
 *   many   --files files in flight at once, each rank a piece of each;
 *          at the peak the segments held at most the rings + node_buffer
 *          (the node's count too), once the files completed the heaps are
 *          given back node_buffer_idle later (1 s here unless --idle; the
 *          segments at the rings again: after "large" while an idle file is
 *          still open, after "many" with none open), or with --idle off kept
 *          (some committed half a second later, within the budget), and every
 *          byte of every file is checked;
 * The staging budget is the node's too: by default each rank's is its share
 * of the node's staging (1/32 of the node's memory, at most 512 MiB, divided
 * by the ranks of the node, between 1 and 64 MiB), checked against the value
 * in force, the node's sum against the node's staging, each rank's peak of
 * staged bytes against its budget and its resident set against the budgets
 * in force; --staging SIZE sets it in code (--staging-env SIZE: set in the
 * environment, for the checks only), and it must then be that, per rank,
 * whatever the ranks per node.
 * (--off-on-rank R: rank R alone sets FWDIO_NODE_BUFFER=off, which must turn
 * the area off on every rank, not hang fwdio_init;
 * --no-rss: the resident sets are reported, not checked, as in the sanitizer
 * builds, whose allocators keep freed memory), with --node-buffer setting the budget in code (--budget: the budget set in the
 * environment, for the checks only), --expect-shared / --expect-no-shared saying whether bytes must have
 * gone through the area (a huge budget) or none may have (FWDIO_FAULT
 * shm_commit: /dev/shm "full"), and --fill-shm LEAVE making rank 0 fill
 * /dev/shm with a file but LEAVE bytes before fwdio_init (only inside a
 * private tmpfs: the ctest wraps the run in `unshare -m` and a small mount).
 */
#define _GNU_SOURCE
#include "pattern.h"
#include "test_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SEGS = 1024, RING_BYTES = 512 << 10, PAGE = 4096 };

static fwdio_runtime_t *g_rt;
static MPI_Comm g_node;
static int g_local, g_nlocal;
static uint64_t g_node_budget; /* as given (0: the default, which rank 0 prints) */
static uint64_t g_bound; /* --budget: the budget set elsewhere (environment), for the checks */
static uint64_t g_staging;     /* --staging: set in code (0: the default) */
static uint64_t g_staging_env; /* --staging-env: set in the environment */
static uint64_t g_size = 64 << 20;
static int g_files = 16;
static uint64_t g_init_rss = 4 << 20;
static int g_check_rss = 1; /* --no-rss: sanitizer allocators keep freed memory */
static int g_expect_shared = -1; /* 1: some bytes through the area, 0: none, -1: no claim */
static const char *g_fill_leave;
static int g_off_on_rank = -1; /* --off-on-rank R: FWDIO_NODE_BUFFER=off on rank R only */
/* --idle SECONDS|off: node_buffer_idle in code; 1 s unless given, so that the
 * give-back is checked without waiting the default 30 s */
static unsigned g_idle = 1;
static char g_fill_path[256];
/* what the summary line reports (rank 0) */
static int64_t g_init_seg = -1, g_peak_seg[2] = {-1, -1};

/* ---- what the node holds ---- */

static int g_seg_fd[MAX_SEGS];
static int g_nseg = -1; /* -1: cannot see the segments (not root) */

/* Rank 0 of the node: open every fwdio segment this process maps. */
static void open_segments(void)
{
    g_nseg = -1;
    if (g_local != 0)
        return;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return;
    char line[1024];
    dev_t devs[MAX_SEGS];
    ino_t inos[MAX_SEGS];
    int n = 0;
    while (fgets(line, sizeof line, maps) && n < MAX_SEGS) {
        if (!strstr(line, "/dev/shm/fwdio."))
            continue;
        char range[128];
        if (sscanf(line, "%127s", range) != 1)
            continue;
        char path[256];
        snprintf(path, sizeof path, "/proc/self/map_files/%s", range);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            n = -1;
            break;
        }
        struct stat st;
        int seen = fstat(fd, &st) != 0;
        for (int i = 0; !seen && i < n; i++)
            seen = devs[i] == st.st_dev && inos[i] == st.st_ino;
        if (seen) {
            close(fd);
            continue;
        }
        devs[n] = st.st_dev;
        inos[n] = st.st_ino;
        g_seg_fd[n++] = fd;
    }
    fclose(maps);
    if (n < 0)
        for (int i = 0; i < MAX_SEGS && g_seg_fd[i] > 0; i++)
            close(g_seg_fd[i]);
    g_nseg = n;
}

static void close_segments(void)
{
    for (int i = 0; i < g_nseg; i++)
        close(g_seg_fd[i]);
    g_nseg = -1;
}

/* Bytes /dev/shm holds for the area's segments of this node (-1: unknown). */
static int64_t segment_bytes(void)
{
    if (g_nseg < 0)
        return -1;
    int64_t sum = 0;
    for (int i = 0; i < g_nseg; i++) {
        struct stat st;
        if (fstat(g_seg_fd[i], &st) == 0)
            sum += (int64_t)st.st_blocks * 512;
    }
    return sum;
}

static uint64_t proc_kib(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t v = 0;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == ':') {
            v = strtoull(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v << 10;
}

/* A sampler of segment_bytes on rank 0 of the node while files are in flight. */
static pthread_t g_sampler;
static atomic_int g_sampling;
static _Atomic int64_t g_seg_peak;

static void *sample(void *arg)
{
    (void)arg;
    while (atomic_load(&g_sampling)) {
        int64_t b = segment_bytes();
        if (b > atomic_load(&g_seg_peak))
            atomic_store(&g_seg_peak, b);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void sampler_start(void)
{
    atomic_store(&g_seg_peak, segment_bytes());
    atomic_store(&g_sampling, 1);
    if (g_local == 0 && g_nseg >= 0 && pthread_create(&g_sampler, NULL, sample, NULL) != 0)
        tc_fail("the sampler thread");
}

static int64_t sampler_stop(void)
{
    atomic_store(&g_sampling, 0);
    if (g_local == 0 && g_nseg >= 0)
        pthread_join(g_sampler, NULL);
    return atomic_load(&g_seg_peak);
}

static fwdio_runtime_stats_t stats(void)
{
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(g_rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    return rs;
}

/* The most the segments may hold: every rank's rings (and a header page), and
 * the node's budget of heap (when `with_heap`). */
static int64_t segments_bound(uint64_t budget, int with_heap)
{
    return (int64_t)g_nlocal * (RING_BYTES + PAGE) + (with_heap ? (int64_t)budget : 0);
}

/* After a phase: the node's count and the segments are back at the rings.
 * The heaps are given back when no file is active; wait a little for the
 * progress threads to see that. */
/* With node_buffer_idle off ("kept"): the chunks a rank used stay committed
 * after its files completed, within the budget, so that the next file does
 * not commit them again (half a second after the last file, which a give-back
 * after every file, the old behaviour, would have emptied). */
static void check_kept(const char *what, uint64_t budget)
{
    struct timespec ts = {0, 500000000};
    nanosleep(&ts, NULL);
    fwdio_runtime_stats_t rs = stats();
    int64_t seg = segment_bytes();
    TC_CHECK(rs.node_committed > 0 && rs.node_committed <= budget,
             "%s: %" PRIu64 " bytes of the area committed after every file completed with "
             "node_buffer_idle off: expected some kept, at most the budget %" PRIu64,
             what, rs.node_committed, budget);
    if (g_local == 0 && seg >= 0)
        TC_CHECK(seg <= segments_bound(budget, 1),
                 "%s: the segments hold %" PRId64 " bytes, over the rings and the budget (%" PRId64
                 ")", what, seg, segments_bound(budget, 1));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_given_back(const char *what, uint64_t budget)
{
    if (g_idle == FWDIO_NODE_BUFFER_IDLE_KEEP) {
        check_kept(what, budget);
        return;
    }
    int64_t seg = -1;
    fwdio_runtime_stats_t rs = stats();
    /* node_buffer_idle, a slow tick of the progress thread, and room for a
     * loaded machine */
    int tries = (int)(g_idle + 10) * 100;
    for (int i = 0; i < tries; i++) {
        rs = stats();
        seg = segment_bytes();
        if (rs.node_committed == 0 && seg <= segments_bound(budget, 0))
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    TC_CHECK(rs.node_committed == 0, "%s: %" PRIu64 " bytes of the area still committed after "
             "every file completed", what, rs.node_committed);
    if (g_local == 0 && seg >= 0)
        TC_CHECK(seg <= segments_bound(budget, 0),
                 "%s: the segments hold %" PRId64 " bytes after every file completed, more than "
                 "the rings (%" PRId64 ")", what, seg, segments_bound(budget, 0));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- the staging budget ---- */

/* The staging budget each rank must have: as set, else its share of the
 * node's staging (include/fwdio.h, fwdio_config_t.staging_buffer). */
static uint64_t staging_expected(void)
{
    if (g_staging || g_staging_env)
        return g_staging ? g_staging : g_staging_env;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t node = mem / 32;
    if (mem == 0 || node > FWDIO_DEFAULT_NODE_STAGING_CAP)
        node = FWDIO_DEFAULT_NODE_STAGING_CAP;
    uint64_t share = node / (uint64_t)g_nlocal;
    if (share > FWDIO_DEFAULT_STAGING_BUFFER)
        share = FWDIO_DEFAULT_STAGING_BUFFER;
    if (share < FWDIO_MIN_DEFAULT_STAGING_BUFFER)
        share = FWDIO_MIN_DEFAULT_STAGING_BUFFER;
    return share;
}

/* After the files: the budget in force is the one expected, the node's ranks
 * together hold no more than the node's staging (by default), and no rank
 * staged more than its budget. */
static void check_staging(void)
{
    fwdio_runtime_stats_t rs = stats();
    uint64_t want = staging_expected();
    TC_CHECK(rs.staging_budget == want, "staging budget %" PRIu64 " in force, want %" PRIu64
             " (%s, %d ranks on the node)", rs.staging_budget, want,
             g_staging ? "set in code" : g_staging_env ? "set in the environment" : "default",
             g_nlocal);
    TC_CHECK(rs.staging_peak <= rs.staging_budget, "%" PRIu64 " bytes staged at once, over "
             "the staging budget %" PRIu64, rs.staging_peak, rs.staging_budget);
    long budget_node = 0, peak_node = 0, peak_max = 0, me = (long)rs.staging_peak;
    MPI_Allreduce(&(long){(long)rs.staging_budget}, &budget_node, 1, MPI_LONG, MPI_SUM, g_node);
    MPI_Allreduce(&me, &peak_node, 1, MPI_LONG, MPI_SUM, g_node);
    MPI_Allreduce(&me, &peak_max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (!g_staging && !g_staging_env && want > FWDIO_MIN_DEFAULT_STAGING_BUFFER)
        TC_CHECK((uint64_t)budget_node <= FWDIO_DEFAULT_NODE_STAGING_CAP,
                 "the node's ranks hold %ld bytes of staging together, over the node's %zu",
                 budget_node, FWDIO_DEFAULT_NODE_STAGING_CAP);
    if (tc_rank == 0)
        tc_note("staging: %.2f MiB per rank (%s), %.1f MiB for the node's %d ranks; staged at "
                "most %.2f MiB on a rank, %.1f MiB summed over the node's ranks' peaks",
                rs.staging_budget / 1048576.0,
                g_staging ? "set in code" : g_staging_env ? "set in the environment" : "default",
                budget_node / 1048576.0, g_nlocal, peak_max / 1048576.0, peak_node / 1048576.0);
}

/* ---- the phases ---- */

static void check_peak(const char *what, int64_t seg_peak, uint64_t budget)
{
    fwdio_runtime_stats_t rs = stats();
    TC_CHECK(rs.node_peak <= budget, "%s: the node's count reached %" PRIu64 ", over the "
             "budget %" PRIu64, what, rs.node_peak, budget);
    if (g_local == 0) {
        if (seg_peak >= 0)
            TC_CHECK(seg_peak <= segments_bound(budget, 1),
                     "%s: the segments held %" PRId64 " bytes, over rings + budget (%" PRId64 ")",
                     what, seg_peak, segments_bound(budget, 1));
        tc_note("%s: %.1f MiB in /dev/shm at most (segments, rings included; %d ranks on the "
                "node; budget %.1f MiB); fwdio's count of the heaps: %.1f MiB at most so far",
                what, seg_peak / 1048576.0, g_nlocal, budget / 1048576.0,
                rs.node_peak / 1048576.0);
    }
}

static void expect_shared(const char *what, uint64_t shared, uint64_t to_mpi)
{
    long s = tc_sum(MPI_COMM_WORLD, (long)shared), m = tc_sum(MPI_COMM_WORLD, (long)to_mpi);
    if (tc_rank == 0)
        tc_note("%s: %ld bytes through the area, %ld over MPI", what, s, m);
    if (g_expect_shared == 1)
        TC_CHECK(s > 0, "%s: no byte went through the area", what);
    if (g_expect_shared == 0)
        TC_CHECK(s == 0, "%s: %ld bytes went through the area, which had no room", what, s);
}

static void phase_large(uint64_t budget)
{
    tc_phase("one large file");
    char path[4096], idle_path[4096];
    tc_path(path, sizeof path, "large.dat");
    tc_path(idle_path, sizeof idle_path, "idle.dat");
    uint64_t per = g_size / (uint64_t)tc_size;
    uint64_t size = per * (uint64_t)tc_size;
    /* a file kept open and idle throughout: the heaps must be given back
     * while a file is still active (an empty part for FWDIO's 20 ms), not
     * only once none is */
    fwdio_file_t *idle = NULL;
    TC_EXPECT(fwdio_open(g_rt, idle_path, 0, NULL, NULL, &idle), FWDIO_OK, "fwdio_open (idle)");
    fwdio_file_t *f = NULL;
    sampler_start();
    TC_EXPECT(fwdio_open(g_rt, path, size, NULL, NULL, &f), FWDIO_OK, "fwdio_open");
    if (!f) {
        sampler_stop();
        return;
    }
    TC_EXPECT(tc_write_pattern(f, (uint64_t)tc_rank * per, per, 301, 1 << 20), FWDIO_OK,
              "writes");
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t peak = sampler_stop();
    g_peak_seg[0] = peak;
    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    fwdio_file_free(f);
    check_peak("large", peak, budget);
    expect_shared("large", st.bytes_shared, st.bytes_to_mpi);
    tc_verify_full(MPI_COMM_WORLD, path, size, 301);
    check_given_back("large, another file still open", budget);
    if (idle) {
        TC_EXPECT(fwdio_close(idle), FWDIO_OK, "fwdio_close (idle)");
        TC_EXPECT(fwdio_wait(idle), FWDIO_OK, "fwdio_wait (idle)");
        fwdio_file_free(idle);
    }
}

static void phase_many(uint64_t budget)
{
    tc_phase("%d files in flight", g_files);
    fwdio_file_t **f = calloc((size_t)g_files, sizeof *f);
    char(*paths)[4096] = calloc((size_t)g_files, sizeof *paths);
    if (!f || !paths) {
        tc_fail("out of memory");
        return;
    }
    uint64_t per = (g_size / 4 / (uint64_t)g_files / (uint64_t)tc_size) & ~(uint64_t)63;
    if (per == 0)
        per = 64;
    uint64_t size = per * (uint64_t)tc_size;
    sampler_start();
    for (int i = 0; i < g_files; i++) {
        char name[64];
        snprintf(name, sizeof name, "many.%d.dat", i);
        tc_path(paths[i], sizeof paths[i], name);
        TC_EXPECT(fwdio_open(g_rt, paths[i], size, NULL, NULL, &f[i]), FWDIO_OK, "fwdio_open");
    }
    uint64_t shared = 0, to_mpi = 0;
    for (int i = 0; i < g_files; i++)
        if (f[i])
            TC_EXPECT(tc_write_pattern(f[i], (uint64_t)tc_rank * per, per, 400 + (uint64_t)i,
                                       64 << 10),
                      FWDIO_OK, "writes");
    for (int i = 0; i < g_files; i++)
        if (f[i])
            TC_EXPECT(fwdio_close(f[i]), FWDIO_OK, "fwdio_close");
    for (int i = 0; i < g_files; i++)
        if (f[i]) {
            TC_EXPECT(fwdio_wait(f[i]), FWDIO_OK, "fwdio_wait");
            fwdio_file_stats_t st;
            TC_EXPECT(fwdio_file_stats(f[i], &st), FWDIO_OK, "fwdio_file_stats");
            shared += st.bytes_shared;
            to_mpi += st.bytes_to_mpi;
            fwdio_file_free(f[i]);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t peak = sampler_stop();
    g_peak_seg[1] = peak;
    check_peak("many", peak, budget);
    expect_shared("many", shared, to_mpi);
    for (int i = 0; i < g_files; i++)
        tc_verify_full(MPI_COMM_WORLD, paths[i], size, 400 + (uint64_t)i);
    check_given_back("many", budget);
    free(f);
    free(paths);
}

/* Rank 0 fills /dev/shm (a private tmpfs) but `leave` bytes. */
static void fill_shm(uint64_t leave)
{
    if (tc_rank != 0)
        return;
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0) {
        tc_fail("statvfs /dev/shm: %s", strerror(errno));
        return;
    }
    uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    if (avail > ((uint64_t)1 << 30)) {
        tc_fail("/dev/shm has %" PRIu64 " bytes free: not filling a shared /dev/shm (run inside "
                "a private tmpfs mount)", avail);
        return;
    }
    snprintf(g_fill_path, sizeof g_fill_path, "/dev/shm/fwdio-test-fill.%d", (int)getpid());
    int fd = open(g_fill_path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 || (avail > leave && posix_fallocate(fd, 0, (off_t)(avail - leave)) != 0))
        tc_fail("filling /dev/shm: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    statvfs("/dev/shm", &vfs);
    tc_note("/dev/shm filled: %" PRIu64 " bytes left", (uint64_t)vfs.f_bavail * vfs.f_frsize);
}

int main(int argc, char **argv)
{
    unsigned timeout = 120;
    fwdio_callback_mode_t mode = FWDIO_CALLBACKS_ON_POLL;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &mode))
            continue;
        if (!strcmp(argv[i], "--node-buffer") && i + 1 < argc)
            g_node_budget = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            g_bound = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--staging") && i + 1 < argc)
            g_staging = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--staging-env") && i + 1 < argc)
            g_staging_env = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            g_size = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--files") && i + 1 < argc)
            g_files = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--init-rss") && i + 1 < argc)
            g_init_rss = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--off-on-rank") && i + 1 < argc)
            g_off_on_rank = (int)tc_parse_long(argv[++i]);
        else if (!strcmp(argv[i], "--idle") && i + 1 < argc) {
            i++;
            g_idle = !strcmp(argv[i], "off") ? FWDIO_NODE_BUFFER_IDLE_KEEP
                                             : (unsigned)tc_parse_long(argv[i]);
        } else if (!strcmp(argv[i], "--no-rss"))
            g_check_rss = 0;
        else if (!strcmp(argv[i], "--expect-shared"))
            g_expect_shared = 1;
        else if (!strcmp(argv[i], "--expect-no-shared"))
            g_expect_shared = 0;
        else if (!strcmp(argv[i], "--fill-shm") && i + 1 < argc)
            g_fill_leave = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--node-buffer SIZE | --budget SIZE] [--staging SIZE | --staging-env SIZE] [--size SIZE] [--files N] [--init-rss SIZE] "
                    "[--no-rss] [--idle SECONDS|off] [--off-on-rank R] [--expect-shared | --expect-no-shared] [--fill-shm LEAVE] "
                    "[--callback-mode poll|progress] [--timeout SEC]\n",
                    argv[0]);
            return 2;
        }
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, tc_rank, MPI_INFO_NULL, &g_node);
    MPI_Comm_rank(g_node, &g_local);
    MPI_Comm_size(g_node, &g_nlocal);
    if (g_fill_leave)
        fill_shm(tc_parse_size(g_fill_leave));
    MPI_Barrier(MPI_COMM_WORLD);

    if (tc_rank == g_off_on_rank) /* one rank's own environment turns the area off */
        setenv("FWDIO_NODE_BUFFER", "off", 1);
    tc_phase("fwdio_init");
    uint64_t anon0 = proc_kib("/proc/self/status", "RssAnon");
    uint64_t rss0 = proc_kib("/proc/self/status", "VmRSS");
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = mode;
    cfg.node_buffer = (size_t)g_node_budget;
    cfg.staging_buffer = (size_t)g_staging;
    cfg.node_buffer_idle = g_idle;
    g_rt = tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t anon1 = proc_kib("/proc/self/status", "RssAnon");
    uint64_t rss1 = proc_kib("/proc/self/status", "VmRSS");
    open_segments();
    fwdio_runtime_stats_t rs = stats();
    /* the budget in force: as given, else the default, which is never above
     * FWDIO_DEFAULT_NODE_BUFFER_CAP (smaller on a node with less than 16 GiB) */
    uint64_t budget = g_node_budget ? g_node_budget
                      : g_bound     ? g_bound
                                    : FWDIO_DEFAULT_NODE_BUFFER_CAP;
    if (budget < ((uint64_t)1 << 20))
        budget = (uint64_t)1 << 20;
    int area = rs.shared_budget > 0;
    long areas = tc_sum(MPI_COMM_WORLD, area);
    int64_t seg = segment_bytes();
    g_init_seg = seg;
    TC_CHECK(rs.node_committed == 0, "init: %" PRIu64 " bytes of the area committed at init",
             rs.node_committed);
    uint64_t grown = anon1 > anon0 ? anon1 - anon0 : 0;
    TC_CHECK(!g_check_rss || grown <= g_init_rss, "init: fwdio_init grew this rank's private memory by %.2f MiB, "
             "over %.2f MiB", grown / 1048576.0, g_init_rss / 1048576.0);
    long grown_sum = tc_sum(MPI_COMM_WORLD, (long)grown);
    long rss_sum = tc_sum(MPI_COMM_WORLD, (long)(rss1 > rss0 ? rss1 - rss0 : 0));
    if (g_local == 0 && seg >= 0 && area)
        TC_CHECK(seg <= segments_bound(budget, 0),
                 "init: the segments hold %" PRId64 " bytes, over the rings' %" PRId64, seg,
                 segments_bound(budget, 0));
    if (tc_rank == 0)
        tc_note("init: %d ranks on the node, area on at %ld; segments %.2f MiB in /dev/shm (%s), "
                "%.2f MiB per rank; private memory +%.2f MiB per rank (mean), resident +%.2f MiB "
                "per rank (mean); Shmem of the machine %.1f MiB",
                g_nlocal, areas, seg / 1048576.0, seg < 0 ? "not visible" : "st_blocks",
                seg / 1048576.0 / g_nlocal, grown_sum / 1048576.0 / tc_size,
                rss_sum / 1048576.0 / tc_size,
                proc_kib("/proc/meminfo", "Shmem") / 1048576.0);

    phase_large(budget);
    phase_many(budget);
    check_staging();

    uint64_t hwm = proc_kib("/proc/self/status", "VmHWM");
    long hwm_max = 0, hwm_me = (long)(hwm > rss0 ? hwm - rss0 : 0);
    MPI_Allreduce(&hwm_me, &hwm_max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    long hwm_sum = tc_sum(MPI_COMM_WORLD, hwm_me);
    /* one line for bench/runs/node-memory.sh (bytes; -1: not visible) */
    if (tc_rank == 0)
        printf("node-memory: ranks=%d init_segments=%" PRId64 " init_private_sum=%ld "
               "init_resident_sum=%ld peak_segments_large=%" PRId64 " peak_segments_many=%" PRId64
               " resident_growth_sum=%ld resident_growth_max=%ld\n",
               tc_size, g_init_seg, grown_sum, rss_sum, g_peak_seg[0], g_peak_seg[1], hwm_sum,
               hwm_max);
    if (tc_rank == 0)
        tc_note("resident set: at most +%.1f MiB over its size before fwdio_init on any rank "
                "(staging %.0f MiB, writer %.0f MiB per rank)",
                hwm_max / 1048576.0, rs.staging_budget / 1048576.0, rs.writer_budget / 1048576.0);
    /* staging, a writer's budget and a message, privately, and what the rank
     * maps of the area (at most the node's budget), plus 16 MiB for fwdio's
     * own records and the library's */
    uint64_t bound = rs.staging_budget + rs.writer_budget + rs.max_message + budget +
                     ((uint64_t)16 << 20);
    TC_CHECK(!g_check_rss || (uint64_t)hwm_me <= bound, "the resident set grew by %.1f MiB, over %.1f MiB",
             hwm_me / 1048576.0, bound / 1048576.0);

    close_segments();
    TC_EXPECT(fwdio_finalize(g_rt), FWDIO_OK, "fwdio_finalize");
    if (g_fill_path[0])
        unlink(g_fill_path);
    MPI_Comm_free(&g_node);
    return tc_finish("test_node_memory");
}
