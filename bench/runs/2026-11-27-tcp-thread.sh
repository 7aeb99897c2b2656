#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Open MPI's TCP progress thread (btl_tcp_progress_thread) beside the default,
# LAMMPS dumping every 10 steps, 8 ranks over 4 simulated hosts with the
# emulator; run from the repository's top directory:
#   bash bench/runs/2026-11-27-tcp-thread.sh [REPS]
set -euo pipefail
reps=${1:-3}
# Raw outputs go to $OUT (default $FWDIO_RESULTS_DIR/2026-11-27-tcp-thread, FWDIO_RESULTS_DIR
# defaulting to ~/fwdio-results), never into the repository; bench/pack-results
# packs them into one archive.
out=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-27-tcp-thread}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
args=(--client lammps --ranks 8 --every 10 --hosts 4 --reps "$reps"
      --pfs "--targets 4 --stripe 1M --bw 50M --latency 1")
for thread in 0 1; do
    echo "== btl_tcp_progress_thread=$thread: load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/run.log"
    OMPI_MCA_btl_tcp_progress_thread=$thread bench/mpiio_compare "${args[@]}" \
        --csv "$out/thread$thread.csv" 2>&1 | tee "$out/thread$thread.txt" | tail -12 >> "$out/run.log"
done
