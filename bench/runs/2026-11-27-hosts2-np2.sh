#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# One rank per core over TCP: LAMMPS dumping every 10 steps and every step,
# 2 ranks on 2 simulated hosts (1 slot each), files on the emulator; run from
# the repository's top directory:
#   bash bench/runs/2026-11-27-hosts2-np2.sh [REPS]
set -euo pipefail
reps=${1:-3}
# Raw outputs go to $OUT (default $FWDIO_RESULTS_DIR/2026-11-27-hosts2-np2, FWDIO_RESULTS_DIR
# defaulting to ~/fwdio-results), never into the repository; bench/pack-results
# packs them into one archive.
out=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-27-hosts2-np2}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for every in 10 1; do
    name=lammps-pfs-hosts2-np2-every$every
    echo "== $name: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/run.log"
    bench/mpiio_compare --client lammps --ranks 2 --hosts 2 --slots 1 --every "$every" \
        --reps "$reps" --pfs "--targets 4 --stripe 1M --bw 50M --latency 1" \
        --csv "$out/$name.csv" 2>&1 | tee "$out/$name.txt" | tail -12 >> "$out/run.log"
done
