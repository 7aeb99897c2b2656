/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The staging budget: bytes of copied writes a rank holds until they are sent.
 * fwdio_write reserves before it copies and waits while the budget is full
 * (backpressure); the progress thread releases as sends complete and wakes
 * the waiters.
 */
#include "write/staging.h"

int fwdioi_write_refusal_locked(const fwdio_file_t *f)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    if (f->app_closed)
        return FWDIO_ECLOSED;
    if (f->failed_known)
        return FWDIO_EFAILED;
    return FWDIO_OK;
}

int fwdioi_staging_reserve_locked(fwdio_file_t *f, uint64_t bytes, int may_wait)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    struct fwdio_runtime *o = f->owner;
    const uint64_t budget = fwdioi_rt_config(f->engine)->staging_buffer;
    for (;;) {
        int rc = fwdioi_write_refusal_locked(f);
        if (rc != FWDIO_OK)
            return rc;
        /* With nothing staged, any reservation up to the budget fits.
         * Appends held for their step's end count as staged, but only that
         * end sends them: waiting for them would never end. */
        if (o->staged == o->append_held || o->staged + bytes <= budget)
            break;
        /* Part of the budget may sit in open combined messages: send them
         * unless the messages already on their way will free enough (the
         * room waited for could be this rank's own unsent bytes). Sealed at
         * every wait under backpressure, they would shrink to the room each
         * completed send frees: one small write each. */
        if (!may_wait || o->staged_sent + (budget - o->staged) < bytes)
            o->flush_combined_locked(o);
        if (!may_wait)
            return FWDIO_EAGAIN;
        fwdioi_rt_sleep_locked(f->engine);
    }
    o->staged += bytes;
    if (o->staged > o->staged_peak)
        o->staged_peak = o->staged;
    f->staged_file += bytes;
    if (f->staged_file > f->stats.peak_staged_bytes)
        f->stats.peak_staged_bytes = f->staged_file;
    return FWDIO_OK;
}

void fwdioi_staging_release_locked(fwdio_file_t *f, uint64_t bytes)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    f->owner->staged -= bytes;
    f->staged_file -= bytes;
    fwdioi_rt_broadcast(f->engine);
}

void fwdioi_staging_sent(fwdio_file_t *f, fwdioi_msg_t *m)
{
    FWDIOI_ASSERT_PROGRESS();
    fwdioi_rt_lock(f->engine);
    f->owner->staged_sent += m->payload;
    m->sent = 1;
    fwdioi_rt_unlock(f->engine);
}

void fwdioi_staging_release_msg(fwdio_file_t *f, const fwdioi_msg_t *m)
{
    fwdioi_rt_lock(f->engine);
    if (m->sent)
        f->owner->staged_sent -= m->payload;
    fwdioi_staging_release_locked(f, m->payload);
    fwdioi_rt_unlock(f->engine);
}

void fwdioi_staging_release(fwdio_file_t *f, uint64_t bytes)
{
    fwdioi_rt_lock(f->engine);
    fwdioi_staging_release_locked(f, bytes);
    fwdioi_rt_unlock(f->engine);
}
