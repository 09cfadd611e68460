// Elementwise comparison of a candidate's output with the reference: |out - ref| <= atol + rtol*|ref|,
// the default tolerances per dtype, and the percentile statistics of timings. Plain C++.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "comparison.h"

namespace egg::harness {

// Compares elementwise. NaN matches NaN; +-inf matches the same inf; NaN in out where ref is a
// number is counted in nan_count and bad_count. Requires out.size() == ref.size().
Comparison compare(std::span<const double> out, std::span<const double> ref, Tolerance tol);
// The same for float32 data, without converting to double first (errors are computed in double).
Comparison compare(std::span<const float> out, std::span<const float> ref, Tolerance tol);

// Median and 10th/90th percentiles (linear interpolation); zeros for an empty sample.
struct Summary {
  double median = 0, p10 = 0, p90 = 0;
};
Summary summarize(std::vector<double> samples);

}  // namespace egg::harness
