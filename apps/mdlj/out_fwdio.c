/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output through fwdio: the trajectory is one fwdio stream open for the
 * whole run (FWDIO_SIZE_GROWS): each frame is a step of it, and the DCD
 * header, counting the frames, is the step's commit block, which fwdio
 * writes only once every byte of the frame is in the file; so whenever the
 * run is killed the header counts whole frames only. A checkpoint is
 * reported finished (and older ones may go) only once the frames up to its
 * step are complete too, so a restart always finds a checkpoint the
 * trajectory reaches. Each checkpoint is a version of a fwdio checkpoint
 * set (fwdio_ckpt_open: set <name> in <dir> for --checkpoint <dir>/<name>,
 * version = step; data <dir>/<name>.v<step>.ckpt beside its manifest):
 * fwdio names it, keeps the two newest complete versions (keep = 2), and
 * marks a version complete, with the CRC-32 of its bytes, only once it is
 * at its path (drained, with --local-dir); mdlj's commit record, written
 * with fwdio_ckpt_set_commit, is still the file's last bytes. Every rank
 * packs its atoms' runs of consecutive ids straight into a buffer from
 * fwdio_alloc, lends each run to fwdio_ckpt_write_lent and goes straight
 * back to computing: a writer on the same node writes the bytes from where
 * they were packed, with no copy. A buffer is reused once the done
 * callbacks of its writes have run; versions complete through
 * fwdio_ckpt_test, called on every rank once per step (output_poll), which
 * never blocks.
 */
#define _POSIX_C_SOURCE 200809L
#include "output_impl.h"

#include "lent_pool.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fw_ckpt {
    fwdio_ckpt_t *ck;
    int64_t step;
    int done;   /* fwdio_ckpt_test said done: complete at its path, manifest in place */
    int status;
    double t_open, t_complete, t_drained; /* when handed over, complete, done */
    struct fw_ckpt *next;
    char path[];
};

struct fw_state {
    fwdio_file_t *traj;
    int traj_ready;      /* set by the trajectory's ready callback */
    int traj_status;
    int64_t traj_steps;  /* steps of the trajectory complete (step callback) */
    int traj_step_failed;
    struct fw_ckpt *pending; /* checkpoints not yet handed over, newest first */
    app_lent_pool_t bufs;    /* what frames and checkpoints are packed into */
    char set_dir[4096];      /* the checkpoint set: --checkpoint's directory */
    const char *set_name;    /* ... and its file name (in o->p.ckpt_base) */
};

/* The checkpoint set's options: its directory, the two newest complete
 * versions kept, the data file's options `file`. */
static fwdio_ckpt_options_t set_options(const struct fw_state *s, const fwdio_options_t *file)
{
    fwdio_ckpt_options_t co;
    fwdio_ckpt_options_init(&co);
    co.dir = s->set_dir;
    co.keep = 2;
    co.file = file;
    return co;
}

static void traj_ready(fwdio_file_t *file, int status, void *user)
{
    (void)file;
    struct fw_state *s = user;
    s->traj_status = status;
    s->traj_ready = 1;
}

/* Step 0 of the trajectory is its header alone; step k > 0 is frame
 * kept + k - 1. */
static void traj_step(fwdio_file_t *file, uint64_t step, int status, void *user)
{
    (void)file;
    struct fw_state *s = user;
    s->traj_steps = (int64_t)step + 1;
    if (status != FWDIO_OK)
        s->traj_step_failed = 1;
}

/* The step's commit blocks (rank 0): the frame's last marker, then the
 * header counting `frames`; fwdio writes them in that order once the rest
 * of the frame is in the file, and writes no byte of the next frame before:
 * the file holds whole frames, the header counts them, and the file's size
 * reaches a frame's end only once the frame is whole (MDAnalysis counts
 * frames by the size). Then the step's end (every rank). */
static int end_traj_step(md_output_t *o, int64_t frames)
{
    struct fw_state *s = o->state;
    int rc = FWDIO_OK;
    if (o->rank == 0 && frames > o->p.dcd.kept) {
        unsigned char tail[4];
        uint64_t at = dcd_frame_tail(&o->p.dcd, frames - 1, tail);
        rc = fwdio_set_commit(s->traj, tail, sizeof tail, at);
    }
    if (o->rank == 0 && rc == FWDIO_OK) {
        unsigned char header[DCD_HEADER_BYTES];
        dcd_header_of(header, &o->p.dcd, frames);
        rc = fwdio_set_commit(s->traj, header, DCD_HEADER_BYTES, 0);
    }
    int end_rc = fwdio_step_end(s->traj);
    return rc != FWDIO_OK ? rc : end_rc;
}

static void report(md_output_t *o, const char *what, fwdio_file_t *file, int rc)
{
    if (o->rank == 0)
        fprintf(stderr, "mdlj: %s failed: %s\n", what,
                file && rc != FWDIO_EINVAL ? fwdio_file_error(file) : fwdio_strerror(rc));
}

static fwdio_options_t file_options(const md_output_t *o, int durable)
{
    fwdio_options_t opts;
    fwdio_options_init(&opts);
    opts.writers = o->p.writers;
    opts.durable = durable;
    if (durable && o->p.local_dir) /* checkpoints through the node-local tier */
        opts.local_dir = o->p.local_dir;
    return opts;
}

static int fw_open(md_output_t *o)
{
    struct fw_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    o->state = s;
    app_lent_pool_init(&s->bufs, o->p.rt);
    if (o->p.ckpt_base)
        ckpt_split_base(o->p.ckpt_base, s->set_dir, sizeof s->set_dir, &s->set_name);
    if (!o->p.dcd_path)
        return 0;
    /* The trajectory need not be durable: it is not what a restart relies
     * on. It keeps a previous run's frames (a restart) and grows from there. */
    fwdio_options_t opts = file_options(o, 0);
    opts.append_start = dcd_frame_offset(&o->p.dcd, o->p.dcd.kept);
    opts.pinned |= FWDIO_PIN_APPEND_START;
    fwdio_callbacks_t cbs = {.ready = traj_ready, .step = traj_step, .user = s};
    int rc = fwdio_open(o->p.rt, o->p.dcd_path, FWDIO_SIZE_GROWS, &opts, &cbs, &s->traj);
    if (rc == FWDIO_OK)
        rc = end_traj_step(o, o->p.dcd.kept); /* step 0: the header of the kept frames */
    /* Wait, once before the first step, until the writers have created the
     * file, so that a path that cannot be written stops the run now rather
     * than after hours of computing. Every rank gets the same status. */
    while (rc == FWDIO_OK && !s->traj_ready) {
        if (fwdio_poll(o->p.rt) == 0)
            nanosleep(&(struct timespec){.tv_nsec = 100 * 1000}, NULL);
    }
    if (rc == FWDIO_OK)
        rc = s->traj_status;
    if (rc != FWDIO_OK) {
        report(o, "opening the trajectory", s->traj, rc);
        return -1;
    }
    return 0;
}

/* Pack with `pack(o, arg)` straight into a free fwdio buffer, growing it
 * until the pieces fit. Returns the buffer, or NULL without memory. */
static app_lent_buf_t *pack_in_buffer(md_output_t *o, int (*pack)(md_output_t *, const void *),
                                      const void *arg)
{
    struct fw_state *s = o->state;
    app_lent_buf_t *b = app_lent_get(&s->bufs);
    for (size_t need = 0;;) {
        if (app_lent_grow(&s->bufs, b, need) != 0)
            break;
        if (b->mem) {
            pack_use(&o->pack, b->mem, b->cap);
            if (pack(o, arg) == 0)
                return b;
            if (o->pack.need == 0) /* out of memory for the extents */
                break;
        }
        need = 2 * (o->pack.need > b->cap ? o->pack.need : b->cap);
        need = need ? need : 1;
    }
    pack_own(&o->pack);
    return NULL;
}

/* Lend every extent of o->pack, packed in `b`, to `file` (fwdio_write_lent)
 * or, when `ck` is not NULL, to that checkpoint version
 * (fwdio_ckpt_write_lent); counts the calls. */
static int write_extents(md_output_t *o, fwdio_file_t *file, fwdio_ckpt_t *ck,
                         app_lent_buf_t *b, uint64_t *calls)
{
    size_t at = 0;
    int rc = FWDIO_OK;
    for (size_t e = 0; e < o->pack.next && rc == FWDIO_OK; e++) {
        const md_extent_t *x = &o->pack.ext[e];
        const void *p = o->pack.buf + at;
        rc = ck ? app_lent_write_ckpt(b, ck, p, (size_t)x->len, x->offset)
                : app_lent_write(b, file, p, (size_t)x->len, x->offset);
        if (rc == FWDIO_OK)
            (*calls)++;
        at += (size_t)x->len;
    }
    pack_own(&o->pack);
    return rc;
}

struct frame_arg {
    const md_snapshot_t *snap;
    int64_t frame;
};

struct ckpt_arg {
    const md_snapshot_t *snap;
    const unsigned char *header; /* rank 0's, else NULL */
};

static int pack_frame(md_output_t *o, const void *arg)
{
    const struct frame_arg *a = arg;
    /* rank 0's closing marker is a commit block of the frame's step */
    return dcd_pack_frame(&o->pack, &o->p.dcd, a->frame, a->snap,
                          o->rank == 0 ? DCD_WITHOUT_TAIL : DCD_ATOMS_ONLY);
}

static int pack_ckpt(md_output_t *o, const void *arg)
{
    const struct ckpt_arg *a = arg;
    return ckpt_pack(&o->pack, a->snap, a->header);
}

static void fw_frame(md_output_t *o, const md_snapshot_t *snap, int64_t frame)
{
    struct fw_state *s = o->state;
    if (o->traj_failed) {
        end_traj_step(o, frame + 1); /* in step with the other ranks; the stream has failed */
        return;
    }
    struct frame_arg arg = {snap, frame};
    app_lent_buf_t *b = pack_in_buffer(o, pack_frame, &arg);
    int rc = b ? write_extents(o, s->traj, NULL, b, &o->rep.frame_extents) : FWDIO_ENOMEM;
    /* Every rank ends the step, whatever happened here, so ranks stay in step */
    int end_rc = end_traj_step(o, frame + 1);
    if (rc == FWDIO_OK)
        rc = end_rc;
    if (rc != FWDIO_OK) {
        /* The file's final status, agreed by every rank, is counted in finish. */
        fprintf(stderr, "mdlj: rank %d: trajectory frame %" PRId64 ": %s; no more frames\n",
                o->rank, frame, fwdio_strerror(rc));
        o->traj_failed = 1;
    }
}

static int fw_ckpt_path(md_output_t *o, int64_t step, char *out, size_t cap)
{
    const struct fw_state *s = o->state;
    fwdio_ckpt_options_t co = set_options(s, NULL);
    return step >= 0 && fwdio_ckpt_path(s->set_name, (uint64_t)step, &co, out, cap) == FWDIO_OK
               ? 0
               : -1;
}

static void fw_checkpoint(md_output_t *o, const md_snapshot_t *snap, const ckpt_info_t *info,
                          const char *path)
{
    struct fw_state *s = o->state;
    size_t len = strlen(path) + 1;
    struct fw_ckpt *c = calloc(1, sizeof *c + len);
    unsigned char header[CKPT_HEADER_BYTES], commit[CKPT_COMMIT_BYTES];
    ckpt_header(header, info);
    struct ckpt_arg arg = {snap, o->rank == 0 ? header : NULL};
    app_lent_buf_t *b = c ? pack_in_buffer(o, pack_ckpt, &arg) : NULL;
    int rc = b ? FWDIO_OK : FWDIO_ENOMEM;
    /* Every rank opens the version, whatever happened here: it is collective. */
    fwdio_options_t opts = file_options(o, 1);
    fwdio_ckpt_options_t co = set_options(s, &opts);
    if (c)
        c->t_open = output_now();
    fwdio_ckpt_t *ck = NULL;
    int open_rc = fwdio_ckpt_open(o->p.rt, s->set_name, (uint64_t)info->step,
                                  ckpt_file_bytes(info->natoms), &co, &ck);
    if (rc == FWDIO_OK)
        rc = open_rc;
    if (rc == FWDIO_OK)
        rc = write_extents(o, NULL, ck, b, &o->rep.ckpt_extents);
    else if (b)
        pack_own(&o->pack);
    /* The commit record's checksum is a reduction over every rank; so is the
     * decision to commit at all. */
    int uncommitted = output_commit_record(o, snap, info, header, rc != FWDIO_OK, commit);
    output_crash_point(o, info->step);
    if (!uncommitted && o->rank == 0)
        rc = fwdio_ckpt_set_commit(ck, commit, CKPT_COMMIT_BYTES,
                                   ckpt_commit_offset(info->natoms));
    if (ck) {
        /* A rank that failed closes too, so that no rank waits for it; the
         * version then fails everywhere through its agreed status. */
        int close_rc = fwdio_ckpt_close(ck);
        if (rc == FWDIO_OK)
            rc = close_rc;
    }
    if (rc != FWDIO_OK)
        fprintf(stderr, "mdlj: rank %d: checkpoint %s: %s\n", o->rank, path, fwdio_strerror(rc));
    if (uncommitted || !ck) {
        /* A version without its commit record (agreed by every rank) is
         * freed on every rank before it is done: it never gets a manifest,
         * so it never counts among the versions kept, nor for a restart. A
         * version that did not open failed on every rank (the open agrees). */
        if (uncommitted && o->rank == 0)
            fprintf(stderr, "mdlj: checkpoint %s left without commit record: a rank could not "
                            "write its atoms\n", path);
        free(c);
        fwdio_ckpt_free(ck);
        output_checkpoint_finished(o, info->step, path, 0);
        return;
    }
    /* c is not NULL here: a rank without it could not pack (uncommitted). */
    c->ck = ck;
    c->step = info->step;
    memcpy(c->path, path, len);
    c->next = s->pending;
    s->pending = c;
}

/* Move every pending version's completion on (fwdio_ckpt_test, on every rank
 * every step; it never blocks), noting when its data completed (in the
 * node-local stores with --local-dir) and when the version did. */
static void advance(md_output_t *o)
{
    struct fw_state *s = o->state;
    for (struct fw_ckpt *c = s->pending; c; c = c->next) {
        if (c->done)
            continue;
        int d = 0;
        if (c->t_complete == 0 && fwdio_test(fwdio_ckpt_file(c->ck), &d) == FWDIO_OK && d)
            c->t_complete = output_now();
        int rc = fwdio_ckpt_test(c->ck, &d);
        if (d) {
            c->status = rc;
            c->done = 1;
            c->t_drained = output_now();
            if (c->t_complete == 0)
                c->t_complete = c->t_drained;
        }
    }
}

/* Whether the trajectory's frames up to `step` are complete (or there is no
 * trajectory, or it failed: then nothing waits for it). */
static int frames_complete(const md_output_t *o, int64_t step)
{
    const struct fw_state *s = o->state;
    const dcd_info_t *d = &o->p.dcd;
    if (!s->traj || s->traj_step_failed || step < d->first_step)
        return 1;
    int64_t need = (step - d->first_step) / d->interval + 1; /* frames at or before step */
    if (need > d->nframes)
        need = d->nframes;
    return d->kept + s->traj_steps - 1 >= need;
}

/* Hand completed checkpoints to output_checkpoint_finished, oldest first,
 * each once the trajectory reaches its step. */
static void reap(md_output_t *o)
{
    struct fw_state *s = o->state;
    for (;;) {
        struct fw_ckpt **oldest = NULL;
        for (struct fw_ckpt **pc = &s->pending; *pc; pc = &(*pc)->next)
            oldest = pc;
        if (!oldest || !(*oldest)->done || !frames_complete(o, (*oldest)->step))
            return;
        struct fw_ckpt *c = *oldest;
        *oldest = c->next;
        fwdio_file_t *file = fwdio_ckpt_file(c->ck);
        fwdio_file_stats_t st;
        if (fwdio_file_stats(file, &st) == FWDIO_OK)
            o->rep.ckpt_messages += st.messages_sent;
        /* With the tier complete is local; without, at the path. */
        o->rep.ckpt_local += c->t_complete - c->t_open;
        if (o->p.local_dir) /* else the version is done as soon as its manifest is */
            o->rep.ckpt_copy += c->t_drained - c->t_complete;
        if (c->status != FWDIO_OK)
            report(o, c->path, file, c->status);
        output_checkpoint_finished(o, c->step, c->path, c->status == FWDIO_OK);
        fwdio_ckpt_free(c->ck);
        free(c);
    }
}

static void fw_poll(md_output_t *o)
{
    fwdio_poll(o->p.rt);
    advance(o);
    reap(o);
}

static void fw_finish(md_output_t *o)
{
    struct fw_state *s = o->state;
    if (s->traj) {
        int rc = fwdio_close(s->traj);
        if (rc == FWDIO_OK)
            rc = fwdio_wait(s->traj);
        if (rc != FWDIO_OK) {
            report(o, "the trajectory", s->traj, rc);
            o->rep.failures++;
        }
        fwdio_file_stats_t st;
        if (fwdio_file_stats(s->traj, &st) == FWDIO_OK)
            o->rep.frame_messages = st.messages_sent;
        fwdio_file_free(s->traj);
        s->traj = NULL;
    }
    /* Oldest first (the list is newest first). */
    for (;;) {
        struct fw_ckpt *oldest = NULL;
        for (struct fw_ckpt *c = s->pending; c; c = c->next)
            if (!c->done)
                oldest = c;
        if (!oldest)
            break;
        if (oldest->t_complete == 0 && fwdio_wait(fwdio_ckpt_file(oldest->ck)) != FWDIO_ECONTEXT)
            oldest->t_complete = output_now();
        oldest->status = fwdio_ckpt_wait(oldest->ck);
        oldest->t_drained = output_now();
        oldest->done = 1;
    }
    reap(o);
}

static void fw_destroy(md_output_t *o)
{
    struct fw_state *s = o->state;
    if (!s)
        return;
    /* A file completes only after its lent writes are done: after finish the
     * buffers are free (else fwdio_finalize releases them). */
    app_lent_pool_free(&s->bufs);
    fwdio_file_free(s->traj);
    while (s->pending) {
        struct fw_ckpt *c = s->pending;
        s->pending = c->next;
        fwdio_ckpt_free(c->ck);
        free(c);
    }
    free(s);
    o->state = NULL;
}

const md_backend_t md_backend_fwdio = {
    .open = fw_open,
    .frame = fw_frame,
    .checkpoint = fw_checkpoint,
    .poll = fw_poll,
    .finish = fw_finish,
    .destroy = fw_destroy,
    .ckpt_path = fw_ckpt_path,
    .keeps_own = 1,
};
