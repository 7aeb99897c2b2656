#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run one MPI rank (the command after the arguments) in a UTS namespace of
# its own named "h<rank mod N>" (N: the first argument): ranks on one machine
# that see different host names, so local_dir "%h" gives each fake host its
# own local store, as the test bed's simulated hosts do. Skipped (77) where
# UTS namespaces are not allowed.
n=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}
h="h$((rank % n))"
if ! unshare -u true 2>/dev/null; then
    echo "SKIP local_hosts: cannot make a UTS namespace (unshare -u)"
    exit 77
fi
exec unshare -u sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
