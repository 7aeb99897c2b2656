/* SPDX-License-Identifier: BSD-3-Clause */
#include "log.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FWDIO_VERBOSE, read on first use (fwdio_init's thread) and kept: the
 * progress thread must not read the environment while the application may be
 * changing it. */
static atomic_int cached_level = -1;

int fwdioi_log_level(void)
{
    int level = atomic_load_explicit(&cached_level, memory_order_relaxed);
    if (level < 0) {
        const char *v = getenv("FWDIO_VERBOSE");
        level = v ? atoi(v) : 0;
        if (level < 0)
            level = 0;
        atomic_store_explicit(&cached_level, level, memory_order_relaxed);
    }
    return level;
}

/* The reports this thread holds back (fwdioi_report_hold), or NULL. */
static _Thread_local FILE *held;
static _Thread_local char *held_text;
static _Thread_local size_t held_len;

/* One line, written with one call: lines that several ranks print at once
 * stay whole (stderr is unbuffered: piece by piece, they interleave as
 * "fwdio: fwdio: ..."). */
static void print_line(const char *fmt, va_list ap)
{
    FILE *out = held ? held : stderr;
    char line[1024];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(line + 7, sizeof line - 8, fmt, ap);
    memcpy(line, "fwdio: ", 7);
    if (n >= 0 && (size_t)n < sizeof line - 8) {
        line[7 + n] = '\n';
        line[8 + n] = '\0';
        fputs(line, out);
    } else if (n >= 0) { /* longer than the line: the slow way */
        char *big = malloc((size_t)n + 9);
        if (big) {
            memcpy(big, "fwdio: ", 7);
            vsnprintf(big + 7, (size_t)n + 1, fmt, again);
            big[7 + n] = '\n';
            big[8 + n] = '\0';
            fputs(big, out);
            free(big);
        }
    }
    va_end(again);
}

void fwdioi_log(int level, const char *fmt, ...)
{
    if (fwdioi_log_level() < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    print_line(fmt, ap);
    va_end(ap);
}

void fwdioi_report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_line(fmt, ap);
    va_end(ap);
}

void fwdioi_report_hold(void)
{
    if (!held) /* without memory the reports go out at once, as always */
        held = open_memstream(&held_text, &held_len);
}

void fwdioi_report_release(int print)
{
    if (!held)
        return;
    fclose(held);
    held = NULL;
    if (print && held_len > 0) {
        fputs(held_text, stderr); /* one call: the lines stay together */
        fflush(stderr);
    }
    free(held_text);
    held_text = NULL;
    held_len = 0;
}

void fwdioi_log_mpi_failure(int mpi_rc, const char *call)
{
    if (mpi_rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", mpi_rc);
    fwdioi_log(FWDIOI_LOG_WARN, "%s failed: %s", call, text);
}
