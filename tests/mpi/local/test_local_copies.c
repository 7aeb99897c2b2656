/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-local tier's copies (local_copies) and a local store lost between
 * the local completion and the drain. Every rank writes (writer k is rank k,
 * or ranks 0 and P-1 on one host), layout cyclic, atomic_replace over an old
 * version of 1000 'o's where a case needs one.
 *
 * On one host (the default suite):
 *   onenode   local_copies 2 (the option, the hint fwdio_local_copies, the
 *             variable FWDIO_LOCAL_COPIES) with every rank on one node:
 *             fwdio_open fails with FWDIO_EINVAL on every rank, nothing is
 *             created; local_copies 3 is refused too;
 *   lost1     (own runtime, FWDIO_FAULT: the last writer's local file cannot
 *             be opened once the drain starts, as if its store were gone)
 *             one copy: complete is OK, the drain fails with FWDIO_EREAD on
 *             every rank with one text naming the local file, the target
 *             keeps the old version whole, its temporary is removed, the
 *             local files stay.
 * Across hosts (tests/system/cluster: 8 ranks, 2 on each of 4 hosts, each
 * host its own local_dir through "%h"):
 *   copies    local_copies 2: at completion each writer's local file and
 *             its partner copy exist, on different hosts, byte for byte the
 *             same; the drain gives OK, the target's bytes are right and
 *             every local file is gone;
 *   lost2     (own runtime; every rank of the host of rank 2 finds its local
 *             files unreadable once the drain starts: FWDIO_FAULT) local_copies
 *             2: complete and drained are OK on every rank, the target holds
 *             the new version byte for byte (the lost writers' units came
 *             from their partner copies);
 *   lost1     as on one host, with the whole host's store lost;
 *   mismatch  rank 0 passes local_copies 1, the others 2: FWDIO_EINVAL on
 *             every rank naming local_copies;
 *   direct    local_copies 2 with a local_capacity below every writer's
 *             share: each writer writes straight to the target and tells
 *             its partner so (nothing kept); complete and drained OK, the
 *             bytes right, no local file left;
 *   capacity  local_copies 2 with local_capacity: 1.25 MiB per node holds
 *             the node's two writers' own files but no partner copy (none
 *             kept; complete and drained OK, bytes right), 2.25 MiB holds
 *             both (every partner copy kept);
 *   copyfail  (own runtime; FWDIO_FAULT: the pwrites of the partner copy
 *             rank 4 keeps fail with ENOSPC, its store full; so does the
 *             last writer's second pwrite into its own local file)
 *             local_copies 2: the partial partner copy is removed and the
 *             file completes OK with that writer's own copy alone, the last
 *             writer's file moves to the target and its partner keeps
 *             nothing (nw - 1 own files, nw - 2 partner copies at
 *             completion); the drain gives OK and the target's bytes are
 *             right.
 *
 * With --dir DIR the program plays one side of a job killed during a drain
 * (driven by tests/mpi/local/drain_kill.cmake): `--kill` puts an old version at
 * DIR/ckpt, writes a new one through the tier (DIR/local) with
 * atomic_replace and a slow drain, and once it is complete and its drain has
 * begun writing the temporary, every rank dies; `--after-kill` then checks
 * that DIR/ckpt is the old version, whole, that the writers' local files are
 * still there with their indexes (what a restart reads), and that the next
 * version drains over it, byte for byte, leaving no temporary.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fwdio.h"
#include "test_common.h"

enum { STRIPE = 64 << 10, WRITE_UNIT = 16 << 10, OLD_LEN = 1000, MAXW = 64 };
static const uint64_t FILE_SIZE = (4 << 20) + 4321;

static fwdio_callback_mode_t g_mode = FWDIO_CALLBACKS_ON_POLL;
static int g_writers[MAXW];
static int g_multi; /* the ranks run on more than one node (set once: collective) */

typedef struct cbs {
    atomic_int complete_count, drained_count, complete_status, drained_status;
} cbs_t;

static void on_complete(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    cbs_t *c = user;
    atomic_store(&c->complete_status, status);
    atomic_fetch_add(&c->complete_count, 1);
}

static void on_drained(fwdio_file_t *f, int status, void *user)
{
    (void)f;
    cbs_t *c = user;
    atomic_store(&c->drained_status, status);
    atomic_fetch_add(&c->drained_count, 1);
}

static fwdio_callbacks_t callbacks(cbs_t *c)
{
    memset(c, 0, sizeof *c);
    fwdio_callbacks_t cb;
    memset(&cb, 0, sizeof cb);
    cb.complete = on_complete;
    cb.drained = on_drained;
    cb.user = c;
    return cb;
}

/* Writer k is rank k on several hosts; ranks 0 and P-1 on one. */
static int nwriters(void)
{
    return g_multi ? (tc_size < MAXW ? tc_size : MAXW) : (tc_size > 1 ? 2 : 1);
}

static void tier_options(fwdio_options_t *o, const char *local_dir, int copies)
{
    fwdio_options_init(o);
    int nw = nwriters();
    for (int w = 0; w < nw; w++)
        g_writers[w] = nw == tc_size ? w : (w == 0 ? 0 : tc_size - 1);
    o->placement = FWDIO_PLACEMENT_LIST;
    o->writer_list = g_writers;
    o->writer_list_len = nw;
    o->stripe_size = STRIPE;
    o->write_size = WRITE_UNIT;
    o->layout = FWDIO_LAYOUT_CYCLIC;
    o->local_dir = local_dir;
    o->local_copies = copies;
}

/* This rank's share: stripe-sized pieces round robin over the ranks. */
static void write_share(fwdio_file_t *f, uint64_t seed)
{
    int piece = 0;
    for (uint64_t off = 0; off < FILE_SIZE; off += STRIPE, piece++) {
        if (piece % tc_size != tc_rank)
            continue;
        uint64_t len = FILE_SIZE - off < STRIPE ? FILE_SIZE - off : STRIPE;
        TC_EXPECT(tc_write_pattern(f, off, len, seed, 10000), FWDIO_OK, "write");
    }
}

static void write_old_version(const char *path)
{
    if (tc_rank == 0) {
        FILE *p = fopen(path, "w");
        for (int i = 0; p && i < OLD_LEN; i++)
            fputc('o', p);
        if (p)
            fclose(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Whether `path` is the old version, whole (collective: rank 0 looks). */
static int is_old_version(const char *path)
{
    int old = 0;
    if (tc_rank == 0) {
        char buf[OLD_LEN + 1];
        FILE *p = fopen(path, "r");
        size_t n = p ? fread(buf, 1, sizeof buf, p) : 0;
        if (p)
            fclose(p);
        old = n == OLD_LEN;
        for (size_t i = 0; old && i < n; i++)
            old = buf[i] == 'o';
    }
    MPI_Bcast(&old, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return old;
}

/* The file's (drain's) error is `status` on every rank, one text holding
 * `fragment`. */
static void expect_agreed_error(fwdio_file_t *f, int status, const char *fragment)
{
    char text[512], first[512];
    snprintf(text, sizeof text, "%s", fwdio_file_error(f));
    memcpy(first, text, sizeof text);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    TC_CHECK(!strcmp(first, text), "error texts differ: \"%s\" on rank 0, \"%s\" here", first,
             text);
    TC_CHECK(strstr(text, fragment) != NULL, "the error does not name %s: %s", fragment, text);
    fwdio_error_info_t info;
    TC_EXPECT(fwdio_file_error_info(f, &info), FWDIO_OK, "fwdio_file_error_info");
    TC_CHECK(info.status == status, "error info: status %d, expected %d", info.status, status);
}

/* Local files under `base` (one level of host directories, or base itself)
 * whose names end in `suffix`. */
static int count_files(const char *base, const char *suffix)
{
    int n = 0;
    DIR *d = opendir(base);
    if (!d)
        return 0;
    struct dirent *e;
    size_t sl = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char p[2 * PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", base, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            n += count_files(p, suffix);
            continue;
        }
        size_t len = strlen(e->d_name);
        n += len >= sl && !strcmp(e->d_name + len - sl, suffix);
    }
    closedir(d);
    return n;
}

/* Whole contents of `path` (malloc'ed) in *len; NULL if unreadable. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *p = fopen(path, "rb");
    if (!p)
        return NULL;
    fseek(p, 0, SEEK_END);
    long n = ftell(p);
    fseek(p, 0, SEEK_SET);
    uint8_t *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, p) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(p);
    *len = (size_t)n;
    return buf;
}

/* Rank 0: every partner copy under base (host dirs) has its writer's file
 * in another host's directory, byte for byte the same; returns the pairs. */
static int check_pairs(const char *base)
{
    int pairs = 0;
    DIR *d = opendir(base);
    if (!d)
        return 0;
    struct dirent *h;
    while ((h = readdir(d)) != NULL) {
        if (h->d_name[0] == '.')
            continue;
        char hd[2 * PATH_MAX];
        snprintf(hd, sizeof hd, "%s/%s", base, h->d_name);
        DIR *hdir = opendir(hd);
        if (!hdir)
            continue;
        struct dirent *e;
        while ((e = readdir(hdir)) != NULL) {
            const char *suffix = ".partner.fwdio-local";
            size_t len = strlen(e->d_name), sl = strlen(suffix);
            if (len < sl || strcmp(e->d_name + len - sl, suffix))
                continue;
            char own_name[NAME_MAX + 16], copy[3 * PATH_MAX];
            snprintf(own_name, sizeof own_name, "%.*s.fwdio-local", (int)(len - sl), e->d_name);
            snprintf(copy, sizeof copy, "%s/%s", hd, e->d_name);
            /* the writer's file: in another host's directory */
            int found = 0;
            DIR *d2 = opendir(base);
            struct dirent *h2;
            while (d2 && (h2 = readdir(d2)) != NULL) {
                if (h2->d_name[0] == '.')
                    continue;
                char own[3 * PATH_MAX];
                snprintf(own, sizeof own, "%s/%s/%s", base, h2->d_name, own_name);
                if (access(own, F_OK) != 0)
                    continue;
                found++;
                TC_CHECK(strcmp(h2->d_name, h->d_name) != 0,
                         "%s: the partner copy is on the writer's own host %s", copy, h->d_name);
                size_t la = 0, lb = 0;
                uint8_t *a = slurp(own, &la), *b = slurp(copy, &lb);
                TC_CHECK(a && b && la == lb && la > FILE_SIZE && !memcmp(a, b, la),
                         "%s (%zu bytes) differs from %s (%zu bytes)", copy, lb, own, la);
                free(a);
                free(b);
            }
            if (d2)
                closedir(d2);
            TC_CHECK(found == 1, "%s: its writer's file found %d times", copy, found);
            pairs++;
        }
        closedir(hdir);
    }
    closedir(d);
    return pairs;
}

/* ---- onenode: no partner on one node; bad counts ---- */

static void expect_refused(fwdio_runtime_t *rt, const char *path, const fwdio_options_t *o,
                           const char *what)
{
    fwdio_file_t *f = NULL;
    int rc = fwdio_open(rt, path, FILE_SIZE, o, NULL, &f);
    TC_CHECK(rc == FWDIO_EINVAL && f == NULL, "%s: fwdio_open gave %s", what,
             fwdio_strerror(rc));
    TC_CHECK(tc_all_same(MPI_COMM_WORLD, rc), "%s: ranks disagree", what);
    if (rc == FWDIO_OK && f) {
        fwdio_close(f);
        fwdio_wait(f);
        fwdio_file_free(f);
    }
}

static void case_onenode(fwdio_runtime_t *rt)
{
    char dir[4096], path[4096];
    tc_path(dir, sizeof dir, "copies-onenode");
    tc_path(path, sizeof path, "onenode.dat");
    fwdio_options_t o;
    tc_phase("onenode");
    tier_options(&o, dir, 2);
    expect_refused(rt, path, &o, "local_copies 2 on one node");
    tier_options(&o, dir, 0);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "fwdio_local_copies", "2");
    TC_EXPECT(fwdio_options_set_info(&o, info), FWDIO_OK, "fwdio_options_set_info");
    MPI_Info_free(&info);
    TC_CHECK(o.local_copies == 2, "the hint set local_copies %d", o.local_copies);
    expect_refused(rt, path, &o, "the hint fwdio_local_copies 2 on one node");
    tier_options(&o, dir, 0);
    setenv("FWDIO_LOCAL_COPIES", "2", 1);
    expect_refused(rt, path, &o, "FWDIO_LOCAL_COPIES=2 on one node");
    unsetenv("FWDIO_LOCAL_COPIES");
    tier_options(&o, dir, 3);
    expect_refused(rt, path, &o, "local_copies 3");
    struct stat st;
    TC_CHECK(stat(path, &st) != 0 && stat(dir, &st) != 0, "a refused open created %s or %s",
             path, dir);
    /* one copy still works, and 1 is what 0 means */
    tier_options(&o, dir, 1);
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open (1 copy)");
    write_share(f, 71);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 71) == 0, "bytes with 1 copy");
    fwdio_file_free(f);
}

/* ---- lost1 / lost2: a store lost between the local completion and the
 * drain ---- */

/* A runtime of its own whose ranks on the lost host (all of them on one
 * host: the last rank) cannot open their local files once the drain
 * starts: the own file's opens are the writer's, its index's, its version
 * record's (".w<w>.fwdio-local.ver", for a restart), with 2 copies the read
 * for the partner, then the drain's; a partner copy's, its making, then the
 * drain's check. */
static fwdio_runtime_t *lost_runtime(int copies, int *lost_here)
{
    char host[256] = "", host2[256] = "";
    gethostname(host, sizeof host - 1);
    int multi = g_multi;
    int victim = multi ? 2 % tc_size : tc_size - 1;
    if (tc_rank == victim)
        memcpy(host2, host, sizeof host);
    MPI_Bcast(host2, sizeof host2, MPI_CHAR, victim, MPI_COMM_WORLD);
    *lost_here = multi ? !strcmp(host, host2) : tc_rank == victim;
    if (*lost_here) {
        int w = multi ? tc_rank : (tc_size > 1 ? 1 : 0);
        char spec[256];
        if (copies > 1)
            snprintf(spec, sizeof spec,
                     "open:eio:path=.w%d.fwdio-local:from=5;open:eio:path=.partner.fwdio-local:"
                     "from=2",
                     w);
        else
            snprintf(spec, sizeof spec, "open:eio:path=.w%d.fwdio-local:from=4", w);
        setenv("FWDIO_FAULT", spec, 1);
    }
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    return rt;
}

static void case_lost(int copies)
{
    char base[4096], dir[4096 + 8], path[4096], tmp[4096 + 32], name[64];
    snprintf(name, sizeof name, "copies-lost%d", copies);
    tc_path(base, sizeof base, name);
    snprintf(dir, sizeof dir, "%s/%%h", base);
    snprintf(name, sizeof name, "lost%d.dat", copies);
    tc_path(path, sizeof path, name);
    snprintf(tmp, sizeof tmp, "%.*s.%s.fwdio-tmp", (int)(strlen(path) - strlen(name)), path,
             name);
    write_old_version(path);
    int lost_here = 0;
    fwdio_runtime_t *rt = lost_runtime(copies, &lost_here);
    tc_phase("lost%d", copies);
    fwdio_options_t o;
    tier_options(&o, dir, copies);
    o.atomic_replace = 1;
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, 800 + (uint64_t)copies);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete in the local stores");
    int nlost = (int)tc_sum(MPI_COMM_WORLD, lost_here);
    TC_CHECK(nlost >= 1, "no rank lost its store");
    if (copies > 1) {
        TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait: from the partner copies");
        TC_CHECK(atomic_load(&c.drained_count) == 1 &&
                     atomic_load(&c.drained_status) == FWDIO_OK,
                 "drained ran %d times, with %s", atomic_load(&c.drained_count),
                 fwdio_strerror(atomic_load(&c.drained_status)));
        MPI_Barrier(MPI_COMM_WORLD);
        TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 800 + (uint64_t)copies) == 0,
                 "the bytes drained with %d store(s) lost", nlost);
    } else {
        TC_EXPECT(fwdio_drain_wait(f), FWDIO_EREAD, "fwdio_drain_wait: the store is lost");
        TC_CHECK(atomic_load(&c.drained_status) == FWDIO_EREAD, "drained callback: %s",
                 fwdio_strerror(atomic_load(&c.drained_status)));
        expect_agreed_error(f, FWDIO_EREAD, ".fwdio-local");
        TC_CHECK(is_old_version(path), "%s: the old version is not whole", path);
        struct stat st;
        TC_CHECK(tc_rank != 0 || stat(tmp, &st) != 0, "%s left behind", tmp);
        TC_CHECK(tc_rank != 0 || count_files(base, ".fwdio-local") == nwriters(),
                 "the local files of a failed drain: %d, expected %d",
                 count_files(base, ".fwdio-local"), nwriters());
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* ---- copies: two copies, on two hosts, the same bytes ---- */

static void case_copies(fwdio_runtime_t *rt)
{
    char base[4096], dir[4096 + 8], path[4096];
    tc_path(base, sizeof base, "copies-two");
    snprintf(dir, sizeof dir, "%s/%%h", base);
    tc_path(path, sizeof path, "two.dat");
    fwdio_options_t o;
    tier_options(&o, dir, 2);
    o.drain_bandwidth = 256 << 10; /* ~2 s per writer's units: the copies outlive the check */
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("copies");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, 901);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: both copies durable");
    int nw = nwriters();
    if (tc_rank == 0) {
        int own = count_files(base, ".fwdio-local") - count_files(base, ".partner.fwdio-local");
        TC_CHECK(own == nw, "%d writers' own files at completion, expected %d", own, nw);
        int pairs = check_pairs(base);
        TC_CHECK(pairs == nw, "%d partner copies at completion, expected %d", pairs, nw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 901) == 0, "drained bytes");
    /* drained: the partner copies go; each writer's own copy stays for a
     * restart, its version record saying drained (local_restart.h) */
    if (tc_rank == 0) {
        int partners = count_files(base, ".partner.fwdio-local");
        int own = count_files(base, ".fwdio-local") - partners;
        TC_CHECK(partners == 0, "%d partner copies left after the drain", partners);
        TC_CHECK(own == nw, "%d writers' own copies kept after the drain, expected %d", own, nw);
        TC_CHECK(count_files(base, ".fwdio-local.ver") == nw,
                 "%d version records after the drain, expected %d",
                 count_files(base, ".fwdio-local.ver"), nw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
}

static void case_mismatch(fwdio_runtime_t *rt)
{
    char base[4096], dir[4096 + 8], path[4096];
    tc_path(base, sizeof base, "copies-mismatch");
    snprintf(dir, sizeof dir, "%s/%%h", base);
    tc_path(path, sizeof path, "mismatch.dat");
    fwdio_options_t o;
    tier_options(&o, dir, tc_rank == 0 ? 1 : 2);
    tc_phase("mismatch");
    tc_expect_disagreement(rt, path, FILE_SIZE, &o, "local_copies");
}

/* ---- a job killed during a drain ---- */

/* Local files in dir ending in their index's footer. */
static int sealed_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 12 || strcmp(e->d_name + len - 12, ".fwdio-local"))
            continue;
        char p[2 * PATH_MAX], tail[8] = "";
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        int fd = open(p, O_RDONLY);
        struct stat st;
        n += fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size > FILE_SIZE &&
             pread(fd, tail, 8, st.st_size - 8) == 8 && !memcmp(tail, "FWDIOLXE", 8);
        if (fd >= 0)
            close(fd);
    }
    if (d)
        closedir(d);
    return n;
}

static void killed_drain(fwdio_runtime_t *rt, const char *dir, int kill)
{
    char path[4096], local[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    snprintf(local, sizeof local, "%s/local", dir);
    snprintf(tmp, sizeof tmp, "%s/.ckpt.fwdio-tmp", dir);
    if (kill)
        write_old_version(path);
    TC_CHECK(is_old_version(path), "%s: the old version is not whole%s", path,
             kill ? "" : " after the killed drain");
    if (!kill)
        TC_CHECK(tc_rank != 0 || sealed_files(local) == nwriters(),
                 "%d intact local files after the killed drain, expected %d",
                 sealed_files(local), nwriters());
    fwdio_options_t o;
    tier_options(&o, local, 1);
    o.atomic_replace = 1;
    if (kill)
        o.drain_bandwidth = 512 << 10; /* ~2 MiB per writer: ~4 s of drain */
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase(kill ? "kill: write" : "after the kill: write");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, kill ? 1001 : 1002);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    if (kill) {
        /* the drain is writing the temporary, not done: die now */
        struct stat st;
        int begun = 0;
        for (int i = 0; i < 200 && !begun; i++) {
            begun = stat(tmp, &st) == 0 && st.st_size > 0;
            if (!begun)
                usleep(10000);
        }
        int done = -1;
        TC_EXPECT(fwdio_drain_test(f, &done), FWDIO_OK, "fwdio_drain_test");
        TC_CHECK(begun && done == 0, "the drain had not begun (%d) or was over (%d)", begun,
                 done);
        TC_CHECK(is_old_version(path), "%s replaced before the drain was over", path);
        fflush(NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        _exit(tc_failures() ? 1 : 3);
    }
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 1002) == 0,
             "the version after the killed drain");
    struct stat st;
    TC_CHECK(tc_rank != 0 || stat(tmp, &st) != 0, "%s left behind", tmp);
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
}

/* ---- direct: writers without room tell their partners ---- */

static void case_direct(fwdio_runtime_t *rt)
{
    char base[4096], dir[4096 + 8], path[4096];
    tc_path(base, sizeof base, "copies-direct");
    snprintf(dir, sizeof dir, "%s/%%h", base);
    tc_path(path, sizeof path, "direct.dat");
    fwdio_options_t o;
    tier_options(&o, dir, 2);
    o.local_capacity = 4096; /* below any writer's share */
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("direct");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, 951);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    TC_CHECK(tc_rank != 0 || count_files(base, ".fwdio-local") == 0,
             "%d local files of writers that wrote to the target",
             count_files(base, ".fwdio-local"));
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 951) == 0, "direct bytes");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
}

/* ---- capacity: partner copies counted in local_capacity ---- */

/* One file with local_copies 2 and local_capacity `capacity`: complete and
 * drained OK, the bytes right; `pairs` partner copies at completion. */
static void copies_within(fwdio_runtime_t *rt, const char *name, uint64_t capacity, int pairs,
                          uint64_t seed)
{
    char base[4096], dir[4096 + 8], path[4096 + 8];
    tc_path(base, sizeof base, name);
    snprintf(dir, sizeof dir, "%s/%%h", base);
    snprintf(path, sizeof path, "%s.dat", base);
    fwdio_options_t o;
    tier_options(&o, dir, 2);
    o.local_capacity = capacity;
    if (pairs > 0) /* ~1 s per writer's units: the copies outlive the check */
        o.drain_bandwidth = 512 << 10;
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase(name);
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, seed);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    int nw = nwriters();
    if (tc_rank == 0) {
        int partners = count_files(base, ".partner.fwdio-local");
        int own = count_files(base, ".fwdio-local") - partners;
        TC_CHECK(own == nw, "%s: %d writers' own files at completion, expected %d", name, own,
                 nw);
        /* counted only (case copies compares them byte for byte): the
         * drain, ~1 s, removes them */
        TC_CHECK(partners == pairs,
                 "%s: %d partner copies at completion with local_capacity %llu, expected %d",
                 name, partners, (unsigned long long)capacity, pairs);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, seed) == 0, "%s: drained bytes",
             name);
    TC_CHECK(tc_rank != 0 || count_files(base, ".partner.fwdio-local") == 0,
             "%s: partner copies left after the drain", name);
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
}

/* A node holds its two writers' files (~0.5 MiB each: units and index)
 * and, with local_copies 2, the partner copies of two other writers:
 * 1.25 MiB per node has room for the writers' own files only, so no
 * partner copy is kept (the file completes with one copy, as with a full
 * store); 2.25 MiB holds both (the first file's kept copies evicted for
 * them). */
static void case_capacity(fwdio_runtime_t *rt)
{
    copies_within(rt, "copies-cap-own", 5 * (256 << 10), 0, 971);
    copies_within(rt, "copies-cap-both", 9 * (256 << 10), nwriters(), 972);
}

/* ---- copyfail: a partner copy that cannot be written: one copy ---- */

static void case_copy_fail(void)
{
    char base[4096], dir[4096 + 8], path[4096];
    tc_path(base, sizeof base, "copies-fail");
    snprintf(dir, sizeof dir, "%s/%%h", base);
    tc_path(path, sizeof path, "copyfail.dat");
    write_old_version(path);
    /* rank 4's store fills under the partner copy it keeps; the last
     * writer's store fills under its own file (the second local pwrite):
     * that file moves to the target, and its partner keeps nothing */
    int last = nwriters() - 1;
    char spec[256];
    snprintf(spec, sizeof spec, "pwrite:enospc:path=.partner.fwdio-local:rank=4;"
             "pwrite:enospc:path=w%d.fwdio-local:nth=2:rank=%d", last, g_writers[last]);
    setenv("FWDIO_FAULT", spec, 1);
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    unsetenv("FWDIO_FAULT");
    fwdio_options_t o;
    tier_options(&o, dir, 2);
    o.atomic_replace = 1;
    o.drain_bandwidth = 1 << 20; /* the files outlive the count at completion */
    cbs_t c;
    fwdio_callbacks_t cb = callbacks(&c);
    fwdio_file_t *f = NULL;
    tc_phase("copyfail");
    TC_EXPECT(fwdio_open(rt, path, FILE_SIZE, &o, &cb, &f), FWDIO_OK, "fwdio_open");
    write_share(f, 961);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait: complete with one copy of a writer");
    int nw = nwriters();
    if (tc_rank == 0) {
        int partners = count_files(base, ".partner.fwdio-local");
        int own = count_files(base, ".fwdio-local") - partners;
        TC_CHECK(own == nw - 1, "%d writers' own files at completion, expected %d (the "
                 "moved one removed)", own, nw - 1);
        TC_CHECK(partners == nw - 2, "%d partner copies at completion, expected %d (the "
                 "partial one removed, none of the moved writer)", partners, nw - 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    TC_EXPECT(fwdio_drain_wait(f), FWDIO_OK, "fwdio_drain_wait");
    TC_CHECK(atomic_load(&c.drained_status) == FWDIO_OK, "drained: %s",
             fwdio_strerror(atomic_load(&c.drained_status)));
    MPI_Barrier(MPI_COMM_WORLD);
    TC_CHECK(tc_verify_full(MPI_COMM_WORLD, path, FILE_SIZE, 961) == 0, "drained bytes");
    MPI_Barrier(MPI_COMM_WORLD);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

int main(int argc, char **argv)
{
    unsigned timeout = 60;
    tc_mpi_init(&argc, &argv, timeout);
    const char *only = NULL, *dir = NULL;
    int kill = 0;
    for (int i = 1; i < argc; i++) {
        if (tc_common_option(argc, argv, &i, &timeout, &g_mode))
            continue;
        if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--kill") || !strcmp(argv[i], "--after-kill")) {
            kill = !strcmp(argv[i], "--kill");
        } else {
            fprintf(stderr, "usage: test_local_copies [--case NAME] [--timeout S] "
                            "[--callback-mode poll|progress] [--dir DIR --kill|--after-kill]\n");
            return 2;
        }
    }
    tc_watchdog_start(timeout);
    int multi = g_multi = tc_node_count(MPI_COMM_WORLD) > 1;
    fwdio_runtime_t *rt = tc_start_runtime(MPI_COMM_WORLD, g_mode);
    if (dir) {
        killed_drain(rt, dir, kill);
        TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
        return tc_finish("test_local_copies (a job killed during a drain)");
    }
    if (!multi && (!only || !strcmp(only, "onenode")))
        case_onenode(rt);
    if (multi && (!only || !strcmp(only, "copies")))
        case_copies(rt);
    if (multi && (!only || !strcmp(only, "mismatch")))
        case_mismatch(rt);
    if (multi && (!only || !strcmp(only, "direct")))
        case_direct(rt);
    if (multi && (!only || !strcmp(only, "capacity")))
        case_capacity(rt);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
    if (multi && tc_size > 4 && (!only || !strcmp(only, "copyfail")))
        case_copy_fail();
    if (multi && (!only || !strcmp(only, "lost2")))
        case_lost(2);
    if (!only || !strcmp(only, "lost1"))
        case_lost(1);
    return tc_finish("test_local_copies");
}
