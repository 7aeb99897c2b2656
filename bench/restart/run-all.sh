#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Restart reads: a 256 MiB checkpoint read back by 8 and by 2 ranks through fwdio
# (fwdio_open_read + fwdio_read), MPI_File_read_at_all (Open MPI's ompio and
# ROMIO, one invocation each: the component is chosen at MPI_Init) and plain
# pread of every rank's own pieces, side by side in every invocation
# (fwdio-restart, docs/results/restart-reads.md). Each configuration runs
# with contiguous shares (--pieces 1) and with mdlj-like scattered runs
# (--pieces 64). Storage: tmpfs (/dev/shm: the page cache, warm), a
# disk-backed directory with the file's pages dropped before every run
# (--cold), and the parallel file system emulator (4 targets x 50 MiB/s,
# 1 MiB stripes, 1 ms per request). Read calls on the file are counted for
# every method by the LD_PRELOAD shim libfwdio-iocount.so. From the
# repository root, after building $B (default build-release):
#   bash bench/restart/run-all.sh [step...]
# Steps: cache-np8 cache-np2 disk-np8 disk-np2 pfs-np8 pfs-np2 (default: all)
# Environment: B (build tree), R (results directory, default
# $FWDIO_RESULTS_DIR/restart-<today>, FWDIO_RESULTS_DIR defaulting to
# ~/fwdio-results), REPS (5), SIZE (256M), PIECES ("1 64"),
# IOS ("ompio romio321"), DISK_DIR (a directory on a disk, default
# /tmp/fwdio-restart-disk; check `stat -f -c %T` says ext2/ext3, xfs, ... and
# not tmpfs), COLD (fadvise, or drop: also echo 1 > /proc/sys/vm/drop_caches),
# EXTRA (more fwdio-restart arguments for every run).
# Nothing else may run meanwhile: every figure is a ratio of runs side by side.
# The load average before each run is in its .txt and in run-all.log.
set -euo pipefail
B=${B:-build-release}
R=${R:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/restart-$(date -u +%F)}
REPS=${REPS:-5}
SIZE=${SIZE:-256M}
PIECES=${PIECES:-"1 64"}
IOS=${IOS:-"ompio romio321"}
DISK_DIR=${DISK_DIR:-/tmp/fwdio-restart-disk}
COLD=${COLD:-fadvise}
EXTRA=${EXTRA:-}
PFS_DIR=/tmp/fwdio-restart-pfs
PFS_BACKING=/dev/shm/fwdio-restart-pfs-backing
# Storage, not CPU, is the bottleneck: 4 x 50 MiB/s against the ~2 GiB/s FUSE
# reaches here with no modelled cost.
PFS4="--targets 4 --stripe 1M --bw 50M --latency 1 --start-target 0"
# fwdio is told the emulator's striping as a user would tell it the file
# system's; ROMIO reads striping_unit (ompio ignores it, see docs/benchmarks.md
# "What each peer sees of the striping").
FWDIO_PFS="--layout targets --targets 4 --stripe-size 1M"
MPIIO_PFS="--hints striping_unit=1048576"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BIN=$B/bench/fwdio-restart
SHIM=$(cd "$B/bench" && pwd)/libfwdio-iocount.so
[[ -x $BIN ]] || { echo "no $BIN: cmake --build $B -j2 --target fwdio-restart fwdio-iocount" >&2; exit 1; }
[[ -f $SHIM ]] || { echo "no $SHIM: cmake --build $B -j2 --target fwdio-iocount" >&2; exit 1; }
mkdir -p "$R"
export PFS_BIN=$B/bench/fwdio-pfs

pfs_mounted=0
cleanup() {
    if [[ $pfs_mounted == 1 ]]; then
        bench/pfs down "$PFS_DIR" --lazy > /dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

# one invocation: name np io path args...
one() {
    local name=$1 np=$2 io=$3 path=$4
    shift 4
    local over=()
    [[ $np -gt 2 ]] && over=(--oversubscribe)
    local head="=== $name: $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$head" | tee -a "$R/run-all.log"
    {
        echo "$head"
        mpirun "${over[@]}" -np "$np" --mca io "$io" -x LD_PRELOAD="$SHIM" "$BIN" --size "$SIZE" \
            --path "$path" --reps "$REPS" --csv "$R/$name.csv" --summary "$R/$name.summary.csv" \
            "$@" $EXTRA 2>&1
    } > "$R/$name.txt" || echo "    $name: exit status $? (see $R/$name.txt)" | tee -a "$R/run-all.log"
    tail -n +2 "$R/$name.txt" | sed -n '/^# summary/,$p' | head -8 | sed 's/^/    /'
}

run() {
    local step=$1 kind=${1%-np*} np=${1#*-np}
    local path args=()
    case $kind in
    cache) path=/dev/shm/fwdio-restart.ckpt ;;
    disk) mkdir -p "$DISK_DIR"
        [[ $(stat -f -c %T "$DISK_DIR") != tmpfs ]] || { echo "DISK_DIR $DISK_DIR is tmpfs" >&2; return 2; }
        path=$DISK_DIR/fwdio-restart.ckpt
        args=(--cold "$COLD" --settle) ;;
    pfs) mkdir -p "$PFS_DIR"
        bench/pfs up "$PFS_DIR" $PFS4 --backing "$PFS_BACKING" --log "$R/$step-pfs.log"
        pfs_mounted=1
        path=$PFS_DIR/fwdio-restart.ckpt
        args=($FWDIO_PFS $MPIIO_PFS) ;;
    *) echo "unknown step $step" >&2; return 2 ;;
    esac
    [[ $np =~ ^[0-9]+$ ]] || { echo "unknown step $step" >&2; return 2; }
    for pieces in $PIECES; do
        for io in $IOS; do
            one "$step-p$pieces-$io" "$np" "$io" "$path" --pieces "$pieces" "${args[@]}"
        done
    done
    rm -f "$path"
    if [[ $kind == pfs ]]; then
        bench/pfs down "$PFS_DIR" > "$R/$step-pfs-final.txt"
        pfs_mounted=0
        rmdir "$PFS_BACKING" 2> /dev/null || true
    fi
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(cache-np8 cache-np2 disk-np8 disk-np2 pfs-np8 pfs-np2)
{
    echo "# $(date -u +%FT%TZ) fwdio $(git rev-parse --short HEAD 2>/dev/null || echo ?)" \
         "$(git status --porcelain 2>/dev/null | grep -q . && echo '(with local changes)')"
    echo "# size $SIZE, reps $REPS, pieces $PIECES, io $IOS, disk $DISK_DIR ($(mkdir -p "$DISK_DIR" && stat -f -c %T "$DISK_DIR")), cold $COLD"
    echo "# $(nproc) cores, $(grep MemTotal /proc/meminfo), $(mpirun --version 2>/dev/null | head -1)"
} | tee -a "$R/run-all.log"
for s in "${steps[@]}"; do
    run "$s"
done
