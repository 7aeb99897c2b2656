/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stream side of one file (progress thread), private to forwarder/stream/:
 * only its sources include this header. Made at fwdio_open for a stream
 * (stream.c), reached through the session's `stream`, freed with the file;
 * other modules ask the functions of steps.h.
 */
#ifndef FWDIOI_STREAM_STATE_H
#define FWDIOI_STREAM_STATE_H

#include "state.h"

struct fwdioi_stream {
    uint64_t step_fill;  /* the step this rank's messages belong to now */
    uint64_t *step_sent; /* [nwriters] its bytes per writer in step_fill */
    STAILQ_HEAD(, fwdioi_step) steps; /* ended here, not yet complete, in order */
    int step_busy;       /* the first step's drain, status and commit are under way */
    /* A step's scan and counts may run while the step before it finishes:
     * the step being counted, the next step to count, and whether every
     * collective of the step before it has been started (then the next
     * scan may start: every rank starts the file's collectives in the same
     * order) */
    struct fwdioi_step *step_counting;
    /* two steps' scan and counts buffers (at most two steps agree at once):
     * [2][2 (nwriters + FWDIOI_CLOSE_EXTRA) + 2], with the file's lifetime */
    uint64_t *step_slots;
    uint64_t scan_next;
    int seq_ready;
    /* The head's status (or commit) agreement has started here: every rank
     * will start it, so it completes. An MPI failure of the next step's scan
     * or counts meanwhile waits for it (abort_deferred, deferred_why) before
     * the abort is announced, so the head's outcome is the same on every
     * rank. */
    int head_agreeing;
    int abort_deferred;
    fwdioi_errinfo_t deferred_why;
    uint64_t append_base;   /* where the next step to count appends */
    uint64_t append_prefix; /* the close's scan: lower ranks' appends after their last step */
    uint64_t append_mine;   /* this rank's appended bytes after its last step */
    fwdioi_append_list_t close_appends; /* appended after the last step end */
    enum { CLOSE_SCAN_NONE, CLOSE_SCAN_RUNNING, CLOSE_SCAN_DONE } close_scan; /* their scan */
    int step_committers, step_committer;
    fwdioi_errinfo_t step_agreed, step_commit_local, step_commit_agreed;
    fwdioi_commit_set_t step_commit; /* the blocks the step's commit job writes */
    /* A step failed (agreed on every rank): later steps fail alike, without
     * agreements, and the stream with them; steps_failed_at is its index. */
    fwdioi_errinfo_t steps_failed;
    uint64_t steps_failed_at;
    /* An abort another rank announced, with how its steps ended there: the
     * steps it completed keep their status here too. */
    int abort_heard;
    fwdioi_step_outcome_t abort_steps;
    /* steps complete here (callbacks delivered); the writer keeps the
     * messages of later steps until then (write/writer.c) */
    uint64_t steps_complete;
};

#endif
