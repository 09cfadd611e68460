#include "backend/builtin/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

}  // namespace

json ElementwiseParams::to_json() const {
  return {{"block", block},
          {"unroll", unroll},
          {"vectorized", vectorized},
          {"persistent", persistent},
          {"blocks_per_sm", blocks_per_sm}};
}

ElementwiseFamily::ElementwiseFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      kernel_(render::load_template(data_dir, "elementwise/kernel.cuh.tmpl")),
      launch_(render::load_template(data_dir, "elementwise/launch.tmpl")) {}

std::vector<std::pair<std::string, std::string>> ElementwiseFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  inputs.push_back({kernel_.name, kernel_.text});
  inputs.push_back({launch_.name, launch_.text});
  return inputs;
}

std::optional<UserError> ElementwiseFamily::cannot_implement(const spec::Spec& s) const {
  const SourceLocation file_only{s.op_file, 0, "output"};
  const Shape& out_shape = s.outputs.front().shape;
  for (const auto& o : s.outputs) {
    // The line of the node that computes the output, so this precise reason wins over the other
    // families' "no <anchor> in the op" (planner.cpp, explain_rejection).
    const spec::Node* producer = s.find_node(o.node);
    if (!spec::is_floating(o.dtype) || o.dtype == spec::DType::float64)
      return UserError(producer ? producer->where : file_only,
                       "output " + o.name + " is " + spec::dtype_name(o.dtype) +
                           "; the builtin element-wise kernels write float32, float16 or bfloat16",
                       "return a floating-point tensor (e.g. .float())");
    if (o.shape != out_shape)
      return UserError(file_only,
                       "outputs have different shapes (" + spec::shape_string(out_shape) + " and " +
                           spec::shape_string(o.shape) + ")",
                       "return outputs of one shape, or split the op into two op.py files");
  }
  auto check_leaf = [&](const spec::Tensor& t,
                        const SourceLocation& at) -> std::optional<UserError> {
    if (!(spec::is_floating(t.dtype) && t.dtype != spec::DType::float64) &&
        t.dtype != spec::DType::boolean)
      return UserError(
          at,
          "tensor " + t.name + " is " + spec::dtype_name(t.dtype) +
              "; the builtin element-wise kernels read float32, float16, bfloat16 or bool",
          "convert it in get_inputs() or the model");
    if (!broadcasts_to(t.shape, out_shape))
      return UserError(
          at,
          "tensor " + t.name + " of shape " + spec::shape_string(t.shape) +
              " does not broadcast to the output shape " + spec::shape_string(out_shape),
          "the builtin element-wise family needs operands that broadcast to the output");
    return std::nullopt;
  };
  for (const auto& n : s.nodes) {
    if (auto e = ops_.check(s, n)) return e;
    for (const auto& a : n.args)
      if (a.kind == spec::Arg::Kind::node)
        if (const auto* t = s.find_tensor(a.node))
          if (auto e = check_leaf(*t, n.where)) return e;
    if (!broadcasts_to(n.shape, out_shape))
      return UserError(n.where, "`" + n.target + "` produces shape " + spec::shape_string(n.shape) +
                                    " that does not broadcast to the output " +
                                    spec::shape_string(out_shape));
  }
  for (const auto& o : s.outputs)
    if (const auto* t = s.find_tensor(o.node))
      if (auto e = check_leaf(*t, file_only)) return e;
  return std::nullopt;
}

Candidate ElementwiseFamily::render(const spec::Spec& s, const contract::Contract& c,
                                    const ElementwiseParams& p) const {
  const Shape& out_shape = s.outputs.front().shape;
  const std::int64_t n = spec::numel(out_shape);
  const std::string fn = "egg_" + c.name;

  // Operands: inputs and params the graph reads, in launch() order.
  std::set<std::string> used;
  for (const auto& node : s.nodes)
    for (const auto& a : node.args)
      if (a.kind == spec::Arg::Kind::node && s.find_tensor(a.node)) used.insert(a.node);
  for (const auto& o : s.outputs)
    if (s.find_tensor(o.node)) used.insert(o.node);

  std::map<std::string, std::string> value_of;  // spec value name → float variable
  json operands = json::array(), full_operands = json::array(), outs = json::array();
  json full_ptrs = json::array(), args = json::array();
  int min_size = 16;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) continue;
    if (!used.count(a.source)) continue;
    const bool full = spec::numel(a.shape) == n;
    const std::string value = "a" + std::to_string(operands.size());
    value_of[a.source] = value;
    const std::string ctype = contract::c_type(a.dtype);
    std::string load =
        full ? "egg_to_float(" + a.var + "_v.v[j])"
             : "egg_to_float(" + a.var + "[" + broadcast_offset(a.shape, out_shape) + "])";
    operands.push_back({{"ptr", a.var}, {"ctype", ctype}, {"value", value}, {"load", load}});
    if (full) {
      full_operands.push_back({{"ptr", a.var}, {"ctype", ctype}});
      full_ptrs.push_back(a.var);
      min_size = std::min(min_size, spec::dtype_size(a.dtype));
    }
    args.push_back(a.var);
  }
  int slot = 0;
  for (const auto& a : c.args) {
    if (a.role != contract::Role::output) continue;
    outs.push_back({{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}, {"slot", slot++}});
    full_ptrs.push_back(a.var);
    args.push_back(a.var);
    min_size = std::min(min_size, spec::dtype_size(a.dtype));
  }

  json steps = json::array();
  for (const auto& node : s.nodes) {
    std::string value = "t" + std::to_string(steps.size());
    steps.push_back({{"value", value}, {"expr", ops_.expression(s, node, value_of)}});
    value_of[node.name] = value;
  }
  json results = json::array();
  slot = 0;
  for (const auto& o : s.outputs)
    results.push_back({{"slot", slot++}, {"value", value_of.at(o.node)}});

  const int vec = p.vectorized ? 16 / min_size : 1;
  json ctx = {{"fn", fn},
              {"helpers", ops_.helpers()},
              {"num_ops", s.nodes.size()},
              {"numel", n},
              {"structure", "one fused kernel, " +
                                std::string(p.vectorized ? "16-byte vectors" : "scalar accesses")},
              {"block", p.block},
              {"unroll", p.unroll},
              {"vec", vec},
              {"persistent", p.persistent ? "true" : "false"},
              {"blocks_per_sm", p.blocks_per_sm},
              {"max_tile", static_cast<std::int64_t>(p.block) * vec * p.unroll},
              {"operands", operands},
              {"full_operands", full_operands},
              {"outs", outs},
              {"num_outs", outs.size()},
              {"steps", steps},
              {"results", results},
              {"full_ptrs", full_ptrs},
              {"args", args}};
  Candidate cand;
  cand.id = "elementwise.fused:b" + std::to_string(p.block) + ":u" + std::to_string(p.unroll) +
            ":v" + std::to_string(vec) +
            (p.persistent ? ":persistent" + std::to_string(p.blocks_per_sm) : "");
  cand.summary = "fused element-wise chain of " + std::to_string(s.nodes.size()) + " ops, block " +
                 std::to_string(p.block) + ", " + std::to_string(vec) + "-wide vectors, unroll " +
                 std::to_string(p.unroll) + (p.persistent ? ", persistent grid" : ", full grid");
  cand.params = p.to_json();
  cand.params["vec"] = vec;
  cand.code.device_code = render::render(kernel_.text, ctx, kernel_.name);
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

}  // namespace egg::backend::builtin

namespace egg::backend::builtin {

std::vector<ElementwiseParams> elementwise_tuning_space(std::int64_t numel,
                                                        const std::string& bottleneck,
                                                        bool vectorized) {
  // Expert prior: a memory-bound stream wants enough bytes in flight per SM (unroll 2-4 of 16-byte
  // vectors, 256 threads); a small problem is latency-bound and wants more, smaller blocks.
  const bool small = numel < (1 << 20);
  std::vector<ElementwiseParams> space;
  auto add = [&](int block, int unroll, bool persistent) {
    ElementwiseParams p;
    p.block = block;
    p.unroll = unroll;
    p.vectorized = vectorized;
    p.persistent = persistent;
    space.push_back(p);
  };
  if (small || bottleneck == "latency" || bottleneck == "launch") {
    add(128, 1, false);
    add(256, 1, false);
    add(64, 1, false);
  } else {
    add(256, 2, false);
    add(256, 4, false);
    add(512, 2, false);
    add(128, 4, false);
    add(256, 1, false);
    add(256, 4, true);
  }
  return space;
}

std::vector<Candidate> ElementwiseFamily::structures(const spec::Spec& s,
                                                     const contract::Contract& c) const {
  // One fused pass with 16-byte vectors (least traffic, fewest instructions), then the scalar pass.
  std::vector<Candidate> out;
  for (bool vectorized : {true, false}) {
    ElementwiseParams p;
    p.vectorized = vectorized;
    out.push_back(render(s, c, p));
  }
  return out;
}

std::vector<Candidate> ElementwiseFamily::tunings(const spec::Spec& s, const contract::Contract& c,
                                                  const Candidate& incumbent,
                                                  const std::string& bottleneck) const {
  std::vector<Candidate> out;
  for (const auto& p : elementwise_tuning_space(spec::numel(s.outputs.front().shape), bottleneck,
                                                incumbent.params.value("vectorized", true)))
    out.push_back(render(s, c, p));
  return out;
}

std::optional<Candidate> ElementwiseFamily::fallback(const spec::Spec& s,
                                                     const contract::Contract& c,
                                                     const Candidate& failed) const {
  if (!failed.params.value("vectorized", true)) return std::nullopt;
  ElementwiseParams p;
  p.vectorized = false;
  return render(s, c, p);
}

}  // namespace egg::backend::builtin
