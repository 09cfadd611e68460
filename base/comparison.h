// A tolerance and what a comparison found: the plain structs shared by the host comparison
// (base/tolerance.h) and egg-harness's GPU one (harness/device_compare.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace egg {

struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
};

// KernelBench's defaults: fp32 (and fp64) 1e-4/1e-4, fp16/bf16 1e-2/1e-2, integers and bool exact.
// `dtype` is a spec dtype name ("float32", "float16", ...); unknown names get the fp32 default.
Tolerance default_tolerance(std::string_view dtype);

// What compare() found. Errors are over all elements; "bad" elements fail the tolerance.
struct Comparison {
  std::int64_t count = 0;
  std::int64_t bad_count = 0;         // elements outside tolerance (NaN-in-output included)
  std::int64_t nan_count = 0;         // NaN in out where ref is not NaN
  std::int64_t first_bad_index = -1;  // flat index of the first failing element
  double bad_value = 0, ref_value = 0;
  double max_abs_error = 0;       // over finite pairs
  double max_rel_error = 0;       // |out-ref| / |ref|, over finite pairs with ref != 0
  std::int64_t finite_count = 0;  // pairs where both are finite
  double sum_abs_error = 0;       // over finite pairs (the mean error is this / finite_count)
  double max_abs_ref = 0;         // max |ref| over finite pairs
  double mean_abs_error() const { return finite_count ? sum_abs_error / finite_count : 0; }
  bool ok() const { return bad_count == 0; }
};

}  // namespace egg
