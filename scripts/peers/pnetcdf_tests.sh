#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# PnetCDF's tests run without and with the MPI-IO layer, and their outcomes
# compared: its "make check" (sequential programs, automake's PASS / FAIL /
# XFAIL per test) and its "make ptest" programs (4 ranks), one program at a
# time. Built and run outside the repository, in a PnetCDF tree this script
# does not carry (a clone of Parallel-NetCDF/PnetCDF, configured and built
# with "make" and "make tests"; PnetCDF itself built with MPI-IO, no GIO).
#
#   scripts/peers/pnetcdf_tests.sh --src DIR [--build DIR] [--out DIR]
#       [--runs N] [--dirs LIST] [--programs LIST] [--timeout S]
#       [--no-check] [--no-ptest] [--layer-env V=X]
#
#   --src        the configured and built PnetCDF tree ("make check" writes
#                its .log and .trs files there)
#   --build      fwdio's build directory (its mpiio/libfwdio-mpiio.so;
#                default build)
#   --out        where the outputs go (default /dev/shm/pnetcdf-tests); the
#                programs' files go to a scratch folder under /dev/shm
#                (TESTOUTDIR), removed at the end
#   --runs       runs of each ptest program, plain and with the layer
#                (default 3); "make check" runs once each way
#   --dirs       space-separated ptest folders (as "test/testcases
#                examples/C"); default every folder "make ptest" goes to
#                (PTEST_SUBDIRS, read from the tree's Makefiles) whose ptest
#                does something
#   --programs   space-separated ptest programs, "name" or "folder/name"
#                (default all of each folder's check_PROGRAMS)
#   --timeout    seconds for one mpiexec (default 600; a hung program is
#                ended and fails)
#   --no-check   no "make check"; --no-ptest: no ptest programs
#   --layer-env  NAME=VALUE given to the layer's runs too (repeatable; as
#                FWDIO_MPIIO_READBACK=0)
# The folder examples/tutorial runs as one (its programs read one another's
# files) and examples/C's get_vara runs right after put_vara, whose file it
# reads, as the tree's own ptest does. An outcome of "make check" is its
# PASS/FAIL/XFAIL/XPASS/ERROR/SKIP counts, "same" when every test's result
# agrees (the tests that do not go to OUT/check.diff); a ptest program's is
# make's exit status and its count of "-- pass" and "FAILED" lines (runs
# that disagree are joined with "|"). The layer runs without FWDIO_VERBOSE
# and must print nothing: a line starting with "fwdio" in its outputs is
# counted (column "fwdio") and makes the program differ. Prints one line
# per program: plain and layer outcomes, "same" or "DIFFERS", seconds plain
# and with the layer (mean of the runs), fwdio lines; exits 1 if any
# differs.
set -euo pipefail
src="" build="" out="" runs=3 dirs="" programs="" tmo=600 check=1 ptest=1 layer_env=()
while [ $# -gt 0 ]; do
    case $1 in
    --src) src=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dirs) dirs=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --timeout) tmo=$2; shift 2 ;;
    --no-check) check=0; shift ;;
    --no-ptest) ptest=0; shift ;;
    --layer-env) layer_env+=("$2"); shift 2 ;;
    -h|--help) sed -n '3,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pnetcdf_tests: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
if [ -z "$src" ] || [ ! -f "$src/Makefile" ] || ! grep -q '^ptest:' "$src/Makefile"; then
    echo "pnetcdf_tests: --src must name a configured and built PnetCDF tree" >&2; exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
layer=$(realpath "${build:-$root/build}/mpiio/libfwdio-mpiio.so")
[ -f "$layer" ] || { echo "pnetcdf_tests: no $layer" >&2; exit 2; }
src=$(realpath "$src")
out=$(realpath -m "${out:-/dev/shm/pnetcdf-tests}")
mkdir -p "$out"
scratch=$(mktemp -d /dev/shm/pnetcdf-tests-run.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
unset FWDIO_VERBOSE FWDIO_MPIIO LD_PRELOAD

makevar() { # folder variable -> its value in that folder's Makefile
    make -s -C "$src/$1" --eval="fwdio_print_var: ; @echo \$($2)" fwdio_print_var 2>/dev/null
}
# how the tree runs its programs, plain or with the layer; the layer's
# settings (FWDIO_MPIIO and --layer-env) are in make's environment
seqrun() { # mode -> TESTSEQRUN
    if [ "$1" = plain ]; then echo "timeout $tmo"
    else echo "timeout $tmo env LD_PRELOAD=$layer"; fi
}
mpirun() { # mode -> TESTMPIRUN (NP: the ranks)
    local x="" e
    if [ "$1" = layer ]; then
        x="-x LD_PRELOAD=$layer -x FWDIO_MPIIO"
        for e in "${layer_env[@]}"; do x="$x -x ${e%%=*}"; done
    fi
    echo "timeout $tmo mpiexec $x -n NP"
}
menv() { # mode -> make's environment
    if [ "$1" = plain ]; then echo "FWDIO_UNUSED=1"
    else printf '%s\n' "FWDIO_MPIIO=*" "${layer_env[@]}"; fi
}
fwdio_lines() { cat "$@" 2>/dev/null | grep -ac '^fwdio' || true; }

differ=0
printf "%-36s %-34s %-34s %-8s %-9s %s\n" program plain layer verdict secs fwdio

if [ "$check" = 1 ]; then
    declare -A cv=() cs=()
    fw=0
    for mode in plain layer; do
        t0=$(date +%s)
        mkdir -p "$scratch/check"
        touch "$scratch/mark"
        mapfile -t e < <(menv $mode)
        env "${e[@]}" make -k -C "$src" check TESTSEQRUN="$(seqrun $mode)" TESTMPIRUN="$(mpirun $mode)" \
            TESTOUTDIR="$scratch/check" >"$out/check.$mode" 2>&1 || true
        cs[$mode]=$(( $(date +%s) - t0 ))
        rm -rf "$scratch/check"
        grep -aE '^(PASS|FAIL|XFAIL|XPASS|ERROR|SKIP): ' "$out/check.$mode" | sort >"$out/check.$mode.results" || true
        cv[$mode]=$(cut -d: -f1 "$out/check.$mode.results" | sort | uniq -c |
                    awk '{printf "%s%s=%s", (NR > 1 ? "," : ""), $2, $1}')
        [ -n "${cv[$mode]}" ] || cv[$mode]="no-results"
        if [ "$mode" = layer ]; then
            # the tests' own outputs: automake's .log files next to them
            mapfile -t logs < <(find "$src" -name '*.log' -newer "$scratch/mark" ! -name config.log)
            fw=$(fwdio_lines "$out/check.layer" "${logs[@]}")
        fi
    done
    same=same
    if ! diff "$out/check.plain.results" "$out/check.layer.results" >"$out/check.diff" || [ "$fw" != 0 ]; then
        same=DIFFERS; differ=1
    else
        rm -f "$out/check.diff"
    fi
    printf "%-36s %-34s %-34s %-8s %-9s %s\n" "make check" "${cv[plain]}" "${cv[layer]}" "$same" \
        "${cs[plain]}/${cs[layer]}" "$fw"
fi

[ "$ptest" = 1 ] || exit $differ

ptest_dirs() { # folder -> the leaf folders make ptest goes to
    local subs d
    subs=$(makevar "$1" PTEST_SUBDIRS)
    if [ -z "$subs" ]; then
        # a folder whose ptest does nothing (as test/nc_test) is left out
        [ -n "$(make -s -n -C "$src/$1" ptest check_PROGRAMS= 2>/dev/null)" ] && echo "${1#./}"
        return 0
    fi
    for d in $subs; do ptest_dirs "$1/$d"; done
}
[ -n "$dirs" ] || dirs=$(ptest_dirs .)

# units: "folder program..." run by one make ptest
units=()
for d in $dirs; do
    progs=$(makevar "$d" check_PROGRAMS)
    [ -n "$progs" ] || continue
    if [ "$d" = examples/tutorial ]; then units+=("$d $progs"); continue; fi
    for p in $progs; do
        case $d/$p in
        examples/C/get_vara) continue ;;
        examples/C/put_vara) units+=("$d put_vara get_vara") ;;
        *) units+=("$d $p") ;;
        esac
    done
done
wanted() { # folder programs... -> 0 if --programs names one of them
    local d=$1 p; shift
    [ -z "$programs" ] && return 0
    for p in "$@"; do
        case " $programs " in *" $p "*|*" $d/$p "*) return 0 ;; esac
    done
    return 1
}

for u in "${units[@]}"; do
    read -r d progs <<<"$u"
    # shellcheck disable=SC2086
    wanted "$d" $progs || continue
    name=$d/${progs%% *}
    [ "$d" = examples/tutorial ] && name="$d (all)"
    base=$out/$(echo "$name" | tr -c 'a-zA-Z0-9\n' _)
    declare -A v=() secs=()
    fw=0
    for mode in plain layer; do
        v[$mode]="" secs[$mode]=0
        for k in $(seq "$runs"); do
            rm -rf "$scratch/ptest"; mkdir -p "$scratch/ptest"
            log=$base.$mode$k
            t0=$(date +%s)
            mapfile -t e < <(menv $mode)
            set +e
            env "${e[@]}" make -s -C "$src/$d" ptest check_PROGRAMS="$progs" TESTSEQRUN="$(seqrun $mode)" \
                TESTMPIRUN="$(mpirun $mode)" TESTOUTDIR="$scratch/ptest" >"$log" 2>&1
            rc=$?
            set -e
            secs[$mode]=$(( ${secs[$mode]} + $(date +%s) - t0 ))
            p=$(grep -ac -- '-- pass' "$log" || true)
            f=$(grep -ac 'FAILED' "$log" || true)
            w="rc=$rc,pass=$p,fail=$f"
            [ -z "${v[$mode]}" ] && v[$mode]=$w
            [[ "|${v[$mode]}|" == *"|$w|"* ]] || v[$mode]="${v[$mode]}|$w"
            [ "$mode" = layer ] && fw=$(( fw + $(fwdio_lines "$log") ))
        done
    done
    same=same
    if [ "${v[plain]}" != "${v[layer]}" ] || [ "$fw" != 0 ]; then same=DIFFERS; differ=1; fi
    printf "%-36s %-34s %-34s %-8s %-9s %s\n" "$name" "${v[plain]}" "${v[layer]}" "$same" \
        "$(( secs[plain] / runs ))/$(( secs[layer] / runs ))" "$fw"
    unset v secs
done
rm -rf "$scratch/ptest"
exit $differ
