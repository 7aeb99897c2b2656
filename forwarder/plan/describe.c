/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fwdio_plan_describe: the plan of a file as a table or JSON, for a real run
 * or a what-if topology. Shares the plan and placement code with fwdio_open,
 * so what it prints is what a run would do.
 */
#include "plan/describe.h"

#include "state.h"
#include "plan/placement.h"

#include <stdlib.h>
#include <string.h>

static const char *layout_name(fwdio_layout_t l)
{
    return l == FWDIO_LAYOUT_CYCLIC ? "cyclic" : l == FWDIO_LAYOUT_TARGETS ? "targets" : "block";
}

static const char *placement_name(fwdio_placement_t p)
{
    return p == FWDIO_PLACEMENT_STRIDE ? "stride" : p == FWDIO_PLACEMENT_LIST ? "list" : "spread";
}

/* A writer's stripes are listed up to this many: a stream's plan covers
 * FWDIO_STREAM_MAX_SIZE bytes, whose stripes could not be walked one by one
 * (its writers take turns in the same way all along). */
#define LISTED_STRIPES ((uint64_t)1 << 16)

/* What one writer owns. */
typedef struct writer_view {
    uint64_t nstripes, bytes;
    int truncated; /* only the first LISTED_STRIPES stripes are in ranges */
    uint64_t *ranges; /* pairs [first, last] of consecutive stripes */
    size_t nranges;
    uint64_t *targets; /* sorted target ids */
    size_t ntargets;
} writer_view_t;

static int view_writer(const fwdioi_plan_t *p, int w, writer_view_t *v, unsigned char *seen)
{
    memset(v, 0, sizeof *v);
    v->nstripes = fwdioi_plan_writer_stripes(p, w);
    v->bytes = fwdioi_plan_writer_bytes(p, w);
    size_t cap = 0;
    if (p->ntargets)
        memset(seen, 0, p->ntargets);
    v->truncated = v->nstripes > LISTED_STRIPES;
    for (uint64_t i = 0; i < v->nstripes && i < LISTED_STRIPES; i++) {
        uint64_t s = fwdioi_plan_writer_stripe_at(p, w, i);
        if (v->nranges > 0 && v->ranges[2 * v->nranges - 1] + 1 == s) {
            v->ranges[2 * v->nranges - 1] = s;
        } else {
            if (v->nranges == cap) {
                cap = cap ? 2 * cap : 8;
                uint64_t *r = realloc(v->ranges, 2 * cap * sizeof *r);
                if (!r)
                    return FWDIO_ENOMEM;
                v->ranges = r;
            }
            v->ranges[2 * v->nranges] = v->ranges[2 * v->nranges + 1] = s;
            v->nranges++;
        }
        if (p->ntargets)
            seen[fwdioi_plan_stripe_target(p, s)] = 1;
    }
    for (uint64_t t = 0; t < p->ntargets; t++)
        v->ntargets += seen[t];
    v->targets = malloc((v->ntargets ? v->ntargets : 1) * sizeof *v->targets);
    if (!v->targets)
        return FWDIO_ENOMEM;
    size_t n = 0;
    for (uint64_t t = 0; t < p->ntargets; t++)
        if (seen[t])
            v->targets[n++] = t;
    return FWDIO_OK;
}

static void print_id_ranges(FILE *out, const uint64_t *pairs, size_t n, size_t max_shown)
{
    for (size_t i = 0; i < n && i < max_shown; i++) {
        if (pairs[2 * i] == pairs[2 * i + 1])
            fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)pairs[2 * i]);
        else
            fprintf(out, "%s%llu-%llu", i ? "," : "", (unsigned long long)pairs[2 * i],
                    (unsigned long long)pairs[2 * i + 1]);
    }
    if (n > max_shown)
        fprintf(out, ",...");
}

/* Consecutive ids as [first, last] pairs (for printing targets like stripes). */
static size_t to_pairs(const uint64_t *ids, size_t n, uint64_t *pairs)
{
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        if (np > 0 && pairs[2 * np - 1] + 1 == ids[i]) {
            pairs[2 * np - 1] = ids[i];
        } else {
            pairs[2 * np] = pairs[2 * np + 1] = ids[i];
            np++;
        }
    }
    return np;
}

static void print_table(FILE *out, const fwdioi_plan_t *p, const fwdio_options_t *o,
                        const fwdioi_topology_t *topo, const writer_view_t *views,
                        uint64_t max_targets)
{
    fprintf(out,
            "fwdio plan: %llu bytes, %d ranks on %d node(s); %d writers (%s), layout %s, "
            "stripe %llu, write unit %llu, %llu stripes, storage targets %llu\n",
            (unsigned long long)p->size, p->nranks, topo->nnodes, p->nwriters,
            placement_name(o->placement), layout_name(p->layout),
            (unsigned long long)p->stripe_size, (unsigned long long)p->write_size,
            (unsigned long long)p->nstripes, (unsigned long long)p->ntargets);
    fprintf(out, "%6s %7s %5s %7s %5s %5s %15s %8s  %-24s %s\n", "writer", "rank", "node",
            "package", "numa", "core", "bytes", "stripes", "stripe ids", "targets");
    for (int w = 0; w < p->nwriters; w++) {
        const fwdioi_rank_place_t place = fwdioi_topology_place(topo, p->writer_ranks[w]);
        const fwdioi_rank_place_t *pl = &place;
        const writer_view_t *v = &views[w];
        fprintf(out, "%6d %7d %5d %7d %5d %5d %15llu %8llu  ", w, p->writer_ranks[w], pl->node,
                pl->package, pl->numa, pl->core, (unsigned long long)v->bytes,
                (unsigned long long)v->nstripes);
        char ids[64];
        FILE *mem = fmemopen(ids, sizeof ids, "w");
        if (mem) {
            print_id_ranges(mem, v->ranges, v->nranges, 3);
            if (v->truncated && v->nranges <= 3)
                fprintf(mem, ",...");
            fclose(mem);
            ids[sizeof ids - 1] = '\0';
        } else {
            ids[0] = '\0';
        }
        fprintf(out, "%-24s ", ids);
        uint64_t *pairs = malloc((v->ntargets ? v->ntargets : 1) * 2 * sizeof *pairs);
        if (pairs && v->ntargets) {
            print_id_ranges(out, pairs, to_pairs(v->targets, v->ntargets, pairs), 4);
        } else {
            fprintf(out, "-");
        }
        free(pairs);
        fputc('\n', out);
    }
    if (p->ntargets)
        fprintf(out, "max targets per writer: %llu (ceil(T/W) = %llu)\n",
                (unsigned long long)max_targets,
                (unsigned long long)((p->ntargets + (uint64_t)p->nwriters - 1) /
                                     (uint64_t)p->nwriters));
}

static void print_json(FILE *out, const fwdioi_plan_t *p, const fwdio_options_t *o,
                       const fwdioi_topology_t *topo, const writer_view_t *views,
                       uint64_t max_targets)
{
    fprintf(out,
            "{\"size\": %llu, \"ranks\": %d, \"nodes\": %d, \"placement\": \"%s\", "
            "\"layout\": \"%s\", \"stripe_size\": %llu, \"write_size\": %llu, "
            "\"nstripes\": %llu, \"storage_targets\": %llu,\n \"writers\": [",
            (unsigned long long)p->size, p->nranks, topo->nnodes, placement_name(o->placement),
            layout_name(p->layout), (unsigned long long)p->stripe_size,
            (unsigned long long)p->write_size, (unsigned long long)p->nstripes,
            (unsigned long long)p->ntargets);
    for (int w = 0; w < p->nwriters; w++) {
        const fwdioi_rank_place_t place = fwdioi_topology_place(topo, p->writer_ranks[w]);
        const fwdioi_rank_place_t *pl = &place;
        const writer_view_t *v = &views[w];
        fprintf(out,
                "%s\n  {\"writer\": %d, \"rank\": %d, \"node\": %d, \"package\": %d, "
                "\"numa\": %d, \"core\": %d, \"bytes\": %llu, \"nstripes\": %llu, \"stripes\": [",
                w ? "," : "", w, p->writer_ranks[w], pl->node, pl->package, pl->numa, pl->core,
                (unsigned long long)v->bytes, (unsigned long long)v->nstripes);
        for (size_t i = 0; i < v->nranges; i++)
            fprintf(out, "%s[%llu, %llu]", i ? ", " : "", (unsigned long long)v->ranges[2 * i],
                    (unsigned long long)v->ranges[2 * i + 1]);
        fprintf(out, "], \"stripes_listed_all\": %s, \"targets\": [",
                v->truncated ? "false" : "true");
        for (size_t i = 0; i < v->ntargets; i++)
            fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)v->targets[i]);
        fprintf(out, "]}");
    }
    fprintf(out, "\n ],\n \"max_targets_per_writer\": %llu}\n", (unsigned long long)max_targets);
}

int fwdioi_plan_print(const fwdioi_topology_t *topo, uint64_t size, const fwdio_options_t *opts,
                      int json, FILE *out)
{
    fwdio_options_t o;
    fwdioi_origins_t why; /* no MPI here: refusals go to `out`, origins unknown */
    fwdioi_origins_init(&why, -1, 0, out);
    int rc = fwdioi_options_resolve(opts, topo->nranks, topo->nnodes, &o, &why);
    if (rc != FWDIO_OK)
        return rc;
    int *ranks = malloc((size_t)o.writers * sizeof *ranks);
    if (!ranks)
        return FWDIO_ENOMEM;
    int nw = 0;
    rc = fwdioi_place_writers(topo, &o, ranks, &nw);
    if (rc != FWDIO_OK || nw < 1) {
        fwdioi_refuse(&why, "the %d writers cannot be placed (%s placement on %d ranks): %s",
                      o.writers, placement_name(o.placement), topo->nranks,
                      rc != FWDIO_OK ? fwdio_strerror(rc) : "none found");
        free(ranks);
        return rc != FWDIO_OK ? rc : FWDIO_EINVAL;
    }
    o.writers = nw;
    fwdioi_plan_t p;
    fwdioi_plan_init(&p, size, &o, topo->nranks, ranks, nw);
    writer_view_t *views = calloc((size_t)nw, sizeof *views);
    unsigned char *seen = malloc(p.ntargets ? p.ntargets : 1);
    uint64_t max_targets = 0;
    rc = views && seen ? FWDIO_OK : FWDIO_ENOMEM;
    for (int w = 0; w < nw && rc == FWDIO_OK; w++) {
        rc = view_writer(&p, w, &views[w], seen);
        if (rc == FWDIO_OK && views[w].ntargets > max_targets)
            max_targets = views[w].ntargets;
    }
    if (rc == FWDIO_OK) {
        if (json)
            print_json(out, &p, &o, topo, views, max_targets);
        else
            print_table(out, &p, &o, topo, views, max_targets);
    }
    for (int w = 0; views && w < nw; w++) {
        free(views[w].ranges);
        free(views[w].targets);
    }
    free(views);
    free(seen);
    free(ranks);
    return rc;
}

int fwdio_plan_describe(fwdio_runtime_t *rt, uint64_t size, const fwdio_options_t *opts,
                        int nranks, int ranks_per_node, const char *synthetic, int json, FILE *out)
{
    if (!out || (nranks == 0 && !rt) || nranks < 0)
        return FWDIO_EINVAL;
    if (nranks == 0)
        return fwdioi_plan_print(&rt->topo, size, opts, json, out);
    if (ranks_per_node <= 0)
        ranks_per_node = nranks;
    fwdioi_topology_t topo;
    char err[256] = "";
    if (fwdioi_topology_synthetic(synthetic, nranks, ranks_per_node, &topo, err, sizeof err) != 0) {
        fprintf(out, "fwdio plan: bad topology: %s\n", err);
        return FWDIO_EINVAL;
    }
    int rc = fwdioi_plan_print(&topo, size, opts, json, out);
    fwdioi_topology_free(&topo);
    return rc;
}
