#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check FWDIO_TRACE end to end (ctest trace_np3).

    trace_check.py NPROCS MPIEXEC [MPIEXEC_ARGS...] -- PROGRAM [ARGS...]

Runs PROGRAM on NPROCS ranks twice: with FWDIO_TRACE set to a fresh directory,
then with FWDIO_TRACE unset, which must write no trace file (neither in that
directory nor in the working directory). The traced run must leave one
fwdio-trace.<rank>.json per rank, each valid JSON in Chrome trace-event form
(pid = rank, process and thread names, complete events with ts and dur) and
holding the events the run implies: open, write, close and wait on every rank,
a send from every rank that is not the only writer, recv (over MPI) or take
(from the node-shared area), assemble, pwrite and fdatasync on the writers,
the three agreements. bench/trace_merge.py must then
merge them and draw the SVG timeline.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MERGE = os.path.join(HERE, "..", "..", "..", "bench", "trace_merge.py")

failures = []


def fail(msg):
    failures.append(msg)
    print("trace_check: FAIL: " + msg, flush=True)


def run(nprocs, mpiexec, program, env_extra, unset):
    env = dict(os.environ)
    for k in unset:
        env.pop(k, None)
    env.update(env_extra)
    cmd = mpiexec[:1] + ["-n", str(nprocs)] + mpiexec[1:]
    # The ranks inherit mpiexec's environment (env) with either MPI on one
    # host; Open MPI's -x passes the variable on to ranks on other hosts too.
    if os.environ.get("TC_MPI") == "openmpi":
        for k in env_extra:
            cmd += ["-x", k]
    cmd += program
    print("trace_check: " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env)
    if r.returncode != 0:
        fail("%s exited with %d" % (program[0], r.returncode))


def check_rank(path, rank, nprocs):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: not JSON: %s" % (path, e))
        return None
    evs = d.get("traceEvents")
    if not isinstance(evs, list):
        fail("%s: no traceEvents list" % path)
        return None
    meta = [e for e in evs if e.get("ph") == "M"]
    xs = [e for e in evs if e.get("ph") == "X"]
    roles = {e["args"]["name"] for e in meta if e.get("name") == "thread_name"}
    if not any(e.get("name") == "process_name" for e in meta):
        fail("%s: no process_name" % path)
    for want in ("app", "progress"):
        if want not in roles:
            fail("%s: no %s thread among %s" % (path, want, sorted(roles)))
    for e in xs:
        if e.get("pid") != rank or not isinstance(e.get("ts"), (int, float)) or \
                not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
            fail("%s: bad event %s" % (path, e))
            break
    other = d.get("otherData", {})
    if other.get("rank") != rank or other.get("dropped_events") != 0:
        fail("%s: otherData %s" % (path, other))
    names = {}
    for e in xs:
        names.setdefault(e["name"], set()).add(e.get("cat"))
    return names


def main():
    sep = sys.argv.index("--")
    nprocs = int(sys.argv[1])
    mpiexec = sys.argv[2:sep]
    program = sys.argv[sep + 1:]
    with tempfile.TemporaryDirectory(prefix="fwdio-trace-") as tmp:
        on = os.path.join(tmp, "on")
        os.mkdir(on)
        run(nprocs, mpiexec, program, {"FWDIO_TRACE": on}, [])
        found = sorted(os.listdir(on))
        want = ["fwdio-trace.%d.json" % r for r in range(nprocs)]
        if found != want:
            fail("trace files %s, expected %s" % (found, want))
        writers = 0
        for r in range(nprocs):
            path = os.path.join(on, "fwdio-trace.%d.json" % r)
            if not os.path.exists(path):
                continue
            names = check_rank(path, r, nprocs)
            if names is None:
                continue
            for n, cat in (("open", "app"), ("write", "app"), ("close", "app"),
                           ("wait", "app"), ("agree open", "progress"),
                           ("agree close", "progress"), ("agree final", "progress")):
                if cat not in names.get(n, ()):
                    fail("rank %d: no %r event on the %s thread" % (r, n, cat))
            if "pwrite" in names:
                writers += 1
                for n, cat in (("pwrite", "io"), ("fdatasync", "io"),
                               ("assemble", "progress")):
                    if cat not in names.get(n, ()):
                        fail("rank %d (writer): no %r event on the %s thread" % (r, n, cat))
                if ("progress" not in names.get("recv", ()) and
                        "progress" not in names.get("take", ())):
                    fail("rank %d (writer): no 'recv' or 'take' event on the progress thread" % r)
            if nprocs > 1 and "progress" not in names.get("send", ()):
                fail("rank %d: no send event" % r)
        if writers != min(2, nprocs):
            fail("%d rank(s) with pwrite events, expected %d" % (writers, min(2, nprocs)))
        m = subprocess.run([sys.executable, MERGE, on, "--png", os.path.join(tmp, "t.png")],
                           capture_output=True, text=True)
        print(m.stdout + m.stderr, end="")
        if m.returncode != 0:
            fail("trace_merge.py exited with %d" % m.returncode)
        else:
            with open(os.path.join(on, "fwdio-trace.json")) as f:
                merged = json.load(f)
            pids = {e.get("pid") for e in merged["traceEvents"] if e.get("ph") == "X"}
            if pids != set(range(nprocs)):
                fail("merged trace has pids %s" % sorted(pids))
            for name in ("fwdio-timeline.svg", "t.png"):
                where = os.path.join(on if name.endswith(".svg") else tmp, name)
                if not os.path.exists(where) or not os.path.getsize(where):
                    fail("no timeline %s (matplotlib: Debian's python3-matplotlib, which "
                         "scripts/setup.sh installs)" % name)

        before = sorted(os.listdir(on))
        run(nprocs, mpiexec, program, {}, ["FWDIO_TRACE"])
        stray = [n for n in os.listdir(".") if n.startswith("fwdio-trace")]
        if sorted(os.listdir(on)) != before or stray:
            fail("the untraced run wrote trace files: %s %s" % (os.listdir(on), stray))
    print("trace_check: %s" % ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
