/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The storage model (see model.h). Time is CLOCK_MONOTONIC in nanoseconds.
 *
 * Each target is a FIFO of pieces (one piece = the part of one request that
 * falls on that target) served by its own thread, which sleeps until the
 * piece's modelled end. The end is computed on a schedule, not from the
 * moment the thread wakes: start = max(arrival, end of the previous piece),
 * end = start + cost. A thread that wakes late (the machine is busy) serves
 * the next pieces earlier by as much, so over a run a target delivers its
 * configured bandwidth even on oversubscribed cores; no piece ever ends
 * sooner than its arrival plus its cost.
 *
 * Locks: each target's lock guards its queue and counters; acct_lock the
 * client table and the global counters; files_lock the file table; a file's
 * lock its own state; cache_lock the thread-to-client cache. Only fsync holds
 * two at once: a file's lock while it queues syncs on targets (file, then
 * target); no code takes them the other way round.
 */
#define _GNU_SOURCE
#include "model.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

/* Clients tracked individually; requests of further ones only count globally. */
#define PFS_MAX_CLIENTS 4096
#define CLIENT_SLOTS (2 * PFS_MAX_CLIENTS)
/* Thread-to-client cache: an entry is trusted for a second, so a thread id
 * the kernel reuses for another process is attributed anew soon after. */
#define TID_SLOTS 4096
#define TID_TTL_NS 1000000000LL
#define FILE_BUCKETS 4096
/* Most stripes of one file whose last writer is remembered (16 B each);
 * stripes beyond never count as conflicts. */
#define MAX_OWNED_STRIPES ((uint64_t)1 << 22)
#define BITMAP_WORDS (PFS_MAX_TARGETS / 64)

enum piece_kind { PIECE_WRITE, PIECE_READ, PIECE_SYNC };

typedef struct pfs_piece {
    STAILQ_ENTRY(pfs_piece) link;
    enum piece_kind kind;
    uint64_t bytes;
    int64_t arrival_ns;
    unsigned conflicts;
    uint64_t ticket;
} pfs_piece_t;

typedef struct pfs_target {
    pthread_mutex_t lock;
    pthread_cond_t work; /* a piece was queued, or stop */
    pthread_cond_t done; /* a piece was served */
    STAILQ_HEAD(, pfs_piece) queue;
    uint64_t next_ticket, served_ticket;
    uint64_t queued_bytes, served_bytes; /* cumulative, for write-behind */
    int64_t free_at_ns;                  /* modelled end of the last piece */
    int stop;
    pfs_target_stats_t st; /* clients: computed at snapshot */
    const pfs_config_t *cfg;
    pthread_t thread;
    int started;
} pfs_target_t;

typedef struct client {
    int used;
    int64_t link_free_ns; /* when the client's link is free again */
    uint64_t written[BITMAP_WORDS];
    pfs_client_stats_t st;
} client_t;

typedef struct tid_entry {
    pid_t tid;
    uint64_t client;
    int64_t checked_ns;
} tid_entry_t;

typedef struct owner {
    uint64_t client;
    int64_t when_ns; /* 0: nobody wrote the stripe yet */
} owner_t;

struct pfs_file {
    pfs_file_t *next;
    uint64_t dev, ino;
    pthread_mutex_t lock;
    unsigned start;
    uint64_t size;
    /* Durable mode: targets with pieces of this file queued since its last
     * sync there, and the ticket of that last sync on each target (0: none).
     * A piece marks its target after it is queued, and fsync clears a mark
     * and queues the sync under the file's lock, so a sync is behind every
     * piece whose mark it clears; an fsync that finds a target clean waits
     * for the sync another fsync queued there. */
    uint64_t dirty[BITMAP_WORDS];
    uint64_t *sync_ticket;
    owner_t *owners;
    uint64_t nowners;
};

struct pfs_model {
    pfs_config_t cfg;
    pfs_target_t *targets;
    int64_t start_ns;

    pthread_mutex_t acct_lock;
    client_t *clients; /* CLIENT_SLOTS, open addressing by id */
    size_t nclients;
    uint64_t untracked;
    int64_t reset_ns;
    uint64_t write_requests, write_bytes, read_requests, read_bytes, fsyncs;
    uint64_t extending_writes, max_request;

    pthread_mutex_t cache_lock;
    tid_entry_t *tids; /* TID_SLOTS */

    pthread_mutex_t files_lock;
    pfs_file_t *files[FILE_BUCKETS];
    unsigned next_start;
};

/* ---- time ------------------------------------------------------------- */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = deadline_ns / 1000000000LL,
                          .tv_nsec = deadline_ns % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Nanoseconds to move `bytes` at `rate` bytes/s (0: no time). */
static int64_t transfer_ns(uint64_t bytes, uint64_t rate)
{
    if (rate == 0)
        return 0;
    return (int64_t)((long double)bytes * 1e9L / (long double)rate + 0.5L);
}

static void bit_set(uint64_t *map, unsigned i) { map[i / 64] |= (uint64_t)1 << (i % 64); }
static int bit_get(const uint64_t *map, unsigned i) { return (int)(map[i / 64] >> (i % 64)) & 1; }

/* ---- targets ---------------------------------------------------------- */

static int64_t piece_cost(const pfs_target_t *t, const pfs_piece_t *p)
{
    int64_t cost = t->cfg->latency_ns + transfer_ns(p->bytes, t->cfg->bw);
    cost += (int64_t)p->conflicts * t->cfg->conflict_ns;
    if (p->kind == PIECE_SYNC)
        cost += t->cfg->sync_ns;
    return cost;
}

static void account_piece(pfs_target_t *t, const pfs_piece_t *p, int64_t cost)
{
    switch (p->kind) {
    case PIECE_WRITE:
        t->st.write_bytes += p->bytes;
        t->st.write_rpcs++;
        break;
    case PIECE_READ:
        t->st.read_bytes += p->bytes;
        t->st.read_rpcs++;
        break;
    case PIECE_SYNC:
        t->st.syncs++;
        break;
    }
    t->st.conflicts += p->conflicts;
    t->st.conflict_ns += (int64_t)p->conflicts * t->cfg->conflict_ns;
    t->st.busy_ns += cost;
}

/* One target's server: pieces in arrival order, one at a time. */
static void *target_main(void *arg)
{
    pfs_target_t *t = arg;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (STAILQ_EMPTY(&t->queue) && !t->stop)
            pthread_cond_wait(&t->work, &t->lock);
        pfs_piece_t *p = STAILQ_FIRST(&t->queue);
        if (!p)
            break; /* stopped and drained */
        STAILQ_REMOVE_HEAD(&t->queue, link);
        int64_t start = p->arrival_ns > t->free_at_ns ? p->arrival_ns : t->free_at_ns;
        int64_t cost = piece_cost(t, p);
        t->free_at_ns = start + cost;
        pthread_mutex_unlock(&t->lock);

        sleep_until(start + cost);

        pthread_mutex_lock(&t->lock);
        account_piece(t, p, cost);
        t->st.queued--;
        t->served_ticket = p->ticket;
        t->served_bytes += p->bytes;
        pthread_cond_broadcast(&t->done);
        free(p);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

/* Queue `p` on `t`; returns its ticket, and in *queued_end the target's
 * cumulative queued bytes including it. */
static uint64_t target_enqueue(pfs_target_t *t, pfs_piece_t *p, uint64_t *queued_end)
{
    pthread_mutex_lock(&t->lock);
    uint64_t ticket = p->ticket = ++t->next_ticket;
    t->queued_bytes += p->bytes;
    *queued_end = t->queued_bytes;
    if (++t->st.queued > t->st.max_queue)
        t->st.max_queue = t->st.queued;
    STAILQ_INSERT_TAIL(&t->queue, p, link);
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock); /* from here on the server may free p */
    return ticket;
}

/* Wait until piece `ticket` is served or, with `behind` > 0, until at most
 * `behind` bytes up to and including it wait unserved. */
static void target_wait(pfs_target_t *t, uint64_t ticket, uint64_t queued_end, uint64_t behind)
{
    pthread_mutex_lock(&t->lock);
    while (t->served_ticket < ticket && !(behind && t->served_bytes + behind >= queued_end))
        pthread_cond_wait(&t->done, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

static int target_init(pfs_target_t *t, const pfs_config_t *cfg)
{
    int rc;
    t->cfg = cfg;
    STAILQ_INIT(&t->queue);
    if ((rc = pthread_mutex_init(&t->lock, NULL)) != 0)
        return rc;
    if ((rc = pthread_cond_init(&t->work, NULL)) != 0)
        goto fail_work;
    if ((rc = pthread_cond_init(&t->done, NULL)) != 0)
        goto fail_done;
    if ((rc = pthread_create(&t->thread, NULL, target_main, t)) != 0)
        goto fail_thread;
    t->started = 1;
    return 0;
fail_thread:
    pthread_cond_destroy(&t->done);
fail_done:
    pthread_cond_destroy(&t->work);
fail_work:
    pthread_mutex_destroy(&t->lock);
    return rc;
}

/* Let the thread serve what is queued, then end it. */
static void target_stop(pfs_target_t *t)
{
    if (!t->started)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->started = 0;
}

static void target_destroy(pfs_target_t *t)
{
    target_stop(t);
    pthread_cond_destroy(&t->done);
    pthread_cond_destroy(&t->work);
    pthread_mutex_destroy(&t->lock);
}

/* ---- clients ---------------------------------------------------------- */

/* Thread group id of thread `tid` from /proc, or -1. */
static long proc_tgid(pid_t tid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nTgid:");
    long tgid;
    if (!p || sscanf(p + 6, "%ld", &tgid) != 1)
        return -1;
    return tgid;
}

/* Inode of the network namespace of thread `tid`: one simulated host. */
static long long proc_netns(pid_t tid)
{
    char path[64], link[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)tid);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0)
        return -1;
    link[n] = '\0';
    unsigned long long ino;
    if (sscanf(link, "net:[%llu]", &ino) != 1)
        return -1;
    return (long long)ino;
}

/* A thread that is gone (a release after exit) counts as its own client. */
static uint64_t resolve_client(const pfs_config_t *cfg, pid_t tid)
{
    if (cfg->client_kind == PFS_CLIENT_HOST) {
        long long ns = proc_netns(tid);
        return ns > 0 ? (uint64_t)ns : (uint64_t)tid;
    }
    long tgid = proc_tgid(tid);
    return tgid > 0 ? (uint64_t)tgid : (uint64_t)tid;
}

uint64_t pfs_model_client(pfs_model_t *m, pid_t tid)
{
    if (tid <= 0)
        return 0;
    int64_t now = now_ns();
    tid_entry_t *e = &m->tids[(unsigned)tid % TID_SLOTS];
    pthread_mutex_lock(&m->cache_lock);
    if (e->tid == tid && now - e->checked_ns < TID_TTL_NS) {
        uint64_t c = e->client;
        pthread_mutex_unlock(&m->cache_lock);
        return c;
    }
    pthread_mutex_unlock(&m->cache_lock);
    uint64_t c = resolve_client(&m->cfg, tid);
    pthread_mutex_lock(&m->cache_lock);
    *e = (tid_entry_t){.tid = tid, .client = c, .checked_ns = now};
    pthread_mutex_unlock(&m->cache_lock);
    return c;
}

/* The table entry of client `id`, or NULL when the table is full.
 * acct_lock held. */
static client_t *client_get(pfs_model_t *m, uint64_t id)
{
    size_t i = (size_t)((id * 0x9E3779B97F4A7C15ULL) >> 32) % CLIENT_SLOTS;
    for (size_t probe = 0; probe < CLIENT_SLOTS; probe++, i = (i + 1) % CLIENT_SLOTS) {
        client_t *c = &m->clients[i];
        if (c->used && c->st.id == id)
            return c;
        if (!c->used) {
            if (m->nclients >= PFS_MAX_CLIENTS)
                return NULL;
            memset(c, 0, sizeof *c);
            c->used = 1;
            c->st.id = id;
            m->nclients++;
            return c;
        }
    }
    return NULL;
}

/* Count a request of `client` and reserve its link for `len` bytes; returns
 * when the bytes have crossed the link (now without a link cap). */
static int64_t account_request(pfs_model_t *m, uint64_t client, uint64_t len, int is_write)
{
    int64_t now = now_ns(), arrival = now;
    pthread_mutex_lock(&m->acct_lock);
    if (is_write) {
        m->write_requests++;
        m->write_bytes += len;
    } else {
        m->read_requests++;
        m->read_bytes += len;
    }
    if (len > m->max_request)
        m->max_request = len;
    client_t *c = client_get(m, client);
    if (!c) {
        m->untracked++;
    } else {
        if (is_write) {
            c->st.write_requests++;
            c->st.write_bytes += len;
        } else {
            c->st.read_requests++;
            c->st.read_bytes += len;
        }
        if (m->cfg.client_bw) {
            int64_t start = c->link_free_ns > now ? c->link_free_ns : now;
            c->link_free_ns = start + transfer_ns(len, m->cfg.client_bw);
            arrival = c->link_free_ns;
        }
    }
    pthread_mutex_unlock(&m->acct_lock);
    return arrival;
}

/* ---- files ------------------------------------------------------------ */

static void file_forget_history(pfs_file_t *f, unsigned targets)
{
    free(f->owners);
    f->owners = NULL;
    f->nowners = 0;
    memset(f->dirty, 0, sizeof f->dirty);
    memset(f->sync_ticket, 0, targets * sizeof *f->sync_ticket);
}

pfs_file_t *pfs_model_file(pfs_model_t *m, uint64_t dev, uint64_t ino, uint64_t size,
                           int created)
{
    size_t b = (size_t)((ino * 0x9E3779B97F4A7C15ULL) >> 40) % FILE_BUCKETS;
    unsigned T = m->cfg.targets;
    int fixed = m->cfg.start_target;
    pthread_mutex_lock(&m->files_lock);
    pfs_file_t *f = m->files[b];
    while (f && !(f->dev == dev && f->ino == ino))
        f = f->next;
    if (!f) {
        f = calloc(1, sizeof *f);
        if (f)
            f->sync_ticket = calloc(T, sizeof *f->sync_ticket);
        if (!f || !f->sync_ticket || pthread_mutex_init(&f->lock, NULL) != 0) {
            if (f)
                free(f->sync_ticket);
            free(f);
            pthread_mutex_unlock(&m->files_lock);
            return NULL;
        }
        f->dev = dev;
        f->ino = ino;
        f->start = fixed >= 0 ? (unsigned)fixed : (unsigned)(ino % T);
        f->next = m->files[b];
        m->files[b] = f;
    }
    /* Lustre's default: the MDS starts each new file on the next OST. */
    unsigned start = 0;
    if (created)
        start = fixed >= 0 ? (unsigned)fixed : m->next_start++ % T;
    pthread_mutex_unlock(&m->files_lock);

    pthread_mutex_lock(&f->lock);
    if (created) {
        file_forget_history(f, T);
        f->start = start;
    }
    f->size = size;
    pthread_mutex_unlock(&f->lock);
    return f;
}

unsigned pfs_file_start(pfs_file_t *f)
{
    pthread_mutex_lock(&f->lock);
    unsigned s = f->start;
    pthread_mutex_unlock(&f->lock);
    return s;
}

void pfs_file_set_size(pfs_file_t *f, uint64_t size)
{
    pthread_mutex_lock(&f->lock);
    f->size = size;
    pthread_mutex_unlock(&f->lock);
}

/* Whether `client` writing `stripe` at `when` conflicts with its last
 * writer, and record it as the new one. f->lock held. */
static int stripe_conflict(const pfs_config_t *cfg, pfs_file_t *f, uint64_t stripe,
                           uint64_t client, int64_t when)
{
    if (stripe >= MAX_OWNED_STRIPES)
        return 0;
    if (stripe >= f->nowners) {
        uint64_t n = f->nowners ? f->nowners : 64;
        while (n <= stripe)
            n *= 2;
        if (n > MAX_OWNED_STRIPES)
            n = MAX_OWNED_STRIPES;
        owner_t *o = realloc(f->owners, n * sizeof *o);
        if (!o)
            return 0; /* no memory: no conflict detection for this stripe */
        memset(o + f->nowners, 0, (n - f->nowners) * sizeof *o);
        f->owners = o;
        f->nowners = n;
    }
    owner_t *o = &f->owners[stripe];
    int conflict = o->when_ns > 0 && o->client != client &&
                   when - o->when_ns < cfg->conflict_window_ns;
    o->client = client;
    o->when_ns = when;
    return conflict;
}

/* ---- requests ----------------------------------------------------------- */

/* The part of one request that falls on one target. */
typedef struct slot {
    unsigned target;
    uint64_t bytes;
    unsigned conflicts;
    uint64_t ticket, queued_end;
} slot_t;

/*
 * Split [off, off + len) of `f` over the targets. Stripes s and s' land on
 * the same target exactly when s - s' is a multiple of T, so slot
 * (s - first stripe) mod T collects them; there are min(stripes, T) slots.
 * Writes also count conflicts and grow the size.
 */
static slot_t *split_request(pfs_model_t *m, pfs_file_t *f, uint64_t client, uint64_t off,
                             uint64_t len, int is_write, int64_t when, size_t *nslots)
{
    const pfs_config_t *cfg = &m->cfg;
    uint64_t S = cfg->stripe, T = cfg->targets;
    uint64_t s0 = off / S, s1 = (off + len - 1) / S;
    uint64_t stripes = s1 - s0 + 1;
    size_t n = (size_t)(stripes < T ? stripes : T);
    slot_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return NULL;
    int extending = 0;
    pthread_mutex_lock(&f->lock);
    for (uint64_t s = s0; s <= s1; s++) {
        slot_t *sl = &slots[(s - s0) % T];
        uint64_t lo = s == s0 ? off : s * S;
        uint64_t hi = s == s1 ? off + len : (s + 1) * S;
        sl->target = (unsigned)((f->start + s) % T);
        sl->bytes += hi - lo;
        if (is_write && cfg->conflict_ns > 0 && stripe_conflict(cfg, f, s, client, when))
            sl->conflicts++;
    }
    if (is_write && off + len > f->size) {
        extending = 1;
        f->size = off + len;
    }
    pthread_mutex_unlock(&f->lock);
    if (extending) {
        pthread_mutex_lock(&m->acct_lock);
        m->extending_writes++;
        pthread_mutex_unlock(&m->acct_lock);
    }
    *nslots = n;
    return slots;
}

static void note_targets_written(pfs_model_t *m, uint64_t client, const slot_t *slots, size_t n)
{
    pthread_mutex_lock(&m->acct_lock);
    client_t *c = client_get(m, client);
    for (size_t i = 0; c && i < n; i++)
        bit_set(c->written, slots[i].target);
    pthread_mutex_unlock(&m->acct_lock);
}

/* Queue one piece per slot (all before waiting, so the targets work in
 * parallel). Returns 0, or ENOMEM with nothing queued after the failure. */
static int enqueue_slots(pfs_model_t *m, slot_t *slots, size_t n, enum piece_kind kind,
                         int64_t arrival, size_t *queued)
{
    for (*queued = 0; *queued < n; ++*queued) {
        slot_t *sl = &slots[*queued];
        pfs_piece_t *p = calloc(1, sizeof *p);
        if (!p)
            return ENOMEM;
        p->kind = kind;
        p->bytes = sl->bytes;
        p->conflicts = sl->conflicts;
        p->arrival_ns = arrival;
        sl->ticket = target_enqueue(&m->targets[sl->target], p, &sl->queued_end);
    }
    return 0;
}

static void wait_slots(pfs_model_t *m, const slot_t *slots, size_t n, uint64_t behind)
{
    for (size_t i = 0; i < n; i++)
        target_wait(&m->targets[slots[i].target], slots[i].ticket, slots[i].queued_end, behind);
}

int pfs_model_io(pfs_model_t *m, pfs_file_t *f, uint64_t client, uint64_t off, uint64_t len,
                 int is_write)
{
    int64_t arrival = account_request(m, client, len, is_write);
    if (len == 0)
        return 0;
    if (arrival > now_ns())
        sleep_until(arrival); /* the bytes cross the client's link first */
    size_t n, queued;
    slot_t *slots = split_request(m, f, client, off, len, is_write, arrival, &n);
    if (!slots)
        return ENOMEM;
    int rc = enqueue_slots(m, slots, n, is_write ? PIECE_WRITE : PIECE_READ, arrival, &queued);
    if (is_write) {
        note_targets_written(m, client, slots, queued);
        pthread_mutex_lock(&f->lock);
        for (size_t i = 0; i < queued; i++)
            bit_set(f->dirty, slots[i].target);
        pthread_mutex_unlock(&f->lock);
    }
    wait_slots(m, slots, queued, is_write ? m->cfg.write_behind : 0);
    free(slots);
    return rc;
}

int pfs_model_fsync(pfs_model_t *m, pfs_file_t *f, uint64_t client)
{
    pthread_mutex_lock(&m->acct_lock);
    m->fsyncs++;
    client_t *c = client_get(m, client);
    if (c)
        c->st.fsyncs++;
    pthread_mutex_unlock(&m->acct_lock);
    if (!m->cfg.durable)
        return 0;

    unsigned T = m->cfg.targets;
    slot_t *slots = calloc(T, sizeof *slots);
    if (!slots)
        return ENOMEM;
    size_t n = 0;
    int rc = 0;
    int64_t now = now_ns();
    pthread_mutex_lock(&f->lock);
    for (unsigned t = 0; t < T; t++) {
        slot_t *sl = &slots[n];
        sl->target = t;
        if (bit_get(f->dirty, t) && rc == 0) {
            /* FIFO target: the sync is served after every piece before it. */
            pfs_piece_t *p = calloc(1, sizeof *p);
            if (!p) {
                rc = ENOMEM; /* this target and the next stay dirty */
                continue;
            }
            p->kind = PIECE_SYNC;
            p->arrival_ns = now;
            f->sync_ticket[t] = target_enqueue(&m->targets[t], p, &sl->queued_end);
            f->dirty[t / 64] &= ~((uint64_t)1 << (t % 64));
        }
        if (f->sync_ticket[t]) {
            sl->ticket = f->sync_ticket[t];
            n++;
        }
    }
    pthread_mutex_unlock(&f->lock);
    wait_slots(m, slots, n, 0);
    free(slots);
    return rc;
}

/* ---- statistics --------------------------------------------------------- */

int pfs_model_snapshot(pfs_model_t *m, pfs_snapshot_t *out)
{
    memset(out, 0, sizeof *out);
    out->cfg = m->cfg;
    unsigned T = m->cfg.targets;
    out->targets = calloc(T, sizeof *out->targets);
    if (!out->targets)
        return ENOMEM;
    for (unsigned t = 0; t < T; t++) {
        pthread_mutex_lock(&m->targets[t].lock);
        out->targets[t] = m->targets[t].st;
        pthread_mutex_unlock(&m->targets[t].lock);
        out->targets[t].clients = 0;
    }
    int64_t now = now_ns();
    pthread_mutex_lock(&m->acct_lock);
    out->clients = calloc(m->nclients ? m->nclients : 1, sizeof *out->clients);
    if (!out->clients) {
        pthread_mutex_unlock(&m->acct_lock);
        pfs_snapshot_free(out);
        return ENOMEM;
    }
    for (size_t i = 0; i < CLIENT_SLOTS; i++) {
        const client_t *c = &m->clients[i];
        if (!c->used)
            continue;
        pfs_client_stats_t *cs = &out->clients[out->nclients++];
        *cs = c->st;
        cs->targets_written = 0;
        for (unsigned t = 0; t < T; t++) {
            if (bit_get(c->written, t)) {
                cs->targets_written++;
                out->targets[t].clients++;
            }
        }
    }
    out->write_requests = m->write_requests;
    out->write_bytes = m->write_bytes;
    out->read_requests = m->read_requests;
    out->read_bytes = m->read_bytes;
    out->fsyncs = m->fsyncs;
    out->extending_writes = m->extending_writes;
    out->max_request = m->max_request;
    out->clients_untracked = m->untracked;
    out->since_reset_s = (double)(now - m->reset_ns) / 1e9;
    pthread_mutex_unlock(&m->acct_lock);
    out->uptime_s = (double)(now - m->start_ns) / 1e9;
    return 0;
}

void pfs_snapshot_free(pfs_snapshot_t *s)
{
    free(s->targets);
    free(s->clients);
    s->targets = NULL;
    s->clients = NULL;
    s->nclients = 0;
}

void pfs_model_reset(pfs_model_t *m)
{
    for (unsigned t = 0; t < m->cfg.targets; t++) {
        pfs_target_t *tg = &m->targets[t];
        pthread_mutex_lock(&tg->lock);
        unsigned queued = tg->st.queued;
        memset(&tg->st, 0, sizeof tg->st);
        tg->st.queued = queued;
        tg->st.max_queue = queued;
        pthread_mutex_unlock(&tg->lock);
    }
    pthread_mutex_lock(&m->acct_lock);
    memset(m->clients, 0, CLIENT_SLOTS * sizeof *m->clients);
    m->nclients = 0;
    m->untracked = 0;
    m->write_requests = m->write_bytes = m->read_requests = m->read_bytes = 0;
    m->fsyncs = m->extending_writes = m->max_request = 0;
    m->reset_ns = now_ns();
    pthread_mutex_unlock(&m->acct_lock);
}

/* ---- life cycle ----------------------------------------------------------- */

int pfs_model_create(const pfs_config_t *cfg, pfs_model_t **out)
{
    pfs_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return ENOMEM;
    m->cfg = *cfg;
    m->start_ns = m->reset_ns = now_ns();
    m->clients = calloc(CLIENT_SLOTS, sizeof *m->clients);
    m->tids = calloc(TID_SLOTS, sizeof *m->tids);
    m->targets = calloc(cfg->targets, sizeof *m->targets);
    int rc = ENOMEM;
    if (!m->clients || !m->tids || !m->targets)
        goto fail;
    if ((rc = pthread_mutex_init(&m->acct_lock, NULL)) != 0)
        goto fail;
    if ((rc = pthread_mutex_init(&m->cache_lock, NULL)) != 0)
        goto fail_cache;
    if ((rc = pthread_mutex_init(&m->files_lock, NULL)) != 0)
        goto fail_files;
    for (unsigned t = 0; t < cfg->targets; t++) {
        if ((rc = target_init(&m->targets[t], &m->cfg)) != 0) {
            for (unsigned u = 0; u < t; u++)
                target_destroy(&m->targets[u]);
            goto fail_targets;
        }
    }
    *out = m;
    return 0;
fail_targets:
    pthread_mutex_destroy(&m->files_lock);
fail_files:
    pthread_mutex_destroy(&m->cache_lock);
fail_cache:
    pthread_mutex_destroy(&m->acct_lock);
fail:
    free(m->targets);
    free(m->tids);
    free(m->clients);
    free(m);
    return rc;
}

void pfs_model_stop(pfs_model_t *m)
{
    for (unsigned t = 0; t < m->cfg.targets; t++)
        target_stop(&m->targets[t]);
}

void pfs_model_destroy(pfs_model_t *m)
{
    if (!m)
        return;
    for (unsigned t = 0; t < m->cfg.targets; t++)
        target_destroy(&m->targets[t]);
    for (size_t b = 0; b < FILE_BUCKETS; b++) {
        pfs_file_t *f = m->files[b];
        while (f) {
            pfs_file_t *next = f->next;
            pthread_mutex_destroy(&f->lock);
            free(f->owners);
            free(f->sync_ticket);
            free(f);
            f = next;
        }
    }
    pthread_mutex_destroy(&m->files_lock);
    pthread_mutex_destroy(&m->cache_lock);
    pthread_mutex_destroy(&m->acct_lock);
    free(m->targets);
    free(m->tids);
    free(m->clients);
    free(m);
}
