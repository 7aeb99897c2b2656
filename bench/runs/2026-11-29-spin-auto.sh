#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28: poll_spin_us chosen per node (0, the default: 200 us where the
# node has a CPU for every rank, off where ranks share CPUs). The runs of
# 2026-11-28-small-files.sh with the "layer" run left at the default, beside
# plain MPI-IO and the layer with spinning off (FWDIO_POLL_SPIN_US=1), on 2
# ranks (a CPU each: spinning) and 4 (2 per CPU: off). Rerun from the
# repository root after building build, with nothing else running:
#   REPS=5 bash bench/runs/2026-11-29-spin-auto.sh [cache] [pfs]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-29-spin-auto (outside the repository).
set -euo pipefail
OUT=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-29-spin-auto} LAYER_SPIN=0 \
    exec bash "$(dirname "$0")/2026-11-28-small-files.sh" "$@"
