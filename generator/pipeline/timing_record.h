// The manifest's `timing`: the emitted kernel's time against PyTorch's baselines (eager and
// torch.compile in its default and max-autotune modes, their device times, the library's GEMM or
// conv kernels alone), timed the same way on the same GPU in the same run.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "verify/harness_verifier.h"

namespace egg::pipeline {

// The kernel as the verify step timed it.
struct KernelTiming {
  double ms = 0;     // its time, positive
  std::string gpu;   // the GPU's name
  double bytes = 0;  // the op's least traffic (pipeline/roofline.h), for the achieved bandwidth
};

// kernel_ms, eager_ms, compile_ms, speedup_vs_eager and speedup_vs_compile always (null where not
// measured); with a timed kernel also gpu and achieved_gbps; with its baselines each figure they
// measured with the kernel's speedup over it (pct_of_library_gemm for the library's kernels), the
// kernels they ran and the baseline job's error.
nlohmann::json timing_record(const std::optional<KernelTiming>& kernel,
                             const std::optional<verify::Baseline>& baseline);

}  // namespace egg::pipeline
