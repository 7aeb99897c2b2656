/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology discovery with hwloc: the only file of fwdio that calls hwloc.
 *
 * A place is found by mapping a cpuset (a binding, the CPU a rank last ran on,
 * or a core of a synthetic node) to the package, NUMA node and core that
 * contain all of it. A level the machine does not have (no package objects,
 * say) counts as one domain, index 0; a cpuset that spans several domains of a
 * level gives -1 for that level.
 */
#include "plan/topology.h"

#include <hwloc.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Print a reason into err (if the caller gave room for one). */
static void set_error(char *err, size_t err_len, const char *fmt, ...)
{
    if (!err || err_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

/** The object type that stands for a core: HWLOC_OBJ_CORE, or the PUs of a
 *  topology without a core level. */
static hwloc_obj_type_t core_type(hwloc_topology_t topo)
{
    return hwloc_get_type_depth(topo, HWLOC_OBJ_CORE) == HWLOC_TYPE_DEPTH_UNKNOWN ? HWLOC_OBJ_PU
                                                                                   : HWLOC_OBJ_CORE;
}

/**
 * Logical index of the one object of `type` whose cpuset holds all of `set`;
 * 0 when the topology has no objects of that type, -1 when `set` is empty or
 * spans several of them.
 */
static int covering_index(hwloc_topology_t topo, hwloc_const_cpuset_t set, hwloc_obj_type_t type)
{
    if (hwloc_get_type_depth(topo, type) == HWLOC_TYPE_DEPTH_UNKNOWN)
        return 0;
    if (hwloc_bitmap_iszero(set))
        return -1;
    hwloc_obj_t obj = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, type, NULL);
    return obj ? (int)obj->logical_index : -1;
}

/** Package, NUMA node and core of `set` (node left as it is). */
static void place_of_cpuset(hwloc_topology_t topo, hwloc_const_cpuset_t set,
                            fwdioi_rank_place_t *place)
{
    place->package = covering_index(topo, set, HWLOC_OBJ_PACKAGE);
    place->numa = covering_index(topo, set, HWLOC_OBJ_NUMANODE);
    place->core = covering_index(topo, set, core_type(topo));
}

/** A place on `node` with nothing known of package, NUMA node or core. */
static fwdioi_rank_place_t unknown_place(int node)
{
    fwdioi_rank_place_t p = {.node = node, .package = -1, .numa = -1, .core = -1, .cpus = -1};
    return p;
}

/**
 * Load the synthetic node `desc` and fill cores[0 .. *ncores) with the place
 * of each core in logical order (node 0). Returns 0 or -1 with a reason.
 */
static int synthetic_cores(const char *desc, fwdioi_rank_place_t **cores, int *ncores, char *err,
                           size_t err_len)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) {
        set_error(err, err_len, "hwloc_topology_init failed");
        return -1;
    }
    int rc = -1;
    if (hwloc_topology_set_synthetic(topo, desc) != 0) {
        set_error(err, err_len, "bad synthetic topology \"%s\"", desc);
        goto out;
    }
    if (hwloc_topology_load(topo) != 0) {
        set_error(err, err_len, "hwloc could not load \"%s\"", desc);
        goto out;
    }
    hwloc_obj_type_t type = core_type(topo);
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n < 1) {
        set_error(err, err_len, "\"%s\" has no cores", desc);
        goto out;
    }
    *cores = malloc((size_t)n * sizeof **cores);
    if (!*cores) {
        set_error(err, err_len, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        (*cores)[i].node = 0;
        (*cores)[i].cpus = -1;
        place_of_cpuset(topo, core->cpuset, &(*cores)[i]);
    }
    *ncores = n;
    rc = 0;
out:
    hwloc_topology_destroy(topo);
    return rc;
}

int fwdioi_places_synthetic(const char *desc, int nranks, int ranks_per_node,
                            fwdioi_places_t *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    if (nranks < 1 || ranks_per_node < 1) {
        set_error(err, err_len, "need nranks >= 1 and ranks_per_node >= 1 (got %d, %d)", nranks,
                  ranks_per_node);
        return -1;
    }
    fwdioi_rank_place_t *cores = NULL;
    int ncores = 0;
    if (desc && synthetic_cores(desc, &cores, &ncores, err, err_len) != 0)
        return -1;
    out->ranks = malloc((size_t)nranks * sizeof *out->ranks);
    if (!out->ranks) {
        free(cores);
        set_error(err, err_len, "out of memory");
        return -1;
    }
    out->nranks = nranks;
    out->nnodes = (nranks - 1) / ranks_per_node + 1;
    for (int r = 0; r < nranks; r++) {
        int node = r / ranks_per_node, local = r % ranks_per_node;
        if (cores) {
            out->ranks[r] = cores[local % ncores];
            out->ranks[r].node = node;
        } else {
            out->ranks[r] = unknown_place(node);
        }
    }
    free(cores);
    return 0;
}

/** Is `set` the whole machine as hwloc sees it (i.e. no real binding)? */
static int is_whole_machine(hwloc_topology_t topo, hwloc_const_cpuset_t set)
{
    return hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), set);
}

/**
 * Where the calling process is bound: the package, NUMA node and core that
 * hold its CPU binding (-1 where the binding spans several). A process bound
 * to the whole machine is not bound: all -1, so placement uses the stride
 * rule for its node. The CPU it last ran on is no guide then (unbound ranks
 * move, and a snapshot taken at one moment often shows several ranks on one
 * core); it is used only when the binding cannot be read at all. Also the
 * PUs hwloc finds usable on the node (the topology is restricted to the
 * allowed cpuset: the job's, not the rank's binding).
 */
static void discover_own_place(fwdioi_rank_place_t *place)
{
    *place = unknown_place(-1);
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return;
    hwloc_cpuset_t set = hwloc_bitmap_alloc();
    if (!set || hwloc_topology_load(topo) != 0)
        goto out;
    place->cpus = hwloc_bitmap_weight(hwloc_topology_get_topology_cpuset(topo));
    int known = hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0 ||
                hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == 0;
    if (known) {
        if (!hwloc_bitmap_iszero(set) && !is_whole_machine(topo, set))
            place_of_cpuset(topo, set, place);
    } else if (hwloc_get_last_cpu_location(topo, set, HWLOC_CPUBIND_THREAD) == 0) {
        place_of_cpuset(topo, set, place);
    }
out:
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
}

int fwdioi_topology_synthetic(const char *desc, int nranks, int ranks_per_node,
                              fwdioi_topology_t *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    fwdioi_places_t places;
    if (fwdioi_places_synthetic(desc, nranks, ranks_per_node, &places, err, err_len) != 0)
        return -1;
    int rc = fwdioi_topology_from_places(&places, out);
    fwdioi_places_free(&places);
    if (rc != 0)
        set_error(err, err_len, "out of memory");
    return rc;
}

/** Do all ranks of `comm` report ok (collective)? 1, 0, or -1 if MPI fails. */
static int all_ok(MPI_Comm comm, int ok)
{
    int all;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return -1;
    return all;
}

#define GATHERED 5 /* ints per rank of a node: rank, package, numa, core, cpus */

/** On the node's lowest rank (`node` rank 0): its record from the places of
 *  its `n` ranks, gathered on `node`; elsewhere nothing (collective on node). */
static int describe_node(MPI_Comm node, int me, int n, const fwdioi_rank_place_t *self,
                         int **rec, size_t *len)
{
    *rec = NULL;
    *len = 0;
    int mine[GATHERED] = {me, self->package, self->numa, self->core, self->cpus};
    int lead = 0;
    MPI_Comm_rank(node, &lead);
    lead = lead == 0;
    int *got = lead ? malloc((size_t)n * GATHERED * sizeof *got) : NULL;
    int ok = !lead || got;
    /* a leader without memory still takes part; it reports failure below */
    int rc = MPI_Gather(mine, GATHERED, MPI_INT, got, got ? GATHERED : 0, MPI_INT, 0, node);
    if (rc != MPI_SUCCESS || !ok) {
        free(got);
        return -1;
    }
    if (!lead)
        return 0;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    fwdioi_rank_place_t *places = malloc((size_t)n * sizeof *places);
    int out = -1;
    if (ranks && places) {
        /* node ranks come in the order of their rank in comm (the split's key) */
        for (int i = 0; i < n; i++) {
            const int *g = got + GATHERED * i;
            ranks[i] = g[0];
            places[i] = (fwdioi_rank_place_t){-1, g[1], g[2], g[3], g[4]};
        }
        out = fwdioi_node_record(places, ranks, n, rec, len);
    }
    free(got);
    free(ranks);
    free(places);
    return out;
}

/** Gather the leaders' records (collective on `leaders`, the nodes' lowest
 *  ranks in rank order): *all, *len ints, *nnodes. */
static int gather_records(MPI_Comm leaders, const int *rec, size_t len, int **all, size_t *all_len,
                          int *nnodes)
{
    *all = NULL;
    int n = 0;
    if (MPI_Comm_size(leaders, &n) != MPI_SUCCESS)
        return -1;
    int mine = len <= (size_t)INT32_MAX ? (int)len : -1;
    int *counts = malloc((size_t)n * sizeof *counts), *displs = malloc((size_t)n * sizeof *displs);
    int rc = -1;
    if (!counts || !displs || MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, leaders) !=
                                  MPI_SUCCESS)
        goto out;
    long total = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0 || total + counts[i] > INT32_MAX)
            goto out; /* a leader failed (-1), or more than MPI counts */
        displs[i] = (int)total;
        total += counts[i];
    }
    *all = malloc((size_t)(total ? total : 1) * sizeof **all);
    if (*all && MPI_Allgatherv(rec, mine, MPI_INT, *all, counts, displs, MPI_INT, leaders) ==
                    MPI_SUCCESS) {
        *all_len = (size_t)total;
        *nnodes = n;
        rc = 0;
    }
out:
    free(counts);
    free(displs);
    return rc;
}

int fwdioi_topology_discover(MPI_Comm comm, fwdioi_topology_t *out)
{
    memset(out, 0, sizeof *out);
    int rank, nranks, nlocal = 0, lrank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return -1;
    MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return -1;
    fwdioi_rank_place_t self;
    discover_own_place(&self);
    int *rec = NULL, *all = NULL;
    size_t len = 0, all_len = 0;
    int nnodes = 0, ok = MPI_Comm_size(node, &nlocal) == MPI_SUCCESS &&
                         MPI_Comm_rank(node, &lrank) == MPI_SUCCESS;
    ok = ok && describe_node(node, rank, nlocal, &self, &rec, &len) == 0;
    /* every rank takes part in the split whatever happened before */
    if (MPI_Comm_split(comm, lrank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders) != MPI_SUCCESS)
        ok = 0;
    if (lrank == 0 && leaders != MPI_COMM_NULL) {
        /* a failed leader sends a count of -1, so every leader fails alike */
        if (!ok)
            len = (size_t)-1;
        ok = gather_records(leaders, rec, len, &all, &all_len, &nnodes) == 0 && ok;
    }
    /* the node's leader passes the records on to its node */
    long hdr[2] = {ok ? (long)all_len : -1, nnodes};
    if (MPI_Bcast(hdr, 2, MPI_LONG, 0, node) != MPI_SUCCESS)
        hdr[0] = -1;
    if (hdr[0] >= 0 && lrank != 0) {
        all_len = (size_t)hdr[0];
        nnodes = (int)hdr[1];
        all = malloc((all_len ? all_len : 1) * sizeof *all);
        ok = all != NULL;
    }
    /* a rank without memory still receives (into nothing it keeps) */
    int bcast_ok = hdr[0] < 0 ||
                   MPI_Bcast(all, all ? (int)hdr[0] : 0, MPI_INT, 0, node) == MPI_SUCCESS;
    ok = ok && hdr[0] >= 0 && bcast_ok &&
         fwdioi_topology_decode(all, all_len, nnodes, nranks, out) == 0;
    free(rec);
    free(all);
    if (leaders != MPI_COMM_NULL)
        MPI_Comm_free(&leaders);
    MPI_Comm_free(&node);
    if (all_ok(comm, ok) != 1) {
        fwdioi_topology_free(out);
        return -1;
    }
    return 0;
}
