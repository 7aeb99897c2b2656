#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30: the MPI-IO layer's MPI_File_open no longer waits for
# fwdio's ready status (mpiio/opening.c). fwdio-mpiio-calls (a write call of
# 4 MiB per rank, timed alone; then 400 small files: open, a 64 KiB
# MPI_File_write_at per rank, close) plain, through the layer of the build
# before (BEFORE) and of this one (AFTER), interleaved in every repetition,
# 2 and 4 ranks, on tmpfs. Rerun from the repository root with both builds
# made (RelWithDebInfo), nothing else running, and no stale Open MPI session
# directories or shared-memory segments left by killed jobs (they slow every
# MPI_File_open: rm -rf /tmp/ompi.*; rm -f /dev/shm/vader_segment.*):
#   BEFORE=/path/to/old/build AFTER=build REPS=7 bash bench/runs/2026-11-30-layer-ready.sh
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-layer-ready (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-layer-ready}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
A=$(realpath "${BEFORE:?BEFORE=the build before}")
B=$(realpath "${AFTER:-build}")
REPS=${REPS:-7}
DIR=${SCRATCH:-/dev/shm/layer-ready}
mkdir -p "$DIR"
ARGS="--dir $DIR --calls 20 --files 400"
: > "$R/runs.txt"
for rep in $(seq "$REPS"); do
    for np in 2 4; do
        for side in plain before after; do
            echo "== rep $rep np $np $side; load $(cut -d' ' -f1 /proc/loadavg)" >> "$R/runs.txt"
            case $side in
            plain) mpiexec -n $np "$B/bench/fwdio-mpiio-calls" $ARGS ;;
            before) mpiexec -n $np -x LD_PRELOAD="$A/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out' \
                        "$A/bench/fwdio-mpiio-calls" $ARGS ;;
            after) mpiexec -n $np -x LD_PRELOAD="$B/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out' \
                       "$B/bench/fwdio-mpiio-calls" $ARGS ;;
            esac >> "$R/runs.txt"
        done
    done
done
rm -rf "$DIR"
# per repetition: each side's median over ranks' calls / plain's, then the
# median [min, max] of those ratios over the repetitions
python3 - "$R/runs.txt" <<'PY' | tee "$R/summary.txt"
import re, sys, statistics, collections
v = collections.defaultdict(dict)
key = None
for line in open(sys.argv[1]):
    m = re.match(r"== rep (\d+) np (\d+) (\w+)", line)
    if m:
        key = (int(m[1]), int(m[2]), m[3]); continue
    m = re.match(r"(write call|small file)\s+median ([0-9.]+) s", line)
    if m and key:
        v[(key[0], key[1], m[1])][key[2]] = float(m[2])
for np_ in (2, 4):
    for what in ("write call", "small file"):
        reps = [d for (r, n, w), d in v.items() if n == np_ and w == what and len(d) == 3]
        plain = statistics.median(d["plain"] for d in reps) * 1e6
        line = f"np {np_} {what}: plain {plain:.0f} us"
        for side in ("before", "after"):
            ratios = [d[side] / d["plain"] for d in reps]
            line += (f"; {side} {statistics.median(d[side] for d in reps) * 1e6:.0f} us, "
                     f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}, {max(ratios):.2f}]")
        print(line + f" ({len(reps)} reps)")
PY
