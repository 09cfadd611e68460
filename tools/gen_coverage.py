#!/usr/bin/env python3
"""Generation coverage on the CPU: does each op generate and compile? (issue 13's benchmark)

    python3 tools/gen_coverage.py OP.py|FOLDER ... [--egg-gen build/generator/egg-gen]
        [--every N] [--offset K] [-j 1] [--timeout 900] [--jsonl rows.jsonl] [--markdown f.md]

Runs `egg-gen generate <op> --arch sm_90 --out <tmp>/<op> --no-verify --no-cache` for each op
(builtin backend; with no GPU the first candidate in the expert order that compiles is emitted
unverified) under a per-op time limit, and records per op its outcome:

    ok              generated and compiled (egg-gen exit 0)
    user_error      egg-gen exit 1: the op is outside what the backend implements, or op.py is bad
    no_candidate    egg-gen exit 1 with "no candidate passed": every candidate failed its checks
    internal_error  egg-gen exit 2 (a bug in EGG), a crash or a signal
    timeout         the per-op time limit ran out (the whole process group is killed)

with the first line of the message and a failure class (CLASSES below: unsupported op X, tracing
error, nvcc compile error, planner cannot implement, ...). Rows are JSON lines (written as each op
ends, so a killed run keeps them); the Markdown summary counts outcomes per level (the op's folder)
and failures by class. `--every N --offset K` takes every N-th op of each folder (sorted by the
number KernelBench names start with, then by name), for a repeatable sample."""
import argparse
import concurrent.futures
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

# (outcome it applies to, regex over the error text, class; {1} etc. name the regex's groups).
# The first match wins; a failure that matches none is classed by its outcome alone.
CLASSES = [
    ("no_candidate", r"compile_error", "no candidate passed: nvcc compile error"),
    ("no_candidate", r"source_check|forbidden", "no candidate passed: source check"),
    ("no_candidate", r"the backend proposed none", "no candidate passed: none proposed"),
    ("no_candidate", r"", "no candidate passed: other"),
    (None, r"forward input \d+ is \w+, not a tensor", "frontend: non-tensor forward input"),
    (None, r"cannot be traced|torch\.export|tracing|trace", "tracing error"),
    (None, r"timed out|time limit", "time limit inside egg-gen"),
    (None, r"float64|int64|dtype|bool tensor", "unsupported dtype"),
    (None, r"the builtin backend cannot generate a kernel for `?([\w.]+)`?", "unsupported op {1}"),
    (None, r"no family implements `?([\w.]+)`?", "unsupported op {1}"),
    (None, r"(?:op|function|method) `([\w.]+)` is not supported", "unsupported op {1}"),
    (None, r"no builtin family implements", "planner cannot implement"),
    (None, r"cannot implement|does not implement|not supported|unsupported", "planner cannot implement"),
]


def op_number(name):
    m = re.match(r"(\d+)_", name)
    return (int(m.group(1)) if m else sys.maxsize, name)


def collect(paths, every, offset):
    """op.py files of `paths` (a folder's *.py files, sorted; every N-th from `offset`)."""
    ops = []
    for p in paths:
        if os.path.isdir(p):
            names = sorted((n for n in os.listdir(p) if n.endswith(".py") and not n.startswith("_")),
                           key=op_number)
            ops += [os.path.join(p, n) for n in names[offset::every]]
        elif os.path.isfile(p):
            ops.append(p)
        else:
            raise SystemExit(f"gen_coverage: {p}: no such file or folder")
    return ops


def error_text(stderr):
    """The error egg-gen reported: from its first `egg: error:` line to the end, else the tail."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if "egg: error:" in line:
            text = [line.split("egg: error:", 1)[1].strip()] + lines[i + 1:]
            return "\n".join(text).strip()
    return "\n".join(lines[-20:]).strip()


def first_line(text):
    return text.splitlines()[0][:300] if text else ""


def classify(outcome, text):
    if outcome in ("ok", "timeout"):
        return outcome
    for applies, pattern, cls in CLASSES:
        if applies not in (None, outcome):
            continue
        m = re.search(pattern, text, re.IGNORECASE)
        if m:
            return cls.format(*([m.group(0)] + list(m.groups())))
    return outcome


def run_one(egg_gen, op, work, timeout, extra):
    stem = re.sub(r"[^\w.-]", "_", os.path.splitext(os.path.basename(op))[0])
    out = os.path.join(work, stem)
    cmd = [egg_gen, "generate", os.path.abspath(op), "--arch", "sm_90", "--out", out,
           "--no-verify", "--no-cache"] + extra
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    except OSError as e:  # e.g. egg-gen being relinked: this op's row says so, the run goes on
        return {"op": os.path.relpath(op),
                "level": os.path.basename(os.path.dirname(os.path.abspath(op))),
                "outcome": "internal_error", "class": "cannot run egg-gen", "exit_code": None,
                "message": f"cannot run {egg_gen}: {e}", "seconds": 0.0}
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # egg-gen ends its children and removes its temp folders
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
        rc = None
    seconds = time.monotonic() - start
    if rc is None:
        outcome = "timeout"
    elif rc == 0:
        outcome = "ok"
    elif rc == 1:
        outcome = "no_candidate" if "no candidate passed" in stderr else "user_error"
    else:
        outcome = "internal_error"
    text = "" if outcome == "ok" else error_text(stderr)
    if outcome == "timeout":
        text = f"no result within {timeout:g} s"
    elif outcome == "internal_error" and rc is not None and rc < 0:
        text = f"killed by signal {-rc}\n" + text
    return {"op": os.path.relpath(op), "level": os.path.basename(os.path.dirname(os.path.abspath(op))),
            "outcome": outcome, "class": classify(outcome, text), "exit_code": rc,
            "message": first_line(text), "seconds": round(seconds, 1)}


OUTCOMES = ["ok", "user_error", "no_candidate", "internal_error", "timeout"]


def markdown(rows, title="Generation coverage"):
    levels = sorted({r["level"] for r in rows})
    out = [f"| level | ops | " + " | ".join(OUTCOMES) + " | generated and compiled |",
           "|---|---|" + "---|" * len(OUTCOMES) + "---|"]
    for lv in levels + ["all"]:
        rs = [r for r in rows if lv == "all" or r["level"] == lv]
        counts = [sum(r["outcome"] == o for r in rs) for o in OUTCOMES]
        pct = 100.0 * counts[0] / len(rs) if rs else 0.0
        out.append(f"| {lv} | {len(rs)} | " + " | ".join(map(str, counts)) + f" | {pct:.0f} % |")
    out += ["", "| failure class | " + " | ".join(levels) + " | ops |",
            "|---|" + "---|" * len(levels) + "---|"]
    classes = {}
    for r in rows:
        if r["outcome"] != "ok":
            classes.setdefault(r["class"], []).append(r)
    for cls, rs in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        per = [str(sum(r["level"] == lv for r in rs)) for lv in levels]
        names = ", ".join(os.path.splitext(os.path.basename(r["op"]))[0] for r in rs)
        out.append(f"| {cls} | " + " | ".join(per) + f" | {names} |")
    return "\n".join(out) + "\n"


def default_egg_gen():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "generator",
                        "egg-gen")
    return os.path.normpath(here) if os.path.exists(here) else "egg-gen"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", help="op.py files or folders of them")
    ap.add_argument("--egg-gen", default=default_egg_gen())
    ap.add_argument("--every", type=int, default=1, help="take every N-th op of each folder")
    ap.add_argument("--offset", type=int, default=0, help="the first op taken of each folder")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="ops at once (default 1)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per op (default 900)")
    ap.add_argument("--jsonl", help="rows out, one JSON object per op (default: stdout)")
    ap.add_argument("--markdown", help="the summary by level and class (default: stderr)")
    ap.add_argument("--work", help="folder for the outputs (default: a temp folder, removed)")
    ap.add_argument("--egg-gen-arg", action="append", default=[],
                    help="one more argument for egg-gen generate (repeatable)")
    a = ap.parse_args(argv)
    if a.every < 1 or a.jobs < 1 or not 0 <= a.offset < a.every:
        ap.error("--every and -j must be >= 1 and 0 <= --offset < --every")
    ops = collect(a.paths, a.every, a.offset)
    if not ops:
        ap.error("no op.py files in the given paths")
    tmp = None if a.work else tempfile.TemporaryDirectory(prefix="egg-coverage-")
    work = a.work or tmp.name
    sink = open(a.jsonl, "w") if a.jsonl else sys.stdout
    rows = [None] * len(ops)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            futures = {pool.submit(run_one, a.egg_gen, op, work, a.timeout, a.egg_gen_arg): i
                       for i, op in enumerate(ops)}
            for done, f in enumerate(concurrent.futures.as_completed(futures), 1):
                row = f.result()
                rows[futures[f]] = row
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(f"gen_coverage: [{done}/{len(ops)}] {row['op']}: {row['class']} "
                      f"({row['seconds']:.0f} s)", file=sys.stderr, flush=True)
    finally:
        if sink is not sys.stdout:
            sink.close()
        if tmp:
            tmp.cleanup()
    summary = f"Run {started}.\n\n" + markdown([r for r in rows if r])
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(summary)
    else:
        sys.stderr.write(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
