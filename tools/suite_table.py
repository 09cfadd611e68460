#!/usr/bin/env python3
"""Merge `egg-gen bench --rows` files into docs/PERFORMANCE.md's suite table and its summary.

    python3 tools/suite_table.py rows1.jsonl [rows2.jsonl ...] [--suite examples/suite]
    python3 tools/suite_table.py docs/perf/<earlier>.jsonl ... docs/perf/<later>.jsonl --only-dir kb/level2

A later file's row replaces an earlier one's for the same op (a re-run). --only-dir keeps the ops of
the op.py files in a folder (a KernelBench level: `t_<file stem>`, as gpu_suite.sh names them), so
the latest row of each of a level's problems over several sessions' rows makes the level's table. With --suite, every op.py
is traced (python -m egg_frontend trace, CPU; it writes no reference tensors) to count its compute
nodes: one node is a single op, more is a fused chain (the issue's two geomean targets). Memory-bound ops (every family
but gemm_/conv_ and the GEMM-anchored fuse_ plans) get their % of the copy bandwidth egg-harness
measured in the same run. torch.compile is reported in both modes the baselines time: the default
("compile") and mode="max-autotune-no-cudagraphs" ("max-autotune"); a kernel slower than eager
beyond the 3 % noise (the manifest's vs_eager) is listed."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

COMPUTE_PREFIXES = ("gemm_", "conv_")


def load_rows(paths):
    rows = {}
    for p in paths:
        for line in open(p):
            if line.strip():
                r = json.loads(line)
                rows[r["op"]] = r
    return rows


def count_nodes(op_path, python):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "python"))
        r = subprocess.run([python, "-m", "egg_frontend", "trace", "--op", os.path.abspath(op_path),
                            "--out", tmp], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            return None, None
        spec = json.load(open(os.path.join(tmp, "spec.json")))
        ops = [n.get("op", "") for n in spec.get("nodes", [])]
        return len(ops), ops


def is_compute_bound(op, ops):
    if op.startswith(COMPUTE_PREFIXES):
        return True
    anchors = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "conv1d", "conv2d", "conv3d"}
    return op.startswith("fuse_") and bool(ops and anchors.intersection(ops))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--suite", help="folder of the op.py files (classifies single ops and chains)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only-dir", help="keep the ops of the op.py files in this folder")
    a = ap.parse_args()
    rows = load_rows(a.rows)
    if a.only_dir:
        stems = {f[:-3] for f in os.listdir(a.only_dir) if f.endswith(".py")}
        rows = {op: r for op, r in rows.items()
                if op in stems or (op.startswith("t_") and op[2:] in stems)}
        if not rows:
            sys.exit("suite_table: no row names an op.py of %s" % a.only_dir)
    f = lambda v, s="%.4f": "-" if not isinstance(v, (int, float)) else s % v
    # Device-time baselines (egg_bench's *_device: host overhead hidden), where the run has them.
    dev = any(r.get("speedup_vs_eager_device") for r in rows.values())
    print("| op | nodes | verified | kernel ms | eager ms | compile ms | max-autotune ms | vs eager |"
          " vs compile | vs max-autotune |"
          + (" eager dev ms | compile dev ms | vs eager (dev) | vs compile (dev) |" if dev else "")
          + " GB/s | % copy | gen s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|---:|" if dev else "")
          + "---:|---:|---:|")
    dev_eager, dev_compile, dev_single, dev_chain = [], [], [], []
    single, chain, vs_compile, vs_tuned, bw, gen = [], [], [], [], [], []
    verified = 0
    for op in sorted(rows):
        r = rows[op]
        n, ops = (count_nodes(os.path.join(a.suite, op + ".py"), a.python) if a.suite else (None, None))
        pct = None
        if r["verified"]:
            verified += 1
            if r.get("speedup_vs_eager"):
                (single if n == 1 else chain).append(r["speedup_vs_eager"])
            if r.get("speedup_vs_compile"):
                vs_compile.append(r["speedup_vs_compile"])
            if r.get("speedup_vs_compile_max_autotune"):
                vs_tuned.append(r["speedup_vs_compile_max_autotune"])
            if not is_compute_bound(op, ops) and r.get("achieved_gbps") and r.get("copy_gbps"):
                pct = 100 * r["achieved_gbps"] / r["copy_gbps"]
                bw.append((pct, op))
        gen.append(r["generate_s"])
        if r["verified"] and r.get("speedup_vs_eager_device"):
            dev_eager.append(r["speedup_vs_eager_device"])
            (dev_single if n == 1 else dev_chain).append(r["speedup_vs_eager_device"])
        if r["verified"] and r.get("speedup_vs_compile_device"):
            dev_compile.append(r["speedup_vs_compile_device"])
        dev_cols = ("%s | %s | %s | %s | " % (f(r.get("eager_device_ms")), f(r.get("compile_device_ms")),
                                              f(r.get("speedup_vs_eager_device"), "%.2fx"),
                                    f(r.get("speedup_vs_compile_device"), "%.2fx"))) if dev else ""
        status = "yes" if r["verified"] else "**NO**: " + r["status"][:120]
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s | %s | %s |" % (
            op, n if n is not None else "?", status, f(r["kernel_ms"]), f(r["eager_ms"]),
            f(r["compile_ms"]), f(r.get("compile_max_autotune_ms")), f(r["speedup_vs_eager"], "%.2fx"),
            f(r["speedup_vs_compile"], "%.2fx"), f(r.get("speedup_vs_compile_max_autotune"), "%.2fx"),
            dev_cols, f(r.get("achieved_gbps"), "%.0f"), f(pct, "%.0f"), f(r["generate_s"], "%.0f")))
    print()
    print("- ops: %d; verified: %d (%.0f%%)" % (len(rows), verified, 100.0 * verified / len(rows)))
    if a.suite:
        print("- geomean speedup vs eager: single ops %.2fx (%d ops), fused chains %.2fx (%d ops)"
              % (geomean(single), len(single), geomean(chain), len(chain)))
    print("- faster than torch.compile: %d of %d ops (%.0f%%); geomean vs torch.compile %.2fx"
          % (sum(x > 1 for x in vs_compile), len(rows), 100.0 * sum(x > 1 for x in vs_compile) / len(rows),
             geomean(vs_compile)))
    if vs_tuned:
        print("- faster than torch.compile max-autotune-no-cudagraphs: %d of %d ops (%.0f%%); geomean %.2fx"
              % (sum(x > 1 for x in vs_tuned), len(rows), 100.0 * sum(x > 1 for x in vs_tuned) / len(rows),
                 geomean(vs_tuned)))
    slower = sorted(op for op, r in rows.items() if r.get("vs_eager") == "slower")
    print("- slower than eager beyond 3%% noise (said in the build log and the manifest): %s"
          % (", ".join("%s %.2fx" % (op, rows[op]["speedup_vs_eager"] or 0) for op in slower) or "none"))
    lib = sorted((r["pct_of_library_gemm"], op) for op, r in rows.items()
                 if r["verified"] and r.get("pct_of_library_gemm"))
    if lib:
        print("- GEMM/conv kernels against eager's library kernels alone (cuBLAS/cuDNN, same "
              "precision), % of their speed: " + ", ".join("%s %.0f%%" % (op, p) for p, op in lib))
    if dev:
        print("- device time (host overhead hidden): geomean %.2fx vs eager (%d ops), %.2fx vs "
              "torch.compile (%d ops); faster than torch.compile on %d" % (
                  geomean(dev_eager), len(dev_eager), geomean(dev_compile), len(dev_compile),
                  sum(x > 1 for x in dev_compile)))
        if a.suite:
            print("- device time vs eager: single ops %.2fx (%d ops), fused chains %.2fx (%d ops); "
                  "slower than eager on %d: %s" % (
                      geomean(dev_single), len(dev_single), geomean(dev_chain), len(dev_chain),
                      sum(x < 1 for x in dev_eager),
                      ", ".join("%s %.2fx" % (op, r["speedup_vs_eager_device"]) for op, r in sorted(rows.items())
                                if r["verified"] and r.get("speedup_vs_eager_device") and r["speedup_vs_eager_device"] < 1)))
            print("- slower than torch.compile in device time: %s" % ", ".join(
                "%s %.2fx" % (op, r["speedup_vs_compile_device"]) for op, r in sorted(rows.items())
                if r["verified"] and r.get("speedup_vs_compile_device") and r["speedup_vs_compile_device"] < 1))
    if bw:
        ok = [op for p, op in bw if p >= 85]
        print("- memory-bound ops at >= 85%% of copy bandwidth: %d of %d; below: %s" % (
            len(ok), len(bw), ", ".join("%s %.0f%%" % (op, p) for p, op in sorted(bw) if p < 85)))
    s1 = sorted(r["stage1_s"] for r in rows.values() if r.get("stage1_s"))
    s2 = sorted(r["stage2_s"] for r in rows.values() if r.get("stage2_s"))
    if s1 and s2:
        print("- stage wall time per op: stage 1 median %.0f s, stage 2 median %.0f s (stage 2 adds "
              "%.0f%% over stage 1)" % (s1[len(s1) // 2], s2[len(s2) // 2],
                                        100.0 * sum(s2) / max(sum(s1), 1e-9)))
    g = sorted(gen)
    print("- generation time per op (cold, side by side with other ops): median %.0f s, min %.0f s, max %.0f s"
          % (g[len(g) // 2], g[0], g[-1]))


if __name__ == "__main__":
    main()
