#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the parallel file system emulator (bench/pfs), ctest label pfs.

    pfs_check.py cli                          bad command lines are refused
    pfs_check.py up      --mnt M --backing B --log L   mount (FIXTURES_SETUP)
    pfs_check.py posix   --mnt M --backing B           POSIX calls, bytes, accounting
    pfs_check.py options --dir D                       a second mount with the other options
    pfs_check.py fwdio   --mnt M --size N --writers W --targets-per-writer K
                         [--durable] -- MPIEXEC ...     fwdio through the mount
    pfs_check.py down    --mnt M --log L               unmount (FIXTURES_CLEANUP)

bench/pfs runs the fwdio-pfs named by $PFS_BIN. Every check compares the
emulator's statistics with what the striping arithmetic says they must be;
none looks at a time. Exit status 0 pass, 1 fail, 77 skip (no FUSE here).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

SKIP = 77
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PFS = os.path.join(REPO, "bench", "pfs")
FSTYPE = "fuse.fwdio-pfs"
MIB = 1 << 20

# The fixture mount: 4 targets of 64 KiB stripes, durable, and a conflict
# window of 10 minutes so that "another client wrote this stripe before" is a
# fact of the call order, not of timing. The sizes are spelled in the forms
# the size grammar allows; `up` checks the parsed values.
T = 4
S = 64 * 1024
FIXTURE_ARGS = ["--targets", "4", "--stripe", "64KiB", "--bw", "2GB", "--latency", "0.2",
                "--durable", "--sync-ms", "0.5", "--conflict-ms", "1",
                "--conflict-window-ms", "600000"]
FIXTURE_CONFIG = {"targets": 4, "stripe": 65536, "bw": 2 << 30, "durable": True,
                  "client": "process", "write_behind": 0, "start_target": "rr"}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def finish(name):
    if failures:
        print("FAIL %s: %d check(s) failed" % (name, len(failures)))
        return 1
    print("PASS " + name)
    return 0


def pfs(*args, check_rc=None, timeout=120):
    """Run bench/pfs; returns the CompletedProcess (output captured, echoed)."""
    cmd = [PFS] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.stdout:
        sys.stdout.write(p.stdout)
    if p.stderr:
        sys.stdout.write(p.stderr)
    if check_rc is not None and p.returncode != check_rc:
        fail("%s: exit %d, expected %d" % (" ".join(cmd), p.returncode, check_rc))
    return p


def unavailable():
    """Why this machine cannot run the emulator, or None."""
    if not os.environ.get("PFS_BIN") or not os.access(os.environ["PFS_BIN"], os.X_OK):
        return "no fwdio-pfs binary (PFS_BIN=%s)" % os.environ.get("PFS_BIN")
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse does not exist"
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return "/dev/fuse is not readable and writable for this user"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (Debian package fuse3)"
    if os.geteuid() != 0:
        return "not root: the tests mount FUSE file systems"
    return None


def mount_type(path):
    """File system type mounted at absolute `path`, or None."""
    found = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            point = left.split()[4].encode().decode("unicode_escape")
            if point == path:
                found = right.split()[0]
    return found


def need_mount(mnt):
    """Exit with SKIP or failure unless the fixture's mount is there."""
    if mount_type(mnt) == FSTYPE:
        return
    why = unavailable()
    if why:
        print("SKIP: " + why)
        sys.exit(SKIP)
    print("FAIL: %s is not mounted (did the pfs_up fixture fail?)" % mnt)
    sys.exit(1)


def stats(mnt):
    with open(os.path.join(mnt, ".pfs-stats.json")) as f:
        return json.load(f)


def reset(mnt):
    with open(os.path.join(mnt, ".pfs-reset"), "w") as f:
        f.write("1\n")


def layout(path):
    """(stripe_size, stripe_count, stripe_offset) from the layout attribute."""
    text = os.getxattr(path, "user.pfs.layout").decode()
    kv = dict(item.split("=") for item in text.split())
    return int(kv["stripe_size"]), int(kv["stripe_count"]), int(kv["stripe_offset"])


def per_target(extents, start, ntargets=T, stripe=S):
    """Bytes per target of `extents` [(offset, length)] of a file whose stripe 0
    is on target `start`: the striping arithmetic the emulator must follow."""
    out = [0] * ntargets
    for off, length in extents:
        end = off + length
        while off < end:
            s = off // stripe
            n = min(end, (s + 1) * stripe) - off
            out[(start + s) % ntargets] += n
            off += n
    return out


def pattern(n, seed):
    """n reproducible bytes."""
    return bytes((i * 131 + seed * 7 + (i >> 9)) & 0xFF for i in range(n))


# ---------------------------------------------------------------- cli

def cmd_cli(_args):
    """Bad command lines are refused before anything is mounted."""
    bad = [
        ["up"],
        ["up", "/tmp"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G"],  # no --latency
        ["up", "/tmp", "--targets", "0", "--stripe", "64K", "--bw", "1G", "--latency", "1"],
        ["up", "/tmp", "--targets", "1025", "--stripe", "64K", "--bw", "1G", "--latency", "1"],
        ["up", "/tmp", "--targets", "4", "--stripe", "1.5M", "--bw", "1G", "--latency", "1"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64X", "--bw", "1G", "--latency", "1"],
        ["up", "/tmp", "--targets", "4", "--stripe", "2K", "--bw", "1G", "--latency", "1"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "fast", "--latency", "1"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "-1"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "1ms"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "1",
         "--start-target", "4"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "1",
         "--client", "node"],
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "1",
         "--sync-ms", "5"],  # without --durable
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "1",
         "--conflict-window-ms", "5"],  # without --conflict-ms
        ["up", "/tmp", "--targets", "4", "--stripe", "64K", "--bw", "1G", "--latency", "1",
         "--frobnicate"],
        ["down"],
        ["stats", "/tmp", "--verbose"],
        ["sideways", "/tmp"],
    ]
    for argv in bad:
        p = pfs(*argv)
        check(p.returncode == 2, "%s: exit %d, expected 2 (usage)" % (argv, p.returncode))
        check("pfs:" in p.stderr or "usage:" in p.stderr,
              "%s: no explanation on stderr" % (argv,))
    # Well-formed but wrong: nothing of ours is mounted there.
    for argv, want in ((["down", "/tmp"], "is not mounted"), (["stats", "/"], "left alone"),
                       (["down", "/"], "left alone")):
        p = pfs(*argv)
        check(p.returncode == 1, "%s: exit %d, expected 1" % (argv, p.returncode))
        check(want in p.stderr, "%s: stderr lacks %r" % (argv, want))
    check(pfs("--help").returncode == 0, "--help fails")
    return finish("pfs cli")


# ---------------------------------------------------------------- fixture

def cmd_up(args):
    why = unavailable()
    if why:
        print("SKIP: " + why)
        return SKIP
    mnt, backing = os.path.abspath(args.mnt), os.path.abspath(args.backing)
    if mount_type(mnt) == FSTYPE:  # left by a killed run
        print("unmounting a stale emulator mount at " + mnt)
        pfs("down", mnt, "--lazy")
    if mount_type(mnt) is not None:
        print("FAIL: %s is still a mount point" % mnt)
        return 1
    shutil.rmtree(backing, ignore_errors=True)  # our own directory in the build tree
    os.makedirs(backing)
    os.makedirs(mnt, exist_ok=True)
    if os.path.exists(args.log):
        os.remove(args.log)
    p = pfs("up", mnt, *FIXTURE_ARGS, "--backing", backing, "--log", args.log, check_rc=0)
    if p.returncode != 0:
        return 1
    check(mount_type(mnt) == FSTYPE, "%s is not a %s mount after up" % (mnt, FSTYPE))
    cfg = stats(mnt)["config"]
    for key, want in FIXTURE_CONFIG.items():
        check(cfg[key] == want, "config %s = %r, expected %r" % (key, cfg[key], want))
    check(abs(cfg["latency_ms"] - 0.2) < 1e-9, "latency_ms = %r" % cfg["latency_ms"])
    check(cfg["backing"] == backing, "backing %r, expected %r" % (cfg["backing"], backing))
    # A second `up` on the same directory is refused.
    p = pfs("up", mnt, *FIXTURE_ARGS, "--backing", backing)
    check(p.returncode == 1 and "already a mount point" in p.stderr,
          "a second up on %s was not refused" % mnt)
    return finish("pfs up")


def sanitizer_reports(log):
    if not os.path.exists(log):
        return []
    with open(log, errors="replace") as f:
        text = f.read()
    marks = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer",
             "runtime error:")
    return [m for m in marks if m in text]


def cmd_down(args):
    mnt = os.path.abspath(args.mnt)
    if mount_type(mnt) != FSTYPE:
        why = unavailable()
        if why:
            print("SKIP: " + why)
            return SKIP
        print("nothing mounted at %s (the pfs_up fixture failed?)" % mnt)
        return 1
    p = pfs("down", mnt, "--json")
    if p.returncode != 0:
        fail("down exit %d; detaching it" % p.returncode)
        pfs("down", mnt, "--lazy")
    else:
        final = json.loads(p.stdout)
        check(final["config"]["targets"] == T, "final statistics do not parse")
        try:
            os.kill(final["pid"], 0)
            fail("daemon %d still runs after down" % final["pid"])
        except ProcessLookupError:
            pass
    check(mount_type(mnt) is None, "%s is still mounted" % mnt)
    reports = sanitizer_reports(args.log)
    if not check(not reports, "the daemon's log %s has sanitizer reports: %s"
                 % (args.log, reports)):
        with open(args.log, errors="replace") as f:
            sys.stdout.write(f.read()[-20000:])
    return finish("pfs down")


# ---------------------------------------------------------------- posix

def write_extents(fd, data, extents):
    for off, length in extents:
        n = os.pwrite(fd, data[off:off + length], off)
        check(n == length, "short pwrite at %d: %d of %d" % (off, n, length))


def targets(st):
    return st["targets"]


def client(st, pid):
    for c in st["clients"]:
        if c["id"] == pid:
            return c
    return None


def posix_accounting(mnt, backing):
    """Bytes per target and per client follow the striping arithmetic; reads
    come back byte for byte; the backing file holds the same bytes."""
    path = os.path.join(mnt, "acct.dat")
    size = 4 * MIB + 12345
    data = pattern(size, 1)
    # Writes of many sizes in an order that is not the file's: some inside a
    # stripe, many across stripes, one of 2.5 MiB that the kernel splits.
    extents, off, sizes = [], 0, [1, 4095, S, S + 1, 3 * S - 7, 100000, 5 * MIB // 2]
    i = 0
    while off < size:
        n = min(sizes[i % len(sizes)], size - off)
        extents.append((off, n))
        off += n
        i += 1
    extents = extents[1::2] + extents[0::2]
    reset(mnt)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
    _, count, start = layout(path)
    check(count == T, "layout stripe_count %d" % count)
    write_extents(fd, data, extents)
    st = stats(mnt)
    want = per_target(extents, start)
    got = [t["write_bytes"] for t in targets(st)]
    check(got == want, "write bytes per target %s, striping says %s" % (got, want))
    check(st["total"]["write_bytes"] == size, "total write_bytes %d != %d"
          % (st["total"]["write_bytes"], size))
    check(st["total"]["write_requests"] >= len(extents) + 2,
          "%d write requests for %d writes, one of them 2.5 MiB"
          % (st["total"]["write_requests"], len(extents)))
    check(st["total"]["max_request"] <= MIB, "a request of %d bytes" % st["total"]["max_request"])
    me = client(st, os.getpid())
    check(me is not None and me["write_bytes"] == size and me["targets_written"] == T,
          "client %d: %s" % (os.getpid(), me))
    check(all(t["clients"] == 1 for t in targets(st)), "clients per target not 1")
    check(all(t["conflicts"] == 0 for t in targets(st)), "conflicts from one client")
    # Reads: whole file in 1 MiB calls, byte for byte; the bytes read per
    # target follow the same arithmetic.
    back = b"".join(os.pread(fd, MIB, o) for o in range(0, size, MIB))
    check(back == data, "bytes read through the mount differ from those written")
    st = stats(mnt)
    got = [t["read_bytes"] for t in targets(st)]
    check(got == per_target([(0, size)], start), "read bytes per target %s" % got)
    with open(os.path.join(backing, "acct.dat"), "rb") as f:
        check(f.read() == data, "the backing file differs from what was written")
    return fd, path, start, size


def posix_durable(mnt, fd, start, size):
    """fsync queues one sync on each target written since the file's last sync."""
    os.fsync(fd)
    st = stats(mnt)
    check([t["syncs"] for t in targets(st)] == [1] * T,
          "syncs after the first fsync: %s" % [t["syncs"] for t in targets(st)])
    os.fdatasync(fd)  # nothing written since: no sync anywhere
    os.pwrite(fd, b"z" * 10, size - 10)  # the last stripe only
    os.fdatasync(fd)
    st = stats(mnt)
    last = (start + (size - 1) // S) % T
    want = [2 if t == last else 1 for t in range(T)]
    check([t["syncs"] for t in targets(st)] == want,
          "syncs %s, expected %s" % ([t["syncs"] for t in targets(st)], want))
    check(st["total"]["fsyncs"] == 3, "fsyncs %d, expected 3" % st["total"]["fsyncs"])


def child_write(path, off, data):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            cfd = os.open(path, os.O_WRONLY)
            code = 0 if os.pwrite(cfd, data, off) == len(data) else 1
            os.close(cfd)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "child write failed")
    return pid


def posix_conflicts(mnt):
    """A write to a stripe another client wrote last (within the window)
    conflicts; the same client again, or a fresh stripe, does not."""
    path = os.path.join(mnt, "conflict.dat")
    reset(mnt)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    _, _, start = layout(path)
    os.pwrite(fd, b"a" * 100, 0)                 # stripe 0: first writer
    child1 = child_write(path, 200, b"b" * 100)  # stripe 0: conflict 1
    os.pwrite(fd, b"c" * 100, 400)               # stripe 0: conflict 2
    os.pwrite(fd, b"d" * 100, 600)               # stripe 0: same client, none
    os.pwrite(fd, b"e" * 100, S + 10)            # stripe 1: first writer
    child2 = child_write(path, S + 300, b"f" * 100)  # stripe 1: conflict 3
    st = stats(mnt)
    want = [0] * T
    want[start % T] = 2
    want[(start + 1) % T] = 1
    got = [t["conflicts"] for t in targets(st)]
    check(got == want, "conflicts per target %s, expected %s" % (got, want))
    got_s = [t["conflict_s"] for t in targets(st)]
    check(all(math.isclose(g, c * 0.001, abs_tol=1e-9) for g, c in zip(got_s, want)),
          "conflict_s %s for 1 ms each" % got_s)
    for pid in (child1, child2):
        c = client(st, pid)
        check(c is not None and c["write_bytes"] == 100 and c["targets_written"] == 1,
              "child %d is not a client of its own: %s" % (pid, c))
    check(client(st, os.getpid())["write_bytes"] == 400, "the parent's bytes")
    data = os.pread(fd, 700, 0)
    check(data[200:300] == b"b" * 100 and data[400:500] == b"c" * 100, "conflict bytes wrong")
    os.close(fd)


def posix_names(mnt, backing):
    """The metadata calls MPI-IO, fio and fwdio make, checked against the backing."""
    d = os.path.join(mnt, "dir")
    os.mkdir(d, 0o750)
    check(os.path.isdir(os.path.join(backing, "dir")), "mkdir did not reach the backing")
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    with open(a, "wb") as f:
        f.write(b"first")
    with open(b, "wb") as f:
        f.write(b"second")
    os.rename(a, b)  # over an existing file
    check(sorted(os.listdir(d)) == ["b"], "readdir after rename: %s" % os.listdir(d))
    with open(b, "rb") as f:
        check(f.read() == b"first", "rename did not replace the target")
    try:
        os.open(b, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        fail("O_EXCL on an existing file succeeded")
    except FileExistsError:
        pass
    fd = os.open(b, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"+more")
    os.ftruncate(fd, 3 * S + 5)
    os.close(fd)
    check(os.stat(b).st_size == 3 * S + 5, "ftruncate size %d" % os.stat(b).st_size)
    os.truncate(b, 8)
    with open(b, "rb") as f:
        check(f.read() == b"first+mo", "append/truncate bytes wrong")
    os.chmod(b, 0o640)
    os.utime(b, (1000000000, 1234567890))
    st, bst = os.stat(b), os.stat(os.path.join(backing, "dir", "b"))
    check(st.st_mode & 0o777 == 0o640 and bst.st_mode & 0o777 == 0o640, "chmod")
    check(st.st_mtime == 1234567890 and bst.st_mtime == 1234567890, "utimens")
    check(st.st_size == bst.st_size == 8, "sizes differ from the backing")
    fd = os.open(os.path.join(d, "alloc"), os.O_CREAT | os.O_RDWR, 0o644)
    os.posix_fallocate(fd, 0, 3 * S)
    check(os.fstat(fd).st_size == 3 * S, "posix_fallocate size")
    os.close(fd)
    check(os.listxattr(b) == ["user.pfs.layout"], "listxattr %s" % os.listxattr(b))
    for name in ("b", "alloc"):
        os.unlink(os.path.join(d, name))
    os.rmdir(d)
    check(not os.path.exists(os.path.join(backing, "dir")), "rmdir did not reach the backing")
    sv, bsv = os.statvfs(mnt), os.statvfs(backing)
    check(sv.f_bsize == bsv.f_bsize and sv.f_blocks == bsv.f_blocks, "statfs is not the backing's")
    # The virtual files: readable, not listed, not removable.
    check(".pfs-stats" not in os.listdir(mnt), "readdir lists .pfs-stats")
    with open(os.path.join(mnt, ".pfs-stats")) as f:
        text = f.read()
    check(text.startswith("pfs mount=%s pid=" % mnt) and "\ntarget 3 " in text,
          "text statistics: %r" % text[:200])
    try:
        os.unlink(os.path.join(mnt, ".pfs-stats"))
        fail("unlink .pfs-stats succeeded")
    except PermissionError:
        pass


def posix_rr_and_extending(mnt):
    """New files start on the next target; writes past the end are counted."""
    paths = [os.path.join(mnt, "rr%d" % i) for i in range(T + 1)]
    starts = []
    for p in paths:
        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
        starts.append(layout(p)[2])
    check(all(starts[i + 1] == (starts[i] + 1) % T for i in range(T)),
          "first targets of new files not round robin: %s" % starts)
    reset(mnt)
    fd = os.open(paths[0], os.O_WRONLY)
    os.ftruncate(fd, MIB)
    os.pwrite(fd, b"x" * 1000, 5000)  # inside
    os.pwrite(fd, b"x" * 1000, MIB - 10)  # beyond the end
    os.close(fd)
    check(stats(mnt)["total"]["extending_writes"] == 1,
          "extending_writes %d, expected 1" % stats(mnt)["total"]["extending_writes"])
    for p in paths:
        os.unlink(p)


def cmd_posix(args):
    mnt, backing = os.path.abspath(args.mnt), os.path.abspath(args.backing)
    need_mount(mnt)
    fd, path, start, size = posix_accounting(mnt, backing)
    posix_durable(mnt, fd, start, size)
    os.close(fd)
    os.unlink(path)
    posix_conflicts(mnt)
    os.unlink(os.path.join(mnt, "conflict.dat"))
    posix_names(mnt, backing)
    posix_rr_and_extending(mnt)
    return finish("pfs posix")


# ---------------------------------------------------------------- options

def cmd_options(args):
    """A mount of its own with the options the fixture leaves out: a fixed first
    target, write-behind, a client link cap and clients per network namespace."""
    why = unavailable()
    if why:
        print("SKIP: " + why)
        return SKIP
    base = os.path.abspath(args.dir)
    mnt, backing, log = (os.path.join(base, n) for n in ("mnt", "backing", "daemon.log"))
    if mount_type(mnt) == FSTYPE:
        pfs("down", mnt, "--lazy")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(mnt)
    p = pfs("up", mnt, "--targets", "3", "--stripe", "1M", "--bw", "4G", "--latency", "0",
            "--start-target", "2", "--write-behind", "4M", "--client-bw", "8G",
            "--client", "host", "--durable", "--backing", backing, "--log", log, check_rc=0)
    if p.returncode != 0:
        return finish("pfs options")
    try:
        path = os.path.join(mnt, "wb.dat")
        size = 7 * MIB + 3
        data = pattern(size, 2)
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        check(layout(path) == (MIB, 3, 2), "layout %s" % (layout(path),))
        os.pwrite(fd, data, 0)
        os.fsync(fd)  # waits for what write-behind left queued
        st = stats(mnt)
        want = per_target([(0, size)], 2, 3, MIB)
        got = [t["write_bytes"] for t in st["targets"]]
        check(got == want, "write-behind: bytes per target %s, expected %s" % (got, want))
        check([t["syncs"] for t in st["targets"]] == [1, 1, 1], "syncs after fsync")
        check(all(t["queued"] == 0 for t in st["targets"]), "pieces still queued after fsync")
        check(os.pread(fd, size, 0) == data, "bytes differ")
        os.close(fd)
        # --client host: a process in another network namespace is another client.
        ns = os.stat("/proc/self/ns/net").st_ino
        unshare = shutil.which("unshare")
        other = None
        if unshare:
            q = subprocess.run([unshare, "--net", "--", sys.executable, "-c",
                                "import os; fd = os.open(%r, os.O_WRONLY); "
                                "os.pwrite(fd, b'n' * 10, 0); "
                                "print(os.stat('/proc/self/ns/net').st_ino)" % path],
                               capture_output=True, text=True, timeout=60)
            if q.returncode == 0:
                other = int(q.stdout.strip())
            else:
                print("note: unshare --net failed (%s); one namespace only" % q.stderr.strip())
        ids = sorted(c["id"] for c in stats(mnt)["clients"] if c["write_bytes"] > 0)
        want_ids = sorted([ns] + ([other] if other else []))
        check(ids == want_ids, "clients by network namespace %s, expected %s" % (ids, want_ids))
    finally:
        p = pfs("down", mnt)
        check(p.returncode == 0 and mount_type(mnt) is None, "down of the options mount")
        if mount_type(mnt) == FSTYPE:
            pfs("down", mnt, "--lazy")
    reports = sanitizer_reports(log)
    check(not reports, "sanitizer reports in %s: %s" % (log, reports))
    if not failures:
        shutil.rmtree(base, ignore_errors=True)
    return finish("pfs options")


# ---------------------------------------------------------------- fwdio

def cmd_fwdio(args):
    """fwdio's test_write_patterns writes one file through the mount (it
    verifies the bytes itself); then the writes per target must be the
    striping of exactly `size` bytes, written by exactly W writer processes
    that each touched the targets the layout promises, with no conflicts."""
    mnt = os.path.abspath(args.mnt)
    need_mount(mnt)
    reset(mnt)
    p = subprocess.run(args.command, capture_output=True, text=True, timeout=args.timeout)
    sys.stdout.write(p.stdout + p.stderr)
    if not check(p.returncode == 0 and "PASS test_write_patterns" in p.stdout,
                 "test_write_patterns exit %d" % p.returncode):
        return finish("pfs fwdio")
    st = stats(mnt)
    got = [t["write_bytes"] for t in targets(st)]
    # The file is gone (the test removes its directory), so its first target
    # is unknown: exactly one rotation of the arithmetic must match (for a
    # size that is no multiple of T stripes the rotations differ).
    rotations = [s for s in range(T) if per_target([(0, args.size)], s) == got]
    check(len(rotations) == 1, "write bytes per target %s match no striping of %d bytes"
          % (got, args.size))
    check(st["total"]["write_bytes"] == args.size, "total write_bytes %d, expected %d"
          % (st["total"]["write_bytes"], args.size))
    check(all(t["conflicts"] == 0 for t in targets(st)),
          "conflicts %s: two writers wrote one stripe" % [t["conflicts"] for t in targets(st)])
    writers = [c for c in st["clients"] if c["write_bytes"] > 0]
    check(len(writers) == args.writers, "%d processes wrote, expected %d writers"
          % (len(writers), args.writers))
    check(sum(c["write_bytes"] for c in writers) == args.size, "client bytes do not add up")
    touched = sorted(c["targets_written"] for c in writers)
    check(touched == [args.targets_per_writer] * args.writers,
          "targets per writer %s, the layout promises %d each"
          % (touched, args.targets_per_writer))
    if args.durable:
        check(st["total"]["fsyncs"] == args.writers, "fsyncs %d, expected one per writer"
              % st["total"]["fsyncs"])
        check(all(1 <= t["syncs"] <= args.writers for t in targets(st)),
              "syncs per target %s" % [t["syncs"] for t in targets(st)])
    return finish("pfs fwdio")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("cli")
    for name in ("up", "down"):
        sp = sub.add_parser(name)
        sp.add_argument("--mnt", required=True)
        sp.add_argument("--backing")
        sp.add_argument("--log", required=True)
    sp = sub.add_parser("posix")
    sp.add_argument("--mnt", required=True)
    sp.add_argument("--backing", required=True)
    sp = sub.add_parser("options")
    sp.add_argument("--dir", required=True)
    sp = sub.add_parser("fwdio")
    sp.add_argument("--mnt", required=True)
    sp.add_argument("--size", type=int, required=True)
    sp.add_argument("--writers", type=int, required=True)
    sp.add_argument("--targets-per-writer", type=int, required=True)
    sp.add_argument("--durable", action="store_true")
    sp.add_argument("--timeout", type=int, default=100)
    sp.add_argument("command", nargs="+")
    args = ap.parse_args()
    return {"cli": cmd_cli, "up": cmd_up, "down": cmd_down, "posix": cmd_posix,
            "options": cmd_options, "fwdio": cmd_fwdio}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
