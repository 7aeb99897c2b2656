/* SPDX-License-Identifier: BSD-3-Clause */
#include "convert.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int same_run(const lfw_bin_header_t *a, const lfw_bin_header_t *b)
{
    return a->natoms == b->natoms && a->ntypes == b->ntypes &&
           !memcmp(&a->box, &b->box, sizeof a->box);
}

int lfw_conv_header(const unsigned char *raw, int64_t snapshot, const lfw_bin_header_t *first,
                    lfw_bin_header_t *h, char *why, size_t cap)
{
    char reason[160];
    if (lfw_bin_header_decode(raw, h, reason, sizeof reason)) {
        snprintf(why, cap, "snapshot %" PRId64 ": %s", snapshot, reason);
        return -1;
    }
    if (first && !same_run(first, h)) {
        snprintf(why, cap,
                 "snapshot %" PRId64 " has another atom count, type count or box than the first",
                 snapshot);
        return -1;
    }
    return 0;
}

int lfw_conv_format(lfw_text_format_t *fmt, const lfw_bin_header_t *first, int precision,
                    char *why, size_t cap)
{
    if (first->ntypes > INT32_MAX ||
        lfw_text_format_init(fmt, first->natoms, (int)first->ntypes, &first->box, precision)) {
        snprintf(why, cap, "no text format for %" PRId64 " atoms, %" PRIu32 " types",
                 first->natoms, first->ntypes);
        return -1;
    }
    return 0;
}

int lfw_conv_record(const lfw_text_format_t *fmt, const unsigned char *rec, int64_t id,
                    int64_t snapshot, char *out, char *why, size_t cap)
{
    int32_t got_id, type;
    double x[3];
    lfw_bin_record_decode(rec, &got_id, &type, x);
    if (got_id != id) {
        snprintf(why, cap,
                 "snapshot %" PRId64 ": record %" PRId64 " holds atom id %" PRId32
                 " (a hole reads as 0)",
                 snapshot, id, got_id);
        return -1;
    }
    if (lfw_text_line(fmt, out, id, type, x) != fmt->line_len) {
        snprintf(why, cap, "snapshot %" PRId64 ": atom %" PRId64 " does not fit \"%s\"", snapshot,
                 id, fmt->line);
        return -1;
    }
    return 0;
}

int lfw_conv_truncated(int64_t snapshot, int64_t id, char *why, size_t cap)
{
    snprintf(why, cap, "snapshot %" PRId64 ": file ends before atom %" PRId64, snapshot, id);
    return -1;
}

int lfw_conv_stray(uint64_t bytes, int64_t snapshots, char *why, size_t cap)
{
    if (bytes == 0 && snapshots == 0)
        snprintf(why, cap, "no snapshot in the file");
    else
        snprintf(why, cap, "%" PRIu64 " stray bytes after snapshot %" PRId64, bytes, snapshots);
    return -1;
}
