#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end checks of apps/mdlj (ctest mdlj_*).

    mdlj_check.py SCENARIO --mdlj EXE --mpiexec MPIEXEC [--np N] [--atoms N]
                  [--timeout SEC] [-- EXTRA_MPIEXEC_ARGS...]

Every scenario runs mdlj under mpiexec one or more times in a fresh
directory and checks the bytes that land in the files, with a DCD and a
checkpoint reader written here from the formats' descriptions (not mdlj's
code):

  verify    one run with --verify (mdlj compares every frame and checkpoint
            with an in-memory gather on rank 0), then the DCD is parsed here
            (header, record markers, unit cell, frame count), every remaining
            checkpoint's header, commit record and checksum are recomputed,
            the newest checkpoint's positions, rounded to float32, equal the
            trajectory frame of the same step, and only the two newest
            checkpoints are left. --output fwdio (the default in every
            scenario but modes and ranks) writes them as versions of a fwdio
            checkpoint set, run.ckpt.v<step>.ckpt beside its manifest, whose
            fields and CRC-32s (zlib's) are checked here too; the other
            modes write run.ckpt.<step>.
  restart   an uninterrupted run A to step S against a run B that stops
            half way and a run C that restarts from B's newest checkpoint: B's
            and C's frames equal A's frames of the same steps bit for bit, and
            so do A's and C's final checkpoints.
  torn      a run to step S whose newest checkpoint then loses its commit
            record (zeroed, as a crash before the commit leaves it): the
            restart must skip it (its bytes no longer match the manifest's
            CRC-32), continue from the previous checkpoint and
            reproduce the first run's frames after it bit for bit.
  crash     a run killed by --crash-at between a checkpoint's data and its
            commit record; the restart must use the newest checkpoint that is
            valid by the reader here (an older one) and reproduce an
            uninterrupted run's frames after it; the interrupted version is
            not in place at all (neither data nor manifest).
  modes     the same run through fwdio, MPI-IO, serial, MPI-IO nonblocking
            (mpiio-async), write-locally-then-copy (local-copy) output and
            fwdio with its node-local tier for the checkpoints (fwdio-tier;
            each with --verify) gives identical DCD and checkpoint files;
            local-copy and the tier leave nothing behind locally; --output
            none writes nothing.
  mdanalysis  MDAnalysis (when the interpreter has it) opens the trajectory
            and reads the atom count, frame count, box and every coordinate
            as the reader here does.
  continue  a restart given the first run's own DCD continues it: the file
            ends byte for byte the uninterrupted run's.
  ranks     an uninterrupted run on --np ranks; restarts of its checkpoint
            half way (a copy each) on each of --restart-np rank counts
            (--output: fwdio reads it through fwdio, the other modes pread
            it): the state each loaded,
            gathered by atom id (--dump-loaded), equals the checkpoint byte
            for byte, each rank holding only atoms of its region. On --np
            ranks the continued run is the uninterrupted run bit for bit
            (energies, frames, final checkpoint); on another count its
            energies agree with the uninterrupted run's to 1e-6 per atom and
            its final positions and velocities to 1e-9, its frames to 1e-5
            (see check_close for why these bounds).
  killed    runs killed with SIGKILL (every process of the job) at moments
            drawn from --seed: the DCD's header counts whole frames only, each
            equal to the uninterrupted run's, the file holds less than one
            frame more, MDAnalysis (when there) reads exactly the counted
            frames, and a restart from what the kill left continues the same
            DCD into the uninterrupted run's file.

A run that exceeds the remaining time budget is killed and reported; the
directory is kept (and named) when a check fails.
"""
import argparse
import array
import glob
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

failures = []


def fail(msg):
    failures.append(msg)
    print("mdlj_check: FAIL: " + msg, flush=True)


# More ranks than cores: Open MPI refuses them without --oversubscribe, MPICH's
# Hydra needs no flag (TC_MPI: tests/CMakeLists.txt).
OVERSUBSCRIBE = ["--oversubscribe"] if os.environ.get("TC_MPI", "openmpi") == "openmpi" else []


def note(msg):
    print("mdlj_check: " + msg, flush=True)


class Runner:
    def __init__(self, args, workdir):
        self.args = args
        self.workdir = workdir
        self.deadline = time.monotonic() + args.timeout

    def mdlj(self, name, options, expect_rc=0, np=None):
        """Run mdlj with `options` in workdir on `np` ranks (default --np); return its
        stdout+stderr text."""
        cmd = [self.args.mpiexec, "-n", str(np or self.args.np)] + OVERSUBSCRIBE
        cmd += self.args.mpiexec_args + [self.args.mdlj] + options
        note("%s: %s" % (name, " ".join(cmd)))
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no time left for run %s" % name)
        p = subprocess.Popen(cmd, cwd=self.workdir, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                out, _ = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
            print(out, end="")
            raise TimeoutError("run %s did not finish within the time budget" % name)
        ok = p.returncode == expect_rc if expect_rc is not None else p.returncode != 0
        if not ok:
            print(out, end="")
            fail("run %s exited with %d (expected %s)" %
                 (name, p.returncode, expect_rc if expect_rc is not None else "non-zero"))
        else:
            for line in out.splitlines():
                if line.startswith("mdlj:") and ("summary" in line or "restart" in line
                                                 or "ignoring" in line or "verify" in line
                                                 or "crash" in line or "dump-loaded" in line):
                    note("  " + line)
        return out


    def mdlj_killed(self, name, options, delay):
        """Start mdlj and kill every process of the job with SIGKILL after `delay` s."""
        cmd = [self.args.mpiexec, "-n", str(self.args.np)] + OVERSUBSCRIBE
        cmd += self.args.mpiexec_args + [self.args.mdlj] + options
        note("%s: %s" % (name, " ".join(cmd)))
        p = subprocess.Popen(cmd, cwd=self.workdir, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            p.wait(timeout=delay)
            note("%s: the run ended (%d) before the kill" % (name, p.returncode))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        # Open MPI starts each rank in a process group of its own, so killing the
        # launcher's group leaves the ranks running until they notice it died (seconds
        # under a sanitizer). A scheduler kills every process of a job at once: send
        # SIGKILL to every process of the job's session, then wait until none is left.
        for _ in range(100):
            left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True)
            pids = [int(x) for x in left.stdout.split()]
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        fail("%s: processes of the killed job are still running" % name)


# --- DCD -------------------------------------------------------------------

def read_record(data, pos, what):
    """One Fortran record: int32 length, payload, the same int32 length."""
    if pos + 4 > len(data):
        raise ValueError("%s: file ends at byte %d" % (what, pos))
    (n,) = struct.unpack_from("<i", data, pos)
    end = pos + 4 + n
    if n < 0 or end + 4 > len(data):
        raise ValueError("%s: record of %d bytes at %d runs past the end" % (what, n, pos))
    (n2,) = struct.unpack_from("<i", data, end)
    if n2 != n:
        raise ValueError("%s: record markers %d and %d differ" % (what, n, n2))
    return data[pos + 4:end], end + 4


def parse_dcd(path, partial_tail=False):
    """Header fields and frames [(step, cell 6-tuple, bytes of x+y+z)] of a CHARMM DCD.
    With partial_tail, bytes after the frames the header counts are allowed if
    they are fewer than a frame (the frame a killed run was writing)."""
    with open(path, "rb") as f:
        data = f.read()
    head, pos = read_record(data, 0, "header")
    if len(head) != 84 or head[:4] != b"CORD":
        raise ValueError("first record is not an 84-byte CORD record")
    icntrl = struct.unpack_from("<20i", head, 4)
    (delta,) = struct.unpack_from("<f", head, 4 + 9 * 4)
    hdr = {"nset": icntrl[0], "istart": icntrl[1], "nsavc": icntrl[2], "nstep": icntrl[3],
           "namnf": icntrl[8], "delta": delta, "has_cell": icntrl[10],
           "four_dims": icntrl[11], "version": icntrl[19]}
    title, pos = read_record(data, pos, "title")
    (ntitle,) = struct.unpack_from("<i", title, 0)
    if len(title) != 4 + 80 * ntitle:
        raise ValueError("title record of %d bytes for %d lines" % (len(title), ntitle))
    hdr["title"] = [title[4 + 80 * i:4 + 80 * (i + 1)].decode("ascii").rstrip()
                    for i in range(ntitle)]
    natom, pos = read_record(data, pos, "natom")
    if len(natom) != 4:
        raise ValueError("NATOM record is not 4 bytes")
    (n,) = struct.unpack("<i", natom)
    hdr["natoms"] = n
    frames = []
    for k in range(hdr["nset"]):
        what = "frame %d" % k
        cell = None
        if hdr["has_cell"]:
            rec, pos = read_record(data, pos, what + " unit cell")
            if len(rec) != 48:
                raise ValueError(what + ": unit cell record is not 48 bytes")
            cell = struct.unpack("<6d", rec)
        coords = b""
        for axis in "xyz":
            rec, pos = read_record(data, pos, "%s %s" % (what, axis))
            if len(rec) != 4 * n:
                raise ValueError("%s %s: %d bytes for %d atoms" % (what, axis, len(rec), n))
            coords += rec
        frames.append((hdr["istart"] + k * hdr["nsavc"], cell, coords))
    frame_bytes = (48 + 8 if hdr["has_cell"] else 0) + 3 * (8 + 4 * n)
    if pos != len(data) and not (partial_tail and len(data) - pos < frame_bytes):
        raise ValueError("%d bytes after the last frame" % (len(data) - pos))
    return hdr, frames


def check_dcd(path, natoms, first, every, nframes, dt):
    """Parse and check the layout; return {step: (cell, coords)}."""
    try:
        hdr, frames = parse_dcd(path)
    except (OSError, ValueError, struct.error) as e:
        fail("%s: not a valid DCD: %s" % (path, e))
        return {}
    want = {"nset": nframes, "istart": first, "nsavc": every,
            "nstep": first + (nframes - 1) * every, "namnf": 0, "has_cell": 1,
            "four_dims": 0, "version": 24, "natoms": natoms}
    for key, value in want.items():
        if hdr[key] != value:
            fail("%s: header %s = %r, expected %r" % (path, key, hdr[key], value))
    if hdr["delta"] != struct.unpack("<f", struct.pack("<f", dt))[0]:
        fail("%s: DELTA %r, expected %r" % (path, hdr["delta"], dt))
    out = {}
    for step, cell, coords in frames:
        box = cell[0]
        if cell != (box, 90.0, box, 90.0, 90.0, box) or not box > 0:
            fail("%s: step %d: unit cell %r is not a cube with right angles" % (path, step, cell))
        xs = array.array("f")
        xs.frombytes(coords)
        if sys.byteorder != "little":
            xs.byteswap()
        bad = [v for v in xs if not (0.0 <= v <= box)]
        if bad:
            fail("%s: step %d: %d coordinates outside [0, %g], e.g. %r" %
                 (path, step, len(bad), box, bad[0]))
        out[step] = (cell, coords)
    note("%s: %d frames of %d atoms, steps %d..%d, box %.4f" %
         (path, len(frames), hdr["natoms"], first, first + (nframes - 1) * every,
          frames[0][1][0] if frames else 0))
    return out


# --- checkpoints -------------------------------------------------------------

M64 = (1 << 64) - 1


P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M64, 31) * P1) & M64


def xxh64(data, seed):
    """xxHash's XXH64 of `data`, written here from its specification so that
    the checkpoint's hashes are checked by code mdlj does not share."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed & M64, (seed - P1) & M64]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(v[k], lanes[k]) for k in range(4)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for k in range(4):
            h = ((h ^ _round(0, v[k])) * P1 + P4) & M64
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, i)
        h = (_rotl(h ^ _round(0, lane), 27) * P1 + P4) & M64
        i += 8
    if i + 4 <= n:
        (word,) = struct.unpack_from("<I", data, i)
        h = (_rotl(h ^ ((word * P1) & M64), 23) * P2 + P3) & M64
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * P5) & M64), 11) * P1) & M64
        i += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    return h ^ (h >> 32)


HEADER_SEED = 0x4D444C4A48445231
COMMIT_SEED = 0x4D444C4A434D5431


def parse_checkpoint(path):
    """Decode and check a checkpoint file; returns (info dict, atom bytes) or raises."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 128 + 64 or data[:8] != b"MDLJCKP2":
        raise ValueError("no checkpoint header")
    (hbytes, abytes, step, natoms, box, dt, cutoff, seed, nranks, _pad, data_off, commit_off,
     file_bytes) = struct.unpack_from("<IIqqdddQIIQQQ", data, 8)
    (hhash,) = struct.unpack_from("<Q", data, 120)
    if hhash != xxh64(data[:120], HEADER_SEED):
        raise ValueError("header hash mismatch")
    if (hbytes, abytes, data_off) != (128, 48, 128) or commit_off != 128 + 48 * natoms \
            or file_bytes != commit_off + 64 or len(data) != file_bytes:
        raise ValueError("sizes inconsistent (file %d bytes, header says %d)" %
                         (len(data), file_bytes))
    commit = data[commit_off:]
    if commit[:8] != b"MDLJDONE":
        raise ValueError("no commit record")
    c_step, c_natoms, c_sum, c_hhash = struct.unpack_from("<qqQQ", commit, 8)
    (c_hash,) = struct.unpack_from("<Q", commit, 56)
    if c_hash != xxh64(commit[:56], COMMIT_SEED):
        raise ValueError("commit record hash mismatch")
    if (c_step, c_natoms, c_hhash) != (step, natoms, hhash):
        raise ValueError("commit record does not match the header")
    atoms = data[128:commit_off]
    total = 0
    for i in range(natoms):
        total = (total + xxh64(atoms[48 * i:48 * (i + 1)], i)) & M64
    if total != c_sum:
        raise ValueError("atom checksum %#x, commit record says %#x" % (total, c_sum))
    return {"step": step, "natoms": natoms, "box": box, "dt": dt, "cutoff": cutoff,
            "seed": seed, "nranks": nranks}, atoms


def float32_positions(atoms, natoms):
    """x of all atoms, then y, then z, as float32 bytes: what a DCD frame holds."""
    xyzv = array.array("d")
    xyzv.frombytes(atoms)
    if sys.byteorder != "little":
        xyzv.byteswap()
    out = array.array("f", [0.0]) * (3 * natoms)
    for i in range(natoms):
        for d in range(3):
            out[d * natoms + i] = xyzv[6 * i + d]
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


# Where mdlj puts the checkpoint of a step. --output fwdio (the default)
# writes versions of a fwdio checkpoint set (fwdio.h, "Checkpoint sets"):
# set <name> in <dir> for --checkpoint <dir>/<name>, data <name>.v<step>.ckpt
# beside its manifest <name>.v<step>.manifest; the other modes write the
# file <base>.<step>. The data file holds the same bytes either way.
def is_set(output):
    return output == "fwdio"


def ckpt_file(directory, base, step, output="fwdio"):
    if is_set(output):
        return os.path.join(directory, "%s.v%d.ckpt" % (base, step))
    return os.path.join(directory, "%s.%d" % (base, step))


def checkpoint_steps(directory, base, output="fwdio"):
    """Steps of the checkpoint data files in `directory` (complete or not)."""
    steps = []
    for name in os.listdir(directory):
        if not name.startswith(base + "."):
            continue
        rest = name[len(base) + 1:]
        if is_set(output) and rest.startswith("v") and rest.endswith(".ckpt"):
            rest = rest[1:-len(".ckpt")]
        elif is_set(output):
            continue
        if rest.isdigit():
            steps.append(int(rest))
    return sorted(steps)


def check_manifest(directory, base, step):
    """The manifest of version `step` of set `base`, read here from fwdio.h's
    description: its lines, its own CRC-32 ("end"), and the data file's size
    and CRC-32 (zlib's). Raises ValueError when it does not hold."""
    path = os.path.join(directory, "%s.v%d.manifest" % (base, step))
    with open(path, "rb") as f:
        text = f.read()
    lines = text.split(b"\n")
    if len(lines) != 7 or lines[6] != b"" or lines[0] != b"fwdio-ckpt 1":
        raise ValueError("%s: not a manifest: %r" % (path, text[:80]))
    body = b"\n".join(lines[:5]) + b"\n"
    if lines[5] != b"end %08x" % zlib.crc32(body):
        raise ValueError("%s: its own CRC-32 does not match" % path)
    want = [b"name " + os.path.basename(base).encode(), b"version %d" % step]
    if lines[1:3] != want:
        raise ValueError("%s: names %r, expected %r" % (path, lines[1:3], want))
    data = ckpt_file(directory, base, step)
    with open(data, "rb") as f:
        content = f.read()
    if lines[3] != b"size %d" % len(content):
        raise ValueError("%s: %r, the data file has %d bytes" % (path, lines[3], len(content)))
    if lines[4] != b"crc32 %08x" % zlib.crc32(content):
        raise ValueError("%s: %r, the data's CRC-32 is %08x" % (path, lines[4],
                                                               zlib.crc32(content)))


def manifest_steps(directory, base):
    steps = []
    for name in os.listdir(directory):
        rest = name[len(base) + 2:] if name.startswith(base + ".v") else ""
        if rest.endswith(".manifest") and rest[:-len(".manifest")].isdigit():
            steps.append(int(rest[:-len(".manifest")]))
    return sorted(steps)


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def compare_frames(name, got, ref, steps):
    """Frames of `got` equal those of `ref` at `steps`, bit for bit."""
    for step in steps:
        if step not in got or step not in ref:
            fail("%s: step %d missing (restarted run has %s, reference %s)" %
                 (name, step, sorted(got), sorted(ref)))
        elif got[step] != ref[step]:
            a, b = got[step][1], ref[step][1]
            at = next((i for i in range(len(a)) if a[i] != b[i]), -1)
            fail("%s: frame of step %d differs from the reference at coordinate byte %d" %
                 (name, step, at))
    note("%s: %d frames identical to the reference (steps %s)" %
         (name, len(steps), ", ".join(map(str, steps))))


# --- scenarios ----------------------------------------------------------------

def common(args, steps, every, ckpt_every, dcd, base):
    return ["--atoms", str(args.atoms), "--steps", str(steps), "--every", str(every),
            "--checkpoint-every", str(ckpt_every), "--dcd", dcd, "--checkpoint", base,
            "--seed", "2024", "--thermo", "0"]


def scenario_verify(r, args):
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    out = r.mdlj("verify", common(args, steps, every, ckpt, "run.dcd", "run.ckpt") + ["--verify"])
    nframes = steps // every
    if "verify: %d trajectory frames and" % nframes not in out:
        fail("mdlj did not report %d verified frames" % nframes)
    frames = check_dcd(os.path.join(r.workdir, "run.dcd"), args.atoms, every, every, nframes,
                       0.005)
    kept = checkpoint_steps(r.workdir, "run.ckpt")
    written = list(range(ckpt, steps + 1, ckpt))
    if kept != written[-2:]:
        fail("checkpoints left: %s, expected the two newest of %s" % (kept, written))
    if manifest_steps(r.workdir, "run.ckpt") != kept:
        fail("manifests of %s, checkpoints %s" % (manifest_steps(r.workdir, "run.ckpt"), kept))
    for step in kept:
        try:
            check_manifest(r.workdir, "run.ckpt", step)
        except (OSError, ValueError) as e:
            fail(str(e))
        path = ckpt_file(r.workdir, "run.ckpt", step)
        try:
            info, atoms = parse_checkpoint(path)
        except (OSError, ValueError, struct.error) as e:
            fail("%s: %s" % (path, e))
            continue
        if info["step"] != step or info["natoms"] != args.atoms or info["nranks"] != args.np:
            fail("%s: header %r" % (path, info))
        if step in frames and float32_positions(atoms, args.atoms) != frames[step][1]:
            fail("%s: positions differ from the trajectory frame of step %d" % (path, step))
        note("%s: header, commit record and checksum valid; positions match the frame" % path)


def scenario_restart(r, args):
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    half = (steps // 2) // ckpt * ckpt
    os.mkdir(os.path.join(r.workdir, "a"))
    os.mkdir(os.path.join(r.workdir, "b"))
    r.mdlj("uninterrupted", common(args, steps, every, ckpt, "a/run.dcd", "a/run.ckpt"))
    r.mdlj("first half", common(args, half, every, ckpt, "b/first.dcd", "b/run.ckpt"))
    out = r.mdlj("restart", common(args, steps, every, ckpt, "b/second.dcd", "b/run.ckpt")
                 + ["--restart"])
    if "(step %d)" % half not in out:
        fail("the restart did not continue from step %d" % half)
    ref = check_dcd(os.path.join(r.workdir, "a/run.dcd"), args.atoms, every, every,
                    steps // every, 0.005)
    first = check_dcd(os.path.join(r.workdir, "b/first.dcd"), args.atoms, every, every,
                      half // every, 0.005)
    second = check_dcd(os.path.join(r.workdir, "b/second.dcd"), args.atoms, half + every, every,
                       (steps - half) // every, 0.005)
    compare_frames("first half", first, ref, list(range(every, half + 1, every)))
    compare_frames("after the restart", second, ref, list(range(half + every, steps + 1, every)))
    a_last = ckpt_file(os.path.join(r.workdir, "a"), "run.ckpt", steps)
    b_last = ckpt_file(os.path.join(r.workdir, "b"), "run.ckpt", steps)
    if not (os.path.exists(a_last) and os.path.exists(b_last) and same_file(a_last, b_last)):
        fail("final checkpoints %s and %s differ" % (a_last, b_last))
    else:
        note("final checkpoints of the uninterrupted and the restarted run are identical")


def scenario_torn(r, args):
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    r.mdlj("first run", common(args, steps, every, ckpt, "first.dcd", "run.ckpt"))
    ref = check_dcd(os.path.join(r.workdir, "first.dcd"), args.atoms, every, every,
                    steps // every, 0.005)
    newest, previous = steps // ckpt * ckpt, (steps // ckpt - 1) * ckpt
    path = ckpt_file(r.workdir, "run.ckpt", newest)
    try:
        parse_checkpoint(path)
        check_manifest(r.workdir, "run.ckpt", newest)
    except (OSError, ValueError, struct.error) as e:
        fail("%s: not valid before it was torn: %s" % (path, e))
    size = os.path.getsize(path)
    with open(path, "r+b") as f:  # as if the job died before the commit record
        f.seek(size - 64)
        f.write(bytes(64))
    out = r.mdlj("restart", common(args, steps, every, ckpt, "second.dcd", "run.ckpt")
                 + ["--restart"])
    # fwdio_ckpt_latest_upto finds the data no longer matching its manifest
    if "run.ckpt version %d skipped" % newest not in out:
        fail("the restart did not report that it skipped the torn version %d" % newest)
    if "(step %d)" % previous not in out:
        fail("the restart did not continue from step %d" % previous)
    second = check_dcd(os.path.join(r.workdir, "second.dcd"), args.atoms, previous + every,
                       every, (steps - previous) // every, 0.005)
    compare_frames("after the torn checkpoint", second, ref,
                   list(range(previous + every, steps + 1, every)))
    try:
        parse_checkpoint(path)
        check_manifest(r.workdir, "run.ckpt", newest)
        note("%s: rewritten whole by the restarted run, its manifest matching" % path)
    except (OSError, ValueError, struct.error) as e:
        fail("%s: not rewritten by the restarted run: %s" % (path, e))


def scenario_crash(r, args):
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    crash = steps // ckpt * ckpt
    os.mkdir(os.path.join(r.workdir, "ref"))
    r.mdlj("uninterrupted", common(args, steps, every, ckpt, "ref/run.dcd", "ref/run.ckpt"))
    ref = check_dcd(os.path.join(r.workdir, "ref/run.dcd"), args.atoms, every, every,
                    steps // every, 0.005)
    out = r.mdlj("crashing", common(args, steps, every, ckpt, "crash.dcd", "run.ckpt")
                 + ["--crash-at", str(crash)], expect_rc=None)
    if "--crash-at %d" % crash not in out:
        fail("the crashing run did not reach its crash point")
    # Which checkpoints survived whole is up to timing (an earlier one may
    # still have been in flight): the restart must take the newest valid one.
    valid, invalid = [], []
    for step in checkpoint_steps(r.workdir, "run.ckpt"):
        try:
            parse_checkpoint(ckpt_file(r.workdir, "run.ckpt", step))
            check_manifest(r.workdir, "run.ckpt", step)
            valid.append(step)
        except (OSError, ValueError, struct.error) as e:
            invalid.append(step)
            note("after the crash: run.ckpt.%d is not valid: %s" % (step, e))
    note("after the crash: valid checkpoints %s, invalid %s" % (valid, invalid))
    if crash in valid:
        fail("the checkpoint of step %d has a commit record although the job died before it"
             % crash)
    # the version in flight was written to its temporary: neither data nor
    # manifest of it is in place
    if crash in checkpoint_steps(r.workdir, "run.ckpt") + manifest_steps(r.workdir, "run.ckpt"):
        fail("the interrupted version %d is in place (data or manifest)" % crash)
    if not valid:
        fail("no valid checkpoint survived the crash")
        return
    resume = max(valid)
    out = r.mdlj("restart", common(args, steps, every, ckpt, "after.dcd", "run.ckpt")
                 + ["--restart"])
    for step in invalid:  # a data file in place without a manifest is no candidate
        if step > resume and os.path.exists(os.path.join(r.workdir, "run.ckpt.v%d.manifest"
                                                          % step)):
            fail("the interrupted version %d has a manifest" % step)
    if "(step %d)" % resume not in out:
        fail("the restart did not continue from step %d" % resume)
    after = check_dcd(os.path.join(r.workdir, "after.dcd"), args.atoms, resume + every, every,
                      (steps - resume) // every, 0.005)
    compare_frames("after the crash", after, ref, list(range(resume + every, steps + 1, every)))


def scenario_continue(r, args):
    """A restart continues the same DCD: it ends identical to an uninterrupted run's."""
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    half = (steps // 2) // ckpt * ckpt
    for d in ("a", "b"):
        os.mkdir(os.path.join(r.workdir, d))
    r.mdlj("uninterrupted", common(args, steps, every, ckpt, "a/run.dcd", "a/run.ckpt"))
    r.mdlj("first half", common(args, half, every, ckpt, "b/run.dcd", "b/run.ckpt"))
    out = r.mdlj("restart", common(args, steps, every, ckpt, "b/run.dcd", "b/run.ckpt")
                 + ["--restart"])
    if "(step %d)" % half not in out:
        fail("the restart did not continue from step %d" % half)
    check_dcd(os.path.join(r.workdir, "b/run.dcd"), args.atoms, every, every, steps // every,
              0.005)
    if not same_file(os.path.join(r.workdir, "a/run.dcd"), os.path.join(r.workdir, "b/run.dcd")):
        fail("the continued trajectory differs from the uninterrupted run's")
    else:
        note("the trajectory continued by the restart is identical to the uninterrupted run's")


def thermo_lines(out):
    """{step: (temperature, potential/N, kinetic/N, total/N)} from mdlj's energy lines,
    as printed (strings), so that equal means bit for bit to the printed digits."""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 5 and f[0].isdigit():
            try:
                [float(v) for v in f[1:]]
            except ValueError:
                continue
            rows[int(f[0])] = tuple(f[1:])
    return rows


# How far a run restarted on another rank count may drift from the
# uninterrupted run. It starts from the same bits (checked exactly through
# --dump-loaded); only the order in which each force is summed differs
# (another grid of ranks, other cell and ghost lists), which changes forces
# by a few units in the last place (~1e-16 relative). An LJ liquid amplifies
# such differences by about e^(lambda t) with a Lyapunov exponent lambda of a
# few per reduced time unit; the tests continue 10 steps of dt 0.005 (0.05
# time units, a factor < 1.5), so the states differ by ~1e-14 (measured:
# positions 4e-15, velocities 6e-14 after 10 steps with 8000 and 50000
# atoms). The bounds leave a margin of 10^4 and more, and are still far below
# what a wrong state would show: energies are printed to 1e-8 and the total
# energy per atom moves by ~1e-3 over 5 steps while the lattice melts;
# frames are float32 (spacing 4e-6 at the box side).
ENERGY_TOL = 1e-6   # per atom, reduced units, each printed column
STATE_TOL = 1e-9    # positions and velocities in the final checkpoint
FRAME_TOL = 1e-5    # float32 coordinates of the trajectory frames


def checkpoint_doubles(path):
    info, atoms = parse_checkpoint(path)
    values = array.array("d")
    values.frombytes(atoms)
    if sys.byteorder != "little":
        values.byteswap()
    return info, values


def check_close(name, ref_path, path):
    """Positions and velocities of two checkpoints within STATE_TOL; returns the largest
    differences."""
    try:
        ref_info, ref = checkpoint_doubles(ref_path)
        info, ours = checkpoint_doubles(path)
    except (OSError, ValueError, struct.error) as e:
        fail("%s: %s" % (name, e))
        return
    if (info["step"], info["natoms"]) != (ref_info["step"], ref_info["natoms"]):
        fail("%s: step/atoms %r, reference %r" % (name, info, ref_info))
        return
    dx = max((abs(a - b) for k, (a, b) in enumerate(zip(ours, ref)) if k % 6 < 3), default=0.0)
    dv = max((abs(a - b) for k, (a, b) in enumerate(zip(ours, ref)) if k % 6 >= 3), default=0.0)
    if not dx <= STATE_TOL or not dv <= STATE_TOL:
        fail("%s: positions differ by up to %g, velocities by %g from the uninterrupted run's "
             "(bound %g)" % (name, dx, dv, STATE_TOL))
    else:
        note("%s: positions within %.2g, velocities within %.2g of the uninterrupted run's "
             "(bound %g)" % (name, dx, dv, STATE_TOL))


def compare_frames_close(name, frames, ref, steps):
    worst = 0.0
    for step in steps:
        if step not in frames or step not in ref:
            fail("%s: no frame of step %d" % (name, step))
            continue
        a, b = array.array("f"), array.array("f")
        a.frombytes(frames[step][1])
        b.frombytes(ref[step][1])
        if sys.byteorder != "little":
            a.byteswap()
            b.byteswap()
        if frames[step][0] != ref[step][0] or len(a) != len(b):
            fail("%s: frame of step %d: other cell or size than the reference" % (name, step))
            continue
        worst = max([worst] + [abs(x - y) for x, y in zip(a, b)])
    if not worst <= FRAME_TOL:
        fail("%s: frames differ from the reference by up to %g (bound %g)" %
             (name, worst, FRAME_TOL))
    else:
        note("%s: %d frames within %.2g of the reference (bound %g)" %
             (name, len(steps), worst, FRAME_TOL))


def scenario_ranks(r, args):
    """A checkpoint of a run on --np ranks, restarted on each of --restart-np rank counts."""
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    half = (steps // 2) // ckpt * ckpt
    extra = ["--output", args.output, "--thermo", str(every)]
    os.mkdir(os.path.join(r.workdir, "a"))
    # Its checkpoint half way is the one a run stopping there leaves (the
    # restart scenario checks that runs are deterministic), and is kept: the
    # two newest are.
    ref_out = r.mdlj("uninterrupted", common(args, steps, every, ckpt, "a/run.dcd", "a/run.ckpt")
                     + extra)
    ref_energy = thermo_lines(ref_out)
    ref = check_dcd(os.path.join(r.workdir, "a/run.dcd"), args.atoms, every, every,
                    steps // every, 0.005)
    src = ckpt_file(os.path.join(r.workdir, "a"), "run.ckpt", half, args.output)
    try:
        info, _ = parse_checkpoint(src)
    except (OSError, ValueError, struct.error) as e:
        fail("%s: no valid checkpoint to restart from: %s" % (src, e))
        return
    if info["nranks"] != args.np:
        fail("%s: written by %d ranks, expected %d" % (src, info["nranks"], args.np))
    size = os.path.getsize(src)
    for m in args.restart_np:
        d = "m%d" % m
        os.mkdir(os.path.join(r.workdir, d))
        shutil.copyfile(src, ckpt_file(os.path.join(r.workdir, d), "run.ckpt", half, args.output))
        if is_set(args.output):  # the version with its manifest
            shutil.copyfile(os.path.join(r.workdir, "a", "run.ckpt.v%d.manifest" % half),
                            os.path.join(r.workdir, d, "run.ckpt.v%d.manifest" % half))
        name = "%d -> %d ranks" % (args.np, m)
        out = r.mdlj("restart on %d ranks" % m,
                     common(args, steps, every, ckpt, d + "/run.dcd", d + "/run.ckpt") + extra
                     + ["--restart", "--dump-loaded", d + "/loaded"], np=m)
        if "(step %d)" % half not in out:
            fail("%s: the restart did not continue from step %d" % (name, half))
        if m != args.np and "written by %d ranks, this run has %d" % (args.np, m) not in out:
            fail("%s: the restart did not note the other rank count" % name)
        if args.output == "fwdio":
            # every rank asks for the header, the commit record and its share, once
            want = m * (128 + 64) + 48 * args.atoms
            line = [l for l in out.splitlines() if "restart: read through fwdio" in l]
            asked = storage = None
            if line:
                f = line[0].split()
                asked, storage = int(f[f.index("asked") - 2]), int(f[f.index("storage") - 4])
            if asked != want:
                fail("%s: bytes asked for through fwdio: %s, expected %d (a header, a commit "
                     "record and a share of the atoms per rank)" % (name, asked, want))
            elif storage is None or storage < size:
                fail("%s: readers read %s bytes from storage, less than the file's %d" %
                     (name, storage, size))
        # the loaded state, exactly
        loaded = os.path.join(r.workdir, d, "loaded")
        if "every one in its rank's region" not in out:
            fail("%s: mdlj did not confirm that each rank holds only atoms of its region" % name)
        try:
            _, want_atoms = parse_checkpoint(src)
            got_info, got_atoms = parse_checkpoint(loaded)
            if got_atoms != want_atoms:
                bad = next(k for k in range(args.atoms)
                           if got_atoms[48 * k:48 * k + 48] != want_atoms[48 * k:48 * k + 48])
                fail("%s: the loaded state differs from the checkpoint, first at atom %d" %
                     (name, bad))
            elif not same_file(loaded, src):
                fail("%s: the loaded atoms equal the checkpoint's but the file does not" % name)
            else:
                note("%s: the state loaded on %d ranks, gathered by id, is the checkpoint's "
                     "byte for byte" % (name, m))
        except (OSError, ValueError, struct.error) as e:
            fail("%s: %s: %s" % (name, loaded, e))
        # the continued run
        energy = thermo_lines(out)
        compared = [s for s in sorted(ref_energy) if s >= half]
        if sorted(energy) != compared:
            fail("%s: energies printed at steps %s, expected %s" % (name, sorted(energy),
                                                                    compared))
        worst = 0.0
        for step in compared:
            if step not in energy:
                continue
            if m == args.np and energy[step] != ref_energy[step]:
                fail("%s: step %d: energies %s, uninterrupted run %s" %
                     (name, step, energy[step], ref_energy[step]))
            diff = max(abs(float(a) - float(b)) for a, b in zip(energy[step], ref_energy[step]))
            worst = max(worst, diff)
        if not worst <= ENERGY_TOL:
            fail("%s: energies differ from the uninterrupted run's by up to %g per atom "
                 "(bound %g)" % (name, worst, ENERGY_TOL))
        else:
            note("%s: energies at steps %s within %g of the uninterrupted run's (bound %g)" %
                 (name, ", ".join(map(str, compared)), worst, ENERGY_TOL))
        frames = check_dcd(os.path.join(r.workdir, d, "run.dcd"), args.atoms, half + every,
                           every, (steps - half) // every, 0.005)
        after = list(range(half + every, steps + 1, every))
        a_last = ckpt_file(os.path.join(r.workdir, "a"), "run.ckpt", steps, args.output)
        m_last = ckpt_file(os.path.join(r.workdir, d), "run.ckpt", steps, args.output)
        if m == args.np:
            compare_frames(name, frames, ref, after)
            if not (os.path.exists(a_last) and os.path.exists(m_last)
                    and same_file(a_last, m_last)):
                fail("%s: final checkpoints %s and %s differ" % (name, a_last, m_last))
            else:
                note("%s: final checkpoint identical to the uninterrupted run's" % name)
        else:
            compare_frames_close(name, frames, ref, after)
            check_close(name + ": final checkpoint", a_last, m_last)


def mdanalysis_frames(path):
    """MDAnalysis's frame count and positions of `path`, or None without MDAnalysis."""
    try:
        import warnings
        warnings.simplefilter("ignore")
        import MDAnalysis
    except ImportError:
        return None
    u = MDAnalysis.Universe(path)
    return [ts.positions.copy() for ts in u.trajectory]


def scenario_killed(r, args):
    """Runs killed with SIGKILL at random moments: the DCD holds whole frames only, its
    header counts them, MDAnalysis reads exactly those, and a restart continues it into
    the uninterrupted run's file."""
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    os.mkdir(os.path.join(r.workdir, "ref"))
    r.mdlj("uninterrupted", common(args, steps, every, ckpt, "ref/run.dcd", "ref/run.ckpt"))
    ref_path = os.path.join(r.workdir, "ref/run.dcd")
    ref = check_dcd(ref_path, args.atoms, every, every, steps // every, 0.005)
    rng = random.Random(args.seed)
    for attempt in range(args.kills):
        d = "k%d" % attempt
        os.mkdir(os.path.join(r.workdir, d))
        delay = rng.uniform(args.kill_after[0], args.kill_after[1])
        opts = common(args, steps, every, ckpt, d + "/run.dcd", d + "/run.ckpt")
        r.mdlj_killed("killed after %.2f s" % delay, opts, delay)
        path = os.path.join(r.workdir, d, "run.dcd")
        if not os.path.exists(path):
            note("%s: killed before the trajectory was created" % d)
            continue
        try:
            hdr, frames = parse_dcd(path, partial_tail=True)
        except (OSError, ValueError, struct.error) as e:
            size = os.path.getsize(path)
            with open(path, "rb") as fh:
                unwritten = fh.read() == bytes(size)
            # The header is the stream's first step: 276 bytes. A kill before
            # its bytes land leaves less, or (its writer had already set the
            # file's size) exactly that many zeros; anything else is torn.
            if size < 276 or (size == 276 and unwritten):
                note("%s: killed before the first header was written (%d bytes%s)" %
                     (d, size, ", all zero" if size and unwritten else ""))
                continue
            fail("%s: the killed run left an invalid DCD: %s" % (path, e))
            continue
        n = hdr["nset"]
        for step, cell, coords in frames:
            if ref[step][1] != coords:
                fail("%s: frame of step %d differs from the uninterrupted run's" % (path, step))
        # MDAnalysis refuses a DCD whose header counts no frame ("opened empty
        # file"), which a kill between the header and the first frame leaves
        mda = mdanalysis_frames(path) if n > 0 else None
        if mda is not None:
            if len(mda) != n:
                fail("%s: MDAnalysis reads %d frames, the header counts %d" % (path, len(mda), n))
            import numpy
            for k, pos in enumerate(mda[:n]):
                xyz = numpy.frombuffer(frames[k][2], dtype="<f4").reshape(3, args.atoms).T
                if not numpy.array_equal(pos, xyz):
                    fail("%s: MDAnalysis frame %d differs from the file's bytes" % (path, k))
        note("%s: killed after %.2f s: %d whole frames, %d more bytes; MDAnalysis reads %s" %
             (d, delay, n, os.path.getsize(path) - 276 - n * (56 + 3 * (8 + 4 * args.atoms)),
              "n/a" if mda is None else len(mda)))
        reach = (n + 1) * every - 1  # the newest checkpoint the frames reach
        valid = []
        for s in checkpoint_steps(os.path.join(r.workdir, d), "run.ckpt"):
            try:  # whole, with its commit record (one in flight at the kill is not)
                parse_checkpoint(ckpt_file(os.path.join(r.workdir, d), "run.ckpt", s))
                check_manifest(os.path.join(r.workdir, d), "run.ckpt", s)
                valid.append(s)
            except (OSError, ValueError, struct.error):
                pass
        usable = [s for s in valid if s <= reach]
        if not valid:
            note("%s: no whole checkpoint survived: nothing to restart from" % d)
            continue
        if not usable:
            note("%s: no checkpoint of step %d or earlier (the frames reach no further): "
                 "nothing to continue from" % (d, reach))
            out = r.mdlj("restart " + d + " (refused)", opts + ["--restart"], expect_rc=None)
            if "which the trajectory being continued reaches" not in out:
                fail("%s: the refused restart did not say why" % d)
            continue
        r.mdlj("restart " + d, opts + ["--restart"])
        if not same_file(ref_path, path):
            fail("%s: after the restart the trajectory differs from the uninterrupted run's" %
                 path)
        else:
            note("%s: the restart continued it into the uninterrupted run's file" % d)


def scenario_modes(r, args):
    steps, every, ckpt = args.steps, args.every, args.checkpoint_every
    for mode in ("fwdio", "mpiio", "serial", "mpiio-async", "local-copy", "fwdio-tier", "none"):
        os.mkdir(os.path.join(r.workdir, mode))
        output = "fwdio" if mode == "fwdio-tier" else mode
        extra = ["--output", output] + (["--verify"] if mode != "none" else [])
        if mode in ("local-copy", "fwdio-tier"):
            local = os.path.join(r.workdir, "node-local-%h")
            extra += ["--local-dir", local]
        r.mdlj(mode, common(args, steps, every, ckpt, mode + "/run.dcd", mode + "/run.ckpt")
               + extra)
    if os.listdir(os.path.join(r.workdir, "none")):
        fail("--output none wrote %s" % os.listdir(os.path.join(r.workdir, "none")))
    check_dcd(os.path.join(r.workdir, "fwdio/run.dcd"), args.atoms, every, every,
              steps // every, 0.005)
    # fwdio's checkpoints are versions of a set (data and manifest), the
    # others' files <base>.<step>: the same steps, the same data bytes
    fw_dir = os.path.join(r.workdir, "fwdio")
    fw_steps = checkpoint_steps(fw_dir, "run.ckpt")
    names = sorted(os.listdir(fw_dir))
    want_names = sorted(["run.dcd"] + ["run.ckpt.v%d.%s" % (k, x) for k in fw_steps
                                       for x in ("ckpt", "manifest")])
    if names != want_names:
        fail("fwdio wrote %s, expected %s" % (names, want_names))
    for step in fw_steps:
        try:
            check_manifest(fw_dir, "run.ckpt", step)
        except (OSError, ValueError) as e:
            fail(str(e))
    for mode in ("mpiio", "serial", "mpiio-async", "local-copy", "fwdio-tier"):
        output = "fwdio" if mode == "fwdio-tier" else mode
        d = os.path.join(r.workdir, mode)
        other = sorted(os.listdir(d))
        want = names if is_set(output) else sorted(
            ["run.dcd"] + ["run.ckpt.%d" % k for k in fw_steps])
        if other != want:
            fail("%s wrote %s, expected %s (fwdio wrote %s)" % (mode, other, want, names))
            continue
        pairs = [("run.dcd", "run.dcd")] + [
            (os.path.basename(ckpt_file(d, "run.ckpt", k, output)),
             os.path.basename(ckpt_file(fw_dir, "run.ckpt", k))) for k in fw_steps]
        if is_set(output):  # the manifests too: same bytes, same CRC-32
            pairs += [("run.ckpt.v%d.manifest" % k,) * 2 for k in fw_steps]
        for name, fw_name in pairs:
            if not same_file(os.path.join(fw_dir, fw_name), os.path.join(d, name)):
                fail("%s/%s differs from fwdio/%s" % (mode, name, fw_name))
        note("%s: %s identical to fwdio's" % (mode, ", ".join(n for n, _ in pairs)))
    # local-copy removes each rank's local part once it is in the file;
    # fwdio's tier keeps each local file for a restart once drained, its
    # version record ("<local file>.ver", FWDIOLV1) saying drained
    files = [os.path.join(d, f) for d in glob.glob(os.path.join(r.workdir, "node-local-*"))
             for f in os.listdir(d)]
    tier = [f for f in files if f.endswith(".fwdio-local")]
    left = [f for f in files if f not in tier and not (f.endswith(".fwdio-local.ver") and
                                                       f[:-4] in tier)]
    if left:
        fail("local-copy left its local parts behind: %s" % left)
    for f in tier:
        try:
            with open(f + ".ver", "rb") as v:
                rec = v.read()
        except OSError:
            rec = b""
        if len(rec) != 128 or rec[:8] != b"FWDIOLV1" or not rec[20] & 1:
            fail("fwdio's tier kept %s without a drained version record" % f)


def scenario_mdanalysis(r, args):
    import warnings
    warnings.simplefilter("ignore")
    import MDAnalysis
    import numpy
    steps, every = args.steps, args.every
    r.mdlj("run", common(args, steps, every, 0, "run.dcd", "run.ckpt"))
    path = os.path.join(r.workdir, "run.dcd")
    ours = check_dcd(path, args.atoms, every, every, steps // every, 0.005)
    u = MDAnalysis.Universe(path)
    if u.atoms.n_atoms != args.atoms or u.trajectory.n_frames != steps // every:
        fail("MDAnalysis reads %d atoms and %d frames, expected %d and %d" %
             (u.atoms.n_atoms, u.trajectory.n_frames, args.atoms, steps // every))
    for ts, step in zip(u.trajectory, sorted(ours)):
        cell, coords = ours[step]
        xyz = numpy.frombuffer(coords, dtype="<f4").reshape(3, args.atoms).T
        if not numpy.array_equal(ts.positions, xyz):
            fail("MDAnalysis frame %d: positions differ from the DCD's bytes" % ts.frame)
        want = numpy.array([cell[0], cell[0], cell[0], 90.0, 90.0, 90.0], dtype=numpy.float32)
        if not numpy.allclose(ts.dimensions, want):
            fail("MDAnalysis frame %d: box %r, expected %r" % (ts.frame, ts.dimensions, want))
    note("MDAnalysis %s reads %d atoms, %d frames, box %s" %
         (MDAnalysis.__version__, u.atoms.n_atoms, u.trajectory.n_frames,
          numpy.array2string(u.trajectory.ts.dimensions, precision=4)))


SCENARIOS = {"verify": scenario_verify, "restart": scenario_restart, "torn": scenario_torn,
             "crash": scenario_crash, "modes": scenario_modes, "mdanalysis": scenario_mdanalysis,
             "continue": scenario_continue, "killed": scenario_killed, "ranks": scenario_ranks}


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--mdlj", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, default=8)
    ap.add_argument("--atoms", type=int, default=50000)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--checkpoint-every", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--kills", type=int, default=3, help="killed: runs to kill")
    ap.add_argument("--kill-after", type=float, nargs=2, default=[0.5, 2.5],
                    help="killed: the kill comes this many seconds after the start (range)")
    ap.add_argument("--seed", type=int, default=1, help="killed: seed of the kill moments")
    ap.add_argument("--restart-np", type=int, nargs="+", default=[3, 5, 8],
                    help="ranks: the rank counts to restart on")
    ap.add_argument("--output", default="fwdio", help="ranks: mdlj's --output mode")
    args = ap.parse_args(argv)
    args.mpiexec_args = extra
    workdir = tempfile.mkdtemp(prefix="mdlj-%s-" % args.scenario,
                               dir=os.environ.get("TMPDIR") or "/tmp")
    try:
        SCENARIOS[args.scenario](Runner(args, workdir), args)
    except TimeoutError as e:
        fail(str(e))
    if failures:
        print("mdlj_check %s: %d check(s) failed; files kept in %s" %
              (args.scenario, len(failures), workdir))
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    print("mdlj_check %s: all checks passed" % args.scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main())
