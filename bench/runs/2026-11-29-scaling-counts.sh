#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 30 item 3 (cost growth): the MPI calls of one file and one stream step
# counted by the PMPI shim (tests/util/mpi_counts.c) at P = 2..256 ranks on
# this machine (oversubscribed: counts and memory, not time), beside the cost
# model (apps/common/cost_model.c, docs/scaling.md). Every rank of every run
# also checks its own counts against the model (test_scaling_counts fails on a
# difference). Rerun from the repository root after building build/:
#   bash bench/runs/2026-11-29-scaling-counts.sh [local] [inflight] [hosts]
# Steps: local (one host, P = 2..256, W = 2 as fwdio's default on one node,
# and W = P/8), inflight (2 ranks, 1000/2000/4000 small files in flight at
# once, timed: the O(n^2) of docs/scaling.md; time, so run it on a quiet
# machine), hosts (4 simulated hosts of the test bed, 2 ranks each, W = 2, 4, 8;
# needs network namespaces). The model's table: apps/fwdio-plan --model.
set -euo pipefail
R=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-29-scaling-counts}
mkdir -p "$R"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export FWDIO_POLL_SPIN_US=1
B=${BUILD:-build}
T=$B/tests/mpi/test_scaling_counts
STEPS=${*:-local}
STATE=/tmp/scaling-counts-testbed.state

echo "load before: $(cat /proc/loadavg)" | tee -a "$R/load.txt"
for step in $STEPS; do
    case $step in
    local)
        for P in 2 4 8 16 32 64 128 256; do
            for W in $(printf '%s\n' 2 $((P / 8 > 0 ? P / 8 : 1)) | sort -un); do
                echo "== P=$P W=$W $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
                mpirun -n "$P" "$T" --writers "$W" --timeout 900 --report "$R/local.txt" \
                    >"$R/local-np$P-w$W.log" 2>&1 || echo "FAILED: see $R/local-np$P-w$W.log"
            done
        done
        ;;
    inflight)
        for n in 1000 2000 4000; do
            echo "== in flight $n $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
            mpirun -n 2 "$T" --writers 1 --in-flight "$n" --timeout 900 --report "$R/inflight.txt" \
                >"$R/inflight-$n.log" 2>&1 || echo "FAILED: see $R/inflight-$n.log"
        done
        ;;
    hosts)
        out=$(bench/testbed --build "$B" up --state $STATE --hosts 4 --slots 2)
        opts=$(sed -n 's/^mpirun=//p' <<<"$out")
        trap 'bench/testbed down --state $STATE >/dev/null || true' EXIT
        for W in 2 4 8; do
            # shellcheck disable=SC2086
            mpirun $opts -n 8 "$T" --writers $W --timeout 900 --report "$R/hosts.txt" \
                >"$R/hosts-np8-w$W.log" 2>&1 || echo "FAILED: see $R/hosts-np8-w$W.log"
        done
        bench/testbed down --state $STATE >/dev/null || true
        ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
    esac
done
echo "load after: $(cat /proc/loadavg)" | tee -a "$R/load.txt"
echo "results in $R"
