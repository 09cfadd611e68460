#!/usr/bin/env python3
"""Frontend capture coverage: run only the frontend's trace over every op.py of some folders.

    tools/trace_coverage.py [--python-dir <dir with egg_frontend>] [-j N] [--in-process]
                            [--json rows.json] [--markdown table.md] <folder>...

Each ``*.py`` of each folder is traced on the CPU (``python3 -m egg_frontend trace --op <file>
--out <tmp>``, with PYTHONPATH=<python-dir>) and classified: ``traced`` (exit 0, spec.json),
``user error: <class>`` (exit 1; the class is the message with names, numbers and quoted text
taken out) or ``internal error`` / ``timeout``. Prints a table per folder; ``--json`` writes one
row per file, ``--markdown`` the table of docs/PERFORMANCE.md. ``--in-process`` runs the same
command line (``egg_frontend.__main__.main``) inside this process, one op after the other: the
same outcomes without a torch import per op (no time limit, and an op that exits the process
ends the run).
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def message_class(message):
    """A user error's message without its particulars: the text before the first ':' or '('
    (what kind of failure), with numbers and quoted names replaced."""
    text = re.split(r"[:(]", message or "", maxsplit=1)[0].strip()
    text = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "<name>", text)
    text = re.sub(r"\d+", "<n>", text)
    return text or "(empty message)"


def classify(returncode, error):
    """(outcome, class) of one trace: its exit status and its error.json (or None)."""
    if returncode == 0:
        return "traced", ""
    if returncode is None:
        return "timeout", ""
    if returncode == 1 and error is not None and error.get("kind") == "user":
        return "user error", message_class(error.get("message", ""))
    return "internal error", (error or {}).get("message", "exit %d" % returncode)[:120]


def row(path, code, out):
    """The result row of one trace: its exit code (None: timed out) and the error.json in `out`."""
    error = None
    try:
        with open(os.path.join(out, "error.json"), encoding="utf-8") as f:
            error = json.load(f)
    except (OSError, ValueError):
        pass
    outcome, klass = classify(code, error)
    return {"file": path, "folder": os.path.basename(os.path.dirname(path)), "outcome": outcome,
            "class": klass, "op": (error or {}).get("op", ""),
            "line": (error or {}).get("line", 0), "message": (error or {}).get("message", "")}


def trace_one(path, python_dir, timeout, python):
    """One row: {file, folder, outcome, class, op, line, message}."""
    with tempfile.TemporaryDirectory(prefix="egg-cov-") as out:
        env = dict(os.environ, PYTHONPATH=python_dir)
        try:
            proc = subprocess.run([python, "-m", "egg_frontend", "trace", "--op", path,
                                   "--out", out], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=timeout, check=False)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
        return row(path, code, out)


def trace_in_process(path, python_dir):
    """``trace_one`` through ``egg_frontend.__main__.main`` in this process."""
    import contextlib
    import io
    if python_dir not in sys.path:
        sys.path.insert(0, python_dir)
    from egg_frontend.__main__ import main as frontend
    with tempfile.TemporaryDirectory(prefix="egg-cov-") as out:
        with contextlib.redirect_stderr(io.StringIO()):
            code = frontend(["trace", "--op", path, "--out", out])
        return row(path, code, out)


def summarize(rows):
    """{folder: Counter of 'traced' / 'user error: <class>' / ...}."""
    table = collections.OrderedDict()
    for row in sorted(rows, key=lambda r: r["folder"]):
        key = row["outcome"] + (": " + row["class"] if row["class"] else "")
        table.setdefault(row["folder"], collections.Counter())[key] += 1
    return table


def markdown(table):
    lines = ["| folder | problems | traced | failures by class |", "|---|---|---|---|"]
    for folder, counts in table.items():
        total = sum(counts.values())
        fails = ", ".join("%s: %d" % (k, v) for k, v in sorted(counts.items(),
                                                                 key=lambda kv: -kv[1])
                          if k != "traced")
        lines.append("| %s | %d | %d (%.0f %%) | %s |" % (
            folder, total, counts["traced"], 100.0 * counts["traced"] / max(total, 1),
            fails or "-"))
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+")
    p.add_argument("--python-dir", default=os.path.join(os.path.dirname(HERE), "python"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("-j", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--in-process", action="store_true",
                   help="trace in this process, one op after the other (no torch import per op)")
    p.add_argument("--json")
    p.add_argument("--markdown")
    args = p.parse_args(argv)
    files = []
    for folder in args.folders:
        files += sorted(os.path.join(os.path.abspath(folder), f) for f in os.listdir(folder)
                        if f.endswith(".py"))
    python_dir = os.path.abspath(args.python_dir)
    if args.in_process:
        rows = [trace_in_process(f, python_dir) for f in files]
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(args.j, 1)) as pool:
            rows = list(pool.map(lambda f: trace_one(f, python_dir, args.timeout, args.python),
                                 files))
    table = summarize(rows)
    text = markdown(table)
    sys.stdout.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
