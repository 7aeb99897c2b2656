#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 14 (streams): a stream's step latency and cost (fwdio-steps), the idle
# cost of an open stream (fwdio-idle-cost), and mdlj's and LAMMPS's time to
# solution with a frame every step and every 10 steps, fwdio streams beside
# MPI-IO, rank 0 / LAMMPS's own dump custom, and no output. Rerun from the
# repository root after building build-release:
#   bash bench/runs/2026-11-24-streams.sh [step...]
# Steps: steps-np2 steps-np8 idle mdlj-np8 mdlj-np2 lammps-np8 lammps-np2 lammps-pfs
# Nothing else may run meanwhile: every figure is a ratio of runs side by side.
# Outputs go to tmpfs (/dev/shm): the page cache with no disk behind it.
set -euo pipefail
# Raw outputs go to $OUT (default $FWDIO_RESULTS_DIR/2026-11-24-streams, FWDIO_RESULTS_DIR
# defaulting to ~/fwdio-results), never into the repository; bench/pack-results
# packs them into one archive.
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-24-streams}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build-release

run() {
    case $1 in
    # a frame of 50,000 atoms in DCD is 600 KB: each rank's share per step
    steps-np2) mpirun -np 2 $B/bench/fwdio-steps --size 300000 --steps 100 --compute 0.02 \
            --reps 3 --path /dev/shm/fwdio-steps.out 2>&1 | tee $R/steps-np2.txt ;;
    steps-np8) mpirun --oversubscribe -np 8 $B/bench/fwdio-steps --size 75000 --steps 100 \
            --compute 0.02 --reps 3 --path /dev/shm/fwdio-steps.out 2>&1 | tee $R/steps-np8.txt ;;
    idle) for np in 2 8; do
            mpirun --oversubscribe -np $np $B/bench/fwdio-idle-cost --seconds 1 --reps 5 \
                2>&1 | tail -8 | tee $R/idle-np$np.txt
        done ;;
    mdlj-np8|mdlj-np2) np=${1#mdlj-np}; mkdir -p /dev/shm/mdlj-cmp
        for every in 1 10; do
            bench/mdlj_compare --build $B --ranks "$np" --atoms 50000 --steps 40 \
                --every $every --checkpoint-every 20 --reps 3 --modes fwdio,mpiio,serial,none \
                --dir /dev/shm/mdlj-cmp --csv $R/mdlj-np$np-every$every.csv \
                > $R/mdlj-np$np-every$every.txt 2>&1
        done; rm -rf /dev/shm/mdlj-cmp ;;
    lammps-np8|lammps-np2) np=${1#lammps-np}
        for every in 1 10; do
            bench/lammps_compare --build $B --ranks "$np" --atoms 32000 --steps 40 \
                --every $every --format lammps --reps 3 --modes none,fwdio,native,mpiio \
                --dir /dev/shm --csv $R/lammps-np$np-every$every.csv \
                > $R/lammps-np$np-every$every.txt 2>&1
        done ;;
    # the parallel file system emulator, 4 targets of 50 MB/s, 8 ranks
    lammps-pfs) bench/lammps_compare --build $B --ranks 8 --atoms 32000 --steps 40 --every 10 \
            --format lammps --reps 3 --modes none,fwdio,native,mpiio \
            --pfs "--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0" \
            --csv $R/lammps-pfs4-np8-every10.csv > $R/lammps-pfs4-np8-every10.txt 2>&1 ;;
    *) echo "unknown step $1" >&2; return 2 ;;
    esac
}
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(steps-np2 steps-np8 idle mdlj-np8 mdlj-np2 lammps-np8 lammps-np2)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$s"
done
