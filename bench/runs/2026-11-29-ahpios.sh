#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 31: the AHPIOS paper's comparison (papers/002: an ad-hoc parallel file
# system on the compute nodes' own storage, integrated with MPI-IO, against
# MPI-IO over the parallel file system) with fwdio's node-local tier:
# fwdio-local-drain --compare writes one file per repetition with
# MPI_File_write_at_all to the parallel file system (the emulator), with fwdio
# straight to it, and with fwdio through the tier (complete in the hosts'
# local stores, then drained), then reads the tier's file back from the local
# copies (the restart), from the target with fwdio, and with
# MPI_File_read_at_all; every byte checked.
# Steps (each on its own test bed: the emulator with 4 targets of 50 MB/s,
# 1 MiB stripes, 1 ms per request; local stores /dev/shm/ahpios-local-%h):
#   np2   2 ranks over 2 simulated hosts (one rank per core)
#   np8   8 ranks over 4 simulated hosts
# Rerun from the repository root after building build, with nothing else
# running (root: the simulated hosts are network namespaces):
#   REPS=3 SIZE=256M bash bench/runs/2026-11-29-ahpios.sh [np2] [np8]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-29-ahpios (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-29-ahpios}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
REPS=${REPS:-3}
SIZE=${SIZE:-256M}
STATE=/tmp/ahpios-testbed.state
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
LOCAL=/dev/shm/ahpios-local-%h

bed_down() {
    bench/testbed down --state $STATE >/dev/null || true
    rm -rf /dev/shm/ahpios-local-*
}
trap bed_down EXIT

run() { # ranks hosts
    local np=$1 hosts=$2 out dir
    out=$(bench/testbed --build "$B" up --state $STATE --pfs "$PFS4" --hosts "$hosts" \
        --slots $((np / hosts)))
    dir=$(sed -n 's/^dir=//p' <<<"$out")
    read -r -a mpirun_opts <<<"$(sed -n 's/^mpirun=//p' <<<"$out")"
    sed -n 's/^describe=/test bed: /p' <<<"$out"
    bench/testbed settle >/dev/null || true
    mpirun --oversubscribe "${mpirun_opts[@]}" -np "$np" "$B/bench/fwdio-local-drain" --compare \
        --size "$SIZE" --reps "$REPS" --writers "$hosts" --dir "$dir" --local "$LOCAL"
    bed_down
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(np2 np8)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    case $s in
    np2) run 2 2 ;;
    np8) run 8 4 ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
    esac 2>&1 | tee "$R/$s.txt"
done
