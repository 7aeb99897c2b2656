#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 28, 2026-11-30 (fifteenth session): unmodified LAMMPS (lmp, dump
# custom/mpiio of the LJ melt, a snapshot every 5 of 60 steps) through the
# file-system emulator (4 targets of 50 MB/s, 1 MiB stripes, 1 ms per
# request): the runs of 2026-11-30-layer-tier.sh (plain MPI-IO, the layer
# with fwdio's default 16 MiB stripes, asynchronous syncs, the tier) with one
# more mode, the layer with FWDIO_STRIPE_SIZE=1M (the emulator's stripe unit,
# as a striping_unit hint would set it); interleaved and paired. Rerun from
# the repository root after building build, nothing else running:
#   REPS=5 bash bench/runs/2026-11-30-layer-stripe.sh [np2] [np8]
# Raw output: $FWDIO_RESULTS_DIR/2026-11-30-layer-stripe (outside the repository).
set -euo pipefail
OUT=${OUT:-${FWDIO_RESULTS_DIR:-$HOME/fwdio-results}/2026-11-30-layer-stripe} EXTRA="--stripe 1M" \
    exec bash "$(dirname "$0")/2026-11-30-layer-tier.sh" "$@"
