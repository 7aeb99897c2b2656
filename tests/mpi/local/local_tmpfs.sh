#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run a command (mpiexec ... test_local_tier --case fullstore --store DIR)
# with DIR a private tmpfs (1 MiB, or size=S given first), in a mount
# namespace of its own so nothing outside sees it: a node-local store too
# small for a writer's file. Skipped (77) where mount namespaces or mounts
# are not allowed.
size=1m
case "$1" in
size=*) size=${1#size=}; shift ;;
esac
dir=$1
shift
mkdir -p "$dir" || exit 1
if ! unshare -m sh -c "mount -t tmpfs -o size=$size tmpfs '$dir'" 2>/dev/null; then
    echo "SKIP local_tier tmpfs: cannot mount a private tmpfs (unshare -m)"
    exit 77
fi
exec unshare -m sh -c 'mount -t tmpfs -o size="$1" tmpfs "$0" && shift && exec "$@"' "$dir" "$size" "$@"
