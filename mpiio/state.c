/* SPDX-License-Identifier: BSD-3-Clause */
/* Process-wide state of the MPI-IO layer: whether it is on, which paths it
 * takes, one fwdio runtime per group of ranks that opens files, the table of
 * taken files and the files still completing after an asynchronous close. */
#include "layer.h"
#include "comm_pool.h"
#include "lock_check.h"
#include "parse_size.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static int thread_level = -1;

typedef struct runtime_entry {
    MPI_Comm comm; /* the layer's duplicate, to compare groups with */
    fwdio_runtime_t *rt;
    fwdioi_comm_pool_t comms; /* the group's files' communicators, kept */
    struct runtime_entry *next;
} runtime_entry_t;
static runtime_entry_t *runtimes; /* in creation order */

typedef struct pending {
    fwdio_file_t *stream;
    char *path;
    int reported; /* its close returned the failure (or it had no byte): not again */
    void *record; /* freed with it (mpiio_add_pending) */
    struct pending *next;
} pending_t;
static pending_t *pendings;
static mpiio_file_t *files;

static const char *patterns(void)
{
    const char *p = getenv("FWDIO_MPIIO");
    return p && *p ? p : NULL;
}

int mpiio_wanted(void)
{
    return patterns() != NULL;
}

void mpiio_set_thread_level(int provided)
{
    thread_level = provided;
}

int mpiio_active(void)
{
    if (!mpiio_wanted())
        return 0;
    if (thread_level < 0) { /* MPI initialised by a path the layer did not see */
        int initialized = 0;
        PMPI_Initialized(&initialized);
        if (initialized)
            PMPI_Query_thread(&thread_level);
    }
    return thread_level == MPI_THREAD_MULTIPLE;
}

const char *mpiio_match(const char *path)
{
    static __thread char hit[256];
    const char *list = patterns();
    if (!list || !path)
        return NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n > 0 && n < sizeof(hit)) {
            memcpy(hit, p, n);
            hit[n] = '\0';
            if (fnmatch(hit, path, 0) == 0 ||
                (!strchr(hit, '/') && fnmatch(hit, base, 0) == 0))
                return hit;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return NULL;
}

static pthread_mutex_t runtimes_lock = PTHREAD_MUTEX_INITIALIZER;

static fwdio_runtime_t *runtime_for_locked(MPI_Comm comm, char *why, size_t why_len);

fwdio_runtime_t *mpiio_runtime_for(MPI_Comm comm, char *why, size_t why_len)
{
    fwdioi_mutex_lock(&runtimes_lock);
    fwdio_runtime_t *rt = runtime_for_locked(comm, why, why_len);
    fwdioi_mutex_unlock(&runtimes_lock);
    return rt;
}

/* The entry of the runtime made for comm or a communicator congruent to it,
 * or NULL. */
static runtime_entry_t *entry_found_locked(MPI_Comm comm)
{
    FWDIOI_ASSERT_HELD(&runtimes_lock);
    for (runtime_entry_t *e = runtimes; e; e = e->next) {
        int same;
        if (PMPI_Comm_compare(e->comm, comm, &same) == MPI_SUCCESS &&
            (same == MPI_IDENT || same == MPI_CONGRUENT))
            return e;
    }
    return NULL;
}

static fwdio_runtime_t *runtime_found_locked(MPI_Comm comm)
{
    FWDIOI_ASSERT_HELD(&runtimes_lock);
    runtime_entry_t *e = entry_found_locked(comm);
    return e ? e->rt : NULL;
}

static runtime_entry_t *entry_of_locked(const fwdio_runtime_t *rt)
{
    FWDIOI_ASSERT_HELD(&runtimes_lock);
    runtime_entry_t *e = runtimes;
    while (e && e->rt != rt)
        e = e->next;
    return e;
}

uint64_t mpiio_comms_reserve(MPI_Comm comm)
{
    fwdioi_mutex_lock(&runtimes_lock);
    runtime_entry_t *e = entry_found_locked(comm);
    uint64_t reserved = e ? fwdioi_comm_pool_reserve(&e->comms) : 0;
    fwdioi_mutex_unlock(&runtimes_lock);
    return reserved;
}

int mpiio_comms_choose(fwdio_runtime_t *rt, MPI_Comm comm, uint64_t reserved, uint64_t agreed,
                       int pool, MPI_Comm *out)
{
    *out = MPI_COMM_NULL;
    fwdioi_mutex_lock(&runtimes_lock);
    runtime_entry_t *e = entry_of_locked(rt);
    int slot = -1;
    if (e) {
        fwdioi_comm_pool_unreserve(&e->comms, reserved);
        if (pool && agreed)
            slot = fwdioi_comm_pool_take(&e->comms, agreed, out);
        else if (pool)
            slot = fwdioi_comm_pool_make(&e->comms);
    }
    fwdioi_mutex_unlock(&runtimes_lock);
    if (*out == MPI_COMM_NULL && PMPI_Comm_dup(comm, out) != MPI_SUCCESS) {
        *out = MPI_COMM_NULL;
        slot = -1;
    }
    return slot;
}

void mpiio_comms_unreserve(MPI_Comm comm, uint64_t reserved)
{
    if (!reserved)
        return;
    fwdioi_mutex_lock(&runtimes_lock);
    runtime_entry_t *e = entry_found_locked(comm);
    if (e)
        fwdioi_comm_pool_unreserve(&e->comms, reserved);
    fwdioi_mutex_unlock(&runtimes_lock);
}

void mpiio_comms_give_back(fwdio_runtime_t *rt, int slot, MPI_Comm *comm)
{
    fwdioi_mutex_lock(&runtimes_lock);
    runtime_entry_t *e = slot >= 0 && rt ? entry_of_locked(rt) : NULL;
    if (e) {
        fwdioi_comm_pool_give(&e->comms, slot, *comm);
        *comm = MPI_COMM_NULL;
    }
    fwdioi_mutex_unlock(&runtimes_lock);
    if (*comm != MPI_COMM_NULL)
        PMPI_Comm_free(comm);
}

int mpiio_runtime_exists(MPI_Comm comm)
{
    fwdioi_mutex_lock(&runtimes_lock);
    int found = runtime_found_locked(comm) != NULL;
    fwdioi_mutex_unlock(&runtimes_lock);
    return found;
}

static fwdio_runtime_t *runtime_for_locked(MPI_Comm comm, char *why, size_t why_len)
{
    FWDIOI_ASSERT_HELD(&runtimes_lock);
    /* Every rank of comm walks the same list (runtimes are made collectively,
     * in the same order), so all find the same entry or all make one. */
    fwdio_runtime_t *found = runtime_found_locked(comm);
    if (found)
        return found;
    runtime_entry_t *e = calloc(1, sizeof(*e));
    if (!e) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    /* The layer waits for its streams' callbacks (ready) without polling:
     * they run on the progress thread. */
    fwdio_config_t cfg;
    fwdio_config_init(&cfg);
    cfg.callback_mode = FWDIO_CALLBACKS_ON_PROGRESS;
    cfg.pinned |= FWDIO_PIN_CALLBACK_MODE;
    int rc = fwdio_init(comm, &cfg, &e->rt);
    if (rc != FWDIO_OK) {
        snprintf(why, why_len, "fwdio_init failed: %s", fwdio_strerror(rc));
        free(e);
        return NULL;
    }
    PMPI_Comm_dup(comm, &e->comm);
    fwdioi_comm_pool_init(&e->comms);
    runtime_entry_t **tail = &runtimes;
    while (*tail)
        tail = &(*tail)->next;
    *tail = e;
    return e->rt;
}

/* Mark every file of path as aliased when more than one is open (the caller
 * holds state_lock). */
static void mark_aliases_locked(const char *path)
{
    FWDIOI_ASSERT_HELD(&state_lock);
    int n = 0;
    for (mpiio_file_t *g = files; g; g = g->next)
        n += strcmp(g->path, path) == 0;
    for (mpiio_file_t *g = files; g; g = g->next)
        if (strcmp(g->path, path) == 0)
            atomic_store(&g->aliased, n > 1);
}

void mpiio_add_file(mpiio_file_t *f)
{
    fwdioi_mutex_lock(&state_lock);
    f->next = files;
    files = f;
    mark_aliases_locked(f->path);
    fwdioi_mutex_unlock(&state_lock);
}

size_t mpiio_aliases(const mpiio_file_t *f, mpiio_file_t **out, size_t max)
{
    size_t n = 0;
    if (!atomic_load(&f->aliased))
        return 0;
    fwdioi_mutex_lock(&state_lock);
    for (mpiio_file_t *g = files; g && n < max; g = g->next)
        if (g != f && g->stream && strcmp(g->path, f->path) == 0)
            out[n++] = g;
    fwdioi_mutex_unlock(&state_lock);
    return n;
}

mpiio_file_t *mpiio_find(MPI_File fh)
{
    if (fh == MPI_FILE_NULL)
        return NULL;
    fwdioi_mutex_lock(&state_lock);
    mpiio_file_t *f = files;
    while (f && f->fh != fh)
        f = f->next;
    fwdioi_mutex_unlock(&state_lock);
    return f;
}

static size_t listed_in(const char *path, const fwdio_runtime_t *rt, int held,
                        mpiio_file_t **out, size_t max)
{
    size_t n = 0;
    fwdioi_mutex_lock(&state_lock);
    for (mpiio_file_t *g = files; g && n < max; g = g->next)
        if ((g->stream || (held && atomic_load(&g->opening) == MPIIO_OPEN_GIVEN_BACK)) &&
            (!rt || g->rt == rt) && strcmp(g->path, path) == 0)
            out[n++] = g;
    fwdioi_mutex_unlock(&state_lock);
    return n;
}

size_t mpiio_taken_in(const char *path, const fwdio_runtime_t *rt, mpiio_file_t **out,
                      size_t max)
{
    return listed_in(path, rt, 0, out, max);
}

size_t mpiio_held_in(const char *path, const fwdio_runtime_t *rt, mpiio_file_t **out,
                     size_t max)
{
    return listed_in(path, rt, 1, out, max);
}

void mpiio_remove_file(mpiio_file_t *f)
{
    fwdioi_mutex_lock(&state_lock);
    for (mpiio_file_t **p = &files; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    mark_aliases_locked(f->path);
    fwdioi_mutex_unlock(&state_lock);
}

int mpiio_close_async(void)
{
    const char *v = getenv("FWDIO_MPIIO_CLOSE");
    return v && strcmp(v, "async") == 0;
}

int mpiio_sync_async(void)
{
    const char *v = getenv("FWDIO_MPIIO_SYNC");
    return v && strcmp(v, "async") == 0;
}

/* Whether this is the first time the process tells about variable `name`
 * (read at every open: said once, not at every file's). */
static int first_said(const char *name)
{
    enum { SAID_MAX = 8 };
    static const char *said[SAID_MAX];
    static int nsaid;
    static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
    int first = 1;
    pthread_mutex_lock(&said_lock);
    for (int i = 0; i < nsaid && first; i++)
        first = strcmp(said[i], name) != 0;
    if (first && nsaid < SAID_MAX)
        said[nsaid++] = name;
    pthread_mutex_unlock(&said_lock);
    return first;
}

int64_t mpiio_env_size(const char *name, int64_t def, int64_t max, const char *what, int rank)
{
    const char *v = getenv(name);
    uint64_t n = 0;
    if (!v || !*v)
        return def;
    if (fwdioi_parse_size(v, &n) != 0 || n > (uint64_t)max) {
        if (rank == 0 && first_said(name))
            mpiio_say("%s=\"%s\" is not a size from 0 to %lld bytes (e.g. 64K, 0): %lld bytes "
                      "are %s",
                      name, v, (long long)max, (long long)def, what);
        return def;
    }
    return (int64_t)n;
}

int64_t mpiio_readback_limit(int rank)
{
    return mpiio_env_size("FWDIO_MPIIO_READBACK", MPIIO_READBACK_DEFAULT, INT64_MAX, "kept",
                          rank);
}

static void pending_free(pending_t *p)
{
    fwdio_file_free(p->stream);
    free(p->record);
    free(p->path);
    free(p);
}

/* Whether p's stream is quiet (nothing to report, whatever its outcome)
 * and has ended, drain included (state_lock held: the layer's stream
 * callbacks never take it). A stream whose failure is still to be reported
 * stays for the path's next open or MPI_Finalize to wait for and report. */
static int pending_done_locked(pending_t *p)
{
    FWDIOI_ASSERT_HELD(&state_lock);
    int done = 0, drained = 0;
    if (!p->reported)
        return 0;
    (void)fwdio_test(p->stream, &done);
    if (done)
        (void)fwdio_drain_test(p->stream, &drained);
    return done && drained;
}

/* Let the quiet streams go that are done; returns the
 * oldest quiet one when more than MPIIO_PENDING_MAX quiet ones are left,
 * taken off the list for the caller to wait for (state_lock held). */
static pending_t *pending_reap_locked(void)
{
    FWDIOI_ASSERT_HELD(&state_lock);
    size_t quiet = 0;
    pending_t **oldest = NULL;
    for (pending_t **pp = &pendings; *pp;) {
        pending_t *p = *pp;
        if (pending_done_locked(p)) {
            *pp = p->next;
            pending_free(p);
            continue;
        }
        if (p->reported) {
            quiet++;
            oldest = pp; /* the list is newest first */
        }
        pp = &p->next;
    }
    if (quiet <= MPIIO_PENDING_MAX || !oldest)
        return NULL;
    pending_t *p = *oldest;
    *oldest = p->next;
    return p;
}

void mpiio_add_pending(fwdio_file_t *stream, const char *path, int reported, void *record)
{
    pending_t *p = calloc(1, sizeof(*p));
    char *copy = strdup(path);
    if (!p || !copy) { /* cannot remember it: complete it now */
        int rc = fwdio_wait(stream);
        if (rc == FWDIO_OK)
            rc = fwdio_drain_wait(stream);
        if (rc != FWDIO_OK && !reported)
            mpiio_say("%s: the close failed: %s", path, fwdio_file_error(stream));
        fwdio_file_free(stream);
        free(record);
        free(p);
        free(copy);
        return;
    }
    p->stream = stream;
    p->path = copy;
    p->reported = reported;
    p->record = record;
    fwdioi_mutex_lock(&state_lock);
    p->next = pendings;
    pendings = p;
    pending_t *wait = pending_reap_locked();
    fwdioi_mutex_unlock(&state_lock);
    if (wait) { /* quiet: nothing to say, whatever its outcome */
        if (fwdio_wait(wait->stream) == FWDIO_OK)
            (void)fwdio_drain_wait(wait->stream);
        pending_free(wait);
    }
}

int mpiio_wait_pending(const char *path)
{
    int code = MPI_SUCCESS;
    for (;;) {
        fwdioi_mutex_lock(&state_lock);
        pending_t **pp = &pendings;
        while (*pp && path && strcmp((*pp)->path, path) != 0)
            pp = &(*pp)->next;
        pending_t *p = *pp;
        if (p)
            *pp = p->next;
        fwdioi_mutex_unlock(&state_lock);
        if (!p)
            return code;
        int rc = fwdio_wait(p->stream);
        int drain = rc == FWDIO_OK ? fwdio_drain_wait(p->stream) : FWDIO_OK;
        if ((rc != FWDIO_OK || drain != FWDIO_OK) && !p->reported) {
            char text[MPI_MAX_ERROR_STRING];
            fwdio_error_info_t info;
            fwdio_file_error_info(p->stream, &info);
            mpiio_error_text(text, sizeof text, p->path,
                             rc != FWDIO_OK ? "the asynchronous close failed: %s"
                                            : MPIIO_DRAIN_FAILED ": %s",
                             fwdio_file_error(p->stream));
            rc = rc != FWDIO_OK ? rc : drain;
            mpiio_say("%s", text + strlen("fwdio-mpiio: "));
            if (code == MPI_SUCCESS)
                code = mpiio_error_code(rc, info.sys_errno, text);
        }
        pending_free(p);
    }
}

static void free_kept(MPI_Comm *comm) { PMPI_Comm_free(comm); }

int mpiio_finalize_runtimes(void)
{
    int code = mpiio_wait_pending(NULL);
    fwdioi_mutex_lock(&runtimes_lock);
    while (runtimes) {
        runtime_entry_t *e = runtimes;
        runtimes = e->next;
        fwdio_finalize(e->rt);
        fwdioi_comm_pool_drain(&e->comms, free_kept);
        PMPI_Comm_free(&e->comm);
        free(e);
    }
    fwdioi_mutex_unlock(&runtimes_lock);
    return code;
}
