#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Spack recipe (contrib/spack/packages/fwdio/package.py) without Spack.

Loads the recipe against a small stand-in of `spack.package` that records
what the recipe declares, checks its versions, variants and dependencies,
then configures fwdio with the CMake arguments the recipe passes for every
combination of its variants, and builds and installs the default one into a
scratch prefix, checking what lands there (the library with its SONAME, the
header, the CMake package, the MPI-IO layer and the Fortran module when their
variants are on).

    spack_check.py SOURCE_DIR WORK_DIR
"""
import itertools
import os
import shutil
import subprocess
import sys
import types

SOURCE, WORK = sys.argv[1], sys.argv[2]
RECIPE = os.path.join(SOURCE, "contrib", "spack", "packages", "fwdio", "package.py")
declared = {"versions": {}, "variants": {}, "depends": [], "license": None}


class Spec:
    """The variant values of one concretized spec, as the recipe reads them."""

    def __init__(self, values):
        self.values = values

    def satisfies(self, text):
        return self.values.get(text.lstrip("+~"), False) == text.startswith("+")

    def __contains__(self, text):
        return self.satisfies(text)


class CMakePackage:
    """What the recipe uses of Spack's CMakePackage."""

    def __init__(self, spec):
        self.spec = spec

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"

    def define_from_variant(self, name, variant):
        return self.define(name, bool(self.spec.values[variant]))


def version(name, **kw):
    declared["versions"][name] = kw


def variant(name, default=None, description="", **kw):
    declared["variants"][name] = {"default": default, "description": description}


def depends_on(name, type=None, when=None):
    declared["depends"].append((name, type, when))


def license(text):
    declared["license"] = text


stand_in = types.ModuleType("spack.package")
for name, value in dict(CMakePackage=CMakePackage, version=version, variant=variant,
                        depends_on=depends_on, license=license).items():
    setattr(stand_in, name, value)
stand_in.__all__ = ["CMakePackage", "version", "variant", "depends_on", "license"]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = stand_in

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


namespace = {"__name__": "fwdio_recipe"}
with open(RECIPE) as f:
    exec(compile(f.read(), RECIPE, "exec"), namespace)
Fwdio = namespace["Fwdio"]

# What the recipe declares
check(declared["license"] == "BSD-3-Clause", "license BSD-3-Clause")
with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
    cmake_text = f.read()
project_version = cmake_text.split("project(fwdio VERSION ", 1)[1].split()[0]
check(project_version in declared["versions"],
      f"the recipe has the project's version {project_version}")
check(set(declared["variants"]) == {"mpiio", "fortran", "shared"},
      f"variants mpiio, fortran, shared (has {sorted(declared['variants'])})")
deps = {d[0] for d in declared["depends"]}
for dep in ("mpi", "libevent", "hwloc", "zlib-api", "cmake@3.18:", "pkgconfig"):
    check(dep in deps, f"depends on {dep}")

# Every combination of the variants configures
names = sorted(declared["variants"])
combos = [dict(zip(names, values)) for values in itertools.product([True, False],
                                                                   repeat=len(names))]
default = {n: declared["variants"][n]["default"] for n in names}
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        check(False, f"{what}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        return False
    return True


for i, values in enumerate(combos):
    args = Fwdio(Spec(values)).cmake_args()
    label = " ".join(("+" if values[n] else "~") + n for n in names)
    check("-DFWDIO_WERROR=OFF" in args and "-DFWDIO_BUILD_TESTS=OFF" in args,
          f"{label}: no -Werror, no tests")
    if values == default:
        continue
    run(["cmake", "-S", SOURCE, "-B", os.path.join(WORK, f"configure-{i}")] + args,
        f"configure with {label} ({' '.join(args)})")

# The default one builds and installs
args = Fwdio(Spec(default)).cmake_args()
build, prefix = os.path.join(WORK, "build"), os.path.join(WORK, "prefix")
if (run(["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_INSTALL_PREFIX={prefix}"] + args, "configure the default")
        and run(["cmake", "--build", build, "-j", str(os.cpu_count() or 2)], "build the default")
        and run(["cmake", "--install", build], "install the default")):
    libdir = next((d for d in ("lib", "lib64") if os.path.isdir(os.path.join(prefix, d))), "lib")
    installed = set()
    for root, _, files in os.walk(prefix):
        installed.update(os.path.relpath(os.path.join(root, f), prefix) for f in files)
    wanted = ["include/fwdio.h", f"{libdir}/cmake/fwdio/fwdioConfig.cmake",
              f"{libdir}/pkgconfig/fwdio.pc"]
    if default["shared"]:
        wanted.append(f"{libdir}/libfwdio.so.{project_version}")
        soname = subprocess.run(["objdump", "-p", os.path.join(prefix, libdir,
                                 f"libfwdio.so.{project_version}")],
                                capture_output=True, text=True).stdout
        major = project_version.split(".")[0]
        check(f"SONAME               libfwdio.so.{major}" in soname,
              f"libfwdio's SONAME is libfwdio.so.{major}")
    if default["mpiio"]:
        wanted.append(f"{libdir}/libfwdio-mpiio.so")
    if default["fortran"]:
        wanted += ["include/fwdio.mod", f"{libdir}/pkgconfig/fwdio-fortran.pc"]
    for f in wanted:
        check(f in installed, f"installed {f}")
    check(not any("fwdio-demo" in f or "mdlj" in f for f in installed),
          "no apps installed by the recipe's build")

if failures:
    print(f"spack_check: {len(failures)} failures")
    sys.exit(1)
print(f"spack_check: recipe {project_version}, {len(combos)} variant combinations configure, "
      f"the default builds and installs")
shutil.rmtree(WORK, ignore_errors=True)
