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

int fwdioi_topology_synthetic(const char *desc, int nranks, int ranks_per_node,
                              fwdioi_topology_t *out, char *err, size_t err_len)
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

/**
 * Node ids from each rank's node leader (lowest rank of its node): leaders
 * numbered 0, 1, ... in rank order. `leader` and `node` have nranks entries.
 */
static void number_nodes(const int *leader, int nranks, int *node, int *nnodes)
{
    int count = 0;
    for (int r = 0; r < nranks; r++)
        if (leader[r] == r)
            node[r] = count++;
    for (int r = 0; r < nranks; r++)
        node[r] = node[leader[r]];
    *nnodes = count;
}

/** Lowest rank of `comm` on this rank's node (collective). Returns 0 or -1. */
static int node_leader(MPI_Comm comm, int rank, int *leader)
{
    MPI_Comm node_comm;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm) !=
        MPI_SUCCESS)
        return -1;
    int rc = MPI_Allreduce(&rank, leader, 1, MPI_INT, MPI_MIN, node_comm);
    int rc_free = MPI_Comm_free(&node_comm);
    return rc == MPI_SUCCESS && rc_free == MPI_SUCCESS ? 0 : -1;
}

/** Do all ranks of `comm` report ok (collective)? 1, 0, or -1 if MPI fails. */
static int all_ok(MPI_Comm comm, int ok)
{
    int all;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return -1;
    return all;
}

#define GATHERED 5 /* ints per rank: leader, package, numa, core, cpus */

/** Fill `out` from the gathered (leader, package, numa, core, cpus) of every rank;
 *  `scratch` has room for 2 * nranks ints. */
static void unpack_places(const int *gathered, int nranks, int *scratch, fwdioi_topology_t *out)
{
    int *leader = scratch, *node = scratch + nranks;
    for (int r = 0; r < nranks; r++)
        leader[r] = gathered[GATHERED * r];
    number_nodes(leader, nranks, node, &out->nnodes);
    for (int r = 0; r < nranks; r++) {
        const int *g = gathered + GATHERED * r;
        out->ranks[r].node = node[r];
        out->ranks[r].package = g[1];
        out->ranks[r].numa = g[2];
        out->ranks[r].core = g[3];
        out->ranks[r].cpus = g[4];
    }
    out->nranks = nranks;
}

int fwdioi_topology_discover(MPI_Comm comm, fwdioi_topology_t *out)
{
    memset(out, 0, sizeof *out);
    int rank, nranks, leader;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &nranks) != MPI_SUCCESS)
        return -1;
    if (node_leader(comm, rank, &leader) != 0)
        return -1;
    fwdioi_rank_place_t self;
    discover_own_place(&self);
    int mine[GATHERED] = {leader, self.package, self.numa, self.core, self.cpus};

    int *gathered = malloc((size_t)nranks * GATHERED * sizeof *gathered);
    int *scratch = malloc((size_t)nranks * 2 * sizeof *scratch);
    out->ranks = malloc((size_t)nranks * sizeof *out->ranks);
    int ok = all_ok(comm, gathered && scratch && out->ranks);
    if (ok == 1 &&
        MPI_Allgather(mine, GATHERED, MPI_INT, gathered, GATHERED, MPI_INT, comm) == MPI_SUCCESS)
        unpack_places(gathered, nranks, scratch, out);
    else
        ok = 0;
    free(gathered);
    free(scratch);
    if (!ok) {
        fwdioi_topology_free(out);
        return -1;
    }
    return 0;
}

int fwdioi_topology_node_ranks(const fwdioi_topology_t *t, int rank)
{
    int n = 0;
    for (int r = 0; r < t->nranks; r++)
        n += t->ranks[r].node == t->ranks[rank].node;
    return n;
}

void fwdioi_topology_free(fwdioi_topology_t *t)
{
    if (!t)
        return;
    free(t->ranks);
    memset(t, 0, sizeof *t);
}
