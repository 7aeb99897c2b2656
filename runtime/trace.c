/* SPDX-License-Identifier: BSD-3-Clause */
/* The trace recorder (see trace.h). */
#include "trace.h"

#include "clock.h"

#include "log.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

atomic_int fwdioi_trace_enabled;

typedef struct event {
    const char *name;
    char *text; /* owned, or NULL */
    uint64_t t0, t1; /* CLOCK_MONOTONIC, ns */
    int64_t file, bytes, offset, peer;
} event_t;

/* Events are kept in blocks, so a thread's buffer grows without moving. */
enum { BLOCK_EVENTS = 4096 };

typedef struct block {
    struct block *next;
    int used;
    event_t ev[BLOCK_EVENTS];
} block_t;

/* One thread's events: written by that thread alone, read by the flush once the
 * thread is done (joined, or the application thread calling finalize). */
typedef struct tbuf {
    struct tbuf *next; /* registry list (registry lock) */
    const char *role;
    int tid;
    long count, dropped;
    block_t *head, *tail;
} tbuf_t;

/* The registry: what start/stop and thread registration share. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static int runtimes;         /* fwdio runtimes alive (started, not stopped) */
static atomic_uint session;  /* bumped per recording, so stale thread buffers are not reused */
static tbuf_t *bufs;
static int next_tid;
static char dir[PATH_MAX];
static int trace_rank;
static long max_events;
static uint64_t mono_zero_ns, real_zero_ns; /* clocks read together at start */

static _Thread_local tbuf_t *my_buf;
static _Thread_local unsigned my_session;
static _Thread_local const char *my_role;

uint64_t fwdioi_trace_clock(void) { return fwdioi_now_ns(); }

void fwdioi_trace_thread(const char *role) { my_role = role; }

/* The calling thread's buffer for the current recording, made on first use. */
static tbuf_t *thread_buf(void)
{
    unsigned s = atomic_load_explicit(&session, memory_order_relaxed);
    if (my_buf && my_session == s)
        return my_buf;
    tbuf_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->role = my_role ? my_role : "app";
    pthread_mutex_lock(&reg_lock);
    b->tid = ++next_tid;
    b->next = bufs;
    bufs = b;
    pthread_mutex_unlock(&reg_lock);
    my_buf = b;
    my_session = s;
    return b;
}

void fwdioi_trace_record(uint64_t t0, const char *name, int64_t file, int64_t bytes,
                         int64_t offset, int64_t peer, const char *text)
{
    uint64_t t1 = fwdioi_trace_clock();
    tbuf_t *b = thread_buf();
    if (!b)
        return;
    if (b->count >= max_events) {
        b->dropped++;
        return;
    }
    if (!b->tail || b->tail->used == BLOCK_EVENTS) {
        block_t *blk = malloc(sizeof *blk);
        if (!blk) {
            b->dropped++;
            return;
        }
        blk->next = NULL;
        blk->used = 0;
        if (b->tail)
            b->tail->next = blk;
        else
            b->head = blk;
        b->tail = blk;
    }
    event_t *e = &b->tail->ev[b->tail->used++];
    *e = (event_t){name, text ? strdup(text) : NULL, t0, t1, file, bytes, offset, peer};
    b->count++;
}

void fwdioi_trace_start(int rank)
{
    pthread_mutex_lock(&reg_lock);
    if (runtimes++ > 0) { /* the first runtime alive decided */
        pthread_mutex_unlock(&reg_lock);
        return;
    }
    const char *d = getenv("FWDIO_TRACE");
    struct stat st;
    if (!d || !*d) {
        pthread_mutex_unlock(&reg_lock);
        return;
    }
    if (strlen(d) >= sizeof dir - 32 || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (rank == 0)
            fwdioi_report("FWDIO_TRACE=%s is not a directory: no trace", d);
        pthread_mutex_unlock(&reg_lock);
        return;
    }
    strcpy(dir, d);
    max_events = FWDIOI_TRACE_DEFAULT_MAX_EVENTS;
    const char *m = getenv("FWDIO_TRACE_MAX_EVENTS");
    if (m && *m) {
        char *end;
        errno = 0;
        long v = strtol(m, &end, 10);
        if (errno || *end || v < 0) {
            if (rank == 0)
                fwdioi_report("FWDIO_TRACE_MAX_EVENTS=%s is not a count: using %d", m,
                              FWDIOI_TRACE_DEFAULT_MAX_EVENTS);
        } else {
            max_events = v;
        }
    }
    trace_rank = rank;
    next_tid = 0;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    mono_zero_ns = fwdioi_trace_clock();
    real_zero_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    atomic_fetch_add_explicit(&session, 1, memory_order_relaxed);
    atomic_store_explicit(&fwdioi_trace_enabled, 1, memory_order_relaxed);
    pthread_mutex_unlock(&reg_lock);
}

/* A JSON string. */
static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* Microseconds with three decimals, printed from integer nanoseconds. */
static void put_us(FILE *out, uint64_t ns)
{
    fprintf(out, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

/* Rows in a fixed order: the application first, then the runtime's threads. */
static int role_order(const char *role)
{
    if (!strcmp(role, "app"))
        return 0;
    if (!strcmp(role, "progress"))
        return 1;
    return 2;
}

static void put_event(FILE *out, const tbuf_t *b, const event_t *e)
{
    /* Monotonic time, shifted onto the wall clock read at start: ranks on
     * different nodes line up as well as their clocks agree. */
    uint64_t ts = e->t0 - mono_zero_ns + real_zero_ns;
    uint64_t dur = e->t1 > e->t0 ? e->t1 - e->t0 : 0;
    fprintf(out, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
            e->name, b->role, trace_rank, b->tid);
    put_us(out, ts);
    fputs(",\"dur\":", out);
    put_us(out, dur);
    fputs(",\"args\":{", out);
    const char *sep = "";
    const struct {
        const char *key;
        int64_t v;
    } args[] = {{"file", e->file}, {"bytes", e->bytes}, {"offset", e->offset}, {"peer", e->peer}};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        if (args[i].v == FWDIOI_TRACE_NONE)
            continue;
        fprintf(out, "%s\"%s\":%lld", sep, args[i].key, (long long)args[i].v);
        sep = ",";
    }
    if (e->text) {
        fprintf(out, "%s\"path\":", sep);
        put_string(out, e->text);
    }
    fputs("}}", out);
}

static int write_file(const tbuf_t *list, long dropped)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/fwdio-trace.%d.json", dir, trace_rank);
    FILE *out = fopen(path, "w");
    if (!out)
        return -1;
    fprintf(out, "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                 "\"tid\":0,\"args\":{\"name\":\"rank %d\"}}",
            trace_rank, trace_rank);
    fprintf(out, ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                 "\"args\":{\"sort_index\":%d}}",
            trace_rank, trace_rank);
    for (const tbuf_t *b = list; b; b = b->next) {
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                     "\"args\":{\"name\":\"%s\"}}",
                trace_rank, b->tid, b->role);
        fprintf(out, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                     "\"args\":{\"sort_index\":%d}}",
                trace_rank, b->tid, role_order(b->role) * 1000 + b->tid);
        for (const block_t *blk = b->head; blk; blk = blk->next)
            for (int i = 0; i < blk->used; i++)
                put_event(out, b, &blk->ev[i]);
    }
    fprintf(out, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"rank\":%d,"
                 "\"dropped_events\":%ld,\"max_events_per_thread\":%ld,\"threads\":[",
            trace_rank, dropped, max_events);
    for (const tbuf_t *b = list; b; b = b->next)
        fprintf(out, "%s{\"tid\":%d,\"role\":\"%s\",\"events\":%ld,\"dropped_events\":%ld}",
                b == list ? "" : ",", b->tid, b->role, b->count, b->dropped);
    fputs("]}}\n", out);
    int bad = ferror(out);
    return fclose(out) != 0 || bad ? -1 : 0;
}

static void free_bufs(tbuf_t *list)
{
    while (list) {
        tbuf_t *next = list->next;
        block_t *blk = list->head;
        while (blk) {
            block_t *bn = blk->next;
            for (int i = 0; i < blk->used; i++)
                free(blk->ev[i].text);
            free(blk);
            blk = bn;
        }
        free(list);
        list = next;
    }
}

void fwdioi_trace_stop(int write)
{
    pthread_mutex_lock(&reg_lock);
    if (runtimes == 0 || --runtimes > 0 ||
        !atomic_load_explicit(&fwdioi_trace_enabled, memory_order_relaxed)) {
        pthread_mutex_unlock(&reg_lock);
        return;
    }
    atomic_store_explicit(&fwdioi_trace_enabled, 0, memory_order_relaxed);
    tbuf_t *list = bufs;
    bufs = NULL;
    pthread_mutex_unlock(&reg_lock);

    /* The registry pushes at the head: reverse to registration order. */
    tbuf_t *ordered = NULL;
    long dropped = 0;
    while (list) {
        tbuf_t *next = list->next;
        list->next = ordered;
        ordered = list;
        dropped += list->dropped;
        list = next;
    }
    if (write && write_file(ordered, dropped) != 0)
        fwdioi_report("cannot write the trace of rank %d to %s: %s", trace_rank, dir,
                      strerror(errno));
    else if (write && dropped > 0)
        fwdioi_log(FWDIOI_LOG_WARN, "rank %d: trace dropped %ld events (cap %ld per thread)",
                   trace_rank, dropped, max_events);
    free_bufs(ordered);
}
