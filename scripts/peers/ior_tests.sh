#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# IOR's MPIIO backend (hpc/ior, built outside the repository against the MPI
# named) without and with the MPI-IO layer, in the access patterns a user
# runs: shared file and file per process, independent and collective, small
# and strided transfers, fsync, random offsets, several iterations. Every
# run writes, reads, and checks both (-w -r -W -R), reading other ranks'
# data where IOR allows it (-C, -Z); the outcomes compared are the exit
# status and the number of lines in which IOR reports an error or incorrect
# data.
#
#   scripts/peers/ior_tests.sh --ior PATH/TO/ior [--mpi openmpi|mpich] [--build DIR]
#       [--dir DIR] [--ranks N]
#
#   --ior    IOR's binary (src/ior of its build)
#   --mpi    the MPI it was built with (default openmpi; mpich: mpiexec.mpich)
#   --build  fwdio's build directory for that MPI (default build, or
#            build-mpich with --mpi mpich)
#   --dir    where the files go (default /dev/shm/ior-tests; emptied)
#   --ranks  default 4
# Prints one line per case: plain and layer outcomes, "same" or "DIFFERS",
# and the bytes the layer took through fwdio (its FWDIO_VERBOSE "closed:"
# lines, summed); exits 1 if any case differs.
set -euo pipefail
ior="" mpi=openmpi build="" dir=/dev/shm/ior-tests ranks=4
while [ $# -gt 0 ]; do
    case $1 in
    --ior) ior=$2; shift 2 ;;
    --mpi) mpi=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    -h|--help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ior_tests: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
[ -n "$ior" ] && [ -x "$ior" ] || { echo "ior_tests: --ior must name IOR's binary" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
case $mpi in
openmpi) run=(mpiexec --oversubscribe); env_flag() { echo "-x $1=$2"; }
         build=${build:-$root/build}
         export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ;;
mpich)   run=(mpiexec.mpich); env_flag() { echo "-genv $1 $2"; }
         build=${build:-$root/build-mpich} ;;
*) echo "ior_tests: --mpi openmpi or mpich" >&2; exit 2 ;;
esac
layer=$(realpath "$build/mpiio/libfwdio-mpiio.so")
dir=$(realpath -m "$dir")
logs=$(mktemp -d "${TMPDIR:-/tmp}/ior-tests.XXXXXX")

# name and IOR options (each run adds -a MPIIO -w -r -W -R -g -o FILE)
cases=(
"shared-indep -b 4m -t 1m -s 2 -C -Q 1"
"shared-coll -c -b 4m -t 1m -s 2 -C -Q 1"
"fpp-indep -F -b 4m -t 1m -s 2 -C -Q 1"
"fpp-coll -F -c -b 4m -t 1m -s 2 -C -Q 1"
"shared-fsync -e -b 2m -t 256k -s 3 -C -Q 1"
"shared-fsync-per-write -Y -b 1m -t 256k -s 2 -C -Q 1"
"shared-coll-small -c -b 384k -t 48k -s 5 -C -Q 1"
"shared-indep-small -b 96k -t 4k -s 8 -C -Q 1"
"shared-coll-strided -c -b 1m -t 64k -s 4 -C"
"shared-random-offsets -z --random-offset-seed=1234 -b 2m -t 64k -s 1"
"shared-coll-random-reorder -c -Z -b 1m -t 128k -s 2"
"shared-coll-segments -b 64k -t 64k -s 16 -c -C -Q 1"
"fpp-unique-dirs -u -F -b 1m -t 256k -C -Q 1"
"shared-iterations-kept -k -b 1m -t 256k -s 2 -i 2 -C -Q 1"
"shared-timestamp-data -l timestamp -b 1m -t 128k -s 3 -C -Q 1"
"shared-fsync-random-reorder -e -Z -b 1m -t 64k -s 2"
)

differ=0
printf "%-28s %-22s %-22s %-8s %s\n" case plain layer verdict "bytes through fwdio"
for c in "${cases[@]}"; do
    read -r name args <<<"$c"
    out=()
    for side in plain layer; do
        rm -rf "$dir"; mkdir -p "$dir"
        extra=""
        # shellcheck disable=SC2046
        [ "$side" = layer ] && extra="$(env_flag LD_PRELOAD "$layer") $(env_flag FWDIO_MPIIO "$dir/*") $(env_flag FWDIO_VERBOSE 1)"
        set +e
        # shellcheck disable=SC2086
        timeout 300 "${run[@]}" -n "$ranks" $extra "$ior" -a MPIIO -w -r -W -R -g $args \
            -o "$dir/t" >"$logs/$name.$side" 2>&1
        rc=$?
        set -e
        errs=$(grep -v "^fwdio" "$logs/$name.$side" | grep -ci "incorrect\|error" || true)
        out+=("exit=$rc,error-lines=$errs")
    done
    v=same
    [ "${out[0]}" != "${out[1]}" ] && { v=DIFFERS; differ=1; }
    bytes=$(sed -n 's/.*closed: \([0-9]*\) bytes through fwdio.*/\1/p' "$logs/$name.layer" |
            awk '{ s += $1 } END { print s + 0 }')
    printf "%-28s %-22s %-22s %-8s %s\n" "$name" "${out[0]}" "${out[1]}" "$v" "$bytes"
done
rm -rf "$dir"
echo "logs: $logs"
exit $differ
