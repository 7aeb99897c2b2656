/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L

#include "app_util.h"
#include <string.h>
#include <stdio.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void app_quiet_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        nanosleep(&(struct timespec){.tv_nsec = 50000}, NULL);
}

/* A stand-in for a simulation step: floating-point work on a cache-resident array. */
static double compute_kernel(long iterations)
{
    enum { N = 1024 };
    static double a[N];
    double acc = 0.0;
    for (long it = 0; it < iterations; it++) {
        for (int i = 0; i < N; i++) {
            a[i] = a[i] * 0.999 + (double)i * 1e-6;
            acc += a[i];
        }
    }
    return acc;
}

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

long app_calibrate_slice(void)
{
    volatile double sink = 0.0;
    long iters = 1;
    double t;
    for (;;) {
        t = thread_cpu_seconds();
        sink += compute_kernel(iters);
        t = thread_cpu_seconds() - t;
        if (t > 0.02 || iters > (LONG_MAX >> 2))
            break;
        iters *= 2;
    }
    (void)sink;
    long slice = (long)((double)iters * APP_COMPUTE_SLICE_S / t);
    return slice > 0 ? slice : 1;
}

double app_compute(fwdio_runtime_t *rt, long slice_iters, double seconds)
{
    volatile double sink = 0.0;
    long slices = (long)(seconds / APP_COMPUTE_SLICE_S + 0.5);
    double t = MPI_Wtime();
    for (long s = 0; s < slices; s++) {
        sink += compute_kernel(slice_iters);
        if (rt)
            fwdio_poll(rt);
    }
    (void)sink;
    return MPI_Wtime() - t;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

app_spread_t app_spread_of(double *v, int n)
{
    if (n == 0)
        return (app_spread_t){0};
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return (app_spread_t){.median = median, .min = v[0], .max = v[n - 1], .n = n};
}

int app_make_run_dir(const char *parent, const char *prefix, char *out, size_t cap)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        if (!parent || !*parent)
            parent = getenv("TMPDIR");
        if (!parent || !*parent)
            parent = "/tmp";
        snprintf(out, cap, "%s/%s-XXXXXX", parent, prefix);
        if (!mkdtemp(out)) {
            fprintf(stderr, "%s: cannot create %s: %s\n", prefix, out, strerror(errno));
            out[0] = '\0';
        }
    }
    MPI_Bcast(out, (int)cap, MPI_CHAR, 0, MPI_COMM_WORLD);
    return out[0] ? 0 : -1;
}

double app_process_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int app_expand_host(const char *pattern, char *out, size_t cap)
{
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        return -1;
    host[sizeof host - 1] = '\0';
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        char one[2] = {*p, '\0'};
        const char *add = one;
        if (p[0] == '%' && (p[1] == 'h' || p[1] == '%'))
            add = *++p == 'h' ? host : "%";
        size_t len = strlen(add);
        if (n + len >= cap)
            return -1;
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}
