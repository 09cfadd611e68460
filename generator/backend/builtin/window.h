// Sliding-window geometry shared by the pooling and convolution planners: spatial attributes
// spread over (D, H, W), and the template context that describes one window.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace egg::backend::builtin {

using Dims3 = std::array<std::int64_t, 3>;

// An int-or-list attribute spread over `dims` spatial dims (right-aligned into D, H, W); false when
// it is neither.
inline bool spread(const nlohmann::json& v, int dims, Dims3& out) {
  std::vector<std::int64_t> vals;
  if (v.is_number_integer())
    vals.assign(dims, v.get<std::int64_t>());
  else if (v.is_array() && v.size() == 1 && v[0].is_number_integer())
    vals.assign(dims, v[0].get<std::int64_t>());
  else if (v.is_array() && static_cast<int>(v.size()) == dims) {
    for (const auto& x : v) {
      if (!x.is_number_integer()) return false;
      vals.push_back(x.get<std::int64_t>());
    }
  } else {
    return false;
  }
  for (int k = 0; k < dims; ++k) out[3 - dims + k] = vals[k];
  return true;
}

// The window's sizes for the templates: id/ih/iw (input), od/oh/ow (output), kd/kh/kw (kernel),
// sd/sh/sw (stride), pd/ph/pw (leading padding), dd/dh/dw (dilation).
inline void add_window_context(nlohmann::json& ctx, const Dims3& in, const Dims3& out,
                               const Dims3& kernel, const Dims3& stride, const Dims3& pad,
                               const Dims3& dilation) {
  const char* axes[3] = {"d", "h", "w"};
  for (int k = 0; k < 3; ++k) {
    const std::string a = axes[k];
    ctx["i" + a] = in[k];
    ctx["o" + a] = out[k];
    ctx["k" + a] = kernel[k];
    ctx["s" + a] = stride[k];
    ctx["p" + a] = pad[k];
    ctx["d" + a] = dilation[k];
  }
}

}  // namespace egg::backend::builtin
