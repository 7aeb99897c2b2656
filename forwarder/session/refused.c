/* SPDX-License-Identifier: BSD-3-Clause */
/* A refused fwdio_open's place in the open order (refused.h). */
#include "session/refused.h"

#include "log.h"
#include "agreement/open_check.h"
#include "session/session.h"
#include "stream/appends.h"
#include "write/writer.h"

#include <stdlib.h>

/* The stand-in's names: it owns no memory but itself (file_life.c frees
 * nothing else of it). Its path key is empty, which no real file's is, so
 * it never waits for, nor holds up, a file of a real path. */
static char refused_path[] = "(a file whose fwdio_open was refused on this rank)";
static char refused_key[] = "";

int fwdioi_refused_spare_make(struct fwdio_runtime *rt)
{
    rt->refused_spare = calloc(1, sizeof *rt->refused_spare);
    return rt->refused_spare ? 0 : -1;
}

void fwdioi_refused_spare_free(struct fwdio_runtime *rt)
{
    free(rt->refused_spare);
    rt->refused_spare = NULL;
}

int fwdioi_refused_join(struct fwdio_runtime *rt, int status)
{
    fwdioi_rt_lock(rt->engine);
    fwdio_file_t *f = rt->refused_spare; /* zeroed */
    rt->refused_spare = NULL;
    fwdioi_rt_unlock(rt->engine);
    if (!f)
        f = calloc(1, sizeof *f);
    const int rank = fwdioi_rt_rank(rt->engine);
    if (!f) {
        fwdioi_report("rank %d: fwdio_open refused a file (%s) and has no memory left to "
                      "tell the other ranks: their file waits for this rank",
                      rank, fwdio_strerror(status));
        return -1;
    }
    f->refused = 1;
    f->owner = rt;
    f->engine = rt->engine;
    f->rank = rank;
    f->path = f->write_path = refused_path;
    f->path_key = refused_key;
    f->path_hash = fwdioi_hash(FWDIOI_HASH_INIT, refused_key, 0);
    f->role = &fwdioi_writer_role; /* writing nothing: no writer of its own */
    f->my_writer = -1;
    f->step_fail_from = UINT64_MAX;
    f->step_drain_fail_from = UINT64_MAX;
    fwdioi_append_list_init(&f->appends);
    f->t_open = fwdioi_now();
    f->known_error = FWDIOI_ERRINFO_OK;
    f->open_refusal = (fwdioi_errinfo_t){status, rank, 0, 0, FWDIOI_REASON_REFUSED, -1, 0};
    fwdioi_session_init(f);
    /* Closed and released by the application already, as it were: the
     * check fails, the session ends at once (session.c,
     * start_close_agreement) and complete releases it (run_complete). */
    f->app_closed = f->app_freed = 1;
    fwdioi_rt_lock(rt->engine);
    const uint64_t seq = f->seq = rt->next_seq++; /* f may be gone once unlocked */
    LIST_INSERT_HEAD(&rt->live, f, live_link);
    fwdioi_rt_submit(rt->engine, &f->open_task);
    fwdioi_rt_submit(rt->engine, &f->close_task);
    fwdioi_rt_unlock(rt->engine);
    /* a spare again for the next refusal (one made for want of memory
     * likely finds none to allocate) */
    fwdio_file_t *spare = calloc(1, sizeof *spare);
    fwdioi_rt_lock(rt->engine);
    if (!rt->refused_spare) {
        rt->refused_spare = spare;
        spare = NULL;
    }
    fwdioi_rt_unlock(rt->engine);
    free(spare);
    fwdioi_log(FWDIOI_LOG_INFO, "rank %d: file %llu refused here (%s): it takes its place in "
               "the open order", rank, (unsigned long long)seq, fwdio_strerror(status));
    return 0;
}
