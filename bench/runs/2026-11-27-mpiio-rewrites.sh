#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The MPI-IO layer after fwdio's rewrites (docs/results/mpiio-layer.md, "The MPI-IO
# layer"): LAMMPS dump custom/mpiio every 10 steps and every step, and the
# parallel HDF5 program (with HDF5's default fill values and without), each
# with and without the layer beside no output, on the page cache (/dev/shm)
# and on the parallel file system emulator (4 targets, 1 MiB stripes,
# 50 MiB/s per target, 1 ms per request), on 8 and 2 ranks. Run from the
# repository root on a quiet machine, with build-release built
# (bash scripts/setup.sh build-release -DCMAKE_BUILD_TYPE=Release).
#   bash bench/runs/2026-11-27-mpiio-rewrites.sh [REPS [STEP...]]
# STEPs (default all): lammps-{cache,pfs}-np{8,2}-every{10,1},
# hdf5-{cache,pfs}-np{8,2}, hdf5-nofill-cache-np{8,2}; not in the default
# list: lammps-pfs-hosts4-np8-every{10,1} and hdf5-pfs-hosts4-np8, the ranks
# over 4 simulated hosts (scripts/cluster.sh) writing to the emulator.
set -euo pipefail
reps=${1:-3}
shift || true
# Raw outputs go to $OUT (default $FWDIO_RESULTS_DIR/2026-11-27-mpiio-rewrites, FWDIO_RESULTS_DIR
# defaulting to ~/fwdio-results), never into the repository; bench/pack-results
# packs them into one archive.
out=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-27-mpiio-rewrites}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pfs="--targets 4 --stripe 1M --bw 50M --latency 1"
steps=("$@")
if [[ ${#steps[@]} -eq 0 ]]; then
    for np in 8 2; do
        steps+=(lammps-cache-np$np-every10 lammps-cache-np$np-every1 lammps-pfs-np$np-every10
                lammps-pfs-np$np-every1 hdf5-cache-np$np hdf5-pfs-np$np hdf5-nofill-cache-np$np)
    done
fi
for name in "${steps[@]}"; do
    args=(--reps "$reps" --csv "$out/$name.csv")
    [[ $name =~ np([0-9]+) ]] && args+=(--ranks "${BASH_REMATCH[1]}")
    [[ $name =~ every([0-9]+) ]] && args+=(--every "${BASH_REMATCH[1]}")
    [[ $name == lammps-* ]] && args+=(--client lammps) || args+=(--client hdf5)
    [[ $name == *-pfs-* ]] && args+=(--pfs "$pfs")
    [[ $name == *-nofill-* ]] && args+=(--no-fill)
    [[ $name == *-hosts4-* ]] && args+=(--hosts 4)
    echo "== $name: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/run-all.log"
    bench/mpiio_compare "${args[@]}" 2>&1 | tee "$out/$name.txt" | tail -12 >> "$out/run-all.log"
done
