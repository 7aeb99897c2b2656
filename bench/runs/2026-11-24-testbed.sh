#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The measurements of issue 12 ("A cluster on one machine"), in the order they
# were run on 2026-11-24 on a quiet machine (nothing else running; the load
# average is in every summary.md). From the repository root:
#   bash bench/runs/2026-11-24-testbed.sh [step ...]
# Steps: spread cache-np8 cache-np2 pfs4-np8 pfs4-np2 pfs8-np8 hosts4 seeds mdlj
set -euo pipefail
# Raw outputs go to $OUT (default $FWDIO_RESULTS_DIR/2026-11-24-testbed, FWDIO_RESULTS_DIR
# defaulting to ~/fwdio-results), never into the repository; bench/pack-results
# packs them into one archive.
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-24-testbed}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Storage, not CPU, is the bottleneck: T x 50 MiB/s (200 or 400 MiB/s) against
# about 2 GiB/s that fio reaches through the emulator with no modelled cost.
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
PFS8="--targets 8 --stripe 1M --bw 50M --latency 1 --start-target 0"
# fwdio gets the emulator's stripe, as a user would give it the file system's;
# under the emulator only the MPI-IO configurations with cb_nodes = W run (no
# "no hint" twin), and files are 64 MiB: every file is read back through the
# modelled targets too, so a run costs twice its write (a first try at 128 MiB
# with every variant took 9 minutes per repetition).
FWDIO_PFS="--stripe-size 1M --no-unhinted"

run() {
    case $1 in
    spread) # the same configuration with and without the dirty-page wait, twice each, alternated
        for k in 1 2; do
            bench/sweep --ranks 8 --size 256M --writers 2 --reps 5 --no-compute --base-modes "" \
                --no-fio --no-settle --out $R/spread-nosettle-$k
            bench/sweep --ranks 8 --size 256M --writers 2 --reps 5 --no-compute --base-modes "" \
                --no-fio --out $R/spread-settle-$k
        done ;;
    cache-np8) bench/sweep --ranks 8 --size 256M --writers 1,2,4,8 --reps 5 --compute-writers 2 \
        --out $R/cache-np8 ;;
    cache-np2) bench/sweep --ranks 2 --size 256M --writers 1,2 --reps 5 --compute-writers 1,2 \
        --out $R/cache-np2 ;;
    pfs4-np8) bench/sweep --ranks 8 --size 64M --writers 1,2,4,8 --reps 5 --compute-writers 4 \
        --pfs "$PFS4" --bench-args "$FWDIO_PFS" --layout block,targets --targets 4 \
        --out $R/pfs4-np8 ;;
    pfs4-np2) bench/sweep --ranks 2 --size 64M --writers 1,2 --reps 5 --compute-writers 2 \
        --pfs "$PFS4" --bench-args "$FWDIO_PFS" --out $R/pfs4-np2 ;;
    pfs8-np8) bench/sweep --ranks 8 --size 64M --writers 1,2,4,8 --reps 5 --no-compute \
        --pfs "$PFS8" --bench-args "$FWDIO_PFS" --layout block,targets --targets 8 \
        --out $R/pfs8-np8 ;;
    hosts4) bench/sweep --ranks 8 --hosts 4 --size 64M --writers 2,4,8 --reps 5 --compute-writers 4 \
        --pfs "$PFS4" --bench-args "$FWDIO_PFS" --policy spread,packed \
        --out $R/hosts4-pfs4-np8 ;;
    seeds) bench/seeds --out $R/seeds ;;
    mdlj) bench/mdlj_compare --build build-release --ranks 8 --atoms 50000 --steps 40 --every 2 --checkpoint-every 10 \
        --reps 5 --pfs "$PFS4" --csv $R/mdlj-pfs4.csv | tee $R/mdlj-pfs4.txt ;;
    *) echo "unknown step $1" >&2; return 2 ;;
    esac
}
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(spread cache-np8 cache-np2 pfs4-np8 pfs4-np2 pfs8-np8 hosts4 seeds mdlj)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$s"
done
