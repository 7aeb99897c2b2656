/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory of this node that the job may use, from which the node budgets'
 * defaults are taken (node_buffer): the physical memory, or the memory limit
 * of the control group the process runs in when that is lower (a batch
 * system's job on a shared node, Slurm's task/cgroup; a container).
 */
#ifndef FWDIOI_NODE_MEMORY_H
#define FWDIOI_NODE_MEMORY_H

#include <stdint.h>

/** Bytes of memory of this node the process may use (0: unknown): the lower
 *  of the physical memory and fwdioi_cgroup_memory_limit() of this process
 *  (/proc/self/cgroup under /sys/fs/cgroup). */
uint64_t fwdioi_node_memory(void);

/** The lowest memory limit on the path of the control groups `proc_cgroup`
 *  (the text of /proc/self/cgroup) names, with their file systems mounted
 *  under `root` (/sys/fs/cgroup): cgroup v2 (`0::PATH`, memory.max under
 *  `root` or `root`/unified) and v1 (a hierarchy with the memory controller,
 *  memory.limit_in_bytes under `root`/memory). Every ancestor of PATH counts
 *  (a parent's limit bounds its children); a PATH that is not under `root`
 *  (a container's namespace) counts from `root` itself. 0 when no limit is
 *  set ("max", or v1's page-rounded 2^63 - 1) or none can be read. */
uint64_t fwdioi_cgroup_memory_limit(const char *proc_cgroup, const char *root);

#endif
