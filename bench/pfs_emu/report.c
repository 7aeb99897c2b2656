/* SPDX-License-Identifier: BSD-3-Clause */
/* Text and JSON renderings of a statistics snapshot (see report.h). */
#define _GNU_SOURCE
#include "report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; on allocation failure `failed` is set and later appends
 * are ignored. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
} sbuf_t;

__attribute__((format(printf, 2, 3))) static void put(sbuf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

static double ns_to_s(int64_t ns) { return (double)ns / 1e9; }
static double ns_to_ms(int64_t ns) { return (double)ns / 1e6; }

/* Busy time over the time since the reset: 1.0 = the target never idled. */
static double utilization(const pfs_snapshot_t *s, const pfs_target_stats_t *t)
{
    return s->since_reset_s > 0 ? ns_to_s(t->busy_ns) / s->since_reset_s : 0.0;
}

static const char *client_kind(const pfs_config_t *c)
{
    return c->client_kind == PFS_CLIENT_HOST ? "host" : "process";
}

static void text_report(sbuf_t *b, const pfs_snapshot_t *s, long pid)
{
    const pfs_config_t *c = &s->cfg;
    put(b, "pfs mount=%s pid=%ld\n", c->mountpoint, pid);
    put(b,
        "config targets=%u stripe=%" PRIu64 " bw=%" PRIu64 " latency_ms=%.3f client_bw=%" PRIu64
        " client=%s conflict_ms=%.3f conflict_window_ms=%.3f durable=%d sync_ms=%.3f"
        " write_behind=%" PRIu64 " start_target=",
        c->targets, c->stripe, c->bw, ns_to_ms(c->latency_ns), c->client_bw, client_kind(c),
        ns_to_ms(c->conflict_ns), ns_to_ms(c->conflict_window_ns), c->durable,
        ns_to_ms(c->sync_ns), c->write_behind);
    if (c->start_target >= 0)
        put(b, "%d", c->start_target);
    else
        put(b, "rr");
    put(b, " backing=%s\n", c->backing);
    put(b, "time uptime_s=%.3f since_reset_s=%.3f\n", s->uptime_s, s->since_reset_s);
    put(b,
        "total write_requests=%" PRIu64 " write_bytes=%" PRIu64 " read_requests=%" PRIu64
        " read_bytes=%" PRIu64 " fsyncs=%" PRIu64 " extending_writes=%" PRIu64
        " max_request=%" PRIu64 " clients=%zu clients_untracked=%" PRIu64 "\n",
        s->write_requests, s->write_bytes, s->read_requests, s->read_bytes, s->fsyncs,
        s->extending_writes, s->max_request, s->nclients, s->clients_untracked);
    for (unsigned i = 0; i < c->targets; i++) {
        const pfs_target_stats_t *t = &s->targets[i];
        put(b,
            "target %u write_bytes=%" PRIu64 " write_rpcs=%" PRIu64 " read_bytes=%" PRIu64
            " read_rpcs=%" PRIu64 " syncs=%" PRIu64 " conflicts=%" PRIu64
            " conflict_s=%.6f busy_s=%.6f utilization=%.4f queued=%u max_queue=%u clients=%u\n",
            i, t->write_bytes, t->write_rpcs, t->read_bytes, t->read_rpcs, t->syncs, t->conflicts,
            ns_to_s(t->conflict_ns), ns_to_s(t->busy_ns), utilization(s, t), t->queued,
            t->max_queue, t->clients);
    }
    for (size_t i = 0; i < s->nclients; i++) {
        const pfs_client_stats_t *cl = &s->clients[i];
        put(b,
            "client %" PRIu64 " write_bytes=%" PRIu64 " write_requests=%" PRIu64
            " read_bytes=%" PRIu64 " read_requests=%" PRIu64 " fsyncs=%" PRIu64
            " targets_written=%u\n",
            cl->id, cl->write_bytes, cl->write_requests, cl->read_bytes, cl->read_requests,
            cl->fsyncs, cl->targets_written);
    }
}

/* `text` as a JSON string; the paths are the only free text. */
static void json_string(sbuf_t *b, const char *text)
{
    put(b, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            put(b, "\\%c", *p);
        else if (*p < 0x20)
            put(b, "\\u%04x", *p);
        else
            put(b, "%c", *p);
    }
    put(b, "\"");
}

static void json_report(sbuf_t *b, const pfs_snapshot_t *s, long pid)
{
    const pfs_config_t *c = &s->cfg;
    put(b, "{\n  \"mount\": ");
    json_string(b, c->mountpoint);
    put(b, ",\n  \"pid\": %ld,\n  \"config\": {\"targets\": %u, \"stripe\": %" PRIu64
           ", \"bw\": %" PRIu64 ", \"latency_ms\": %.6f, \"client_bw\": %" PRIu64
           ", \"client\": \"%s\", \"conflict_ms\": %.6f, \"conflict_window_ms\": %.6f"
           ", \"durable\": %s, \"sync_ms\": %.6f, \"write_behind\": %" PRIu64
           ", \"start_target\": ",
        pid, c->targets, c->stripe, c->bw, ns_to_ms(c->latency_ns), c->client_bw,
        client_kind(c), ns_to_ms(c->conflict_ns), ns_to_ms(c->conflict_window_ns),
        c->durable ? "true" : "false", ns_to_ms(c->sync_ns), c->write_behind);
    if (c->start_target >= 0)
        put(b, "%d", c->start_target);
    else
        put(b, "\"rr\"");
    put(b, ", \"backing\": ");
    json_string(b, c->backing);
    put(b, "},\n  \"uptime_s\": %.6f,\n  \"since_reset_s\": %.6f,\n", s->uptime_s,
        s->since_reset_s);
    put(b,
        "  \"total\": {\"write_requests\": %" PRIu64 ", \"write_bytes\": %" PRIu64
        ", \"read_requests\": %" PRIu64 ", \"read_bytes\": %" PRIu64 ", \"fsyncs\": %" PRIu64
        ", \"extending_writes\": %" PRIu64 ", \"max_request\": %" PRIu64
        ", \"clients_untracked\": %" PRIu64 "},\n  \"targets\": [",
        s->write_requests, s->write_bytes, s->read_requests, s->read_bytes, s->fsyncs,
        s->extending_writes, s->max_request, s->clients_untracked);
    for (unsigned i = 0; i < c->targets; i++) {
        const pfs_target_stats_t *t = &s->targets[i];
        put(b,
            "%s\n    {\"target\": %u, \"write_bytes\": %" PRIu64 ", \"write_rpcs\": %" PRIu64
            ", \"read_bytes\": %" PRIu64 ", \"read_rpcs\": %" PRIu64 ", \"syncs\": %" PRIu64
            ", \"conflicts\": %" PRIu64 ", \"conflict_s\": %.9f, \"busy_s\": %.9f"
            ", \"utilization\": %.6f, \"queued\": %u, \"max_queue\": %u, \"clients\": %u}",
            i ? "," : "", i, t->write_bytes, t->write_rpcs, t->read_bytes, t->read_rpcs,
            t->syncs, t->conflicts, ns_to_s(t->conflict_ns), ns_to_s(t->busy_ns),
            utilization(s, t), t->queued, t->max_queue, t->clients);
    }
    put(b, "\n  ],\n  \"clients\": [");
    for (size_t i = 0; i < s->nclients; i++) {
        const pfs_client_stats_t *cl = &s->clients[i];
        put(b,
            "%s\n    {\"id\": %" PRIu64 ", \"write_bytes\": %" PRIu64
            ", \"write_requests\": %" PRIu64 ", \"read_bytes\": %" PRIu64
            ", \"read_requests\": %" PRIu64 ", \"fsyncs\": %" PRIu64 ", \"targets_written\": %u}",
            i ? "," : "", cl->id, cl->write_bytes, cl->write_requests, cl->read_bytes,
            cl->read_requests, cl->fsyncs, cl->targets_written);
    }
    put(b, "%s]\n}\n", s->nclients ? "\n  " : "");
}

char *pfs_report(const pfs_snapshot_t *s, long pid, int json, size_t *len)
{
    sbuf_t b = {0};
    if (json)
        json_report(&b, s, pid);
    else
        text_report(&b, s, pid);
    if (b.failed || !b.p) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
