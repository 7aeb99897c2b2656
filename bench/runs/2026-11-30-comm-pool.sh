#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issues 28 and 30, 2026-11-30: a file's communicator taken from the
# runtime's pool of kept ones (one MPI_Iallreduce) instead of a new
# MPI_Comm_idup per file. Small files before (BEFORE, a build of the commit
# before) and after (AFTER, this build), interleaved in every repetition:
#   core   fwdio-small-files (fwdio_open, a write of 64 KiB per rank, close,
#          wait; against MPI_File_open, write_at_all, close), 2 and 8 ranks
#   layer  fwdio-mpiio-calls (MPI_File_open, MPI_File_write_at of 64 KiB,
#          close) plain and through the layer of each build, 2 and 4 ranks
# on tmpfs (/dev/shm). Rerun from the repository root with both builds made
# (RelWithDebInfo) and nothing else running:
#   BEFORE=/path/to/old/build AFTER=build REPS=3 bash bench/runs/2026-11-30-comm-pool.sh [core] [layer]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-comm-pool (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-comm-pool}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
A=$(realpath "${BEFORE:?BEFORE=the build before}")
B=$(realpath "${AFTER:-build}")
REPS=${REPS:-3}
DIR=${SCRATCH:-/dev/shm/comm-pool}
mkdir -p "$DIR"

core() {
    for rep in $(seq "$REPS"); do
        for np in 2 8; do
            for side in before after; do
                local b=$A
                [[ $side == after ]] && b=$B
                echo "== rep $rep np $np $side; load $(cut -d' ' -f1 /proc/loadavg)"
                mpiexec -n $np "$b/bench/fwdio-small-files" --dir "$DIR" --files 40 --reps 3
            done
        done
    done
}

layer() {
    for rep in $(seq "$REPS"); do
        for np in 2 4; do
            echo "== rep $rep np $np plain; load $(cut -d' ' -f1 /proc/loadavg)"
            mpiexec -n $np "$B/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 20 --files 40
            for side in before after; do
                local b=$A
                [[ $side == after ]] && b=$B
                echo "== rep $rep np $np layer_$side"
                mpiexec -n $np -x LD_PRELOAD="$b/mpiio/libfwdio-mpiio.so" -x FWDIO_MPIIO='*.out' \
                    "$b/bench/fwdio-mpiio-calls" --dir "$DIR" --calls 20 --files 40
            done
        done
    done
    rm -f "$DIR/calls.out"
}

# medians of the runs' ratios (core: fwdio/mpiio per repetition line; layer:
# small file and write call over plain of the same repetition)
summary() {
    python3 - "$R/core.txt" "$R/layer.txt" <<'PY'
import re, sys, statistics, collections, os
core, layer = sys.argv[1], sys.argv[2]
if os.path.exists(core):
    ratios = collections.defaultdict(list)
    key = None
    for line in open(core):
        m = re.match(r"== rep (\d+) np (\d+) (\w+)", line)
        if m:
            key = (int(m[2]), m[3]); continue
        m = re.search(r"mpiio ([0-9.]+) us\s+fwdio ([0-9.]+) us\s+fwdio/mpiio ([0-9.]+)", line)
        if m and key:
            ratios[key].append((float(m[1]), float(m[2]), float(m[3])))
    for (np_, side), v in sorted(ratios.items()):
        print(f"core np {np_} {side:6s}: fwdio/mpiio median {statistics.median(x[2] for x in v):.2f} "
              f"over {len(v)} reps [{min(x[2] for x in v):.2f}, {max(x[2] for x in v):.2f}]; "
              f"fwdio us median {statistics.median(x[1] for x in v):.0f}, "
              f"mpiio us median {statistics.median(x[0] for x in v):.0f}")
if os.path.exists(layer):
    runs = collections.defaultdict(dict)
    key = None
    for line in open(layer):
        m = re.match(r"== rep (\d+) np (\d+) (\w+)", line)
        if m:
            key = (int(m[2]), m[3], int(m[1])); continue
        m = re.match(r"(write call|small file)\s+median ([0-9.]+) s", line)
        if m and key:
            runs[(key[0], key[1])].setdefault(key[2], {})[m[1]] = float(m[2])
    for (np_, mode), reps in sorted(runs.items()):
        for what in ("write call", "small file"):
            rs = [v[what] / runs[(np_, "plain")][r][what] for r, v in reps.items() if what in v]
            print(f"layer np {np_} {mode:12s} {what}: / plain median {statistics.median(rs):.2f} "
                  f"[{min(rs):.2f}, {max(rs):.2f}] over {len(rs)} reps")
PY
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(core layer)
for s in "${steps[@]}"; do
    echo "=== $s: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    case $s in
    core) core 2>&1 | tee "$R/core.txt" ;;
    layer) layer 2>&1 | tee "$R/layer.txt" ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
    esac
done
summary | tee "$R/summary.txt"
