#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The command lines of the apps and benchmarks (ctest tools_help).

    tools_help_check.py EXE=SOURCE[:SOURCE...] ...

For every program EXE, built from the C files SOURCE..., it reads the long
options of the getopt_long tables in those files ({"name", no_argument, ...})
and checks, running EXE alone (an MPI program as a singleton, no mpiexec) in
an empty directory:
  - `EXE --help` exits 0 with a usage on stdout that names every --option of
    the tables, and states the size grammar (apps/common/cli.h,
    CLI_SIZE_GRAMMAR) when it speaks of BYTES;
  - `EXE --no-such-option` exits 2 with one line on stderr that names the
    option and points to --help, and nothing on stdout;
  - neither leaves a file behind (a program that ignored them and ran would).
Exit status 0 pass, 1 fail.
"""
import os
import re
import subprocess
import sys
import tempfile

TABLE_ENTRY = re.compile(r'\{\s*"([a-z0-9][a-z0-9-]*)"\s*,\s*(?:no|required|optional)_argument\b')
GRAMMAR = "Sizes (BYTES): digits, then optionally K, M, G or T (powers of 1024, either\n"
TIMEOUT_S = 60

failures = []


def fail(prog, msg):
    failures.append("%s: %s" % (prog, msg))
    print("FAIL %s: %s" % (prog, msg), flush=True)


def long_options(sources):
    names = {"help"}  # CLI_HELP_OPTION, a macro in every table
    for src in sources:
        with open(src, encoding="utf-8") as f:
            names.update(TABLE_ENTRY.findall(f.read()))
    return sorted(names)


def run(exe, args, cwd):
    return subprocess.run([exe] + args, cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def check(exe, sources):
    prog = os.path.basename(exe)
    names = long_options(sources)
    if names == ["help"]:
        fail(prog, "no getopt_long table in %s" % ", ".join(sources))
    with tempfile.TemporaryDirectory(prefix="fwdio-tools-help-") as cwd:
        p = run(exe, ["--help"], cwd)
        if p.returncode != 0:
            fail(prog, "--help exited %d (stderr: %s)" % (p.returncode, p.stderr.strip()[:300]))
        if "usage:" not in p.stdout:
            fail(prog, "--help printed no usage on stdout")
        for name in names:
            if not re.search(r"--%s(?![a-z0-9-])" % re.escape(name), p.stdout):
                fail(prog, "--help does not mention --%s" % name)
        if "BYTES" in p.stdout and GRAMMAR not in p.stdout:
            fail(prog, "--help speaks of BYTES but does not state the size grammar")

        p = run(exe, ["--no-such-option"], cwd)
        ours = [line for line in p.stderr.splitlines() if "--no-such-option" in line]
        if p.returncode != 2:
            fail(prog, "an unknown option exited %d, not 2" % p.returncode)
        if len(ours) != 1 or "--help" not in ours[0]:
            fail(prog, "an unknown option: no one line naming it and --help on stderr (%r)"
                 % p.stderr.strip()[:300])
        if p.stdout.strip():
            fail(prog, "an unknown option printed on stdout: %r" % p.stdout.strip()[:200])
        left = os.listdir(cwd)
        if left:
            fail(prog, "--help or a bad option left files behind: %s" % ", ".join(left))
    print("%s %s: %d long options" % ("checked", prog, len(names)), flush=True)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    for arg in argv[1:]:
        exe, _, srcs = arg.partition("=")
        check(exe, [s for s in srcs.split(":") if s.endswith(".c")])
    if failures:
        print("tools_help: %d problem(s) in %d program(s)"
              % (len(failures), len({f.split(":")[0] for f in failures})))
        return 1
    print("tools_help: all %d programs behave" % (len(argv) - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
