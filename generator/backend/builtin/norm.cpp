#include "backend/builtin/norm.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "backend/builtin/gpu_target.h"
#include "backend/builtin/plan_util.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;
using spec::Shape;

const std::set<std::string>& norm_ops() {
  static const std::set<std::string> ops = {"layer_norm", "rms_norm", "group_norm", "instance_norm",
                                            "batch_norm"};
  return ops;
}

// Positions of the norm's operands in the canonical args (python/egg_frontend/canonical.py).
struct NormArgs {
  int weight = -1, bias = -1, running_mean = -1, running_var = -1;
};
NormArgs norm_args(const std::string& op) {
  if (op == "layer_norm" || op == "group_norm") return {1, 2, -1, -1};
  if (op == "rms_norm") return {1, -1, -1, -1};
  return {3, 4, 1, 2};  // batch_norm, instance_norm: input, running_mean, running_var, weight, bias
}

bool float_dtype(spec::DType d) { return spec::is_floating(d) && d != spec::DType::float64; }

// The tensor (input or param) an argument names, or nullptr when the argument is None / absent.
const spec::Tensor* arg_tensor(const spec::Spec& s, const spec::Node& n, int k) {
  if (k < 0 || k >= static_cast<int>(n.args.size())) return nullptr;
  const auto& a = n.args[static_cast<size_t>(k)];
  return a.kind == spec::Arg::Kind::node ? s.find_tensor(a.node) : nullptr;
}
bool arg_is_none(const spec::Node& n, int k) {
  return k < 0 || k >= static_cast<int>(n.args.size()) ||
         n.args[static_cast<size_t>(k)].kind == spec::Arg::Kind::none;
}

const spec::Node* find_norm(const spec::Spec& s) {
  for (const auto& n : s.nodes)
    if (norm_ops().count(n.op)) return &n;
  return nullptr;
}

NormProblem problem_of(const spec::Spec& s);

// The values the spec computes, split around the norm: the prologue (the norm input's ancestors)
// and the epilogue (what the outputs need, given the norm's input and result).
NormGraph make_graph(const spec::Spec& s) {
  NormGraph p;
  p.norm = find_norm(s);
  p.input = p.norm->args.at(0).node;
  auto collect = [&](const std::vector<std::string>& targets, const std::set<std::string>& stops,
                     std::vector<const spec::Node*>& steps, std::vector<std::string>& leaves) {
    std::set<std::string> need;
    std::function<void(const std::string&)> visit = [&](const std::string& name) {
      if (stops.count(name) || need.count(name)) return;
      need.insert(name);
      if (s.find_tensor(name)) return;
      if (const spec::Node* n = s.find_node(name))
        for (const auto& a : n->args)
          if (a.kind == spec::Arg::Kind::node) visit(a.node);
    };
    for (const auto& t : targets) visit(t);
    for (const auto& n : s.nodes)
      if (need.count(n.name) && !s.find_tensor(n.name)) steps.push_back(&n);
    for (const auto& t : s.inputs)
      if (need.count(t.name)) leaves.push_back(t.name);
    for (const auto& t : s.params)
      if (need.count(t.name)) leaves.push_back(t.name);
  };
  collect({p.input}, {}, p.pro_steps, p.pro_leaves);
  std::vector<std::string> outs;
  for (const auto& o : s.outputs) outs.push_back(o.node);
  collect(outs, {p.norm->name, p.input}, p.epi_steps, p.epi_leaves);
  return p;
}

std::string lit(double v) { return float_literal(v); }

}  // namespace

json NormParams::to_json() const {
  json j = {{"structure", structure}, {"tpr", tpr},       {"rpb", rpb},
            {"block", block},         {"splits", splits}, {"vectorized", vectorized}};
  if (cluster != 0) j["cluster"] = cluster;  // absent: no row kept on chip by a cluster
  return j;
}

NormFamily::NormFamily(const std::filesystem::path& data_dir)
    : ops_(data_dir),
      common_(render::load_template(data_dir, "norm/common.cuh.tmpl")),
      row_(render::load_template(data_dir, "norm/row.cuh.tmpl")),
      cluster_(render::load_template(data_dir, "norm/cluster.cuh.tmpl")),
      split_(render::load_template(data_dir, "norm/split.cuh.tmpl")),
      pointwise_(render::load_template(data_dir, "norm/normalize.cuh.tmpl")),
      launch_(render::load_template(data_dir, "norm/launch.tmpl")),
      clusters_(render::load_template(data_dir, "reduction/clusters.cuh")),
      keep_pool_(render::load_template(data_dir, "common/keep_pool.cuh")) {}

std::vector<std::pair<std::string, std::string>> NormFamily::key_inputs() const {
  auto inputs = ops_.key_inputs();
  for (const auto* t :
       {&common_, &row_, &split_, &pointwise_, &cluster_, &launch_, &clusters_, &keep_pool_})
    inputs.push_back({t->name, t->text});
  return inputs;
}

namespace {

// The one norm of `s`, or why there is none (no line: another family explains better) or a second.
std::variant<const spec::Node*, UserError> single_norm(const spec::Spec& s) {
  const spec::Node* norm = find_norm(s);
  if (!norm)
    return UserError(SourceLocation{s.op_file, 0, "norm"},
                     "the op has no layer_norm, rms_norm, group_norm, instance_norm or batch_norm",
                     "the norm family fuses element-wise ops around one norm");
  for (const auto& n : s.nodes)
    if (&n != norm && norm_ops().count(n.op))
      return UserError(n.where,
                       "`" + n.target +
                           "` is a second norm in one op; the builtin norm family fuses one norm "
                           "(the first is `" +
                           norm->target + "` at line " + std::to_string(norm->where.line) + ")",
                       "split the op into two op.py files, one norm each");
  return norm;
}

// The norm's input: a full-size float tensor or element-wise value, not empty.
std::optional<UserError> check_norm_input(const spec::Spec& s, const spec::Node& norm) {
  const std::string what = "`" + norm.target + "`";
  const SourceLocation& at = norm.where;
  if (norm.args.empty() || norm.args[0].kind != spec::Arg::Kind::node)
    return UserError(at, what + " has no tensor input");
  const std::string& in_name = norm.args[0].node;
  const Shape& shape = norm.shape;
  if (!float_dtype(norm.dtype))
    return UserError(
        at,
        what + " on " + spec::dtype_name(norm.dtype) +
            " is not supported by the builtin backend (float32, float16 or bfloat16 only)",
        "convert the input with .float() or .half()");
  if (const auto* t = s.find_tensor(in_name)) {
    if (t->shape != shape || !float_dtype(t->dtype))
      return UserError(at, what + " input " + t->name +
                               " must be a float32/float16/bfloat16 tensor of the norm's shape");
  } else if (const auto* n = s.find_node(in_name)) {
    if (n->shape != shape)
      return UserError(
          at, what + " input shape " + spec::shape_string(n->shape) + " differs from its result");
  } else {
    return UserError(at,
                     what + " input `" + in_name + "` is not an input, parameter or earlier op");
  }
  if (spec::numel(shape) == 0) return UserError(at, what + " on an empty tensor");
  return std::nullopt;
}

// The norm's attributes (eps, normalized_shape, num_groups, the mode flag) and its operand tensors
// (weight, bias, running statistics in eval mode) against the shape they normalize by.
std::optional<UserError> check_norm_operands(const spec::Spec& s, const spec::Node& norm) {
  const std::string what = "`" + norm.target + "`";
  const SourceLocation& at = norm.where;
  const Shape& shape = norm.shape;
  const NormArgs na = norm_args(norm.op);
  auto param_of_shape = [&](int k, const Shape& want,
                            const std::string& role) -> std::optional<UserError> {
    if (arg_is_none(norm, k)) return std::nullopt;
    const spec::Tensor* t = arg_tensor(s, norm, k);
    if (!t)
      return UserError(
          at,
          what + " " + role + " must be a parameter, buffer or input tensor (not a computed value)",
          "pass the module's parameter directly");
    if (spec::numel(t->shape) != spec::numel(want) || !float_dtype(t->dtype))
      return UserError(at, what + " " + role + " " + t->name + " of shape " +
                               spec::shape_string(t->shape) + " (" + spec::dtype_name(t->dtype) +
                               ") does not match " + spec::shape_string(want));
    return std::nullopt;
  };
  const json& eps = norm.attrs.value("eps", json(1e-5));
  if (!(eps.is_number() || (eps.is_null() && norm.op == "rms_norm")))
    return UserError(at, what + " needs a numeric eps");
  Shape affine;
  if (norm.op == "layer_norm" || norm.op == "rms_norm") {
    const Shape ns = normalized_shape(norm);
    if (ns.empty() || ns.size() > shape.size() ||
        !std::equal(ns.begin(), ns.end(), shape.end() - static_cast<long>(ns.size())))
      return UserError(at, what +
                               " normalized_shape does not match the trailing dims of the input " +
                               spec::shape_string(shape));
    affine = ns;
  } else {
    // (N, C) is one spatial element per channel: batch_norm and group_norm take it (PyTorch
    // does), instance_norm needs spatial dims.
    const bool flat_ok = norm.op == "batch_norm" || norm.op == "group_norm";
    if (shape.size() < (flat_ok ? 2u : 3u))
      return UserError(at,
                       what + " on a tensor of shape " + spec::shape_string(shape) +
                           " is not supported: the builtin norm family needs (N, C, ...) input" +
                           (flat_ok ? "" : " with spatial dims"),
                       "add the batch dimension");
    affine = {shape[1]};
    if (norm.op == "group_norm") {
      const json& g = norm.attrs.value("num_groups", json());
      if (!g.is_number_integer() || g.get<std::int64_t>() <= 0 ||
          shape[1] % g.get<std::int64_t>() != 0)
        return UserError(
            at, what + " num_groups must divide the channels (" + std::to_string(shape[1]) + ")");
    }
    const bool batch = norm.op == "batch_norm";
    const json& flag = norm.attrs.value(batch ? "training" : "use_input_stats", json(!batch));
    if (!flag.is_boolean())
      return UserError(at, what + (batch ? " training" : " use_input_stats") + " must be a bool");
    if (!flag.get<bool>()) {  // running statistics
      for (int k : {na.running_mean, na.running_var})
        if (!arg_tensor(s, norm, k))
          return UserError(at, what + " in eval mode needs running_mean and running_var tensors");
      if (auto e = param_of_shape(na.running_mean, affine, "running_mean")) return *e;
      if (auto e = param_of_shape(na.running_var, affine, "running_var")) return *e;
    }
  }
  if (auto e = param_of_shape(na.weight, affine, "weight")) return *e;
  return param_of_shape(na.bias, affine, "bias");
}

// Everything else is element-wise around the norm (ops of the table), reading float or bool
// tensors and producing values that broadcast to its shape; the outputs are float tensors of it.
std::optional<UserError> check_around_norm(const spec::Spec& s, const OpTable& ops,
                                           const spec::Node& norm) {
  const Shape& shape = norm.shape;
  for (const auto& n : s.nodes) {
    if (&n == &norm) continue;
    if (auto e = ops.check(s, n)) return *e;
    for (const auto& a : node_args(n))
      if (const auto* t = s.find_tensor(a)) {
        if (!float_dtype(t->dtype) && t->dtype != spec::DType::boolean)
          return UserError(n.where, "tensor " + t->name + " is " + spec::dtype_name(t->dtype) +
                                        "; the builtin norm family reads float32, float16, "
                                        "bfloat16 or bool");
        if (!broadcasts_to(t->shape, shape))
          return UserError(
              n.where, "tensor " + t->name + " of shape " + spec::shape_string(t->shape) +
                           " does not broadcast to the norm's shape " + spec::shape_string(shape));
      }
    if (!broadcasts_to(n.shape, shape))
      return UserError(
          n.where,
          "`" + n.target + "` produces shape " + spec::shape_string(n.shape) +
              " that does not broadcast to the norm's shape " + spec::shape_string(shape),
          "the builtin norm family fuses element-wise ops of the norm's shape around it");
  }
  const SourceLocation file_only{s.op_file, 0, "norm"};
  for (const auto& o : s.outputs) {
    if (!float_dtype(o.dtype))
      return UserError(file_only,
                       "output " + o.name + " is " + spec::dtype_name(o.dtype) +
                           "; the builtin norm kernels write float32, float16 or bfloat16");
    if (o.shape != shape)
      return UserError(file_only,
                       "output " + o.name + " has shape " + spec::shape_string(o.shape) +
                           ", not the norm's shape " + spec::shape_string(shape),
                       "return outputs of the norm's shape, or split the op");
    if (const auto* t = s.find_tensor(o.node))
      if (!float_dtype(t->dtype))
        return UserError(file_only, "output " + o.name + " is not a float tensor");
  }
  return std::nullopt;
}

}  // namespace

std::variant<NormProblem, UserError> NormFamily::analyze(const spec::Spec& s) const {
  const auto norm = single_norm(s);
  if (const auto* e = std::get_if<UserError>(&norm)) return *e;
  const spec::Node& n = *std::get<const spec::Node*>(norm);
  if (auto e = check_norm_input(s, n)) return *e;
  if (auto e = check_norm_operands(s, n)) return *e;
  if (auto e = check_around_norm(s, ops_, n)) return *e;
  return problem_of(s);
}

namespace {

// The problem of a spec that passed the analysis's checks.
NormProblem problem_of(const spec::Spec& s) {
  const spec::Node& n = *find_norm(s);
  const Shape& shape = n.shape;
  NormProblem p;
  p.graph = make_graph(s);
  p.kind = n.op;
  p.numel = spec::numel(shape);
  p.center = n.op != "rms_norm";
  const json& e = n.attrs.value("eps", json(1e-5));
  // rms_norm(eps=None): ATen uses the opmath type's epsilon, float32's also for fp16/bf16.
  p.eps = e.is_number() ? e.get<double>() : 1.1920928955078125e-07;
  if (n.op == "layer_norm" || n.op == "rms_norm") {
    p.seg_len = spec::numel(normalized_shape(n));
    p.num_stats = p.numel / p.seg_len;
    return p;
  }
  p.channels = shape[1];
  p.spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) p.spatial *= shape[d];
  const std::int64_t batch = shape[0];
  if (n.op == "group_norm") {
    p.groups = n.attrs.at("num_groups").get<std::int64_t>();
    p.seg_len = p.channels / p.groups * p.spatial;
    p.num_stats = batch * p.groups;
  } else if (n.op == "instance_norm") {
    p.running = !n.attrs.value("use_input_stats", true);
    p.seg_len = p.spatial;
    p.num_stats = batch * p.channels;
  } else {  // batch_norm: per channel over (N, spatial)
    p.running = !n.attrs.value("training", false);
    p.seg_len = p.spatial;
    p.segments = batch;
    p.seg_stride = p.channels * p.spatial;
    p.num_stats = p.channels;
  }
  return p;
}

}  // namespace

int norm_row_items(std::int64_t row_len, int tpr, int vec) {
  const std::int64_t per = static_cast<std::int64_t>(tpr) * vec;
  return static_cast<int>((row_len + per - 1) / per) * vec;
}

std::optional<NormParams> norm_row_prior(std::int64_t row_len, std::int64_t rows, int vec) {
  // Expert prior: about 16 elements per thread (enough bytes in flight, few registers), at least a
  // warp per row, at most 1024 threads; then up to 32 per thread before the row stops fitting.
  // 256 threads a block, fewer rows a block (down to 128 threads) while the rows leave SMs without
  // a block: a model block's 512 rows of 512 ran 1-3 % faster at 4 rows a block than at 8 (the
  // mlp and transformer blocks' stage 2, H100).
  for (int limit : {16, 32})
    for (int tpr = 32; tpr <= 1024; tpr *= 2)
      if (norm_row_items(row_len, tpr, vec) <= limit) {
        NormParams p;
        p.structure = "row";
        p.tpr = tpr;
        p.rpb = std::max(1, 256 / tpr);
        while (p.rpb > 1 && p.tpr * p.rpb > 128 && (rows + p.rpb - 1) / p.rpb < kSms) p.rpb /= 2;
        p.block = p.tpr * p.rpb;
        return p;
      }
  return std::nullopt;
}

int norm_split_prior(std::int64_t num_stats, std::int64_t stat_count) {
  // Enough blocks for ~4 waves of 132 SMs, each block reducing at least 4096 elements.
  const std::int64_t want = (4 * kSms + num_stats - 1) / num_stats;
  const std::int64_t most = std::max<std::int64_t>(1, stat_count / 4096);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, most), 1, 256));
}

NormChunk norm_cluster_chunk(std::int64_t row_len, int cluster, int vec) {
  NormChunk c;
  const std::int64_t per = (row_len + std::max(1, cluster) - 1) / std::max(1, cluster);
  c.elems = (per + vec - 1) / vec * vec;
  c.bytes = (c.elems * 4 + 15) / 16 * 16;
  return c;
}

bool norm_cluster_valid(const NormProblem& pb, const NormParams& p, int vec) {
  if (p.structure != "cluster" || pb.running || !pb.contiguous_rows()) return false;
  if (p.cluster < 1 || p.cluster > 16 || (p.cluster & (p.cluster - 1))) return false;
  if (p.block < 128 || p.block > 1024 || p.block % 32) return false;
  const NormChunk c = norm_cluster_chunk(pb.seg_len, p.cluster, vec);
  return c.bytes <= kOnChipMaxBytes && c.elems >= static_cast<std::int64_t>(p.block) * vec;
}

std::optional<NormParams> norm_cluster_prior(const NormProblem& pb, int vec, std::int64_t most) {
  auto params = [](OnChipShape shape) {
    NormParams p;
    p.structure = "cluster";
    p.cluster = shape.cluster;
    p.block = shape.block;
    return p;
  };
  const auto shape = on_chip_prior(
      [&](int cluster) {
        const NormChunk c = norm_cluster_chunk(pb.seg_len, cluster, vec);
        return OnChipChunk{c.bytes, c.elems / vec};
      },
      [&](OnChipShape shape) { return norm_cluster_valid(pb, params(shape), vec); }, most);
  if (!shape) return std::nullopt;
  return params(*shape);
}

}  // namespace egg::backend::builtin

namespace egg::backend::builtin {

namespace {

// The tensors a norm kernel reads, as its templates name them: every operand's pointer, the
// prologue's and epilogue's leaves with their values and load expressions (16-byte vectors for
// full-size operands), the outputs, and the narrowest full-size element.
struct NormOperands {
  std::map<std::string, std::string> var_of, value_of;
  json operands = json::array(), pro_args = json::array(), epi_args = json::array();
  json pro_full = json::array(), epi_full = json::array(), all_full = json::array();
  json full_ptrs = json::array(), args = json::array(), outs = json::array();
  int min_size = 16;
};

NormOperands collect_operands(const spec::Spec& s, const contract::Contract& c,
                              const NormProblem& pb) {
  const NormGraph& plan = pb.graph;
  const NormArgs na = norm_args(plan.norm->op);
  const std::set<std::string> pro(plan.pro_leaves.begin(), plan.pro_leaves.end());
  const std::set<std::string> epi(plan.epi_leaves.begin(), plan.epi_leaves.end());
  std::set<std::string> norm_leaves;
  for (int k : {na.weight, na.bias})
    if (const auto* t = arg_tensor(s, *plan.norm, k)) norm_leaves.insert(t->name);
  if (pb.running)
    for (int k : {na.running_mean, na.running_var})
      norm_leaves.insert(arg_tensor(s, *plan.norm, k)->name);
  NormOperands o;
  for (const auto& a : c.args) {
    if (a.role == contract::Role::output) continue;
    const bool in_pro = pro.count(a.source) > 0, in_epi = epi.count(a.source) > 0;
    if (!in_pro && !in_epi && !norm_leaves.count(a.source)) continue;
    const std::string ctype = contract::c_type(a.dtype);
    o.var_of[a.source] = a.var;
    o.operands.push_back({{"ptr", a.var}, {"ctype", ctype}});
    o.args.push_back(a.var);
    if (!in_pro && !in_epi) continue;
    const std::string value = "a" + std::to_string(o.value_of.size());
    o.value_of[a.source] = value;
    const bool full = spec::numel(a.shape) == pb.numel;
    const std::string load =
        full ? "egg_to_float(" + a.var + "_v.v[j])"
             : "egg_to_float(" + a.var + "[" + broadcast_offset(a.shape, plan.norm->shape) + "])";
    const json arg = {{"value", value}, {"load", load}};
    const json vec_operand = {{"ptr", a.var}, {"ctype", ctype}};
    if (in_pro) o.pro_args.push_back(arg);
    if (in_epi) o.epi_args.push_back(arg);
    if (full) {
      if (in_pro) o.pro_full.push_back(vec_operand);
      if (in_epi) o.epi_full.push_back(vec_operand);
      o.all_full.push_back(vec_operand);
      o.full_ptrs.push_back(a.var);
      o.min_size = std::min(o.min_size, spec::dtype_size(a.dtype));
    }
  }
  int slot = 0;
  for (const auto& a : c.args) {
    if (a.role != contract::Role::output) continue;
    o.outs.push_back({{"ptr", a.var}, {"ctype", contract::c_type(a.dtype)}, {"slot", slot++}});
    o.full_ptrs.push_back(a.var);
    o.args.push_back(a.var);
    o.min_size = std::min(o.min_size, spec::dtype_size(a.dtype));
  }
  return o;
}

// The element-wise steps before and after the norm, the norm's input value and the outputs'.
struct NormSteps {
  json pro = json::array(), epi = json::array(), results = json::array();
  std::string pro_result;
};

NormSteps render_steps(const spec::Spec& s, const NormGraph& plan, const OpTable& ops,
                       const NormOperands& o) {
  NormSteps st;
  std::map<std::string, std::string> pro_values = o.value_of, epi_values = o.value_of;
  for (const auto* n : plan.pro_steps) {
    const std::string v = "t" + std::to_string(st.pro.size());
    st.pro.push_back({{"value", v}, {"expr", ops.expression(s, *n, pro_values)}});
    pro_values[n->name] = v;
  }
  epi_values[plan.input] = "xin";
  epi_values[plan.norm->name] = "nv";
  for (const auto* n : plan.epi_steps) {
    const std::string v = "e" + std::to_string(st.epi.size());
    st.epi.push_back({{"value", v}, {"expr", ops.expression(s, *n, epi_values)}});
    epi_values[n->name] = v;
  }
  int slot = 0;
  for (const auto& out : s.outputs)
    st.results.push_back({{"slot", slot++}, {"value", epi_values.at(out.node)}});
  st.pro_result = pro_values.at(plan.input);
  return st;
}

// Index expressions of the affine parameters (by the row kernels' row and column, and by the
// element kernels' element) and of the statistics.
struct NormIndices {
  std::string row, elem, stat, running;
};

NormIndices index_expressions(const NormProblem& pb) {
  const bool channel_norm = pb.kind != "layer_norm" && pb.kind != "rms_norm";
  const std::string D = std::to_string(pb.seg_len), HW = std::to_string(pb.spatial),
                    C = std::to_string(pb.channels);
  NormIndices ix;
  if (!channel_norm) {
    ix.row = "col0 + j";
    ix.elem = "i0 % " + D + " + j";
  } else {
    ix.elem = "(i0 / " + HW + ") % " + C;
    if (pb.kind == "group_norm")
      ix.row = "(row % " + std::to_string(pb.groups) + ") * " +
               std::to_string(pb.channels / pb.groups) + " + col0 / " + HW;
    else
      ix.row = "row % " + C;
  }
  ix.stat = pb.kind == "batch_norm" ? "(i0 / " + HW + ") % " + C : "i0 / " + D;
  ix.running = "(i0 / " + HW + ") % " + C;
  return ix;
}

// The structure and tuning lines of the kernel's header comment and the candidate's summary.
std::pair<std::string, std::string> norm_texts(const NormProblem& pb, const NormParams& p,
                                               int vec) {
  const std::string D = std::to_string(pb.seg_len);
  if (p.structure == "row")
    return {"one row of " + D + " per " + std::to_string(p.tpr) +
                " threads held in registers (read once), " + std::to_string(p.rpb) +
                " rows per block",
            "threads per row " + std::to_string(p.tpr) + ", rows per block " +
                std::to_string(p.rpb) + ", vector " + std::to_string(vec)};
  if (p.structure == "split")
    return {"partial statistics (" + std::to_string(p.splits) + " blocks per statistic)" +
                (p.splits > 1 ? " + finalize" : "") + " + normalize/epilogue kernel",
            "block " + std::to_string(p.block) + ", splits " + std::to_string(p.splits) +
                ", vector " + std::to_string(vec)};
  if (p.structure == "cluster")
    return {"one row of " + D + " on chip: a cluster of " + std::to_string(p.cluster) +
                " blocks per row, each keeping " +
                std::to_string(norm_cluster_chunk(pb.seg_len, p.cluster, vec).elems) +
                " elements in shared memory (read once; the split structure where clusters are "
                "absent)",
            "cluster " + std::to_string(p.cluster) + ", block " + std::to_string(p.block) +
                ", vector " + std::to_string(vec)};
  return {"one element-wise kernel with the running statistics",
          "block " + std::to_string(p.block) + ", vector " + std::to_string(vec)};
}

// The candidate's id: the structure and every parameter that changes the kernel.
std::string norm_id(const NormParams& p, int vec) {
  const std::string v = ":v" + std::to_string(vec);
  if (p.structure == "row")
    return "norm.row:t" + std::to_string(p.tpr) + ":r" + std::to_string(p.rpb) + v;
  if (p.structure == "split")
    return "norm.split:s" + std::to_string(p.splits) + ":b" + std::to_string(p.block) + v;
  if (p.structure == "cluster")
    return "norm.cluster:c" + std::to_string(p.cluster) + ":b" + std::to_string(p.block) + v;
  return "norm.pointwise:b" + std::to_string(p.block) + v;
}

}  // namespace

Candidate NormFamily::render(const spec::Spec& s, const contract::Contract& c,
                             const NormProblem& problem, const NormParams& p) const {
  const NormProblem& pb = problem;
  const NormGraph& plan = problem.graph;
  const std::string fn = "egg_" + c.name;
  const NormArgs na = norm_args(plan.norm->op);
  const bool channel_norm = pb.kind != "layer_norm" && pb.kind != "rms_norm";
  const NormOperands o = collect_operands(s, c, pb);
  const NormSteps st = render_steps(s, plan, ops_, o);

  // Vector width: 16 bytes of the narrowest full operand, when runs of one statistic and one
  // affine channel hold whole vectors.
  int vec = p.vectorized ? 16 / o.min_size : 1;
  const std::int64_t granule = channel_norm ? pb.spatial : pb.seg_len;
  if (granule % vec != 0 || pb.seg_len % vec != 0) vec = 1;

  const NormIndices ix = index_expressions(pb);
  auto affine = [&](int k) -> json {
    const auto* t = arg_tensor(s, *plan.norm, k);
    if (!t) return false;
    return json{{"ptr", o.var_of.at(t->name)}, {"index_row", ix.row}, {"index_elem", ix.elem}};
  };
  // A layer norm's affine parameters vary along its rows: where the rows are long enough to
  // occupy the GPU with a thread per VEC positions (2^18 threads), the normalizing kernel walks
  // the rows at a thread's positions and reads each weight once (the other order reads them once
  // a row).
  const bool affine_rows =
      !channel_norm && !pb.running && pb.num_stats > 1 &&
      (arg_tensor(s, *plan.norm, na.weight) || arg_tensor(s, *plan.norm, na.bias));
  const bool rows_inner = affine_rows && pb.seg_len / vec >= (std::int64_t(1) << 18);
  const auto [structure, tuning] = norm_texts(pb, p, vec);
  const bool on_chip = p.structure == "cluster";
  // The cluster structure falls back to the split structure's kernels, at its prior.
  const int block = p.structure == "row" ? p.tpr * p.rpb : on_chip ? 256 : p.block;
  const int splits = on_chip ? norm_split_prior(pb.num_stats, pb.stat_count()) : p.splits;
  const NormChunk chunk = norm_cluster_chunk(pb.seg_len, p.cluster, vec);
  auto running_ptr = [&](int k) {
    return pb.running ? o.var_of.at(arg_tensor(s, *plan.norm, k)->name) : std::string();
  };
  json ctx = {{"fn", fn},
              {"helpers", ops_.helpers()},
              {"kind", pb.kind},
              {"numel", pb.numel},
              {"num_stats", pb.num_stats},
              {"stat_count", pb.stat_count()},
              {"num_pro", plan.pro_steps.size()},
              {"num_epi", plan.epi_steps.size()},
              {"structure", structure},
              {"tuning", tuning},
              {"eps", lit(pb.eps)},
              {"center", pb.center},
              {"is_row", p.structure == "row"},
              {"running", pb.running},
              {"index_t", pb.numel < (std::int64_t(1) << 30) ? "std::int32_t" : "std::int64_t"},
              {"row_len", pb.seg_len},
              {"rows", pb.num_stats},
              {"tpr", p.tpr},
              {"rpb", p.rpb},
              {"block", block},
              {"seg_len", pb.seg_len},
              {"seg_stride", pb.seg_stride},
              {"splits", splits},
              {"run_name", on_chip ? "split_run" : "run"},
              {"cluster", p.cluster},
              {"cluster_block", p.block},
              {"cluster_nonportable", p.cluster > 8},
              {"chunk", chunk.elems},
              {"cluster_bytes", chunk.bytes},
              {"cluster_launch", clusters_.text},
              {"keep_pool", keep_pool_.text},
              {"cluster_grid", pb.num_stats * p.cluster},
              {"stat_index", ix.stat},
              {"running_index", ix.running},
              {"rows_inner", rows_inner},
              {"mean_ptr", running_ptr(na.running_mean)},
              {"var_ptr", running_ptr(na.running_var)},
              {"weight", affine(na.weight)},
              {"bias", affine(na.bias)},
              {"operands", o.operands},
              {"outs", o.outs},
              {"num_outs", o.outs.size()},
              {"pro_args", o.pro_args},
              {"epi_args", o.epi_args},
              {"pro_full", o.pro_full},
              {"epi_full", o.epi_full},
              {"all_full", o.all_full},
              {"pro_steps", st.pro},
              {"epi_steps", st.epi},
              {"pro_result", st.pro_result},
              {"results", st.results},
              {"vec", vec},
              {"full_ptrs", o.full_ptrs},
              {"args", o.args}};

  std::string device = render::render(common_.text, ctx, common_.name);
  if (p.structure == "row") {
    device += render::render(row_.text, ctx, row_.name);
  } else {
    if (p.structure != "pointwise") device += render::render(split_.text, ctx, split_.name);
    device += render::render(pointwise_.text, ctx, pointwise_.name);
    if (on_chip) device += render::render(cluster_.text, ctx, cluster_.name);
  }
  Candidate cand;
  cand.id = norm_id(p, vec);
  cand.summary = pb.kind + ": " + structure + "; " + tuning + "; " +
                 std::to_string(plan.pro_steps.size()) + " prologue and " +
                 std::to_string(plan.epi_steps.size()) + " epilogue ops fused";
  cand.params = p.to_json();
  cand.params["vec"] = vec;
  cand.code.device_code = device;
  cand.code.launch_body = render::render(launch_.text, ctx, launch_.name);
  return cand;
}

namespace {

// The vector width render() would pick for the vectorized path (for the tuning priors).
int norm_vec(const spec::Spec& s, const NormProblem& pb) {
  int min_size = 16;
  for (const auto& t : s.inputs)
    if (spec::numel(t.shape) == pb.numel) min_size = std::min(min_size, spec::dtype_size(t.dtype));
  for (const auto& o : s.outputs) min_size = std::min(min_size, spec::dtype_size(o.dtype));
  int vec = 16 / min_size;
  const bool channel_norm = pb.kind != "layer_norm" && pb.kind != "rms_norm";
  if ((channel_norm ? pb.spatial : pb.seg_len) % vec != 0 || pb.seg_len % vec != 0) vec = 1;
  return vec;
}

NormParams split_params(const NormProblem& pb, bool vectorized) {
  NormParams p;
  p.structure = pb.running ? "pointwise" : "split";
  p.block = 256;
  p.splits = pb.running ? 1 : norm_split_prior(pb.num_stats, pb.stat_count());
  p.vectorized = vectorized;
  return p;
}

}  // namespace

std::vector<NormParams> norm_tuning_space(const NormProblem& pb, const NormParams& inc, int vec,
                                          const std::string& bottleneck) {
  std::vector<NormParams> space;
  auto add = [&](NormParams p) {
    p.vectorized = inc.vectorized;
    if (p.structure == "row") p.block = p.tpr * p.rpb;
    const bool same = p.to_json() == inc.to_json();
    for (const auto& q : space)
      if (q.to_json() == p.to_json()) return;
    if (!same) space.push_back(p);
  };
  const bool latency = bottleneck == "latency" || bottleneck == "launch";
  if (inc.structure == "row") {
    // Threads per row around the incumbent (fewer threads: more bytes in flight per thread; more:
    // fewer registers), rows per block for short rows.
    for (int tpr : {inc.tpr, inc.tpr * 2, inc.tpr / 2, inc.tpr * 4}) {
      if (tpr < 32 || tpr > 1024 || norm_row_items(pb.seg_len, tpr, vec) > 32) continue;
      for (int rpb : latency ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{8, 4, 2, 1}) {
        if (tpr * rpb > 1024 || (tpr * rpb < 128 && rpb < 8)) continue;
        NormParams p = inc;
        p.tpr = tpr;
        p.rpb = rpb;
        add(p);
      }
    }
  } else if (inc.structure == "cluster") {
    // More or fewer blocks per row, then other block sizes, each within shared memory.
    for (const int cluster : {inc.cluster, inc.cluster * 2, inc.cluster / 2})
      for (const int block : {inc.block, 512, 1024, 256}) {
        NormParams p = inc;
        p.cluster = cluster;
        p.block = block;
        if (norm_cluster_valid(pb, p, vec)) add(p);
      }
  } else if (inc.structure == "split") {
    // First the row on chip in chunks small enough for three blocks per multiprocessor
    // (on_chip.h).
    if (!pb.running && pb.contiguous_rows())
      if (auto on_chip = norm_cluster_prior(pb, vec, kOnChipThreeBlocksBytes)) add(*on_chip);
    const int base = std::max(1, inc.splits);
    std::vector<int> splits = latency ? std::vector<int>{base * 2, base * 4, base, base / 2}
                                      : std::vector<int>{base, base * 2, base / 2, base * 4};
    for (int sp : splits) {
      if (sp < 1 || sp > 256 || (sp > 1 && pb.stat_count() / sp < 1024)) continue;
      for (int block : {256, 512, 128}) {
        NormParams p = inc;
        p.splits = sp;
        p.block = block;
        add(p);
      }
    }
  } else {
    for (int block : {256, 512, 128}) {
      NormParams p = inc;
      p.block = block;
      add(p);
    }
  }
  return space;
}

std::vector<NormParams> NormFamily::structure_params(const spec::Spec& s, const contract::Contract&,
                                                     const NormProblem& pb) const {
  // Row in registers (one read, one write) first when the row fits; the split statistics structure
  // (two reads) always works; the running-statistics case is one element-wise pass.
  std::vector<NormParams> out;
  // Rows too long for registers stay on chip in a cluster's shared memory where they fit.
  const int vec = norm_vec(s, pb);
  if (!pb.running && pb.contiguous_rows()) {
    if (auto row = norm_row_prior(pb.seg_len, pb.num_stats, vec))
      out.push_back(*row);
    else if (auto on_chip = norm_cluster_prior(pb, vec))
      out.push_back(*on_chip);
  }
  out.push_back(split_params(pb, true));
  return out;
}

NormParams NormParams::from_json(const json& j) {
  NormParams p;
  p.structure = j.value("structure", std::string("split"));
  p.tpr = j.value("tpr", 256);
  p.rpb = j.value("rpb", 1);
  p.block = j.value("block", 256);
  p.splits = j.value("splits", 1);
  p.cluster = j.value("cluster", 0);
  p.vectorized = j.value("vectorized", true);
  return p;
}

std::vector<NormParams> NormFamily::tuning_params(const spec::Spec& s, const contract::Contract&,
                                                  const NormProblem& pb,
                                                  const NormParams& incumbent,
                                                  const std::string& bottleneck) const {
  return norm_tuning_space(pb, incumbent, norm_vec(s, pb), bottleneck);
}

std::optional<NormParams> NormFamily::fallback_params(const spec::Spec&, const contract::Contract&,
                                                      const NormProblem& pb,
                                                      const NormParams& failed) const {
  // The simplest structure: scalar split statistics (or scalar running-statistics pass).
  if (failed.structure != "row" && !failed.vectorized) return std::nullopt;
  return split_params(pb, false);
}

}  // namespace egg::backend::builtin
