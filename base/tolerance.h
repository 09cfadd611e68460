// Elementwise comparison of a candidate's output with the reference: |out - ref| <= atol +
// rtol*|ref|, and the default tolerances per dtype. The generator's per-spec policy
// (pipeline/tolerance.h) and egg-harness both start from these. Plain C++.
#pragma once

#include <span>

#include "base/comparison.h"

namespace egg {

// Compares elementwise. NaN matches NaN; +-inf matches the same inf; NaN in out where ref is a
// number is counted in nan_count and bad_count. Requires out.size() == ref.size().
Comparison compare(std::span<const double> out, std::span<const double> ref, Tolerance tol);
// The same for float32 data, without converting to double first (errors are computed in double).
Comparison compare(std::span<const float> out, std::span<const float> ref, Tolerance tol);
// float32 data against a float64 reference (the accuracy rule's comparison: base/accuracy.h).
Comparison compare(std::span<const float> out, std::span<const double> ref, Tolerance tol);

}  // namespace egg
