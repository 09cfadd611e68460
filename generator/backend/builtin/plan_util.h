// Small helpers the families' planners share: how a node is named in messages, which dtypes a
// kernel stores, which values a node reads.
#pragma once

#include <string>
#include <vector>

#include "spec/spec.h"

namespace egg::backend::builtin {

// "`torch.cumsum` (in `return torch.cumsum(x, 1)`)" for error messages.
inline std::string quote(const spec::Node& n) {
  return "`" + n.target + "`" + (n.code.empty() ? "" : " (in `" + n.code + "`)");
}

// " (line 7)", or nothing when the line is unknown.
inline std::string at_line(const spec::Node& n) {
  return n.where.line > 0 ? " (line " + std::to_string(n.where.line) + ")" : "";
}

// True for the dtypes the builtin kernels read and write as floats.
inline bool float_storage(spec::DType d) {
  return d == spec::DType::float32 || d == spec::DType::float16 || d == spec::DType::bfloat16;
}

// The names of the values (inputs, params, nodes) a node reads.
inline std::vector<std::string> node_args(const spec::Node& n) {
  std::vector<std::string> out;
  for (const auto& a : n.args)
    if (a.kind == spec::Arg::Kind::node) out.push_back(a.node);
  return out;
}

}  // namespace egg::backend::builtin
