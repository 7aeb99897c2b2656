# SPDX-License-Identifier: BSD-3-Clause
"""Spack recipe of fwdio (add this repository: spack repo add contrib/spack)."""

from spack.package import *


class Fwdio(CMakePackage):
    """Nonblocking forwarded output for MPI applications: every rank hands its
    chunks of a shared file to a nonblocking call; a few writer ranks, which
    keep computing, assemble whole stripes and write them from an I/O thread.
    With an MPI-IO layer (libfwdio-mpiio.so) for unmodified MPI-IO codes and a
    Fortran module."""

    homepage = "https://github.com/fwdio/fwdio"
    git = "https://github.com/fwdio/fwdio.git"

    license("BSD-3-Clause")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    variant("mpiio", default=True, description="Build the MPI-IO layer libfwdio-mpiio.so")
    variant("fortran", default=True, description="Build the Fortran module fwdio (fwdio::fortran)")
    variant("shared", default=True, description="Build shared libraries")

    depends_on("c", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.18:", type="build")
    depends_on("pkgconfig", type="build")
    # fwdio needs MPI_THREAD_MULTIPLE (its progress thread calls MPI).
    depends_on("mpi")
    depends_on("libevent")
    depends_on("hwloc")
    depends_on("zlib-api")  # the CRC-32 of checkpoint sets

    def cmake_args(self):
        return [
            self.define_from_variant("FWDIO_MPIIO", "mpiio"),
            self.define_from_variant("FWDIO_FORTRAN", "fortran"),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            # the library only: the apps, benchmarks and tests are the project's own
            self.define("FWDIO_BUILD_APPS", False),
            self.define("FWDIO_BUILD_TESTS", False),
            self.define("BUILD_TESTING", False),
            # a newer compiler's new warning must not fail an install
            self.define("FWDIO_WERROR", False),
        ]
