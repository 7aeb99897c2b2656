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
  fwdio-timeline.svg  rows = ranks x threads (app, progress, mpi, io), one
                    coloured box per event kind, time in ms.
  fwdio-timeline.png  the same drawing through gnuplot, if gnuplot is installed.
Only the Python standard library is used.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

# Event kinds: (kind, colour, names). The legend follows this order.
KINDS = [
    ("write call", "#4e79a7", {"write", "try_write", "write_lent"}),
    ("send", "#f28e2b", {"send"}),
    ("recv", "#e15759", {"recv"}),
    ("assembly", "#76b7b2", {"assemble"}),
    ("pwrite", "#59a14f", {"pwrite"}),
    ("fdatasync", "#b07aa1", {"fdatasync"}),
    ("wait", "#bab0ac", {"wait", "finalize", "poll"}),
    ("callback", "#edc948", {"ready callback", "complete callback", "lent callback"}),
    ("agreement", "#9c755f", {"agree open", "agree close", "agree final", "comm dup"}),
    ("open/close", "#ff9da7", {"open", "close", "file open", "file close"}),
]
KIND_OF = {name: i for i, (_, _, names) in enumerate(KINDS) for name in names}
OTHER = ("other", "#333333")
IN_FLIGHT = {"send", "recv", "agree open", "agree close", "agree final", "comm dup"}
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


def span_ms(rows):
    end = max((e["ts"] + e["dur"] for _, _, _, evs in rows for e in evs), default=1.0)
    return max(end / 1000.0, 1e-3)


def nice_step(span, ticks=10):
    raw = span / ticks
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def kind_of(name):
    i = KIND_OF.get(name)
    return (KINDS[i][0], KINDS[i][1]) if i is not None else OTHER


def draw_svg(rows, path, title, width):
    left, right, top, row_h, gap = 150, 20, 50, 22, 4
    legend_h = 40
    height = top + len(rows) * (row_h + gap) + 40 + legend_h
    plot_w = width - left - right
    span = span_ms(rows)
    x = lambda ms: left + plot_w * ms / span
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14">%s</text>' % (left, escape(title))]
    step = nice_step(span)
    axis_y = top + len(rows) * (row_h + gap)
    t = 0.0
    while t <= span * 1.0001:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (x(t), top - 5, x(t), axis_y))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x(t), axis_y + 14, t))
        t += step
    out.append('<text x="%d" y="%d" text-anchor="middle">time (ms)</text>'
               % (left + plot_w // 2, axis_y + 30))
    for i, (pid, role, _, evs) in enumerate(rows):
        y = top + i * (row_h + gap)
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>'
                   % (left - 6, y + row_h - 6, escape(row_label(pid, role))))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#f7f7f7"/>'
                   % (left, y, plot_w, row_h))
        opacity = 0.35 if role == "mpi" else 1.0
        # Longest first, so shorter (nested) events stay visible on top.
        for e in sorted(evs, key=lambda e: -e["dur"]):
            kind, colour = kind_of(e["name"])
            x0 = x(e["ts"] / 1000.0)
            w = max(x(( e["ts"] + e["dur"]) / 1000.0) - x0, 0.6)
            tip = "%s %.3f ms %s" % (e["name"], e["dur"] / 1000.0,
                                     " ".join("%s=%s" % kv for kv in e.get("args", {}).items()))
            out.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" '
                       'fill-opacity="%.2f"><title>%s</title></rect>'
                       % (x0, y + 2, w, row_h - 4, colour, opacity, escape(tip)))
    lx, ly = left, axis_y + 45
    for kind, colour, _ in KINDS:
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, ly, colour))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 16, ly + 10, kind))
        lx += 30 + 7 * len(kind)
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def escape(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def draw_png(rows, path, title, width):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return False
    span = span_ms(rows)
    n = len(rows)
    data = path + ".dat"
    with open(data, "w") as f:
        # Blocks per kind (index k): x_centre y_centre half_width half_height.
        for k, (kind, colour, _) in enumerate(KINDS + [OTHER + (set(),)]):
            f.write("# %s\n" % kind)
            wrote = False
            for i, (pid, role, _, evs) in enumerate(rows):
                y = n - 1 - i
                for e in sorted(evs, key=lambda e: -e["dur"]):
                    if kind_of(e["name"])[0] != kind:
                        continue
                    a = e["ts"] / 1000.0
                    b = (e["ts"] + e["dur"]) / 1000.0
                    half_h = 0.2 if role == "mpi" else 0.38
                    f.write("%.6f %.3f %.6f %.3f\n" % ((a + b) / 2, y, max((b - a) / 2, span * 3e-4),
                                                       half_h))
                    wrote = True
            if not wrote:  # gnuplot needs a point per block: one off-screen
                f.write("%.6f %.3f 0 0\n" % (-span, -10))
            f.write("\n\n")
    labels = ", ".join('"%s" %d' % (row_label(pid, role), n - 1 - i)
                       for i, (pid, role, _, _) in enumerate(rows))
    height = 120 + 24 * n
    plots = []
    # Long background spans (waits, agreements) first, so the short events
    # they contain are drawn over them.
    order = sorted(range(len(KINDS)), key=lambda k: KINDS[k][0] not in ("wait", "agreement"))
    for k in order:
        kind, colour, _ = KINDS[k]
        alpha = "solid 0.85"
        plots.append("'%s' index %d using 1:2:3:4 with boxxyerror fs %s noborder "
                     "lc rgb '%s' title '%s'" % (data, k, alpha, colour, kind))
    plots.append("'%s' index %d using 1:2:3:4 with boxxyerror fs solid noborder lc rgb '%s' "
                 "notitle" % (data, len(KINDS), OTHER[1]))
    script = "\n".join([
        "set terminal pngcairo size %d,%d font 'sans,9'" % (width, height),
        "set output '%s'" % path,
        "set title '%s'" % title.replace("'", ""),
        "set xlabel 'time (ms)'",
        "set xrange [0:%g]" % span,
        "set yrange [-0.6:%g]" % (n - 0.4),
        "set ytics (%s)" % labels,
        "set grid xtics",
        "set key outside bottom center horizontal",
        "set style fill transparent solid 0.85 noborder",
        "plot " + ", \\\n     ".join(plots),
    ])
    try:
        r = subprocess.run([gnuplot], input=script, text=True, capture_output=True)
    finally:
        os.remove(data)
    if r.returncode != 0:
        sys.stderr.write("trace_merge: gnuplot failed:\n" + r.stderr)
        return False
    return True


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
    draw_svg(rows, svg, a.title, a.width)
    png = a.png or os.path.join(a.dir, "fwdio-timeline.png")
    made_png = draw_png(rows, png, a.title, a.width)
    dropped = sum(d.get("otherData", {}).get("dropped_events", 0) for _, d in ranks)
    print("trace_merge: %d rank(s), %d events -> %s, %s%s%s" % (
        len(ranks), sum(1 for e in merged["traceEvents"] if e.get("ph") == "X"), out, svg,
        ", " + png if made_png else " (no PNG: gnuplot missing or failed)",
        "; %d events dropped at the per-thread cap" % dropped if dropped else ""))


if __name__ == "__main__":
    main()
