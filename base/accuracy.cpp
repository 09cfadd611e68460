#include "base/accuracy.h"

#include <algorithm>
#include <cmath>

namespace egg {

std::string_view accuracy_mode_name(AccuracyMode m) {
  switch (m) {
    case AccuracyMode::off:
      return "off";
    case AccuracyMode::automatic:
      return "auto";
    case AccuracyMode::on:
      return "on";
  }
  return "auto";
}

std::optional<AccuracyMode> accuracy_mode_from_name(std::string_view name) {
  for (AccuracyMode m : {AccuracyMode::off, AccuracyMode::automatic, AccuracyMode::on})
    if (accuracy_mode_name(m) == name) return m;
  return std::nullopt;
}

AccuracyVerdict judge_accuracy(const AccuracyInputs& in, AccuracyMode mode, double factor) {
  AccuracyVerdict v;
  v.factor = factor;
  v.torch_max_abs = in.torch_vs_exact.max_abs_error;
  v.torch_mean_abs = in.torch_vs_exact.mean_abs_error();
  v.kernel_max_abs = in.kernel_vs_exact.max_abs_error;
  v.kernel_mean_abs = in.kernel_vs_exact.mean_abs_error();
  // Any fp32 result of a value is off by up to half an ulp of it: an exact PyTorch output does
  // not demand an exact kernel.
  v.floor =
      std::ldexp(std::max(in.torch_vs_exact.max_abs_ref, in.kernel_vs_exact.max_abs_ref), -24);
  const bool determined = in.torch_vs_exact.ok();
  if (mode == AccuracyMode::off || (mode == AccuracyMode::automatic && determined)) return v;
  if (in.kernel_vs_torch_special.bad_count > 0) {
    v.outcome = AccuracyOutcome::special_values;
    return v;
  }
  const bool max_ok = v.kernel_max_abs <= factor * std::max(v.torch_max_abs, v.floor);
  const bool mean_ok = v.kernel_mean_abs <= factor * std::max(v.torch_mean_abs, v.floor);
  v.outcome = max_ok && mean_ok ? AccuracyOutcome::passed : AccuracyOutcome::error_too_big;
  return v;
}

}  // namespace egg
