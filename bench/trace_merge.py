#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Merge fwdio's per-rank traces (FWDIO_TRACE=dir) into one Chrome trace and draw
a per-rank timeline.

    trace_merge.py DIR [--out FILE.json] [--svg FILE.svg] [--png FILE.png]
                       [--title TEXT] [--width PIXELS]

DIR holds fwdio-trace.<rank>.json, one per rank. Writes (defaults in DIR):
  fwdio-trace.json  every rank in one trace (pid = rank), time from 0 at the
                    earliest event; load it in https://ui.perfetto.dev or
                    chrome://tracing. MPI requests in flight (send, recv,
                    collective agreements) overlap each other, so they go to
                    extra rows "mpi in flight N" under their thread.
  fwdio-timeline.svg, fwdio-timeline.png
                    rows = ranks x threads (app, progress, mpi, io), one
                    coloured box per event kind, time in ms (matplotlib:
                    Debian's python3-matplotlib; without it only the JSON).
"""
import argparse
import glob
import json
import os
import re
import sys

# Event kinds: (kind, colour, names). The legend follows this order.
KINDS = [
    ("write call", "#4e79a7", {"write", "try_write", "write_lent"}),
    ("send", "#f28e2b", {"send"}),
    ("recv", "#e15759", {"recv", "take"}),
    ("assembly", "#76b7b2", {"assemble"}),
    ("pwrite", "#59a14f", {"pwrite"}),
    ("fdatasync", "#b07aa1", {"fdatasync"}),
    ("wait", "#bab0ac", {"wait", "wait ready", "step wait", "finalize", "poll"}),
    ("callback", "#edc948", {"ready callback", "complete callback", "lent callback"}),
    ("agreement", "#9c755f", {"agree check", "agree open", "agree close", "agree final",
                              "agree commit", "comm dup"}),
    ("open/close", "#ff9da7", {"open", "close", "step end", "file open", "file close"}),
]
KIND_OF = {name: i for i, (_, _, names) in enumerate(KINDS) for name in names}
OTHER = ("other", "#333333")
IN_FLIGHT = {"send", "recv", "agree check", "agree open", "agree close", "agree final",
             "agree commit", "comm dup"}
ROLE_ORDER = {"app": 0, "progress": 1, "mpi": 2, "io": 3}


def load(directory):
    files = sorted(glob.glob(os.path.join(directory, "fwdio-trace.*.json")),
                   key=lambda p: int(re.search(r"\.(\d+)\.json$", p).group(1))
                   if re.search(r"\.(\d+)\.json$", p) else -1)
    ranks = []
    for path in files:
        if not re.search(r"fwdio-trace\.\d+\.json$", path):
            continue  # our own merged output, or something else
        with open(path) as f:
            ranks.append((path, json.load(f)))
    if not ranks:
        sys.exit("trace_merge: no fwdio-trace.<rank>.json in %s" % directory)
    return ranks


def assign_lanes(events):
    """Greedy interval colouring: events sorted by start, each in the first lane
    free at its start. Returns [(lane, event)]."""
    ends = []
    out = []
    for e in sorted(events, key=lambda e: e["ts"]):
        for lane, end in enumerate(ends):
            if end <= e["ts"]:
                break
        else:
            lane = len(ends)
            ends.append(0)
        ends[lane] = e["ts"] + e["dur"]
        out.append((lane, e))
    return out


def merge(ranks):
    xs = [e for _, d in ranks for e in d["traceEvents"] if e.get("ph") == "X"]
    t0 = min((e["ts"] for e in xs), default=0.0)
    merged, rows, other = [], [], {}
    for path, d in ranks:
        info = d.get("otherData", {})
        pid = info.get("rank")
        other[str(pid)] = info
        names = {}
        for e in d["traceEvents"]:
            if e.get("ph") == "M":
                merged.append(e)
                if e["name"] == "thread_name":
                    names[e["tid"]] = e["args"]["name"]
        by_tid = {}
        for e in d["traceEvents"]:
            if e.get("ph") == "X":
                e = dict(e, ts=round(e["ts"] - t0, 3))
                by_tid.setdefault(e["tid"], []).append(e)
        for tid, evs in sorted(by_tid.items()):
            role = names.get(tid, "thread %d" % tid)
            runs = [e for e in evs if e["name"] not in IN_FLIGHT]
            flying = [e for e in evs if e["name"] in IN_FLIGHT]
            merged.extend(runs)
            rows.append((pid, role, tid, runs))
            if flying:
                lanes = assign_lanes(flying)
                nlanes = 1 + max(l for l, _ in lanes)
                for lane in range(nlanes):
                    ltid = 100000 + tid * 1000 + lane
                    merged.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": ltid,
                                   "args": {"name": "%s: mpi in flight %d" % (role, lane)}})
                    merged.append({"name": "thread_sort_index", "ph": "M", "pid": pid,
                                   "tid": ltid, "args": {"sort_index": 1500 + tid * 1000 + lane}})
                merged.extend(dict(e, tid=100000 + tid * 1000 + l) for l, e in lanes)
                rows.append((pid, "mpi", tid, flying))
    rows.sort(key=lambda r: (r[0], ROLE_ORDER.get(r[1], 9), r[2]))
    return {"traceEvents": merged, "displayTimeUnit": "ms",
            "otherData": {"ranks": other, "time_zero_us": t0}}, rows


def row_label(pid, role):
    return "rank %s %s" % (pid, role)


def kind_of(name):
    i = KIND_OF.get(name)
    return (KINDS[i][0], KINDS[i][1]) if i is not None else OTHER


def draw(rows, paths, title, width):
    """The timeline through matplotlib, one file per path (the format from its
    extension: .svg, .png, .pdf): rows = ranks x threads, one coloured box per
    event, time in ms from the earliest event. Returns the paths written, or
    [] (with the reason on stderr) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        sys.stderr.write("trace_merge: no timeline drawn: matplotlib is not installed "
                         "(Debian: python3-matplotlib); the merged trace opens in "
                         "https://ui.perfetto.dev\n")
        return []
    dpi = 100
    fig, ax = plt.subplots(figsize=(width / dpi, max(2.5, 0.32 * len(rows) + 1.5)), dpi=dpi)
    used = []
    for y, (_, _, _, evs) in enumerate(rows):
        boxes = {}
        for e in evs:
            kind, colour = kind_of(e["name"])
            boxes.setdefault((kind, colour), []).append((e["ts"] / 1000.0,
                                                         max(e["dur"] / 1000.0, 1e-6)))
        for (kind, colour), spans in boxes.items():
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=colour, linewidth=0)
            if (kind, colour) not in used:
                used.append((kind, colour))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([row_label(pid, role) for pid, role, _, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ms")
    ax.set_title(title)
    ax.grid(axis="x", linewidth=0.3)
    order = [k for k, _, _ in KINDS] + [OTHER[0]]
    used.sort(key=lambda kc: order.index(kc[0]))
    ax.legend(handles=[Patch(facecolor=c, label=k) for k, c in used], loc="upper center",
              bbox_to_anchor=(0.5, -0.12), ncol=min(len(used), 6), fontsize=8, frameon=False)
    fig.tight_layout()
    for path in paths:
        fig.savefig(path)
    plt.close(fig)
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--out")
    ap.add_argument("--svg")
    ap.add_argument("--png")
    ap.add_argument("--title", default="fwdio timeline")
    ap.add_argument("--width", type=int, default=1400)
    a = ap.parse_args()
    ranks = load(a.dir)
    merged, rows = merge(ranks)
    out = a.out or os.path.join(a.dir, "fwdio-trace.json")
    with open(out, "w") as f:
        json.dump(merged, f)
    svg = a.svg or os.path.join(a.dir, "fwdio-timeline.svg")
    png = a.png or os.path.join(a.dir, "fwdio-timeline.png")
    drawn = draw(rows, [svg, png], a.title, a.width)
    dropped = sum(d.get("otherData", {}).get("dropped_events", 0) for _, d in ranks)
    print("trace_merge: %d rank(s), %d events -> %s%s%s" % (
        len(ranks), sum(1 for e in merged["traceEvents"] if e.get("ph") == "X"), out,
        ", " + ", ".join(drawn) if drawn else " (no timeline drawn: see above)",
        "; %d events dropped at the per-thread cap" % dropped if dropped else ""))


if __name__ == "__main__":
    main()
