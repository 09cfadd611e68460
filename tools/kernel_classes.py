#!/usr/bin/env python3
"""Where EGG's winner and torch.compile spend their GPU time, by kernel class, from the manifests of a
bench run (each candidate's `timing.kernels` from the harness's CUPTI trace, the baselines'
`timing.baseline_kernels` from torch.profiler): the convolution/GEMM library's kernels, layout
changes, and every other pass, as a Markdown table sorted from the largest loss to torch.compile:

    python3 tools/kernel_classes.py gpu-suite-out/manifests.tgz       # or a build-suite/ folder

Classes go by kernel name: layout = cuDNN's nchwToNhwc/nhwcToNchw/convertTensor and workspace
init, EGG's swap kernels, Inductor's `fused_convolution_0/1` copies, memsets; library = cuDNN,
cuBLAS(Lt) and CUTLASS kernels (xmma, cutlass, gemm, fprop, dgrad, sm80_/sm90_); pass = the rest.
"""
import argparse
import re
import sys

from attempts import manifests

LAYOUT = re.compile(r"nchwtonhwc|nhwctonchw|converttensor|init_device_workspace|swap_last|"
                    r"swap_narrow|fused_convolution_[01]$|memset", re.IGNORECASE)
LIBRARY = re.compile(r"xmma|cutlass|gemm|fprop|dgrad|sm90_|sm80_", re.IGNORECASE)
CLASSES = ("library", "layout", "pass")


def kernel_class(name):
    if LAYOUT.search(name):
        return "layout"
    return "library" if LIBRARY.search(name) else "pass"


def by_class(kernels, key):
    """{class: ms} of [{"name", key}] entries."""
    out = dict.fromkeys(CLASSES, 0.0)
    for k in kernels:
        out[kernel_class(k.get("name", ""))] += k.get(key, 0.0)
    return out


def winner_kernels(m):
    """The winning candidate's per-kernel times, or None where none were recorded."""
    found = None
    for stage in m.get("stages", []):
        for a in stage.get("attempts", []):
            timing = a.get("profile", {}).get("harness", {}).get("timing", {})
            if a.get("candidate") == m.get("candidate") and timing.get("kernels"):
                found = timing["kernels"]
    return found


def rows(source):
    out = []
    for op, m in manifests(source):
        t = m.get("timing", {})
        ks, compiled = winner_kernels(m), (t.get("baseline_kernels") or {}).get("compile")
        if not ks or not compiled or not t.get("kernel_ms") or not t.get("compile_device_ms"):
            continue
        e, c = by_class(ks, "median_ms"), by_class(compiled, "ms")
        out.append((t["compile_device_ms"] / t["kernel_ms"], op, t, e, c))
    return sorted(out, key=lambda r: r[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="manifests.tgz or a folder with <op>/.../manifest.json")
    args = ap.parse_args(argv)
    table = rows(args.source)
    if not table:
        print("kernel_classes.py: no manifest with both the winner's and torch.compile's kernels "
              "under %s (run the bench with baselines on a tree that records them)" % args.source,
              file=sys.stderr)
        return 1
    print("| op | EGG ms | compile ms | vs compile | library EGG / compile | layout EGG / compile "
          "| passes EGG / compile |")
    print("|---|---|---|---|---|---|---|")
    for ratio, op, t, e, c in table:
        print("| %s | %.3f | %.3f | %.2fx | %s |" % (
            op, t["kernel_ms"], t["compile_device_ms"], ratio,
            " | ".join("%.3f / %.3f" % (e[k], c[k]) for k in CLASSES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
