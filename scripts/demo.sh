#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build fwdio (scripts/setup.sh) and run the demo: 8 ranks write one 256 MiB
# shared file through 2 writer ranks, verify every byte and print the timings.
#
# Usage: scripts/demo.sh [fwdio-demo args...]
#   e.g. scripts/demo.sh --size 1G --writers 4 --durable
#        scripts/demo.sh --path /scratch/ckpt.bin --keep
# Environment: FWDIO_BUILD_DIR (default build), FWDIO_DEMO_RANKS (default 8).
#
# Unless --path is given, the file goes to a fresh directory under
# ${TMPDIR:-/tmp} that is removed afterwards (kept with --keep).
set -euo pipefail

say() { printf 'demo: %s\n' "$*"; }

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${FWDIO_BUILD_DIR:-build}
[[ $build_dir == /* ]] || build_dir=$repo_root/$build_dir
ranks=${FWDIO_DEMO_RANKS:-8}

bash "$repo_root/scripts/setup.sh" "$build_dir"

demo=$build_dir/apps/fwdio-demo
[[ -x $demo ]] || { printf 'demo: error: %s was not built\n' "$demo" >&2; exit 1; }

# The build's own launcher (the MPI fwdio was built with: cmake/mpi.cmake).
# Open MPI's mpirun refuses to start as root unless told twice, and more
# ranks than cores unless told (--oversubscribe); MPICH's mpiexec needs
# neither. The OMPI_* variables are Open MPI's and nothing to another MPI.
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
[[ -n $mpiexec ]] || mpiexec=mpirun
oversubscribe=()
if "$mpiexec" --version 2>&1 | grep -qE 'Open MPI|OpenRTE'; then
    oversubscribe=(--oversubscribe)
fi
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1

keep=0
for arg in "$@"; do
    [[ $arg == --keep ]] && keep=1
done
if [[ $keep -eq 0 ]]; then
    # The demo makes its own directory under TMPDIR; pointing TMPDIR at a
    # directory of ours also sweeps away the file (and Open MPI's session
    # files) if a rank dies before the demo cleans up.
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/fwdio-demo.XXXXXX")
    trap 'rm -rf -- "$scratch"' EXIT
    export TMPDIR=$scratch
fi

say "$mpiexec ${oversubscribe[*]} -np $ranks $demo $*"
"$mpiexec" "${oversubscribe[@]}" -np "$ranks" "$demo" "$@"
