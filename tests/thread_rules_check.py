#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The threading rules are checked where they are promised (ctest thread_rules).

    thread_rules_check.py [--list] [ROOT]   (default: the checkout holding it)

Reads the C sources of runtime/, forwarder/ and mpiio/ (subfolders too) and
checks that every function bound by a threading rule starts with the
assertion of that rule (docs/ARCHITECTURE.md, "Who owns what"):

  - a function whose name ends in `_locked` starts with
    FWDIOI_ASSERT_LOCKED(rt) (the runtime lock, runtime/runtime.h) or
    FWDIOI_ASSERT_HELD(&mutex) (another mutex, runtime/util/lock_check.h);
  - a progress-thread function starts with FWDIOI_ASSERT_PROGRESS(). A
    function is one when
      * the comment right before its declaration in a header, or before its
        definition or prototype in a .c file, says "(progress thread)"; or
      * it is handed to the runtime as a progress-thread callback: the `cb`
        of fwdioi_rt_track, the `done` of fwdioi_session_agree,
        fwdioi_session_agree_status and fwdioi_session_scan_appends, the
        `on_done` of fwdioi_storage_job_new, a task's `run`
        (`<...>task.run = fn`), an I/O job's `done` (`io.done = fn`), the
        client's poll hook (fwdioi_client_t), or a libevent callback
        (event_new, evtimer_new).
    A function that is handed over so but legitimately runs on another
    thread as well says "(any thread)" in that comment, and why; it is then
    not checked (a marked "(progress thread)" one cannot be excused so).
    Conversely, a function that asserts the progress thread must be one of
    these, so that the rule can be read where the function is declared.

"Starts with" means the first statements of its body: a run of
FWDIOI_ASSERT_* statements at the top must hold the ones required.
Prints every offender as FILE:LINE: NAME: what is missing (with --list,
every function bound by a rule first). Finding no function of either kind
is a failure too (the sources moved, or the parser lost its way). Exit
status 0 when there is no offender, 1 otherwise.
"""
import bisect
import os
import re
import sys

DIRS = ("runtime", "forwarder", "mpiio")
MARK = "(progress thread)"
EXCUSE = "(any thread)"
ASSERT_PROGRESS = re.compile(r"^FWDIOI_ASSERT_PROGRESS\s*\(\s*\)$")
ASSERT_LOCK = re.compile(r"^FWDIOI_ASSERT_(LOCKED|HELD)\s*\(.+\)$", re.S)
ANY_ASSERT = re.compile(r"^FWDIOI_ASSERT_\w+\s*\(.*\)$", re.S)

# Functions that take a progress-thread callback: name -> argument index
# (negative: from the end).
CALLBACK_ARGS = {
    "fwdioi_rt_track": 2,
    "fwdioi_session_agree": -1,
    "fwdioi_session_agree_status": -1,
    "fwdioi_session_scan_appends": -1,
    "fwdioi_storage_job_new": 2,
    "event_new": 3,
    "evtimer_new": 1,
}
# Assignments of a progress-thread callback: a task's run, an I/O job's
# done, and the client's poll hook (the first member of fwdioi_client_t).
CALLBACK_ASSIGN = re.compile(
    r"(?:\b\w*task\s*\.\s*run\s*=|\bio\s*\.\s*done\s*=|\.\s*poll\s*=|"
    r"\bfwdioi_client_t\s+\w+\s*=\s*\{)\s*(\w+)\s*[;,}]")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case"}


def blank(text):
    """The text with comments, literals and preprocessor lines blanked (newlines
    kept, so offsets and lines stay), and the comments as (start, end, text)."""
    out = list(text)
    comments = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in "# \t" and text[i:i + 200].lstrip(" \t").startswith("#"):
            j = i
            while j < n:  # the directive with its continuation lines
                k = text.find("\n", j)
                if k < 0:
                    k = n
                if k > j and text[k - 1] == "\\":
                    j = k + 1
                    continue
                j = k
                break
            for p in range(i, j):
                if out[p] != "\n":
                    out[p] = " "
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            comments.append((i, j, text[i:j]))
            for p in range(i, j):
                if out[p] != "\n":
                    out[p] = " "
            i = j
            line_start = False
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((i, j, text[i:j]))
            for p in range(i, j):
                out[p] = " "
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for p in range(i + 1, min(j, n)):
                if out[p] != "\n":
                    out[p] = " "
            i = j + 1
            line_start = False
            continue
        if c == "\n":
            line_start = True
        elif c not in " \t":
            line_start = False
        i += 1
    return "".join(out), comments


def split_args(code, open_paren):
    """The arguments of the call whose '(' is at open_paren, stripped."""
    depth, args, start = 0, [], open_paren + 1
    for i in range(open_paren, len(code)):
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(code[start:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(code[start:i].strip())
            start = i + 1
    return args


def leading_statements(body):
    """The statements at the top of a body (up to the first non-assertion)."""
    stmts, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            s = " ".join(body[start:i].split())
            stmts.append(s)
            if not ANY_ASSERT.match(s):
                break
            start = i + 1
    return stmts


class Source:
    def __init__(self, root, rel):
        self.rel = rel
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            self.text = fh.read()
        self.code, self.comments = blank(self.text)
        # where each line starts, for the line of an offset
        self.starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        # (key, offset of the name, comment text or "") and, for definitions,
        # the body; a key is (file, name) for a static function, else
        # (None, name)
        self.decls = []
        self.defs = []
        self.parse()

    def line(self, off):
        return bisect.bisect_right(self.starts, off)

    def comment_before(self, off):
        """The comment that ends right before offset off (only blanks between)."""
        best = ""
        for start, end, text in self.comments:
            if end <= off and self.text[end:off].strip() == "":
                best = text
            elif start >= off:
                break
        # one line: the marker may be broken over two
        lines = (re.sub(r"^\s*\*+(?!/)", "", l) for l in best.split("\n"))
        return re.sub(r"\s+", " ", " ".join(lines))

    def head_name(self, head, head_off):
        """(name, offset) of the function a top-level head declares, or None."""
        h = head.rstrip()
        if not h.endswith(")") or "=" in h or re.match(r"\s*typedef\b", h):
            return None
        depth = 0
        for i in range(len(h) - 1, -1, -1):
            if h[i] == ")":
                depth += 1
            elif h[i] == "(":
                depth -= 1
                if depth == 0:
                    m = re.search(r"(\w+)\s*$", h[:i])
                    if (not m or m.group(1) in KEYWORDS
                            or re.search(r"\(\s*\*?\s*$", h[:m.start()])):
                        return None  # not a name, or a function pointer
                    return m.group(1), head_off + m.start(1)
        return None

    def parse(self):
        code = self.code
        depth, head_start, i, n = 0, 0, 0, len(code)
        while i < n:
            c = code[i]
            if depth == 0 and c == ";":
                named = self.head_name(code[head_start:i], head_start)
                if named:
                    first = head_start + len(code[head_start:i]) - len(code[head_start:i].lstrip())
                    self.decls.append((self.key(named[0], code[head_start:i]), named[1],
                                       self.comment_before(first)))
                head_start = i + 1
            elif c == "{":
                if depth == 0:
                    head = code[head_start:i]
                    named = self.head_name(head, head_start)
                    close = self.matching_brace(i)
                    if named:
                        first = head_start + len(head) - len(head.lstrip())
                        self.defs.append((self.key(named[0], head), named[1],
                                          self.comment_before(first), code[i + 1:close]))
                        i = close
                        head_start = close + 1
                        i += 1
                        continue
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    head_start = i + 1
            i += 1

    def key(self, name, head):
        return (self.rel if re.search(r"\bstatic\b", head) else None, name)

    def matching_brace(self, open_brace):
        depth = 0
        for i in range(open_brace, len(self.code)):
            if self.code[i] == "{":
                depth += 1
            elif self.code[i] == "}":
                depth -= 1
                if depth == 0:
                    return i
        return len(self.code)

    def callbacks(self):
        """Names handed to the runtime as progress-thread callbacks here (a
        static function of this file, or any other)."""
        found = set()
        for m in re.finditer(r"\b(" + "|".join(CALLBACK_ARGS) + r")\s*\(", self.code):
            if self.code[max(0, m.start() - 40):m.start()].rstrip().endswith(("void", "*")):
                continue  # a declaration, not a call
            args = split_args(self.code, m.end() - 1)
            k = CALLBACK_ARGS[m.group(1)]
            if -len(args) <= k < len(args) and re.fullmatch(r"\w+", args[k]):
                found.add(args[k])
        for m in CALLBACK_ASSIGN.finditer(self.code):
            found.add(m.group(1))
        statics = {k[1] for k, *_ in self.decls + self.defs if k[0]}
        return {(self.rel if name in statics else None, name) for name in found}


def sources(root):
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def main():
    args = [a for a in sys.argv[1:] if a != "--list"]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    srcs = [Source(root, rel) for rel in sorted(sources(root))]

    marked, excused, callbacks = {}, set(), {}
    for s in srcs:
        for key, off, comment, *_ in s.decls + s.defs:
            if MARK in comment:
                marked.setdefault(key, "%s:%d" % (s.rel, s.line(off)))
            if EXCUSE in comment:
                excused.add(key)
        for key in s.callbacks():
            callbacks.setdefault(key, s.rel)

    listing = "--list" in sys.argv[1:]
    offenders, nlocked, nprogress = [], 0, 0
    for s in srcs:
        for key, off, comment, body in s.defs:
            name = key[1]
            where = "%s:%d" % (s.rel, s.line(off))
            stmts = leading_statements(body)
            asserts = [x for x in stmts if ANY_ASSERT.match(x)]
            if name.endswith("_locked"):
                nlocked += 1
                if not any(ASSERT_LOCK.match(x) for x in asserts):
                    offenders.append("%s: %s: does not start with FWDIOI_ASSERT_LOCKED(rt) or "
                                     "FWDIOI_ASSERT_HELD(&lock)" % (where, name))
            why = None
            if key in marked:
                why = "marked %s at %s" % (MARK, marked[key])
            elif key in callbacks and key not in excused:
                why = "a progress-thread callback, handed over in %s" % callbacks[key]
            if listing and (why or name.endswith("_locked")):
                print("%s: %s: %s" % (where, name, why or "_locked"))
            asserts_progress = any(ASSERT_PROGRESS.match(x) for x in asserts)
            if why:
                nprogress += 1
                if not asserts_progress:
                    offenders.append("%s: %s: does not start with FWDIOI_ASSERT_PROGRESS() (%s)"
                                     % (where, name, why))
            elif asserts_progress or "FWDIOI_ASSERT_PROGRESS" in body:
                # one marking, so that the rule can be read where it is declared
                offenders.append("%s: %s: asserts the progress thread, but its declaration's "
                                 "comment does not say %s" % (where, name, MARK))
    for key in sorted(excused & set(marked), key=str):
        offenders.append("%s: %s: marked both %s and %s" % (marked[key], key[1], MARK, EXCUSE))
    if nlocked == 0 or nprogress == 0:
        # the library has both kinds: finding none means this parser lost its way
        offenders.append("%s: found %d _locked and %d progress-thread functions: the sources "
                         "are not where this check looks, or it no longer parses them" %
                         (root, nlocked, nprogress))

    for o in offenders:
        print(o)
    if offenders:
        print("thread_rules_check: %d offender(s); see docs/ARCHITECTURE.md, \"Who owns what\"" %
              len(offenders))
        return 1
    print("thread_rules_check: %d _locked and %d progress-thread functions assert their rule" %
          (nlocked, nprogress))
    return 0


if __name__ == "__main__":
    sys.exit(main())
