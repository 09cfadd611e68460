"""bench/micro/candidates_torch.build: a dumped candidate compiles into a library that exports the
entry the tool calls (the harness's nvcc line, -DEGG_CANDIDATE_ENTRY included)."""
import ctypes
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "micro"))

NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"

# A candidate as the generator writes it (templates/kernel.cu.tmpl): the entry behind the define.
CANDIDATE = r"""
#include <cuda_runtime.h>
__global__ void kernel(float* out) { out[threadIdx.x] = 1.0f; }
#ifdef EGG_CANDIDATE_ENTRY
extern "C" __attribute__((visibility("default"))) cudaError_t egg_candidate_launch(void* const* args,
                                                                                   cudaStream_t stream) {
  kernel<<<1, 32, 0, stream>>>(static_cast<float*>(args[0]));
  return cudaGetLastError();
}
#endif
"""


@unittest.skipUnless(os.path.exists(NVCC), "needs nvcc (CUDA toolkit)")
class BuildTest(unittest.TestCase):
    def test_the_library_exports_the_entry(self):
        import candidates_torch

        with tempfile.TemporaryDirectory() as tmp:
            op = os.path.join(tmp, "op")
            os.makedirs(os.path.join(op, "include"))
            cu = os.path.join(op, "0.cu")
            with open(cu, "w") as f:
                f.write(CANDIDATE)
            env_path = os.environ["PATH"]
            os.environ["PATH"] = os.path.dirname(NVCC) + os.pathsep + env_path
            try:
                so, err = candidates_torch.build(cu, os.path.join(op, "include"), tmp)
            finally:
                os.environ["PATH"] = env_path
            self.assertIsNotNone(so, err)
            self.assertEqual(os.path.basename(so), "egg-cand-op-0.so")
            lib = ctypes.CDLL(so)
            self.assertTrue(hasattr(lib, "egg_candidate_launch"))


if __name__ == "__main__":
    unittest.main()
