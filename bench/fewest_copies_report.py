#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Issue 13's target table from fwdio-bench CSVs of the compute variant.

    fewest_copies_report.py NAME=RUN.csv[,BEFORE.csv] ... [--idle NAME=FILE ...]

Each RUN.csv is one fwdio-bench run with the modes memcpy, none, fwdio, lent,
independent, mpiio and iwrite; BEFORE.csv (optional) the fwdio mode of the
build before the issue, run right after with the same arguments. For every
fwdio and lent configuration it prints, as medians [min, max] over the
repetitions of ratios paired rep by rep:

  - copies per output byte (fwdio's own count),
  - CPU s per output GiB over the cheapest peer's of the same rep
    (independent, write_at_all; the whole job, less the compute-only run),
  - time-to-solution overhead over the best peer's of the same rep
    (independent, write_at_all, iwrite_at_all), and the overheads themselves,
  - blocked per step over one memcpy of the rank's bytes.

A ratio of overheads is only as steady as the smaller overhead: where the best
peer's is a few percent, a point of noise moves the ratio by tens of percent;
the overheads are printed beside it for that reason.
"""
import csv
import statistics
import sys

PEERS_OVERHEAD = ("independent", "mpiio", "iwrite")
PEERS_CPU = ("independent", "mpiio")


def spread(v):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    return "%.2f [%.2f, %.2f]" % (statistics.median(v), min(v), max(v))


def load(path):
    reps = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["status"] != "0":
                continue
            reps.setdefault(int(row["rep"]), {})[row["config"]] = row
    return reps


def num(row, key):
    v = row.get(key, "")
    return float(v) if v not in ("", None) else None


def best(rep, modes, key):
    vals = [num(r, key) for c, r in rep.items() if r["mode"] in modes]
    vals = [v for v in vals if v is not None]
    return min(vals) if vals else None


def report(name, path, before):
    reps = load(path)
    configs = sorted({c for rep in reps.values() for c, r in rep.items()
                      if r["mode"] in ("fwdio", "lent")})
    print("### %s (%d reps)\n" % (name, len(reps)))
    print("| config | copies/byte | CPU s/GiB | CPU / cheapest peer | overhead % "
          "| best peer's overhead % | overhead / best peer | blocked / memcpy |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for c in configs:
        cols = {k: [] for k in ("copies", "cpu", "cpu_ratio", "ovh", "peer", "ovh_ratio",
                                "blocked")}
        for rep in reps.values():
            r = rep.get(c)
            if not r:
                continue
            cols["copies"].append(num(r, "copies_per_byte"))
            cpu = num(r, "cpu_s_per_gib")
            cols["cpu"].append(cpu)
            cheapest = best(rep, PEERS_CPU, "cpu_s_per_gib")
            if cpu is not None and cheapest:
                cols["cpu_ratio"].append(cpu / cheapest)
            ovh = num(r, "overhead")
            peer = best(rep, PEERS_OVERHEAD, "overhead")
            if ovh is not None:
                cols["ovh"].append(100 * ovh)
            if peer is not None:
                cols["peer"].append(100 * peer)
            if ovh is not None and peer and peer > 0:
                cols["ovh_ratio"].append(ovh / peer)
            mem = rep.get("memcpy")
            if mem and num(mem, "blocked_s"):
                cols["blocked"].append(num(r, "blocked_s") / num(mem, "blocked_s"))
        print("| %s | %s |" % (c, " | ".join(spread(cols[k]) for k in (
            "copies", "cpu", "cpu_ratio", "ovh", "peer", "ovh_ratio", "blocked"))))
    peers = sorted({c for rep in reps.values() for c, r in rep.items()
                    if r["mode"] in PEERS_OVERHEAD})
    for c in peers:
        ovh = [100 * num(rep[c], "overhead") for rep in reps.values()
               if c in rep and num(rep[c], "overhead") is not None]
        cpu = [num(rep[c], "cpu_s_per_gib") for rep in reps.values() if c in rep]
        print("| %s (peer) | - | %s | - | %s | - | - | - |" % (c, spread(cpu), spread(ovh)))
    if before:
        breps = load(before)
        for c in sorted({c for rep in breps.values() for c, r in rep.items()
                         if r["mode"] == "fwdio"}):
            ovh = [100 * num(rep[c], "overhead") for rep in breps.values()
                   if c in rep and num(rep[c], "overhead") is not None]
            cpu = [num(rep[c], "cpu_s_per_gib") for rep in breps.values() if c in rep]
            print("| %s, before (9324503, its own run) | - | %s | - | %s | - | - | - |" % (
                c, spread(cpu), spread(ovh)))
    print()


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    for a in args:
        name, _, files = a.partition("=")
        run, _, before = files.partition(",")
        report(name, run, before or None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
