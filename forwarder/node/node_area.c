/* SPDX-License-Identifier: BSD-3-Clause */
/* The node-shared area: segments, rings and doorbells (node_area.h). */
#include "node/node_area.h"

#include "fwdio.h"
#include "log.h"
#include "runtime.h"

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

/* Entries a ring holds: a sender whose ring is full sends over MPI instead. */
enum { RING_CAP = 256 };
#define AREA_MAGIC 0x6677646961726561ull /* "fwdiarea" */

typedef struct seg_header {
    uint64_t magic, nlocal, ring_cap, heap_off, heap_size;
} seg_header_t;

/* The ring for one producer in a segment; head and tail on lines of their own. */
typedef struct ring {
    _Alignas(64) _Atomic uint64_t head; /* written by the segment's owner */
    _Alignas(64) _Atomic uint64_t tail; /* written by the producer */
    _Alignas(64) fwdioi_area_entry_t entries[RING_CAP];
} ring_t;

_Static_assert(sizeof(fwdioi_area_entry_t) == 64, "an entry is one cache line");

static ring_t *ring_at(uint8_t *seg, int producer)
{
    return (ring_t *)(seg + 64 + (size_t)producer * sizeof(ring_t));
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
    int rc = ftruncate(fd, (off_t)a->seg_size) != 0 ? errno : 0;
    if (rc == 0)
        rc = posix_fallocate(fd, 0, (off_t)a->seg_size); /* returns the error */
    void *p = MAP_FAILED;
    if (rc == 0) {
        p = mmap(NULL, a->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            rc = errno;
    }
    close(fd);
    if (rc != 0) {
        set_off(a, "sizing the segment in /dev/shm", rc);
        shm_unlink(name);
        return -1;
    }
    a->seg[a->local] = p;
    seg_header_t h = {AREA_MAGIC, (uint64_t)a->nlocal, a->ring_cap, a->heap_off, a->heap_size};
    memcpy(p, &h, sizeof h);
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
    void *p = mmap(NULL, a->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd);
    if (p == MAP_FAILED) {
        set_off(a, "mmap of a peer's segment", err);
        return -1;
    }
    a->seg[local] = p;
    seg_header_t h;
    memcpy(&h, p, sizeof h);
    if (h.magic != AREA_MAGIC || h.nlocal != (uint64_t)a->nlocal || h.heap_off != a->heap_off ||
        h.heap_size != a->heap_size) {
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

int fwdioi_area_setup(fwdioi_area_t *a, MPI_Comm comm, uint64_t heap_size)
{
    memset(a, 0, sizeof *a);
    a->node = MPI_COMM_NULL;
    a->bell_fd = -1;
    int size, rank;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return FWDIO_EMPI;
    a->local_of_rank = malloc((size_t)size * sizeof *a->local_of_rank);
    int have = a->local_of_rank != NULL, all_have = 0;
    if (MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return FWDIO_EMPI;
    if (!all_have)
        return FWDIO_ENOMEM;
    for (int r = 0; r < size; r++)
        a->local_of_rank[r] = -1;
    if (heap_size == 0) {
        snprintf(a->why_off, sizeof a->why_off, "shared_buffer is off");
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
    char prefix[64];
    make_prefix(prefix, sizeof prefix);
    if (MPI_Bcast(prefix, sizeof prefix, MPI_CHAR, 0, a->node) != MPI_SUCCESS)
        return FWDIO_EMPI;
    a->ring_cap = RING_CAP;
    a->heap_off = (64 + (uint64_t)a->nlocal * sizeof(ring_t) + 4095) & ~(uint64_t)4095;
    a->heap_size = (heap_size + FWDIOI_HEAP_ALIGN - 1) & ~(uint64_t)(FWDIOI_HEAP_ALIGN - 1);
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
    if (all && fwdioi_heap_init(&a->heap, a->seg[a->local] + a->heap_off, a->heap_size) != 0) {
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
    ring_t *r = ring_at(a->seg[to], a->local);
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
    ring_t *r = ring_at(a->seg[a->local], from);
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
    if (off < a->heap_off || off > a->seg_size || len > a->seg_size - off)
        return NULL;
    return a->seg[local] + off;
}

uint64_t fwdioi_area_own_offset(const fwdioi_area_t *a, const void *p, uint64_t len)
{
    if (!a->enabled || !fwdioi_heap_contains(&a->heap, p, len))
        return UINT64_MAX;
    return (uint64_t)((const uint8_t *)p - a->seg[a->local]);
}
