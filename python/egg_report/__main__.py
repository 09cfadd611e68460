"""Command line: ``python3 -m egg_report <folder or rows.jsonl> --html <file>``.

Exit 0: the page is written.  Exit 1: the input is not something a report can show, or matplotlib
is missing (the message says what to do).  Exit 2: a bug in EGG.
"""
import argparse
import os
import sys


def _error(message, hint):
    print("egg: error: %s" % message, file=sys.stderr)
    print("egg: hint: %s" % hint, file=sys.stderr)
    return 1


def main(argv=None):
    ap = argparse.ArgumentParser(prog="egg-gen report",
                                 description="an HTML page of generated kernels or a bench run")
    ap.add_argument("source", help="a kernel's output folder, a folder of them, an egg-gen bench "
                                   "--out folder, or a bench --rows .jsonl file")
    ap.add_argument("--html", required=True, help="the page to write")
    ap.add_argument("--title", default="", help="the page's title")
    args = ap.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return _error("the Python %s has no matplotlib, which draws the report's plots"
                      % sys.executable,
                      "install it: %s -m pip install matplotlib==3.11.2 (tools/setup.sh does)"
                      % sys.executable)
    from . import load, page

    try:
        bench, kernels = load.load(args.source)
    except load.ReportInputError as e:
        return _error(e.message, e.hint)
    title = args.title or "EGG report: %s" % os.path.abspath(args.source)
    text = page.render(bench, kernels, title)
    out = os.path.abspath(args.html)
    try:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = "%s.tmp.%d" % (out, os.getpid())
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    except OSError as e:
        return _error("cannot write %s: %s" % (out, e), "pass --html a path in a writable folder")
    print("egg: report: %s (%s%d kernel%s)" % (
        out, "bench run of %d ops, " % len(bench.rows) if bench else "", len(kernels),
        "" if len(kernels) == 1 else "s"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
