#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issues 28 and 30 (a file's fixed cost), 2026-11-29: what a file costs
# through fwdio against MPI-IO, after the layer's close overlapped MPI-IO's
# own, streams of the layer skipping the appends' round (offsets_only), and
# the layer's open starting fwdio's before its communicator duplication.
# Steps:
#   core     fwdio-small-files: open, 64 KiB per rank, close, wait through
#            fwdio's own API against MPI_File_open + write_at_all + close,
#            alternating file by file, 2 and 8 ranks, tmpfs;
#   layer    the MPI-IO layer's write call and small file beside plain
#            MPI-IO (bench/runs/2026-11-29-spin-auto.sh cache), 2 and 4 ranks;
#   pfs-np2, pfs-np8
#            fwdio-bench --compute through the file-system emulator (4 targets,
#            1 MiB stripes, 1 ms per request, 400 MB/s each): 12 steps of
#            16 MiB after 0.25 s of compute each, modes none, fwdio, iwrite
#            (iwrite_at_all waited at the next output), mpiio (write_at_all),
#            independent (each rank's MPI_File_write_at, pwrite underneath):
#            overhead on time to solution and CPU per GiB;
#   cache-np2, cache-np8
#            the same on the page cache (tmpfs), nothing waiting for storage.
# Rerun from the repository root after building build (RelWithDebInfo, the
# default of scripts/setup.sh), with nothing else running:
#   REPS=5 bash bench/runs/2026-11-29-file-cost.sh [core] [layer] [pfs-np2] [pfs-np8] \
#       [cache-np2] [cache-np8]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-29-file-cost (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-29-file-cost}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
REPS=${REPS:-3}
STATE=/tmp/file-cost-testbed.state
PFS4="--targets 4 --stripe 1M --bw 400M --latency 1 --start-target 0"

bed_down() { bench/testbed down --state $STATE >/dev/null || true; }
trap bed_down EXIT

compute() {
    local np=$1 dir=$2
    mpiexec -n "$np" "$B/bench/fwdio-bench" --modes none,fwdio,iwrite,mpiio,independent \
        --writers 2 --size 16M --steps 12 --compute 0.25 --reps "$REPS" --stripe-size 1M \
        --presize --settle --no-unhinted --dir "$dir" 2>&1 | sed -n '/^fwdio-bench:/,$p'
}

pfs() {
    local np=$1 out dir
    out=$(bench/testbed --build "$B" up --state $STATE --pfs "$PFS4")
    dir=$(sed -n 's/^dir=//p' <<<"$out")
    sed -n 's/^describe=/test bed: /p' <<<"$out"
    compute "$np" "$dir"
    bed_down
}

cache() {
    local dir
    dir=$(mktemp -d /dev/shm/file-cost.XXXXXX)
    compute "$1" "$dir"
    rm -rf "$dir"
}

run() {
    case $1 in
    core)
        local dir
        dir=$(mktemp -d /dev/shm/file-cost.XXXXXX)
        for np in 2 8; do
            mpiexec -n $np "$B/bench/fwdio-small-files" --dir "$dir" --files 40 --reps "$REPS"
        done
        rm -rf "$dir" ;;
    layer) OUT=$R/layer REPS=$REPS BUILD=$B bash "$(dirname "$0")/2026-11-29-spin-auto.sh" cache ;;
    pfs-np2) pfs 2 ;;
    pfs-np8) pfs 8 ;;
    cache-np2) cache 2 ;;
    cache-np8) cache 8 ;;
    *) echo "unknown step $1" >&2; return 2 ;;
    esac
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(core layer pfs-np2 pfs-np8 cache-np2 cache-np8)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$s" 2>&1 | tee "$R/$s.txt"
done
