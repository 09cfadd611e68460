#!/usr/bin/env python3
"""egg-gen report in a real browser: a bench folder's page is loaded by headless Chromium, whose
DOM must hold every plot as SVG and whose screenshot must show each plot's bar colors; and the
report's user errors exit 1 with what to do.

    test_report_browser.py --egg-gen <exe> --python <python> --rows <rows.jsonl> --work <dir>
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures  # noqa: E402

SKIP = 77


def skip_or_fail(why):
    if os.environ.get("CI"):
        print("FAIL: %s (CI installs it: tools/setup.sh --tests)" % why)
        sys.exit(1)
    print("SKIP: %s" % why)
    sys.exit(SKIP)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(exe, *args):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", "--no-first-run", "--allow-file-access-from-files", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(r.stderr[-3000:])
        raise SystemExit("chromium failed (exit %d): %s" % (r.returncode, " ".join(cmd)))
    return r.stdout


def color_pixels(png, hex_color):
    """How many screenshot pixels have exactly this color."""
    import numpy as np
    from matplotlib import image

    img = (image.imread(png)[:, :, :3] * 255).round().astype(np.int32)
    want = [int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]
    return int(np.all(img == want, axis=2).sum())


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        check.failed = True


check.failed = False


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--egg-gen", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()

    if run([a.python, "-c", "import matplotlib"]).returncode != 0:
        skip_or_fail("matplotlib is not installed in %s" % a.python)
    exe = chromium()
    if not exe:
        skip_or_fail("no chromium (apt-get install chromium)")

    shutil.rmtree(a.work, ignore_errors=True)
    bench = os.path.join(a.work, "bench")
    rows, kernels = fixtures.write_bench(bench, a.rows)
    page = os.path.join(a.work, "page.html")
    r = run([a.egg_gen, "report", bench, "--html", page, "--python", a.python])
    check(r.returncode == 0, "egg-gen report exits 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    check("egg: report: %s" % page in r.stderr, "it names the page it wrote")
    if not os.path.exists(page):
        return 1
    text = open(page, encoding="utf-8").read()
    check(not re.search(r"""(src|href)=["']?(https?:)?//""", text), "the page loads nothing")
    check("<script" not in text, "the page has no scripts")

    # The DOM after load: every plot an inline SVG with its bars drawn.
    dom = browser(exe, "--dump-dom", "file://" + page)
    for plot in ["speedups", "roofline"] + ["candidates-" + k for k in kernels]:
        m = re.search(r'<figure class="plot" id="%s">(.*?)</figure>' % re.escape(plot), dom, re.S)
        check(m is not None and "<svg" in m.group(1), "the DOM has the plot %s as SVG" % plot)
        check(m is not None and m.group(1).count("<path") > 10, "%s has drawn paths" % plot)
    for r_ in rows:
        check(">%s<" % r_["op"] in dom, "the bench table lists %s" % r_["op"])
    check(dom.count('class="kernel"') == len(kernels), "one section per kernel")
    check("<td>correct rate</td><td class=\"num\">1.000</td>" in dom
          and "geomean speedup vs eager<" not in dom,
          "the summary shows the figures the bench measured, and only those")

    # The screenshot: each series' color is on screen (bars are filled rectangles of that color).
    png = os.path.join(a.work, "page.png")
    browser(exe, "--window-size=1200,6000", "--screenshot=" + png, "file://" + page)
    from egg_report import plots
    for name, color, at_least in [("eager bars", plots.EAGER, 2000),
                                  ("torch.compile bars", plots.COMPILE, 2000),
                                  ("roofline bars", plots.ROOFLINE, 2000),
                                  ("candidate bars", plots.CANDIDATE, 1000),
                                  ("stage winners' bars", plots.WINNER, 1000)]:
        n = color_pixels(png, color)
        check(n >= at_least, "the screenshot shows the %s (%d pixels of %s)" % (name, n, color))

    # User errors: exit 1, a message and a hint, nothing written.
    bad = os.path.join(a.work, "bad.html")
    empty = os.path.join(a.work, "empty")
    os.makedirs(empty)
    for args, fragment in [([os.path.join(a.work, "missing")], "does not exist"),
                           ([empty], "holds no manifest.json and no bench.json"),
                           ([page], "is a file, not a folder")]:
        r = run([a.egg_gen, "report", *args, "--html", bad, "--python", a.python])
        check(r.returncode == 1 and fragment in r.stderr and "egg: hint: " in r.stderr
              and not os.path.exists(bad),
              "report %s: exit 1 with '%s' (%d: %s)" % (args[0], fragment, r.returncode,
                                                        r.stderr.strip()))
    # A Python without matplotlib: the site-packages hidden (-S), so matplotlib cannot import.
    wrapper = os.path.join(a.work, "python-without-site")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s -S \"$@\"\n" % a.python)
    os.chmod(wrapper, 0o755)
    r = run([a.egg_gen, "report", bench, "--html", bad, "--python", wrapper])
    check(r.returncode == 1 and "has no matplotlib" in r.stderr and "pip install matplotlib"
          in r.stderr, "a Python without matplotlib is a user error (%d: %s)" %
          (r.returncode, r.stderr.strip()))
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    sys.exit(main())
