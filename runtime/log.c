#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

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

static void print_line(const char *fmt, va_list ap)
{
    fputs("fwdio: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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
