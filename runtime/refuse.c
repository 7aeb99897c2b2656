/* SPDX-License-Identifier: BSD-3-Clause */
/* Refusing a setting with its reason, printed by the right ranks (refuse.h). */
#include "refuse.h"

#include "fwdio.h"
#include "log.h"

#include <stdarg.h>

void fwdioi_origins_init(fwdioi_origins_t *o, int rank, int rank0_only_if_shared, FILE *out)
{
    o->describe = NULL;
    o->rank = rank;
    o->rank0_only_if_shared = rank0_only_if_shared;
    o->out = out;
    o->shared = 1;
}

const char *fwdioi_origin(fwdioi_origins_t *o, const char *key, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!o || !o->describe) {
        if (o)
            o->shared = 0;
        return buf;
    }
    char text[FWDIOI_ORIGIN_LEN];
    int shared = o->describe(o, key, text, sizeof text);
    o->shared = o->shared && shared;
    snprintf(buf, len, " (%s)", text);
    return buf;
}

int fwdioi_refuse(fwdioi_origins_t *o, const char *fmt, ...)
{
    int print = 1, rank = -1;
    if (o) {
        rank = o->rank;
        print = !o->rank0_only_if_shared || !o->shared || rank <= 0;
        o->shared = 1;
    }
    if (!print)
        return FWDIO_EINVAL;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char rank_text[32] = "";
    if (rank > 0)
        snprintf(rank_text, sizeof rank_text, "rank %d: ", rank);
    if (o && o->out) {
        fprintf(o->out, "fwdio: %s%s\n", rank_text, text);
        fflush(o->out);
    } else {
        fwdioi_report("%s%s", rank_text, text);
    }
    return FWDIO_EINVAL;
}
