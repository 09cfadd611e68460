// "Never slower than eager, never silently": the emitted kernel's time against PyTorch eager's,
// timed the same way on the same GPU in the same run (the verify step's baselines). Slower beyond
// the timing noise is said in the build log with both times, recorded in the manifest
// (`vs_eager`), and an error under --require-faster (EGG_REQUIRE_FASTER=ON).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace egg::pipeline {

// The timing noise within which a kernel counts as as fast as eager (the stages' margin too).
inline constexpr double kEagerNoiseMargin = 0.03;

enum class EagerVerdict {
  faster,        // below eager's time
  within_noise,  // at most kEagerNoiseMargin above it
  slower,        // more than the margin above it
  not_measured,  // no GPU, no baseline (--no-baseline) or the baseline failed
};

// "faster", "within_noise", "slower", "not_measured" (the manifest's spelling).
const char* verdict_name(EagerVerdict v);

struct EagerComparison {
  EagerVerdict verdict = EagerVerdict::not_measured;
  std::optional<double> kernel_ms, eager_ms;
  // Which of eager's figures `eager_ms` is: "host" (events around the Python call) or "device"
  // (its GPU time, host overhead hidden); the faster of the two is taken.
  std::string eager_basis;
  double margin = kEagerNoiseMargin;
  // kernel_ms / eager_ms - 1 (positive: slower), when both are measured.
  std::optional<double> excess() const;
  nlohmann::json to_json() const;
};

// From a manifest's `timing` object (kernel_ms, eager_ms, eager_device_ms; null when not
// measured): the kernel against eager's faster figure.
EagerComparison compare_with_eager(const nlohmann::json& timing, double margin = kEagerNoiseMargin);

// "kernel 1.3 ms against eager PyTorch's 1 ms (30 % slower)", for the log and errors.
std::string describe(const EagerComparison& c);

// What a target arch list leaves out: for plain sm_90, that sm_90a lets the families propose their
// Hopper kernels (wgmma); "" where there is nothing to add.
std::string arch_advice(const std::vector<std::string>& arches);

// Says a slower kernel in the build log (a warning naming `kernel` and both times, and what the
// target `arches` leave out); with `require_faster`, throws a UserError at `op_file` that says
// what to do instead.
void report_eager_floor(const std::string& kernel, const std::string& op_file,
                        const EagerComparison& c, bool require_faster,
                        const std::vector<std::string>& arches = {});

}  // namespace egg::pipeline
