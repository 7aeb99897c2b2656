#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int fwdioi_log_level(void)
{
    /* Read once; a data race on the cached value is benign but TSan would
     * flag it, so every call reads the environment (cheap next to logging). */
    const char *v = getenv("FWDIO_VERBOSE");
    return v ? atoi(v) : 0;
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
