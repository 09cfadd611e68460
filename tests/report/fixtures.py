"""Report inputs: bench rows (measured rows of docs/perf) and kernel manifests with measured
candidates, written the way egg-gen writes them."""
import json
import os


def attempt(candidate, ms, result="verified"):
    profile = {"harness": {"status": result}}
    if ms is not None:
        profile["harness"]["timing"] = {"event_ms": {"median": ms}}
    return {"candidate": candidate, "result": result if ms is None else "verified %g ms" % ms,
            "profile": profile}


def manifest(name, winner1, winner2):
    return {
        "schema": 1, "name": name, "op": {"path": "/src/%s.py" % name, "sha256": "0" * 64},
        "arches": ["sm_90"], "backend": "builtin", "model": "", "candidate": winner2,
        "summary": "row reduction, 256 threads", "generator": {"name": "egg-gen", "version": "0.1.0"},
        "cache_key": "ab" * 32, "tolerance": {"atol": 1e-4, "rtol": 1e-4},
        "status": {"sm_90": {"state": "verified"}},
        "timing": {"kernel_ms": 0.05, "eager_ms": 0.2, "compile_ms": 0.1, "speedup_vs_eager": 4.0,
                   "speedup_vs_compile": 2.0, "achieved_gbps": 2500.0},
        "stages": [
            {"step": "stage1", "chosen": winner1, "seconds": 11.5,
             "attempts": [attempt(winner1, 0.08), attempt(name + ".alt", 0.12),
                          attempt(name + ".broken", None, "compile_error")]},
            {"step": "stage2", "chosen": winner2, "seconds": 9.0,
             "attempts": [attempt(winner1, 0.08), attempt(winner2, 0.05)]},
            {"step": "verify", "profile": {}}],
        "files": {"cu": name + ".cu", "header": "include/egg/%s.h" % name}}


def write_bench(folder, rows_file, n=6):
    """A bench --out folder: bench.json with the first n measured rows, and two ops' manifests."""
    with open(rows_file, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()][:n]
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "bench.json"), "w", encoding="utf-8") as f:
        json.dump({"gpu": "NVIDIA H200", "copy_gbps": 0, "rows": rows,
                   "summary": {"ops": len(rows), "verified": len(rows), "correct_rate": 1.0,
                               "fast_1_vs_eager": 1.0, "fast_1_vs_compile": 0.0,
                               "geomean_speedup_vs_eager": None}}, f)
    names = [r["op"] for r in rows[:2]]
    for name in names:
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        with open(os.path.join(folder, name, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(manifest(name, name + ".s1", name + ".s2"), f)
    return rows, names
