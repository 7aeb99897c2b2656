#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 13 (fewest copies): the compute variant of fwdio-bench on the test bed,
# this build beside the one before the issue (9324503, "before"), page cache
# with 2 and 8 ranks, the emulator with 4 targets (2 and 8 ranks) and 4
# simulated hosts. Rerun from the repository root after building build-release
# (and the "before" tree, see BEFORE below):
#   bash bench/runs/2026-11-24-fewest-copies.sh [step...]
# Steps: cache-np2 cache-np8 pfs4-np8 pfs4-np2 hosts4 idle mdlj lammps
# Nothing else may run meanwhile: every figure is a ratio of runs side by side.
# "Page cache" runs write to tmpfs (/dev/shm): the page cache with no disk
# behind it, so no flusher thread writes back dirty pages on the two cores the
# ranks compute on (on ext4 it did, and the same configuration moved by 2-3x
# between runs); every path then pays exactly its copies in CPU.
set -euo pipefail
# Raw outputs go to $OUT (default $FWDIO_RESULTS_DIR/2026-11-24-fewest-copies, FWDIO_RESULTS_DIR
# defaulting to ~/fwdio-results), never into the repository; bench/pack-results
# packs them into one archive.
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-24-fewest-copies}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NEW=build-release/bench/fwdio-bench
# git worktree add /work/wt-before 9324503 && cmake -S /work/wt-before -B
# /work/wt-before/build-release -DCMAKE_BUILD_TYPE=Release && cmake --build ... --target fwdio-bench
BEFORE=${BEFORE:-/work/wt-before/build-release/bench/fwdio-bench}
MODES=memcpy,fwdio,lent,independent,mpiio,iwrite
COMMON="--reps 5 --steps 4 --compute 0.25 --no-unhinted"
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
STATE=/tmp/fewest-copies-testbed.state

bed_up() { # prints the run directory; sets MPIRUN_OPTS
    local out
    out=$(bench/testbed --build build-release up --state $STATE "$@")
    DIR=$(sed -n 's/^dir=//p' <<<"$out")
    MPIRUN_OPTS=$(sed -n 's/^mpirun=//p' <<<"$out")
    sed -n 's/^describe=/test bed: /p' <<<"$out"
}
bed_down() { bench/testbed down --state $STATE >/dev/null || true; }
trap bed_down EXIT

# new and before, the same arguments; ranks, then fwdio-bench arguments
pair() {
    local name=$1 np=$2; shift 2
    # shellcheck disable=SC2086
    mpirun --oversubscribe $MPIRUN_OPTS -np "$np" $NEW --modes $MODES $COMMON "$@" \
        --dir "$DIR" --csv $R/$name.csv 2>&1 | sed -n '/^fwdio-bench:/,$p' | tee $R/$name.txt
    if [[ -x $BEFORE ]]; then
        # shellcheck disable=SC2086
        mpirun --oversubscribe $MPIRUN_OPTS -np "$np" $BEFORE --modes fwdio $COMMON "$@" \
            --dir "$DIR" --csv $R/$name-before.csv 2>&1 | sed -n '/^fwdio-bench:/,$p' \
            | tee $R/$name-before.txt
    fi
}

run() {
    MPIRUN_OPTS=
    case $1 in
    cache-np2) DIR=$(mktemp -d /dev/shm/fc.XXXXXX); pair cache-np2 2 --size 128M --writers 1,2
        rm -rf "$DIR" ;;
    cache-np8) DIR=$(mktemp -d /dev/shm/fc.XXXXXX); pair cache-np8 8 --size 128M --writers 1,2
        rm -rf "$DIR" ;;
    pfs4-np8) bed_up --pfs "$PFS4"; pair pfs4-np8 8 --size 64M --writers 4 --layout targets \
        --targets 4 --stripe-size 1M --presize --settle; bed_down ;;
    pfs4-np2) bed_up --pfs "$PFS4"; pair pfs4-np2 2 --size 64M --writers 2 --stripe-size 1M \
        --presize --settle; bed_down ;;
    hosts4) bed_up --pfs "$PFS4" --hosts 4; pair hosts4-pfs4-np8 8 --size 64M --writers 4 \
        --stripe-size 1M --presize --settle; bed_down ;;
    idle) for np in 2 8; do
            mpirun --oversubscribe -np $np build-release/bench/fwdio-idle-cost --seconds 1 --reps 5 \
                2>&1 | tail -7 | tee $R/idle-np$np.txt
        done ;;
    mdlj) mkdir -p /dev/shm/mdlj-cmp
        bench/mdlj_compare --build build-release --ranks 8 --atoms 50000 --steps 40 --every 2 \
            --checkpoint-every 10 --reps 3 --modes fwdio,mpiio,serial,none --dir /dev/shm/mdlj-cmp \
            --csv $R/mdlj-tmpfs.csv > $R/mdlj-tmpfs.txt 2>&1; rm -rf /dev/shm/mdlj-cmp ;;
    lammps) bench/lammps_compare --build build-release --ranks 8 --atoms 32000 --steps 40 --every 4 \
            --reps 3 --modes fwdio,native,mpiio --dir /dev/shm --csv $R/lammps-tmpfs.csv \
            > $R/lammps-tmpfs.txt 2>&1 ;;
    *) echo "unknown step $1" >&2; return 2 ;;
    esac
}
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(cache-np2 cache-np8 pfs4-np8 pfs4-np2 hosts4 idle mdlj lammps)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    run "$s"
done
