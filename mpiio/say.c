/* SPDX-License-Identifier: BSD-3-Clause */
/* What the layer says on stderr: only with FWDIO_VERBOSE, but for the few
 * things it must say whatever (the thread level), one line per call. */
#include "layer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpiio_verbose(void)
{
    const char *v = getenv("FWDIO_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

void mpiio_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "fwdio-mpiio: %s\n", line);
}
