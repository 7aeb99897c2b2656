/* SPDX-License-Identifier: BSD-3-Clause */
/* The public API: argument checks, the application side of each call, and the
 * hand-over to the progress thread. */
#include "agreement/abort.h"
#include "stream/appends.h"
#include "write/combine.h"
#include "config.h"
#include "plan/describe.h"
#include "storage/fault.h"
#include "state.h"
#include "layer_api.h"
#include "session/dormant.h"
#include "session/file_life.h"
#include "session/refused.h"
#include "local/local_keep.h"
#include "local/local_life.h"
#include "log.h"
#include "plan/placement.h"
#include "read/reader.h"
#include "read/requester.h"
#include "write/route.h"
#include "write/message.h"
#include "session/session.h"
#include "settings/settings.h"
#include "stream/stream.h"
#include "write/staging.h"
#include "write/writer.h"
#include "trace.h"
#include "node/user_buffers.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Close `f` on this rank (runtime lock held): its open combined messages go
 * first, so the close task finds them sent. Returns 0, or -1 if it was
 * closed already. */
static int close_locked(fwdio_file_t *f, int discard)
{
    FWDIOI_ASSERT_LOCKED(f->engine);
    if (f->app_closed)
        return -1;
    while (f->combine_copies > 0) /* bytes of a write being copied in */
        fwdioi_rt_sleep_locked(f->engine);
    if (f->app_closed) /* closed by another thread meanwhile */
        return -1;
    if (!discard) /* a close is a use: a dormant file's session starts */
        fwdioi_dormant_use_locked(f);
    fwdioi_combine_flush_file_locked(f);
    f->app_closed = 1;
    uintptr_t open_now = (uintptr_t)fwdioi_u64map_get(&f->owner->open_paths, f->path_hash);
    if (open_now > 1) /* replaces the count: cannot fail */
        fwdioi_u64map_put(&f->owner->open_paths, f->path_hash, (void *)(open_now - 1));
    else
        fwdioi_u64map_remove(&f->owner->open_paths, f->path_hash);
    fwdioi_rt_broadcast(f->engine); /* writes waiting for staging room give up */
    fwdioi_rt_submit(f->engine, &f->close_task);
    return 0;
}

/* Whether [offset, offset + len) lies within the file (no overflow). */
static int in_file(const fwdio_file_t *f, size_t len, uint64_t offset)
{
    return offset <= f->size && len <= f->size - offset;
}

/* ---- runtime ---- */

/* The node-shared area and the registry of fwdio_alloc buffers (collective:
 * every rank of a node agrees whether its area is on). */
static int start_area(fwdio_runtime_t *rt)
{
    const fwdio_config_t *cfg = fwdioi_rt_config(rt->engine);
    uint64_t bytes = cfg->shared_buffer > 1 ? cfg->shared_buffer : 0;
    uint64_t node = cfg->node_buffer > 1 ? cfg->node_buffer : 0;
    int rc = fwdioi_area_setup(&rt->area, fwdioi_rt_comm(rt->engine), bytes, node,
                               cfg->node_buffer_idle);
    if (rc == FWDIO_OK && fwdioi_buffers_create(rt) != 0)
        rc = FWDIO_ENOMEM;
    if (rc == FWDIO_OK && rt->area.enabled &&
        fwdioi_rt_watch_fd(rt->engine, rt->area.bell_fd) != 0)
        rc = FWDIO_ESYSTEM; /* without its doorbell a writer would sleep through its data */
    /* Who may send a writer data over MPI without announcing it: any rank of
     * another node, and with the area off the ranks of this one too. */
    rt->mpi_senders = fwdioi_rt_size(rt->engine) > 1 && (!rt->area.enabled || rt->topo.nnodes > 1);
    if (rc == FWDIO_OK)
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: node-shared area %s%s%s", fwdioi_rt_rank(rt->engine),
                   rt->area.enabled ? "on" : "off", rt->area.enabled ? "" : ": ",
                   rt->area.why_off);
    return rc;
}

/* MPI runs below MPI_THREAD_MULTIPLE: said once per process, by the lowest
 * rank of the communicator, with what to do about it. */
static void say_thread_level(MPI_Comm comm, int provided)
{
    static atomic_int said;
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0 || atomic_exchange(&said, 1))
        return;
    const char *name = provided == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
                       : provided == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                       : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                                           : "a level below MPI_THREAD_MULTIPLE";
    fwdioi_report("fwdio_init: MPI runs at %s, and fwdio needs MPI_THREAD_MULTIPLE (its progress "
                  "thread calls MPI beside the application): initialise MPI with "
                  "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, &provided); on Cray MPICH also set "
                  "MPICH_MAX_THREAD_SAFETY=multiple; an Open MPI must be built with thread "
                  "support (ompi_info | grep -i thread). fwdio_init returns FWDIO_ETHREAD.",
                  name);
}

int fwdio_init(MPI_Comm comm, const fwdio_config_t *cfg, fwdio_runtime_t **out)
{
    if (!out || comm == MPI_COMM_NULL)
        return FWDIO_EINVAL;
    int initialized = 0, finalized = 0, provided = 0, inter = 0;
    if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized ||
        MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) {
        fwdioi_report("fwdio_init: MPI is %s", initialized ? "finalized" : "not initialized");
        return FWDIO_EINVAL;
    }
    /* The error handler of a bad handle is MPI_COMM_WORLD's: ask it to
     * return for these two queries, so a wrong communicator is an error. */
    MPI_Errhandler world_handler;
    if (MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_handler) != MPI_SUCCESS ||
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return FWDIO_EMPI;
    int rc_inter = MPI_Comm_test_inter(comm, &inter);
    int rc_back = MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_handler);
    fwdioi_log_mpi_failure(MPI_Errhandler_free(&world_handler), "MPI_Errhandler_free");
    if (rc_back != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (rc_inter != MPI_SUCCESS || inter) {
        fwdioi_report("fwdio_init: %s", rc_inter != MPI_SUCCESS
                                            ? "the communicator is not a valid communicator"
                                            : "the communicator is an intercommunicator; fwdio "
                                              "needs an intracommunicator");
        return FWDIO_EINVAL;
    }
    if (MPI_Query_thread(&provided) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (provided < MPI_THREAD_MULTIPLE) {
        say_thread_level(comm, provided);
        return FWDIO_ETHREAD;
    }
    int world_rank = 0;
    if (MPI_Comm_rank(comm, &world_rank) != MPI_SUCCESS)
        return FWDIO_EMPI;
    /* A bad argument is refused here, before any collective. */
    int rc = fwdioi_settings_check_args(cfg, world_rank);
    if (rc != FWDIO_OK)
        return rc;
    fwdio_runtime_t *rt = calloc(1, sizeof *rt);
    if (!rt)
        return FWDIO_ENOMEM;
    rt->session_ops = &fwdioi_session_ops;
    rt->flush_combined_locked = fwdioi_combine_flush_all_locked;
    rt->broken = FWDIOI_ERRINFO_OK;
    fwdioi_placement_cache_init(&rt->placed);
    LIST_INIT(&rt->live);
    LIST_INIT(&rt->active);
    LIST_INIT(&rt->polled);
    LIST_INIT(&rt->draining);
    TAILQ_INIT(&rt->local_waiting);
    TAILQ_INIT(&rt->combining);
    STAILQ_INIT(&rt->dups);
    rt->dup_next = rt->spare = MPI_COMM_NULL;
    rt->dup_slot = rt->spare_slot = -1;
    fwdioi_comm_pool_init(&rt->comm_pool);
    rt->app_comm = MPI_COMM_NULL;
    STAILQ_INIT(&rt->area_blocked);
    fwdioi_trace_start(world_rank); /* before the runtime's threads start */
    /* The settings from the environment and the config file (which rank 0
     * reads and broadcasts), agreed on: a bad one fails init on every rank,
     * and only the lowest rank that refused it says why (fwdio.h,
     * "Refusals"). */
    fwdio_config_t conf;
    if (cfg)
        conf = *cfg;
    else
        fwdio_config_init(&conf);
    fwdioi_report_hold();
    rc = fwdioi_settings_load(&rt->settings, comm);
    if (rc == FWDIO_OK)
        rc = fwdioi_fault_configure(getenv("FWDIO_FAULT"), world_rank);
    if (rc == FWDIO_OK)
        rc = fwdioi_settings_apply_config(&rt->settings, &conf, world_rank);
    if (rc == FWDIO_OK && fwdioi_refused_spare_make(rt) != 0)
        rc = FWDIO_ENOMEM;
    /* The collectives that layers above fwdio (checkpoint sets) make from
     * application threads go on a duplicate of their own: never on the
     * caller's communicator, whose collectives and error handler are the
     * application's, nor on the runtime's, the progress thread's. Made on
     * every rank (a collective), whatever its settings said, and agreed
     * with them, so that every rank fails alike. */
    int dup_rc = MPI_Comm_dup(comm, &rt->app_comm);
    if (dup_rc != MPI_SUCCESS)
        rt->app_comm = MPI_COMM_NULL;
    else
        dup_rc = MPI_Comm_set_errhandler(rt->app_comm, MPI_ERRORS_RETURN);
    if (rc == FWDIO_OK && dup_rc != MPI_SUCCESS)
        rc = FWDIO_EMPI;
    rc = fwdioi_settings_agree(&rt->settings, comm, rc);
    if (rc != FWDIO_OK)
        goto fail;
    /* Where the ranks are, before the configuration is resolved: the
     * default staging budget is a share of the node's, so it depends on
     * the ranks of the node (and combine_size and shared_buffer on it).
     * The same ranks as the runtime's communicator, a duplicate of comm. */
    if (fwdioi_topology_discover(comm, &rt->topo) != 0) {
        rc = FWDIO_EMPI;
        goto fail;
    }
    const int me = world_rank;
    fwdioi_client_t client = {fwdioi_session_poll, rt};
    rc = fwdioi_rt_create(comm, &conf, fwdioi_topology_node_ranks(&rt->topo, me), &client,
                          &rt->engine);
    if (rc != FWDIO_OK)
        goto fail;
    fwdioi_wbudget_init(&rt->wbuf, fwdioi_rt_config(rt->engine)->writer_buffer);
    if (world_rank == 0)
        fwdioi_config_report_clamps(&conf, fwdioi_rt_config(rt->engine));
    if (world_rank == 0 && fwdioi_log_level() >= FWDIOI_LOG_WARN)
        fwdioi_settings_print_config(fwdioi_rt_config(rt->engine), stderr);
    /* Spinning while the application waits, where the node has a CPU for
     * every rank (fwdio_config_t.poll_spin_us 0). */
    unsigned spin = fwdioi_rt_choose_spin(rt->engine, fwdioi_topology_node_ranks(&rt->topo, me),
                                          fwdioi_topology_node_cpus(&rt->topo, me));
    if (fwdioi_rt_config(rt->engine)->poll_spin_us == 0)
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: poll_spin_us automatic: %u (%d ranks on %d CPUs)", me,
                   spin, fwdioi_topology_node_ranks(&rt->topo, me), fwdioi_topology_node_cpus(&rt->topo, me));
    rc = start_area(rt);
    if (rc != FWDIO_OK)
        goto fail_rt;
    *out = rt;
    return FWDIO_OK;
fail_rt:
    fwdioi_rt_destroy(rt->engine);
    fwdioi_buffers_destroy(rt);
    fwdioi_area_teardown(&rt->area);
    free(rt->area_waiting);
    fwdioi_u64map_free(&rt->active_by_seq);
    fwdioi_u64map_free(&rt->active_by_path);
    fwdioi_u64map_free(&rt->open_paths);
fail:
    if (rt->app_comm != MPI_COMM_NULL)
        fwdioi_log_mpi_failure(MPI_Comm_free(&rt->app_comm), "MPI_Comm_free (application's)");
    fwdioi_trace_stop(0);
    fwdioi_placement_cache_free(&rt->placed);
    fwdioi_topology_free(&rt->topo);
    fwdioi_settings_free(&rt->settings);
    fwdioi_refused_spare_free(rt);
    free(rt);
    return rc;
}

/* Seconds fwdio_finalize waits for drains before it says so (fwdio.h). */
#define FWDIOI_FINALIZE_SAY_S 10

static int all_files_completed(void *arg)
{
    fwdio_runtime_t *rt = arg;
    for (fwdio_file_t *f = LIST_FIRST(&rt->live); f; f = LIST_NEXT(f, live_link))
        if (!f->complete_delivered || !f->drained_delivered) /* drains too */
            return 0;
    return 1;
}

/* A communicator the pool kept for later files (fwdio_finalize). */
static void free_kept_comm(MPI_Comm *comm)
{
    fwdioi_log_mpi_failure(MPI_Comm_free(comm), "MPI_Comm_free (kept)");
}

static int no_dup_in_flight(void *arg)
{
    const fwdio_runtime_t *rt = arg;
    return !rt->dup_busy;
}

int fwdio_finalize(fwdio_runtime_t *rt)
{
    if (!rt)
        return FWDIO_EINVAL;
    if (fwdioi_rt_on_progress_thread() || fwdioi_rt_in_callback())
        return FWDIO_ECONTEXT;
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_lock(rt->engine);
    for (fwdio_file_t *f = LIST_FIRST(&rt->live); f; f = LIST_NEXT(f, live_link)) {
        close_locked(f, 0);
    }
    int drains = 0;
    for (fwdio_file_t *f = LIST_FIRST(&rt->live); f; f = LIST_NEXT(f, live_link))
        drains += f->drain_pending && !f->drained_delivered;
    fwdioi_rt_unlock(rt->engine);
    if (drains > 0) { /* the node-local tier: the targets get their bytes first */
        fwdioi_log(FWDIOI_LOG_INFO, "rank %d: fwdio_finalize waits for %d drain(s) to the target",
                   fwdioi_rt_rank(rt->engine), drains);
        if (!fwdioi_rt_wait_for(rt->engine, all_files_completed, rt, FWDIOI_FINALIZE_SAY_S))
            fwdioi_report("rank %d: fwdio_finalize has waited %d s for %d drain(s) of the "
                          "node-local tier to their target paths, and waits until they end",
                          fwdioi_rt_rank(rt->engine), FWDIOI_FINALIZE_SAY_S, drains);
    }
    fwdioi_rt_wait(rt->engine, all_files_completed, rt);
    /* The communicator made ahead for a next file: every rank started it at
     * the same open, so it completes (unless an MPI failure broke the
     * runtime, which gives it up). */
    fwdioi_rt_wait(rt->engine, no_dup_in_flight, rt);
    fwdioi_rt_lock(rt->engine);
    while (!LIST_EMPTY(&rt->live)) {
        fwdio_file_t *left = LIST_FIRST(&rt->live);
        LIST_REMOVE(left, live_link);
        fwdioi_file_release(left);
    }
    fwdioi_rt_unlock(rt->engine);
    /* Every rank's files are complete, so no message of ours is in flight; the
     * barrier makes finalize collective as documented. Not after an MPI
     * failure put the runtime's communicator out of step: it could match a
     * collective another rank gave up on. */
    fwdioi_rt_lock(rt->engine);
    int broken = rt->broken_known;
    fwdioi_rt_unlock(rt->engine);
    int rc = FWDIO_OK;
    if (!broken && MPI_Barrier(fwdioi_rt_comm(rt->engine)) != MPI_SUCCESS)
        rc = FWDIO_EMPI; /* everything is released all the same */
    fwdioi_rt_destroy(rt->engine);
    if (rt->spare != MPI_COMM_NULL) /* the progress thread is gone: ours now */
        fwdioi_log_mpi_failure(MPI_Comm_free(&rt->spare), "MPI_Comm_free (spare)");
    fwdioi_comm_pool_drain(&rt->comm_pool, free_kept_comm);
    fwdioi_log_mpi_failure(MPI_Comm_free(&rt->app_comm), "MPI_Comm_free (application's)");
    /* every rank of the node passed the barrier: nobody touches the area */
    fwdioi_buffers_destroy(rt);
    fwdioi_area_teardown(&rt->area);
    free(rt->area_waiting);
    fwdioi_u64map_free(&rt->active_by_seq);
    fwdioi_u64map_free(&rt->active_by_path);
    fwdioi_u64map_free(&rt->open_paths);
    fwdioi_abort_free(rt);
    fwdioi_dormant_free(rt);
    fwdioi_trace_end_file(t_trace, "finalize", FWDIOI_TRACE_NONE);
    fwdioi_trace_stop(1); /* the threads are joined: every buffer is still */
    fwdioi_local_kept_free(rt); /* the kept copies stay on disk for a restart */
    fwdioi_placement_cache_free(&rt->placed);
    fwdioi_topology_free(&rt->topo);
    fwdioi_settings_free(&rt->settings);
    fwdioi_refused_spare_free(rt);
    free(rt);
    return rc;
}

int fwdio_poll(fwdio_runtime_t *rt)
{
    if (!rt)
        return FWDIO_EINVAL;
    if (fwdioi_rt_on_progress_thread())
        return FWDIO_ECONTEXT;
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_lock(rt->engine);
    fwdioi_combine_flush_all_locked(rt);
    fwdioi_rt_unlock(rt->engine);
    int n = fwdioi_rt_run_calls(rt->engine);
    fwdioi_trace_end(t_trace, "poll", FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE, FWDIOI_TRACE_NONE,
                     FWDIOI_TRACE_NONE);
    return n;
}

/* ---- files ---- */

/* open_file's checks and the new file; an error leaves no file (and takes no
 * place in the open order: open_file does that). */
static int open_checked(fwdio_runtime_t *rt, const char *path, uint64_t size,
                        const fwdio_options_t *opts, const fwdio_callbacks_t *cbs, int reading,
                        int dormant, fwdio_file_t **out)
{
    if (!path || !*path || !out)
        return FWDIO_EINVAL;
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    fwdio_options_t given, resolved;
    if (opts)
        given = *opts;
    else
        memset(&given, 0, sizeof given);
    int *env_list = NULL; /* a writer list from the environment or file */
    /* Refusals name where each value came from; rank 0 alone reports those
     * every rank makes alike (fwdio.h, "Refusals"). */
    fwdioi_settings_origins_t why;
    fwdioi_settings_origins_init(&why, &rt->settings, fwdioi_rt_rank(rt->engine), 1);
    int rc = fwdioi_settings_apply_options(&rt->settings, &given, &env_list, &why);
    if (rc == FWDIO_OK)
        rc = fwdioi_options_resolve(&given, fwdioi_rt_size(rt->engine), rt->topo.nnodes, &resolved,
                                    &why.base);
    if (rc == FWDIO_OK)
        rc = fwdioi_settings_check_callbacks(cbs);
    const int stream = !reading && size == FWDIO_SIZE_GROWS;
    if (reading) { /* options of writing only */
        resolved.atomic_replace = 0;
        resolved.durable = 0;
        resolved.rewrites = 0;
        resolved.overlaps = 0;
    }
    if (rc == FWDIO_OK && stream) {
        if (resolved.atomic_replace)
            rc = fwdioi_refuse(&why.base, "fwdio_open of %s: atomic_replace does not apply to a "
                                          "stream (FWDIO_SIZE_GROWS), which is read as it grows",
                               path);
        /* The node-local tier takes a stream only when the code or a hint
         * asks: its bytes reach the path once drained after the close,
         * while a stream is usually read as it grows, so FWDIO_LOCAL_DIR or
         * FWDIO_CONFIG, meant for checkpoints, leave streams as they are. */
        if (resolved.local_dir && *resolved.local_dir &&
            !fwdioi_settings_from_code(&why, "local_dir"))
            resolved.local_dir = NULL;
        if (rc == FWDIO_OK && resolved.local_dir && *resolved.local_dir &&
            resolved.local_copies > 1)
            rc = fwdioi_refuse(&why.base, "fwdio_open of %s: local_copies 2 does not apply to a "
                                          "stream (FWDIO_SIZE_GROWS) written through the "
                                          "node-local tier: its partner copies are not made; "
                                          "set local_copies 1 for it",
                               path);
        if (rc == FWDIO_OK && resolved.must_exist && resolved.local_dir && *resolved.local_dir)
            rc = fwdioi_refuse(&why.base, "fwdio_open of %s: must_exist does not apply to a "
                                          "stream of the node-local tier (local_dir), whose "
                                          "writers make their local files",
                               path);
        /* The block layout cuts the final size into one run per writer; a
         * stream has none, so block means cyclic. */
        if (resolved.layout == FWDIO_LAYOUT_BLOCK)
            resolved.layout = FWDIO_LAYOUT_CYCLIC;
        size = FWDIO_STREAM_MAX_SIZE - FWDIO_STREAM_MAX_SIZE % resolved.stripe_size;
        if (rc == FWDIO_OK && resolved.append_start > size)
            rc = fwdioi_refuse(&why.base, "fwdio_open of %s: append_start %llu is past the "
                                          "largest stream (%llu bytes)",
                               path, (unsigned long long)resolved.append_start,
                               (unsigned long long)size);
    } else {
        resolved.append_start = 0; /* a stream's options */
        resolved.keep_contents = 0;
        resolved.offsets_only = 0;
        resolved.must_exist = 0;
        if (rc == FWDIO_OK && resolved.rewrites)
            rc = fwdioi_refuse(&why.base, "fwdio_open of %s: rewrites applies to streams "
                                          "(FWDIO_SIZE_GROWS) only: a file with a size takes "
                                          "each byte once",
                               path);
    }
    if (rc == FWDIO_OK && fwdioi_rt_rank(rt->engine) == 0)
        fwdioi_options_report_clamps(&given, &resolved, &why.base);
    if (rc == FWDIO_OK && !reading && fwdioi_rt_rank(rt->engine) == 0 &&
        fwdioi_log_level() >= FWDIOI_LOG_WARN) {
        /* A stream's plan covers its largest size, with the layout it uses. */
        fwdio_options_t shown = given;
        if (stream)
            shown.layout = resolved.layout;
        fprintf(stderr, "fwdio: plan of %s%s:\n", path,
                stream ? " (a stream: the plan of its largest size; it grows step by step)" : "");
        fwdioi_plan_print(&rt->topo, size, &shown, 0, stderr);
    }
    /* Offsets are off_t, and the stripe arithmetic rounds the size up to a
     * whole stripe: both must fit. */
    if (rc == FWDIO_OK && (size > (uint64_t)INT64_MAX ||
                           (uint64_t)INT64_MAX - size < resolved.stripe_size)) {
        fwdioi_report("fwdio_open of %s: size %llu is larger than a file can be", path,
                      (unsigned long long)size);
        rc = FWDIO_ERANGE;
    }
    if (rc != FWDIO_OK) {
        free(env_list);
        return rc;
    }
    fwdio_file_t *f = calloc(1, sizeof *f);
    if (!f) {
        free(env_list);
        return FWDIO_ENOMEM;
    }
    int nwriters = 0;
    f->writer_ranks = malloc((size_t)resolved.writers * sizeof *f->writer_ranks);
    if (!f->writer_ranks) {
        free(env_list);
        free(f);
        return FWDIO_ENOMEM;
    }
    rc = fwdioi_place_writers_cached(&rt->placed, &rt->topo, &resolved, f->writer_ranks,
                                     &nwriters);
    free(env_list);
    if (rc != FWDIO_OK || nwriters < 1) {
        char from[FWDIOI_ORIGIN_LEN];
        if (rc != FWDIO_ENOMEM)
            fwdioi_refuse(&why.base, "%s: the %d writers cannot be placed (placement %d%s): %s",
                          path, resolved.writers, (int)resolved.placement,
                          fwdioi_origin(&why.base, "placement", from, sizeof from),
                          rc != FWDIO_OK ? fwdio_strerror(rc) : "none found");
        fwdioi_file_release(f);
        return rc != FWDIO_OK ? rc : FWDIO_EINVAL;
    }
    resolved.writer_list = NULL; /* the caller's list is not kept */
    resolved.writers = nwriters;
    f->owner = rt;
    f->engine = rt->engine;
    f->size = size;
    f->stream = stream;
    f->reading = reading;
    f->role = reading ? &fwdioi_reader_role : &fwdioi_writer_role;
    f->step_fail_from = UINT64_MAX;
    f->step_drain_fail_from = UINT64_MAX;
    fwdioi_append_list_init(&f->appends);
    f->opts = resolved;
    if (cbs)
        f->cbs = *cbs;
    f->rank = fwdioi_rt_rank(rt->engine);
    fwdioi_plan_init(&f->plan, size, &resolved, fwdioi_rt_size(rt->engine), f->writer_ranks,
                     nwriters);
    f->my_writer = fwdioi_plan_writer_of_rank(&f->plan, f->rank);
    f->path = strdup(path);
    f->write_path = resolved.atomic_replace ? fwdioi_temporary_path(path) : strdup(path);
    f->path_key = fwdioi_path_key(path);
    size_t nsums = (size_t)f->plan.nwriters + FWDIOI_CLOSE_EXTRA;
    f->s.sent_bytes = calloc(nsums, sizeof *f->s.sent_bytes);
    f->s.expected_bytes = calloc(nsums, sizeof *f->s.expected_bytes);
    f->writer_bytes_agreed = calloc((size_t)f->plan.nwriters, sizeof *f->writer_bytes_agreed);
    f->combine = calloc((size_t)f->plan.nwriters, sizeof *f->combine);
    if (!f->path || !f->write_path || !f->path_key || !f->s.sent_bytes || !f->s.expected_bytes ||
        !f->writer_bytes_agreed || !f->combine ||
        (stream && fwdioi_stream_create(f, resolved.append_start) != 0)) {
        fwdioi_file_release(f);
        return FWDIO_ENOMEM;
    }
    /* the node-local tier (local_tier.h): files written, streams when asked
     * (above), and reads, which may restart from the local copies
     * (local_restart.h) */
    if (resolved.local_dir && *resolved.local_dir) {
        rc = fwdioi_local_create(f, resolved.local_dir, resolved.drain_bandwidth,
                                 resolved.local_capacity, resolved.local_copies, &why.base);
        if (rc != FWDIO_OK) {
            fwdioi_file_release(f);
            return rc;
        }
    }
    f->opts.local_dir = NULL; /* not kept: the tier copied what it needs */
    f->t_open = t0;
    f->known_error = f->open_refusal = FWDIOI_ERRINFO_OK;
    fwdioi_file_fill_check(f);
    fwdioi_session_init(f);
    /* dormant: a stream of the layer's, outside the node-local tier */
    fwdioi_dormant_init(f, dormant && stream && !f->local);
    if (!reading && f->my_writer >= 0 && fwdioi_writer_create(f) != 0) {
        fwdioi_file_release(f);
        return FWDIO_ENOMEM;
    }
    if (reading) {
        if (fwdioi_requester_create(f) != 0) {
            fwdioi_file_release(f);
            return FWDIO_ENOMEM;
        }
        /* what the open agreement's largest other_value loses to: minus the
         * readers' sizes (session.c) */
        f->s.outcome.open_local.other_value = INT64_MIN;
    }

    fwdioi_rt_lock(rt->engine);
    /* An earlier file of the path still open here: the check fails the new
     * one on every rank (its writes could never be ordered after the
     * earlier file's). Closed but in flight: the new one waits for it. The
     * files open here are counted per hash of their path, so an open walks
     * the live files only when one of them may have its path (a walk at
     * every open made n files in flight cost O(n^2) under the lock). */
    f->path_hash = fwdioi_hash(FWDIOI_HASH_INIT, f->path_key, strlen(f->path_key));
    uintptr_t open_now = (uintptr_t)fwdioi_u64map_get(&rt->open_paths, f->path_hash);
    if (fwdioi_u64map_put(&rt->open_paths, f->path_hash, (void *)(open_now + 1)) != 0) {
        fwdioi_rt_unlock(rt->engine);
        fwdioi_file_release(f);
        return FWDIO_ENOMEM;
    }
    for (fwdio_file_t *g = open_now ? LIST_FIRST(&rt->live) : NULL; g; g = LIST_NEXT(g, live_link))
        if (!g->app_closed && !strcmp(g->path_key, f->path_key))
            fwdioi_errinfo_set_call(&f->open_refusal, FWDIO_EINVAL, f->rank, 0, 0,
                                    FWDIOI_REASON_PATH_OPEN);
    f->seq = rt->next_seq++;
    LIST_INSERT_HEAD(&rt->live, f, live_link);
    fwdioi_rt_submit(rt->engine, &f->open_task);
    f->stats.time_blocked = fwdioi_now() - t0;
    fwdioi_rt_unlock(rt->engine);
    fwdioi_trace_end_text(t_trace, reading ? "open_read" : "open", (int64_t)f->seq, (int64_t)size,
                          path);
    fwdioi_log(FWDIOI_LOG_INFO,
               "rank %d: open %s %s, %llu bytes, %d %s(s), stripe %llu, unit %llu", f->rank, path,
               reading ? "for reading" : "for writing", (unsigned long long)size,
               f->plan.nwriters, reading ? "reader" : "writer",
               (unsigned long long)resolved.stripe_size, (unsigned long long)resolved.write_size);
    *out = f;
    return FWDIO_OK;
}

/* fwdio_open, and with `reading` fwdio_open_read (size 0: the readers find it).
 * A file refused here after the runtime could take it still takes its place
 * in the open order (fwdio.h, "Refusals"; session/refused.h), so that the
 * other ranks' file fails with this rank's refusal instead of waiting for it. */
static int open_file(fwdio_runtime_t *rt, const char *path, uint64_t size,
                     const fwdio_options_t *opts, const fwdio_callbacks_t *cbs, int reading,
                     int dormant, fwdio_file_t **out)
{
    if (!rt)
        return FWDIO_EINVAL;
    if (fwdioi_rt_on_progress_thread())
        return FWDIO_ECONTEXT; /* a call out of order: no place to take */
    int finalized = 0;
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
        return FWDIO_EINVAL;
    int rc = open_checked(rt, path, size, opts, cbs, reading, dormant, out);
    if (rc != FWDIO_OK)
        fwdioi_refused_join(rt, rc);
    return rc;
}

int fwdio_open(fwdio_runtime_t *rt, const char *path, uint64_t size, const fwdio_options_t *opts,
               const fwdio_callbacks_t *cbs, fwdio_file_t **out)
{
    return open_file(rt, path, size, opts, cbs, 0, 0, out);
}

int fwdioi_open_dormant(fwdio_runtime_t *rt, const char *path, const fwdio_options_t *opts,
                        const fwdio_callbacks_t *cbs, fwdio_file_t **out)
{
    return open_file(rt, path, FWDIO_SIZE_GROWS, opts, cbs, 0, 1, out);
}

int fwdio_open_read(fwdio_runtime_t *rt, const char *path, const fwdio_options_t *opts,
                    const fwdio_callbacks_t *cbs, fwdio_file_t **out)
{
    return open_file(rt, path, 0, opts, cbs, 1, 0, out);
}

int fwdio_read(fwdio_file_t *f, void *buf, size_t len, uint64_t offset, fwdio_read_cb_t done,
               void *arg)
{
    if (!f || (!buf && len > 0) || !f->reading)
        return FWDIO_EINVAL;
    uint64_t t_trace = fwdioi_trace_begin();
    double t0 = fwdioi_now();
    fwdioi_rt_lock(f->engine);
    int rc = f->app_closed ? FWDIO_ECLOSED : f->failed_known ? FWDIO_EFAILED : FWDIO_OK;
    if (rc == FWDIO_OK && f->size_known && !in_file(f, len, offset))
        rc = FWDIO_ERANGE;
    if (rc == FWDIO_OK) /* under the lock: it reaches the progress thread before the close */
        rc = fwdioi_requester_submit(f, buf, len, offset, done, arg);
    if (rc == FWDIO_OK) {
        f->stats.bytes_read += len;
        f->stats.read_calls++;
    }
    f->stats.time_blocked += fwdioi_now() - t0;
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end(t_trace, "read", (int64_t)f->seq, (int64_t)len, (int64_t)offset,
                     FWDIOI_TRACE_NONE);
    return rc;
}

int fwdio_file_size(const fwdio_file_t *f, uint64_t *size)
{
    if (!f || !size || f->stream)
        return FWDIO_EINVAL;
    if (!f->reading) {
        *size = f->size;
        return FWDIO_OK;
    }
    fwdioi_rt_lock(f->engine);
    int rc = f->size_known ? FWDIO_OK
             : f->failed_known ? (int)f->known_error.status
                               : FWDIO_EAGAIN;
    if (rc == FWDIO_OK)
        *size = f->size;
    fwdioi_rt_unlock(f->engine);
    return rc;
}


/* Queue a write's messages unless the file was closed or failed meanwhile:
 * another thread may have closed it while we routed, and a message queued
 * after the close task would never be counted. `copied`: the bytes were
 * copied into the messages (fwdio_write), not lent. */
static int submit_write(fwdio_file_t *f, fwdioi_task_list_t *msgs, uint64_t len, int copied)
{
    fwdioi_rt_lock(f->engine);
    int rc = fwdioi_write_refusal_locked(f);
    if (rc == FWDIO_OK) {
        fwdioi_rt_submit_list(f->engine, msgs);
        f->stats.bytes_written += len;
        if (copied)
            f->stats.bytes_copied += len;
    }
    fwdioi_rt_unlock(f->engine);
    return rc;
}

/* Copy one chunk (at most the staging budget) into messages and queue them. */
static int write_chunk(fwdio_file_t *f, const uint8_t *buf, uint64_t len, uint64_t offset,
                       int may_wait)
{
    fwdioi_rt_lock(f->engine);
    int rc = fwdioi_staging_reserve_locked(f, len, may_wait);
    fwdioi_rt_unlock(f->engine);
    if (rc != FWDIO_OK)
        return rc;
    fwdioi_task_list_t msgs;
    rc = fwdioi_route_write(f, buf, len, offset, NULL, &msgs);
    if (rc != FWDIO_OK) {
        fwdioi_staging_release(f, len);
        return rc;
    }
    rc = submit_write(f, &msgs, len, 1);
    if (rc != FWDIO_OK)
        fwdioi_msgs_free(f->engine, &msgs); /* gives the staging back */
    return rc;
}

/* A small write: reserved, appended to the open messages of its writers and
 * counted in one critical section (combine.c). */
static int write_combined(fwdio_file_t *f, const uint8_t *buf, uint64_t len, uint64_t offset,
                          int may_wait, double t0)
{
    fwdioi_rt_lock(f->engine);
    int rc = fwdioi_staging_reserve_locked(f, len, may_wait);
    const int staged = rc == FWDIO_OK;
    uint64_t done = 0;
    while (rc == FWDIO_OK && done < len) {
        /* again after the copies: another thread may have closed it */
        rc = fwdioi_write_refusal_locked(f);
        if (rc != FWDIO_OK)
            break;
        fwdioi_combine_batch_t batch;
        done += fwdioi_combine_reserve_locked(f, buf + done, len - done, offset + done, &batch,
                                              &rc);
        fwdioi_rt_unlock(f->engine);
        fwdioi_combine_copy(&batch); /* outside the lock: up to combine_size bytes */
        fwdioi_rt_lock(f->engine);
        fwdioi_combine_finish_locked(f, &batch);
    }
    if (staged && done < len) /* what was not taken goes back */
        fwdioi_staging_release_locked(f, len - done);
    if (rc == FWDIO_OK) {
        f->stats.bytes_written += len;
        f->stats.bytes_copied += len;
        f->stats.write_calls++;
    }
    f->stats.time_blocked += fwdioi_now() - t0;
    fwdioi_rt_unlock(f->engine);
    return rc;
}

/* fwdio_write and fwdio_try_write: copy the bytes through the staging budget,
 * combined with other small writes, or else in chunks no larger than the
 * budget. */
static int write_copied(fwdio_file_t *f, const void *buf, size_t len, uint64_t offset,
                        int may_wait)
{
    if (!f || (!buf && len > 0) || f->reading)
        return FWDIO_EINVAL;
    if (!in_file(f, len, offset))
        return FWDIO_ERANGE;
    const uint64_t budget = fwdioi_rt_config(f->engine)->staging_buffer;
    if (!may_wait && len > budget)
        return FWDIO_ETOOBIG;
    fwdioi_dormant_use(f);
    if (fwdioi_rt_on_progress_thread())
        may_wait = 0; /* waiting there would stop the sends that make room */
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    const size_t combine = fwdioi_rt_config(f->engine)->combine_size;
    if (len > 0 && combine > 1 && len <= combine && len <= budget) {
        int rc = write_combined(f, buf, len, offset, may_wait, t0);
        fwdioi_trace_end(t_trace, may_wait ? "write" : "try_write", (int64_t)f->seq,
                         (int64_t)len, (int64_t)offset, FWDIOI_TRACE_NONE);
        return rc;
    }
    int rc = FWDIO_OK;
    if (len == 0) { /* nothing to reserve, which is where the refusal is checked */
        fwdioi_rt_lock(f->engine);
        rc = fwdioi_write_refusal_locked(f);
        fwdioi_rt_unlock(f->engine);
    }
    /* A stream's appends may hold half the budget until their step ends. */
    const uint64_t chunk = f->stream ? budget / 2 : budget;
    for (uint64_t done = 0; rc == FWDIO_OK && done < len;) {
        uint64_t n = len - done < chunk ? len - done : chunk;
        rc = write_chunk(f, (const uint8_t *)buf + done, n, offset + done, may_wait);
        done += n;
    }
    double t = fwdioi_now() - t0;
    fwdioi_rt_lock(f->engine);
    f->stats.time_blocked += t;
    if (rc == FWDIO_OK && len > 0)
        f->stats.write_calls++;
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end(t_trace, may_wait ? "write" : "try_write", (int64_t)f->seq, (int64_t)len,
                     (int64_t)offset, FWDIOI_TRACE_NONE);
    return rc;
}

int fwdio_write(fwdio_file_t *f, const void *buf, size_t len, uint64_t offset)
{
    return write_copied(f, buf, len, offset, 1);
}

int fwdio_try_write(fwdio_file_t *f, const void *buf, size_t len, uint64_t offset)
{
    return write_copied(f, buf, len, offset, 0);
}

static void run_lent_done(fwdioi_call_t *call)
{
    fwdioi_lent_t *lent = (fwdioi_lent_t *)call;
    uint64_t t_trace = fwdioi_trace_begin();
    int64_t seq = (int64_t)lent->file->seq;
    if (lent->alloc_start) /* before the callback, which may release the buffer */
        fwdioi_buffers_unlend(lent->file->owner, lent->alloc_start);
    lent->done(lent->file, lent->buf, lent->status, lent->arg);
    free(lent);
    fwdioi_trace_end_file(t_trace, "lent callback", seq);
}

int fwdio_write_lent(fwdio_file_t *f, const void *buf, size_t len, uint64_t offset,
                     fwdio_lent_cb_t done, void *arg)
{
    if (!f || (!buf && len > 0) || !done || f->reading)
        return FWDIO_EINVAL;
    if (!in_file(f, len, offset))
        return FWDIO_ERANGE;
    fwdioi_dormant_use(f);
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_lock(f->engine);
    int rc = fwdioi_write_refusal_locked(f);
    fwdioi_rt_unlock(f->engine);
    if (rc != FWDIO_OK)
        return rc;
    fwdioi_lent_t *lent = calloc(1, sizeof *lent);
    if (!lent)
        return FWDIO_ENOMEM;
    lent->call.run = run_lent_done;
    lent->file = f;
    lent->buf = buf;
    lent->len = len;
    lent->done = done;
    lent->arg = arg;
    lent->status = FWDIO_OK;
    rc = fwdioi_buffers_lend(f->owner, buf, len, &lent->alloc_start);
    if (rc != FWDIO_OK) {
        free(lent);
        return rc;
    }
    if (len == 0) { /* nothing to send: the buffer is free at once */
        fwdioi_rt_deliver_later(f->engine, &lent->call);
        return FWDIO_OK;
    }
    fwdioi_task_list_t msgs;
    rc = fwdioi_route_write(f, buf, len, offset, lent, &msgs);
    if (rc != FWDIO_OK) {
        if (lent->alloc_start)
            fwdioi_buffers_unlend(f->owner, lent->alloc_start);
        free(lent);
        return rc;
    }
    rc = submit_write(f, &msgs, len, 0);
    fwdioi_rt_lock(f->engine);
    if (rc == FWDIO_OK)
        f->stats.write_calls++;
    f->stats.time_blocked += fwdioi_now() - t0;
    fwdioi_rt_unlock(f->engine);
    if (rc != FWDIO_OK) {
        lent->refs = 0; /* the call fails: no callback */
        fwdioi_msgs_free(f->engine, &msgs);
        if (lent->alloc_start)
            fwdioi_buffers_unlend(f->owner, lent->alloc_start);
        free(lent);
    }
    fwdioi_trace_end(t_trace, "write_lent", (int64_t)f->seq, (int64_t)len, (int64_t)offset,
                     FWDIOI_TRACE_NONE);
    return rc;
}

int fwdio_close(fwdio_file_t *f)
{
    if (!f)
        return FWDIO_EINVAL;
    int rc = FWDIO_OK;
    double t0 = fwdioi_now();
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_lock(f->engine);
    if (close_locked(f, 0) != 0)
        rc = FWDIO_ECLOSED;
    f->stats.time_blocked += fwdioi_now() - t0;
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end_file(t_trace, "close", (int64_t)f->seq);
    return rc;
}

int fwdioi_discard(fwdio_file_t *f)
{
    if (!f)
        return FWDIO_EINVAL;
    fwdioi_rt_lock(f->engine);
    /* Used here, or woken by another rank's use: a close like any other
     * (the progress thread decides by the session's own state, which a wake
     * heard meanwhile changes first). */
    fwdioi_dormant_discard_locked(f);
    int rc = close_locked(f, 1) != 0 ? FWDIO_ECLOSED : FWDIO_OK;
    fwdioi_rt_unlock(f->engine);
    return rc;
}

int fwdio_set_commit(fwdio_file_t *f, const void *buf, size_t len, uint64_t offset)
{
    if (!f || !buf || len == 0 || f->reading) {
        fwdioi_log(FWDIOI_LOG_WARN, "fwdio_set_commit: %s", !f     ? "no file"
                                              : !buf ? "no buffer"
                                              : len == 0 ? "an empty commit block (len 0)"
                                                         : "a file opened for reading");
        return FWDIO_EINVAL;
    }
    if (f->stream && f->local) {
        /* a step's block would land before the step's bytes, which reach
         * the path only with the drain after the close */
        fwdioi_log(FWDIOI_LOG_WARN, "fwdio_set_commit of %s: a stream written through the "
                   "node-local tier (local_dir) takes no commit blocks", f->path);
        return FWDIO_EINVAL;
    }
    if (!in_file(f, len, offset)) {
        fwdioi_log(FWDIOI_LOG_WARN, "fwdio_set_commit of %s: %zu bytes at offset %llu end past the size "
                      "given to fwdio_open (%llu)",
                      f->path, len, (unsigned long long)offset, (unsigned long long)f->size);
        return FWDIO_ERANGE;
    }
    fwdioi_dormant_use(f);
    uint8_t *copy = malloc(len);
    if (!copy)
        return FWDIO_ENOMEM;
    memcpy(copy, buf, len);
    fwdioi_rt_lock(f->engine);
    /* one block for a file with a size; a stream's step may have several */
    int max = f->stream ? FWDIOI_MAX_COMMIT_BLOCKS : 1;
    int rc = f->app_closed ? FWDIO_ECLOSED : f->commit.n >= max ? FWDIO_EINVAL : FWDIO_OK;
    if (rc == FWDIO_OK) /* read by the progress thread after the close task or step end */
        f->commit.b[f->commit.n++] = (fwdioi_commit_block_t){copy, len, offset};
    fwdioi_rt_unlock(f->engine);
    if (rc != FWDIO_OK) {
        free(copy);
        fwdioi_log(FWDIOI_LOG_WARN, "fwdio_set_commit of %s: %s", f->path,
                      rc == FWDIO_ECLOSED ? "the file is already closed on this rank"
                      : f->stream         ? "this step has its 8 commit blocks already"
                                          : "a commit block is already set on this rank");
    }
    return rc;
}

static int file_completed(void *arg)
{
    return ((fwdio_file_t *)arg)->complete_delivered;
}

static int file_drained(void *arg)
{
    return ((fwdio_file_t *)arg)->drained_delivered;
}

/* The agreed status of a file's completion, and of its drain (runtime lock). */
static int completion_status(const fwdio_file_t *f) { return (int)f->known_error.status; }
static int drain_status(const fwdio_file_t *f) { return f->drain_status; }

/* fwdio_wait and fwdio_drain_wait: the checks, the combined bytes of every
 * file sent, the wait until done(f), then status(f). */
static int wait_for(fwdio_file_t *f, int (*done)(void *), int (*status)(const fwdio_file_t *),
                    const char *trace_name)
{
    if (!f)
        return FWDIO_EINVAL;
    if (fwdioi_rt_on_progress_thread() || fwdioi_rt_in_callback())
        return FWDIO_ECONTEXT;
    fwdioi_rt_lock(f->engine);
    int closed = f->app_closed;
    fwdioi_combine_flush_all_locked(f->owner); /* other files' bytes go while we wait */
    fwdioi_rt_unlock(f->engine);
    if (!closed)
        return FWDIO_ENOTCLOSED;
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_wait(f->engine, done, f);
    fwdioi_rt_lock(f->engine);
    int rc = status(f);
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end_file(t_trace, trace_name, (int64_t)f->seq);
    return rc;
}

int fwdio_wait(fwdio_file_t *f) { return wait_for(f, file_completed, completion_status, "wait"); }

int fwdio_drain_wait(fwdio_file_t *f)
{
    return wait_for(f, file_drained, drain_status, "drain wait");
}

static int file_ready_returned(void *arg)
{
    return ((fwdio_file_t *)arg)->ready_returned;
}

int fwdio_wait_ready(fwdio_file_t *f)
{
    if (!f)
        return FWDIO_EINVAL;
    if (fwdioi_rt_on_progress_thread() || fwdioi_rt_in_callback())
        return FWDIO_ECONTEXT;
    fwdioi_dormant_use(f); /* its ready status comes from its open agreement */
    uint64_t t_trace = fwdioi_trace_begin();
    fwdioi_rt_wait(f->engine, file_ready_returned, f);
    fwdioi_rt_lock(f->engine);
    int status = (int)f->s.outcome.open_agreed.status;
    fwdioi_rt_unlock(f->engine);
    fwdioi_trace_end_file(t_trace, "wait ready", (int64_t)f->seq);
    return status;
}

/* fwdio_test and fwdio_drain_test: the combined bytes of every file sent,
 * calls due on this thread run, then whether done(f), and status(f) if so. */
static int test_for(fwdio_file_t *f, int *done_out, int (*done)(void *),
                    int (*status)(const fwdio_file_t *))
{
    if (!f || !done_out)
        return FWDIO_EINVAL;
    fwdioi_rt_lock(f->engine);
    fwdioi_combine_flush_all_locked(f->owner);
    fwdioi_rt_unlock(f->engine);
    if (!fwdioi_rt_on_progress_thread())
        fwdioi_rt_run_calls(f->engine);
    fwdioi_rt_lock(f->engine);
    *done_out = done(f);
    int rc = *done_out ? status(f) : FWDIO_OK;
    fwdioi_rt_unlock(f->engine);
    return rc;
}

int fwdio_test(fwdio_file_t *f, int *done)
{
    return test_for(f, done, file_completed, completion_status);
}

int fwdio_drain_test(fwdio_file_t *f, int *done)
{
    return test_for(f, done, file_drained, drain_status);
}

void fwdio_file_free(fwdio_file_t *f)
{
    if (!f)
        return;
    fwdioi_rt_lock(f->engine);
    close_locked(f, 0);
    f->app_freed = 1;
    /* Complete (and drained) already delivered: nobody else will touch the
     * file. Else the last of those calls releases it. */
    int release = f->complete_delivered && f->drained_delivered;
    if (release)
        fwdioi_file_unlink_locked(f);
    fwdioi_rt_unlock(f->engine);
    if (release)
        fwdioi_file_release(f);
}

const char *fwdio_file_error(const fwdio_file_t *f)
{
    if (!f)
        return fwdio_strerror(FWDIO_EINVAL);
    /* error_text is written once, under the lock, when failed_known is set, and
     * never again: once failed_known is seen, reading it needs no lock. */
    fwdioi_rt_lock(f->engine);
    const char *text = f->failed_known ? f->error_text : fwdio_strerror(FWDIO_OK);
    if (!f->failed_known && f->drained_delivered && f->drain_status != FWDIO_OK)
        text = f->drain_text; /* set once, before drained was delivered */
    else if (!f->failed_known && f->step_drain_fail_from != UINT64_MAX)
        text = f->step_drain_text; /* set once, with step_drain_fail_from */
    fwdioi_rt_unlock(f->engine);
    return text;
}

int fwdio_file_error_info(const fwdio_file_t *f, fwdio_error_info_t *info)
{
    if (!f || !info)
        return FWDIO_EINVAL;
    fwdioi_rt_lock(f->engine);
    /* as fwdio_file_error: a drain's failure, or a step's drain's, once the
     * file itself did not fail */
    const fwdioi_errinfo_t *e = &f->known_error;
    if (!f->failed_known && f->drained_delivered && f->drain_status != FWDIO_OK)
        e = &f->drain_error;
    else if (!f->failed_known && f->step_drain_fail_from != UINT64_MAX)
        e = &f->step_drain_error;
    info->status = (int)e->status;
    info->rank = (int)e->rank;
    info->sys_errno = (int)e->sys_errno;
    info->offset = (uint64_t)e->offset;
    fwdioi_rt_unlock(f->engine);
    return FWDIO_OK;
}

int fwdio_file_writers(const fwdio_file_t *f, int *ranks, int max_ranks)
{
    if (!f || max_ranks < 0)
        return FWDIO_EINVAL;
    for (int w = 0; ranks && w < f->plan.nwriters && w < max_ranks; w++)
        ranks[w] = fwdioi_plan_writer_rank(&f->plan, w);
    return f->plan.nwriters;
}

int fwdio_file_stats(const fwdio_file_t *f, fwdio_file_stats_t *stats)
{
    if (!f || !stats)
        return FWDIO_EINVAL;
    fwdioi_rt_lock(f->engine);
    *stats = f->stats;
    fwdioi_rt_unlock(f->engine);
    return FWDIO_OK;
}

int fwdio_file_writer_bytes(const fwdio_file_t *f, uint64_t *bytes, int max)
{
    if (!f || max < 0)
        return FWDIO_EINVAL;
    fwdioi_rt_lock(f->engine);
    for (int w = 0; bytes && w < f->plan.nwriters && w < max; w++)
        bytes[w] = f->writer_bytes_agreed[w];
    fwdioi_rt_unlock(f->engine);
    return f->plan.nwriters;
}

int fwdio_runtime_comm(const fwdio_runtime_t *rt, MPI_Comm *comm)
{
    if (!rt || !comm)
        return FWDIO_EINVAL;
    *comm = rt->app_comm;
    return FWDIO_OK;
}

int fwdio_runtime_stats(fwdio_runtime_t *rt, fwdio_runtime_stats_t *stats)
{
    if (!rt || !stats)
        return FWDIO_EINVAL;
    const fwdio_config_t *cfg = fwdioi_rt_config(rt->engine);
    stats->writer_budget = cfg->writer_buffer;
    stats->staging_budget = cfg->staging_buffer;
    stats->max_message = cfg->max_message_size;
    stats->combine_size = cfg->combine_size;
    stats->writer_peak = fwdioi_wbudget_peak(&rt->wbuf);
    fwdioi_thread_costs_t costs;
    fwdioi_rt_thread_costs(rt->engine, &costs);
    stats->progress_cpu_time = costs.progress_cpu;
    stats->io_cpu_time = costs.io_cpu;
    stats->progress_wakeups = costs.progress_wakeups;
    stats->io_wakeups = costs.io_wakeups;
    stats->shared_budget = rt->area.enabled ? rt->area.heap_size : 0;
    uint64_t used;
    fwdioi_heap_usage(&rt->area.heap, &used, &stats->shared_peak);
    fwdioi_area_node_memory(&rt->area, &stats->node_committed, &stats->node_peak);
    fwdioi_rt_lock(rt->engine);
    stats->staging_peak = rt->staged_peak;
    stats->staged = rt->staged;
    fwdioi_rt_unlock(rt->engine);
    return FWDIO_OK;
}
