/* SPDX-License-Identifier: BSD-3-Clause */
/* The node-shared area: segments, rings and doorbells (node_area.h). */
#include "node/node_area.h"

#include "fwdio.h"
#include "log.h"
#include "runtime.h"
#include "storage/fault.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Entries a ring holds, at most and at least: a segment's rings take at most
 * RING_BYTES (committed at init, so init costs O(1) per rank, not O(ranks of
 * the node)); a sender whose ring is full keeps the message until it has room. */
enum { RING_CAP_MAX = 256, RING_CAP_MIN = 16, RING_BYTES = 512 << 10 };
#define AREA_MAGIC 0x6677646961726562ull /* "fwdiareb" */

/* The first SEG_HEADER bytes of a segment. The counters are used in local
 * rank 0's segment only: the heap bytes committed on the node, and their
 * peak; the bytes the node-local tier's files hold in the node's local
 * store (local_capacity), and their peak. Every segment's owner publishes
 * its drained local copies (their bytes, the oldest one's version) and the
 * room its waiting writers lack, for node-wide eviction. */
enum { SEG_HEADER = 128 };
typedef struct seg_header {
    uint64_t magic, nlocal, ring_cap, heap_off, heap_size, node_budget;
    _Atomic uint64_t node_committed, node_peak;
    _Atomic uint64_t local_used, local_peak;
    _Atomic uint64_t local_pending; /* of local_used: files not drained yet */
    _Atomic uint64_t kept_bytes;    /* the owner's drained copies */
    _Atomic uint64_t kept_oldest;   /* their oldest version (UINT64_MAX: none) */
    _Atomic uint64_t room_short;    /* what the owner's waiting writer lacks */
    _Atomic uint64_t kept_evicting; /* the owner's copies being evicted, still counted */
} seg_header_t;

_Static_assert(sizeof(seg_header_t) <= SEG_HEADER, "the rings start at byte SEG_HEADER");

/* The ring for one producer in a segment: head and tail on lines of their own,
 * then ring_cap entries. */
typedef struct ring {
    _Alignas(64) _Atomic uint64_t head; /* written by the segment's owner */
    _Alignas(64) _Atomic uint64_t tail; /* written by the producer */
    _Alignas(64) fwdioi_area_entry_t entries[];
} ring_t;

_Static_assert(sizeof(fwdioi_area_entry_t) == 64, "an entry is one cache line");

static uint64_t ring_bytes(uint64_t cap)
{
    return sizeof(ring_t) + cap * sizeof(fwdioi_area_entry_t);
}

static ring_t *ring_at(const fwdioi_area_t *a, uint8_t *seg, int producer)
{
    return (ring_t *)(seg + SEG_HEADER + (size_t)producer * ring_bytes(a->ring_cap));
}

/* After the rings, one bit per heap chunk: set by the segment's owner once
 * the chunk is memory, cleared before it is given back. A peer reads only
 * what the marks say is memory (fwdioi_area_peer_committed). */
static uint64_t marks_bytes(uint64_t heap_size)
{
    uint64_t chunks = (heap_size + FWDIOI_AREA_CHUNK - 1) / FWDIOI_AREA_CHUNK;
    return (chunks + 63) / 64 * 8;
}

static _Atomic uint64_t *marks_of(const fwdioi_area_t *a, int local)
{
    return (_Atomic uint64_t *)(a->seg[local] + a->marks_off);
}

void fwdioi_area_mark_chunks(fwdioi_area_t *a, uint64_t off, uint64_t len, int committed)
{
    _Atomic uint64_t *m = marks_of(a, a->local);
    for (uint64_t c = off / FWDIOI_AREA_CHUNK; len && c <= (off + len - 1) / FWDIOI_AREA_CHUNK;
         c++) {
        uint64_t bit = (uint64_t)1 << (c % 64);
        if (committed)
            atomic_fetch_or_explicit(&m[c / 64], bit, memory_order_release);
        else
            atomic_fetch_and_explicit(&m[c / 64], ~bit, memory_order_release);
    }
}

int fwdioi_area_peer_committed(const fwdioi_area_t *a, int local, const uint8_t *p, uint64_t len)
{
    const uint8_t *heap = a->seg[local] + a->heap_off;
    if (p < heap || (uint64_t)(p - heap) >= a->heap_size || len > a->heap_size - (uint64_t)(p - heap))
        return 0;
    uint64_t off = (uint64_t)(p - heap), last = len ? off + len - 1 : off;
    const _Atomic uint64_t *m = marks_of(a, local);
    for (uint64_t c = off / FWDIOI_AREA_CHUNK; c <= last / FWDIOI_AREA_CHUNK; c++)
        if (!(atomic_load_explicit(&m[c / 64], memory_order_acquire) & ((uint64_t)1 << (c % 64))))
            return 0;
    return 1;
}

static seg_header_t *node_header(const fwdioi_area_t *a)
{
    return (seg_header_t *)a->seg[0];
}

/* The heap's backing (area_heap.h): a commit takes its bytes from the node's
 * budget, then allocates them in /dev/shm with fallocate, so that no later
 * touch of them can meet a full /dev/shm (a SIGBUS); either refusal is "no
 * room", and the caller sends over MPI. The pages are then faulted in at once
 * (MADV_POPULATE_WRITE, where the kernel has it): one call instead of a fault
 * per page on the copy. */
static int commit_range(void *ctx, uint64_t off, uint64_t len)
{
    fwdioi_area_t *a = ctx;
    seg_header_t *h = node_header(a);
    uint64_t cur = atomic_load_explicit(&h->node_committed, memory_order_relaxed);
    do {
        if (cur + len > a->node_budget)
            return -1;
    } while (!atomic_compare_exchange_weak_explicit(&h->node_committed, &cur, cur + len,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    int rc = 0;
    if (fwdioi_fault_armed()) { /* FWDIO_FAULT's shm_commit: a full /dev/shm */
        fwdioi_fault_t f = fwdioi_fault_on_path(FWDIOI_CALL_SHM_COMMIT, "/dev/shm", NULL);
        if (f.kind == FWDIOI_FAULT_ERROR)
            rc = f.err;
    }
    if (rc == 0)
        rc = posix_fallocate(a->own_fd, (off_t)(a->heap_off + off), (off_t)len);
    if (rc != 0) {
        atomic_fetch_sub_explicit(&h->node_committed, len, memory_order_relaxed);
        if (!a->told_no_room) {
            a->told_no_room = 1;
            fwdioi_log(FWDIOI_LOG_INFO, "node-shared area: no room in /dev/shm (%s); messages "
                       "that find none go over MPI", strerror(rc));
        }
        return -1;
    }
    uint64_t peak = atomic_load_explicit(&h->node_peak, memory_order_relaxed);
    while (peak < cur + len &&
           !atomic_compare_exchange_weak_explicit(&h->node_peak, &peak, cur + len,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
#ifdef MADV_POPULATE_WRITE
    (void)madvise(a->seg[a->local] + a->heap_off + off, len, MADV_POPULATE_WRITE);
#endif
    fwdioi_area_mark_chunks(a, off, len, 1);
    return 0;
}

static void uncommit_range(void *ctx, uint64_t off, uint64_t len)
{
    fwdioi_area_t *a = ctx;
    fwdioi_area_mark_chunks(a, off, len, 0); /* before it goes: no peer reads it from now on */
    if (fallocate(a->own_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(a->heap_off + off), (off_t)len) != 0)
        fwdioi_log(FWDIOI_LOG_WARN, "node-shared area: giving %llu bytes back failed: %s",
                   (unsigned long long)len, strerror(errno));
    atomic_fetch_sub_explicit(&node_header(a)->node_committed, len, memory_order_relaxed);
}

static void seg_name(char *out, size_t len, const char *prefix, int local)
{
    snprintf(out, len, "/%s.%d", prefix, local);
}

static void set_off(fwdioi_area_t *a, const char *what, int err)
{
    if (!a->why_off[0])
        snprintf(a->why_off, sizeof a->why_off, "%s: %s", what, strerror(err));
}

/* Create, size and map this rank's segment. 0, or -1 with why_off set. */
static int create_own(fwdioi_area_t *a, const char *prefix)
{
    char name[96];
    seg_name(name, sizeof name, prefix, a->local);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        set_off(a, "shm_open", errno);
        return -1;
    }
    /* The heap is a hole until used (commit_range); the header and the rings
     * are committed now, so a full /dev/shm is found here, not as a SIGBUS. */
    int rc = ftruncate(fd, (off_t)a->seg_size) != 0 ? errno : 0;
    if (rc == 0)
        rc = posix_fallocate(fd, 0, (off_t)a->heap_off); /* returns the error */
    void *p = MAP_FAILED;
    if (rc == 0) {
        p = mmap(NULL, a->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
        if (p == MAP_FAILED)
            rc = errno;
    }
    if (rc != 0) {
        close(fd);
        set_off(a, "sizing the segment in /dev/shm", rc);
        shm_unlink(name);
        return -1;
    }
    a->own_fd = fd;
    a->seg[a->local] = p;
    seg_header_t *h = p;
    h->magic = AREA_MAGIC;
    h->nlocal = (uint64_t)a->nlocal;
    h->ring_cap = a->ring_cap;
    h->heap_off = a->heap_off;
    h->heap_size = a->heap_size;
    h->node_budget = a->node_budget;
    atomic_init(&h->node_committed, 0);
    atomic_init(&h->node_peak, 0);
    atomic_init(&h->local_used, 0);
    atomic_init(&h->local_peak, 0);
    atomic_init(&h->local_pending, 0);
    atomic_init(&h->kept_bytes, 0);
    atomic_init(&h->kept_oldest, UINT64_MAX);
    atomic_init(&h->room_short, 0);
    atomic_init(&h->kept_evicting, 0);
    return 0;
}

static int map_peer(fwdioi_area_t *a, const char *prefix, int local)
{
    char name[96];
    seg_name(name, sizeof name, prefix, local);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        set_off(a, "shm_open of a peer's segment", errno);
        return -1;
    }
    void *p = mmap(NULL, a->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED) {
        set_off(a, "mmap of a peer's segment", err);
        return -1;
    }
    a->seg[local] = p;
    const seg_header_t *h = p;
    if (h->magic != AREA_MAGIC || h->nlocal != (uint64_t)a->nlocal || h->heap_off != a->heap_off ||
        h->heap_size != a->heap_size || h->ring_cap != a->ring_cap ||
        h->node_budget != a->node_budget) {
        set_off(a, "a peer's segment differs", EINVAL);
        return -1;
    }
    return 0;
}

/* Length of an abstract-namespace address (no terminating NUL counts). */
static socklen_t addr_len(const struct sockaddr_un *addr)
{
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(addr->sun_path + 1));
}

static int open_bell(fwdioi_area_t *a, const char *prefix)
{
    struct sockaddr_un *addrs = calloc((size_t)a->nlocal, sizeof *addrs);
    if (!addrs) {
        set_off(a, "doorbell addresses", ENOMEM);
        return -1;
    }
    a->bell_addr = addrs;
    for (int i = 0; i < a->nlocal; i++) {
        addrs[i].sun_family = AF_UNIX;
        /* Linux's abstract namespace: nothing in the file system to remove */
        snprintf(addrs[i].sun_path + 1, sizeof addrs[i].sun_path - 1, "%s.%d", prefix, i);
    }
    a->bell_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (a->bell_fd < 0) {
        set_off(a, "doorbell socket", errno);
        return -1;
    }
    if (bind(a->bell_fd, (struct sockaddr *)&addrs[a->local], addr_len(&addrs[a->local])) != 0) {
        set_off(a, "binding the doorbell", errno);
        return -1;
    }
    return 0;
}

static int ring_bell_checked(fwdioi_area_t *a, int to)
{
    const struct sockaddr_un *addr = &((const struct sockaddr_un *)a->bell_addr)[to];
    char b = 0;
    if (sendto(a->bell_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)addr,
               addr_len(addr)) == 1)
        return 0;
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}

/* Every rank of the node passed `ok`? (MPI failure: -1.) */
static int node_all(fwdioi_area_t *a, int ok, int *all)
{
    return MPI_Allreduce(&ok, all, 1, MPI_INT, MPI_MIN, a->node) == MPI_SUCCESS ? 0 : -1;
}

static void unmap_all(fwdioi_area_t *a)
{
    for (int i = 0; a->seg && i < a->nlocal; i++)
        if (a->seg[i])
            munmap(a->seg[i], a->seg_size);
    free(a->seg);
    a->seg = NULL;
    if (a->bell_fd >= 0)
        close(a->bell_fd);
    a->bell_fd = -1;
    if (a->own_fd >= 0)
        close(a->own_fd);
    a->own_fd = -1;
    free(a->bell_addr);
    a->bell_addr = NULL;
    fwdioi_heap_destroy(&a->heap);
    a->enabled = 0;
}

/* A name no other job of this node uses: local rank 0's pid and clock. */
static void make_prefix(char *out, size_t len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    static _Atomic unsigned counter;
    snprintf(out, len, "fwdio.%ld.%lx.%u", (long)getpid(),
             (unsigned long)(ts.tv_sec * 1000000000L + ts.tv_nsec),
             atomic_fetch_add(&counter, 1));
}

int fwdioi_area_setup(fwdioi_area_t *a, MPI_Comm comm, uint64_t heap_size, uint64_t node_budget,
                      unsigned idle_s)
{
    memset(a, 0, sizeof *a);
    a->idle_ns = idle_s == FWDIO_NODE_BUFFER_IDLE_KEEP ? UINT64_MAX
                                                       : (uint64_t)idle_s * 1000000000u;
    a->node = MPI_COMM_NULL;
    a->bell_fd = -1;
    a->own_fd = -1;

    int size, rank;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return FWDIO_EMPI;
    a->local_of_rank = malloc((size_t)size * sizeof *a->local_of_rank);
    /* [0]: memory here; [1]: the area wanted here. One rank that turned it
     * off (its own environment) turns it off everywhere, before any
     * collective of the node that rank would not join. */
    int mine[2] = {a->local_of_rank != NULL, heap_size > 0 && node_budget > 0}, all2[2] = {0, 0};
    if (MPI_Allreduce(mine, all2, 2, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (!all2[0])
        return FWDIO_ENOMEM;
    for (int r = 0; r < size; r++)
        a->local_of_rank[r] = -1;
    if (!all2[1]) {
        snprintf(a->why_off, sizeof a->why_off, "%s is off%s",
                 heap_size == 0 ? "shared_buffer" : node_budget == 0 ? "node_buffer" : "the area",
                 mine[1] ? " on another rank" : "");
        return FWDIO_OK;
    }

    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &a->node) !=
            MPI_SUCCESS ||
        MPI_Comm_set_errhandler(a->node, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        MPI_Comm_size(a->node, &a->nlocal) != MPI_SUCCESS ||
        MPI_Comm_rank(a->node, &a->local) != MPI_SUCCESS)
        return FWDIO_EMPI;
    a->rank_of_local = malloc((size_t)a->nlocal * sizeof *a->rank_of_local);
    a->seg = calloc((size_t)a->nlocal, sizeof *a->seg);
    int ok = a->rank_of_local && a->seg, all = 0;
    if (!ok)
        set_off(a, "memory for the area", ENOMEM);
    if (node_all(a, ok, &all) != 0)
        return FWDIO_EMPI;
    if (!all) {
        unmap_all(a);
        return FWDIO_OK;
    }
    if (MPI_Allgather(&rank, 1, MPI_INT, a->rank_of_local, 1, MPI_INT, a->node) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (a->nlocal < 2) { /* nobody to share with: a rank sends to itself directly */
        snprintf(a->why_off, sizeof a->why_off, "one rank on this node");
        unmap_all(a);
        return FWDIO_OK;
    }
    /* local rank 0's name and budget are the node's */
    struct {
        char prefix[64];
        uint64_t node_budget;
    } agreed;
    memset(&agreed, 0, sizeof agreed);
    make_prefix(agreed.prefix, sizeof agreed.prefix);
    agreed.node_budget = node_budget;
    if (MPI_Bcast(&agreed, (int)sizeof agreed, MPI_BYTE, 0, a->node) != MPI_SUCCESS)
        return FWDIO_EMPI;
    const char *prefix = agreed.prefix;
    node_budget = agreed.node_budget;
    a->ring_cap = RING_CAP_MAX;
    while (a->ring_cap > RING_CAP_MIN && (uint64_t)a->nlocal * ring_bytes(a->ring_cap) > RING_BYTES)
        a->ring_cap /= 2;
    a->node_budget = node_budget < FWDIOI_AREA_CHUNK ? FWDIOI_AREA_CHUNK : node_budget;
    /* a rank's heap: its cap, but never more than the node's whole budget */
    if (heap_size > a->node_budget)
        heap_size = a->node_budget;
    a->heap_size = (heap_size + FWDIOI_HEAP_ALIGN - 1) & ~(uint64_t)(FWDIOI_HEAP_ALIGN - 1);
    a->marks_off = SEG_HEADER + (uint64_t)a->nlocal * ring_bytes(a->ring_cap);
    a->heap_off = (a->marks_off + marks_bytes(a->heap_size) + 4095) & ~(uint64_t)4095;
    a->seg_size = a->heap_off + a->heap_size;

    /* 1: each rank makes its segment and doorbell; 2: maps everyone's; 3:
     * unlinks its own (every rank has it mapped) and checks each doorbell
     * answers. Every step is agreed on the node before the next. */
    int created = create_own(a, prefix) == 0;
    ok = created && open_bell(a, prefix) == 0;
    if (node_all(a, ok, &all) != 0)
        return FWDIO_EMPI;
    for (int i = 0; all && ok && i < a->nlocal; i++)
        if (i != a->local && map_peer(a, prefix, i) != 0)
            ok = 0;
    if (all && node_all(a, ok, &all) != 0)
        return FWDIO_EMPI;
    if (created) {
        char name[96];
        seg_name(name, sizeof name, prefix, a->local);
        shm_unlink(name);
    }
    for (int i = 0; all && ok && i < a->nlocal; i++)
        if (i != a->local && ring_bell_checked(a, i) != 0) {
            set_off(a, "a peer's doorbell does not answer", errno);
            ok = 0;
        }
    if (all && node_all(a, ok, &all) != 0)
        return FWDIO_EMPI;
    /* Idle chunks a rank keeps committed between messages: its share of the
     * node's budget, rounded down to chunks. */
    fwdioi_heap_backing_t back = {commit_range, uncommit_range, a, FWDIOI_AREA_CHUNK,
                                  (a->node_budget / (uint64_t)a->nlocal) &
                                      ~(uint64_t)(FWDIOI_AREA_CHUNK - 1)};
    if (all && fwdioi_heap_init(&a->heap, a->seg[a->local] + a->heap_off, a->heap_size, &back) !=
                   0) {
        set_off(a, "memory for the heap", ENOMEM);
        ok = 0;
    }
    if (all && node_all(a, ok, &all) != 0)
        return FWDIO_EMPI;
    if (!all) {
        if (!a->why_off[0])
            snprintf(a->why_off, sizeof a->why_off, "another rank of this node could not join");
        unmap_all(a);
        return FWDIO_OK;
    }
    for (int i = 0; i < a->nlocal; i++)
        a->local_of_rank[a->rank_of_local[i]] = i;
    a->enabled = 1;
    return FWDIO_OK;
}

void fwdioi_area_teardown(fwdioi_area_t *a)
{
    unmap_all(a);
    if (a->node != MPI_COMM_NULL)
        fwdioi_log_mpi_failure(MPI_Comm_free(&a->node), "MPI_Comm_free");
    free(a->rank_of_local);
    free(a->local_of_rank);
    a->rank_of_local = a->local_of_rank = NULL;
}

int fwdioi_area_local_index(const fwdioi_area_t *a, int rank)
{
    return a->enabled ? a->local_of_rank[rank] : -1;
}

int fwdioi_area_push(fwdioi_area_t *a, int to, const fwdioi_area_entry_t *e)
{
    FWDIOI_ASSERT_PROGRESS();
    ring_t *r = ring_at(a, a->seg[to], a->local);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (tail - head >= a->ring_cap)
        return -1;
    r->entries[tail % a->ring_cap] = *e;
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
    /* A full doorbell queue already holds a wakeup the peer has not read. */
    ring_bell_checked(a, to);
    return 0;
}

int fwdioi_area_pop(fwdioi_area_t *a, int from, fwdioi_area_entry_t *e)
{
    FWDIOI_ASSERT_PROGRESS();
    ring_t *r = ring_at(a, a->seg[a->local], from);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head == tail)
        return 0;
    *e = r->entries[head % a->ring_cap];
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
    return 1;
}

void fwdioi_area_drain_bell(fwdioi_area_t *a)
{
    FWDIOI_ASSERT_PROGRESS();
    char buf[64];
    while (recv(a->bell_fd, buf, sizeof buf, MSG_DONTWAIT) >= 0)
        ;
}

const uint8_t *fwdioi_area_peer_bytes(const fwdioi_area_t *a, int local, uint64_t off,
                                      uint64_t len)
{
    if (off < a->heap_off || off > a->seg_size || len > a->seg_size - off ||
        !fwdioi_area_peer_committed(a, local, a->seg[local] + off, len))
        return NULL;
    return a->seg[local] + off;
}

uint64_t fwdioi_area_own_offset(const fwdioi_area_t *a, const void *p, uint64_t len)
{
    if (!a->enabled || !fwdioi_heap_contains(&a->heap, p, len))
        return UINT64_MAX;
    return (uint64_t)((const uint8_t *)p - a->seg[a->local]);
}

void fwdioi_area_node_memory(const fwdioi_area_t *a, uint64_t *committed, uint64_t *peak)
{
    *committed = *peak = 0;
    if (!a->enabled)
        return;
    const seg_header_t *h = node_header(a);
    *committed = atomic_load_explicit(&h->node_committed, memory_order_relaxed);
    *peak = atomic_load_explicit(&h->node_peak, memory_order_relaxed);
}

int fwdioi_area_idle(fwdioi_area_t *a)
{
    FWDIOI_ASSERT_PROGRESS();
    if (!a->enabled)
        return 0;
    fwdioi_heap_memory_t m;
    fwdioi_heap_memory(&a->heap, &m);
    if (m.used > 0 || m.idle == 0) {
        a->empty_since_ns = 0;
        return 0;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    if (a->empty_since_ns == 0)
        a->empty_since_ns = now;
    if (now - a->empty_since_ns < a->idle_ns)
        return 1;
    fwdioi_heap_trim(&a->heap);
    a->empty_since_ns = 0;
    return 0;
}

int fwdioi_area_local_take(fwdioi_area_t *a, uint64_t capacity, uint64_t share,
                           uint64_t len)
{
    _Atomic uint64_t *used = &a->local_alone, *peak = NULL;
    uint64_t limit = share;
    if (a->enabled) {
        seg_header_t *h = node_header(a);
        used = &h->local_used;
        peak = &h->local_peak;
        limit = capacity;
    }
    uint64_t cur = atomic_load_explicit(used, memory_order_relaxed);
    do {
        if (len > limit || cur > limit - len)
            return -1;
    } while (!atomic_compare_exchange_weak_explicit(used, &cur, cur + len, memory_order_relaxed,
                                                    memory_order_relaxed));
    uint64_t p = peak ? atomic_load_explicit(peak, memory_order_relaxed) : 0;
    while (peak && p < cur + len &&
           !atomic_compare_exchange_weak_explicit(peak, &p, cur + len, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    return 0;
}

void fwdioi_area_local_give(fwdioi_area_t *a, uint64_t len)
{
    _Atomic uint64_t *used = a->enabled ? &node_header(a)->local_used : &a->local_alone;
    atomic_fetch_sub_explicit(used, len, memory_order_relaxed);
}

void fwdioi_area_local_usage(fwdioi_area_t *a, uint64_t *used, uint64_t *peak)
{
    if (!a->enabled) {
        *used = atomic_load_explicit(&a->local_alone, memory_order_relaxed);
        *peak = 0;
        return;
    }
    const seg_header_t *h = node_header(a);
    *used = atomic_load_explicit(&h->local_used, memory_order_relaxed);
    *peak = atomic_load_explicit(&h->local_peak, memory_order_relaxed);
}

void fwdioi_area_local_pending(fwdioi_area_t *a, uint64_t add, uint64_t sub)
{
    _Atomic uint64_t *pending =
        a->enabled ? &node_header(a)->local_pending : &a->local_alone_pending;
    if (add)
        atomic_fetch_add_explicit(pending, add, memory_order_relaxed);
    if (sub)
        atomic_fetch_sub_explicit(pending, sub, memory_order_relaxed);
}

uint64_t fwdioi_area_local_pending_now(fwdioi_area_t *a)
{
    const _Atomic uint64_t *pending =
        a->enabled ? &node_header(a)->local_pending : &a->local_alone_pending;
    return atomic_load_explicit(pending, memory_order_relaxed);
}

/* ---- node-wide eviction of drained local copies ---- */

static seg_header_t *header_of(const fwdioi_area_t *a, int local)
{
    return (seg_header_t *)a->seg[local];
}

void fwdioi_area_kept_publish(fwdioi_area_t *a, uint64_t bytes, uint64_t oldest,
                              uint64_t evicting)
{
    if (!a->enabled)
        return;
    seg_header_t *h = header_of(a, a->local);
    atomic_store_explicit(&h->kept_oldest, bytes ? oldest : UINT64_MAX, memory_order_relaxed);
    atomic_store_explicit(&h->kept_evicting, evicting, memory_order_release);
    atomic_store_explicit(&h->kept_bytes, bytes, memory_order_release);
}

uint64_t fwdioi_area_kept_node(const fwdioi_area_t *a, uint64_t *evicting)
{
    uint64_t sum = 0, out = 0;
    for (int i = 0; a->enabled && i < a->nlocal; i++) {
        const seg_header_t *h = header_of(a, i);
        sum += atomic_load_explicit(&h->kept_bytes, memory_order_acquire);
        out += atomic_load_explicit(&h->kept_evicting, memory_order_acquire);
    }
    if (evicting)
        *evicting = out;
    return sum + out;
}

int fwdioi_area_kept_oldest(const fwdioi_area_t *a, uint64_t *oldest, uint64_t *next)
{
    int holder = -1;
    uint64_t best = UINT64_MAX, second = UINT64_MAX;
    for (int i = 0; a->enabled && i < a->nlocal; i++) {
        const seg_header_t *h = header_of(a, i);
        if (atomic_load_explicit(&h->kept_bytes, memory_order_acquire) == 0)
            continue;
        uint64_t v = atomic_load_explicit(&h->kept_oldest, memory_order_relaxed);
        if (holder < 0 || v < best) { /* ties: the lower index */
            second = best;
            best = v;
            holder = i;
        } else if (v < second) {
            second = v;
        }
    }
    if (oldest)
        *oldest = best;
    if (next)
        *next = second;
    return holder;
}

void fwdioi_area_room_short_set(fwdioi_area_t *a, uint64_t bytes)
{
    if (a->enabled)
        atomic_store_explicit(&header_of(a, a->local)->room_short, bytes, memory_order_release);
}

uint64_t fwdioi_area_room_short_mine(const fwdioi_area_t *a)
{
    return a->enabled
               ? atomic_load_explicit(&header_of(a, a->local)->room_short, memory_order_acquire)
               : 0;
}

uint64_t fwdioi_area_room_short_node(const fwdioi_area_t *a)
{
    uint64_t sum = 0;
    for (int i = 0; a->enabled && i < a->nlocal; i++)
        sum += atomic_load_explicit(&header_of(a, i)->room_short, memory_order_acquire);
    return sum;
}

void fwdioi_area_room_short_cover(fwdioi_area_t *a, uint64_t freed)
{
    for (int i = 0; a->enabled && freed > 0 && i < a->nlocal; i++) {
        _Atomic uint64_t *s = &header_of(a, i)->room_short;
        uint64_t cur = atomic_load_explicit(s, memory_order_relaxed), cut;
        do {
            cut = cur < freed ? cur : freed;
        } while (cut > 0 && !atomic_compare_exchange_weak_explicit(s, &cur, cur - cut,
                                                                   memory_order_acq_rel,
                                                                   memory_order_relaxed));
        freed -= cut;
        if (cut > 0)
            ring_bell_checked(a, i);
    }
}

void fwdioi_area_ring(fwdioi_area_t *a, int local)
{
    if (a->enabled && local >= 0 && local < a->nlocal)
        ring_bell_checked(a, local);
}
