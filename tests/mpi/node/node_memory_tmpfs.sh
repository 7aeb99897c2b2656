#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run a command (mpiexec ... test_node_memory --fill-shm ...) with /dev/shm a
# private 64 MiB tmpfs, in a mount namespace of its own so nothing outside
# sees it; the test fills it but a few MiB before fwdio_init, so the area's
# commits meet a really full /dev/shm. Skipped (77) where mount namespaces or
# mounts are not allowed.
if ! unshare -m sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm' 2>/dev/null; then
    echo "SKIP node_memory tmpfs: cannot mount a private tmpfs (unshare -m)"
    exit 77
fi
exec unshare -m sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$@"' sh "$@"
