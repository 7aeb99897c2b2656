#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/testbed end to end (ctest pfs_testbed): up with the emulator, fwdio-bench
# through it with --settle and --presize (it verifies every byte it wrote, in
# every mode), the emulator's accounting of those bytes, then down, which must
# leave nothing behind. No time is checked.
#
#   testbed_check.sh REPO BUILD_DIR RUN_DIR MPIEXEC
set -euo pipefail
repo=$1 build=$2 run=$3 mpiexec=$4
testbed=("$repo/bench/testbed" --build "$build")
state=$run/state
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

rm -rf "$run"
mkdir -p "$run"
cleanup() { "${testbed[@]}" down --state "$state" >/dev/null 2>&1 || true; }
trap cleanup EXIT

rc=0
out=$("${testbed[@]}" up --state "$state" --dir "$run" \
    --pfs "--targets 4 --stripe 64K --bw 4G --latency 0") || rc=$?
if [[ $rc -eq 77 ]]; then
    echo "SKIP: bench/testbed up: the emulator is unavailable here"
    exit 77
fi
[[ $rc -eq 0 ]] || fail "bench/testbed up exited $rc"
dir=$(sed -n 's/^dir=//p' <<<"$out")
[[ -n $dir ]] && mountpoint -q "$dir" || fail "up printed no mounted dir= ($out)"
grep -q '^describe=parallel file system emulator' <<<"$out" || fail "no describe= line: $out"
grep -qx 'mpirun=' <<<"$out" || fail "mpirun= must be empty without --hosts: $out"
# A second up on the same state is refused and leaves the first alone.
if "${testbed[@]}" up --state "$state" --dir "$run" >/dev/null 2>&1; then
    fail "a second up on the same state file succeeded"
fi
mountpoint -q "$dir" || fail "the refused second up unmounted the first"

"${testbed[@]}" stats --state "$state" --reset >/dev/null
csv=$run/bench.csv
size=$((4 << 20))
# More ranks than cores: only Open MPI needs a flag (TC_MPI: tests/CMakeLists.txt).
oversubscribe=()
[[ ${TC_MPI:-openmpi} != openmpi ]] || oversubscribe=(--oversubscribe)
"$mpiexec" "${oversubscribe[@]}" -np 4 "$build/bench/fwdio-bench" --size "$size" --writers 2 \
    --modes fwdio,mpiio,independent --reps 1 --settle --presize --dir "$dir" --csv "$csv" ||
    fail "fwdio-bench through the test bed failed"

python3 - "$csv" "$size" "$dir" <<'PY'
import csv, json, sys
src, size, mnt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = list(csv.DictReader(open(src)))
modes = sorted(r["config"] for r in rows)
assert len(rows) == 4, "expected fwdio W=2, mpiio W=2, mpiio no hint, independent: %s" % modes
for r in rows:
    assert r["status"] == "0" and r["verified"] == "1", "not verified: %s" % r
    assert float(r["settle_s"]) >= 0 and float(r["cpu_s"]) > 0, "no settle_s/cpu_s: %s" % r
st = json.load(open(mnt + "/.pfs-stats.json"))
tot = st["total"]
# Four files of `size` bytes went through the mount, and the pre-sized MPI-IO
# files and fwdio's (sized at open) never extended a file.
assert tot["write_bytes"] == 4 * size, "write_bytes %d, expected %d" % (tot["write_bytes"], 4 * size)
assert tot["extending_writes"] == 0, "extending_writes %d" % tot["extending_writes"]
per = [t["write_bytes"] for t in st["targets"]]
assert sum(per) == 4 * size and min(per) == max(per), "targets uneven: %s" % per
print("ok: 4 runs verified; %d bytes over 4 targets %s, no extending write" % (4 * size, per))
PY

settle=$("${testbed[@]}" settle) || fail "settle exited $?"
grep -q '^settle: ' <<<"$settle" || fail "settle printed: $settle"

root=$(dirname "$dir")
"${testbed[@]}" down --state "$state" >/dev/null || fail "down failed"
! mountpoint -q "$dir" 2>/dev/null || fail "still mounted after down"
[[ ! -e $root ]] || fail "down left $root"
[[ ! -e $state ]] || fail "down left the state file"
"${testbed[@]}" down --state "$state" || fail "a second down is not a no-op"
echo "ok: down removed the mount, its directories and the state"
