/* SPDX-License-Identifier: BSD-3-Clause */
/* Counting MPI calls per rank through PMPI (mpi_counts.h). */
#define _GNU_SOURCE
#include "mpi_counts.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static _Atomic uint64_t calls[MPI_COUNTS_N], bytes[MPI_COUNTS_N];

static const char *const names[MPI_COUNTS_N] = {
#define MPI_COUNTS_NAME(n) #n,
    MPI_COUNTS_LIST(MPI_COUNTS_NAME)
#undef MPI_COUNTS_NAME
};

static void count(int what, int n, MPI_Datatype type)
{
    int size = 0;
    if (n > 0 && type != MPI_DATATYPE_NULL && PMPI_Type_size(type, &size) != MPI_SUCCESS)
        size = 0;
    atomic_fetch_add_explicit(&calls[what], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes[what], (uint64_t)(n > 0 ? n : 0) * (uint64_t)size,
                              memory_order_relaxed);
}

EXPORT void mpi_counts_get(mpi_counts_t *out)
{
    for (int i = 0; i < MPI_COUNTS_N; i++) {
        out->calls[i] = atomic_load(&calls[i]);
        out->bytes[i] = atomic_load(&bytes[i]);
    }
}

EXPORT void mpi_counts_diff(const mpi_counts_t *a, const mpi_counts_t *b, mpi_counts_t *out)
{
    for (int i = 0; i < MPI_COUNTS_N; i++) {
        out->calls[i] = b->calls[i] - a->calls[i];
        out->bytes[i] = b->bytes[i] - a->bytes[i];
    }
}

EXPORT const char *mpi_counts_name(int i) { return i >= 0 && i < MPI_COUNTS_N ? names[i] : "?"; }

EXPORT int MPI_Isend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    count(MPI_COUNTS_ISEND, n, t);
    return PMPI_Isend(buf, n, t, dest, tag, comm, req);
}

EXPORT int MPI_Issend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                      MPI_Request *req)
{
    count(MPI_COUNTS_ISSEND, n, t);
    return PMPI_Issend(buf, n, t, dest, tag, comm, req);
}

EXPORT int MPI_Irecv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    count(MPI_COUNTS_IRECV, n, t);
    return PMPI_Irecv(buf, n, t, src, tag, comm, req);
}

EXPORT int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                       MPI_Status *st)
{
    int rc = PMPI_Improbe(src, tag, comm, flag, msg, st);
    count(MPI_COUNTS_IMPROBE, 0, MPI_DATATYPE_NULL);
    if (rc == MPI_SUCCESS && *flag)
        count(MPI_COUNTS_IMPROBE_MATCHED, 0, MPI_DATATYPE_NULL);
    return rc;
}

EXPORT int MPI_Imrecv(void *buf, int n, MPI_Datatype t, MPI_Message *msg, MPI_Request *req)
{
    count(MPI_COUNTS_IMRECV, n, t);
    return PMPI_Imrecv(buf, n, t, msg, req);
}

EXPORT int MPI_Iallreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
                          MPI_Comm comm, MPI_Request *req)
{
    count(MPI_COUNTS_IALLREDUCE, n, t);
    return PMPI_Iallreduce(in, out, n, t, op, comm, req);
}

EXPORT int MPI_Iexscan(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
                       MPI_Comm comm, MPI_Request *req)
{
    count(MPI_COUNTS_IEXSCAN, n, t);
    return PMPI_Iexscan(in, out, n, t, op, comm, req);
}

EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    count(MPI_COUNTS_IBARRIER, 0, MPI_DATATYPE_NULL);
    return PMPI_Ibarrier(comm, req);
}

EXPORT int MPI_Ibcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm,
                      MPI_Request *req)
{
    count(MPI_COUNTS_IBCAST, n, t);
    return PMPI_Ibcast(buf, n, t, root, comm, req);
}

EXPORT int MPI_Iallgather(const void *in, int n, MPI_Datatype t, void *out, int rn,
                          MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    count(MPI_COUNTS_IALLGATHER, n, t);
    return PMPI_Iallgather(in, n, t, out, rn, rt, comm, req);
}

EXPORT int MPI_Ireduce_scatter_block(const void *in, void *out, int n, MPI_Datatype t,
                                     MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    count(MPI_COUNTS_IREDUCE_SCATTER, n, t);
    return PMPI_Ireduce_scatter_block(in, out, n, t, op, comm, req);
}

EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *out, MPI_Request *req)
{
    count(MPI_COUNTS_COMM_IDUP, 0, MPI_DATATYPE_NULL);
    return PMPI_Comm_idup(comm, out, req);
}

EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    count(MPI_COUNTS_COMM_DUP, 0, MPI_DATATYPE_NULL);
    return PMPI_Comm_dup(comm, out);
}

EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    count(MPI_COUNTS_COMM_FREE, 0, MPI_DATATYPE_NULL);
    return PMPI_Comm_free(comm);
}

EXPORT int MPI_Allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
                         MPI_Comm comm)
{
    count(MPI_COUNTS_ALLREDUCE, n, t);
    return PMPI_Allreduce(in, out, n, t, op, comm);
}

EXPORT int MPI_Allgather(const void *in, int n, MPI_Datatype t, void *out, int rn,
                         MPI_Datatype rt, MPI_Comm comm)
{
    count(MPI_COUNTS_ALLGATHER, n, t);
    return PMPI_Allgather(in, n, t, out, rn, rt, comm);
}

EXPORT int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    count(MPI_COUNTS_BCAST, n, t);
    return PMPI_Bcast(buf, n, t, root, comm);
}

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    count(MPI_COUNTS_BARRIER, 0, MPI_DATATYPE_NULL);
    return PMPI_Barrier(comm);
}

EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    count(MPI_COUNTS_COMM_SPLIT_TYPE, 0, MPI_DATATYPE_NULL);
    return PMPI_Comm_split_type(comm, type, key, info, out);
}

/* Peak resident set of this process, in KiB (0 when unknown). */
static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    long kib = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

EXPORT int MPI_Finalize(void)
{
    const char *prefix = getenv("FWDIO_MPI_COUNTS");
    int rank = 0;
    if (prefix && *prefix && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", prefix, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            for (int i = 0; i < MPI_COUNTS_N; i++)
                fprintf(f, "%s %llu %llu\n", names[i], (unsigned long long)atomic_load(&calls[i]),
                        (unsigned long long)atomic_load(&bytes[i]));
            fprintf(f, "VMHWM_KIB %ld 0\n", peak_rss_kib());
            fclose(f);
        } else {
            fprintf(stderr, "mpi_counts: cannot write %s\n", path);
        }
    }
    return PMPI_Finalize();
}
