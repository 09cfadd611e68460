#include "base/tolerance.h"

#include "base/compare_element.h"

#include <algorithm>
#include <cmath>

namespace egg {

Tolerance default_tolerance(std::string_view dtype) {
  if (dtype == "float16" || dtype == "bfloat16") return {1e-2, 1e-2};
  if (dtype == "int64" || dtype == "int32" || dtype == "int8" || dtype == "uint8" ||
      dtype == "bool")
    return {0.0, 0.0};
  return {1e-4, 1e-4};
}

namespace {

template <class O, class R>
Comparison compare_impl(std::span<const O> out, std::span<const R> ref, Tolerance tol) {
  Comparison c;
  c.count = static_cast<std::int64_t>(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(out[i]), r = static_cast<double>(ref[i]);
    const ElementVerdict v = judge_element(o, r, tol.atol, tol.rtol);
    if (v.nan_in_out) ++c.nan_count;
    if (v.finite) {
      c.max_abs_error = std::max(c.max_abs_error, v.err);
      c.max_rel_error = std::max(c.max_rel_error, v.rel);
      ++c.finite_count;
      c.sum_abs_error += v.err;
      c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(r));
    }
    if (v.bad) {
      if (c.bad_count == 0) {
        c.first_bad_index = static_cast<std::int64_t>(i);
        c.bad_value = o;
        c.ref_value = r;
      }
      ++c.bad_count;
    }
  }
  return c;
}

}  // namespace

Comparison compare(std::span<const double> out, std::span<const double> ref, Tolerance tol) {
  return compare_impl(out, ref, tol);
}

Comparison compare(std::span<const float> out, std::span<const float> ref, Tolerance tol) {
  return compare_impl(out, ref, tol);
}

Comparison compare(std::span<const float> out, std::span<const double> ref, Tolerance tol) {
  return compare_impl(out, ref, tol);
}

}  // namespace egg
