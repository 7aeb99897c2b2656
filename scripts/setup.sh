#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what fwdio needs on Debian 12 (when something is missing) and build it.
#
# Usage: scripts/setup.sh [--target TARGET] [BUILD_DIR] [extra cmake args...]
#   --target T  build only target T and what it needs (default: everything),
#               e.g. sanitize-tests, the programs of the sanitizer subset
#   BUILD_DIR   build tree, relative to the repository root unless absolute
#               (default: build)
#   extra args  passed to the CMake configure step, e.g. -DFWDIO_SANITIZE=address
#
# Runs as root, or through sudo otherwise. Safe to run again: packages that are
# installed are left alone and an existing build tree is reconfigured and
# rebuilt incrementally.
set -euo pipefail

# Debian packages the build, the tests, the demo and the install test need.
packages=(
    build-essential   # gcc, make, libc headers
    cmake
    pkg-config        # finds libevent and hwloc
    libopenmpi-dev    # MPI headers and mpicc
    openmpi-bin       # mpirun for the demo and the MPI tests
    libevent-dev      # libevent_core + libevent_pthreads
    libhwloc-dev
    libudev-dev       # hwloc.pc lists -ludev for static links (`pkg-config --static fwdio`)
    python3           # the trace test and bench/trace_merge.py
    python3-matplotlib # the timelines bench/trace_merge.py draws (ctest trace_np3)
    libxxhash-dev     # mdlj's checkpoint hashes (XXH64)
    valgrind          # ctest init_cycles_np2_valgrind: leaks across init/finalize cycles
    lammps            # `lmp`, and LAMMPS's own dumps beside apps/lammps-fwdio
    liblammps-dev     # the LAMMPS C library apps/lammps-fwdio drives (links the same Open MPI)
    python3-mdanalysis # ctest mdlj_mdanalysis: MDAnalysis reads mdlj's DCD trajectory
    iproute2          # scripts/cluster.sh (ctest label cluster): ip netns, veth, bridge, tc
    fuse3             # fusermount3: bench/pfs down and the ctest label pfs unmount the emulator
    libfuse3-dev      # libfuse 3 (>= 3.12) for bench/pfs, the parallel file system emulator
    libhdf5-openmpi-dev # ctest mpiio_hdf5: a parallel HDF5 program through the MPI-IO layer
    libpnetcdf-dev    # ctest mpiio_pnetcdf: a PnetCDF program through the MPI-IO layer
    python3-h5py-mpi  # ctest mpiio_h5py: h5py with MPI through the MPI-IO layer
    gfortran          # the Fortran module (fortran/) and its tests; Open MPI's `use mpi` is built for it
    libmpich-dev      # MPICH beside Open MPI (mpicc.mpich; Open MPI stays the default mpicc):
    mpich             #   mpiexec.mpich for the MPICH leg of scripts/test.sh (build-mpich/)
    libhdf5-mpich-dev # ctest mpiio_hdf5 in the MPICH build: parallel HDF5 over MPICH's ROMIO
)

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_target=()
if [[ ${1:-} == --target ]]; then
    [[ -n ${2:-} ]] || die "--target needs a target name"
    build_target=(--target "$2")
    shift 2
fi
build_dir=build
if [[ $# -gt 0 ]]; then
    build_dir=$1
    shift
fi
[[ -n $build_dir ]] || die "empty build directory"
[[ $build_dir == /* ]] || build_dir=$repo_root/$build_dir

# A package counts as present only when dpkg reports it fully installed (a
# removed package whose configuration files remain is not).
package_installed() {
    local status
    status=$(dpkg -s "$1" 2>/dev/null | sed -n 's/^Status: //p') || return 1
    [[ $status == "install ok installed" ]]
}

install_missing_packages() {
    if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        say "no dpkg/apt-get here: not a Debian system, skipping package checks"
        return 0
    fi
    local missing=() pkg
    for pkg in "${packages[@]}"; do
        package_installed "$pkg" || missing+=("$pkg")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        say "all ${#packages[@]} packages present"
        return 0
    fi
    say "installing: ${missing[*]}"
    local -a as_root=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 ||
            die "not root and no sudo: install these packages first: ${missing[*]}"
        as_root=(sudo)
    fi
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
        die "apt-get update failed"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q "${missing[@]}" </dev/null ||
        die "apt-get install failed for: ${missing[*]}"
    for pkg in "${missing[@]}"; do
        package_installed "$pkg" || die "package $pkg is still not installed"
    done
    say "installed ${#missing[@]} package(s)"
}

say "checking packages"
install_missing_packages

jobs=$(nproc 2>/dev/null || echo 2)
say "configuring $build_dir${*:+ ($*)}"
# A developer's build: warnings are errors (a later argument may say otherwise).
cmake -S "$repo_root" -B "$build_dir" -DFWDIO_WERROR=ON "$@" ||
    die "CMake configure failed in $build_dir"
say "building ${build_target[1]:-everything} with $jobs jobs"
cmake --build "$build_dir" -j"$jobs" "${build_target[@]}" || die "build failed in $build_dir"
say "built $build_dir"
