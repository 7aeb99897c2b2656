#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The ctest side of scripts/cluster.sh (tests/system/cluster/CMakeLists.txt).
#
#   fixture.sh up TAG HOSTS SLOTS          FIXTURES_SETUP: bring up a cluster tagged TAG
#   fixture.sh down TAG                    FIXTURES_CLEANUP: take it down again
#   fixture.sh run TAG NP MPIEXEC ARGS...  MPIEXEC <cluster options> -np NP --oversubscribe ARGS
#
# TAG names the build tree, so that a cluster left by a killed run of the same
# tests is replaced, while a cluster somebody else brought up is neither used
# nor taken down: `up` waits up to WAIT seconds (FWDIO_CLUSTER_WAIT, default
# 240) for it to go (the tests of another build tree, say), then fails saying
# whose it is. Exit status 77 (ctest SKIP_RETURN_CODE) with the reason
# printed where this machine cannot host a cluster (not root, namespaces not
# permitted, a tool missing).
set -euo pipefail

cluster=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../scripts" && pwd)/cluster.sh
readonly EXIT_SKIP=77
readonly EXIT_ALREADY_UP=4 # cluster.sh up: another cluster is up
wait_s=${FWDIO_CLUSTER_WAIT:-240}

say() { printf 'fixture: %s\n' "$*"; }
die() { printf 'fixture: error: %s\n' "$*" >&2; exit 1; }

# Exits 77 with cluster.sh's reason where no cluster can run here.
skip_if_unsupported() {
    local rc=0 out
    out=$(bash "$cluster" check 2>&1) || rc=$?
    if ((rc == EXIT_SKIP)); then
        printf 'SKIP: no simulated cluster on this machine: %s\n' "${out#cluster: unavailable here: }"
        exit "$EXIT_SKIP"
    fi
    ((rc == 0)) || die "cluster.sh check failed: $out"
}

# Is the cluster that is up (if any) tagged $1?
ours_is_up() {
    local status
    status=$(bash "$cluster" status 2>/dev/null) || return 1
    [[ ${status%%$'\n'*} == *"(tag $1)"* ]]
}

fixture_up() {
    local tag=$1 hosts=$2 slots=$3
    skip_if_unsupported
    if ours_is_up "$tag"; then
        say "a cluster tagged $tag is still up from an earlier run: replacing it"
        bash "$cluster" down --tag "$tag"
    fi
    local start=$SECONDS rc err said=0
    while :; do
        rc=0
        # stdout as it comes, stderr kept to tell "already up" from the rest
        { err=$(bash "$cluster" up "$hosts" --slots "$slots" --tag "$tag" 2>&1 1>&3 3>&-) || rc=$?; } 3>&1
        if ((rc != EXIT_ALREADY_UP)) || ((SECONDS - start >= wait_s)); then
            [[ -z $err ]] || printf '%s\n' "$err" >&2
            ((rc == 0)) || exit "$rc"
            break
        fi
        ((said)) || say "waiting up to $wait_s s for another cluster to go: ${err#cluster: error: }"
        said=1
        sleep 2
    done
    bash "$cluster" status
}

fixture_down() {
    local tag=$1
    skip_if_unsupported
    bash "$cluster" down --tag "$tag"
}

fixture_run() {
    local tag=$1 np=$2
    shift 2
    (($# >= 2)) || die "run needs mpiexec and a program"
    local mpiexec=$1
    shift
    if ! ours_is_up "$tag"; then
        skip_if_unsupported
        die "no cluster tagged $tag is up (did the test cluster_up fail?)"
    fi
    local -a options
    read -r -a options < <(bash "$cluster" options)
    ((${#options[@]})) || die "cluster.sh options printed nothing"
    exec "$mpiexec" "${options[@]}" -np "$np" --oversubscribe "$@"
}

(($# >= 2)) || die "usage: fixture.sh up TAG HOSTS SLOTS | down TAG | run TAG NP MPIEXEC ARGS..."
cmd=$1
shift
case $cmd in
    up) (($# == 3)) || die "up TAG HOSTS SLOTS"; fixture_up "$@" ;;
    down) (($# == 1)) || die "down TAG"; fixture_down "$@" ;;
    run) fixture_run "$@" ;;
    *) die "unknown command $cmd" ;;
esac
