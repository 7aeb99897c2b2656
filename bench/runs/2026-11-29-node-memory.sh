#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 30, item 1 (node memory is a node budget): what fwdio holds on one
# node at fwdio_init and at the peak of one 64 MiB file and of 8 files in
# flight, at 8, 32, 128 and 256 ranks (oversubscribed: counts and memory, not
# time), with this build ("after") and with the library before the change
# ("before", fbdddf3: every rank reserves shared_buffer = 72 MiB at init).
# The measuring program is tests/mpi/test_node_memory (its "node-memory:" line:
# the area's segments' allocated blocks in /dev/shm from st_blocks, sampled
# every 2 ms, and the ranks' resident sets); it runs against the before
# library through LD_LIBRARY_PATH (the public API and struct sizes are the
# same). Beside it this script samples the machine's Shmem (/proc/meminfo)
# every 50 ms: a cross-check that counts whatever else runs on the machine.
# Rerun from the repository root after building build/:
#   BEFORE_LIB=/path/to/before/build bash bench/runs/2026-11-29-node-memory.sh [after|before] [ranks...]
#   bash bench/runs/2026-11-29-node-memory.sh commit-cost   (bench/shm_commit_cost.c)
# BEFORE_LIB holds libfwdio.so.0 built from fbdddf3 (git worktree add
# /tmp/before fbdddf3 && cmake -S /tmp/before -B /tmp/before/build && cmake
# --build /tmp/before/build --target fwdio). "before" at 256 ranks would put
# 256 x 72 MiB = 18 GiB in /dev/shm at once; it runs only with
# BEFORE_256=1.
set -uo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-29-node-memory}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FWDIO_POLL_SPIN_US=1
PROG=build/tests/mpi/test_node_memory
BEFORE_LIB=${BEFORE_LIB:-$HOME/fwdio-results/node-memory/before-lib}
which=${1:-after}
shift || true
if [ "$which" = commit-cost ]; then
    cc -O2 -o "$R/shm_commit_cost" bench/shm_commit_cost.c && "$R/shm_commit_cost" | tee "$R/commit-cost.txt"
    exit
fi
ranks=${*:-8 32 128 256}

shmem_kib() { awk '/^Shmem:/ {print $2}' /proc/meminfo; }

for n in $ranks; do
    if [ "$which" = before ] && [ "$n" -ge 256 ] && [ "${BEFORE_256:-0}" != 1 ]; then
        echo "before at $n ranks skipped (BEFORE_256=1 runs it)"
        continue
    fi
    out="$R/$which-np$n.txt"
    base=$(shmem_kib)
    peakf="$R/$which-np$n.shmem"
    echo "$base" > "$peakf"
    ( while :; do shmem_kib >> "$peakf"; sleep 0.05; done ) &
    sampler=$!
    env=()
    [ "$which" = before ] && env=(env LD_LIBRARY_PATH="$BEFORE_LIB")
    start=$(date +%s)
    "${env[@]}" mpiexec -n "$n" --oversubscribe "$PROG" --timeout 900 --size 64M --files 8 \
        --init-rss 1G > "$out" 2>&1
    rc=$?
    kill "$sampler"; wait "$sampler" 2>/dev/null
    peak=$(sort -n "$peakf" | tail -1)
    echo "exit=$rc seconds=$(( $(date +%s) - start )) machine_shmem_base_kib=$base machine_shmem_peak_kib=$peak" >> "$out"
    echo "== $which np$n: $(grep -h '^node-memory:' "$out") exit=$rc shmem_peak_delta_mib=$(( (peak - base) / 1024 ))"
done
