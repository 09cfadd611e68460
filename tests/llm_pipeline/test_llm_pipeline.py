"""egg-gen with the LLM backends against a scripted OpenAI/Anthropic server on loopback.

The real egg-gen, the real libcurl client, the real frontend and real nvcc run; only the model is
scripted: its first kernel does not compile, the debug agent's answer does, and stage 2 answers a
valid kernel. Then replay regenerates byte-identical files from the transcript with no server.

Arguments come from the environment (tests/llm_pipeline/CMakeLists.txt): EGG_GEN, EGG_DATA_DIR,
EGG_TEST_PYTHON, EGG_TEST_NVCC, FAKE_SERVER.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

OP = """import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0
def get_inputs(): return [torch.randn(1024)]
def get_init_inputs(): return []
"""

GOOD = """```cuda
#include <cuda_runtime.h>
namespace {
__global__ void relu_twice(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f) * 2.0f;
}
}  // namespace
static cudaError_t egg_launch_impl(const float* x, float* out0, cudaStream_t stream) {
  relu_twice<<<(1024 + 255) / 256, 256, 0, stream>>>(x, out0, 1024);
  return cudaGetLastError();
}
```"""

BROKEN = GOOD.replace("fmaxf(x[i], 0.0f)", "fmaxf(x[i], 0.0f) + undefined_thing")
CHEAT = GOOD.replace("#include <cuda_runtime.h>", "#include <cuda_runtime.h>\n#include <ATen/ATen.h>")


def reply(text, tokens_in=100, tokens_out=50, **extra):
    return dict({"reply": {"text": text, "tokens_in": tokens_in, "tokens_out": tokens_out}}, **extra)


class LlmPipelineTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="egg-llm-pipeline-")
        self.dir = Path(self.tmp.name)
        (self.dir / "relu_twice.py").write_text(OP)
        self.server = None

    def tearDown(self):
        self.stop_server()
        self.tmp.cleanup()

    def stop_server(self):
        if self.server:
            self.server.kill()
            self.server.wait()
            self.server.stdout.close()
            self.server = None

    def start_server(self, responses):
        scenario = self.dir / "scenario.json"
        scenario.write_text(json.dumps({"responses": responses}))
        self.record = self.dir / "record.jsonl"
        self.server = subprocess.Popen([sys.executable, os.environ["FAKE_SERVER"], str(scenario), str(self.record)],
                                       stdout=subprocess.PIPE, text=True)
        return int(self.server.stdout.readline())

    def generate(self, backend, out, base_url=None, extra=(), key=None, env_extra=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("EGG_LLM_", "OPENAI_", "ANTHROPIC_"))}
        env.update(env_extra or {})
        env["EGG_CACHE_DIR"] = str(self.dir / "cache")
        if base_url:
            env["EGG_LLM_BASE_URL"] = base_url
        if key:
            env["EGG_LLM_API_KEY"] = key
        args = [os.environ["EGG_GEN"], "generate", str(self.dir / "relu_twice.py"), "--arch", "sm_90",
                "--out", str(self.dir / out), "--backend", backend, "--python", os.environ["EGG_TEST_PYTHON"],
                "--nvcc", os.environ["EGG_TEST_NVCC"], "--data-dir", os.environ["EGG_DATA_DIR"], *extra]
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)

    def requests(self):
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def check_repaired(self, backend, base_path):
        port = self.start_server([reply(BROKEN), reply(GOOD), reply(GOOD)])
        key = "sk-test-secret-123456"
        r = self.generate(backend, "out", f"http://127.0.0.1:{port}{base_path}", ["--model", "fake-model"], key=key)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("debug agent repairs", r.stderr)
        cu = (self.dir / "out" / "relu_twice.cu").read_text()
        self.assertIn("relu_twice<<<", cu)
        self.assertNotIn("undefined_thing", cu)
        manifest = json.loads((self.dir / "out" / "manifest.json").read_text())
        self.assertEqual(manifest["backend"], backend)
        self.assertEqual(manifest["tokens"]["stage1"]["code"]["requests"], 1)
        self.assertEqual(manifest["tokens"]["stage1"]["debug"]["requests"], 1)
        self.assertEqual(manifest["tokens"]["stage2"]["code"]["tokens_in"], 100)
        reqs = self.requests()
        self.assertEqual(len(reqs), 3)
        # The debug agent saw the compiler's complaint; the key went on the wire and nowhere else.
        self.assertIn("undefined_thing", reqs[1]["body"])
        self.assertIn("egg_launch_impl(const float* x, float* out0, cudaStream_t stream)", reqs[0]["body"])
        for path in (self.dir / "out").rglob("*"):
            if path.is_file():
                self.assertNotIn(key, path.read_text(errors="replace"), path)
        self.assertNotIn(key, r.stderr)
        return reqs

    def test_openai_debug_agent_repairs_a_broken_first_answer(self):
        reqs = self.check_repaired("openai", "/v1")
        self.assertEqual(reqs[0]["path"], "/v1/chat/completions")
        self.assertEqual(reqs[0]["headers"]["authorization"], "Bearer sk-test-secret-123456")

    def test_anthropic_debug_agent_repairs_a_broken_first_answer(self):
        reqs = self.check_repaired("anthropic", "")
        self.assertEqual(reqs[0]["path"], "/v1/messages")
        self.assertEqual(reqs[0]["headers"]["x-api-key"], "sk-test-secret-123456")
        self.assertIn("anthropic-version", reqs[0]["headers"])

    def test_replay_regenerates_identical_files_without_a_server(self):
        self.check_repaired("openai", "/v1")
        self.stop_server()
        transcript = self.dir / "out" / "transcript.jsonl"
        self.assertTrue(transcript.exists())
        r = self.generate("replay", "replayed", extra=["--option", f"transcript={transcript}", "--no-cache"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("relu_twice.cu", "include/egg/relu_twice.h"):
            self.assertEqual((self.dir / "out" / name).read_bytes(), (self.dir / "replayed" / name).read_bytes(), name)

    def test_torch_in_the_kernel_is_rejected_and_repaired(self):
        port = self.start_server([reply(CHEAT), reply(GOOD), reply(GOOD)])
        r = self.generate("openai", "out", f"http://127.0.0.1:{port}/v1", ["--model", "m"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("forbidden_api", self.requests()[1]["body"])
        self.assertNotIn("ATen", (self.dir / "out" / "relu_twice.cu").read_text())

    def test_faults_are_survived_or_reported(self):
        port = self.start_server([
            {"status": 429, "headers": {"Retry-After": "0"}},       # retried
            {"status": 500},                                         # retried
            {"body": "{not json"},                                   # malformed: a failed attempt
            reply("I can't help with that."),                       # refusal: a failed attempt
        ])
        r = self.generate("openai", "out", f"http://127.0.0.1:{port}/v1", ["--model", "m"])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("no candidate passed", r.stderr)
        self.assertFalse((self.dir / "out").exists())
        self.assertEqual(len(self.requests()), 4)

    def test_unauthorized_is_a_clear_final_error(self):
        port = self.start_server([{"status": 401, "json": {"error": {"message": "bad key sk-wrong-key-999"}}}])
        r = self.generate("openai", "out", f"http://127.0.0.1:{port}/v1", ["--model", "m"], key="sk-wrong-key-999")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("EGG_LLM_API_KEY", r.stderr)
        self.assertNotIn("sk-wrong-key-999", r.stderr)
        self.assertEqual(len(self.requests()), 1)  # 401 is final: no retries

    def test_stalled_server_is_a_clear_timeout(self):
        port = self.start_server([{"action": "stall", "seconds": 30}])
        r = self.generate("openai", "out", f"http://127.0.0.1:{port}/v1", ["--model", "m"],
                          env_extra={"EGG_LLM_TIMEOUT": "2", "EGG_LLM_MAX_ATTEMPTS": "1"})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("timeout", r.stderr)
        self.assertFalse((self.dir / "out").exists())

    def test_truncated_answer_is_asked_again(self):
        port = self.start_server([reply(GOOD[:120], finish="length"), reply(GOOD), reply(GOOD)])
        r = self.generate("openai", "out", f"http://127.0.0.1:{port}/v1", ["--model", "m"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("truncated", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
