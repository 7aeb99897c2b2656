/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
#include "mpi_faults.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rule {
    char call[32];
    int rank;  /* -1: any */
    long nth;  /* 1-based */
    int tag;   /* -1: any */
    int valid;
} rule_t;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static rule_t rule;
static atomic_long seen;
static atomic_int fired;

static void parse(void)
{
    const char *v = getenv("MPI_FAULTS_RULE");
    rule.rank = -1;
    rule.nth = 1;
    rule.tag = -1;
    if (!v || !*v)
        return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    char *tok = strtok_r(buf, ":", &save);
    if (!tok)
        return;
    snprintf(rule.call, sizeof rule.call, "%s", tok);
    while ((tok = strtok_r(NULL, ":", &save))) {
        if (!strncmp(tok, "rank=", 5))
            rule.rank = atoi(tok + 5);
        else if (!strncmp(tok, "nth=", 4))
            rule.nth = atol(tok + 4);
        else if (!strncmp(tok, "tag=", 4))
            rule.tag = atoi(tok + 4);
        else {
            fprintf(stderr, "mpi_faults: bad condition \"%s\" in MPI_FAULTS_RULE\n", tok);
            abort();
        }
    }
    rule.valid = 1;
}

/* Whether this call of `call` (with `tag`, or -1) is the one to fail. */
static int should_fail(const char *call, int tag)
{
    pthread_once(&once, parse);
    if (!rule.valid || strcmp(rule.call, call))
        return 0;
    if (rule.tag >= 0 && tag != rule.tag)
        return 0;
    if (rule.rank >= 0) {
        int rank = -1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank != rule.rank)
            return 0;
    }
    if (atomic_fetch_add(&seen, 1) + 1 != rule.nth)
        return 0;
    atomic_fetch_add(&fired, 1);
    fprintf(stderr, "mpi_faults: %s fails here (call %ld)\n", call, rule.nth);
    return 1;
}

int mpi_faults_fired(void) { return atomic_load(&fired); }

/* The calls below replace MPI's for the shared libfwdio too, so the program
 * must export them; built with hidden visibility, they are exported only
 * where mpi.h declares them with default visibility (Open MPI's does,
 * MPICH's does not): say it here. */
#define MPI_FAULTS_EXPORT __attribute__((visibility("default")))

MPI_FAULTS_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
    /* fwdio's choice of a kept communicator is the only bitwise AND, and a
     * tier stream's step drains agree on a communicator of their own, named
     * so: both counted apart, so that N keeps naming a file's N-th agreement
     * whenever the step drains' agreements come */
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(comm, name, &len);
    const char *kind = op == MPI_BAND                          ? "MPI_Iallreduce(MPI_BAND)"
                       : !strcmp(name, "fwdio step drains") ? "MPI_Iallreduce(step drains)"
                                                              : "MPI_Iallreduce";
    if (should_fail(kind, -1))
        return MPI_ERR_OTHER;
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

MPI_FAULTS_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    if (should_fail("MPI_Iexscan", -1))
        return MPI_ERR_OTHER;
    return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}

MPI_FAULTS_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    if (should_fail("MPI_Comm_idup", -1))
        return MPI_ERR_OTHER;
    return PMPI_Comm_idup(comm, newcomm, request);
}

MPI_FAULTS_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    if (should_fail("MPI_Isend", tag))
        return MPI_ERR_OTHER;
    return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

MPI_FAULTS_EXPORT int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Request *request)
{
    if (should_fail("MPI_Issend", tag))
        return MPI_ERR_OTHER;
    return PMPI_Issend(buf, count, datatype, dest, tag, comm, request);
}

MPI_FAULTS_EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    if (should_fail("MPI_Improbe", tag))
        return MPI_ERR_OTHER;
    return PMPI_Improbe(source, tag, comm, flag, message, status);
}

MPI_FAULTS_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    if (should_fail("MPI_Irecv", tag))
        return MPI_ERR_OTHER;
    return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
}

MPI_FAULTS_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Request *request)
{
    if (should_fail("MPI_Imrecv", -1))
        return MPI_ERR_OTHER;
    return PMPI_Imrecv(buf, count, datatype, message, request);
}
