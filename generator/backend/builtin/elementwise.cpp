#include "backend/builtin/elementwise.h"

#include "backend/builtin/index_ir.h"
#include "backend/builtin/plan_util.h"

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

std::variant<ElementwisePlan, UserError> ElementwiseFamily::analyze(const spec::Spec& s) const {
  const SourceLocation file_only{s.op_file, 0, "output"};
  if (s.outputs.empty()) return UserError(file_only, "the op has no outputs");
  const std::int64_t n = spec::numel(s.outputs.front().shape);
  auto integer = [](spec::DType d) { return d == spec::DType::int64 || d == spec::DType::int32; };
  for (const auto& o : s.outputs) {
    // The line of the node that computes the output, so this precise reason wins over the other
    // families' "no <anchor> in the op" (planner.cpp, explain_rejection).
    const spec::Node* producer = s.find_node(o.node);
    if (!float_storage(o.dtype) && !integer(o.dtype) && o.dtype != spec::DType::boolean)
      return UserError(producer ? producer->where : file_only,
                       "output " + o.name + " is " + spec::dtype_name(o.dtype) +
                           "; the builtin element-wise kernels write float32, float16, bfloat16, "
                           "int64, int32 or bool",
                       "return a floating-point tensor (e.g. .float())");
    if (spec::numel(o.shape) != n)
      return UserError(file_only,
                       "outputs have different element counts (" +
                           spec::shape_string(s.outputs.front().shape) + " and " +
                           spec::shape_string(o.shape) + ")",
                       "return outputs of one size, or split the op into two op.py files");
  }
  auto check_leaf = [&](const spec::Tensor& t,
                        const SourceLocation& at) -> std::optional<UserError> {
    if (!float_storage(t.dtype) && t.dtype != spec::DType::boolean && !integer(t.dtype))
      return UserError(at,
                       "tensor " + t.name + " is " + spec::dtype_name(t.dtype) +
                           "; the builtin element-wise kernels read float32, float16, bfloat16, "
                           "bool, int64 or int32",
                       "convert it in get_inputs() or the model");
    return std::nullopt;
  };
  for (const auto& node : s.nodes) {
    if (auto e = index_ir_check(s, node, ops_)) return *e;  // integer ops without a form too
    std::vector<std::string> reads = node_args(node);
    for (const auto& a : node.args)
      for (const auto& item : a.items)
        if (item.kind == spec::Arg::Kind::node) reads.push_back(item.node);
    for (const auto& r : reads) {
      if (const auto* t = s.find_tensor(r))
        if (auto e = check_leaf(*t, node.where)) return *e;
      if (!ops_.knows(node.op)) continue;
      const Shape* read = s.shape_of(r);
      if (!read)
        return UserError(node.where, quote(node) + " reads `" + r +
                                         "`, which is not an input, parameter or earlier op");
      const Shape& shape = *read;
      if (!broadcasts_to(shape, node.shape))
        return UserError(node.where, "`" + r + "` of shape " + spec::shape_string(shape) +
                                         " does not broadcast to the shape " +
                                         spec::shape_string(node.shape) + " of " + quote(node));
    }
  }
  for (const auto& o : s.outputs)
    if (const auto* t = s.find_tensor(o.node))
      if (auto e = check_leaf(*t, file_only)) return *e;
  return ElementwisePlan{n};
}

Candidate ElementwiseFamily::render(const spec::Spec& s, const contract::Contract& c,
                                    const ElementwisePlan& plan, const ElementwiseParams& p) const {
  const std::int64_t n = plan.numel;
  const std::string fn = "egg_" + c.name;

  std::map<std::string, std::string> ptr_of;  // tensor → launch() argument
  for (const auto& a : c.args)
    if (a.role != contract::Role::output) ptr_of[a.source] = a.var;
  const IndexProgram prog = build_index_program(s, ops_, ptr_of);

  // Operands in launch() order: a tensor read at the output element is loaded by the schedule
  // (as 16-byte vectors where every such pointer is aligned); every tensor's pointer goes in.
  json fulls = json::array(), ptrs = json::array(), outs = json::array();
  json full_ptrs = json::array(), args = json::array();
  int min_size = 16;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) continue;
    const auto r = std::find_if(prog.reads.begin(), prog.reads.end(),
                                [&](const IndexRead& x) { return x.tensor == a.source; });
    if (r == prog.reads.end()) continue;
    const std::string ctype = contract::c_type(a.dtype);
    ptrs.push_back(host_input(c, a));
    if (r->full) {
      fulls.push_back({{"ptr", a.var},
                       {"ctype", ctype},
                       {"value", full_value(a.var)},
                       {"vtype", full_type(*r)},
                       {"to", full_load(*r)}});
      full_ptrs.push_back(a.var);
      min_size = std::min(min_size, spec::dtype_size(a.dtype));
    }
    args.push_back(a.var);
  }
  int slot = 0;
  for (const auto& a : c.args) {
    if (a.role != contract::Role::output) continue;
    const bool integer_out = a.dtype == spec::DType::int64 || a.dtype == spec::DType::int32;
    outs.push_back({{"ptr", a.var},
                    {"ctype", contract::c_type(a.dtype)},
                    {"rtype", integer_out ? "long long" : "float"},
                    {"convert", integer_out ? "egg_from_int" : "egg_from_float"},
                    {"slot", slot++}});
    full_ptrs.push_back(a.var);
    args.push_back(a.var);
    min_size = std::min(min_size, spec::dtype_size(a.dtype));
  }
  json results = json::array();
  for (size_t k = 0; k < prog.results.size(); ++k)
    results.push_back({{"slot", k}, {"value", prog.results[k]}});
  size_t layout = 0;
  for (const auto& node : s.nodes) layout += ops_.knows(node.op) ? 0 : 1;

  const int vec = p.vectorized ? 16 / min_size : 1;
  json ctx = {
      {"fn", fn},
      {"helpers", ops_.helpers()},
      {"num_ops", s.nodes.size()},
      {"numel", n},
      {"max_numel", prog.max_numel},
      {"structure", "one fused kernel, " +
                        std::string(p.vectorized ? "16-byte vectors" : "scalar accesses") +
                        (layout ? ", " + std::to_string(layout) + " layout ops by index" : "")},
      {"block", p.block},
      {"unroll", p.unroll},
      {"vec", vec},
      {"persistent", p.persistent ? "true" : "false"},
      {"blocks_per_sm", p.blocks_per_sm},
      {"max_tile", static_cast<std::int64_t>(p.block) * vec * p.unroll},
      {"fulls", fulls},
      {"ptrs", ptrs},
      {"outs", outs},
      {"num_outs", outs.size()},
      {"statements", prog.statements},
      {"results", results},
      {"full_ptrs", full_ptrs},
      {"args", args}};
  Candidate cand;
  cand.id = "elementwise.fused:b" + std::to_string(p.block) + ":u" + std::to_string(p.unroll) +
            ":v" + std::to_string(vec) +
            (p.persistent ? ":persistent" + std::to_string(p.blocks_per_sm) : "");
  cand.summary = "fused element-wise chain of " + std::to_string(s.nodes.size()) + " ops" +
                 (layout ? " (" + std::to_string(layout) + " layout)" : "") + ", block " +
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

std::vector<ElementwiseParams> ElementwiseFamily::structure_params(const spec::Spec&,
                                                                   const contract::Contract&,
                                                                   const ElementwisePlan&) const {
  // One fused pass with 16-byte vectors (least traffic, fewest instructions), then the scalar pass.
  std::vector<ElementwiseParams> out;
  for (bool vectorized : {true, false}) {
    ElementwiseParams p;
    p.vectorized = vectorized;
    out.push_back(p);
  }
  return out;
}

ElementwiseParams ElementwiseParams::from_json(const json& j) {
  ElementwiseParams p;
  p.block = j.value("block", p.block);
  p.unroll = j.value("unroll", p.unroll);
  p.vectorized = j.value("vectorized", p.vectorized);
  p.persistent = j.value("persistent", p.persistent);
  p.blocks_per_sm = j.value("blocks_per_sm", p.blocks_per_sm);
  return p;
}

std::vector<ElementwiseParams> ElementwiseFamily::tuning_params(
    const spec::Spec&, const contract::Contract&, const ElementwisePlan& plan,
    const ElementwiseParams& incumbent, const std::string& bottleneck) const {
  return elementwise_tuning_space(plan.numel, bottleneck, incumbent.vectorized);
}

std::optional<ElementwiseParams> ElementwiseFamily::fallback_params(
    const spec::Spec&, const contract::Contract&, const ElementwisePlan&,
    const ElementwiseParams& failed) const {
  if (!failed.vectorized) return std::nullopt;
  ElementwiseParams p;
  p.vectorized = false;
  return p;
}

}  // namespace egg::backend::builtin
