/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the demo and the benchmarks (not part of the library):
 * a barrier that sleeps, a calibrated compute phase, and the
 * median/min/max summary the benchmarks report.
 */
#ifndef FWDIO_APP_UTIL_H
#define FWDIO_APP_UTIL_H

#include "fwdio.h"

#include <mpi.h>
#include <stdint.h>

/** Seconds of CPU in one compute slice; app_compute polls fwdio after each. */
#define APP_COMPUTE_SLICE_S 0.001

/**
 * A barrier that sleeps instead of spinning (MPI_Ibarrier + MPI_Test +
 * nanosleep). With more ranks than cores, ranks spinning in MPI_Barrier take
 * the CPU from the ranks still working.
 */
void app_quiet_barrier(MPI_Comm comm);

/**
 * Iterations of the compute kernel that take about APP_COMPUTE_SLICE_S of CPU
 * on this rank. Measured in thread CPU time, so a rank descheduled while
 * calibrating (more ranks than cores) does not get too little work.
 */
long app_calibrate_slice(void);

/**
 * Compute about `seconds` of CPU in slices of `slice_iters` iterations, calling
 * fwdio_poll(rt) after each slice when rt is not NULL. Returns the wall time.
 */
double app_compute(fwdio_runtime_t *rt, long slice_iters, double seconds);

/**
 * Collective over MPI_COMM_WORLD: rank 0 makes a fresh directory
 * "<parent>/<prefix>-XXXXXX" (parent NULL or empty: $TMPDIR, else /tmp) with
 * mkdtemp, and every rank gets its name in out[0 .. cap). Returns 0, or -1 on
 * every rank (with a message from rank 0) when it cannot be made.
 */
int app_make_run_dir(const char *parent, const char *prefix, char *out, size_t cap);

/* User plus system CPU seconds of this process, all its threads (the
 * application's, fwdio's progress and I/O threads, MPI's), since it started;
 * 0 if getrusage fails. */
double app_process_cpu_s(void);

/**
 * `pattern` with "%h" replaced by this host's name and "%%" by '%', as fwdio
 * reads local_dir, into out[0 .. cap). Returns 0, or -1 when it does not fit
 * or the host name is unknown.
 */
int app_expand_host(const char *pattern, char *out, size_t cap);

/** Median, min and max of n values (n = 0: all zero). */
typedef struct app_spread {
    double median, min, max;
    int n;
} app_spread_t;

/** Summarise v[0 .. n); sorts v in place. */
app_spread_t app_spread_of(double *v, int n);

#endif
