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


# A wgmma kernel's guard (templates/attention/flash_wg.cuh.tmpl): it compiles for sm_90a only.
WGMMA_GUARD = r"""
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel uses wgmma: compile it for sm_90a"
#endif
"""


@unittest.skipUnless(os.path.exists(NVCC), "needs nvcc (CUDA toolkit)")
class BuildTest(unittest.TestCase):
    def build(self, source, tmp=None, path=None):
        import candidates_torch

        if tmp is None:
            tmp = tempfile.mkdtemp()
            self.addCleanup(shutil.rmtree, tmp)
        op = os.path.join(tmp, "op")
        os.makedirs(os.path.join(op, "include"), exist_ok=True)
        cu = os.path.join(op, "0.cu")
        with open(cu, "w") as f:
            f.write(source)
        env_path = os.environ["PATH"]
        os.environ["PATH"] = path if path is not None else os.path.dirname(NVCC) + os.pathsep + env_path
        try:
            return candidates_torch.build(cu, os.path.join(op, "include"), tmp)
        finally:
            os.environ["PATH"] = env_path

    def test_the_library_exports_the_entry(self):
        so, err = self.build(CANDIDATE)
        self.assertIsNotNone(so, err)
        name = os.path.basename(so)
        self.assertTrue(name.startswith("egg-cand-op-0-") and name.endswith(".so"), name)
        lib = ctypes.CDLL(so)
        self.assertTrue(hasattr(lib, "egg_candidate_launch"))

    def test_a_library_built_before_is_reused_and_a_changed_source_is_not(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        so, err = self.build(CANDIDATE, tmp)
        self.assertIsNotNone(so, err)
        # No nvcc on PATH: the same source finds its library, a changed one needs nvcc.
        self.assertEqual(self.build(CANDIDATE, tmp, path=tmp), (so, ""))
        changed, _ = self.build(CANDIDATE + "// changed\n", tmp, path=tmp)
        self.assertIsNone(changed)

    def test_a_wgmma_kernel_compiles_for_sm_90a(self):
        so, err = self.build(WGMMA_GUARD + CANDIDATE)
        self.assertIsNotNone(so, err)


if __name__ == "__main__":
    unittest.main()
