#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28's seventh promise, its small file (2026-12-01, twenty-first
# session): open, write 64 KiB per rank and close, 400 files back to back,
# at 2 and 4 ranks on tmpfs; plain MPI-IO, the layer of this build, and
# (BEFORE=another build directory) the layer of another build, the three
# in turn in every repetition, so that their ratios are side by side.
# Rerun from the repository root after building build, nothing else running:
#   REPS=8 [BEFORE=/path/to/other/build] bash bench/runs/2026-12-01-small-file.sh
# Prints each repetition's medians (us per file), then per rank count the
# median [range] of each layer's ratio to plain MPI-IO's in the same
# repetition. Raw output: $FWDIO_RESULTS_DIR/2026-12-01-small-file.
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-12-01-small-file}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
REPS=${REPS:-8}
DIR=${SCRATCH:-/dev/shm/small-file}
mkdir -p "$DIR"
modes=(plain layer)
[ -n "${BEFORE:-}" ] && modes+=(before)
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
for rep in $(seq "$REPS"); do
    for np in 2 4; do
        line="rep $rep np $np load $(cut -d' ' -f1 /proc/loadavg)"
        for mode in "${modes[@]}"; do
            env=()
            case $mode in
            layer) env=(-x "LD_PRELOAD=$B/mpiio/libfwdio-mpiio.so" -x "FWDIO_MPIIO=*.out") ;;
            before) env=(-x "LD_PRELOAD=$(realpath "$BEFORE")/mpiio/libfwdio-mpiio.so"
                         -x "FWDIO_MPIIO=*.out") ;;
            esac
            us=$(mpiexec -n $np "${env[@]}" "$B/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 1 \
                     --files 400 --rounds 1 | awk '/^small file/ {printf "%.0f", $4 * 1e6}')
            line="$line $mode $us"
        done
        echo "$line"
    done
done | tee "$R/runs.txt"
rm -f "$DIR"/*.out
python3 - "$R/runs.txt" <<'PY' | tee "$R/summary.txt"
import sys, statistics, collections
ratios = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w = line.split()
    np_ = w[3]
    vals = dict(zip(w[6::2], map(float, w[7::2])))
    for mode, us in vals.items():
        if mode != "plain":
            ratios[(np_, mode)].append(us / vals["plain"])
for (np_, mode), r in sorted(ratios.items()):
    print(f"np {np_} {mode}/plain: {statistics.median(r):.2f} [{min(r):.2f}, {max(r):.2f}] over {len(r)}")
PY
