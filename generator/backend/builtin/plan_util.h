// Small helpers the families' planners share: how a node is named in messages, which dtypes a
// kernel stores, which values a node reads.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/builtin/op_table.h"
#include "spec/spec.h"
#include "util/error.h"

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

// A tensor an element-wise prologue or epilogue reads: float or bool storage, broadcasting to
// `shape`. `reader` says who reads it ("the builtin pool kernels read"), `shape_label` what
// `shape` is ("" or "the convolution's output ").
inline std::optional<UserError> check_leaf_tensor(const spec::Tensor& t, const spec::Shape& shape,
                                                  const spec::Node& at, const std::string& reader,
                                                  const std::string& shape_label = "") {
  if (!float_storage(t.dtype) && t.dtype != spec::DType::boolean)
    return UserError(at.where,
                     "tensor " + t.name + " is " + spec::dtype_name(t.dtype) + "; " + reader +
                         " float32, float16, bfloat16 or bool",
                     "convert it in get_inputs() or the model");
  if (!broadcasts_to(t.shape, shape))
    return UserError(at.where, "tensor " + t.name + " of shape " + spec::shape_string(t.shape) +
                                   " does not broadcast to " + shape_label +
                                   spec::shape_string(shape) + " in " + quote(at));
  return std::nullopt;
}

// The outputs of a one-anchor kernel: each is the anchor `an` or one of its `epilogue` nodes,
// stored as float32, float16 or bfloat16 of the anchor's output `shape`. The messages name the
// anchor's value (`result`, e.g. "the pool's result"), the `family` ("pool") and whose shape it is
// (`shape_of`, e.g. "the pool's").
inline std::optional<UserError> check_anchor_outputs(
    const spec::Spec& s, const spec::Node& an, const std::vector<const spec::Node*>& epilogue,
    const spec::Shape& shape, const SourceLocation& file_only, const std::string& result,
    const std::string& family, const std::string& shape_of) {
  std::set<std::string> epi;
  for (const auto* n : epilogue) epi.insert(n->name);
  if (s.outputs.empty()) return UserError(file_only, "the op has no outputs");
  for (const auto& o : s.outputs) {
    if (o.node != an.name && !epi.count(o.node))
      return UserError(file_only,
                       "output " + o.name + " (`" + o.node + "`) is not computed from " + quote(an),
                       "return " + result + " or element-wise ops of it");
    if (!float_storage(o.dtype) || o.shape != shape)
      return UserError(file_only, "output " + o.name + " is " + spec::dtype_name(o.dtype) + " " +
                                      spec::shape_string(o.shape) + "; the builtin " + family +
                                      " family writes float32, float16 or bfloat16 of " + shape_of +
                                      " shape");
  }
  return std::nullopt;
}

}  // namespace egg::backend::builtin
