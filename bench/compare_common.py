# SPDX-License-Identifier: BSD-3-Clause
"""What bench/mdlj_compare and bench/lammps_compare share: the test bed
(bench/testbed: a parallel file system emulator mount and simulated hosts),
settling the page cache before each measured run, the CPU seconds of a job,
and the CPU-per-output-GiB summary (docs/benchmarks.md, "The columns").

CPU of the whole job. getrusage(RUSAGE_CHILDREN) in this script, around one
mpirun, counts mpirun and every descendant that was waited for. On one host
the ranks are children of mpirun's local daemon and are counted. Over the
simulated hosts (--hosts) they are not: mpirun starts each host's daemon
through the rsh agent as `orted --daemonize`, which detaches (its parent
becomes init), so neither the daemons nor the ranks are ever reaped by mpirun
(measured: 4 ranks burning 1 s of CPU each, 4.35 s counted on one host, 0.11
s through the agent). The applications therefore report the sum of their
ranks' own getrusage(RUSAGE_SELF) (`cpu_ranks`), taken after the output is
complete; the job's CPU is then mpirun's count plus the ranks' sum under
--hosts (the detached daemons' own CPU is not counted), and mpirun's count
alone otherwise (it already holds the ranks, until their exit).
"""
import atexit
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import resource

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTBED = os.path.join(REPO, "bench", "testbed")
GIB = float(1 << 30)
EXIT_UNAVAILABLE = 77

TESTBED_HELP = """\
test bed (bench/testbed, bench/README.md):
  --pfs "ARGS"  run files go to a mount of the parallel file system emulator,
                made with `bench/pfs up DIR ARGS`, e.g.
                --pfs "--targets 4 --stripe 1M --bw 200M --latency 1".
                The striping is the emulator's, the same for every file:
                MPI-IO's striping hints cannot reach a FUSE mount (ompio's
                fs/ufs ignores them; ROMIO's ad_ufs only aligns its file
                domains to striping_unit); fwdio sees it only through its own
                layout options (FWDIO_LAYOUT=targets FWDIO_TARGETS=T
                FWDIO_STRIPE_SIZE=S in the environment, which reaches every
                rank). The kernel serialises writes that extend a FUSE file;
                the CSV's pfs_* columns and the summary count them per run.
  --hosts N     the ranks run over N simulated hosts (scripts/cluster.sh:
                network namespaces, TCP between hosts), with the mpirun
                options the test bed prints; --slots S ranks per host.
  --no-settle   do not wait (bench/testbed settle) for the kernel's dirty
                pages to be written back before each run; the wait is in the
                CSV (settle_s).
Exit status 77 when the test bed cannot be made here (no FUSE or namespaces)."""


def add_testbed_args(ap):
    g = ap.add_argument_group("test bed")
    g.add_argument("--pfs", metavar='"ARGS"', default="",
                   help="run files on a parallel file system emulator mount made with "
                        "`bench/pfs up DIR ARGS`")
    g.add_argument("--hosts", type=int, default=0, metavar="N",
                   help="run the ranks over N simulated hosts (scripts/cluster.sh)")
    g.add_argument("--slots", type=int, default=0, metavar="S",
                   help="ranks per simulated host (the test bed's default)")
    g.add_argument("--no-settle", action="store_true",
                   help="skip `bench/testbed settle` before each run")


def _to_exit(signum, frame):
    raise SystemExit(128 + signum)


class Testbed:
    """One test bed for the whole benchmark: `up` once, `down` on every way out
    (finally, atexit, and SIGTERM/SIGHUP turned into SystemExit)."""

    def __init__(self, prog, pfs, hosts, slots, base_dir, settle=True, build=None):
        self.prog, self.pfs, self.hosts, self.slots = prog, pfs, hosts, slots
        # The test bed's own programs (fwdio-settle) from the benchmark's build tree.
        self.cli = [TESTBED] + (["--build", build] if build else [])
        self.base_dir, self.want_settle = base_dir, settle
        self.state_dir = None
        self.dir, self.mpirun, self.describe = base_dir, [], ""
        self.last_stats = None
        self.have_cli = os.access(TESTBED, os.X_OK)

    def _say(self, text):
        print("%s: %s" % (self.prog, text), flush=True)

    def up(self):
        if not self.have_cli:
            if self.pfs or self.hosts:
                raise SystemExit("%s: %s not found: --pfs and --hosts need the test bed's CLI"
                                 % (self.prog, TESTBED))
            self.describe = "%s (page cache; one host; no bench/testbed, so no settling)" % \
                self.base_dir
            return self
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _to_exit)
        self.state_dir = tempfile.mkdtemp(prefix="%s-testbed-" % os.path.basename(self.prog))
        atexit.register(self.down)
        cmd = self.cli + ["up", "--state", os.path.join(self.state_dir, "state"),
               "--dir", self.base_dir]
        if self.pfs:
            cmd += ["--pfs", self.pfs]
        if self.hosts:
            cmd += ["--hosts", str(self.hosts)]
            if self.slots:
                cmd += ["--slots", str(self.slots)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode == EXIT_UNAVAILABLE:
            sys.stderr.write(p.stderr)
            self.down()
            print("%s: the test bed is unavailable here (see above)" % self.prog,
                  file=sys.stderr, flush=True)
            sys.exit(EXIT_UNAVAILABLE)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            raise SystemExit("%s: bench/testbed up failed (exit %d)" % (self.prog, p.returncode))
        sys.stderr.write(p.stderr)
        fields = {}
        for line in p.stdout.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value
        if "dir" not in fields:
            raise SystemExit("%s: bench/testbed up printed no dir=:\n%s" % (self.prog, p.stdout))
        self.dir = fields["dir"]
        self.mpirun = shlex.split(fields.get("mpirun", ""))
        self.describe = fields.get("describe", "")
        if self.pfs:
            self.last_stats = self.stats()
        return self

    def down(self):
        if not self.state_dir:
            return
        state_dir, self.state_dir = self.state_dir, None
        p = subprocess.run(self.cli + ["down", "--state", os.path.join(state_dir, "state")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stdout)
            print("%s: warning: bench/testbed down failed (exit %d)" % (self.prog, p.returncode),
                  file=sys.stderr, flush=True)
        shutil.rmtree(state_dir, ignore_errors=True)

    def settle(self):
        """Wait for the dirty pages to be written back; the seconds waited
        (0.0 without the CLI or with --no-settle)."""
        if not self.want_settle or not self.have_cli:
            return 0.0
        t = time.monotonic()
        p = subprocess.run(self.cli + ["settle"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        waited = time.monotonic() - t
        if p.returncode != 0:
            sys.stderr.write(p.stdout)
            raise SystemExit("%s: bench/testbed settle failed (exit %d)" %
                             (self.prog, p.returncode))
        return waited

    def stats(self):
        if not self.state_dir or not self.pfs:
            return None
        p = subprocess.run(self.cli + ["stats", "--state", os.path.join(self.state_dir, "state"),
                            "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return None
        try:
            return json.loads(p.stdout)
        except ValueError:
            return None

    def pfs_delta(self):
        """What the emulator served since the last call: write bytes, write
        requests, writes that extended a file, conflicting stripes (empty
        strings without --pfs)."""
        keys = ("pfs_write_bytes", "pfs_write_requests", "pfs_extending_writes", "pfs_conflicts")
        now = self.stats()
        if now is None or self.last_stats is None:
            return {k: "" for k in keys}

        def counts(s):
            t = s.get("total", {})
            return (t.get("write_bytes", 0), t.get("write_requests", 0),
                    t.get("extending_writes", 0),
                    sum(x.get("conflicts", 0) for x in s.get("targets", [])))
        delta = [a - b for a, b in zip(counts(now), counts(self.last_stats))]
        self.last_stats = now
        return dict(zip(keys, delta))


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def run_job(cmd):
    """Run one mpirun; (completed process, wall seconds, CPU seconds that
    getrusage(RUSAGE_CHILDREN) saw: mpirun and what it reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p, wall, cpu


def job_cpu(cpu_mpirun, cpu_ranks, hosts):
    """CPU seconds of the whole job (see the module's comment): the ranks'
    own sum is added only where mpirun could not reap them."""
    if cpu_ranks is None:
        return cpu_mpirun
    return cpu_mpirun + cpu_ranks if hosts else cpu_mpirun


def cpu_check(prog, cpu_mpirun, cpu_ranks, hosts):
    """A warning when the two counts contradict the assumption job_cpu makes."""
    if cpu_ranks is None or cpu_ranks <= 0.5:
        return
    if hosts and cpu_mpirun > 0.5 * cpu_ranks:
        print("%s: warning: mpirun's children used %.1f s of CPU with the ranks' own %.1f s: "
              "the ranks may be counted twice" % (prog, cpu_mpirun, cpu_ranks), flush=True)
    if not hosts and cpu_mpirun < 0.9 * cpu_ranks:
        print("%s: warning: mpirun's children used %.1f s of CPU, less than the ranks' own "
              "%.1f s: the ranks were not all reaped" % (prog, cpu_mpirun, cpu_ranks), flush=True)


def spread(values, fmt="%.3f"):
    if not values:
        return "-"
    return (fmt + " [" + fmt + ", " + fmt + "]") % (statistics.median(values), min(values),
                                                    max(values))


def cpu_per_gib_lines(by, modes, reps, ref, pairs):
    """Markdown lines: CPU seconds per output GiB of each mode over `ref` in
    the same repetition, and the paired ratios of `pairs` (num, den).
    by[(rep, mode)] holds "cpu" (seconds) and "bytes" (output bytes)."""
    def per_gib(k, m):
        b = float(by[(k, m)]["bytes"])
        if b <= 0:
            return None
        return (float(by[(k, m)]["cpu"]) - float(by[(k, ref)]["cpu"])) / (b / GIB)

    lines = ["| mode | output (GiB) | CPU of the job (s) | CPU over %s (s) | "
             "CPU s per output GiB over %s |" % (ref, ref), "| --- | --- | --- | --- | --- |"]
    for m in modes:
        gib = [float(by[(k, m)]["bytes"]) / GIB for k in range(reps)]
        cpu = [float(by[(k, m)]["cpu"]) for k in range(reps)]
        over = [float(by[(k, m)]["cpu"]) - float(by[(k, ref)]["cpu"]) for k in range(reps)]
        pg = [v for v in (per_gib(k, m) for k in range(reps)) if v is not None]
        lines.append("| %s | %s | %s | %s | %s |" % (
            m, spread(gib, "%.4f"), spread(cpu, "%.2f"),
            "-" if m == ref else spread(over, "%+.2f"),
            "-" if m == ref or not pg else spread(pg, "%.1f")))
    first = True
    for num, den in pairs:
        if num not in modes or den not in modes:
            continue
        if first:
            lines.append("")
            first = False
        ratios = []
        for k in range(reps):
            a, b = per_gib(k, num), per_gib(k, den)
            if a is not None and b is not None and a > 0 and b > 0:
                ratios.append(a / b)
        lines.append("CPU per output GiB, %s / %s: %s per repetition (%d of %d with both "
                     "positive)" % (num, den, spread(ratios), len(ratios), reps))
    return lines
