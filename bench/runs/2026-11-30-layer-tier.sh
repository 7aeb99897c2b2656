#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Unmodified LAMMPS (`lmp`, dump custom/mpiio) through the MPI-IO layer and
# its node-local tier (FWDIO_LOCAL_DIR) against Open MPI's MPI-IO and the
# layer writing straight to the path, through the file-system emulator (4
# targets, 1 MiB stripes, 50 MB/s and 1 ms each), 2 ranks over 2 simulated
# hosts and 8 over 4, the modes interleaved (bench/mpiio_compare --tier;
# docs/results/local-tier.md, "The MPI-IO layer through the tier").
#   REPS=5 bash bench/runs/2026-11-30-layer-tier.sh np2 np8
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-layer-tier}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
REPS=${REPS:-3}
BUILD=${BUILD:-build}
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
# EXTRA: more bench/mpiio_compare options (2026-11-30-layer-stripe.sh: --stripe 1M)
ARGS="--client lammps --cells 20 --steps 60 --every 5 --reps $REPS --tier --build $BUILD ${EXTRA:-}"
run() {
    case $1 in
    np2) bench/mpiio_compare --ranks 2 --hosts 2 --pfs "$PFS4" $ARGS \
        --csv "$R/np2.csv" | tee "$R/np2.txt" ;;
    np8) bench/mpiio_compare --ranks 8 --hosts 4 --pfs "$PFS4" $ARGS \
        --csv "$R/np8.csv" | tee "$R/np8.txt" ;;
    *) echo "unknown step $1" >&2; return 2 ;;
    esac
}
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(np2 np8)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$s"
done
