#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# HDF5's parallel tests (its testpar programs) run without and with the
# MPI-IO layer, and their outcomes compared. Built and run outside the
# repository, from an HDF5 build this script does not carry (HDF5 configured
# with -DHDF5_ENABLE_PARALLEL=ON -DBUILD_TESTING=ON -DHDF5_TEST_PARALLEL=ON).
#
#   scripts/peers/hdf5_testpar.sh --build-dir DIR [--build DIR] [--out DIR]
#       [--np N] [--programs LIST] [--timeout S] [--runs N] [--layer-env V=X]
#
#   --build-dir  the HDF5 build (its bin/ holds t_mpi, testphdf5, ...)
#   --build      fwdio's build directory (its mpiio/libfwdio-mpiio.so;
#                default build)
#   --out        where the outputs go (default /dev/shm/hdf5-testpar); the
#                programs run in a scratch folder under /dev/shm, removed
#                at the end
#   --np         ranks (default 4)
#   --programs   comma-separated "program [arguments]" (as "t_2Gio -o
#                selnone"); default: t_mpi t_vfd t_shapesame testphdf5
#                t_bigio t_2Gio t_pflush1 t_pflush2 t_pshutdown t_prestart
#                t_init_term t_select_io_dset t_pread t_filters_parallel
#                t_subfiling_vfd t_cache, the programs that finish within
#                minutes on two cores (t_cache_image takes over 10 and
#                t_pmulti_dset draws a random seed, fails and hangs plain);
#                t_pflush2 and t_prestart read what t_pflush1 and
#                t_pshutdown left and run in the same folder after them
#   --timeout    seconds for one run (default 900)
#   --runs       runs of each program, plain and with the layer (default 1)
#   --layer-env  NAME=VALUE given to the layer's runs too (repeatable; as
#                FWDIO_MPIIO_READBACK=0)
# Every run gets HDF5_ALARM_SECONDS=3600 (HDF5's own alarm would end the
# long ones on two busy cores). An outcome is the exit status (timeout: the
# run was ended) and the counts of the program's verdict lines that pass
# ("PASSED", "succeeded", "successful", "with no errors", "no failures"; not
# a VRFY line) and that fail ("FAILED", "failed", "N errors" with N > 0,
# "VRFY"). Plain and layer are the "same" when the exit status and every
# verdict line agree: the lines with passed/failed/error/skip/succe/abort/
# VRFY/finished, numbers with a decimal point (timings) blanked, blanks
# squeezed, the ranks' progress text that cuts into them left out, sorted
# (the ranks' order does not matter); a layer run's differing lines go to
# OUT/NAME.layerK.diff. The layer runs without FWDIO_VERBOSE and must print
# nothing: a line of its stdout or stderr that starts with "fwdio" is
# counted (column "fwdio") and makes the program differ. Prints one line
# per program: plain and layer outcomes, "same" or "DIFFERS", seconds plain
# and with the layer (mean of the runs), fwdio lines; exits 1 if any
# differs.
set -euo pipefail
hdf5="" build="" out="" np=4 programs="" tmo=900 runs=1 layer_env=()
while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) hdf5=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --timeout) tmo=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --layer-env) layer_env+=(-x "$2"); shift 2 ;;
    -h|--help) sed -n '3,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "hdf5_testpar: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
if [ -z "$hdf5" ] || [ ! -x "$hdf5/bin/t_mpi" ]; then
    echo "hdf5_testpar: --build-dir must name a parallel HDF5 build (bin/t_mpi)" >&2; exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
layer=$(realpath "${build:-$root/build}/mpiio/libfwdio-mpiio.so")
[ -f "$layer" ] || { echo "hdf5_testpar: no $layer" >&2; exit 2; }
hdf5=$(realpath "$hdf5")
out=$(realpath -m "${out:-/dev/shm/hdf5-testpar}")
programs=${programs:-t_mpi,t_vfd,t_shapesame,testphdf5,t_bigio,t_2Gio,t_pflush1,t_pflush2,t_pshutdown,t_prestart,t_init_term,t_select_io_dset,t_pread,t_filters_parallel,t_subfiling_vfd,t_cache}
mkdir -p "$out"
scratch=$(mktemp -d /dev/shm/hdf5-testpar-run.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HDF5_ALARM_SECONDS=3600
unset FWDIO_VERBOSE FWDIO_MPIIO LD_PRELOAD

verdict_lines() { # stdout log -> its verdict lines, normalized and sorted
    # the ranks' chatter that cuts into other lines is left out (each rank's
    # "MPI-process N. hostname=H", t_cache's "N:setup_rand: seed = S.",
    # t_shapesame's "- running test #N: small rank = A, large rank = B"),
    # and a verdict word that it pushed onto a line of its own is put back
    # after the line it ends
    sed -E 's/MPI-process [0-9]+\. hostname=[^ ]*//g
            s/[0-9]+:setup_rand: seed = [0-9]+\.//g
            s/ ?- running test #[0-9]+: small rank = [0-9]+, large rank = [0-9]+//g' "$1" |
        awk '/^[[:space:]]*$/ { next }
             /^[[:space:]]*(PASSED|FAILED|-SKIP-|SKIPPED)[[:space:]]*$/ { held = held " " $0; next }
             { if (NR > 1) print held; held = $0 }
             END { print held }' |
        grep -aiE 'passed|failed|error|skip|succe|abort|vrfy|finished' |
        sed -E 's/[0-9]+\.[0-9]+/#/g; s/[[:space:]]+/ /g; s/^ //; s/ $//' | sort || true
}
verdict() { # stdout log, exit -> outcome word
    local v="exit=$2" p f
    [ "$2" = 124 ] && v="timeout"
    p=$(grep -av VRFY "$1" | grep -aciE 'PASSED|succe|with no errors|no failures' || true)
    f=$(grep -acE 'FAILED|failed|[1-9][0-9]* errors|VRFY' "$1" || true)
    echo "$v,pass=$p,fail=$f"
}
run() { # mode k name args... -> log base; runs one program in its folder
    local mode=$1 k=$2 name=$3; shift 3
    local dir=$scratch/$mode$k log=$out/$name${*:+-$(echo "$*" | tr -c 'a-zA-Z0-9\n' _)}.$mode$k
    # t_pflush2 and t_prestart open what the program before them left
    case $name in t_pflush2|t_prestart) ;; *) rm -rf "$dir" ;; esac
    mkdir -p "$dir"
    local extra=()
    [ "$mode" = layer ] && extra=(-x LD_PRELOAD="$layer" -x FWDIO_MPIIO='*' "${layer_env[@]}")
    local t0 rc
    t0=$(date +%s)
    set +e
    (cd "$dir" && srcdir=$dir timeout -k 30 "$tmo" mpiexec --oversubscribe -n "$np" \
        -x HDF5_ALARM_SECONDS -x srcdir "${extra[@]}" "$hdf5/bin/$name" "$@") \
        >"$log.out" 2>"$log.err"
    rc=$?
    set -e
    echo "$rc $(( $(date +%s) - t0 ))" >"$log.rc"
    echo "$log"
}

differ=0
printf "%-24s %-30s %-30s %-8s %-11s %s\n" program plain layer verdict secs fwdio
IFS=, read -ra list <<<"$programs"
for t in "${list[@]}"; do
    read -r name args <<<"$t"
    [ -x "$hdf5/bin/$name" ] || { printf "%-24s not in %s/bin\n" "$name" "$hdf5"; continue; }
    declare -A v=() secs=()
    fw=0 same=same
    for mode in plain layer; do
        v[$mode]="" secs[$mode]=0
        for k in $(seq "$runs"); do
            # shellcheck disable=SC2086
            log=$(run "$mode" "$k" "$name" $args)
            read -r rc s <"$log.rc"
            secs[$mode]=$(( ${secs[$mode]} + s ))
            w=$(verdict "$log.out" "$rc")
            [ -z "${v[$mode]}" ] && v[$mode]=$w
            [[ "|${v[$mode]}|" == *"|$w|"* ]] || v[$mode]="${v[$mode]}|$w"
            verdict_lines "$log.out" >"$log.verdict"
            if [ "$mode" = layer ]; then
                n=$(cat "$log.out" "$log.err" | grep -ac '^fwdio' || true)
                fw=$(( fw + n ))
                plainlog=${log%.layer"$k"}.plain1
                if ! diff "$plainlog.verdict" "$log.verdict" >"$log.diff" ||
                   [ "$rc" != "$(cut -d' ' -f1 "$plainlog.rc")" ]; then
                    same=DIFFERS
                else
                    rm -f "$log.diff"
                fi
            fi
        done
    done
    [ "${v[plain]}" != "${v[layer]}" ] || [ "$fw" != 0 ] && same=DIFFERS
    [ "$same" = DIFFERS ] && differ=1
    printf "%-24s %-30s %-30s %-8s %-11s %s\n" "$name${args:+ $args}" "${v[plain]}" "${v[layer]}" \
        "$same" "$(( secs[plain] / runs ))/$(( secs[layer] / runs ))" "$fw"
    unset v secs
done
exit $differ
