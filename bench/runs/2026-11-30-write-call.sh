#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28's seventh promise (2026-11-30, seventeenth session): an MPI-IO
# write call through the layer blocks at most 2x as long as without it, and
# a small file's open-write-close costs at most 1.5x. fwdio-mpiio-calls
# plain and through the layer (defaults: the small file held), side by side
# in every repetition, 2 and 4 ranks; the write calls (4 MiB per rank, 20)
# back to back, and with 20 ms of computing before each (--compute 0.02, as
# a simulation writes a frame and computes: no write of the call before is
# then still under way), the small files (64 KiB per rank, 40) after them,
# likewise back to back and after 20 ms of computing each (the whole loops'
# times too, computing included: what the background work cost it);
# on tmpfs (the page cache) and through the file-system emulator (4
# targets, 1 MiB stripes, 1 ms per request, 400 MB/s each). Rerun from the
# repository root after building build, nothing else running:
#   REPS=7 bash bench/runs/2026-11-30-write-call.sh [cache] [pfs]
# Prints, per figure, each repetition's median and the median [range] of its
# ratio to plain MPI-IO's in the same repetition. Raw output:
# $FWDIO_RESULTS_DIR/2026-11-30-write-call (outside the repository).
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-write-call}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
B=$(realpath "${BUILD:-build}")
LAYER="-x LD_PRELOAD=$B/mpiio/libfwdio-mpiio.so -x FWDIO_MPIIO=*.out"
REPS=${REPS:-7}

# run DIR FILES: every configuration once per repetition and rank count
run() {
    local dir=$1 files=$2
    rm -f /dev/shm/vader_segment.* 2>/dev/null || true
    for rep in $(seq "$REPS"); do
        for np in 2 4; do
            for gap in 0 0.02; do
                for mode in plain layer; do
                    echo "== rep $rep np $np gap $gap $mode; load $(cut -d' ' -f1 /proc/loadavg)"
                    env=
                    [ $mode = layer ] && env=$LAYER
                    # shellcheck disable=SC2086
                    mpiexec -n $np $env "$B/bench/fwdio-mpiio-calls" --dir "$dir" --calls 20 \
                        --files "$files" --compute $gap
                done
            done
        done
    done
    rm -f "$dir"/*.out
}

summary() {
    python3 - "$1" <<'PY'
import re, sys, collections, statistics
runs = collections.defaultdict(dict)  # (np, gap, what) -> mode -> rep -> seconds
key = None
for line in open(sys.argv[1]):
    m = re.match(r"== rep (\d+) np (\d+) gap (\S+) (\w+)", line)
    if m:
        key = (int(m[1]), int(m[2]), m[3], m[4])
        continue
    m = re.match(r"(write call|small file)\s+median ([0-9.]+) s", line)
    if m and key:
        rep, np_, gap, mode = key
        runs[(np_, f"{m[1]}, compute {gap} s")].setdefault(mode, {})[rep] = float(m[2])
    m = re.match(r"(compute\+calls|compute\+files)\s+([0-9.]+) s", line)
    if m and key:
        rep, np_, gap, mode = key
        runs[(np_, f"{m[1]} (whole loop), compute {gap} s")].setdefault(mode, {})[rep] = float(m[2])
for (np_, what), modes in sorted(runs.items()):
    plain, layer = modes.get("plain", {}), modes.get("layer", {})
    reps = sorted(set(plain) & set(layer))
    if not reps:
        continue
    r = [layer[k] / plain[k] for k in reps]
    print(f"np {np_} {what}: plain {statistics.median(plain[k] for k in reps)*1e3:.3f} ms, "
          f"layer {statistics.median(layer[k] for k in reps)*1e3:.3f} ms (medians); "
          f"layer/plain {statistics.median(r):.2f} [{min(r):.2f}, {max(r):.2f}] over {len(r)}")
PY
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(cache pfs)
for step in "${steps[@]}"; do
    case $step in
    cache)
        DIR=${SCRATCH:-/dev/shm/write-call}
        mkdir -p "$DIR"
        run "$DIR" 40 2>&1 | tee "$R/cache.txt"
        summary "$R/cache.txt" | tee "$R/cache-summary.txt"
        ;;
    pfs)
        MNT=/tmp/write-call-pfs
        BACK=/dev/shm/write-call-backing
        mkdir -p "$MNT" "$BACK"
        bench/pfs up "$MNT" --targets 4 --stripe 1M --bw 400M --latency 1 --backing "$BACK"
        trap 'bench/pfs down "$MNT" --lazy >/dev/null 2>&1 || true; rm -rf "$BACK"' EXIT
        run "$MNT" 20 2>&1 | tee "$R/pfs.txt"
        bench/pfs down "$MNT" | tee -a "$R/pfs.txt"
        summary "$R/pfs.txt" | tee "$R/pfs-summary.txt"
        trap - EXIT
        rm -rf "$BACK"
        ;;
    *) echo "unknown step $step (cache, pfs)" >&2; exit 2 ;;
    esac
done
