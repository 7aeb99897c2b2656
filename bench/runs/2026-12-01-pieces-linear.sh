#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28's sixth promise (2026-12-01, twenty-second session): the cost of
# interleaved small pieces is linear in their number. 8-byte pieces of 4
# ranks interleaved (fwdio-interleaved: rank r's piece i at (4 i + r) 8, so
# every unit holds pieces of every rank), 2^17 (about 10^5) and 2^20 (about
# 10^6) per rank, through the core API (--mode core), through the MPI-IO
# layer (--mode mpiio, preloaded) and plain MPI-IO beside them, in turn in
# every repetition, on tmpfs; seconds from open to close (max over ranks)
# and that per million pieces per rank. Linear: the per-piece figure of
# 2^20 about that of 2^17. Rerun from the repository root after building
# build, nothing else running:
#   REPS=3 bash bench/runs/2026-12-01-pieces-linear.sh
# Raw output: $FWDIO_RESULTS_DIR/2026-12-01-pieces-linear (outside the
# repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-12-01-pieces-linear}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
DIR=${SCRATCH:-/dev/shm/pieces-linear}
mkdir -p "$DIR"
rm -f /dev/shm/vader_segment.* 2>/dev/null || true
run() { # mode pieces [layer]: prints the run's seconds
    local mode=$1 pieces=$2 env=()
    [ "${3:-}" = layer ] && env=(-x LD_PRELOAD="$B/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out')
    (cd "$DIR" && mpiexec -n 4 "${env[@]}" "$B/bench/fwdio-interleaved" --mode "$mode" \
        --pieces "$pieces" --piece 8) > "$R/last.txt" 2>&1
    rm -f "$DIR/interleaved.out"
    if ! grep -q 'bytes right' "$R/last.txt"; then
        echo "$mode $pieces ${3:-}: not bytes right" >&2
        cat "$R/last.txt" >&2
        exit 1
    fi
    sed -n 's/^interleaved .*: \([0-9.]*\) s,.*/\1/p' "$R/last.txt"
}
for rep in $(seq 1 "${REPS:-3}"); do
    for pieces in 131072 1048576; do
        line="rep $rep pieces $pieces load $(cut -d' ' -f1 /proc/loadavg)"
        line="$line core $(run core $pieces)"
        line="$line layer $(run mpiio $pieces layer)"
        line="$line plain $(run mpiio $pieces)"
        echo "$line"
    done
done | tee "$R/runs.txt"
python3 - "$R/runs.txt" <<'PY' | tee "$R/summary.txt"
import sys, statistics, collections
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w = line.split()
    pieces = int(w[3])
    for mode, s in zip(w[6::2], w[7::2]):
        t[(mode, pieces)].append(float(s))
for mode in ("core", "layer", "plain"):
    per = {p: statistics.median(t[(mode, p)]) / (p / 1e6) for (m, p) in t if m == mode}
    small, big = sorted(per)
    print(f"{mode}: median s per 10^6 pieces per rank: {per[small]:.2f} at {small}, "
          f"{per[big]:.2f} at {big} (ratio {per[big] / per[small]:.2f})")
PY
