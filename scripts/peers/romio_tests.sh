#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ROMIO's own test programs (src/mpi/romio/test of an MPICH source tree,
# which this script does not carry) run without and with the MPI-IO layer,
# and their outcomes compared: exit status and the tests' own verdict
# ("No Errors" / "Found N errors"). Built and run outside the repository.
#
#   scripts/peers/romio_tests.sh --src MPICH/src/mpi/romio/test [--mpi openmpi|mpich]
#       [--build DIR] [--out DIR] [--runs N] [--large]
#
#   --src    ROMIO's test folder (e.g. of a clone of pmodels/mpich)
#   --mpi    which MPI to build and run them with (default openmpi; mpich
#            uses Debian's mpicc.mpich / mpiexec.mpich)
#   --build  fwdio's build directory for that MPI (its mpiio/libfwdio-mpiio.so;
#            default build, or build-mpich with --mpi mpich)
#   --out    where the programs, their files and outputs go (default
#            /dev/shm/romio-tests-<mpi>)
#   --runs   runs of each program with the layer (default 3)
#   --large  also large_array (4 GiB of file per run)
# Prints one line per program: plain and layer outcomes, "same" or
# "DIFFERS", and how many files the layer took and closed (its
# FWDIO_VERBOSE lines "closed: N bytes through fwdio"; 0 where the program
# hands every file back or calls PMPI_File_* itself); exits 1 if any
# differs.
set -euo pipefail
src="" mpi=openmpi build="" out="" runs=3 large=0
while [ $# -gt 0 ]; do
    case $1 in
    --src) src=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --large) large=1; shift ;;
    -h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "romio_tests: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
[ -n "$src" ] && [ -f "$src/simple.c" ] || { echo "romio_tests: --src must name ROMIO's test folder" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
case $mpi in
openmpi) cc=mpicc; run=(mpiexec --oversubscribe); env_flag() { echo "-x $1=$2"; }
         build=${build:-$root/build}
         export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
mpich)   cc=mpicc.mpich; run=(mpiexec.mpich); env_flag() { echo "-genv $1 $2"; }
         build=${build:-$root/build-mpich} ;;
*) echo "romio_tests: --mpi openmpi or mpich" >&2; exit 2 ;;
esac
layer=$(realpath "$build/mpiio/libfwdio-mpiio.so")
src=$(realpath "$src")
out=$(realpath -m "${out:-/dev/shm/romio-tests-$mpi}")
mkdir -p "$out/bin" "$out/files" "$out/logs"
cd "$out" # some programs write files of their own in the current directory

# name ranks arguments (FNAME stands for the file), as ROMIO's runtests runs them
tests=(
"simple 4 -fname FNAME" "async 4 -fname FNAME" "async-multiple 4 -fname FNAME"
"atomicity 4 -fname FNAME" "coll_test 4 -fname FNAME" "excl 4 -fname FNAME"
"file_info 4 -fname FNAME" "i_noncontig 2 -fname FNAME" "noncontig 2 -fname FNAME"
"noncontig_coll 2 -fname FNAME" "noncontig_coll2 4 -fname FNAME" "aggregation1 4 -h -f FNAME"
"aggregation2 4 -fname FNAME" "hindexed 4 -fname FNAME" "shared_fp 4 -fname FNAME"
"ordered_fp 4 -fname FNAME" "split_coll 4 -fname FNAME" "psimple 4 -fname FNAME"
"error 1 -fname FNAME" "status 1 -fname FNAME" "types_with_zeros 2 -fname FNAME"
"darray_read 4 -fname FNAME" "big_extents 4 FNAME" "creat_excl 4 -fname FNAME"
"external32 4 -fname FNAME")
[ "$large" = 1 ] && tests+=("large_array 4 -fname FNAME")

verdict() { # log exit -> outcome word
    local v="exit=$2"
    if grep -q "No Errors" "$1"; then v="$v,No-Errors"; fi
    local n; n=$(grep -o "Found [0-9]* errors" "$1" | head -1 || true)
    [ -n "$n" ] && v="$v,${n// /-}"
    echo "$v"
}

differ=0
printf "%-18s %-28s %-28s %-8s %s\n" test plain layer verdict taken
for t in "${tests[@]}"; do
    read -r name np args <<<"$t"
    if [ ! -x "$out/bin/$name" ]; then
        "$cc" -O1 -w -o "$out/bin/$name" "$src/$name.c" -lm 2>"$out/logs/$name.build" || {
            printf "%-18s did not build (%s)\n" "$name" "$out/logs/$name.build"; continue; }
    fi
    f="$out/files/$name.dat"
    rm -rf "$out/files"; mkdir -p "$out/files"
    # shellcheck disable=SC2086
    set +e
    timeout 300 "${run[@]}" -n "$np" "$out/bin/$name" ${args//FNAME/$f} >"$out/logs/$name.plain" 2>&1
    rc=$?
    set -e
    plain=$(verdict "$out/logs/$name.plain" $rc)
    layer_v=""
    for k in $(seq "$runs"); do
        rm -rf "$out/files"; mkdir -p "$out/files"
        set +e
        # shellcheck disable=SC2046,SC2086
        timeout 300 "${run[@]}" -n "$np" $(env_flag LD_PRELOAD "$layer") \
            $(env_flag FWDIO_MPIIO "$out/files/*") $(env_flag FWDIO_VERBOSE 1) "$out/bin/$name" ${args//FNAME/$f} \
            >"$out/logs/$name.layer$k" 2>&1
        rc=$?
        set -e
        v=$(verdict "$out/logs/$name.layer$k" $rc)
        [ -z "$layer_v" ] && layer_v=$v
        [ "$v" != "$layer_v" ] && layer_v="$layer_v|$v"
    done
    same=same
    [ "$plain" != "$layer_v" ] && { same=DIFFERS; differ=1; }
    taken=$(grep -c "bytes through fwdio" "$out/logs/$name.layer1" || true)
    printf "%-18s %-28s %-28s %-8s %s\n" "$name" "$plain" "$layer_v" "$same" "$taken"
done
rm -rf "$out/files"
exit $differ
