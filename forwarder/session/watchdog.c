/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The watchdog (progress thread): a file that waits config.watchdog seconds
 * for one of three things is reported on stderr, then again at doubling
 * intervals of that wait:
 *
 *   opening   opened on this rank, but the open is not agreed: some rank has
 *             not called fwdio_open for it (or the ranks opened different
 *             files, in another order, or more on some ranks). Every rank
 *             waiting says so; a file queued behind another file's open
 *             names that file.
 *   closing   closed on this rank, but the close is not agreed: some rank has
 *             not closed it. Every rank that closed it says so, with its rank
 *             (no rank knows who else closed without asking, and asking costs
 *             messages on every file; so when rank 0 is the one that did not
 *             close, the others still speak).
 *   draining  closed on every rank but not complete. Each rank that still
 *             waits for something says what: a writer, how many bytes it still
 *             expects and from which ranks bytes came; a sender, its messages
 *             not yet received; anyone, its receives and storage jobs under
 *             way. Rank 0 always reports, so a file stuck in an agreement is
 *             seen too.
 *
 * A report is built whole and written with one call, so the ranks' reports do
 * not interleave line by line.
 */
#include "session/watchdog.h"

#include "read/requester.h"
#include "write/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LISTED = 16 }; /* ranks listed one by one before "..." */

static const char *phase_name(fwdioi_phase_t p)
{
    switch (p) {
    case FWDIOI_PHASE_DUP: return "duplicating the communicator";
    case FWDIOI_PHASE_CHECKING: return "comparing what every rank passed to fwdio_open";
    case FWDIOI_PHASE_WAIT_PATH: return "waiting for an earlier file of the same path";
    case FWDIOI_PHASE_OPENING: return "opening";
    case FWDIOI_PHASE_OPEN: return "open";
    case FWDIOI_PHASE_CLOSING: return "agreeing on the bytes per writer";
    case FWDIOI_PHASE_SYNCING: return "writers draining and syncing, then the final status agreed";
    case FWDIOI_PHASE_COMMITTING: return "committing; commit status being agreed";
    case FWDIOI_PHASE_DONE: return "done";
    }
    return "?";
}

/* Runs of ranks as "0-3,7" (at most MAX_LISTED runs, then the count of the
 * rest): the `n` ascending `ranks`, or with `others` the ranks of [0, nranks)
 * not among them. */
static void print_ranks(FILE *out, const int *ranks, int n, int nranks, int others)
{
    int runs = 0, rest = 0, first = 1;
    /* run starts and ends, from the sorted list or from its gaps */
    for (int i = 0, next = 0; others ? next < nranks : i < n;) {
        int lo, hi;
        if (others) {
            while (i < n && ranks[i] == next) { /* skip a run of listed ranks */
                next++;
                i++;
            }
            if (next >= nranks)
                break;
            lo = next;
            hi = i < n ? ranks[i] - 1 : nranks - 1;
            next = hi + 1;
        } else {
            lo = hi = ranks[i++];
            while (i < n && ranks[i] == hi + 1)
                hi = ranks[i++];
        }
        if (runs < MAX_LISTED) {
            fprintf(out, first ? "%d" : ",%d", lo);
            if (hi > lo)
                fprintf(out, "-%d", hi);
            first = 0;
        } else {
            rest += hi - lo + 1;
        }
        runs++;
    }
    if (first)
        fprintf(out, "none");
    if (rest)
        fprintf(out, " and %d more", rest);
}

static void report_writer(FILE *out, const fwdio_file_t *f)
{
    const fwdioi_session_t *s = &f->s;
    uint64_t expected = s->expected_bytes[f->my_writer];
    uint64_t received = fwdioi_writer_received(f);
    fprintf(out, "  writer %d: received %llu of %llu bytes announced", f->my_writer,
            (unsigned long long)received, (unsigned long long)expected);
    if (received < expected)
        fprintf(out, ", waiting for %llu more", (unsigned long long)(expected - received));
    fprintf(out, "\n");
    int *senders = NULL;
    int nsenders = received < expected ? fwdioi_writer_senders(f, &senders) : -1;
    if (nsenders >= 0) {
        fprintf(out, "    bytes came from ranks ");
        print_ranks(out, senders, nsenders, f->plan.nranks, 0);
        if (nsenders < f->plan.nranks) {
            fprintf(out, "; none yet from ranks ");
            print_ranks(out, senders, nsenders, f->plan.nranks, 1);
        }
        fprintf(out, "\n");
    }
    free(senders);
    int waiting_len = fwdioi_writer_waiting_len(f);
    if (waiting_len >= 0)
        fprintf(out, "    a %d-byte message waits for writer memory (%llu of %llu bytes held)\n",
                waiting_len, (unsigned long long)f->owner->wbuf.held,
                (unsigned long long)fwdioi_rt_config(f->engine)->writer_buffer);
}

static void report_sender(FILE *out, const fwdio_file_t *f)
{
    const fwdioi_session_t *s = &f->s;
    fprintf(out, "  %d data message(s) sent by this rank not yet received; bytes sent to writers:",
            s->sends_pending);
    int listed = 0;
    for (int w = 0; w < f->plan.nwriters; w++) {
        if (s->sent_bytes[w] == 0)
            continue;
        if (listed++ == MAX_LISTED) {
            fprintf(out, " ...");
            break;
        }
        fprintf(out, " %d (rank %d) %llu", w, fwdioi_plan_writer_rank(&f->plan, w),
                (unsigned long long)s->sent_bytes[w]);
    }
    fprintf(out, "\n");
}

/* Whether this rank itself still waits for something other than the others'
 * agreement. */
static int has_outstanding(const fwdio_file_t *f)
{
    const fwdioi_session_t *s = &f->s;
    int writer_waits = f->my_writer >= 0 && s->close_agreed && !s->finishing;
    if (f->reading)
        return fwdioi_requester_pending(f) || writer_waits || s->sends_pending > 0 ||
               s->recvs_pending > 0 || s->io_pending > 0;
    return writer_waits || s->sends_pending > 0 || s->recvs_pending > 0 || s->io_pending > 0;
}

static void report(const fwdio_file_t *f, double waited)
{
    const fwdioi_session_t *s = &f->s;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return;
    const char *phase = f->reading && s->phase == FWDIOI_PHASE_SYNCING
                            ? "reads being answered, then the final status agreed"
                            : phase_name(s->phase);
    fprintf(out, "fwdio watchdog: %s: closed on every rank %.0f s ago, not complete; rank %d: %s\n",
            f->path, waited, f->rank, phase);
    if (f->reading)
        fwdioi_requester_report(out, f);
    else if (f->my_writer >= 0 && s->close_agreed && !s->finishing)
        report_writer(out, f);
    else if (f->my_writer >= 0 && s->finishing && s->final_ready == 0)
        fprintf(out, "  writer %d: all %llu bytes received; writing, syncing and closing\n",
                f->my_writer, (unsigned long long)fwdioi_writer_received(f));
    if (s->sends_pending > 0 && !f->reading)
        report_sender(out, f);
    if (s->recvs_pending > 0 || s->io_pending > 0 || (f->reading && s->sends_pending > 0))
        fprintf(out, "  %d receive(s) and %d send(s) in progress, %d storage job(s) queued or "
                     "running\n",
                s->recvs_pending, s->sends_pending, s->io_pending);
    if (!has_outstanding(f))
        fprintf(out, "  nothing outstanding on this rank: waiting for the other ranks\n");
    fclose(out);
    fputs(text, stderr);
    fflush(stderr);
    free(text);
}

/* Closed here, but the close is not agreed: some rank has not closed. */
static void report_not_closed(const fwdio_file_t *f, double waited)
{
    fprintf(stderr,
            "fwdio watchdog: %s: rank %d closed it %.0f s ago, but not every rank has: "
            "fwdio_close (or fwdio_finalize) must be called on every rank\n",
            f->path, f->rank, waited);
    fflush(stderr);
}

/* The file that takes the next communicator, if `f` waits behind it: files
 * take theirs one after the other, in open order. */
static const fwdio_file_t *open_in_flight(const fwdio_file_t *f)
{
    const struct fwdio_runtime *o = f->owner;
    const fwdio_file_t *q;
    STAILQ_FOREACH(q, &o->dups, s.links.dup)
        if (q == f) /* queued behind the first */
            return STAILQ_FIRST(&o->dups) != f ? STAILQ_FIRST(&o->dups) : NULL;
    return NULL;
}

/* Opened here, but the open is not agreed. */
static void report_not_opened(const fwdio_file_t *f, double waited)
{
    const fwdioi_session_t *s = &f->s;
    const fwdio_file_t *before = open_in_flight(f);
    if (before)
        fprintf(stderr,
                "fwdio watchdog: %s: rank %d opened it %.0f s ago; it waits for the open of %s "
                "before it, which not every rank has opened yet: fwdio_open must be called on "
                "every rank, in the same order\n",
                f->path, f->rank, waited, before->path);
    else if (s->phase == FWDIOI_PHASE_OPENING && s->io_pending > 0)
        fprintf(stderr,
                "fwdio watchdog: %s: rank %d opened it %.0f s ago; its writer %d is still "
                "opening and sizing the file in storage\n",
                f->path, f->rank, waited, f->my_writer);
    else
        fprintf(stderr,
                "fwdio watchdog: %s: rank %d opened it %.0f s ago, but not every rank has opened "
                "it yet: fwdio_open must be called on every rank, in the same order\n",
                f->path, f->rank, waited);
    fflush(stderr);
}

/* What the file waits for (the comment at the top). */
enum { WAIT_NONE, WAIT_OPENING, WAIT_PATH, WAIT_CLOSING, WAIT_DRAINING };

/* Waiting for an earlier file of the same path: say which. */
static void report_path_wait(const fwdio_file_t *f, double waited)
{
    const fwdio_file_t *before = NULL;
    for (const fwdio_file_t *g = LIST_FIRST(&f->owner->active); g; g = LIST_NEXT(g, s.links.active))
        if (g != f && g->seq < f->seq && !strcmp(g->path_key, f->path_key))
            before = g;
    fprintf(stderr,
            "fwdio watchdog: %s: rank %d opened it %.0f s ago; it waits for an earlier file of "
            "the same path to complete first (%s, %s)\n",
            f->path, f->rank, waited, before ? before->path : "?",
            before ? phase_name(before->s.phase) : "?");
    fflush(stderr);
}

static int waiting_for(const fwdio_file_t *f, double *since)
{
    const fwdioi_session_t *s = &f->s;
    if (s->dormant) /* waits for its first use, which may be late */
        return WAIT_NONE;
    if (s->phase == FWDIOI_PHASE_DUP || s->phase == FWDIOI_PHASE_CHECKING ||
        s->phase == FWDIOI_PHASE_OPENING) {
        *since = f->t_open;
        return WAIT_OPENING;
    }
    if (s->phase == FWDIOI_PHASE_WAIT_PATH) {
        *since = f->t_open;
        return WAIT_PATH;
    }
    if (s->watch.t_closed > 0) {
        *since = s->watch.t_closed;
        return WAIT_DRAINING;
    }
    if (s->watch.t_close_called > 0) {
        *since = s->watch.t_close_called;
        return WAIT_CLOSING;
    }
    return WAIT_NONE;
}

void fwdioi_watchdog_check(fwdio_file_t *f, double now)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_session_t *s = &f->s;
    double since = 0;
    int wait = waiting_for(f, &since);
    if (wait == WAIT_NONE)
        return;
    if (wait != s->watch.wait) {
        /* A new wait, counted from now: a close called while the open was
         * still pending has waited for the others' close only from now on. */
        s->watch.wait = wait;
        s->watch.start = now;
        s->watch.next_report = now + (double)fwdioi_rt_config(f->engine)->watchdog;
    }
    if (now < s->watch.next_report)
        return;
    if (wait == WAIT_OPENING)
        report_not_opened(f, now - since);
    else if (wait == WAIT_PATH)
        report_path_wait(f, now - since);
    else if (wait == WAIT_CLOSING)
        report_not_closed(f, now - since);
    else if (f->rank == 0 || has_outstanding(f))
        report(f, now - since);
    s->watch.next_report = s->watch.start + 2 * (s->watch.next_report - s->watch.start);
}
