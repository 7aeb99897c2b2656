/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "test_common.h"

#include <sched.h>
#include <unistd.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parse_size.h"
#include "pattern.h"

int tc_rank = 0;
int tc_size = 1;

static atomic_int g_failures;
static pthread_mutex_t g_phase_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_phase[256] = "start-up";
static char g_tmpdir[4096];

/* ---- watchdog ---------------------------------------------------------- */

static pthread_mutex_t g_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wd_cond = PTHREAD_COND_INITIALIZER;
static int g_wd_stop;
static int g_wd_running;
static unsigned g_wd_timeout;
static pthread_t g_wd_thread;

static void *watchdog_main(void *arg)
{
    (void)arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)g_wd_timeout;
    pthread_mutex_lock(&g_wd_lock);
    int rc = 0;
    while (!g_wd_stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&g_wd_cond, &g_wd_lock, &deadline);
    int stop = g_wd_stop;
    pthread_mutex_unlock(&g_wd_lock);
    if (stop)
        return NULL;
    char phase[sizeof g_phase];
    pthread_mutex_lock(&g_phase_lock);
    memcpy(phase, g_phase, sizeof phase);
    pthread_mutex_unlock(&g_phase_lock);
    fprintf(stderr,
            "FAIL [rank %d] watchdog: no progress after %u s, still in phase '%s'; "
            "aborting the job (temporary files kept in %s)\n",
            tc_rank, g_wd_timeout, phase, g_tmpdir[0] ? g_tmpdir : "(none)");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return NULL;
}

void tc_watchdog_start(unsigned timeout_s)
{
    if (timeout_s == 0 || g_wd_running)
        return;
    g_wd_timeout = timeout_s;
    if (pthread_create(&g_wd_thread, NULL, watchdog_main, NULL) != 0) {
        fprintf(stderr, "[rank %d] cannot start the watchdog thread\n", tc_rank);
        return;
    }
    g_wd_running = 1;
}

static void watchdog_stop(void)
{
    if (!g_wd_running)
        return;
    pthread_mutex_lock(&g_wd_lock);
    g_wd_stop = 1;
    pthread_cond_signal(&g_wd_cond);
    pthread_mutex_unlock(&g_wd_lock);
    pthread_join(g_wd_thread, NULL);
    g_wd_running = 0;
}

void tc_mpi_init(int *argc, char ***argv, unsigned timeout_s)
{
    int provided = MPI_THREAD_SINGLE;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "FAIL: MPI_Init_thread failed\n");
        exit(1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &tc_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tc_size);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "FAIL [rank %d]: MPI granted thread level %d, fwdio needs MPI_THREAD_MULTIPLE\n",
                tc_rank, provided);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Unbuffered output so the lines of a failing rank are not lost on abort. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    tc_watchdog_start(timeout_s);
}

/* ---- reporting --------------------------------------------------------- */

void tc_phase(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&g_phase_lock);
    vsnprintf(g_phase, sizeof g_phase, fmt, ap);
    pthread_mutex_unlock(&g_phase_lock);
    va_end(ap);
}

void tc_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char phase[sizeof g_phase];
    pthread_mutex_lock(&g_phase_lock);
    memcpy(phase, g_phase, sizeof phase);
    pthread_mutex_unlock(&g_phase_lock);
    atomic_fetch_add(&g_failures, 1);
    fprintf(stderr, "FAIL [rank %d] (%s): %s\n", tc_rank, phase, msg);
    fflush(stderr);
}

void tc_note(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("[rank %d] %s\n", tc_rank, msg);
    fflush(stdout);
}

int tc_failures(void)
{
    return atomic_load(&g_failures);
}

/* ---- temporary directory ----------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = (type == FTW_DP) ? rmdir(path) : unlink(path);
    if (rc != 0)
        fprintf(stderr, "[rank %d] cannot remove %s: %s\n", tc_rank, path, strerror(errno));
    return 0;
}

const char *tc_tmpdir(void)
{
    if (g_tmpdir[0])
        return g_tmpdir;
    char buf[sizeof g_tmpdir];
    memset(buf, 0, sizeof buf);
    if (tc_rank == 0) {
        /* TC_TMPDIR points a test's files somewhere without moving TMPDIR,
         * which the sanitizers and MPI also use (tests/system/pfs writes through a
         * FUSE mount and counts every byte that reaches it). */
        const char *base = getenv("TC_TMPDIR");
        if (!base || !*base)
            base = getenv("TMPDIR");
        if (!base || !*base)
            base = "/tmp";
        snprintf(buf, sizeof buf, "%s/fwdio-test-XXXXXX", base);
        if (!mkdtemp(buf)) {
            fprintf(stderr, "FAIL [rank 0]: mkdtemp(%s): %s\n", buf, strerror(errno));
            buf[0] = '\0';
        }
    }
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!buf[0]) {
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memcpy(g_tmpdir, buf, sizeof g_tmpdir);
    return g_tmpdir;
}

void tc_path(char *out, size_t out_size, const char *name)
{
    int n = snprintf(out, out_size, "%s/%s", tc_tmpdir(), name);
    if (n < 0 || (size_t)n >= out_size) {
        tc_fail("path too long: %s/%s", tc_tmpdir(), name);
        out[0] = '\0';
    }
}

/* tc_finish, or with `skip_reason` tc_skip: a test with failures fails either way. */
static int finish(const char *test_name, const char *skip_reason)
{
    tc_phase("finish");
    int local = tc_failures() ? 1 : 0;
    int failed_ranks = 0;
    MPI_Allreduce(&local, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (tc_rank == 0) {
        if (failed_ranks == 0) {
            if (g_tmpdir[0])
                nftw(g_tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
            if (skip_reason)
                printf("SKIP %s: %s\n", test_name, skip_reason);
            else
                printf("PASS %s (%d rank%s)\n", test_name, tc_size, tc_size == 1 ? "" : "s");
        } else {
            printf("FAIL %s: %d of %d rank(s) reported failures%s%s\n", test_name, failed_ranks,
                   tc_size, g_tmpdir[0] ? "; files kept in " : "", g_tmpdir);
        }
        fflush(stdout);
    }
    watchdog_stop();
    MPI_Finalize();
    if (failed_ranks)
        return 1;
    return skip_reason ? TC_SKIP : 0;
}

int tc_finish(const char *test_name) { return finish(test_name, NULL); }

int tc_skip(const char *test_name, const char *reason) { return finish(test_name, reason); }

/* ---- option parsing ---------------------------------------------------- */

uint64_t tc_parse_size(const char *s)
{
    uint64_t v;
    if (fwdioi_parse_size(s, &v) != 0) {
        fprintf(stderr, "bad size '%s'\n", s);
        exit(2);
    }
    return v;
}

long tc_parse_long(const char *s)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0') {
        fprintf(stderr, "bad integer '%s'\n", s);
        exit(2);
    }
    return v;
}

/* ---- random numbers ---------------------------------------------------- */

void tc_rng_seed(tc_rng_t *r, uint64_t seed)
{
    r->state = seed ^ 0x6A09E667F3BCC909ull;
    (void)tc_rng_next(r);
}

uint64_t tc_rng_next(tc_rng_t *r)
{
    /* Weyl sequence step followed by an avalanche mix. */
    r->state += 0x9E3779B97F4A7C15ull;
    uint64_t z = r->state;
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBull;
    z = (z ^ (z >> 27)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 33);
}

uint64_t tc_rng_below(tc_rng_t *r, uint64_t n)
{
    return n ? tc_rng_next(r) % n : 0;
}

/* ---- verification ------------------------------------------------------ */

int tc_verify_extents(MPI_Comm comm, const char *path, uint64_t size, uint64_t seed,
                      const tc_extent_t *ext, size_t n_ext)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    int bad = 0;

    /* The extents must tile [0, size): a broken test plan must not pass silently. */
    uint64_t expect = 0;
    for (size_t i = 0; i < n_ext && !bad; i++) {
        if (ext[i].offset != expect) {
            tc_fail("test bug: extent %zu of %s starts at %" PRIu64 ", expected %" PRIu64, i,
                    path, ext[i].offset, expect);
            bad = 1;
        }
        expect = ext[i].offset + ext[i].len;
    }
    if (!bad && expect != size) {
        tc_fail("test bug: extents of %s end at %" PRIu64 ", size is %" PRIu64, path, expect,
                size);
        bad = 1;
    }

    uint64_t lo = size / (uint64_t)nprocs * (uint64_t)rank +
                  (size % (uint64_t)nprocs) * (uint64_t)rank / (uint64_t)nprocs;
    uint64_t hi = size / (uint64_t)nprocs * (uint64_t)(rank + 1) +
                  (size % (uint64_t)nprocs) * (uint64_t)(rank + 1) / (uint64_t)nprocs;
    if (!bad) {
        int fd = open(path, O_RDONLY);
        struct stat st;
        if (fd < 0) {
            tc_fail("cannot open %s for verification: %s", path, strerror(errno));
            bad = 1;
        } else if (fstat(fd, &st) != 0) {
            tc_fail("fstat %s: %s", path, strerror(errno));
            bad = 1;
        } else if ((uint64_t)st.st_size != size) {
            tc_fail("%s has size %" PRIu64 ", expected %" PRIu64, path, (uint64_t)st.st_size,
                    size);
            bad = 1;
        }
        for (size_t i = 0; fd >= 0 && !bad && i < n_ext; i++) {
            uint64_t a = ext[i].offset > lo ? ext[i].offset : lo;
            uint64_t e = ext[i].offset + ext[i].len;
            uint64_t b = e < hi ? e : hi;
            if (a >= b)
                continue;
            uint64_t bad_off = 0;
            int hole = ext[i].owner < 0;
            if (pattern_check_fd(fd, a, b - a, seed, hole, &bad_off) != 0) {
                unsigned char got = 0;
                ssize_t n = pread(fd, &got, 1, (off_t)bad_off);
                char gotbuf[32];
                if (n == 1)
                    snprintf(gotbuf, sizeof gotbuf, "0x%02x", got);
                else
                    snprintf(gotbuf, sizeof gotbuf, "end of file/read error");
                char where[96];
                if (hole)
                    snprintf(where, sizeof where, "hole [%" PRIu64 ", %" PRIu64 ")",
                             ext[i].offset, e);
                else
                    snprintf(where, sizeof where, "extent [%" PRIu64 ", %" PRIu64
                             ") written by rank %d", ext[i].offset, e, ext[i].owner);
                tc_fail("%s: wrong byte at offset %" PRIu64 " (in %s): got %s, expected 0x%02x",
                        path, bad_off, where, gotbuf,
                        hole ? 0u : (unsigned)pattern_byte(seed, bad_off));
                bad = 1;
            }
        }
        if (fd >= 0)
            close(fd);
    }
    int bad_ranks = 0;
    MPI_Allreduce(&bad, &bad_ranks, 1, MPI_INT, MPI_SUM, comm);
    return bad_ranks;
}

int tc_verify_full(MPI_Comm comm, const char *path, uint64_t size, uint64_t seed)
{
    tc_extent_t e = {0, size, 0};
    return tc_verify_extents(comm, path, size, seed, &e, size ? 1 : 0);
}

int tc_write_pattern(fwdio_file_t *f, uint64_t offset, uint64_t len, uint64_t seed,
                     size_t piece)
{
    if (piece == 0 || piece > len)
        piece = len ? (size_t)len : 1;
    unsigned char *buf = malloc(piece);
    if (!buf) {
        tc_fail("out of memory for a %zu-byte staging buffer", piece);
        return FWDIO_ENOMEM;
    }
    int rc = FWDIO_OK;
    for (uint64_t done = 0; done < len && rc == FWDIO_OK;) {
        size_t n = len - done < piece ? (size_t)(len - done) : piece;
        pattern_fill(buf, n, offset + done, seed);
        rc = fwdio_write(f, buf, n, offset + done);
        /* fwdio_write copies: the buffer is ours again at once. */
        memset(buf, 0xA5, n);
        done += n;
    }
    free(buf);
    return rc;
}

int tc_all_same(MPI_Comm comm, long v)
{
    long mn = 0, mx = 0;
    MPI_Allreduce(&v, &mn, 1, MPI_LONG, MPI_MIN, comm);
    MPI_Allreduce(&v, &mx, 1, MPI_LONG, MPI_MAX, comm);
    return mn == mx;
}

void tc_expect_disagreement(fwdio_runtime_t *rt, const char *path, uint64_t size,
                            const fwdio_options_t *o, const char *option)
{
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, size, o, NULL, &f), FWDIO_OK, "fwdio_open");
    if (!f)
        return;
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_CHECK(fwdio_wait(f) == FWDIO_EINVAL, "ranks that disagree on %s: %s, not FWDIO_EINVAL",
             option, fwdio_strerror(fwdio_wait(f)));
    TC_CHECK(strstr(fwdio_file_error(f), option) != NULL, "the error does not name %s: %s",
             option, fwdio_file_error(f));
    fwdio_file_free(f);
}

long tc_sum(MPI_Comm comm, long v)
{
    long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, comm);
    return s;
}

int tc_node_count(MPI_Comm comm)
{
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    return (int)tc_sum(comm, node_rank == 0 ? 1 : 0);
}

fwdio_runtime_t *tc_start_runtime(MPI_Comm comm, fwdio_callback_mode_t mode)
{
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.callback_mode = mode;
    return tc_start_runtime_with(comm, &cfg);
}

fwdio_runtime_t *tc_start_runtime_with(MPI_Comm comm, const fwdio_config_t *cfg)
{
    fwdio_runtime_t *rt = NULL;
    int rc = fwdio_init(comm, cfg, &rt);
    if (rc != FWDIO_OK || !rt) {
        tc_fail("fwdio_init returned %d (%s)", rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rt;
}

/* ---- callbacks --------------------------------------------------------- */

static void cb_ready(fwdio_file_t *f, int status, void *user)
{
    tc_cbstate_t *st = user;
    int s = atomic_fetch_add(&st->seq, 1) + 1;
    atomic_store(&st->ready_status, status);
    atomic_store(&st->ready_seq, s);
    atomic_store(&st->ready_file, f);
    if (pthread_equal(pthread_self(), st->main_thread))
        atomic_fetch_add(&st->on_main_thread, 1);
    else
        atomic_fetch_add(&st->off_main_thread, 1);
    /* Counted after the status: a thread that waits for the count (wait_ready)
     * must see the status this callback delivered. The hook runs after, as a
     * ready callback that writes and closes would otherwise race the waiter. */
    atomic_fetch_add(&st->ready_count, 1);
    if (st->on_ready)
        st->on_ready(st, f, status);
}

static void cb_complete(fwdio_file_t *f, int status, void *user)
{
    tc_cbstate_t *st = user;
    int s = atomic_fetch_add(&st->seq, 1) + 1;
    atomic_store(&st->complete_status, status);
    atomic_store(&st->complete_seq, s);
    atomic_store(&st->complete_file, f);
    if (pthread_equal(pthread_self(), st->main_thread))
        atomic_fetch_add(&st->on_main_thread, 1);
    else
        atomic_fetch_add(&st->off_main_thread, 1);
    if (st->on_complete)
        st->on_complete(st, f, status);
    /* Counted last, so a thread that sees the count sees everything above. */
    atomic_fetch_add(&st->complete_count, 1);
}

void tc_cb_init(tc_cbstate_t *st)
{
    memset(st, 0, sizeof *st);
    atomic_init(&st->ready_count, 0);
    atomic_init(&st->complete_count, 0);
    atomic_init(&st->ready_status, 1);
    atomic_init(&st->complete_status, 1);
    atomic_init(&st->seq, 0);
    atomic_init(&st->ready_seq, 0);
    atomic_init(&st->complete_seq, 0);
    atomic_init(&st->on_main_thread, 0);
    atomic_init(&st->off_main_thread, 0);
    atomic_init(&st->ready_file, NULL);
    atomic_init(&st->complete_file, NULL);
    st->main_thread = pthread_self();
}

fwdio_callbacks_t tc_cb_callbacks(tc_cbstate_t *st)
{
    fwdio_callbacks_t cbs;
    memset(&cbs, 0, sizeof cbs);
    cbs.ready = cb_ready;
    cbs.complete = cb_complete;
    cbs.user = st;
    return cbs;
}

int tc_cb_check(MPI_Comm comm, const tc_cbstate_t *st, const char *what, int want_ready,
                int want_complete, fwdio_callback_mode_t mode, const fwdio_file_t *file)
{
    int before = tc_failures();
    int rc_n = atomic_load(&st->ready_count);
    int cc_n = atomic_load(&st->complete_count);
    int rs = atomic_load(&st->ready_status);
    int cs = atomic_load(&st->complete_status);
    int rseq = atomic_load(&st->ready_seq);
    int cseq = atomic_load(&st->complete_seq);
    TC_CHECK(rc_n == 1, "%s: ready callback ran %d times, expected exactly once", what, rc_n);
    TC_CHECK(cc_n == 1, "%s: complete callback ran %d times, expected exactly once", what, cc_n);
    if (rc_n == 1 && cc_n == 1)
        TC_CHECK(rseq < cseq, "%s: complete callback (call #%d) ran before ready (call #%d)",
                 what, cseq, rseq);
    if (rc_n >= 1)
        TC_CHECK(rs == want_ready, "%s: ready status %d (%s), expected %d (%s)", what, rs,
                 fwdio_strerror(rs), want_ready, fwdio_strerror(want_ready));
    if (cc_n >= 1)
        TC_CHECK(cs == want_complete, "%s: complete status %d (%s), expected %d (%s)", what, cs,
                 fwdio_strerror(cs), want_complete, fwdio_strerror(want_complete));
    int on_main = atomic_load(&st->on_main_thread);
    int off_main = atomic_load(&st->off_main_thread);
    if (mode == FWDIO_CALLBACKS_ON_POLL)
        TC_CHECK(off_main == 0,
                 "%s: %d callback(s) ran off the application thread in ON_POLL mode", what,
                 off_main);
    else
        TC_CHECK(on_main == 0,
                 "%s: %d callback(s) ran on the application thread in ON_PROGRESS mode", what,
                 on_main);
    if (file) {
        if (rc_n >= 1)
            TC_CHECK(atomic_load(&st->ready_file) == file,
                     "%s: ready callback got handle %p, fwdio_open returned %p", what,
                     (void *)atomic_load(&st->ready_file), (const void *)file);
        if (cc_n >= 1)
            TC_CHECK(atomic_load(&st->complete_file) == file,
                     "%s: complete callback got handle %p, fwdio_open returned %p", what,
                     (void *)atomic_load(&st->complete_file), (const void *)file);
    }
    /* Every rank must have seen the same statuses. */
    if (!tc_all_same(comm, rs))
        tc_fail("%s: ready status differs between ranks (this rank: %d, %s)", what, rs,
                fwdio_strerror(rs));
    if (!tc_all_same(comm, cs))
        tc_fail("%s: complete status differs between ranks (this rank: %d, %s)", what, cs,
                fwdio_strerror(cs));
    return tc_failures() != before;
}

void tc_poll_until_count(fwdio_runtime_t *rt, atomic_int *counter, int want)
{
    struct timespec ts = {0, 200 * 1000};
    while (atomic_load(counter) < want) {
        int n = fwdio_poll(rt);
        if (n < 0) {
            tc_fail("fwdio_poll returned %d (%s)", n, fwdio_strerror(n));
            return;
        }
        if (n == 0)
            nanosleep(&ts, NULL);
    }
}

void tc_poll_until_complete(fwdio_runtime_t *rt, tc_cbstate_t *st)
{
    tc_poll_until_count(rt, &st->complete_count, 1);
}

int tc_common_option(int argc, char **argv, int *i, unsigned *timeout,
                     fwdio_callback_mode_t *mode)
{
    if (*i + 1 >= argc)
        return 0;
    const char *opt = argv[*i], *val = argv[*i + 1];
    if (!strcmp(opt, "--timeout")) {
        *timeout = (unsigned)tc_parse_long(val);
    } else if (!strcmp(opt, "--callback-mode")) {
        if (!strcmp(val, "progress"))
            *mode = FWDIO_CALLBACKS_ON_PROGRESS;
        else if (!strcmp(val, "poll"))
            *mode = FWDIO_CALLBACKS_ON_POLL;
        else {
            fprintf(stderr, "--callback-mode must be poll or progress, not '%s'\n", val);
            exit(2);
        }
    } else {
        return 0;
    }
    (*i)++;
    return 1;
}

int tc_ranks_bound(MPI_Comm comm)
{
    cpu_set_t mine;
    int bound = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        bound = cpus > 0 && CPU_COUNT(&mine) < cpus;
    }
    int all = 0;
    MPI_Allreduce(&bound, &all, 1, MPI_INT, MPI_LAND, comm);
    return all;
}

void tc_random_extents(tc_rng_t *rng, uint64_t size, uint64_t max_len, unsigned hole_one_in,
                       tc_extent_t **out, size_t *n_out)
{
    size_t cap = 16, n = 0;
    tc_extent_t *ext = malloc(cap * sizeof *ext);
    for (uint64_t off = 0; off < size;) {
        uint64_t len = 1 + tc_rng_below(rng, max_len);
        if (len > size - off)
            len = size - off;
        if (ext && n == cap) {
            cap *= 2;
            tc_extent_t *grown = realloc(ext, cap * sizeof *ext);
            if (!grown)
                free(ext);
            ext = grown;
        }
        if (!ext) {
            fprintf(stderr, "tc_random_extents: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int owner = (int)tc_rng_below(rng, (uint64_t)tc_size);
        if (hole_one_in > 0 && tc_rng_below(rng, hole_one_in) == 0)
            owner = -1;
        ext[n++] = (tc_extent_t){off, len, owner};
        off += len;
    }
    *out = ext;
    *n_out = n;
}

void tc_capture_begin(tc_capture_t *c, const char *name)
{
    char file[256];
    snprintf(file, sizeof file, "%s.stderr.%d", name, tc_rank);
    tc_path(c->path, sizeof c->path, file);
    fflush(stderr);
    c->saved_fd = dup(2);
    int fd = open(c->path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || c->saved_fd < 0) {
        tc_fail("cannot capture stderr in %s", c->path);
        if (fd >= 0)
            close(fd);
        return;
    }
    dup2(fd, 2);
    close(fd);
}

char *tc_capture_end(tc_capture_t *c)
{
    fflush(stderr);
    if (c->saved_fd >= 0) {
        dup2(c->saved_fd, 2);
        close(c->saved_fd);
        c->saved_fd = -1;
    }
    enum { CAP = 1 << 16 };
    char *text = calloc(1, CAP);
    if (!text) {
        fprintf(stderr, "tc_capture_end: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    FILE *fp = fopen(c->path, "r");
    if (fp) {
        text[fread(text, 1, CAP - 1, fp)] = '\0';
        fclose(fp);
    }
    return text;
}
