// Small helpers the families' planners share: how a node is named in messages, which dtypes a
// kernel stores, which values a node reads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "backend/builtin/op_table.h"
#include "contract/contract.h"
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

// normalized_shape of a layer or RMS norm node as a list of ints (an int is a one-element list);
// empty when malformed.
inline spec::Shape normalized_shape(const spec::Node& n) {
  const nlohmann::json& v = n.attrs.value("normalized_shape", nlohmann::json());
  if (v.is_number_integer()) return {v.get<std::int64_t>()};
  spec::Shape out;
  if (!v.is_array()) return {};
  for (const auto& d : v) {
    if (!d.is_number_integer()) return {};
    out.push_back(d.get<std::int64_t>());
  }
  return out;
}

// A node's number attribute `key`, or `fallback` where it is absent or not a number.
inline double attr_number(const spec::Node& n, const std::string& key, double fallback) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

// A dim as a non-negative index into `rank` dims (Python's negative dims count from the end).
inline std::int64_t dim_of(std::int64_t d, size_t rank) {
  return d < 0 ? d + static_cast<std::int64_t>(rank) : d;
}

// True when view node `n` (of the rank of its result) swaps dims a and b (a < b) and nothing
// else: transpose(a, b) in either order or with negative dims, or the permute that does the same.
inline bool swaps_dims(const spec::Node& n, std::int64_t a, std::int64_t b) {
  const size_t r = n.shape.size();
  if (n.op == "transpose") {
    const std::int64_t x = dim_of(n.attrs.value("dim0", std::int64_t{0}), r);
    const std::int64_t y = dim_of(n.attrs.value("dim1", std::int64_t{1}), r);
    return std::min(x, y) == a && std::max(x, y) == b;
  }
  if (n.op != "permute") return false;
  const nlohmann::json& dims = n.attrs.value("dims", nlohmann::json());
  if (!dims.is_array() || dims.size() != r) return false;
  for (size_t k = 0; k < r; ++k) {
    const auto d = static_cast<std::int64_t>(k);
    const std::int64_t want = d == a ? b : d == b ? a : d;
    if (!dims[k].is_number_integer() || dim_of(dims[k].get<std::int64_t>(), r) != want)
      return false;
  }
  return true;
}

// An argument that reads the value `name` (a node, an input or a param).
inline spec::Arg node_arg(const std::string& name) {
  spec::Arg a;
  a.kind = spec::Arg::Kind::node;
  a.node = name;
  return a;
}

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The smallest power of two that is at least v (1 for v <= 1).
inline std::int64_t next_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// launch()'s argument `a` (an input or param) as the kernels' host programs (EGG_HOST_EVAL) take
// it: its pointer, C type and place among launch()'s inputs and params (their `in` array).
inline nlohmann::json host_input(const contract::Contract& c, const contract::LaunchArg& a) {
  int position = 0;
  for (const auto& b : c.args) {
    if (&b == &a) break;
    if (b.role != contract::Role::output) ++position;
  }
  return {{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}, {"arg", position}};
}

// A scalar argument.
inline spec::Arg scalar_arg(double v) {
  spec::Arg a;
  a.kind = spec::Arg::Kind::scalar;
  a.scalar = v;
  return a;
}

// A node a graph rewrite (lowering, raising, algebra) derives from `from`: its line, target and
// source, for messages.
inline spec::Node part(const spec::Node& from, const std::string& name, const std::string& op,
                       std::vector<spec::Arg> args, nlohmann::json attrs, spec::Shape shape,
                       spec::DType dtype) {
  spec::Node n;
  n.name = name;
  n.op = op;
  n.target = from.target;
  n.args = std::move(args);
  n.attrs = std::move(attrs);
  n.shape = std::move(shape);
  n.dtype = dtype;
  n.where = from.where;
  n.code = from.code;
  return n;
}

// The names of the values (inputs, params, nodes) a node reads, the items of a list argument
// (cat, stack) included.
inline std::vector<std::string> node_args(const spec::Node& n) {
  std::vector<std::string> out;
  for (const auto& a : n.args) {
    if (a.kind == spec::Arg::Kind::node) out.push_back(a.node);
    if (a.kind == spec::Arg::Kind::list)
      for (const auto& item : a.items)
        if (item.kind == spec::Arg::Kind::node) out.push_back(item.node);
  }
  return out;
}

// `s` with the nodes in `dropped` left out and each node `rewrites` names replaced, in place, by
// its nodes (a graph rewrite's splice: algebra.h, algebra_conv.h).
inline spec::Spec splice(const spec::Spec& s, const std::set<const spec::Node*>& dropped,
                         std::map<const spec::Node*, std::vector<spec::Node>> rewrites) {
  spec::Spec out = s;
  out.nodes.clear();
  for (const auto& n : s.nodes) {
    if (dropped.count(&n)) continue;
    const auto it = rewrites.find(&n);
    if (it == rewrites.end()) {
      out.nodes.push_back(n);
      continue;
    }
    for (auto& r : it->second) out.nodes.push_back(std::move(r));
  }
  return out;
}

// How often each value (input, param, node) is read by the nodes of `s`, a value the graph returns
// counting twice more: a rewrite folds away only a value with one reader that is not returned.
inline std::map<std::string, int> uses_of(const spec::Spec& s) {
  std::map<std::string, int> uses;
  for (const auto& n : s.nodes)
    for (const auto& a : node_args(n)) ++uses[a];
  for (const auto& o : s.outputs) uses[o.node] += 2;
  return uses;
}

// The nodes the values `roots` are computed from, the roots among them (a prologue's nodes: the
// ancestors of the anchor's operands; inputs and params are no nodes).
inline std::set<std::string> ancestors(const spec::Spec& s, std::vector<std::string> roots) {
  std::set<std::string> found;
  while (!roots.empty()) {
    const std::string v = roots.back();
    roots.pop_back();
    const auto* n = s.find_node(v);
    if (!n || found.count(v)) continue;
    found.insert(v);
    for (auto& a : node_args(*n)) roots.push_back(a);
  }
  return found;
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

// How a one-anchor kernel's epilogue is found: every node but the anchor and the ones `skip` takes
// out (the prologue, ...) is an element-wise op of the table after the anchor, producing the
// anchor's output `shape` (`shape_of` names it in messages: "the pool output"), with its tensors
// passing `check_leaf`. It reads none of `input_side` (values before the anchor: the epilogue sees
// the anchor's result only) and, with `from_anchor`, reads the anchor's result or an earlier
// epilogue value.
struct EpilogueRule {
  spec::Shape shape;
  std::string shape_of;
  std::set<std::string> input_side;
  bool from_anchor = false;
  std::function<bool(const spec::Node&)> skip;
  std::function<std::optional<UserError>(const spec::Tensor&, const spec::Node&)> check_leaf;
};

// The epilogue of anchor `an` in spec order, or the reason (op and line) it is not one.
inline std::variant<std::vector<const spec::Node*>, UserError> collect_epilogue(
    const spec::Spec& s, const OpTable& ops, const spec::Node& an, const EpilogueRule& rule) {
  const std::string after = "after " + quote(an) + at_line(an) + " only element-wise ops fuse";
  std::vector<const spec::Node*> epilogue;
  std::set<std::string> epi;
  for (const auto& n : s.nodes) {
    if (&n == &an || (rule.skip && rule.skip(n))) continue;
    if (auto e = ops.check(s, n))
      return UserError(n.where, std::string(e->what()) + "; " + after, e->hint());
    bool from_anchor = false;
    for (const auto& a : node_args(n)) {
      if (rule.input_side.count(a))
        return UserError(n.where,
                         quote(n) + " reads `" + a + "`, which " + quote(an) +
                             " reads, after it; the epilogue of " + quote(an) +
                             " sees its result only",
                         "split the op into two op.py files");
      if (a == an.name || epi.count(a)) from_anchor = true;
      if (const auto* t = s.find_tensor(a))
        if (auto e = rule.check_leaf(*t, n)) return *e;
    }
    if (rule.from_anchor && !from_anchor)
      return UserError(
          n.where,
          quote(n) + " does not read the result of " + quote(an) + "; " + after + " on its result",
          "compute it in get_inputs() or the model's parameters, or split the op");
    if (n.shape != rule.shape)
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    ", not " + rule.shape_of + " " +
                                    spec::shape_string(rule.shape) + "; " + after);
    epi.insert(n.name);
    epilogue.push_back(&n);
  }
  return epilogue;
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
