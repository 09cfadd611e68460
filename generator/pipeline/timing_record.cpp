#include "pipeline/timing_record.h"

namespace egg::pipeline {
using nlohmann::json;

json timing_record(const std::optional<KernelTiming>& kernel,
                   const std::optional<verify::Baseline>& baseline) {
  json timing = {{"kernel_ms", nullptr},
                 {"eager_ms", nullptr},
                 {"compile_ms", nullptr},
                 {"speedup_vs_eager", nullptr},
                 {"speedup_vs_compile", nullptr}};
  if (!kernel) return timing;
  const double k = kernel->ms;
  timing["kernel_ms"] = k;
  timing["gpu"] = kernel->gpu;
  timing["achieved_gbps"] = kernel->bytes / (k * 1e-3) / 1e9;
  if (!baseline) return timing;
  const verify::Baseline& b = *baseline;
  if (b.eager_ms) timing["eager_ms"] = *b.eager_ms, timing["speedup_vs_eager"] = *b.eager_ms / k;
  if (b.compile_ms)
    timing["compile_ms"] = *b.compile_ms, timing["speedup_vs_compile"] = *b.compile_ms / k;
  if (b.eager_device_ms)
    timing["eager_device_ms"] = *b.eager_device_ms,
    timing["speedup_vs_eager_device"] = *b.eager_device_ms / k;
  // The library's GEMM (or conv) kernels alone against EGG's whole kernel, epilogue included.
  if (b.library_gemm_ms)
    timing["library_gemm_ms"] = *b.library_gemm_ms,
    timing["pct_of_library_gemm"] = 100.0 * *b.library_gemm_ms / k;
  if (b.compile_device_ms)
    timing["compile_device_ms"] = *b.compile_device_ms,
    timing["speedup_vs_compile_device"] = *b.compile_device_ms / k;
  // torch.compile's mode="max-autotune-no-cudagraphs" beside its default mode.
  if (b.compile_max_autotune_ms)
    timing["compile_max_autotune_ms"] = *b.compile_max_autotune_ms,
    timing["speedup_vs_compile_max_autotune"] = *b.compile_max_autotune_ms / k;
  if (b.compile_max_autotune_device_ms)
    timing["compile_max_autotune_device_ms"] = *b.compile_max_autotune_device_ms,
    timing["speedup_vs_compile_max_autotune_device"] = *b.compile_max_autotune_device_ms / k;
  if (!b.kernels.empty()) timing["baseline_kernels"] = b.kernels;
  if (!b.error.empty()) timing["baseline_error"] = b.error;
  return timing;
}

}  // namespace egg::pipeline
