/* SPDX-License-Identifier: BSD-3-Clause */
/* The fake of a session's communicator calls (fake_comm.h). */
#include "fake_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STARTED = 16 };

static fake_coll_t started[MAX_STARTED];
static size_t nstarted;
static int fail_rc[FAKE_COMM_NCALLS];
static int dups, frees;
static int counts[FAKE_COMM_NCALLS];

size_t fake_comm_started(void) { return nstarted; }

int fake_comm_take(fake_coll_t *out)
{
    if (nstarted == 0)
        return 0;
    *out = started[0];
    memmove(started, started + 1, --nstarted * sizeof *started);
    return 1;
}

void fake_comm_fail(fake_comm_call_t call, int rc) { fail_rc[call] = rc; }
int fake_comm_count(fake_comm_call_t call) { return counts[call]; }
int fake_comm_dups(void) { return dups; }
int fake_comm_frees(void) { return frees; }

void fake_comm_reset(void)
{
    nstarted = 0;
    memset(fail_rc, 0, sizeof fail_rc);
    memset(counts, 0, sizeof counts);
    dups = frees = 0;
}

/* The next call of `call` fails if the test said so (once). */
static int injected(fake_comm_call_t call)
{
    int rc = fail_rc[call];
    fail_rc[call] = MPI_SUCCESS;
    return rc;
}

static int start(fake_comm_call_t call, const void *in, void *out, int count, MPI_Datatype type,
                 MPI_Op op, MPI_Request *request)
{
    int rc = injected(call);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nstarted == MAX_STARTED) {
        fprintf(stderr, "fake comm: more than %d collectives in flight\n", MAX_STARTED);
        abort();
    }
    started[nstarted++] = (fake_coll_t){call, in, out, count, type, op};
    counts[call]++;
    *request = MPI_REQUEST_NULL; /* the fake runtime tracks it by its callback */
    return MPI_SUCCESS;
}

/* ---- the MPI library's calls ---- */

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    (void)comm;
    int rc = start(FAKE_COMM_IDUP, NULL, newcomm, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, request);
    if (rc == MPI_SUCCESS) {
        *newcomm = MPI_COMM_SELF;
        dups++;
    }
    return rc;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    (void)comm;
    (void)errhandler;
    return injected(FAKE_COMM_SET_ERRHANDLER);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    if (*comm == MPI_COMM_NULL) {
        fprintf(stderr, "fake comm: MPI_Comm_free of MPI_COMM_NULL\n");
        abort();
    }
    *comm = MPI_COMM_NULL;
    frees++;
    return MPI_SUCCESS;
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    (void)comm;
    fake_comm_call_t call = count == 1 && datatype == MPI_UINT64_T && op == MPI_BAND
                                ? FAKE_COMM_PICK
                                : FAKE_COMM_ALLREDUCE;
    return start(call, sendbuf, recvbuf, count, datatype, op, request);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request)
{
    (void)comm;
    return start(FAKE_COMM_EXSCAN, sendbuf, recvbuf, count, datatype, op, request);
}

/* Every code is its own class: what a test injects is what the error says. */
int MPI_Error_class(int errorcode, int *errorclass)
{
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "fake MPI error %d", errorcode);
    return MPI_SUCCESS;
}
