#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28 (drop-in MPI-IO), fourth session: what an MPI-IO write call and a
# small file (open, 64 KiB per rank, close) cost with and without the layer,
# after the communicator made one file ahead, the close without a last step
# and the progress thread's spinning while a thread waits (poll_spin_us).
# Plain MPI-IO, the layer spinning 200 us (FWDIO_POLL_SPIN_US=200, the
# default when these were measured; off by default since), and the layer
# with spinning off (FWDIO_POLL_SPIN_US=1), side by side in each repetition, on 2 and 4 ranks,
# on tmpfs (the page cache without writeback) and through the file-system
# emulator (4 targets, 1 MiB stripes, 1 ms per request, 400 MB/s each).
# Rerun from the repository root after building build (RelWithDebInfo, the
# default of scripts/setup.sh), with nothing else running:
#   bash bench/runs/2026-11-28-small-files.sh [cache] [pfs]
# LAYER_SPIN sets the "layer" run's FWDIO_POLL_SPIN_US (default 200, as
# measured then; 0 is the automatic choice of later versions).
# Raw output: $FWDIO_RESULTS_DIR/2026-11-28-small-files (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-28-small-files}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
LAYER="-x LD_PRELOAD=$B/mpiio/libfwdio-mpiio.so -x FWDIO_MPIIO=*.out"
REPS=${REPS:-3}
LAYER_SPIN=${LAYER_SPIN:-200}

# run DIR CALLS FILES: every configuration once per repetition and rank count
run() {
    local dir=$1 calls=$2 files=$3
    for rep in $(seq "$REPS"); do
        for np in 2 4; do
            echo "== rep $rep np $np plain; load $(cut -d' ' -f1 /proc/loadavg)"
            mpiexec -n $np "$B/bench/fwdio-mpiio-calls" --dir "$dir" --calls "$calls" --files "$files"
            echo "== rep $rep np $np layer"
            # shellcheck disable=SC2086
            mpiexec -n $np $LAYER -x FWDIO_POLL_SPIN_US="$LAYER_SPIN" "$B/bench/fwdio-mpiio-calls" --dir "$dir" --calls "$calls" \
                --files "$files"
            echo "== rep $rep np $np layer_nospin"
            # shellcheck disable=SC2086
            mpiexec -n $np $LAYER -x FWDIO_POLL_SPIN_US=1 "$B/bench/fwdio-mpiio-calls" \
                --dir "$dir" --calls "$calls" --files "$files"
        done
    done
    rm -f "$dir/calls.out"
}

# summary FILE: per rank count and configuration, each repetition's median
# write call and small file, and its ratio to plain MPI-IO of the same
# repetition
summary() {
    python3 - "$1" <<'PY'
import re, sys, collections
runs = collections.defaultdict(dict)  # (np, mode) -> rep -> (write, small)
key = None
for line in open(sys.argv[1]):
    m = re.match(r"== rep (\d+) np (\d+) (\w+)", line)
    if m:
        key = (int(m[2]), m[3], int(m[1]))
        continue
    m = re.match(r"(write call|small file)\s+median ([0-9.]+) s", line)
    if m and key:
        np_, mode, rep = key
        runs[(np_, mode)].setdefault(rep, {})[m[1]] = float(m[2])
for (np_, mode), reps in sorted(runs.items()):
    for what in ("write call", "small file"):
        vals = [(r, v[what]) for r, v in sorted(reps.items()) if what in v]
        ratio = [v / runs[(np_, "plain")][r][what] for r, v in vals]
        print(f"np {np_} {mode:13s} {what}: " + ", ".join(f"{v*1e3:.2f} ms" for _, v in vals)
              + "  / plain: " + ", ".join(f"{x:.2f}" for x in ratio))
PY
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(cache pfs)
for step in "${steps[@]}"; do
    case $step in
    cache)
        DIR=${SCRATCH:-/dev/shm/small-files}
        mkdir -p "$DIR"
        run "$DIR" 20 40 2>&1 | tee "$R/cache.txt"
        summary "$R/cache.txt" | tee "$R/cache-summary.txt"
        ;;
    pfs)
        MNT=/tmp/small-files-pfs
        BACK=/dev/shm/small-files-backing
        mkdir -p "$MNT" "$BACK"
        bench/pfs up "$MNT" --targets 4 --stripe 1M --bw 400M --latency 1 --backing "$BACK"
        trap 'bench/pfs down "$MNT" --lazy >/dev/null 2>&1 || true; rm -rf "$BACK"' EXIT
        run "$MNT" 10 20 2>&1 | tee "$R/pfs.txt"
        bench/pfs down "$MNT" | tee -a "$R/pfs.txt"
        summary "$R/pfs.txt" | tee "$R/pfs-summary.txt"
        trap - EXIT
        rm -rf "$BACK"
        ;;
    *) echo "unknown step $step (cache, pfs)" >&2; exit 2 ;;
    esac
done
