#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Peers' MPI-IO test programs run without and with the MPI-IO layer, and
# their outcomes compared: exit status and the tests' own verdict ("No
# Errors" / "Found N errors"). Built and run outside the repository, from an
# MPICH source tree this script does not carry (a clone of pmodels/mpich).
#
#   scripts/peers/mpiio_tests.sh --suite romio|mpich --src DIR [--mpi openmpi|mpich]
#       [--build DIR] [--out DIR] [--runs N] [--large]
#
#   --suite  romio: ROMIO's own tests (--src MPICH/src/mpi/romio/test), the
#            25 programs of its runtests; mpich: MPICH's MPI-IO tests
#            (--src MPICH/test/mpi: the programs its io/testlist.in lists,
#            built with its MTest harness, util/ and include/; each runs in a
#            folder of its own, as its files have fixed names)
#   --src    that suite's folder
#   --mpi    which MPI to build and run them with (default openmpi; mpich
#            uses Debian's mpicc.mpich / mpiexec.mpich)
#   --build  fwdio's build directory for that MPI (its mpiio/libfwdio-mpiio.so;
#            default build, or build-mpich with --mpi mpich)
#   --out    where the programs, their files and outputs go (default
#            /dev/shm/<suite>-tests-<mpi>)
#   --runs   runs of each program with the layer (default 3)
#   --large  also the large ones (romio: large_array, 4 GiB of file per run;
#            mpich: bigtype and i_bigtype, which need 6.5 GB of memory)
# Prints one line per program: plain and layer outcomes, "same" or
# "DIFFERS", and how many files the layer took and closed (its
# FWDIO_VERBOSE lines "closed: N bytes through fwdio"; 0 where the program
# hands every file back or calls PMPI_File_* itself); exits 1 if any
# differs.
set -euo pipefail
suite="" src="" mpi=openmpi build="" out="" runs=3 large=0
while [ $# -gt 0 ]; do
    case $1 in
    --suite) suite=$2; shift 2 ;;
    --src) src=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --large) large=1; shift ;;
    -h|--help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mpiio_tests: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
case $suite in
romio) [ -n "$src" ] && [ -f "$src/simple.c" ] ||
           { echo "mpiio_tests: --src must name ROMIO's test folder (src/mpi/romio/test)" >&2; exit 2; } ;;
mpich) [ -n "$src" ] && [ -f "$src/io/testlist.in" ] && [ -f "$src/util/mtest.c" ] ||
           { echo "mpiio_tests: --src must name MPICH's test/mpi folder" >&2; exit 2; } ;;
*) echo "mpiio_tests: --suite romio or mpich" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
case $mpi in
openmpi) cc=mpicc; run=(mpiexec --oversubscribe); env_flag() { echo "-x $1=$2"; }
         build=${build:-$root/build}
         export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
mpich)   cc=mpicc.mpich; run=(mpiexec.mpich); env_flag() { echo "-genv $1 $2"; }
         build=${build:-$root/build-mpich} ;;
*) echo "mpiio_tests: --mpi openmpi or mpich" >&2; exit 2 ;;
esac
layer=$(realpath "$build/mpiio/libfwdio-mpiio.so")
src=$(realpath "$src")
out=$(realpath -m "${out:-/dev/shm/$suite-tests-$mpi}")
mkdir -p "$out/bin" "$out/files" "$out/logs"
cd "$out" # some programs write files of their own in the current directory

# name ranks arguments (FNAME stands for the file), as the suite runs them
tests=()
if [ "$suite" = romio ]; then
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
else
    # io/testlist.in: "name ranks [arg=A] [mem=G] [other keys]"; a name may
    # come twice with other arguments (rdwrord -large-count)
    while read -r name np rest; do
        [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
        args=""
        for w in $rest; do
            case $w in
            arg=*) args="$args ${w#arg=}" ;;
            mem=*) [ "$large" = 1 ] || continue 2 ;;
            *=*) ;;
            *) args="$args $w" ;;
            esac
        done
        tests+=("$name $np$args")
    done <"$src/io/testlist.in"
    # what MPICH's configure would generate: empty where the tests run
    # outside MPICH (its autogen.sh does the same for mtest_mpix.h)
    mkdir -p "$out/gen"
    : >"$out/gen/mtest_mpix.h"
    printf '%s\n' '#define HAVE_STDLIB_H 1' '#define HAVE_STRING_H 1' '#define HAVE_UNISTD_H 1' \
        '#define HAVE_SYS_TIME_H 1' '#define HAVE_SYS_RESOURCE_H 1' '#define HAVE_STDARG_H 1' \
        '#define HAVE_MPI_IO 1' \
        '#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX' >"$out/gen/mpitestconf.h"
fi

# Build one program (0), or say why not.
build_one() {
    local name=$1
    [ -x "$out/bin/$name" ] && return 0
    if [ "$suite" = romio ]; then
        "$cc" -O1 -w -o "$out/bin/$name" "$src/$name.c" -lm
    else
        "$cc" -O1 -w -I"$out/gen" -I"$src/include" -I"$src/util" -o "$out/bin/$name" \
            "$src/io/$name.c" "$src/util/mtest.c" "$src/util/mtest_common.c" \
            "$src/util/mtest_thread.c" -lm -lpthread
    fi
}

verdict() { # log exit -> outcome word
    local v="exit=$2"
    if grep -q "No Errors" "$1"; then v="$v,No-Errors"; fi
    local n; n=$(grep -o "Found [0-9]* errors" "$1" | head -1 || true)
    [ -n "$n" ] && v="$v,${n// /-}"
    echo "$v"
}

differ=0
printf "%-18s %-28s %-28s %-8s %s\n" test plain layer verdict taken
# romio's programs are told their file (in $out/files, which the layer
# takes); mpich's name theirs and run in $out/files, where the layer takes
# every file they open
if [ "$suite" = romio ]; then pattern="$out/files/*"; else pattern="*"; fi
for t in "${tests[@]}"; do
    read -r name np args <<<"$t"
    log=$name${args:+-$(echo "$args" | tr -c 'a-zA-Z0-9\n' _)}
    build_one "$name" 2>"$out/logs/$name.build" || {
        printf "%-18s did not build (%s)\n" "$name" "$out/logs/$name.build"; continue; }
    f="$out/files/$name.dat"
    rm -rf "$out/files"; mkdir -p "$out/files"
    set +e
    # shellcheck disable=SC2086
    (cd "$out/files" && timeout 300 "${run[@]}" -n "$np" "$out/bin/$name" ${args//FNAME/$f}) \
        >"$out/logs/$log.plain" 2>&1
    rc=$?
    set -e
    plain=$(verdict "$out/logs/$log.plain" $rc)
    layer_v=""
    for k in $(seq "$runs"); do
        rm -rf "$out/files"; mkdir -p "$out/files"
        set +e
        # shellcheck disable=SC2046,SC2086
        (cd "$out/files" && timeout 300 "${run[@]}" -n "$np" $(env_flag LD_PRELOAD "$layer") \
            $(env_flag FWDIO_MPIIO "$pattern") $(env_flag FWDIO_VERBOSE 1) "$out/bin/$name" \
            ${args//FNAME/$f}) >"$out/logs/$log.layer$k" 2>&1
        rc=$?
        set -e
        v=$(verdict "$out/logs/$log.layer$k" $rc)
        [ -z "$layer_v" ] && layer_v=$v
        [ "$v" != "$layer_v" ] && layer_v="$layer_v|$v"
    done
    same=same
    [ "$plain" != "$layer_v" ] && { same=DIFFERS; differ=1; }
    taken=$(grep -c "bytes through fwdio" "$out/logs/$log.layer1" || true)
    printf "%-18s %-28s %-28s %-8s %s\n" "$name${args:+ $args}" "$plain" "$layer_v" "$same" "$taken"
done
rm -rf "$out/files"
exit $differ
