/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio-progress-need: why fwdio needs MPI_THREAD_MULTIPLE. Measures how
 * long a message takes to move from a rank that hands it to MPI to a rank
 * that computes, when MPI is called only from the application's own calls
 * (what MPI_THREAD_FUNNELED or SERIALIZED would leave fwdio: progress
 * inside fwdio calls only) and when a second thread of each rank tests the
 * requests every 20 us while the application computes (what fwdio's
 * progress thread does, and what needs MPI_THREAD_MULTIPLE).
 *
 * Two ranks. Per repetition and size, each mode in turn: rank 1 (a
 * writer) posts the receive and computes for --compute seconds without
 * calling MPI; rank 0 (a sender) posts the send and waits for it. Printed:
 * when the sender's send completed and when the receiver's bytes were in
 * (both from the common start), medians over --reps. With progress in
 * calls only, a message larger than MPI's eager limit moves only once the
 * computing rank calls MPI again: every sender's bytes wait out the
 * writer's compute phase (and fill its staging budget meanwhile).
 */
#define _GNU_SOURCE
#include "cli.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { return MPI_Wtime(); }

static void spin_for(double seconds)
{
    double end = now() + seconds;
    volatile double x = 1.0;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
}

struct poller {
    MPI_Request *req;
    atomic_int stop;
    double done_at; /* when the test saw it complete, or 0 */
};

/* What a progress thread does: test the request every 20 us. */
static void *poll_thread(void *arg)
{
    struct poller *p = arg;
    while (!atomic_load(&p->stop)) {
        int flag = 0;
        MPI_Test(p->req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            p->done_at = now();
            return NULL;
        }
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* One transfer; returns the time from the common start to completion on
 * this rank (the sender's send, the receiver's receive). */
static double one(int rank, int threaded, char *buf, int size, double compute)
{
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    if (rank == 0)
        MPI_Isend(buf, size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req);
    else
        MPI_Irecv(buf, size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
    struct poller p = {.req = &req, .done_at = 0};
    pthread_t th;
    if (threaded)
        pthread_create(&th, NULL, poll_thread, &p);
    double done;
    if (rank == 1) {
        spin_for(compute); /* no MPI call: the application computes */
        if (threaded) {
            atomic_store(&p.stop, 1);
            pthread_join(th, NULL);
        }
        double before_wait = now();
        if (p.done_at == 0) /* not seen yet: the first MPI call after computing */
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        done = p.done_at ? p.done_at : (now() - before_wait < 1e-4 ? before_wait : now());
    } else {
        if (threaded) {
            while (p.done_at == 0) {
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
            }
            pthread_join(th, NULL);
            done = p.done_at;
        } else {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            done = now();
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return done - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { OPT_COMPUTE = 256, OPT_REPS, OPT_SIZE };
static const struct option options[] = {{"compute", required_argument, NULL, OPT_COMPUTE},
                                        {"reps", required_argument, NULL, OPT_REPS},
                                        {"size", required_argument, NULL, OPT_SIZE},
                                        CLI_HELP_OPTION,
                                        {0}};
struct opts {
    double compute;
    int reps;
    uint64_t size;
};

static int parse_option(cli_t *c, int key, void *ctx)
{
    struct opts *o = ctx;
    switch (key) {
    case OPT_COMPUTE: return cli_double(c, 0, 60, &o->compute);
    case OPT_REPS: return cli_int(c, 1, 1000, &o->reps);
    case OPT_SIZE: return cli_size(c, 1, (uint64_t)1 << 30, &o->size);
    default: return CLI_BAD;
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: mpiexec -n 2 fwdio-progress-need [options]\n"
                 "How long a message waits for a rank that computes, with progress only\n"
                 "inside the application's MPI calls and with a thread testing every 20 us.\n"
                 "  --compute SECONDS  the receiver's compute phase (default 0.2)\n"
                 "  --reps N           repetitions (default 5)\n"
                 "  --size BYTES       the large message (default 16M; a 4K one is sent too)\n"
                 "  -h, --help         this text\n" CLI_SIZE_GRAMMAR);
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct opts o = {.compute = 0.2, .reps = 5, .size = 16u << 20};
    cli_t c;
    cli_begin(&c, "fwdio-progress-need", argc, argv, options, rank != 0);
    int parsed = cli_parse(&c, parse_option, &o, usage, 0);
    if (parsed != 0) {
        MPI_Finalize();
        return cli_status(parsed);
    }
    if (size != 2 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "fwdio-progress-need: needs 2 ranks and MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc(1, o.size);
    const int sizes[2] = {4096, (int)o.size};
    double *t = calloc((size_t)o.reps, sizeof *t);
    if (rank == 0)
        printf("compute %.3f s on rank 1; medians of %d (ms from the start)\n", o.compute,
               o.reps);
    for (int s = 0; s < 2; s++)
        for (int threaded = 0; threaded < 2; threaded++) {
            double med[2];
            for (int r = 0; r < o.reps; r++)
                t[r] = one(rank, threaded, buf, sizes[s], o.compute);
            qsort(t, (size_t)o.reps, sizeof *t, cmp);
            double mine = t[o.reps / 2];
            MPI_Gather(&mine, 1, MPI_DOUBLE, med, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("%9d bytes, %-22s send done %8.2f ms, received %8.2f ms\n", sizes[s],
                       threaded ? "thread testing 20 us:" : "progress in calls:", 1e3 * med[0],
                       1e3 * med[1]);
        }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
