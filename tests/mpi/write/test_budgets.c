/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bounded memory and backpressure (the writer pipeline):
 *
 *   adversarial  every rank writes small pieces round-robin over all write
 *                units, so every unit is partly filled at once; the writers'
 *                budget holds two units (and the record of the units in
 *                progress, which counts against it)
 *   one-sender   rank 0 writes the whole file in one fwdio_write call, which
 *                streams through a staging budget of a few MiB
 *   try-write    fwdio_try_write returns FWDIO_EAGAIN while the staging budget
 *                is full (the file cannot be ready yet: the other ranks open it
 *                only after rank 0 has seen EAGAIN) and FWDIO_ETOOBIG for a
 *                write larger than the budget, and succeeds once room is made
 *   combine      small writes are combined into open messages, whose bytes
 *                count as staged: rank 0 fills its budget with them before the
 *                file can be ready, exactly; then every rank writes records
 *                and makes no further fwdio call until its staged bytes drain,
 *                which only the progress thread's own flush of the open
 *                messages can bring about
 *   tiny         stripes and write units as small as asked (1 byte: raised
 *                to the smallest fwdio takes) and the budgets given (1 byte:
 *                raised likewise) over a file many times the budgets. Ranks
 *                0..W-1 are the writers and write nothing; each other rank
 *                writes its contiguous share of the file in extents of random
 *                length, in file order. After a warm-up file the
 *                peak RSS (VmHWM, reset through /proc/self/clear_refs) is
 *                measured: a writer's growth must stay within its budget, one
 *                message and a fixed overhead, a sender's within its staging
 *                budget, its open combined messages and the same overhead.
 *
 * Every file is verified byte for byte, and no rank may ever hold more than its
 * writer budget plus one message, or stage more than its staging budget.
 */
#define _GNU_SOURCE
#include "test_common.h"

#include "pattern.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t g_size = (uint64_t)1 << 30;
static uint64_t g_piece = 128 << 10;
static uint64_t g_writer_buffer = 8 << 20;
static uint64_t g_staging_buffer = 8 << 20;
static int g_inline;
/* tiny: the file's sizes and layout, and the longest extent a sender writes */
static uint64_t g_stripe_size, g_write_size;
static fwdio_layout_t g_layout = FWDIO_LAYOUT_BLOCK;
static uint64_t g_max_chunk = 200 << 10;
static int g_check_rss = 1; /* off in sanitizer builds, whose allocators keep freed memory */
static uint64_t g_shared_buffer; /* fwdio_config_t.shared_buffer (1: off, 0: default) */

static fwdio_runtime_t *start_polling(uint64_t writer_buffer, uint64_t staging_buffer,
                                      unsigned poll_max_us)
{
    fwdio_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.poll_max_us = poll_max_us;
    cfg.writer_buffer = writer_buffer;
    cfg.staging_buffer = staging_buffer;
    cfg.io_inline = g_inline;
    cfg.shared_buffer = (size_t)g_shared_buffer;
    return tc_start_runtime_with(MPI_COMM_WORLD, &cfg);
}

static fwdio_runtime_t *start(uint64_t writer_buffer, uint64_t staging_buffer)
{
    return start_polling(writer_buffer, staging_buffer, 0);
}

/* The memory bounds, on every rank. */
static void check_bounds(fwdio_runtime_t *rt, const char *what)
{
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    /* one message: its bytes plus the receive bookkeeping in front of them */
    uint64_t limit = rs.writer_budget + rs.max_message + 4096;
    TC_CHECK(rs.writer_peak <= limit,
             "%s: rank %d held %llu writer bytes, budget %llu + one message %llu", what, tc_rank,
             (unsigned long long)rs.writer_peak, (unsigned long long)rs.writer_budget,
             (unsigned long long)rs.max_message);
    TC_CHECK(rs.staging_peak <= rs.staging_budget,
             "%s: rank %d staged %llu bytes, budget %llu", what, tc_rank,
             (unsigned long long)rs.staging_peak, (unsigned long long)rs.staging_budget);
    TC_CHECK(rs.staged == 0, "%s: rank %d still has %llu bytes staged", what, tc_rank,
             (unsigned long long)rs.staged);
    TC_CHECK(rs.shared_peak <= rs.shared_budget,
             "%s: rank %d used %llu bytes of its node-shared area of %llu", what, tc_rank,
             (unsigned long long)rs.shared_peak, (unsigned long long)rs.shared_budget);
    long peak = tc_sum(MPI_COMM_WORLD, (long)rs.writer_peak);
    if (tc_rank == 0)
        tc_note("%s: writer budget %llu, max message %llu; writer peaks sum %ld", what,
                (unsigned long long)rs.writer_budget, (unsigned long long)rs.max_message, peak);
}

static fwdio_file_t *open_file(fwdio_runtime_t *rt, const char *name, uint64_t size,
                               char *path, size_t path_size)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.writers = 2;
    tc_path(path, path_size, name);
    fwdio_file_t *f = NULL;
    int rc = fwdio_open(rt, path, size, &o, NULL, &f);
    if (rc != FWDIO_OK || !f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", name, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return f;
}

static void close_wait_verify(fwdio_file_t *f, const char *path, uint64_t size, uint64_t seed,
                              const char *what)
{
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    tc_phase("%s: fwdio_wait", what);
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    tc_phase("%s: verify", what);
    tc_verify_full(MPI_COMM_WORLD, path, size, seed);
}

/* Every rank writes pieces k with k % P == rank, walking all units at one slot
 * before the next slot, so that every unit waits for every rank. */
static void section_adversarial(void)
{
    const uint64_t seed = 301;
    fwdio_runtime_t *rt = start(g_writer_buffer, g_staging_buffer);
    char path[4096];
    fwdio_file_t *f = open_file(rt, "adversarial.dat", g_size, path, sizeof path);
    const uint64_t unit = FWDIO_DEFAULT_WRITE_SIZE;
    const uint64_t per_unit = unit / g_piece, units = g_size / unit;
    uint8_t *buf = malloc(g_piece);
    tc_phase("adversarial: writing");
    int rc = FWDIO_OK;
    for (uint64_t slot = (uint64_t)tc_rank; slot < per_unit && rc == FWDIO_OK;
         slot += (uint64_t)tc_size)
        for (uint64_t u = 0; u < units && rc == FWDIO_OK; u++) {
            uint64_t off = u * unit + slot * g_piece;
            pattern_fill(buf, g_piece, off, seed);
            rc = fwdio_write(f, buf, g_piece, off);
        }
    TC_EXPECT(rc, FWDIO_OK, "adversarial: fwdio_write");
    free(buf);
    close_wait_verify(f, path, g_size, seed, "adversarial");

    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    long flushes = tc_sum(MPI_COMM_WORLD, (long)st.partial_flushes);
    long received = tc_sum(MPI_COMM_WORLD, (long)st.writer_bytes);
    long shared = tc_sum(MPI_COMM_WORLD, (long)st.bytes_shared);
    long to_mpi = tc_sum(MPI_COMM_WORLD, (long)st.bytes_to_mpi);
    TC_CHECK(received == (long)g_size, "adversarial: writers received %ld bytes of %llu",
             received, (unsigned long long)g_size);
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    if (g_shared_buffer == 1) {
        /* Over MPI, two units of budget against every unit partly filled: the
         * writers must have flushed partial units to make room for waiting
         * messages. */
        TC_CHECK(rs.shared_budget == 0, "adversarial: the node-shared area is on");
        TC_CHECK(shared == 0, "adversarial: %ld bytes went through an area that is off", shared);
        TC_CHECK(flushes > 0, "adversarial: no partial unit was flushed");
    } else {
        /* Through the area no message waits for writer memory (it stays in the
         * sender's): the units that find no buffer are written from there. */
        TC_CHECK(shared > 0, "adversarial: no byte went through the node-shared area");
        TC_CHECK(rs.shared_budget > 0, "adversarial: the node-shared area is off");
    }
    if (tc_rank == 0)
        tc_note("adversarial: %ld partial flushes; %ld bytes through the node-shared area, %ld "
                "over MPI",
                flushes, shared, to_mpi);
    check_bounds(rt, "adversarial");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static void section_one_sender(void)
{
    const uint64_t seed = 302;
    fwdio_runtime_t *rt = start(g_writer_buffer, g_staging_buffer);
    char path[4096];
    fwdio_file_t *f = open_file(rt, "one_sender.dat", g_size, path, sizeof path);
    if (tc_rank == 0) {
        uint8_t *buf = malloc(g_size);
        if (!buf) {
            tc_fail("no memory for a %llu-byte buffer", (unsigned long long)g_size);
        } else {
            pattern_fill(buf, g_size, 0, seed);
            tc_phase("one-sender: one fwdio_write of the whole file");
            TC_EXPECT(fwdio_write(f, buf, g_size, 0), FWDIO_OK, "one-sender: fwdio_write");
            free(buf);
        }
    }
    close_wait_verify(f, path, g_size, seed, "one-sender");
    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    if (tc_rank == 0)
        TC_CHECK(st.bytes_written == g_size && st.write_calls == 1,
                 "one-sender: stats say %llu bytes in %llu calls",
                 (unsigned long long)st.bytes_written, (unsigned long long)st.write_calls);
    check_bounds(rt, "one-sender");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

/* Rank 0 fills its staging budget while the file cannot be ready (no other
 * rank has opened it), so the next try must be refused; after the others open
 * it, retries succeed. */
static void section_try_write(void)
{
    const uint64_t seed = 303, budget = 1 << 20, size = 4 << 20;
    fwdio_runtime_t *rt = start(g_writer_buffer, budget);
    char path[4096];
    tc_path(path, sizeof path, "try_write.dat");
    fwdio_file_t *f = NULL;
    uint8_t *buf = malloc(size);
    pattern_fill(buf, size, 0, seed);
    int go = 0;
    if (tc_rank == 0) {
        f = open_file(rt, "try_write.dat", size, path, sizeof path);
        TC_EXPECT(fwdio_try_write(f, buf, budget, 0), FWDIO_OK, "try_write: the first MiB");
        TC_EXPECT(fwdio_try_write(f, buf + budget, 1, budget), FWDIO_EAGAIN,
                  "try_write with the staging budget full");
        TC_EXPECT(fwdio_try_write(f, buf, budget + 1, 0), FWDIO_ETOOBIG,
                  "try_write larger than the budget");
        fwdio_runtime_stats_t rs;
        fwdio_runtime_stats(rt, &rs);
        TC_CHECK(rs.staged == budget, "try_write: %llu bytes staged, expected %llu",
                 (unsigned long long)rs.staged, (unsigned long long)budget);
        go = 1;
    }
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (tc_rank != 0)
        f = open_file(rt, "try_write.dat", size, path, sizeof path);
    if (tc_rank == 0) {
        tc_phase("try_write: retrying until the rest is accepted");
        struct timespec pause = {0, 1000 * 1000};
        uint64_t off = budget, eagain = 0;
        while (off < size) {
            uint64_t n = size - off < budget / 2 ? size - off : budget / 2;
            int rc = fwdio_try_write(f, buf + off, n, off);
            if (rc == FWDIO_EAGAIN) {
                eagain++;
                fwdio_poll(rt);
                nanosleep(&pause, NULL);
                continue;
            }
            TC_EXPECT(rc, FWDIO_OK, "try_write retry");
            if (rc != FWDIO_OK)
                break;
            off += n;
        }
        tc_note("try_write: %llu EAGAIN before the rest was accepted", (unsigned long long)eagain);
    }
    free(buf);
    close_wait_verify(f, path, size, seed, "try-write");
    check_bounds(rt, "try-write");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

static uint64_t staged_now(fwdio_runtime_t *rt)
{
    fwdio_runtime_stats_t rs;
    fwdio_runtime_stats(rt, &rs); /* reads; sends nothing */
    return rs.staged;
}

static void section_combine(void)
{
    const uint64_t seed = 304, budget = 64 << 10, piece = 1000, record = 100, size = 1 << 20;
    /* Open messages go by age after 50 ms: a slow loop cannot make the message
     * count below fail, and the drain still takes a fraction of a second. */
    fwdio_runtime_t *rt = start_polling(g_writer_buffer, budget, 50000);
    char path[4096];
    tc_path(path, sizeof path, "combine.dat");
    fwdio_file_t *f = NULL;
    uint8_t *buf = malloc(size);
    pattern_fill(buf, size, 0, seed);
    /* rank 0: combined writes fill the budget while the file cannot be ready */
    uint64_t head = 0;
    if (tc_rank == 0) {
        f = open_file(rt, "combine.dat", size, path, sizeof path);
        int rc;
        while ((rc = fwdio_try_write(f, buf + head, piece, head)) == FWDIO_OK)
            head += piece;
        TC_EXPECT(rc, FWDIO_EAGAIN, "combine: try_write with the staging budget full");
        TC_CHECK(head == budget / piece * piece, "combine: %llu bytes accepted, budget %llu",
                 (unsigned long long)head, (unsigned long long)budget);
        TC_CHECK(staged_now(rt) == head, "combine: %llu bytes staged, %llu written",
                 (unsigned long long)staged_now(rt), (unsigned long long)head);
    }
    MPI_Bcast(&head, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (tc_rank != 0)
        f = open_file(rt, "combine.dat", size, path, sizeof path);
    /* every rank: its share of the rest in records, then no fwdio call */
    uint64_t lo = head + (size - head) * (uint64_t)tc_rank / (uint64_t)tc_size;
    uint64_t hi = head + (size - head) * (uint64_t)(tc_rank + 1) / (uint64_t)tc_size;
    tc_phase("combine: writing records");
    for (uint64_t off = lo; off < hi; off += record) {
        uint64_t n = hi - off < record ? hi - off : record;
        int rc = fwdio_write(f, buf + off, n, off);
        TC_EXPECT(rc, FWDIO_OK, "combine: fwdio_write");
        if (rc != FWDIO_OK)
            break;
    }
    tc_phase("combine: waiting, without calling fwdio, for the open messages to go");
    struct timespec pause = {0, 1000 * 1000};
    for (int i = 0; i < 30000 && staged_now(rt) != 0; i++) /* a hang bound, not a timing */
        nanosleep(&pause, NULL);
    TC_CHECK(staged_now(rt) == 0, "combine: %llu bytes still staged after 30 s without a call",
             (unsigned long long)staged_now(rt));
    free(buf);
    close_wait_verify(f, path, size, seed, "combine");
    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    uint64_t calls = (hi - lo + record - 1) / record + (tc_rank == 0 ? head / piece : 0);
    TC_CHECK(st.write_calls == calls && st.messages_sent < calls,
             "combine: %llu calls (expected %llu) sent as %llu messages",
             (unsigned long long)st.write_calls, (unsigned long long)calls,
             (unsigned long long)st.messages_sent);
    check_bounds(rt, "combine");
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}


/* ---- tiny: sizes and budgets at their smallest, RSS measured ---- */

/* Growth allowed beside the budgets, for what they do not count: the first
 * fragment of each message a writer has not taken yet, which MPI keeps on the
 * writer (32 KiB in Open MPI's shared-memory transport; senders have at most
 * their staging budget in flight), the threads' stacks as far as they are
 * touched, malloc's free lists, and page granularity. Measured over 24 runs
 * of these cases: a writer grew at most 252 KiB (budget 256 KiB + message
 * 132 KiB), a sender at most 256 KiB (its limit below without this
 * allowance: 326 KiB); the note lines print the growth. A unit table over
 * the file, as before, grew a writer by 64 bytes per unit: 2 GiB here. */
#define TINY_FIXED_OVERHEAD ((uint64_t)1 << 20)

/* What fwdio.h says the smallest budgets in force are. */
#define TINY_MIN_WRITER_BUFFER ((uint64_t)256 << 10)
#define TINY_MIN_STAGING_BUFFER ((uint64_t)64 << 10)

/* A field of /proc/self/status in bytes ("VmHWM:  1234 kB"), or 0. */
static uint64_t proc_status_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t v = 0;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') {
            v = strtoull(line + n + 1, NULL, 10) << 10;
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* Start a new peak: the high-water mark becomes the present RSS (Linux 4.0+). */
static int reset_peak_rss(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY);
    int ok = fd >= 0 && write(fd, "5", 1) == 1;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

/* From here to capture_end, this rank's stderr goes to `path`. Returns the
 * descriptor to restore, or -1. */
static int capture_begin(const char *path)
{
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (saved < 0 || fd < 0 || dup2(fd, 2) < 0) {
        if (fd >= 0)
            close(fd);
        if (saved >= 0)
            close(saved);
        return -1;
    }
    close(fd);
    return saved;
}

/* Restore stderr, copy what was captured to it and return it (malloc'd). */
static char *capture_end(int saved, const char *path)
{
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 1 << 16);
    if (f && text) {
        size_t n = fread(text, 1, (1 << 16) - 1, f);
        text[n] = '\0';
    }
    if (f)
        fclose(f);
    if (text)
        fputs(text, stderr);
    return text;
}

/* The clamp of a value given below the smallest in force is said on stderr:
 * a line "fwdio: <what> <given>[ (<where from>)] raised to ...". */
static void expect_said(const char *text, const char *what, uint64_t given, uint64_t smallest)
{
    char want[128];
    snprintf(want, sizeof want, "fwdio: %s %llu ", what, (unsigned long long)given);
    int found = 0;
    for (const char *at = text ? strstr(text, want) : NULL; at && !found;
         at = strstr(at + 1, want)) {
        const char *eol = strchr(at, '\n');
        const char *raised = strstr(at, " raised to ");
        found = raised && (!eol || raised < eol);
    }
    if (given != 0 && given < smallest)
        TC_CHECK(found, "tiny: rank 0 did not say \"%s... raised to ...\" on stderr", want);
}

static fwdio_file_t *open_tiny(fwdio_runtime_t *rt, const char *name, uint64_t size,
                               const int *writers, int nwriters, char *path, size_t path_size)
{
    fwdio_options_t o;
    fwdio_options_init(&o);
    o.stripe_size = g_stripe_size;
    o.write_size = g_write_size;
    o.layout = g_layout;
    o.writer_list = writers;
    o.writer_list_len = nwriters;
    tc_path(path, path_size, name);
    fwdio_file_t *f = NULL;
    int rc = fwdio_open(rt, path, size, &o, NULL, &f);
    if (rc != FWDIO_OK || !f) {
        tc_fail("fwdio_open(%s) returned %d (%s)", name, rc, fwdio_strerror(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return f;
}

/* The senders (ranks nwriters..P-1) write the extents dealt to them, each in
 * file order, from one reused buffer. */
static void write_extents_of(fwdio_file_t *f, const tc_extent_t *ext, size_t n, uint64_t seed,
                             uint8_t *buf)
{
    int rc = FWDIO_OK;
    for (size_t i = 0; i < n && rc == FWDIO_OK; i++) {
        if (ext[i].owner != tc_rank)
            continue;
        pattern_fill(buf, ext[i].len, ext[i].offset, seed);
        rc = fwdio_write(f, buf, ext[i].len, ext[i].offset);
    }
    TC_EXPECT(rc, FWDIO_OK, "tiny: fwdio_write");
}

static void section_tiny(void)
{
    const uint64_t seed = 305, warm_size = 4 << 20;
    if (tc_size < 2) {
        tc_fail("tiny needs a writer and a sender: at least 2 ranks");
        return;
    }
    const int nwriters = tc_size >= 3 ? 2 : 1;
    int writers[2] = {0, 1};
    /* rank 0 reports the clamps, at fwdio_init and at the first fwdio_open */
    char said_path[4096];
    tc_path(said_path, sizeof said_path, "stderr-rank0.txt");
    int saved = tc_rank == 0 ? capture_begin(said_path) : -1;
    fwdio_runtime_t *rt = start(g_writer_buffer, g_staging_buffer);
    fwdio_runtime_stats_t rs;
    TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    uint64_t want_wb = g_writer_buffer > TINY_MIN_WRITER_BUFFER ? g_writer_buffer
                                                                : TINY_MIN_WRITER_BUFFER;
    uint64_t want_sb = g_staging_buffer > TINY_MIN_STAGING_BUFFER ? g_staging_buffer
                                                                   : TINY_MIN_STAGING_BUFFER;
    TC_CHECK(rs.writer_budget == want_wb && rs.staging_budget == want_sb,
             "tiny: budgets in force %llu/%llu for %llu/%llu given, expected %llu/%llu",
             (unsigned long long)rs.writer_budget, (unsigned long long)rs.staging_budget,
             (unsigned long long)g_writer_buffer, (unsigned long long)g_staging_buffer,
             (unsigned long long)want_wb, (unsigned long long)want_sb);
    TC_CHECK(rs.combine_size <= rs.staging_budget, "tiny: combine_size %llu > staging %llu",
             (unsigned long long)rs.combine_size, (unsigned long long)rs.staging_budget);

    /* extents of random length, each sender's in its own share of the file
     * (the same plan on every rank). Shares keep the writers' record of
     * partly arrived units small; extents dealt at random would let one
     * sender run ahead of another and leave gaps open in proportion to the
     * distance, which the budget does not bound (fwdio.h, writer_buffer). */
    tc_rng_t rng;
    tc_rng_seed(&rng, seed);
    tc_extent_t *ext;
    size_t next;
    tc_random_extents(&rng, g_size, g_max_chunk, 0, &ext, &next);
    const int nsenders = tc_size - nwriters;
    for (size_t i = 0; i < next; i++)
        ext[i].owner = nwriters + (int)(ext[i].offset * (uint64_t)nsenders / g_size);
    uint8_t *buf = malloc(g_max_chunk);
    memset(buf, 0, g_max_chunk);

    /* warm-up: threads, buffer caches, MPI's queues and pools in use once */
    char path[4096];
    tc_phase("tiny: warm-up file");
    fwdio_file_t *f = open_tiny(rt, "tiny_warm.dat", warm_size, writers, nwriters, path,
                                sizeof path);
    if (tc_rank == 0) {
        char *said = capture_end(saved, said_path);
        TC_CHECK(saved >= 0, "tiny: cannot capture stderr");
        expect_said(said, "writer_buffer", g_writer_buffer, TINY_MIN_WRITER_BUFFER);
        expect_said(said, "staging_buffer", g_staging_buffer, TINY_MIN_STAGING_BUFFER);
        expect_said(said, "stripe_size", g_stripe_size, 512);
        expect_said(said, "write_size", g_write_size, 512);
        free(said);
    }
    if (tc_rank >= nwriters)
        TC_EXPECT(tc_write_pattern(f, warm_size * (uint64_t)(tc_rank - nwriters) /
                                          (uint64_t)nsenders,
                                   warm_size / (uint64_t)nsenders, seed, 16 << 10),
                  FWDIO_OK, "tiny: warm-up writes");
    if (tc_rank == tc_size - 1 && warm_size % (uint64_t)nsenders)
        TC_EXPECT(tc_write_pattern(f, warm_size - warm_size % (uint64_t)nsenders,
                                   warm_size % (uint64_t)nsenders, seed, 0),
                  FWDIO_OK, "tiny: warm-up tail");
    close_wait_verify(f, path, warm_size, seed, "tiny warm-up");
    fwdio_file_free(f);

    MPI_Barrier(MPI_COMM_WORLD);
    int reset = reset_peak_rss();
    TC_CHECK(reset == 0 || !g_check_rss,
             "tiny: cannot reset the peak RSS through /proc/self/clear_refs");
    uint64_t base = proc_status_bytes("VmHWM");

    tc_phase("tiny: writing");
    f = open_tiny(rt, "tiny.dat", g_size, writers, nwriters, path, sizeof path);
    if (tc_rank >= nwriters)
        write_extents_of(f, ext, next, seed, buf);
    TC_EXPECT(fwdio_close(f), FWDIO_OK, "fwdio_close");
    tc_phase("tiny: fwdio_wait");
    TC_EXPECT(fwdio_wait(f), FWDIO_OK, "fwdio_wait");
    /* The kernel updates the peak lazily: read after the reset, `base` can
     * hold an RSS the peak forgets again once shared-memory pages are given
     * back (the node area punches its idle chunks), so the peak at the end
     * can be below it: no growth then, not 2^64 - some. */
    uint64_t peak = proc_status_bytes("VmHWM");
    uint64_t grown = peak > base ? peak - base : 0;

    TC_EXPECT(fwdio_runtime_stats(rt, &rs), FWDIO_OK, "fwdio_runtime_stats");
    /* one message: its data, its header and piece table (at most the headroom
     * fwdio leaves beside max_message_size), the receive bookkeeping */
    const uint64_t message = rs.max_message + (64 << 10) + 4096;
    if (!g_check_rss) {
        /* sanitizers: only the accounting (check_bounds) holds */
    } else if (tc_rank < nwriters) {
        uint64_t limit = rs.writer_budget + message + TINY_FIXED_OVERHEAD;
        TC_CHECK(base > 0 && grown <= limit,
                 "tiny: writer rank %d grew %llu bytes (peak RSS), budget %llu + message %llu "
                 "+ fixed %llu",
                 tc_rank, (unsigned long long)grown, (unsigned long long)rs.writer_budget,
                 (unsigned long long)message, (unsigned long long)TINY_FIXED_OVERHEAD);
    } else {
        /* staged bytes, their messages' piece tables (16 bytes a stripe at
         * most), and an open combined message per writer */
        uint64_t stripe = g_stripe_size ? g_stripe_size : 512;
        stripe = stripe < 512 ? 512 : stripe;
        uint64_t limit = rs.staging_budget + rs.staging_budget / stripe * 16 +
                         (uint64_t)nwriters * rs.combine_size + message + TINY_FIXED_OVERHEAD;
        TC_CHECK(base > 0 && grown <= limit,
                 "tiny: sender rank %d grew %llu bytes (peak RSS), limit %llu", tc_rank,
                 (unsigned long long)grown, (unsigned long long)limit);
    }
    /* the largest growth of a writer and of a sender */
    long mine[2] = {tc_rank < nwriters ? (long)(grown >> 10) : 0,
                    tc_rank < nwriters ? 0 : (long)(grown >> 10)};
    long most[2] = {0, 0};
    MPI_Reduce(mine, most, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (tc_rank == 0)
        tc_note("tiny: %llu MiB, stripe %llu, unit %llu, %d writer(s): peak RSS grew %ld KiB "
                "on a writer (budget %llu KiB), %ld KiB on a sender (staging %llu KiB)",
                (unsigned long long)(g_size >> 20), (unsigned long long)g_stripe_size,
                (unsigned long long)g_write_size, nwriters, most[0],
                (unsigned long long)(rs.writer_budget >> 10), most[1],
                (unsigned long long)(rs.staging_budget >> 10));

    tc_phase("tiny: verify");
    tc_verify_full(MPI_COMM_WORLD, path, g_size, seed);
    fwdio_file_stats_t st;
    TC_EXPECT(fwdio_file_stats(f, &st), FWDIO_OK, "fwdio_file_stats");
    long received = tc_sum(MPI_COMM_WORLD, (long)st.writer_bytes);
    TC_CHECK(received == (long)g_size, "tiny: writers received %ld bytes of %llu", received,
             (unsigned long long)g_size);
    /* Under backpressure (the staging budget is full most of the time) the
     * messages must not shrink to one write each: a waiting write seals the
     * open combined messages only when the messages already sent cannot make
     * its room. */
    if (tc_rank >= nwriters && st.messages_sent > 0) {
        uint64_t average = st.bytes_written / st.messages_sent;
        TC_CHECK(average >= rs.staging_budget / 8,
                 "tiny: sender rank %d sent %llu bytes in %llu messages (%llu each), under %llu",
                 tc_rank, (unsigned long long)st.bytes_written,
                 (unsigned long long)st.messages_sent, (unsigned long long)average,
                 (unsigned long long)(rs.staging_budget / 8));
        if (tc_rank == nwriters)
            tc_note("tiny: sender rank %d: %llu messages of %llu bytes on average", tc_rank,
                    (unsigned long long)st.messages_sent, (unsigned long long)average);
    }
    check_bounds(rt, "tiny");
    free(buf);
    free(ext);
    fwdio_file_free(f);
    TC_EXPECT(fwdio_finalize(rt), FWDIO_OK, "fwdio_finalize");
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    unsigned timeout = 300;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--size") && i + 1 < argc)
            g_size = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--piece") && i + 1 < argc)
            g_piece = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--writer-buffer") && i + 1 < argc)
            g_writer_buffer = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--staging-buffer") && i + 1 < argc)
            g_staging_buffer = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--inline"))
            g_inline = 1;
        else if (!strcmp(argv[i], "--stripe-size") && i + 1 < argc)
            g_stripe_size = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--write-size") && i + 1 < argc)
            g_write_size = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--max-chunk") && i + 1 < argc)
            g_max_chunk = tc_parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--no-rss"))
            g_check_rss = 0;
        else if (!strcmp(argv[i], "--shared-buffer") && i + 1 < argc) {
            const char *v = argv[++i];
            g_shared_buffer = !strcmp(v, "off") ? 1 : tc_parse_size(v);
        }
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
            const char *l = argv[++i];
            g_layout = !strcmp(l, "cyclic") ? FWDIO_LAYOUT_CYCLIC : FWDIO_LAYOUT_BLOCK;
            if (strcmp(l, "cyclic") && strcmp(l, "block")) {
                fprintf(stderr, "--layout block|cyclic\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = (unsigned)tc_parse_long(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s --only adversarial|one-sender|try-write|combine|tiny [--size B] "
                    "[--piece B] "
                    "[--writer-buffer B] [--staging-buffer B] [--shared-buffer B|off] [--inline] "
                    "[--timeout SEC]\n"
                    "  tiny: [--stripe-size B] [--write-size B] [--layout block|cyclic] "
                    "[--max-chunk B] [--no-rss]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!only || g_piece == 0 || g_max_chunk == 0 || FWDIO_DEFAULT_WRITE_SIZE % g_piece != 0 ||
        g_size % FWDIO_DEFAULT_WRITE_SIZE != 0) {
        fprintf(stderr, "--only is required; --piece must divide the 4 MiB write unit and "
                        "--size must be a multiple of it\n");
        return 2;
    }
    tc_mpi_init(&argc, &argv, timeout);
    (void)tc_tmpdir();
    if (!strcmp(only, "adversarial"))
        section_adversarial();
    else if (!strcmp(only, "one-sender"))
        section_one_sender();
    else if (!strcmp(only, "try-write"))
        section_try_write();
    else if (!strcmp(only, "combine"))
        section_combine();
    else if (!strcmp(only, "tiny"))
        section_tiny();
    else
        tc_fail("unknown section '%s'", only);
    return tc_finish("test_budgets");
}
