// Cross-anchor fusion of the conv family: a convolution whose element-wise epilogue ends in a
// second anchor, then element-wise ops on its value. The second anchor is a reduction over the
// output channels (min/max/sum/mean/... with dim=1) or a softmax over them, a reduction over
// every spatial dim (a global pooling, lowered to mean/amax over dims 2..), a pool (max/avg,
// 1-3D), or a norm (group, instance or batch norm with batch or running statistics, layer or RMS
// norm over trailing spatial dims; `ConvNorm` in conv.h). The implicit GEMM's block holds
// every output channel of its pixels, so a channel reduction runs in its epilogue and the full-size
// result is never written; cuDNN's channels-last result holds them as one contiguous row per pixel,
// each channel's positions as a column read along the channels, and each window's elements as rows
// of channels, so one pass reduces or pools it without the transpose back, and a norm's statistics
// come from it read along the channels before the one pass that transposes it back normalizes it
// (templates/conv/cudnn.cuh.tmpl).
#include <algorithm>
#include <set>

#include "backend/builtin/conv.h"
#include "backend/builtin/plan_util.h"
#include "backend/builtin/pool.h"

namespace egg::backend::builtin {
namespace {

// Most output channels one block's tile holds (its N tile).
constexpr std::int64_t kMaxFusedChannels = 128;

// What the reduction's dims are on a tensor of rank `rank`: exactly the channel dim (1), or
// exactly the spatial dims (2..rank-1, in any order); nullopt for anything else.
std::optional<ConvReductionAxis> reduced_axis(const spec::Node& n, size_t rank) {
  if (!n.attrs.contains("dim")) return std::nullopt;
  const nlohmann::json& dim = n.attrs["dim"];
  std::set<std::int64_t> dims;
  for (const auto& d : dim.is_array() ? dim : nlohmann::json::array({dim})) {
    if (!d.is_number_integer()) return std::nullopt;
    std::int64_t v = d.get<std::int64_t>();
    if (v < 0) v += static_cast<std::int64_t>(rank);
    dims.insert(v);
  }
  if (dims == std::set<std::int64_t>{1}) return ConvReductionAxis::channels;
  std::set<std::int64_t> spatial;
  for (size_t k = 2; k < rank; ++k) spatial.insert(static_cast<std::int64_t>(k));
  if (!spatial.empty() && dims == spatial) return ConvReductionAxis::spatial;
  return std::nullopt;
}

// The nodes from `second` on in spec order (the second anchor and everything after it).
std::set<std::string> from_node(const spec::Spec& s, const spec::Node* second) {
  std::set<std::string> after;
  bool seen = false;
  for (const auto& n : s.nodes) {
    seen = seen || &n == second;
    if (seen) after.insert(n.name);
  }
  return after;
}

// The convolution's element-wise epilogue before the second anchor into plan.epilogue; the second
// anchor must read its result or an epilogue value, its other tensor arguments graph inputs or
// parameters where `leaf_options` allows them (a norm's affine weight and bias), else none. The
// names of the convolution and its epilogue, or why the graph is not one.
std::variant<std::set<std::string>, UserError> collect_before(const spec::Spec& s,
                                                              const OpTable& ops, ConvPlan& plan,
                                                              const spec::Node& second,
                                                              bool leaf_options = false) {
  const spec::Node& an = *plan.anchor;
  const std::set<std::string> after = from_node(s, &second);
  EpilogueRule rule;
  rule.shape = plan.out_shape;
  rule.shape_of = "the convolution output";
  rule.from_anchor = true;
  rule.skip = [&](const spec::Node& n) { return is_convolution(n.op) || after.count(n.name); };
  rule.check_leaf = [&](const spec::Tensor& t, const spec::Node& at_node) {
    return check_leaf_tensor(t, plan.out_shape, at_node, "the conv epilogue reads",
                             "the convolution's output ");
  };
  auto epi = collect_epilogue(s, ops, an, rule);
  if (auto* e = std::get_if<UserError>(&epi)) return *e;
  plan.epilogue = std::get<std::vector<const spec::Node*>>(std::move(epi));
  std::set<std::string> before = {an.name};
  for (const auto* n : plan.epilogue) before.insert(n->name);
  if (second.args.empty() || second.args[0].kind != spec::Arg::Kind::node)
    return UserError(second.where, quote(second) + " does not read a tensor");
  for (size_t k = 1; k < second.args.size(); ++k)
    if (second.args[k].kind == spec::Arg::Kind::node &&
        !(leaf_options && s.find_tensor(second.args[k].node)))
      return UserError(second.where, quote(second) + " has a tensor option; the conv epilogue " +
                                         "fuses it with scalar options only");
  if (!before.count(second.args[0].node))
    return UserError(second.where, quote(second) + " does not read the convolution's epilogue");
  return before;
}

// After the second anchor: getitem(.., 0) of its values, then element-wise ops on its value's
// `shape` into `post` (its value's names into `value_names`), never reading a value of `before`;
// every output one of them. Or why the graph is not one.
std::optional<UserError> collect_after(const spec::Spec& s, const OpTable& ops,
                                       const spec::Node& second,
                                       const std::set<std::string>& before,
                                       const spec::Shape& shape, const std::string& why_not,
                                       std::vector<const spec::Node*>& post,
                                       std::vector<std::string>& value_names) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  const std::set<std::string> after = from_node(s, &second);
  value_names.push_back(second.name);
  std::set<std::string> values = {second.name};
  for (const auto& n : s.nodes) {
    if (!after.count(n.name) || &n == &second) continue;
    if (n.op == "getitem") {
      if (n.args.size() < 2 || n.args[0].kind != spec::Arg::Kind::node ||
          n.args[0].node != second.name || n.args[1].kind != spec::Arg::Kind::scalar ||
          n.args[1].scalar != 0)
        return UserError(n.where, quote(n) + " reads the indices of " + quote(second) + why_not +
                                      " (its values)");
      value_names.push_back(n.name);
      values.insert(n.name);
      continue;
    }
    if (auto e = ops.check(s, n))
      return UserError(n.where, std::string(e->what()) + why_not + ", then element-wise ops",
                       e->hint());
    for (const auto& a : node_args(n)) {
      if (before.count(a))
        return UserError(n.where, quote(n) + " reads `" + a + "`, a value before " + quote(second) +
                                      why_not + ", then ops of its result");
      if (const auto* t = s.find_tensor(a))
        if (auto e = check_leaf_tensor(*t, shape, n, "the fused conv epilogue reads")) return *e;
    }
    if (n.shape != shape)
      return UserError(n.where, quote(n) + " produces shape " + spec::shape_string(n.shape) +
                                    ", not the " + spec::shape_string(shape) + " of " +
                                    quote(second));
    post.push_back(&n);
    values.insert(n.name);
  }
  if (s.outputs.empty()) return UserError(file_only, "the op has no outputs");
  for (const auto& o : s.outputs)
    if (!values.count(o.node) || !float_storage(o.dtype) || o.shape != shape)
      return UserError(file_only, "output " + o.name + " (`" + o.node +
                                      "`) is not a float value of the " +
                                      spec::shape_string(shape) + " result of " + quote(second));
  return std::nullopt;
}

std::optional<UserError> plan_conv_pool(const spec::Spec& s, const OpTable& ops,
                                        const spec::Node& pool, ConvPlan& plan,
                                        bool channels_last_library) {
  const spec::Node& an = *plan.anchor;
  const std::string why_not = "; the conv epilogue fuses a pool after cuDNN's channels-last result";
  if (!channels_last_library)
    return UserError(pool.where, quote(pool) + " follows " + quote(an) + why_not +
                                     " only (cuDNN is not at hand)");
  if (plan.in_shape.size() != size_t(plan.dims) + 2)
    return UserError(an.where, quote(an) + " is unbatched" + why_not + " of a batched one");
  PoolPlan window;
  if (auto e = plan_pool_window(s, pool, window)) return *e;
  if (window.dims != plan.dims || window.in_shape != plan.out_shape)
    return UserError(pool.where, quote(pool) + " pools " + std::to_string(window.dims) +
                                     " dims of " + spec::shape_string(window.in_shape) + why_not +
                                     " over its spatial dims");
  auto before = collect_before(s, ops, plan, pool);
  if (auto* e = std::get_if<UserError>(&before)) return *e;
  ConvPool p;
  p.window = window;
  p.window.prologue.clear();
  p.window.epilogue.clear();
  if (auto e = collect_after(s, ops, pool, std::get<std::set<std::string>>(before),
                             window.out_shape, why_not, p.post, p.value_names))
    return *e;
  plan.pool = std::move(p);
  return std::nullopt;
}

std::optional<UserError> plan_conv_reduction(const spec::Spec& s, const OpTable& ops,
                                             const spec::Node& red, const ReductionAnchor& entry,
                                             ConvPlan& plan, bool channels_last_library) {
  const spec::Node& an = *plan.anchor;
  const std::string why_not =
      "; the conv epilogue fuses a reduction over the output channels, or (after cuDNN) over "
      "every spatial dim, only";
  if (entry.mode == ReductionMode::scan || entry.indices || entry.norm)
    return UserError(red.where, quote(red) + " is not a plain reduction or softmax" + why_not);
  if (plan.in_shape.size() != size_t(plan.dims) + 2)
    return UserError(an.where, quote(an) + " is unbatched" + why_not + " of a batched convolution");
  // Without cuDNN the implicit GEMM's tile must hold every output channel of its pixels.
  if (!channels_last_library && (plan.transposed || plan.groups != 1))
    return UserError(an.where, quote(an) + " is transposed or grouped" + why_not +
                                   " of an ungrouped forward convolution without cuDNN");
  if (!channels_last_library && plan.c_out > kMaxFusedChannels)
    return UserError(an.where, quote(an) + " has " + std::to_string(plan.c_out) +
                                   " output channels, more than one tile's " +
                                   std::to_string(kMaxFusedChannels) + why_not + " without cuDNN");
  const auto axis = reduced_axis(red, plan.out_shape.size());
  if (!axis)
    return UserError(red.where,
                     quote(red) + " reduces neither dim 1 alone nor every spatial dim" + why_not);
  if (*axis == ConvReductionAxis::spatial && !channels_last_library)
    return UserError(
        red.where, quote(red) + " reduces the spatial dims" + why_not + " (cuDNN is not at hand)");
  if (*axis == ConvReductionAxis::spatial && entry.mode == ReductionMode::normalize)
    return UserError(red.where, quote(red) + " normalizes over the spatial dims" + why_not +
                                    " as a plain reduction");
  auto before = collect_before(s, ops, plan, red);
  if (auto* e = std::get_if<UserError>(&before)) return *e;

  ConvReduction r;
  r.node = &red;
  r.axis = *axis;
  r.reducer = entry.reducer;
  r.in_expr = entry.in;
  const std::int64_t reduced = r.spatial() ? plan.out[0] * plan.out[1] * plan.out[2] : plan.c_out;
  r.row_expr = fill_fields(entry.row, {{"R", std::to_string(reduced)}});
  r.normalize = entry.mode == ReductionMode::normalize;
  r.element_expr = entry.element;
  r.shape = red.shape;
  if (auto e = collect_after(s, ops, red, std::get<std::set<std::string>>(before), r.shape, why_not,
                             r.post, r.value_names))
    return *e;
  plan.reduction = std::move(r);
  return std::nullopt;
}

// The affine tensor at argument `k` of `norm` (empty for None or no argument): a float input or
// parameter of `channels` elements, or why not.
std::variant<std::string, UserError> norm_affine(const spec::Spec& s, const spec::Node& norm,
                                                 size_t k, std::int64_t channels,
                                                 const std::string& why_not) {
  if (k >= norm.args.size() || norm.args[k].kind == spec::Arg::Kind::none) return std::string();
  const spec::Tensor* t =
      norm.args[k].kind == spec::Arg::Kind::node ? s.find_tensor(norm.args[k].node) : nullptr;
  if (!t || spec::numel(t->shape) != channels || !float_storage(t->dtype))
    return UserError(norm.where, quote(norm) + "'s weight, bias and running statistics must be " +
                                     "float tensors of " + std::to_string(channels) + " elements" +
                                     why_not);
  return t->name;
}

std::optional<UserError> plan_conv_norm(const spec::Spec& s, const OpTable& ops,
                                        const spec::Node& norm, ConvPlan& plan,
                                        bool channels_last_library) {
  const spec::Node& an = *plan.anchor;
  const std::string why_not =
      "; the conv epilogue fuses a group, instance or batch norm after cuDNN (batch statistics "
      "from its channels-last result, running statistics in its pass), or a layer or RMS norm "
      "over trailing spatial dims";
  if (!channels_last_library)
    return UserError(norm.where, quote(norm) + " follows " + quote(an) + why_not +
                                     " only (cuDNN is not at hand)");
  if (plan.in_shape.size() != size_t(plan.dims) + 2)
    return UserError(an.where, quote(an) + " is unbatched" + why_not + " of a batched one");
  if (norm.shape != plan.out_shape)
    return UserError(norm.where, quote(norm) + " normalizes " + spec::shape_string(norm.shape) +
                                     ", not the convolution's " +
                                     spec::shape_string(plan.out_shape) + why_not);
  ConvNorm cn;
  cn.node = &norm;
  size_t weight_arg = 3;  // batch_norm, instance_norm: input, running_mean, running_var, weight
  std::int64_t affine = plan.c_out;
  if (norm.op == "layer_norm" || norm.op == "rms_norm") {
    // Over trailing spatial dims only: each row is a block of positions of one channel, and one
    // slab of cuDNN's channels-last result (those positions x every channel) holds a row of each.
    const auto ns = normalized_shape(norm);
    const size_t rank = plan.out_shape.size();
    if (ns.empty() || ns.size() > rank - 2 ||
        !std::equal(ns.begin(), ns.end(), plan.out_shape.end() - static_cast<long>(ns.size())))
      return UserError(norm.where, quote(norm) + " normalizes dims other than trailing " +
                                       "spatial dims of the convolution's result" + why_not);
    cn.row_len = spec::numel(ns);
    if (cn.row_len * (plan.c_out + 1) + 2 * plan.c_out > kMaxNormSlab)
      return UserError(norm.where, quote(norm) + "'s rows of " + std::to_string(cn.row_len) +
                                       " positions x " + std::to_string(plan.c_out) +
                                       " channels do not fit one block's shared memory" + why_not);
    cn.center = norm.op == "layer_norm";
    affine = cn.row_len;
    weight_arg = 1;
  } else if (norm.op == "group_norm") {
    const nlohmann::json& g = norm.attrs.value("num_groups", nlohmann::json());
    if (!g.is_number_integer() || g.get<std::int64_t>() <= 0 ||
        plan.c_out % g.get<std::int64_t>() != 0)
      return UserError(norm.where, quote(norm) + "'s num_groups does not divide the " +
                                       std::to_string(plan.c_out) + " channels");
    cn.group_c = plan.c_out / g.get<std::int64_t>();
    weight_arg = 1;
  } else {
    const bool batch = norm.op == "batch_norm";
    const nlohmann::json& flag =
        norm.attrs.value(batch ? "training" : "use_input_stats", nlohmann::json(!batch));
    if (!flag.is_boolean())
      return UserError(norm.where, quote(norm) + (batch ? "'s training" : "'s use_input_stats") +
                                       " must be a bool");
    cn.across = batch;
    if (!flag.get<bool>()) {  // eval mode: the running statistics, per channel
      for (auto [k, field] :
           {std::pair{size_t(1), &cn.running_mean}, std::pair{size_t(2), &cn.running_var}}) {
        auto t = norm_affine(s, norm, k, plan.c_out, why_not);
        if (auto* e = std::get_if<UserError>(&t)) return *e;
        *field = std::get<std::string>(t);
        if (field->empty())
          return UserError(norm.where, quote(norm) + " in eval mode needs running_mean and " +
                                           "running_var tensors");
      }
    }
  }
  const nlohmann::json& eps = norm.attrs.value("eps", nlohmann::json(1e-5));
  // rms_norm(eps=None): ATen uses float32's epsilon (as the norm family).
  if (!eps.is_number() && !(eps.is_null() && norm.op == "rms_norm"))
    return UserError(norm.where, quote(norm) + " needs a numeric eps");
  cn.eps = eps.is_number() ? eps.get<double>() : 1.1920928955078125e-07;
  const size_t bias_arg = norm.op == "rms_norm" ? norm.args.size() : weight_arg + 1;
  for (auto [k, field] : {std::pair{weight_arg, &cn.weight}, std::pair{bias_arg, &cn.bias}}) {
    auto t = norm_affine(s, norm, k, affine, why_not);
    if (auto* e = std::get_if<UserError>(&t)) return *e;
    *field = std::get<std::string>(t);
  }
  auto before = collect_before(s, ops, plan, norm, true);
  if (auto* e = std::get_if<UserError>(&before)) return *e;
  if (auto e = collect_after(s, ops, norm, std::get<std::set<std::string>>(before), plan.out_shape,
                             why_not, cn.post, cn.value_names))
    return *e;
  plan.norm = std::move(cn);
  return std::nullopt;
}

bool is_norm_op(const std::string& op) {
  return op == "group_norm" || op == "instance_norm" || op == "batch_norm" || op == "layer_norm" ||
         op == "rms_norm";
}

}  // namespace

std::optional<UserError> plan_conv_fused(const spec::Spec& s, const OpTable& ops,
                                         const ReductionOps& table, ConvPlan& plan,
                                         bool channels_last_library) {
  const SourceLocation file_only{s.op_file, 0, "output"};
  const spec::Node* second = nullptr;
  const ReductionAnchor* entry = nullptr;
  for (const auto& n : s.nodes) {
    const ReductionAnchor* e = table.anchor(n.op);
    if (!e && !is_pool_op(n.op) && !is_norm_op(n.op)) continue;
    if (second)
      return UserError(n.where, quote(n) + " is a second reduction, pool or norm after " +
                                    quote(*second) + "; the conv epilogue fuses one");
    second = &n;
    entry = e;
  }
  if (!second)
    return UserError(file_only,
                     "the graph has no reduction, pool or norm after its convolution (nothing for "
                     "the fused conv epilogue to reduce)");
  if (is_norm_op(second->op)) return plan_conv_norm(s, ops, *second, plan, channels_last_library);
  if (!entry) return plan_conv_pool(s, ops, *second, plan, channels_last_library);
  return plan_conv_reduction(s, ops, *second, *entry, plan, channels_last_library);
}

}  // namespace egg::backend::builtin
