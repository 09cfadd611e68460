#include "pipeline/eager_floor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/log.h"

namespace egg::pipeline {

const char* verdict_name(EagerVerdict v) {
  switch (v) {
    case EagerVerdict::faster:
      return "faster";
    case EagerVerdict::within_noise:
      return "within_noise";
    case EagerVerdict::slower:
      return "slower";
    case EagerVerdict::not_measured:
      return "not_measured";
  }
  return "not_measured";
}

std::optional<double> EagerComparison::excess() const {
  if (!kernel_ms || !eager_ms) return std::nullopt;
  return *kernel_ms / *eager_ms - 1.0;
}

nlohmann::json EagerComparison::to_json() const {
  nlohmann::json j = {{"verdict", verdict_name(verdict)},
                      {"kernel_ms", nullptr},
                      {"eager_ms", nullptr},
                      {"margin", margin}};
  if (kernel_ms) j["kernel_ms"] = *kernel_ms;
  if (eager_ms) j["eager_ms"] = *eager_ms, j["eager_basis"] = eager_basis;
  return j;
}

EagerComparison compare_with_eager(const nlohmann::json& timing, double margin) {
  EagerComparison c;
  c.margin = margin;
  auto positive = [&](const char* key) -> std::optional<double> {
    if (!timing.is_object() || !timing.contains(key) || !timing[key].is_number())
      return std::nullopt;
    const double v = timing[key].get<double>();
    return std::isfinite(v) && v > 0 ? std::optional<double>(v) : std::nullopt;
  };
  c.kernel_ms = positive("kernel_ms");
  // Eager's faster figure: as a Python caller sees it (`eager_ms`) or its device time with the
  // host's launch overhead hidden (`eager_device_ms`). At small sizes the first is mostly
  // Python's per-op overhead, and a kernel "faster" than that may still be slower on the GPU.
  c.eager_ms = positive("eager_ms");
  c.eager_basis = "host";
  if (const auto device = positive("eager_device_ms");
      device && (!c.eager_ms || *device < *c.eager_ms)) {
    c.eager_ms = device;
    c.eager_basis = "device";
  }
  if (!c.kernel_ms || !c.eager_ms) return c;
  const double over = *c.excess();
  c.verdict = over > margin ? EagerVerdict::slower
              : over > 0    ? EagerVerdict::within_noise
                            : EagerVerdict::faster;
  return c;
}

std::string describe(const EagerComparison& c) {
  if (!c.kernel_ms || !c.eager_ms) return "kernel not timed against eager PyTorch";
  char buf[160];
  const double over = *c.excess();
  std::snprintf(buf, sizeof(buf), "kernel %.4g ms against eager PyTorch's %.4g ms%s (%.0f %% %s)",
                *c.kernel_ms, *c.eager_ms, c.eager_basis == "device" ? " of GPU time" : "",
                std::abs(over) * 100, over > 0 ? "slower" : "faster");
  return buf;
}

std::string arch_advice(const std::vector<std::string>& arches) {
  if (std::find(arches.begin(), arches.end(), "sm_90") == arches.end()) return "";
  return "ARCH sm_90a lets the GEMM and attention families propose their Hopper kernels (wgmma); "
         "such a kernel runs on sm_90 GPUs only";
}

void report_eager_floor(const std::string& kernel, const std::string& op_file,
                        const EagerComparison& c, bool require_faster,
                        const std::vector<std::string>& arches) {
  if (c.verdict != EagerVerdict::slower) return;
  const std::string what = "the kernel is slower than eager PyTorch beyond the " +
                           std::to_string(static_cast<int>(c.margin * 100 + 0.5)) +
                           " % timing noise: " + describe(c);
  const std::string advice = arch_advice(arches);
  if (!require_faster) {
    log::warning(kernel + ": " + what + " (manifest: vs_eager)" +
                 (advice.empty() ? "" : "; " + advice));
    return;
  }
  throw UserError(SourceLocation{op_file, 0, kernel}, what + ", and EGG_REQUIRE_FASTER is on",
                  (advice.empty() ? "" : advice + "; ") +
                      "see which candidates were measured (the manifest's stages, "
                      "tools/attempts.py); give the stages more candidates (--budget) or an LLM "
                      "backend (BACKEND openai), keep PyTorch for this op, or set "
                      "EGG_REQUIRE_FASTER=OFF to accept the kernel");
}

}  // namespace egg::pipeline
