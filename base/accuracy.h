// The accuracy rule beside the tolerance check. Where PyTorch's own fp32 output is not determined
// to the tolerance (it misses a float64 computation of the same model by more than atol +
// rtol*|ref|: TF32 convolutions, long ill-conditioned chains), a tolerance check against it says
// little about a candidate; the candidate is judged against the float64 reference instead and
// passes when its error is no worse than k times PyTorch's own (k = 2 by default), in the maximum
// and in the mean, with NaN and inf where PyTorch has them. Plain C++; egg-harness applies it on
// the GPU's comparison summaries (docs/gpu.md, "Verification against float64").
#pragma once

#include <optional>
#include <string_view>

#include "base/comparison.h"

namespace egg {

enum class AccuracyMode {
  off,        // the tolerance check against PyTorch's output only
  automatic,  // the rule replaces the tolerance check where PyTorch's output is not determined
  on,         // every floating output is judged by the rule (opt-in math such as PRECISION fp32x3)
};

std::string_view accuracy_mode_name(AccuracyMode m);  // "off", "auto", "on"
std::optional<AccuracyMode> accuracy_mode_from_name(std::string_view name);

constexpr double kDefaultAccuracyFactor = 2.0;

// The three comparisons the rule reads, each over one output of one input set.
struct AccuracyInputs {
  Comparison torch_vs_exact;   // PyTorch's output against float64, under the tolerance
  Comparison kernel_vs_exact;  // the candidate's against float64 (its errors)
  // The candidate's against PyTorch's with an infinite tolerance: bad only where NaN or inf
  // differ.
  Comparison kernel_vs_torch_special;
};

enum class AccuracyOutcome {
  not_applied,     // auto mode, PyTorch's output is determined to the tolerance: that check stands
  passed,          // within k times PyTorch's own error
  error_too_big,   // max or mean error above k times PyTorch's
  special_values,  // NaN or inf where PyTorch has a number, or the other way round
};

struct AccuracyVerdict {
  AccuracyOutcome outcome = AccuracyOutcome::not_applied;
  double torch_max_abs = 0, kernel_max_abs = 0;    // against float64
  double torch_mean_abs = 0, kernel_mean_abs = 0;  // against float64
  double floor = 0;  // the smallest error bound: half an fp32 ulp of the largest |value|
  double factor = kDefaultAccuracyFactor;
  bool applied() const { return outcome != AccuracyOutcome::not_applied; }
  bool ok() const { return outcome == AccuracyOutcome::passed; }
};

AccuracyVerdict judge_accuracy(const AccuracyInputs& in, AccuracyMode mode, double factor);

}  // namespace egg
