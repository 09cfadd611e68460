#!/usr/bin/env python3
"""How much the pipeline's context selection shrinks what the agents send (issue 4's benchmark).

Runs the real egg-gen with the openai backend against the scripted loopback server
(tests/llm/fake_llm_server.py): in stage 1 the code agent answers a kernel that does not compile
twice and the debug agent repairs it; stage 2 answers a valid kernel. For every request it compares
the bytes actually sent with what a chat that re-sends the whole history (every earlier prompt and
answer of the run) would send, and prints a table per stage and agent: requests, tokens in/out as
the manifest counts them (the scripted server reports its own numbers), bytes sent, bytes with the
full history.

  python3 bench/llm_context_bench.py <egg-gen> [--nvcc /usr/local/cuda/bin/nvcc]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "llm_pipeline"))
from test_llm_pipeline import BROKEN, GOOD, OP  # noqa: E402  (the same op and answers as the tests)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("egg_gen")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="egg-llm-bench-") as tmp:
        d = Path(tmp)
        (d / "op.py").write_text(OP)
        broken2 = BROKEN.replace("undefined_thing", "another_undefined_thing")
        answers = [BROKEN, broken2, GOOD, GOOD]  # stage1 code, debug (still broken), debug (fixed), stage2
        scenario = {"responses": [{"reply": {"text": t, "tokens_in": 0, "tokens_out": 0}} for t in answers]}
        (d / "scenario.json").write_text(json.dumps(scenario))
        server = subprocess.Popen([sys.executable, str(ROOT / "tests/llm/fake_llm_server.py"), str(d / "scenario.json"),
                                   str(d / "record.jsonl")], stdout=subprocess.PIPE, text=True)
        try:
            port = int(server.stdout.readline())
            env = dict(os.environ, EGG_LLM_BASE_URL=f"http://127.0.0.1:{port}/v1", EGG_CACHE="off")
            r = subprocess.run([args.egg_gen, "generate", str(d / "op.py"), "--arch", "sm_90", "--out", str(d / "out"),
                                "--backend", "openai", "--model", "bench", "--python", args.python, "--nvcc", args.nvcc,
                                "--data-dir", str(ROOT)], env=env, capture_output=True, text=True)
        finally:
            server.kill()
            server.wait()
            server.stdout.close()
        if r.returncode != 0:
            print(r.stderr)
            return 1
        records = [json.loads(line) for line in (d / "record.jsonl").read_text().splitlines()]
        transcript = [json.loads(line) for line in (d / "out" / "transcript.jsonl").read_text().splitlines()]
        manifest = json.loads((d / "out" / "manifest.json").read_text())
    history = 0
    rows = {}
    for rec, ex in zip(records, transcript):
        body = json.loads(rec["body"])
        sent = sum(len(m["content"]) for m in body["messages"])
        key = (ex["stage"], ex["agent"])
        row = rows.setdefault(key, {"requests": 0, "sent": 0, "full": 0})
        row["requests"] += 1
        row["sent"] += sent
        row["full"] += sent + history  # a chat that re-sends every earlier prompt and answer
        history += sent + len(ex["reply"]["text"])
    print(f"{'stage':8} {'agent':6} {'requests':>8} {'bytes sent':>10} {'full history':>12} {'ratio':>6}")
    for (stage, agent), row in rows.items():
        assert manifest["tokens"][stage][agent]["requests"] == row["requests"], "manifest disagrees with the wire"
        print(f"{stage:8} {agent:6} {row['requests']:8d} {row['sent']:10d} {row['full']:12d} {row['full'] / row['sent']:6.2f}")
    total_sent = sum(r["sent"] for r in rows.values())
    total_full = sum(r["full"] for r in rows.values())
    print(f"total: {total_sent} bytes sent, {total_full} with the full history ({total_full / total_sent:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
